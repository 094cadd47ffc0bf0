// SPDX-License-Identifier: Apache-2.0
// The trainer's entry into categorical-feature preparation: CTR targets from the loss.
#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/ctr/combinations.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/params.hpp"
#include "src/train/boosting_common.hpp"

namespace cbg::ctr {

namespace {

// The CTR targets of a host learn pool under the parameters' loss; `storage` holds the values.
ctr_targets host_targets(const pool& learn, const train::train_params& p, std::vector<float>& storage) {
  using train::loss_kind;
  const loss_kind k = p.loss.kind;
  ctr_targets t;
  t.multiclass = k == loss_kind::multiclass || k == loss_kind::multiclass_one_vs_all;
  t.binarize = k != loss_kind::logloss;
  train::target_rule rule;
  rule.loss = k;
  rule.has_border = p.target_border.has_value();
  rule.border = p.target_border.value_or(0.5);
  if (t.multiclass) {
    const train::label_facts f = train::host_label_facts(learn);
    CBG_EXPECTS(f.all_integer && f.min >= 0 && f.max < max_target_classes, status::bad_data,
                fmt::format("{} with target CTRs takes class indices 0 .. {} as labels (found {} .. {})",
                            train::loss_name(k), max_target_classes - 1, f.min, f.max));
    t.classes = static_cast<int>(f.max) + 1;
    rule.classes = t.classes;
  }
  storage = train::read_targets(learn, rule, "learn");
  t.learn = &storage;
  return t;
}

}  // namespace

prepared_data prepare_for_training(const pool& learn, const pool* eval, const train::train_params& p) {
  using train::loss_kind;
  const loss_kind k = p.loss.kind;
  // The GPU path when every categorical column is where the device reads it; else the host
  // reference (whose derived pools are then in pageable host memory, which the GPU trainer refuses
  // as it refuses any pageable column).
  bool on_device = !learn.ctx()->is_cpu();
  for (std::int64_t j = 0; j < learn.num_features(); ++j) {
    if (learn.is_categorical(j)) {
      on_device = on_device && learn.features()[static_cast<std::size_t>(j)].memory != memory_kind::host &&
                  (eval == nullptr || eval->features()[static_cast<std::size_t>(j)].memory != memory_kind::host);
    }
  }
  if (on_device && learn.label() && learn.label()->memory != memory_kind::host) {
    train::target_rule rule;
    rule.loss = k;
    rule.has_border = p.target_border.has_value();
    rule.border = p.target_border.value_or(0.5);
    return prepare_categorical_device(learn, eval, p.ctr, rule, k != loss_kind::logloss, p.random_seed);
  }
  std::vector<float> targets;
  const ctr_targets t = host_targets(learn, p, targets);
  return prepare_categorical_host(learn, eval, p.ctr, t, p.random_seed);
}

std::unique_ptr<train::search_extension> combinations_for_training(const pool& learn, const pool* eval,
                                                                   const train::train_params& p,
                                                                   prepared_data& prepared,
                                                                   std::shared_ptr<combination_borders> shared) {
  const int complexity = max_ctr_complexity_of(p.ctr, p.iterations);
  if (complexity <= 1) return nullptr;
  std::vector<float> targets;
  const ctr_targets t = host_targets(learn, p, targets);
  return make_combinations_host(learn, eval, p.ctr, t, p.random_seed, complexity, prepared, std::move(shared));
}

}  // namespace cbg::ctr
