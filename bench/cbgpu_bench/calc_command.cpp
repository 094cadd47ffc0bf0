// SPDX-License-Identifier: Apache-2.0
#include "calc_command.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <set>
#include <memory>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "column_description.hpp"
#include "cuda_device.hpp"
#include "dataset_pool.hpp"
#include "dsv_reader.hpp"
#include "errors.hpp"
#include "exit_codes.hpp"
#include "library.hpp"
#include "managed_tensor.hpp"
#include "model.hpp"
#include "model_input.hpp"
#include "output_file.hpp"
#include "prediction_table.hpp"
#include "text.hpp"
#include "timer.hpp"

namespace cbgpu_bench {

namespace {

// CatBoost takes a comma-separated list ("Probability,Class").
std::vector<std::string> names_of(const std::string& value) {
  std::vector<std::string> names;
  for (std::string_view t : split(value, ',')) names.emplace_back(trim(t));
  return names;
}

bool is_prediction_type(const std::string& name) {
  try {
    (void)prediction_type(name);
    return true;
  } catch (const usage_error&) {
    return false;
  }
}

// CatBoost's prediction types of virtual ensembles (uncertainty), which cbgpu does not implement.
bool is_uncertainty_type(const std::string& name) { return name == "VirtEnsembles" || name == "TotalUncertainty"; }

void refuse_uncertainty_type(const std::string& name) {
  if (is_uncertainty_type(name)) {
    throw not_implemented_error(
        fmt::format("prediction type {} (virtual ensembles) is not implemented in cbgpu", name));
  }
}

std::string check_prediction_types(const std::string& value) {
  for (const std::string& name : names_of(value)) {
    if (!is_prediction_type(name) && !is_uncertainty_type(name)) {
      return fmt::format("'{}' is not a prediction type", name);
    }
  }
  return {};
}

struct tree_range {
  int64_t begin = 0;
  int64_t end = 0;  // 0: all trees
};

prediction_block block_for(const cbg_model_t* model, const std::string& type_name, int64_t rows) {
  prediction_block b;
  b.type_name = type_name;
  const int32_t type = prediction_type(type_name);
  b.is_class = type == CBG_PREDICTION_CLASS;
  b.columns = prediction_columns(model, type);
  b.values.resize(static_cast<std::size_t>(rows * b.columns));
  return b;
}

// ---- host: cbg_model_predict_host -------------------------------------------------------------------

void predict_on_host(const cbg_model_t* model, const loaded_dataset& data, const tree_range& trees,
                     std::vector<prediction_block>& blocks) {
  const model_input input = make_model_input(model, data);
  for (prediction_block& b : blocks) {
    cbg_model_predict_host_desc_t desc = predict_desc(input, prediction_type(b.type_name));
    desc.tree_begin = trees.begin;
    desc.tree_end = trees.end;
    check(cbg_model_predict_host(model, &desc, b.values.data(), b.values.size()),
          fmt::format("cbg_model_predict_host ({})", b.type_name));
  }
}

// ---- GPU: a pool of the model's features in device memory, cbg_predict_to_device ---------------------

// The pool of the model's flat features in device memory: numeric columns as float32, categorical
// ones as dictionary string columns (hashed on the device from the file's text, as CatBoost hashes it).
pool_handle device_pool(cbg_context_t* ctx, const cbg_model_t* model, const loaded_dataset& data, int32_t device) {
  const int64_t n = model_info(model).n_flat_features;
  feature_tensors features;
  for (int64_t j = 0; j < n; ++j) {
    const feature_column& f = data.features[static_cast<std::size_t>(j)];
    if (f.categorical) {
      features.add_categorical(f, device);
    } else {
      features.add_numeric(device_tensor(f.values, {static_cast<int64_t>(f.values.size())}, device));
    }
  }
  cbg_pool_desc_t desc;
  check(cbg_pool_desc_init(&desc), "cbg_pool_desc_init");
  features.give_to(desc);
  cbg_pool_t* pool = nullptr;
  check(cbg_pool_from_dlpack(ctx, &desc, &pool), "cbg_pool_from_dlpack");
  return pool_handle(pool);
}

// Evaluates every block on the GPU.
void predict_on_gpu(cbg_context_t* ctx, const cbg_model_t* model, const loaded_dataset& data, const tree_range& trees,
                    std::vector<prediction_block>& blocks, std::FILE* info) {
  const int32_t device = context_device(ctx);
  const stopwatch load;
  const pool_handle pool = device_pool(ctx, model, data, device);
  const double load_ms = load.elapsed_ms();
  double predict_ms = 0;
  double copy_ms = 0;
  for (prediction_block& b : blocks) {
    cbg_predict_desc_t desc;
    check(cbg_predict_desc_init(&desc), "cbg_predict_desc_init");
    desc.prediction_type = prediction_type(b.type_name);
    desc.tree_begin = trees.begin;
    desc.tree_end = trees.end;
    int64_t shape[2] = {data.rows, b.columns};
    const std::shared_ptr<void> out = device_allocate(b.values.size() * sizeof(double), device);
    dl::DLTensor device_out = dl::float64_matrix(out.get(), shape, dl::DLDevice{dl::kDLCUDA, device});
    dl::DLTensor host_out = dl::float64_matrix(b.values.data(), shape, dl::DLDevice{dl::kDLCPU, 0});
    const cbg_tensor_ref_t dst{CBG_TENSOR_DLTENSOR, &host_out};
    const cbg_tensor_ref_t src{CBG_TENSOR_DLTENSOR, &device_out};
    const stopwatch predict;
    check(cbg_predict_to_device(model, pool.get(), &desc, &src, nullptr),
          fmt::format("cbg_predict_to_device ({})", b.type_name));
    check(cbg_context_sync(ctx), "cbg_context_sync");
    predict_ms += predict.elapsed_ms();
    const stopwatch copy;
    check(cbg_tensor_copy(ctx, &dst, &src), "cbg_tensor_copy");
    copy_ms += copy.elapsed_ms();
  }
  fmt::print(
      info,
      "calc: GPU evaluator (cbg_predict_to_device): features to the device {:.1f} ms, predict {:.3f} ms "
      "({:.3g} rows/s), results back {:.1f} ms\n",
      load_ms, predict_ms,
      predict_ms > 0 ? 1e3 * static_cast<double>(data.rows * static_cast<int64_t>(blocks.size())) / predict_ms : 0.0,
      copy_ms);
}

// The text of a column CatBoost's --output-columns can name from the input: SampleId (DocId, the row
// number when the data has none), Label (Target), GroupId (QueryId), SubgroupId, Timestamp, Weight.
std::optional<std::vector<std::string>> data_column(const std::string& name, const loaded_dataset& data) {
  const auto numbers = [](const std::vector<float>& v) {
    std::vector<std::string> out;
    out.reserve(v.size());
    for (const float x : v) out.push_back(fmt::format("{}", x));
    return out;
  };
  const auto require = [&](const std::vector<std::string>& column, const char* cd_type) {
    if (column.empty()) {
      throw usage_error(fmt::format("--output-columns {}: the data has no {} column (see the .cd)", name, cd_type));
    }
    return column;
  };
  if (name == "SampleId" || name == "DocId") {
    if (!data.sample_ids.empty()) return data.sample_ids;
    std::vector<std::string> ids;
    for (int64_t r = 0; r < data.rows; ++r) ids.push_back(std::to_string(r));
    return ids;
  }
  if (name == "Label" || name == "Target") {
    if (data.label_dims != 1) {
      throw usage_error(
          fmt::format("--output-columns {}: the data has {} Label columns (one expected)", name, data.label_dims));
    }
    return data.label_text;
  }
  if (name == "GroupId" || name == "QueryId") return require(data.group_ids, "GroupId");
  if (name == "SubgroupId") return require(data.subgroup_ids, "SubgroupId");
  if (name == "Timestamp") return require(data.timestamps, "Timestamp");
  if (name == "Weight") {
    if (!data.has_weight) throw usage_error("--output-columns Weight: the data has no Weight column (see the .cd)");
    return numbers(data.weight);
  }
  return std::nullopt;
}

// One asked output column: a prediction type, a column of the data by role, "#N[:header]" (file column N)
// or a column the .cd names.
struct output_column {
  std::string name;
  bool prediction = false;
  int64_t file_column = -1;  // "#N" or a .cd name
  std::string header;
};

std::vector<output_column> parse_output_columns(const std::vector<std::string>& names,
                                                const std::optional<column_description>& cd) {
  static const std::set<std::string> roles{"SampleId", "DocId",      "Label",     "Target", "GroupId",
                                           "QueryId",  "SubgroupId", "Timestamp", "Weight"};
  std::vector<output_column> out;
  bool any_prediction = false;
  for (const std::string& name : names) {
    output_column c;
    c.name = c.header = name;
    refuse_uncertainty_type(name);
    if (is_prediction_type(name)) {
      c.prediction = any_prediction = true;
    } else if (roles.contains(name)) {
    } else if (!name.empty() && name.front() == '#') {
      const std::size_t colon = name.find(':');
      const std::string index = name.substr(1, colon == std::string::npos ? std::string::npos : colon - 1);
      const auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), c.file_column);
      if (ec != std::errc() || end != index.data() + index.size() || index.empty() || c.file_column < 0) {
        throw usage_error(fmt::format("--output-columns: '{}' is not #<column index>[:<name>]", name));
      }
      if (colon != std::string::npos) c.header = name.substr(colon + 1);
    } else if (cd && column_named(*cd, name) >= 0) {
      c.file_column = column_named(*cd, name);
    } else {
      throw usage_error(
          fmt::format("--output-columns: '{}' is neither a prediction type, a column type (SampleId, Label, GroupId, "
                      "SubgroupId, Timestamp, Weight), #<column index> nor a column name of the .cd",
                      name));
    }
    out.push_back(std::move(c));
  }
  if (!any_prediction) throw usage_error("--output-columns: name at least one prediction type");
  return out;
}

}  // namespace

