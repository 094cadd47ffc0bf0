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
#include "cbg/runtime/context.hpp"
#include "cbg/tensor/dlpack_import.hpp"

namespace cbg {

// The inputs of pool::build. Consumed tensors in here are owned by build() from the call on.
struct pool_inputs {
  tensor_ref features;                  // 2-D [rows, features], or none
  std::vector<tensor_ref> columns;      // or one 1-D tensor per feature
  tensor_ref label;
  tensor_ref weight;
  tensor_ref baseline;
  std::vector<std::int32_t> cat_features;
  std::vector<std::string> feature_names;  // empty, or one per feature (see set_feature_names)
  cudaStream_t producer_stream = nullptr;
};

class pool {
 public:
  // Validates and wraps the inputs. Every consumed tensor is deleted exactly once: here if this
  // throws, else when the pool is destroyed.
  static pool build(std::shared_ptr<context> ctx, pool_inputs inputs);

  pool(pool&&) noexcept = default;
  pool& operator=(pool&&) noexcept = default;
  // Waits for the context's queued work, then lets go of the tensors (calls their deleters).
  ~pool();

  [[nodiscard]] std::int64_t num_rows() const noexcept { return rows_; }
  [[nodiscard]] std::int64_t num_features() const noexcept {
    return static_cast<std::int64_t>(features_.size());
  }
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

  std::shared_ptr<context> ctx_;
  std::vector<dlpack_owner> owners_;
  std::vector<column_view> features_;
  std::vector<bool> categorical_;
  std::vector<std::string> names_;
  std::optional<tensor_view> label_, weight_, baseline_;
  std::int64_t rows_ = 0;
  int device_ = -1;
};

}  // namespace cbg
