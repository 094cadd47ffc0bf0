// SPDX-License-Identifier: Apache-2.0
// Perfect hashing of a categorical column (catboost-training.md §2.1): every distinct hash gets a
// dense id in order of first appearance (row order), with its count. CatBoost builds the same map
// (cat_feature_perfect_hash_helper.cpp) on the learn set; a feature with at most one_hot_max_size
// distinct values becomes one-hot, the others get CTRs. Host reference and GPU give equal results.
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

}  // namespace cbg::categorical
