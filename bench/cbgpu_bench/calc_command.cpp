// SPDX-License-Identifier: Apache-2.0
#include "calc_command.hpp"

#include <optional>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "column_description.hpp"
#include "dsv_reader.hpp"
#include "errors.hpp"
#include "exit_codes.hpp"
#include "library.hpp"
#include "model.hpp"
#include "model_input.hpp"
#include "prediction_table.hpp"
#include "text.hpp"

namespace cbgpu_bench {

namespace {

// CatBoost takes a comma-separated list ("Probability,Class").
std::vector<std::string> prediction_type_names(const std::string& value) {
  std::vector<std::string> names;
  for (std::string_view t : split(value, ',')) names.emplace_back(trim(t));
  return names;
}

std::string check_prediction_types(const std::string& value) {
  try {
    for (const std::string& name : prediction_type_names(value)) (void)prediction_type(name);
  } catch (const usage_error& e) {
    return e.what();
  }
  return {};
}

prediction_block predict(const cbg_model_t* model, const model_input& input,
                         const std::string& type_name) {
  const int32_t type = prediction_type(type_name);
  prediction_block b;
  b.type_name = type_name;
  b.is_class = type == CBG_PREDICTION_CLASS;
  b.columns = prediction_columns(model, type);
  b.values.resize(static_cast<std::size_t>(input.rows * b.columns));
  const cbg_model_predict_host_desc_t desc = predict_desc(input, type);
  check(cbg_model_predict_host(model, &desc, b.values.data(), b.values.size()),
        fmt::format("cbg_model_predict_host ({})", type_name));
  return b;
}

}  // namespace

CLI::App* add_calc_command(CLI::App& app, calc_options& o) {
  CLI::App* cmd = app.add_subcommand(
      "calc", "Apply a model (catboost calc flags) on the host reference path");
  cmd->add_option("-m,--model-file,--model-path", o.model_file, "Model file")
      ->capture_default_str();
  cmd->add_option("--model-format", o.model_format, "CatboostBinary or Json")
      ->capture_default_str();
  cmd->add_option("--input-path", o.input_path, "Data to apply the model to")->required();
  cmd->add_option("--cd,--column-description", o.column_description, "Column description file");
  cmd->add_option("-o,--output-path", o.output_path, "Where predictions go")
      ->capture_default_str();
  cmd->add_option("--prediction-type", o.prediction_type, "Comma-separated prediction types")
      ->capture_default_str()
      ->check(CLI::Validator([](std::string& v) { return check_prediction_types(v); }, "",
                             "prediction type"));
  cmd->add_option("--delimiter", o.delimiter, "Column delimiter")->capture_default_str();
  cmd->add_flag("--has-header", o.has_header, "The first line holds column names");
  cmd->footer(exit_codes_help);
  return cmd;
}

int run_calc(const calc_options& o) {
  const model_handle model = load_model(o.model_file, model_format(o.model_format));
  const cbg_model_info_t info = model_info(model.get());

  std::optional<column_description> cd;
  if (!o.column_description.empty()) cd = read_column_description(o.column_description);
  const dsv_format format{parse_delimiter(o.delimiter), o.has_header};
  const loaded_dataset data = read_dsv(o.input_path, format, cd);
  const model_input input = make_model_input(model.get(), data);

  fmt::print(stderr,
             "calc: evaluating on the host reference path (cbg_model_predict_host); the GPU "
             "evaluator is not implemented yet (issue #6)\n");
  std::vector<prediction_block> blocks;
  for (const std::string& name : prediction_type_names(o.prediction_type)) {
    blocks.push_back(predict(model.get(), input, name));
  }
  write_prediction_table(o.output_path, data.rows, blocks, class_names(model.get()));
  fmt::print("model: {} trees, {} float and {} categorical features, approx dimension {}\n",
             info.n_trees, info.n_float_features, info.n_cat_features, info.approx_dimension);
  fmt::print("wrote {} rows of {} to {}\n", data.rows, o.prediction_type, o.output_path);
  return exit_ok;
}

}  // namespace cbgpu_bench