CLI::App* add_calc_command(CLI::App& app, calc_options& o) {
  CLI::App* cmd = app.add_subcommand(
      "calc", "Apply a model (catboost calc flags): the GPU evaluator when a GPU is visible, else the host");
  cmd->add_option("-m,--model-file,--model-path", o.model_file, "Model file")->capture_default_str();
  cmd->add_option("--model-format", o.model_format, "CatboostBinary or Json")->capture_default_str();
  cmd->add_option("--input-path", o.input_path, "Data to apply the model to")->required();
  add_data_options(cmd, o.data);
  cmd->add_option("-o,--output-path", o.output_path, "Where predictions go")->capture_default_str();
  cmd->add_option("--prediction-type", o.prediction_type, "Comma-separated prediction types")
      ->capture_default_str()
      ->check(CLI::Validator([](std::string& v) { return check_prediction_types(v); }, "", "prediction type"));
  cmd->add_option("--output-columns", o.output_columns,
                  "Comma-separated output columns: prediction types, SampleId (DocId), Label (Target), GroupId, "
                  "SubgroupId, Timestamp, Weight, #<column index>[:<name>] and .cd column names; replaces "
                  "--prediction-type");
  cmd->add_option("--ntree-start", o.ntree_start, "First tree to apply")->check(CLI::NonNegativeNumber);
  cmd->add_option("--ntree-end", o.ntree_end, "One past the last tree to apply (0: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--eval-period", o.eval_period,
                  "Predictions of the first N, 2N, ... trees from --ntree-start, as columns <type>:TreesCount=[a,b)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--task-type", o.task_type, "CPU (host evaluator) or GPU; default: a GPU if visible")
      ->check(CLI::Validator([](std::string& v) { return check_task_type(v); }, "", "task type"));
  cmd->add_option("--devices", o.devices, "GPU ordinals: 0, 0:1 or 0-3 (the first is used)")
      ->check(CLI::Validator([](std::string& v) { return check_devices(v); }, "", "devices"));
  cmd->add_option("-T,--thread-count", o.thread_count, "Accepted for CatBoost's sake (no effect)");
  cmd->footer(exit_codes_help);
  return cmd;
}

