// SPDX-License-Identifier: Apache-2.0
#include "model.hpp"

#include <array>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "cbg/io/atomic_file.hpp"
#include "errors.hpp"
#include "library.hpp"

namespace cbgpu_bench {

namespace {

constexpr std::array<std::pair<std::string_view, int32_t>, 7> prediction_types{{
    {"RawFormulaVal", CBG_PREDICTION_RAW_FORMULA_VAL},
    {"Probability", CBG_PREDICTION_PROBABILITY},
    {"LogProbability", CBG_PREDICTION_LOG_PROBABILITY},
    {"Class", CBG_PREDICTION_CLASS},
    {"Exponent", CBG_PREDICTION_EXPONENT},
    {"RMSEWithUncertainty", CBG_PREDICTION_RMSE_WITH_UNCERTAINTY},
    {"MultiProbability", CBG_PREDICTION_MULTI_PROBABILITY},
}};

}  // namespace

model_handle load_model(const std::string& path, int32_t format) {
  cbg_model_t* model = nullptr;
  check(cbg_model_load_file(path.c_str(), format, &model), fmt::format("cannot load model '{}'", path));
  return model_handle(model);
}

int32_t model_format(const std::string& name) {
  if (name == "CatboostBinary" || name == "cbm") return CBG_MODEL_FORMAT_CBM;
  if (name == "Json" || name == "json") return CBG_MODEL_FORMAT_JSON;
  throw usage_error(fmt::format("--model-format: '{}' is not supported (CatboostBinary, Json)", name));
}

void save_models(cbg_model_t* model, const std::vector<std::pair<std::string, int32_t>>& outputs) {
  std::vector<std::string> bytes;
  for (const auto& output : outputs) {
    const void* data = nullptr;
    std::size_t size = 0;
    check(cbg_model_save_buffer(model, output.second, &data, &size), "cbg_model_save_buffer");
    bytes.emplace_back(static_cast<const char*>(data), size);
  }
  std::vector<std::pair<std::string, std::string_view>> files;
  for (std::size_t i = 0; i < outputs.size(); ++i) files.emplace_back(outputs[i].first, bytes[i]);
  try {
    cbg::io::write_files_atomically(files);
  } catch (const cbg::io::file_error& e) {
    throw usage_error(fmt::format("--model-file: {}", e.what()));
  }
}

cbg_model_info_t model_info(const cbg_model_t* model) {
  cbg_model_info_t info{};
  info.struct_size = sizeof info;
  check(cbg_model_info(model, &info), "cbg_model_info");
  return info;
}

std::vector<int64_t> float_feature_columns(const cbg_model_t* model) {
  std::vector<int64_t> columns(static_cast<std::size_t>(model_info(model).n_float_features));
  for (std::size_t j = 0; j < columns.size(); ++j) {
    check(cbg_model_float_feature_index(model, static_cast<int64_t>(j), &columns[j]), "cbg_model_float_feature_index");
  }
  return columns;
}

std::vector<int64_t> cat_feature_columns(const cbg_model_t* model) {
  std::vector<int64_t> columns(static_cast<std::size_t>(model_info(model).n_cat_features));
  for (std::size_t j = 0; j < columns.size(); ++j) {
    check(cbg_model_cat_feature_index(model, static_cast<int64_t>(j), &columns[j]), "cbg_model_cat_feature_index");
  }
  return columns;
}

std::vector<std::string> class_names(const cbg_model_t* model) {
  std::vector<std::string> names;
  const int64_t n = model_info(model).n_class_names;
  for (int64_t j = 0; j < n; ++j) {
    const char* name = nullptr;
    check(cbg_model_class_name(model, j, &name), "cbg_model_class_name");
    names.emplace_back(name);
  }
  return names;
}

int32_t prediction_type(const std::string& name) {
  for (const auto& [type_name, type] : prediction_types) {
    if (type_name == name) return type;
  }
  throw usage_error(
      fmt::format("'{}' is not a prediction type (RawFormulaVal, Probability, Class, Exponent, "
                  "LogProbability, MultiProbability, RMSEWithUncertainty)",
                  name));
}

int64_t prediction_columns(const cbg_model_t* model, int32_t type) {
  int64_t columns = 0;
  check(cbg_model_prediction_columns(model, type, &columns), "cbg_model_prediction_columns");
  return columns;
}

}  // namespace cbgpu_bench
