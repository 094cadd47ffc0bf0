// SPDX-License-Identifier: Apache-2.0
#include "model_input.hpp"

#include <string>

#include <fmt/format.h>

#include "errors.hpp"
#include "library.hpp"
#include "model.hpp"

namespace cbgpu_bench {

namespace {

std::string describe(const feature_column& f) {
  return f.name.empty() ? fmt::format("column {}", f.source_column)
                        : fmt::format("column {} ('{}')", f.source_column, f.name);
}

const feature_column& feature_at(const loaded_dataset& data, int64_t flat_index, bool categorical) {
  const feature_column& f = data.features[static_cast<std::size_t>(flat_index)];
  if (f.categorical != categorical) {
    throw usage_error(
        fmt::format("{}: model feature {} is {}, but the data has it ({}) as {} (set its type in the column "
                    "description: {})",
                    data.path, flat_index, categorical ? "categorical" : "numeric", describe(f),
                    categorical ? "numeric" : "categorical", categorical ? "Categ" : "Num"));
  }
  return f;
}

uint32_t hash_of(const std::string& text) {
  uint32_t hash = 0;
  check(cbg_cat_hash_string(text.data(), text.size(), &hash), "cbg_cat_hash_string");
  return hash;
}

}  // namespace

void check_feature_roles(const cbg_model_t* model, const loaded_dataset& data) {
  const cbg_model_info_t info = model_info(model);
  const auto available = static_cast<int64_t>(data.features.size());
  if (available < info.n_flat_features) {
    throw usage_error(
        fmt::format("{}: the data has {} feature column{}, but the model needs {} (check the column "
                    "description and the delimiter)",
                    data.path, available, available == 1 ? "" : "s", info.n_flat_features));
  }
  for (const int64_t j : float_feature_columns(model)) (void)feature_at(data, j, false);
  for (const int64_t j : cat_feature_columns(model)) (void)feature_at(data, j, true);
}

model_input make_model_input(const cbg_model_t* model, const loaded_dataset& data) {
  check_feature_roles(model, data);
  const cbg_model_info_t info = model_info(model);
  model_input in;
  in.rows = data.rows;
  in.n_float_features = info.n_float_features;
  in.n_cat_features = info.n_cat_features;
  const auto rows = static_cast<std::size_t>(data.rows);

  const std::vector<int64_t> float_columns = float_feature_columns(model);
  in.floats.resize(rows * float_columns.size());
  for (std::size_t j = 0; j < float_columns.size(); ++j) {
    const feature_column& f = feature_at(data, float_columns[j], false);
    for (std::size_t r = 0; r < rows; ++r) in.floats[r * float_columns.size() + j] = f.values[r];
  }

  const std::vector<int64_t> cat_columns = cat_feature_columns(model);
  in.hashes.resize(rows * cat_columns.size());
  for (std::size_t j = 0; j < cat_columns.size(); ++j) {
    const feature_column& f = feature_at(data, cat_columns[j], true);
    std::vector<uint32_t> hash_of_code;  // each distinct value is hashed once
    for (const std::string& text : f.categories) hash_of_code.push_back(hash_of(text));
    for (std::size_t r = 0; r < rows; ++r) {
      in.hashes[r * cat_columns.size() + j] = hash_of_code[static_cast<std::size_t>(f.codes[r])];
    }
  }
  return in;
}

cbg_model_predict_host_desc_t predict_desc(const model_input& input, int32_t prediction_type) {
  cbg_model_predict_host_desc_t desc;
  check(cbg_model_predict_host_desc_init(&desc), "cbg_model_predict_host_desc_init");
  desc.n_rows = input.rows;
  if (input.n_float_features > 0) {
    desc.float_features = input.floats.data();
    desc.float_row_stride = input.n_float_features;
  }
  if (input.n_cat_features > 0) {
    desc.cat_hashes = input.hashes.data();
    desc.cat_row_stride = input.n_cat_features;
  }
  desc.prediction_type = prediction_type;
  return desc;
}

}  // namespace cbgpu_bench
