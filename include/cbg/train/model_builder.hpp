// SPDX-License-Identifier: Apache-2.0
// Model assembly: trained trees (splits as (feature, bin), leaf values per trained dimension) into
// a cbg::model::model that CatBoost loads: each float feature keeps the borders its splits use,
// binary features are numbered feature by feature, border by border (the model format's order),
// and the info map carries CatBoost-like "params" and "class_params".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cbg/ctr/features.hpp"
#include "cbg/model/model.hpp"
#include "cbg/train/loss.hpp"
#include "cbg/train/tree_search.hpp"

namespace cbg::train {

struct built_tree {
  std::vector<split> splits;         // splits[d] sets bit d of the leaf index
  std::vector<double> values;        // [leaf][trained dims], learning rate applied
  std::vector<double> leaf_weights;  // [leaf] sample weight sums
};

struct model_inputs {
  const std::vector<built_tree>* trees = nullptr;
  // Per feature: bin -> border value, for every bin a split uses.
  const std::vector<std::map<std::int32_t, float>>* borders = nullptr;
  const std::vector<std::uint8_t>* nan_modes = nullptr;  // effective quantize::nan_mode
  std::vector<std::string> feature_names;                // "" or a name per feature
  loss_spec loss;
  std::vector<double> bias;              // trained dims
  std::vector<std::string> class_names;  // classification: one per class (numeric text unless text)
  bool class_names_are_text = false;     // class_names given as strings (class_label_type String)
  int classes_count = 0;                 // the classes_count parameter, or 0
  std::string params_json;               // "params" info
  std::string output_options_json;       // "output_options" info
  std::string training_json;             // "training" info (metric history), or ""
  // Categorical features: the trained features are the float features then the derived one-hot
  // and CTR columns (ctr/features.hpp); null when the pool had none.
  const ctr::prepared_data* categorical = nullptr;
};

model::model build_model(const model_inputs& in);

}  // namespace cbg::train
