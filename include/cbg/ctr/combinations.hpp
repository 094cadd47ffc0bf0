// SPDX-License-Identifier: Apache-2.0
// Feature combinations (tree CTRs, catboost-training.md §2.5) on the host path: while a tree grows,
// each level gets candidate CTR columns of the projections "a base projection of this tree + one
// more categorical feature" (CatBoost's CPU rule, AddTreeCtrs in greedy_tensor_search.cpp): the
// bases are the projection of each CTR split already in the tree and the projection of all its
// float and one-hot splits; a candidate combines at most max_ctr_complexity features. Their values
// are ordered CTRs over the learn rows (the permutation, target classes and priors of the simple
// CTRs; the combinations_ctr list, by default Borders with Uniform and FeatureFreq with Median
// quantization, 15 borders each), quantized like the derived columns, and scored with the pool's
// features through the tree search's extension hook. A column that wins a split becomes a model
// CTR feature: it is appended to prepared_data::derived (so its feature id is float_count + its
// index there, as for the simple CTRs) with its table over all learn rows in prepared_data::tables,
// keyed by CatBoost's projection hash (model::projection_add_cat over the categorical features in
// ascending order, then the bits of its float splits and one-hot splits, each sorted ascending), so
// the model builder writes it like any CTR feature.
//
// CatBoost's rules: the candidate rule above, the length limit (categorical features + float splits
// + one-hot splits <= max_ctr_complexity) and the skipping of one-hot and already present features
// are read in catboost/libs/algo/greedy_tensor_search.cpp (AddTreeCtrs). CatBoost's GPU searcher
// (cuda/methods/tree_ctrs.h, TTreeCtrDataSetsHelper::AddSplit) differs: its base tensor accumulates
// the CTR splits' tensors of the tree, and its float/one-hot splits form a separate base; we follow
// the CPU rule (either way CatBoost loads and evaluates the model the same: tested). Not matched:
// CatBoost's permutations and noise draws (ours: the simple CTRs' seeded permutation and our noise
// stream); the order of float and one-hot splits inside a projection is ours (ascending). The
// model_size_reg penalty weighs the columns with the pool's CTRs (ctr_size_penalty.hpp in src/train/;
// the bound of a column's distinct values: unique_values.hpp).
//
// The GPU path: combinations_device.hpp (the same candidates, columns, tables and eval values from
// device data; one control flow with the host's over the two paths' primitives), on one GPU, with
// pageable categorical columns and labels staged to the device first (train/dataset.cpp); on several
// GPUs of one process each rank reads its rows (src/dist/sharded_extension.hpp); over several
// processes each computes it over every rank's rows and reads its own (src/dist/all_rows.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "cbg/ctr/features.hpp"
#include "cbg/train/search_extension.hpp"

namespace cbg::train {
struct train_params;
}

namespace cbg::ctr {

// The effective max_ctr_complexity: the parameter when given, else CatBoost's default (4, or 1
// below 200 iterations).
int max_ctr_complexity_of(const options& o, int iterations);

// The number of features a projection combines (categorical features, float splits, one-hot
// splits: CatBoost's GetFullProjectionLength).
std::size_t projection_length(const model::projection& p);

// The candidate projections of one level: each non-empty base projection plus one feature of
// `ctr_cats` not in it, of at most `max_complexity` features, without duplicates, in ascending
// order (categorical features sorted ascending in each).
std::vector<model::projection> combination_candidates(const std::vector<model::projection>& bases,
                                                      const std::vector<std::int32_t>& ctr_cats, int max_complexity);

// The categorical features whose CTRs combine (those with simple CTR columns), ascending.
std::vector<std::int32_t> combination_cats(const prepared_data& prepared);

// The base projections of a tree whose splits are `chosen` (features of the derived pool, or
// committed combinations): first the one of its float and one-hot splits (each sorted ascending;
// may be empty), then the projection of each CTR split, in tree order. `float_border(feature, bin)`:
// a float split's border.
std::vector<model::projection> combination_bases(const std::vector<train::split>& chosen, const prepared_data& prepared,
                                                 const std::function<float(std::int32_t, std::int32_t)>& float_border);

// The candidate CTR features of one projection in the order the searches score them: per spec of
// `specs`, per target feature (over `classes` target classes), per prior, a repeated one skipped;
// `spec` is the index in `specs` of the one it comes from.
struct combination_feature {
  model::ctr_description desc;
  std::size_t spec = 0;
};
std::vector<combination_feature> projection_features(const model::projection& proj, const std::vector<ctr_spec>& specs,
                                                     int classes);

// The projection key of one object's categorical hashes `cats` (in the projection's order); the
// bits of its float and one-hot splits follow through model::projection_add_bit.
std::uint64_t combination_key(const std::uint32_t* cats, std::size_t n);

// Several permutations of the ordered CTRs (permutation_scheme.hpp) give each permutation its own
// extension (its seed's ordered values); they share the prepared data (so a committed combination
// has one feature id and one table) and these borders: a committed column's borders are those of
// the permutation that committed it first, and every permutation bins its own values of it with
// them (CatBoost's GPU trainer: the features manager keeps a tree CTR's borders from its first
// split, TTreeCtrDataSetVisitor; TTreeCtrDataSetBuilder::GetBorders computes borders only for CTRs
// it does not know). A column not committed yet is binned with its own permutation's borders.
using combination_borders = std::map<model::ctr_description, std::vector<float>>;

// The extension for the host tree search (set_nan_modes before the first candidates). `prepared` (from
// prepare_categorical_host on the same pools) must outlive it; committed combinations are appended to it. `targets` as
// for prepare_categorical_host (copied); `seed` must be the one the simple CTRs used.
std::unique_ptr<train::search_extension> make_combinations_host(const pool& learn, const pool* eval, const options& o,
                                                                const ctr_targets& targets, std::uint64_t seed,
                                                                int max_complexity, prepared_data& prepared,
                                                                std::shared_ptr<combination_borders> shared = nullptr);

// The trainer's entry: the extension for training with parameters `p` (targets read from the
// learn labels as prepare_for_training reads them), or null when max_ctr_complexity is 1 or no
// categorical feature has CTRs. `shared`: the borders shared with other permutations' extensions
// (p.random_seed then the permutation's seed), or null for one permutation.
std::unique_ptr<train::search_extension> combinations_for_training(
    const pool& learn, const pool* eval, const train::train_params& p, prepared_data& prepared,
    std::shared_ptr<combination_borders> shared = nullptr);

}  // namespace cbg::ctr
