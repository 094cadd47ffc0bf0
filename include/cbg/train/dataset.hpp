// SPDX-License-Identifier: Apache-2.0
// The training dataset: what one training reads, prepared once from the caller's pools.
//   pool(s) -> labels relabelled (class_names values become class indices)
//           -> categorical features turned into one-hot and CTR columns after the float features
//              (cbg/ctr/features.hpp)
//           -> on a GPU, the pageable host inputs the trainer reads staged to the device
//           -> the learn features quantized once, on the path that trains (host or device)
//           -> the boosting backend (boosting.hpp), which takes the quantized set over.
// On a GPU with feature combinations the caller's pageable columns and label are staged to the
// device before the categorical step (the combinations read them there).
// Each stage's tables are pools over memory the dataset owns (pool::borrow): nothing goes through
// the public pool import again. A training sharded over several processes quantizes the features
// gathered from every rank instead (src/dist/), so there the dataset leaves the learn set as it is;
// with categorical features there it gathers every rank's rows of what the CTRs read first and
// keeps this rank's part of the derived columns (src/dist/all_rows.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "cbg/ctr/features.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/params.hpp"

namespace cbg::dist {
struct all_rows;  // every rank's rows of the CTRs' inputs (src/dist/all_rows.hpp)
}

namespace cbg::train {

struct derived_table;      // a derived pool and the memory it views (dataset.cpp)
struct permutation_table;  // another permutation's CTR columns, binned (dataset.cpp)

class dataset {
 public:
  // Throws bad_data naming the first row whose label is not one of class_names.
  dataset(const pool& learn, const pool* eval, const train_params& p);
  dataset(const dataset&) = delete;
  dataset& operator=(const dataset&) = delete;
  ~dataset();

  // The caller's pools with their labels relabelled: what the CTRs and the feature combinations read
  // (over several processes: every rank's rows of them, in rank order).
  [[nodiscard]] const pool& labelled_learn() const noexcept { return *labelled_learn_; }
  [[nodiscard]] const pool* labelled_eval() const noexcept { return labelled_eval_; }
  // The one-hot and CTR columns, their tables and overrides (null without categorical features).
  [[nodiscard]] ctr::prepared_data* categorical() noexcept { return cat_ ? &*cat_ : nullptr; }
  // What the backends read: the float then the derived features, labels, weights, baselines.
  [[nodiscard]] const pool& learn() const noexcept { return *learn_; }
  [[nodiscard]] const pool* eval() const noexcept { return eval_; }

  // Over several processes with categorical features: this rank's first learn and eval rows in the
  // pools the CTRs read (its part of their columns); nullopt otherwise.
  struct rank_window {
    std::int64_t learn_first = 0, eval_first = 0;
  };
  [[nodiscard]] const std::optional<rank_window>& rank_rows() const noexcept { return rank_rows_; }

  // The backend's inputs: these tables and the quantized learn set, which the backend takes over
  // (call once).
  [[nodiscard]] backend_inputs take_backend_inputs() { return take_permutation_inputs(0, true); }

  // The permutations of the ordered CTRs (ctr/permutation_scheme.hpp): permutation_count when a
  // feature has CTR columns, else 1. Permutation k > 0 has its own ordered CTR columns (seed
  // ctr::permutation_seed), binned with permutation 0's borders; the rest of the learn set, the eval
  // set and the model's tables are permutation 0's (they do not depend on the permutation).
  [[nodiscard]] int permutation_count() const noexcept { return 1 + static_cast<int>(permutations_.size()); }
  // Permutation k's backend inputs (the eval set only `with_eval`), which a backend takes over (call
  // once per permutation).
  [[nodiscard]] backend_inputs take_permutation_inputs(int k, bool with_eval);

 private:
  std::unique_ptr<derived_table> relabelled_learn_, relabelled_eval_, staged_learn_, staged_eval_;
  // The caller's categorical pools staged to the device for feature combinations on a GPU.
  std::unique_ptr<derived_table> staged_categorical_learn_, staged_categorical_eval_;
  std::unique_ptr<dist::all_rows> all_rows_;  // before cat_, whose pools view it
  std::optional<ctr::prepared_data> cat_;
  std::unique_ptr<pool> rank_learn_, rank_eval_;  // this rank's part of cat_'s pools (several processes)
  std::optional<rank_window> rank_rows_;
  const pool* labelled_learn_ = nullptr;
  const pool* labelled_eval_ = nullptr;
  const pool* learn_ = nullptr;
  const pool* eval_ = nullptr;
  quantize::options quantize_;
  std::string devices_;
  std::optional<quantize::host_quantized> host_quantized_;
  std::optional<quantize::device_quantized> device_quantized_;
  std::vector<std::unique_ptr<permutation_table>> permutations_;  // permutations 1 .. P-1
};

}  // namespace cbg::train
