// SPDX-License-Identifier: Apache-2.0
// Categorical-feature training options with CatBoost's names and syntax (catboost-training.md
// §2.2-§2.3): one_hot_max_size, simple_ctr, combinations_ctr, per_feature_ctr, max_ctr_complexity,
// counter_calc_method, ctr_target_border_count, and CatBoost's CPU-only bounds on the CTR tables,
// ctr_leaf_count_limit and store_all_simple_ctr (the host path only; leaf_count_limit.hpp).
// A CTR description is CatBoost's string
//   CtrType[:TargetBorderCount=N][:TargetBorderType=T][:CtrBorderCount=N][:CtrBorderType=T]
//          [:Prior=num[/denom]][:PriorEstimation=No|BetaPrior]...
// (TargetBorderCount other than 1 is refused as not implemented: CatBoost's GPU trainer takes the
// target borders from ctr_target_border_count alone. PriorEstimation=BetaPrior, as in CatBoost's GPU
// trainer, only for Borders CTRs of single features, simple_ctr and per_feature_ctr: beta_prior.hpp.)
// and per_feature_ctr entries are "FeatureIndex:CtrDescription[;CtrDescription...]".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cbg/ctr/ctr_math.hpp"
#include "cbg/model/apply_math.hpp"
#include "cbg/model/model.hpp"
#include "cbg/quantize/quantize_math.hpp"

namespace cbg::ctr {

struct prior {
  float num = 0.f;
  float denom = 1.f;
  friend bool operator==(const prior&, const prior&) = default;
};

// One CTR of a description list (CatBoost's TCtrDescription).
// PriorEstimation: No, or BetaPrior (the priors replaced by one estimated from the learn data).
enum class prior_estimation : std::uint8_t { no, beta_prior };

struct ctr_spec {
  model::ctr_type type = model::ctr_type::borders;
  std::vector<prior> priors;  // after defaults: never empty
  int ctr_border_count = 15;
  quantize::border_type ctr_border_type = quantize::border_type::uniform;
  int target_border_count = 1;
  quantize::border_type target_border_type = quantize::border_type::min_entropy;
  prior_estimation estimation = prior_estimation::no;
  friend bool operator==(const ctr_spec&, const ctr_spec&) = default;
};

enum class counter_calc : std::uint8_t { skip_test, full };

struct options {
  int one_hot_max_size = 2;
  std::optional<std::vector<ctr_spec>> simple_ctr;                // nullopt: the GPU defaults
  std::optional<std::vector<ctr_spec>> combinations_ctr;          // nullopt: the GPU defaults
  std::map<std::int32_t, std::vector<ctr_spec>> per_feature_ctr;  // by flat feature index
  std::optional<int> max_ctr_complexity;                          // nullopt: 4, or 1 below 200 iterations
  counter_calc counter_calc_method = counter_calc::skip_test;
  std::optional<int> ctr_target_border_count;
  // CatBoost's CPU trainer's bound on a projection's categories: a projection with more distinct
  // learn values keeps the most frequent this many (the default: no bound).
  std::uint64_t ctr_leaf_count_limit = no_leaf_count_limit;
  bool store_all_simple_ctr = false;  // single-feature projections keep every value
  // The permutation of the ordered statistics (ctr_math.hpp permutation_rule): has_time visits the
  // rows in the data's order; otherwise blocks of fold_permutation_block rows are shuffled (0: unset,
  // CatBoost's GPU default 64, see permutation_of).
  bool has_time = false;
  std::uint32_t fold_permutation_block = 0;
  static constexpr std::uint64_t no_leaf_count_limit = ~std::uint64_t{0};
};

// The bound ctr_leaf_count_limit and store_all_simple_ctr put on the table of `proj` (CatBoost's
// online_ctr.cpp): the limit, or none for a single categorical feature under store_all_simple_ctr.
std::uint64_t leaf_count_limit_of(const options& o, const model::projection& proj);

// CatBoost's GPU trainer refuses ctr_leaf_count_limit and store_all_simple_ctr other than their
// defaults; so does a GPU context here (not_implemented, naming the parameter). `cpu`: the context
// is the host's.
void check_table_bounds_supported(const options& o, bool cpu);

// The block size of the permutation of `rows` learn rows: CatBoost's GPU rule (GetPermutationBlockSize
// after UpdateGpuSpecificDefaults): unset or 0 means 64; below 50 000 rows 1; otherwise a block above 1
// is rounded up to a power of two and halved while block * 128 exceeds the rows.
std::uint32_t permutation_block_size(std::uint32_t fold_permutation_block, std::int64_t rows);
// The permutation of the ordered statistics of `rows` learn rows under `o` and `seed`.
permutation_rule permutation_of(const options& o, std::uint64_t seed, std::int64_t rows);

// Parses one option (the trainer's parameter table, cbg/train/param_table.hpp, lists them); `value`
// is JSON text (a string, a number or a list of strings). Throws cbg::error(invalid_argument) naming
// the parameter, or not_implemented for recognised values this
// library does not implement (e.g. TargetBorderCount in a description).
void parse_option(options& o, const std::string& key, const std::string& value_json);
// Parses one CTR description string; `what` names the parameter in errors.
ctr_spec parse_ctr_spec(const std::string& text, const std::string& what);

// CatBoost's GPU default CTR list (Borders with priors 0/1, 0.5/1, 1/1, Uniform 15 borders;
// FeatureFreq prior 0/1, MinEntropy (simple) or Median (combinations) 15 borders).
std::vector<ctr_spec> default_ctrs(bool combinations);
// The priors a type gets when the description names none (CatBoost: 0, 0.5, 1 for target types;
// 0 for the counter types).
std::vector<prior> default_priors(model::ctr_type t);

// ctr_target_border_count (CatBoost's GPU way to binarize a regression target by several borders):
// sets TargetBorderCount of every target-based description, the default lists' included. Called
// once all options are read.
void apply_target_border_count(options& o);

// The CTR list of categorical feature `flat_index`: per_feature_ctr, else simple_ctr, else the
// defaults.
const std::vector<ctr_spec>& simple_ctrs_of(const options& o, std::int32_t flat_index);

// CatBoost's text of a description (for the model's params info).
std::string ctr_spec_text(const ctr_spec& s);

}  // namespace cbg::ctr
