// SPDX-License-Identifier: Apache-2.0
// Perfect hashing of a categorical column (catboost-training.md §2.1): every distinct hash gets a
// dense id in order of first appearance (row order), with its count. CatBoost builds the same map
// (cat_feature_perfect_hash_helper.cpp: a new value gets the map's size as its bin) over the learn
// rows in the order training sees them (CatBoost shuffles the learn set when it has categorical
// features, so pass the hashes in that order to get its ids). Its optional "most frequent value to
// bin 0" swap is used only with CPU feature bundling, not on the GPU, and is not done here.
// A feature with at most one_hot_max_size distinct values becomes one-hot, the others get CTRs
// (choose_encoding). Host reference and GPU give equal results.
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/context.hpp"

namespace cbg::categorical {

struct host_perfect_hash {
  std::vector<std::uint32_t> ids;     // per row: the dense id of its value
  std::vector<std::uint32_t> keys;    // per id: the hash
  std::vector<std::uint32_t> counts;  // per id: rows with that value
};

host_perfect_hash perfect_hash_host(const std::uint32_t* hashes, std::int64_t rows);

struct device_perfect_hash {
  std::int64_t unique = 0;              // distinct values (ids are 0..unique-1)
  device_buffer<std::uint32_t> ids;     // [rows]
  device_buffer<std::uint32_t> keys;    // [unique]
  device_buffer<std::uint32_t> counts;  // [unique]
};

// `hashes` is device memory [rows] (rows < 2^31). Two radix sorts and a scan on ctx.stream();
// only the distinct count (4 bytes) comes back to the host, on which this blocks.
device_perfect_hash perfect_hash_device(const context& ctx, const std::uint32_t* hashes, std::int64_t rows);

// How training uses a categorical feature with `unique` distinct values: one-hot splits when
// 2 <= unique <= one_hot_max_size, CTRs above; a single value is unused. CatBoost's GPU trainer
// (binarizations_manager.cpp UseForOneHotEncoding) counts the values "OnAll": the learn rows first,
// then the eval rows extending the same map, so hash learn + eval before deciding.
enum class cat_encoding : std::uint8_t { unused, one_hot, ctr };
[[nodiscard]] constexpr cat_encoding choose_encoding(std::int64_t unique, std::int64_t one_hot_max_size) noexcept {
  if (unique <= 1) return cat_encoding::unused;
  return unique <= one_hot_max_size ? cat_encoding::one_hot : cat_encoding::ctr;
}

// CatBoost's default one_hot_max_size on the GPU (options_helper.cpp UpdateOneHotMaxSize): 2; 255
// when no CTR can be computed (no learn target); 10 for groupwise losses.
[[nodiscard]] constexpr std::int64_t default_one_hot_max_size(bool ctrs_possible, bool groupwise_loss) noexcept {
  if (!ctrs_possible) return 255;
  return groupwise_loss ? 10 : 2;
}

}  // namespace cbg::categorical
