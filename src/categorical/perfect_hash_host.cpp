// SPDX-License-Identifier: Apache-2.0
#include <unordered_map>

#include "cbg/categorical/perfect_hash.hpp"

namespace cbg::categorical {

host_perfect_hash perfect_hash_host(const std::uint32_t* hashes, std::int64_t rows) {
  host_perfect_hash out;
  out.ids.resize(static_cast<std::size_t>(rows));
  std::unordered_map<std::uint32_t, std::uint32_t> id_of;
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto [it, inserted] = id_of.try_emplace(hashes[i], static_cast<std::uint32_t>(out.keys.size()));
    if (inserted) {
      out.keys.push_back(hashes[i]);
      out.counts.push_back(0);
    }
    out.ids[static_cast<std::size_t>(i)] = it->second;
    ++out.counts[it->second];
  }
  return out;
}

}  // namespace cbg::categorical
