// SPDX-License-Identifier: Apache-2.0
// Extra candidate columns per level for the host tree search (feature combinations, issue 5;
// src/ctr/combinations.cpp). At each level the learner asks the extension for columns that depend
// on the splits chosen so far, scores them with the pool's features (after them in the tie order,
// with the noise column_noise gives), and when one wins asks for the feature id the split is recorded under (an
// id >= q.features, stable for the same column). The host backend also asks it for those
// features' border values and their values on the eval rows. Kept out of tree_search.hpp and
// boosting.hpp so the GPU learner's headers do not change; the GPU has no such hook yet.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cbg/train/boosting.hpp"
#include "cbg/train/tree_search.hpp"

namespace cbg::train {

class search_extension {
 public:
  struct column {
    const std::uint8_t* bins = nullptr;  // [rows]: the bin of each learn row
    std::int32_t border_count = 0;
  };
  virtual ~search_extension() = default;
  // The candidate columns of level `depth`, given the splits already in the tree (features of `q`
  // or committed ones). The pointers stay valid until the next call.
  virtual std::vector<column> candidates(int depth, const std::vector<split>& chosen,
                                         const quantize::host_quantized& q) = 0;
  // Column k of the last candidates() won: its feature id.
  virtual std::int32_t commit(std::size_t k) = 0;
  // A committed feature's border value of `bin`, and its values on the eval rows (null without).
  [[nodiscard]] virtual float border(std::int32_t feature, std::int32_t bin) const = 0;
  [[nodiscard]] virtual const float* eval_values(std::int32_t feature) const = 0;

  // Score noise of candidate column `column` at level `level` (already scaled; added like the pool
  // features' noise, Cosine only); empty: none. Set by the trainer per iteration.
  std::function<double(int level, std::size_t column)> column_noise;
};

// search_tree_host with an extension (null: none).
tree_structure search_tree_host(const host_search_input& in, const tree_search_params& params,
                                std::vector<std::uint32_t>& leaf_index, search_extension* extension);

// The host backend whose searches use `extension` (null: none); the extension must outlive it.
std::unique_ptr<boosting_backend> make_host_backend(const backend_inputs& in, search_extension* extension);

}  // namespace cbg::train
