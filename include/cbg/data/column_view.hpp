// SPDX-License-Identifier: Apache-2.0
// One column of a pool: a strided run of values of one dtype, anywhere the context can read.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cbg/memory/copy.hpp"
#include "cbg/tensor/dtype.hpp"
#include "cbg/tensor/tensor_view.hpp"

namespace cbg {

struct column_view {
  const void* data = nullptr;
  dtype type = dtype::float32;
  memory_kind memory = memory_kind::host;
  std::int32_t device_id = -1;
  std::int64_t size = 0;
  std::int64_t stride = 1;  // elements between consecutive values
  // Categorical columns only: the values are CatBoost hashes already (uint32; the pool hashed a
  // string column into them), not integers whose decimal text is to be hashed.
  bool hashed = false;

  [[nodiscard]] CBG_HOST_DEVICE double value(std::int64_t i) const noexcept {
    return load_as_double(data, type, i, stride);
  }
};
static_assert(std::is_trivially_copyable_v<column_view>);

// Column `j` of a 2-D tensor [rows, cols] (or the tensor itself when it is 1-D and j == 0).
[[nodiscard]] inline column_view column_of(const tensor_view& t, std::int64_t j) noexcept {
  column_view c;
  c.type = t.type;
  c.memory = t.memory;
  c.device_id = t.device_id;
  c.size = t.rank == 0 ? 1 : t.shape[0];
  c.stride = t.rank == 0 ? 1 : t.strides[0];
  const std::int64_t column_step = t.rank >= 2 ? t.strides[1] : 0;
  c.data = static_cast<const unsigned char*>(t.data) + j * column_step * static_cast<std::int64_t>(size_of(t.type));
  return c;
}

}  // namespace cbg
