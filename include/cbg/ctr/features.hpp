// SPDX-License-Identifier: Apache-2.0
// Categorical features for the tree learner (catboost-training.md §2): each categorical feature
// of a pool becomes extra numeric columns, appended after the pool's float features, that the
// existing quantizer and tree search treat like float features:
//   - one-hot (at most one_hot_max_size distinct learn values): one 0/1 column per value; a split
//     on it is the model's one-hot split (feature, value hash);
//   - otherwise one column per (CTR, prior) of its CTR list: ordered CTR values on the learn rows
//     (ctr_math.hpp), quantized with the CTR's border rule; a split on it is a model CTR split.
// The eval rows get the values the finished model computes (full learn statistics), so the
// trainer's eval metrics are the model's. prepare_categorical_*() build the derived pools; the model
// builder turns splits on derived columns into model features and writes the CTR tables.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cbg/ctr/ctr_math.hpp"
#include "cbg/ctr/options.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/model/model.hpp"
#include "cbg/quantize/quantizer.hpp"

namespace cbg::train {
struct target_rule;
}

namespace cbg::ctr {

enum class derived_kind : std::uint8_t { one_hot, ctr };

struct derived_feature {
  derived_kind kind = derived_kind::one_hot;
  std::int32_t cat_index = 0;  // per-type index of the categorical feature
  std::int32_t value = 0;      // one_hot: the hash as int32
  model::ctr_description ctr;  // ctr: what the model stores (shift 0, scale 1)
};

// What the learner trains on and what the model builder needs.
struct prepared_data {
  std::int64_t float_count = 0;                       // the derived pools' first columns: float features
  std::vector<std::int32_t> float_flat;               // flat index of each of them
  std::vector<std::int32_t> cat_flat;                 // flat index of each categorical feature
  std::vector<derived_feature> derived;               // the columns after them
  std::vector<model::ctr_table> tables;               // one per CTR base, full learn statistics
  std::vector<quantize::feature_override> overrides;  // quantization of the derived columns
  std::unique_ptr<pool> learn, eval;                  // the derived pools (float + derived columns)
  // Storage the derived pools view (host reference: host vectors; GPU: device buffers).
  std::vector<std::vector<float>> learn_columns, eval_columns;
  std::vector<device_buffer<float>> learn_device_columns, eval_device_columns;
};

// Targets for the CTRs: the training target per learn row (what the loss sees) and the rule that
// turns it into a class. `binarize`: regression targets are split by the CTR descriptions' target
// borders (one MinEntropy border by default); else class = target > 0.5 (Logloss).
struct ctr_targets {
  const std::vector<float>* learn = nullptr;
  bool binarize = false;
  bool multiclass = false;  // learn holds class indices 0..classes-1
  int classes = 0;
};

// The most target classes a target-based CTR takes (class indices are stored in a byte).
inline constexpr int max_target_classes = 255;

// The host reference: pools in host memory. `seed` draws the permutation of the ordered CTRs.
prepared_data prepare_categorical_host(const pool& learn, const pool* eval, const options& o,
                                       const ctr_targets& targets, std::uint64_t seed);

// The GPU (src/ctr/prepare_device.cpp over kernels/ctr/): the same columns and tables, by the same
// flow (src/ctr/prepare.hpp), from pools the context's device reads; the
// label is read on the device under `rule` (no targets come back). Copies back only the distinct
// counts, the one-hot values and the CTR tables (category-sized, for the model), and one target
// border of a regression target. The derived pools live in device memory.
prepared_data prepare_categorical_device(const pool& learn, const pool* eval, const options& o,
                                         const train::target_rule& rule, bool binarize, std::uint64_t seed);

// The categorical hash of every row of column `flat` (integer columns hashed as decimal text).
std::vector<std::uint32_t> column_hashes_host(const pool& p, std::int64_t flat);

// The borders of a regression target for CTR target binarization (by default MinEntropy, one
// border; ctr_target_border_count of them), over all rows as CatBoost does (a subset above 2^24
// rows). A constant target gets one border, its value (every row is class 0).
target_borders target_borders_host(const std::shared_ptr<context>& ctx, const std::vector<float>& targets,
                                   quantize::border_type type, int count);

}  // namespace cbg::ctr

namespace cbg::train {
struct train_params;
}

namespace cbg::ctr {

// The trainer's entry: the derived pools of a learn pool with categorical features (and of the
// eval pool), with the CTR targets read from the learn labels under the parameters' loss.
prepared_data prepare_for_training(const pool& learn, const pool* eval, const train::train_params& p);

}  // namespace cbg::ctr
