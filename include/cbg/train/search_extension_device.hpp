// SPDX-License-Identifier: Apache-2.0
// Extra candidate columns per level for the GPU tree search (feature combinations, issue 5): the
// device counterpart of search_extension.hpp. At each level the search (kernels/train/tree_search.cu
// with kernels/train/search_extension_device.cu) reads the splits chosen so far back (a few
// bytes), asks the extension for columns that depend on them (8-bit bins in device memory), builds
// their histograms over the level's leaves, scores them with the host's math and tie order (after
// the pool's features, with column_noise) and, when one beats the pool's best split, asks for the
// feature id the split is recorded under and updates the leaves from its bins. The backend asks it
// for those features' border values and their values on the eval rows (device memory).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cbg/train/boosting.hpp"
#include "cbg/train/tree_search.hpp"

namespace cbg::train {

namespace detail {
struct extension_workspace;  // kernels/train/search_extension_device.cu
}  // namespace detail

class device_search_extension {
 public:
  struct column {
    const std::uint8_t* bins = nullptr;  // device memory, [learn rows]: the bin of each row
    std::int32_t border_count = 0;
  };
  virtual ~device_search_extension() = default;
  // The candidate columns of a level whose tree has the splits `chosen` (features of the pool or
  // committed ones); `float_border(feature, bin)` gives a pool feature's border. The pointers stay
  // valid until the next call.
  virtual std::vector<column> candidates(const std::vector<split>& chosen,
                                         const std::function<float(std::int32_t, std::int32_t)>& float_border) = 0;
  // Column k of the last candidates() won: its feature id (>= the pool's feature count).
  virtual std::int32_t commit(std::size_t k) = 0;
  // A committed feature's border value of `bin`, and its values on the eval rows (device memory;
  // null without eval rows).
  [[nodiscard]] virtual float border(std::int32_t feature, std::int32_t bin) const = 0;
  [[nodiscard]] virtual const float* eval_values(std::int32_t feature) const = 0;
  // The quantized nan_mode of each pool feature (known once the backend has quantized the pool).
  virtual void set_nan_modes(const std::vector<std::uint8_t>& modes) = 0;

  // Score noise of candidate column `column` at level `level` (as search_extension::column_noise).
  std::function<double(int level, std::size_t column)> column_noise;

  // The GPU search's scratch for this extension's levels (device buffers grown to the largest
  // level, the tree's splits so far): created by the first search, kept for the training.
  std::shared_ptr<detail::extension_workspace> workspace;
};

// The GPU backend whose searches use `extension` (null: none); it must outlive the backend. One
// GPU only: sharded training refuses an extension (status::not_implemented).
std::unique_ptr<boosting_backend> make_device_backend(const backend_inputs& in, device_search_extension* extension);

}  // namespace cbg::train
