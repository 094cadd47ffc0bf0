// SPDX-License-Identifier: Apache-2.0
// Extra candidate columns per level for the tree search (feature combinations; src/ctr/). At each
// level the search asks the extension for columns that depend on the splits chosen so far, scores
// them with the pool's features (after them in the tie order, with the noise column_noise gives),
// and when one wins asks for the feature id the split is recorded under (an id >= the pool's
// feature count, stable for the same column). The backend asks it for those features' border
// values and their values on the eval rows. One interface for both searches: the host search reads
// the columns' bins and eval values in host memory, the GPU search in device memory (each
// extension gives them where its backend reads).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cbg/model/model.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/tree_search.hpp"

namespace cbg::train {

class search_extension {
 public:
  struct column {
    const std::uint8_t* bins = nullptr;  // [learn rows]: the bin of each row (the search's memory)
    std::int32_t border_count = 0;
  };
  virtual ~search_extension() = default;
  // The quantized nan_mode of each pool feature (known once the backend has quantized the pool);
  // set before the first candidates().
  virtual void set_nan_modes(const std::vector<std::uint8_t>& modes) = 0;
  // The candidate columns of a level whose tree has the splits `chosen` (features of the pool or
  // committed ones); `float_border(feature, bin)` gives a pool feature's border. The pointers stay
  // valid until the next call.
  virtual std::vector<column> candidates(const std::vector<split>& chosen,
                                         const std::function<float(std::int32_t, std::int32_t)>& float_border) = 0;
  // Column k of the last candidates() won: its feature id.
  virtual std::int32_t commit(std::size_t k) = 0;
  // A committed feature's border value of `bin`, and its values on the eval rows (the backend's
  // memory; null without eval rows).
  [[nodiscard]] virtual float border(std::int32_t feature, std::int32_t bin) const = 0;
  [[nodiscard]] virtual const float* eval_values(std::int32_t feature) const = 0;
  // Several permutations of the ordered CTRs (ctr/permutation_scheme.hpp): the bins of committed
  // features `features` on the learn rows under this extension's permutation (its own ordered
  // values, binned with the borders each was committed with; the search's memory), for use_tree of
  // a tree searched on another permutation. Valid until the next call or candidates(); nulls by
  // default.
  virtual std::vector<const std::uint8_t*> committed_bins(const std::vector<std::int32_t>& features) {
    return std::vector<const std::uint8_t*>(features.size(), nullptr);
  }

  // Model-size regularization: the most distinct values column k of the last candidates() can take
  // (CatBoost's bound: 2^(float and one-hot splits) times the categorical features' distinct counts,
  // at most the learn rows), and the CTR table it reads (null: none).
  [[nodiscard]] virtual std::uint64_t column_unique_values(std::size_t /*k*/) const { return 0; }
  [[nodiscard]] virtual const model::ctr_base* column_base(std::size_t /*k*/) const { return nullptr; }

  // Sharded training: each rank's search calls this for a level's columns once it has made its
  // buffers for them, before it all-reduces their histograms (the ranks meet there:
  // src/dist/sharded_extension.hpp). Nothing by default.
  virtual void before_column_reduce(int /*level*/) {}

  // Score noise of candidate column `column` at level `level` (already scaled; added like the pool
  // features' noise, Cosine only); empty: none. Set by the trainer per iteration.
  std::function<double(int level, std::size_t column)> column_noise;
  // The model-size multipliers of the `count` columns of the last candidates() for a tree with the
  // splits `chosen` (size_weighted_score); empty function or result: none. Set by the trainer.
  std::function<std::vector<float>(const std::vector<split>& chosen, std::size_t count)> column_weights;
};

// use_tree's bins of a tree's feature combinations (splits on features >= `pool_features`) from
// `extension` (its permutation's values); null for the pool's features. Throws internal for a split
// of no feature.
std::vector<const std::uint8_t*> combination_bins(search_extension* extension, const std::vector<split>& splits,
                                                  std::int64_t pool_features);

// search_tree_host with an extension (null: none).
tree_structure search_tree_host(const host_search_input& in, const tree_search_params& params,
                                std::vector<std::uint32_t>& leaf_index, search_extension* extension);

// The host backend whose searches use `extension` (null: none); the extension must outlive it.
std::unique_ptr<boosting_backend> make_host_backend(const backend_inputs& in, search_extension* extension);

// The GPU backend whose searches use `extension` (null: none); it must outlive the backend. Sharded
// over several devices of one process, each rank's search reads its rows of the extension's columns
// (src/dist/sharded_extension.hpp); over several processes each process's extension gives its rows
// (src/dist/all_rows.hpp).
std::unique_ptr<boosting_backend> make_device_backend(const backend_inputs& in, search_extension* extension);

}  // namespace cbg::train