int run_calc(const calc_options& o) {
  // Before the model is read: an unimplemented request is named as such whatever else is wrong.
  for (const std::string& name : names_of(o.output_columns.empty() ? o.prediction_type : o.output_columns)) {
    refuse_uncertainty_type(name);
  }
  const model_handle model = load_model(o.model_file, model_format(o.model_format));
  apply_model(model.get(), o);
  return exit_ok;
}

void apply_model(const cbg_model_t* model, const calc_options& o) {
  // With the predictions on the standard output, what the tool says goes to stderr.
  std::FILE* info = is_stdout(o.output_path) ? stderr : stdout;
  const cbg_model_info_t model_facts = model_info(model);
  const std::optional<column_description> cd = o.data.read_column_description();

  // The columns asked for: --output-columns, else SampleId and --prediction-type.
  const std::vector<output_column> columns =
      parse_output_columns(names_of(o.output_columns.empty() ? "SampleId," + o.prediction_type : o.output_columns), cd);
  dsv_format format = o.data.format();
  for (const output_column& c : columns) {
    if (c.file_column >= 0) format.keep_columns.push_back(c.file_column);
  }
  loaded_dataset data = read_dsv(o.input_path, format, cd);
  check_feature_roles(model, data);

  // The tree ranges: [start, end), or with --eval-period N the growing ranges [start, start + N),
  // [start, start + 2N), ... up to end, each a set of columns named ":TreesCount=[a,b)" as CatBoost names them.
  const int64_t n_trees = model_facts.n_trees;
  const int64_t end = o.ntree_end == 0 ? n_trees : std::min(o.ntree_end, n_trees);
  if (o.ntree_start >= end) {
    throw usage_error(fmt::format("--ntree-start {} leaves no tree to apply (the model has {}, --ntree-end {})",
                                  o.ntree_start, n_trees, o.ntree_end));
  }
  std::vector<tree_range> ranges;
  std::vector<std::string> range_names;
  if (o.eval_period > 0 && o.eval_period < end - o.ntree_start) {
    for (int64_t k = 0; o.ntree_start + k * o.eval_period < end; ++k) {
      const int64_t stop = std::min(o.ntree_start + (k + 1) * o.eval_period, end);
      ranges.push_back({o.ntree_start, stop});
      range_names.push_back(
          fmt::format(":TreesCount=[{},{})", k * o.eval_period, std::min(k * o.eval_period + o.eval_period, end)));
    }
  } else {
    ranges.push_back({o.ntree_start, end});
    range_names.emplace_back();
  }

  const int32_t visible = device_count();
  const context_handle ctx = make_context(device_from(o.task_type, o.devices), 0);
  const int32_t device = context_device(ctx.get());
  fmt::print(info, "{}\n", device_line(device, visible, "--task-type CPU"));
  std::vector<std::vector<prediction_block>> predictions(ranges.size());  // per range, per prediction column
  const stopwatch t;
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    for (const output_column& c : columns) {
      if (c.prediction) predictions[k].push_back(block_for(model, c.name, data.rows));
    }
    if (device >= 0) {
      predict_on_gpu(ctx.get(), model, data, ranges[k], predictions[k], info);
    } else {
      predict_on_host(model, data, ranges[k], predictions[k]);
    }
    for (prediction_block& b : predictions[k]) {
      // A binary classifier's Probability is one column, the probability of class 1, as CatBoost writes it.
      if (b.type_name == "Probability" && model_facts.approx_dimension == 1 && b.columns == 2) {
        std::vector<double> p(static_cast<std::size_t>(data.rows));
        for (int64_t r = 0; r < data.rows; ++r)
          p[static_cast<std::size_t>(r)] = b.values[static_cast<std::size_t>(2 * r + 1)];
        b.values = std::move(p);
        b.columns = 1;
      }
      b.suffix = range_names[k];
    }
  }
  if (device < 0) fmt::print(info, "calc: host evaluator (cbg_model_predict_host): {:.1f} ms\n", t.elapsed_ms());
  // The blocks in the asked order; with several tree ranges, each prediction column once per range.
  std::vector<prediction_block> blocks;
  std::size_t next_prediction = 0;
  for (const output_column& c : columns) {
    if (c.prediction) {
      for (auto& range : predictions) blocks.push_back(std::move(range[next_prediction]));
      ++next_prediction;
    } else if (c.file_column >= 0) {
      blocks.push_back(text_block(c.header, data.column_text[c.file_column]));
    } else {
      blocks.push_back(text_block(c.header, *data_column(c.name, data)));
    }
  }
  write_prediction_table(o.output_path, data.rows, blocks, class_names(model));
  fmt::print(info, "model: {} trees, {} float and {} categorical features, approx dimension {}\n", model_facts.n_trees,
             model_facts.n_float_features, model_facts.n_cat_features, model_facts.approx_dimension);
  fmt::print(info, "wrote {} rows to {}\n", data.rows, o.output_path);
}

}  // namespace cbgpu_bench
