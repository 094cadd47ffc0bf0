// SPDX-License-Identifier: Apache-2.0
// Turns a dataset read from a file into a pool through the C ABI: one tensor per numeric feature
// column (float32), one dictionary string column per categorical one (the text of the file, which
// the library hashes as CatBoost does), plus label, weight and baseline tensors.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "cbgpu/cbgpu.h"
#include "cuda_device.hpp"
#include "dataset.hpp"
#include "library.hpp"
#include "managed_tensor.hpp"

namespace cbgpu_bench {

// A tensor the library consumes over a copy of `values` on GPU `device` (a device buffer that the
// tensor's deleter frees). Throws std::runtime_error where the copy fails.
template <class T>
managed_tensor device_tensor(const std::vector<T>& values, std::vector<int64_t> shape, int32_t device) {
  std::shared_ptr<void> memory = device_copy(values.data(), values.size() * sizeof(T), device);
  void* data = memory.get();
  return managed_tensor::wrap(std::move(memory), data, dl::DLDevice{dl::kDLCUDA, device}, dtype_of<T>(),
                              std::move(shape));
}

// A categorical column as a dictionary string column (cbg_string_column_t): the int64 code of each
// row, and the text of each code in Arrow's layout (int64 offsets, UTF-8 bytes). The library hashes
// the text with CatBoost's hash (on the GPU for device tensors), so "007", "7" and "Paris" get the
// hashes CatBoost gives the same file's values.
struct dictionary_column {
  managed_tensor codes;
  managed_tensor offsets;
  managed_tensor bytes;

  // Hands the three tensors to the library as pool feature `feature` (for one consuming call).
  cbg_string_column_t give(int64_t feature) noexcept;
};

// The tensors of categorical column `f`: host memory for device < 0, else copies on that GPU.
dictionary_column dictionary_column_of(const feature_column& f, int32_t device);

// The feature tensors of a pool in order: numeric columns, and categorical ones as dictionary
// columns (their `columns` slot left empty). give_to() hands all of them over at once (it may throw
// only before the first is given) and points `desc` into this object, which must outlive the
// consuming call.
class feature_tensors {
 public:
  void add_numeric(managed_tensor column) { columns_.emplace_back(std::move(column)); }
  void add_categorical(const feature_column& f, int32_t device);
  void give_to(cbg_pool_desc_t& desc);

 private:
  std::vector<std::optional<managed_tensor>> columns_;
  std::vector<std::pair<int64_t, dictionary_column>> categorical_;
  std::vector<cbg_tensor_ref_t> refs_;
  std::vector<cbg_string_column_t> strings_;
};

// Moves the arrays of `data` into tensors the library consumes; `data` keeps its shape facts.
// With device >= 0 (a GPU context) every array is first copied to that device (the GPU trainer
// reads device memory).
pool_handle make_pool(cbg_context_t* ctx, loaded_dataset& data, int32_t device = CBG_DEVICE_CPU);

}  // namespace cbgpu_bench
