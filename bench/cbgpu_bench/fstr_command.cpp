// SPDX-License-Identifier: Apache-2.0
#include "fstr_command.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cuda_device.hpp"
#include "dataset_pool.hpp"
#include "dsv_reader.hpp"
#include "errors.hpp"
#include "exit_codes.hpp"
#include "library.hpp"
#include "model.hpp"
#include "model_input.hpp"

namespace cbgpu_bench {

namespace {

// CatBoost's --fstr-type names; FeatureImportance is PredictionValuesChange for the losses cbgpu has.
int32_t fstr_type_of(const std::string& name) {
  if (name == "PredictionValuesChange" || name == "FeatureImportance") return CBG_FSTR_PREDICTION_VALUES_CHANGE;
  if (name == "LossFunctionChange") return CBG_FSTR_LOSS_FUNCTION_CHANGE;
  if (name == "ShapValues") return CBG_FSTR_SHAP_VALUES;
  if (name == "Interaction") return CBG_FSTR_INTERACTION;
  if (name == "InternalFeatureImportance" || name == "InternalInteraction" || name == "ShapInteractionValues" ||
      name == "PredictionDiff" || name == "SageValues") {
    throw not_implemented_error(fmt::format("--fstr-type {} is not implemented", name));
  }
  throw usage_error(fmt::format("--fstr-type: '{}' is not a feature importance type", name));
}

std::string check_fstr_type(const std::string& value) {
  try {
    (void)fstr_type_of(value);
  } catch (const usage_error& e) {
    return e.what();
  } catch (const not_implemented_error&) {
    // accepted here; run_fstr reports it with exit code 3
  }
  return {};
}

std::vector<double> feature_importance(const cbg_model_t* model, int32_t type, const cbg_pool_t* pool,
                                       std::vector<int64_t>& shape) {
  int64_t dims[3] = {0, 0, 0};
  int32_t ndim = 0;
  check(cbg_model_feature_importance(model, type, pool, nullptr, 0, dims, &ndim), "cbg_model_feature_importance");
  std::size_t n = 1;
  for (int32_t i = 0; i < ndim; ++i) n *= static_cast<std::size_t>(dims[i]);
  std::vector<double> values(n);
  check(cbg_model_feature_importance(model, type, pool, values.data(), values.size(), dims, &ndim),
        "cbg_model_feature_importance");
  shape.assign(dims, dims + ndim);
  return values;
}

// The model's name of flat feature j, else its index (CatBoost's feature description).
std::string feature_description(const cbg_model_t* model, int64_t j) {
  const char* name = nullptr;
  check(cbg_model_feature_name(model, j, &name), "cbg_model_feature_name");
  return name != nullptr && *name != '\0' ? std::string(name) : std::to_string(j);
}

// Per feature, by descending importance; ties by per-type index, categorical features first (the
// order CatBoost lists them in).
void write_regular(std::ostream& out, const cbg_model_t* model, const std::vector<double>& values) {
  struct entry {
    double score;
    int64_t type_index;
    int64_t flat;
  };
  std::vector<entry> entries;
  for (const std::vector<int64_t>& columns : {cat_feature_columns(model), float_feature_columns(model)}) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      entries.push_back({values[static_cast<std::size_t>(columns[i])], static_cast<int64_t>(i), columns[i]});
    }
  }
  std::stable_sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) {
    return a.score != b.score ? a.score > b.score : a.type_index < b.type_index;
  });
  for (const entry& e : entries) out << fmt::format("{}\t{}\n", e.score, feature_description(model, e.flat));
}

}  // namespace

