// SPDX-License-Identifier: Apache-2.0
#include "calc_command.hpp"

#include <cstdio>
#include <memory>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cuda_device.hpp"
#include "dataset_pool.hpp"
#include "dsv_reader.hpp"
#include "errors.hpp"
#include "exit_codes.hpp"
#include "library.hpp"
#include "managed_tensor.hpp"
#include "model.hpp"
#include "model_input.hpp"
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

std::string check_prediction_types(const std::string& value) {
  for (const std::string& name : names_of(value)) {
    if (!is_prediction_type(name)) return fmt::format("'{}' is not a prediction type", name);
  }
  return {};
}

// --output-columns: SampleId (first only), Label and prediction types.
std::string check_output_columns(const std::string& value) {
  const std::vector<std::string> names = names_of(value);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "SampleId" && i == 0) continue;
    if (names[i] == "Label" || is_prediction_type(names[i])) continue;
    return fmt::format("'{}': output columns are SampleId (first), Label and prediction types", names[i]);
  }
  return {};
}

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

void predict_on_host(const cbg_model_t* model, const loaded_dataset& data, std::vector<prediction_block>& blocks) {
  const model_input input = make_model_input(model, data);
  for (prediction_block& b : blocks) {
    const cbg_model_predict_host_desc_t desc = predict_desc(input, prediction_type(b.type_name));
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
void predict_on_gpu(cbg_context_t* ctx, const cbg_model_t* model, const loaded_dataset& data,
                    std::vector<prediction_block>& blocks) {
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
  fmt::print("calc: GPU evaluator (cbg_predict_to_device): features to the device {:.1f} ms, predict {:.3f} ms "
             "({:.3g} rows/s), results back {:.1f} ms\n",
             load_ms, predict_ms, predict_ms > 0 ? 1e3 * static_cast<double>(data.rows * static_cast<int64_t>(
                                                                                  blocks.size())) / predict_ms
                                                   : 0.0,
             copy_ms);
}

}  // namespace

CLI::App* add_calc_command(CLI::App& app, calc_options& o) {
  CLI::App* cmd = app.add_subcommand(
      "calc", "Apply a model (catboost calc flags): the GPU evaluator when a GPU is visible, else the host");
  cmd->add_option("-m,--model-file,--model-path", o.model_file, "Model file")
      ->capture_default_str();
  cmd->add_option("--model-format", o.model_format, "CatboostBinary or Json")
      ->capture_default_str();
  cmd->add_option("--input-path", o.input_path, "Data to apply the model to")->required();
  add_data_options(cmd, o.data);
  cmd->add_option("-o,--output-path", o.output_path, "Where predictions go")
      ->capture_default_str();
  cmd->add_option("--prediction-type", o.prediction_type, "Comma-separated prediction types")
      ->capture_default_str()
      ->check(CLI::Validator([](std::string& v) { return check_prediction_types(v); }, "",
                             "prediction type"));
  cmd->add_option("--output-columns", o.output_columns,
                  "Comma-separated output columns: SampleId (first), Label, prediction types; "
                  "replaces --prediction-type")
      ->check(CLI::Validator([](std::string& v) { return check_output_columns(v); }, "", "output columns"));
  cmd->add_option("--task-type", o.task_type, "CPU (host evaluator) or GPU; default: a GPU if visible")
      ->check(CLI::Validator([](std::string& v) { return check_task_type(v); }, "", "task type"));
  cmd->add_option("--devices", o.devices, "GPU ordinals: 0, 0:1 or 0-3 (the first is used)")
      ->check(CLI::Validator([](std::string& v) { return check_devices(v); }, "", "devices"));
  cmd->add_option("-T,--thread-count", o.thread_count, "Accepted for CatBoost's sake (no effect)");
  cmd->footer(exit_codes_help);
  return cmd;
}

int run_calc(const calc_options& o) {
  const model_handle model = load_model(o.model_file, model_format(o.model_format));
  const cbg_model_info_t info = model_info(model.get());
  const loaded_dataset data = read_dsv(o.input_path, o.data.format(), o.data.read_column_description());
  check_feature_roles(model.get(), data);

  // The columns asked for: --output-columns, else SampleId and --prediction-type.
  std::vector<std::string> columns = names_of(o.output_columns.empty() ? "SampleId," + o.prediction_type
                                                                       : o.output_columns);
  const bool sample_id = !columns.empty() && columns.front() == "SampleId";
  std::vector<prediction_block> blocks;
  for (std::size_t i = sample_id ? 1 : 0; i < columns.size(); ++i) {
    if (columns[i] == "Label") {
      if (data.label_dims == 0) throw usage_error("--output-columns Label: the data has no Label column");
      prediction_block label;
      label.type_name = "Label";
      label.columns = data.label_dims;
      label.values.assign(data.label.begin(), data.label.end());
      blocks.push_back(std::move(label));
    } else {
      blocks.push_back(block_for(model.get(), columns[i], data.rows));
    }
  }
  std::vector<prediction_block> predictions;
  for (prediction_block& b : blocks) {
    if (b.type_name != "Label") predictions.push_back(std::move(b));
  }

  const int32_t visible = device_count();
  const context_handle ctx = make_context(device_from(o.task_type, o.devices), 0);
  const int32_t device = context_device(ctx.get());
  fmt::print("{}\n", device_line(device, visible, "--task-type CPU"));
  if (device >= 0) {
    predict_on_gpu(ctx.get(), model.get(), data, predictions);
  } else {
    const stopwatch t;
    predict_on_host(model.get(), data, predictions);
    fmt::print("calc: host evaluator (cbg_model_predict_host): {:.1f} ms\n", t.elapsed_ms());
  }
  // Back into the asked order.
  for (std::size_t i = 0, p = 0; i < blocks.size(); ++i) {
    if (blocks[i].type_name != "Label") blocks[i] = std::move(predictions[p++]);
  }
  write_prediction_table(o.output_path, data.rows, blocks, class_names(model.get()), sample_id);
  fmt::print("model: {} trees, {} float and {} categorical features, approx dimension {}\n",
             info.n_trees, info.n_float_features, info.n_cat_features, info.approx_dimension);
  fmt::print("wrote {} rows to {}\n", data.rows, o.output_path);
  return exit_ok;
}

}  // namespace cbgpu_bench
