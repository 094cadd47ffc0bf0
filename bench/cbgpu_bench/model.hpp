// SPDX-License-Identifier: Apache-2.0
// A CatBoost model file read through the C ABI: an owning handle and readers for what `calc` needs
// (counts, feature columns, class names, prediction types).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cbgpu/cbgpu.h"

namespace cbgpu_bench {

struct model_deleter {
  void operator()(cbg_model_t* model) const noexcept { (void)cbg_model_free(model); }
};
using model_handle = std::unique_ptr<cbg_model_t, model_deleter>;

// `format`: CBG_MODEL_FORMAT_CBM or CBG_MODEL_FORMAT_JSON. Throws library_error (a missing file is
// CBG_ERR_IO, which main() reports with exit code 2).
model_handle load_model(const std::string& path, int32_t format);

// CatBoost's --model-format value ("CatboostBinary", "Json") as CBG_MODEL_FORMAT_*; throws
// usage_error for the others.
int32_t model_format(const std::string& name);

// Writes the model to each (file, CBG_MODEL_FORMAT_*) pair, all or nothing: on any failure every old
// file stays as it was. Throws usage_error naming the file and the reason.
void save_models(cbg_model_t* model, const std::vector<std::pair<std::string, int32_t>>& outputs);

cbg_model_info_t model_info(const cbg_model_t* model);

// Input (flat) column of each float / categorical feature of the model, by per-type index.
std::vector<int64_t> float_feature_columns(const cbg_model_t* model);
std::vector<int64_t> cat_feature_columns(const cbg_model_t* model);

// The class names the model stores (empty unless it is a classifier that stored them).
std::vector<std::string> class_names(const cbg_model_t* model);

// CatBoost's prediction type name ("RawFormulaVal", ...) as CBG_PREDICTION_*; throws usage_error.
int32_t prediction_type(const std::string& name);

int64_t prediction_columns(const cbg_model_t* model, int32_t type);

}  // namespace cbgpu_bench