CLI::App* add_fstr_command(CLI::App& app, fstr_options& o) {
  CLI::App* cmd = app.add_subcommand("fstr", "Feature importances of a model (catboost fstr flags and output formats)");
  cmd->add_option("-m,--model-file,--model-path", o.model_file, "Model file")->capture_default_str();
  cmd->add_option("--model-format", o.model_format, "CatboostBinary or Json")->capture_default_str();
  cmd->add_option("--input-path", o.input_path,
                  "Data (needed for LossFunctionChange and ShapValues; for PredictionValuesChange it replaces "
                  "the model's leaf weights by the data's)");
  add_data_options(cmd, o.data);
  cmd->add_option("-o,--output-path", o.output_path, "Where the importances go")->capture_default_str();
  cmd->add_option("--fstr-type", o.fstr_type,
                  "PredictionValuesChange, LossFunctionChange, FeatureImportance, Interaction or ShapValues")
      ->required()
      ->check(CLI::Validator([](std::string& v) { return check_fstr_type(v); }, "", "feature importance type"));
  cmd->add_option("-T,--thread-count", o.thread_count, "Accepted for CatBoost's sake (no effect)");
  cmd->add_option("--verbose", o.verbose, "Accepted for CatBoost's sake (no effect)");
  cmd->footer(exit_codes_help);
  return cmd;
}

int run_fstr(const fstr_options& o) {
  const int32_t type = fstr_type_of(o.fstr_type);
  const model_handle model = load_model(o.model_file, model_format(o.model_format));
  const bool needs_data = type == CBG_FSTR_LOSS_FUNCTION_CHANGE || type == CBG_FSTR_SHAP_VALUES;
  if (needs_data && o.input_path.empty()) {
    throw usage_error(fmt::format("--fstr-type {} needs --input-path", o.fstr_type));
  }
  // The data, read when the type uses it: PredictionValuesChange only when the model stores no leaf
  // weights (as CatBoost), Interaction never.
  context_handle ctx;
  pool_handle pool;
  const auto load_pool = [&]() -> const cbg_pool_t* {
    if (o.input_path.empty()) return nullptr;
    loaded_dataset data = read_dsv(o.input_path, o.data.format(), o.data.read_column_description());
    check_feature_roles(model.get(), data);
    const int32_t visible = device_count();
    ctx = make_context(device_from("", ""), 0);
    const int32_t device = context_device(ctx.get());
    fmt::print("{}\n", device_line(device, visible, "the host evaluator"));
    pool = make_pool(ctx.get(), data, device);
    return pool.get();
  };
  std::vector<int64_t> shape;
  std::vector<double> values;
  if (type == CBG_FSTR_PREDICTION_VALUES_CHANGE) {
    try {
      values = feature_importance(model.get(), type, nullptr, shape);
    } catch (const library_error& e) {
      if (e.status() != CBG_ERR_BAD_DATA || o.input_path.empty()) throw;
      values = feature_importance(model.get(), type, load_pool(), shape);
    }
  } else {
    values = feature_importance(model.get(), type, type == CBG_FSTR_INTERACTION ? nullptr : load_pool(), shape);
  }

  std::ofstream out(o.output_path, std::ios::binary | std::ios::trunc);
  if (!out) throw usage_error(fmt::format("--output-path: cannot write '{}'", o.output_path));
  switch (type) {
    case CBG_FSTR_PREDICTION_VALUES_CHANGE:
    case CBG_FSTR_LOSS_FUNCTION_CHANGE:
      write_regular(out, model.get(), values);
      break;
    case CBG_FSTR_INTERACTION:
      for (int64_t i = 0; i < shape[0]; ++i) {
        const double* row = values.data() + 3 * i;
        out << fmt::format("{}\t{}\t{}\n", row[2], feature_description(model.get(), static_cast<int64_t>(row[0])),
                           feature_description(model.get(), static_cast<int64_t>(row[1])));
      }
      break;
    case CBG_FSTR_SHAP_VALUES: {
      const int64_t width = shape.back();
      for (std::size_t at = 0; at < values.size(); at += static_cast<std::size_t>(width)) {
        for (int64_t j = 0; j < width; ++j) {
          out << fmt::format("{}{}", values[at + static_cast<std::size_t>(j)], j + 1 == width ? '\n' : '\t');
        }
      }
      break;
    }
    default:
      break;
  }
  out.close();
  if (!out) throw usage_error(fmt::format("--output-path: writing '{}' failed", o.output_path));
  fmt::print("fstr: {} written to {}\n", o.fstr_type, o.output_path);
  return exit_ok;
}

}  // namespace cbgpu_bench
