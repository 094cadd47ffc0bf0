// SPDX-License-Identifier: Apache-2.0
#include "calc_command.hpp"

#include <array>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "errors.hpp"
#include "exit_codes.hpp"
#include "text.hpp"

namespace cbgpu_bench {

namespace {

constexpr std::array<std::string_view, 6> prediction_types{
    "RawFormulaVal", "Probability", "Class", "Exponent", "LogProbability", "RMSEWithUncertainty"};

// CatBoost takes a comma-separated list ("Probability,Class").
std::string check_prediction_types(const std::string& value) {
  for (std::string_view t : split(value, ',')) {
    bool known = false;
    for (std::string_view p : prediction_types) known = known || p == trim(t);
    if (!known) {
      return fmt::format("'{}' is not a prediction type (RawFormulaVal, Probability, Class, "
                         "Exponent, LogProbability, RMSEWithUncertainty)",
                         t);
    }
  }
  return {};
}

}  // namespace

CLI::App* add_calc_command(CLI::App& app, calc_options& o) {
  CLI::App* cmd = app.add_subcommand(
      "calc", "Apply a model (catboost calc flags); exits 3: no model files yet");
  cmd->add_option("-m,--model-file", o.model_file, "Model file")->capture_default_str();
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
  throw not_implemented_error(fmt::format(
      "model files are not implemented yet (issue #3); the GPU evaluator is issue #6: '{}' was "
      "not read and '{}' was not written",
      o.model_file, o.output_path));
}

}  // namespace cbgpu_bench
