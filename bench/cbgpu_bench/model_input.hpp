// SPDX-License-Identifier: Apache-2.0
// The rows of a file as a model's host evaluator takes them: float features and CatBoost hashes of
// categorical values, row-major, by the model's per-type feature order.
#pragma once

#include <cstdint>
#include <vector>

#include "cbgpu/cbgpu.h"
#include "dataset.hpp"

namespace cbgpu_bench {

struct model_input {
  int64_t rows = 0;
  std::vector<float> floats;     // [rows, n_float_features]
  std::vector<uint32_t> hashes;  // [rows, n_cat_features]
  int64_t n_float_features = 0;
  int64_t n_cat_features = 0;
};

// Flat feature i of the model is the i-th feature column of `data` (label, weight and the other
// non-feature columns do not count), as in CatBoost. Categorical values are hashed from their text
// with cbg_cat_hash_string(). Throws usage_error when the data has fewer feature columns than the
// model needs, or a column's type (.cd Num / Categ) differs from the model's.
model_input make_model_input(const cbg_model_t* model, const loaded_dataset& data);

// The checks of make_model_input without the copy: enough feature columns, and each of the
// model's features numeric or categorical in the data as in the model. Throws usage_error.
void check_feature_roles(const cbg_model_t* model, const loaded_dataset& data);

// A predict descriptor pointing into `input` (which must outlive it).
cbg_model_predict_host_desc_t predict_desc(const model_input& input, int32_t prediction_type);

}  // namespace cbgpu_bench
