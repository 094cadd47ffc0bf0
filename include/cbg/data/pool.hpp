// SPDX-License-Identifier: Apache-2.0
// The pool: a dataset as non-owning column views with roles, plus the DLPack owners that keep the
// consumed tensors alive. Building a pool copies no data; it checks the label, weight and baseline
// values where they live (on the GPU for device memory), which returns 24 bytes of counts per column.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cbg/data/column_view.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/tensor/dlpack_import.hpp"

namespace cbg {

// A categorical feature given as UTF-8 strings in Arrow's layout (offsets [n + 1], int32 or
// int64, and the bytes, uint8/int8), or dictionary-encoded: integer codes [rows] into such a column
// of n strings. The pool hashes it once (on the GPU when the context is one and the data is
// device-readable; a dictionary once, then the codes are mapped) and keeps the hashes, so every
// later stage reads uint32 hashes (column_view::hashed).
struct string_column_input {
  std::int64_t feature = -1;  // pool feature index it becomes
  tensor_ref offsets;
  tensor_ref bytes;
  tensor_ref codes;  // none: offsets/bytes hold one string per row
};

// The inputs of pool::build. Consumed tensors in here are owned by build() from the call on.
// Features are indices 0..N-1, N = max(matrix columns or columns.size(), string features + 1):
// each index comes from exactly one of the matrix, a non-empty entry of `columns`, or a string
// column (string columns are categorical).
struct pool_inputs {
  tensor_ref features;              // 2-D [rows, features], or none
  std::vector<tensor_ref> columns;  // or one 1-D tensor per feature (none: a string column's slot)
  std::vector<string_column_input> string_columns;
  tensor_ref label;
  tensor_ref weight;
  tensor_ref baseline;
  std::vector<std::int32_t> cat_features;
  std::vector<std::string> feature_names;  // empty, or one per feature (see set_feature_names)
  cudaStream_t producer_stream = nullptr;
  // Keeps borrowed memory alive for the pool's lifetime (Arrow import: the moved ArrowArray, whose
  // release callback runs when the pool is destroyed, after its queued work).
  std::shared_ptr<void> keep_alive;
};

// A pool over memory the library already holds: a training table derived from a caller's pool
// (relabelled labels, staged copies, one-hot and CTR columns). Nothing is imported, checked or
// owned: the values were checked in the pool they come from, and whoever makes the pool keeps the
// memory alive for its lifetime.
struct pool_parts {
  std::vector<column_view> features;
  std::vector<bool> categorical;   // empty: none, else one per feature
  std::vector<std::string> names;  // empty, or one per feature
  std::optional<tensor_view> label, weight, baseline;
};

class pool {
 public:
  // Validates and wraps the inputs. Every consumed tensor is deleted exactly once: here if this
  // throws, else when the pool is destroyed.
  static pool build(std::shared_ptr<context> ctx, pool_inputs inputs);
  // Wraps views of data the library holds (pool_parts); the context's device reads the device-side
  // ones. Not the public import: the trainer's derived tables only.
  static pool borrow(std::shared_ptr<context> ctx, pool_parts parts);

  pool(pool&&) noexcept = default;
  pool& operator=(pool&&) noexcept = default;
  // Waits for the context's queued work, then lets go of the tensors (calls their deleters).
  ~pool();

  [[nodiscard]] std::int64_t num_rows() const noexcept { return rows_; }
  [[nodiscard]] std::int64_t num_features() const noexcept { return static_cast<std::int64_t>(features_.size()); }
  [[nodiscard]] const std::vector<column_view>& features() const noexcept { return features_; }
  [[nodiscard]] bool is_categorical(std::int64_t j) const { return categorical_.at(j); }
  [[nodiscard]] std::int64_t num_categorical() const noexcept;
  [[nodiscard]] const std::string& feature_name(std::int64_t j) const;
  // Names the features: exactly one name per feature.
  void set_feature_names(std::vector<std::string> names);
  [[nodiscard]] const std::optional<tensor_view>& label() const noexcept { return label_; }
  [[nodiscard]] const std::optional<tensor_view>& weight() const noexcept { return weight_; }
  [[nodiscard]] const std::optional<tensor_view>& baseline() const noexcept { return baseline_; }
  // Number of columns of a [rows] or [rows, k] tensor: 1 or k; 0 when absent.
  [[nodiscard]] static std::int64_t dims_of(const std::optional<tensor_view>& t) noexcept;
  // CUDA ordinal of the device-side columns, or -1 when all data is in host memory.
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] const std::shared_ptr<context>& ctx() const noexcept { return ctx_; }

 private:
  pool() = default;
  // Imports and hashes string column k; checks its row count against `rows` (-1: unknown yet).
  column_view import_string_column(const string_column_input& sc, std::size_t k, int device, std::int64_t& rows);

  std::shared_ptr<context> ctx_;
  std::shared_ptr<void> keep_alive_;
  std::vector<dlpack_owner> owners_;
  // Hashes of string columns (the column views point into these).
  std::vector<device_buffer<std::uint32_t>> device_hashes_;
  std::vector<std::vector<std::uint32_t>> host_hashes_;
  std::vector<column_view> features_;
  std::vector<bool> categorical_;
  std::vector<std::string> names_;
  std::optional<tensor_view> label_, weight_, baseline_;
  std::int64_t rows_ = 0;
  int device_ = -1;
};

}  // namespace cbg
