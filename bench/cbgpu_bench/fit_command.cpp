// SPDX-License-Identifier: Apache-2.0
#include "fit_command.hpp"

#include <charconv>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "calc_command.hpp"
#include "cbg/io/json_position.hpp"
#include "cbg/io/read_file.hpp"
#include "class_labels.hpp"
#include "column_description.hpp"
#include "output_file.hpp"
#include "cuda_device.hpp"
#include "dataset_pool.hpp"
#include "dsv_reader.hpp"
#include "errors.hpp"
#include "exit_codes.hpp"
#include "learning_curve.hpp"
#include "library.hpp"
#include "model.hpp"
#include "managed_tensor.hpp"
#include "text.hpp"
#include "timer.hpp"
#include "training_run.hpp"

namespace cbgpu_bench {

namespace {

std::string value_of(const parameter_values& p, const char* key) {
  const auto it = p.find(key);
  return it == p.end() ? std::string() : it->second;
}

// The files --model-format asks for: CatboostBinary to the model file, Json to it as well when it is
// the only format, else to "<model file>.json".
std::vector<std::pair<std::string, int32_t>> model_outputs(const std::string& file, const std::string& formats) {
  std::vector<std::pair<std::string, int32_t>> out;
  const std::vector<std::string_view> names = split(formats, ',');
  for (std::string_view name : names) {
    const int32_t format = model_format(std::string(trim(name)));
    const bool own_name = format == CBG_MODEL_FORMAT_CBM || names.size() == 1;
    out.emplace_back(own_name ? file : file + ".json", format);
  }
  return out;
}

std::string read_text_file(const std::string& path) {
  try {
    return cbg::io::read_file(path);
  } catch (const cbg::io::file_error& e) {
    throw usage_error(fmt::format("--params-file: {}", e.what()));
  }
}

// Progress lines are the library's info records (category cbgpu.train), as CatBoost prints them.
int32_t library_log_level(const parameter_values& p) {
  const auto level = p.find("logging_level");
  if (level == p.end() || level->second == "Verbose") return CBG_LOG_INFO;
  if (level->second == "Silent") return CBG_LOG_OFF;
  if (level->second == "Info") return CBG_LOG_INFO;
  return CBG_LOG_DEBUG;
}

// The parameters the trainer gets: a --params-file's object, then the flags and key=value overrides over it
// (numbers and booleans as JSON numbers and booleans, lists as arrays).
nlohmann::json parameters_object(const parameter_values& values, const std::string& params_file_text,
                                 const std::string& params_file) {
  nlohmann::json out = nlohmann::json::object();
  if (!params_file_text.empty()) {
    try {
      out = nlohmann::json::parse(params_file_text);
    } catch (const nlohmann::json::parse_error& e) {
      throw usage_error(
          fmt::format("--params-file: {}: {}", params_file, cbg::io::describe_json_error(params_file_text, e)));
    } catch (const nlohmann::json::exception& e) {
      throw usage_error(fmt::format("--params-file: {}: {}", params_file, e.what()));
    }
    if (!out.is_object()) {
      throw usage_error(fmt::format("--params-file: {}: the file does not hold a JSON object", params_file));
    }
  }
  for (const auto& [k, v] : values) out[k] = parameter_value(k, v);
  return out;
}

// Ranking and pairwise losses need groups (GroupId) or pairs; the trainer implements none of them.
void refuse_losses_needing_groups(const nlohmann::json& params) {
  const auto it = params.find("loss_function");
  if (it == params.end() || !it->is_string()) return;
  const std::string loss = it->get<std::string>().substr(0, it->get<std::string>().find(':'));
  for (const char* grouped :
       {"YetiRank", "YetiRankPairwise", "PairLogit", "PairLogitPairwise", "QueryRMSE", "QuerySoftMax",
        "QueryCrossEntropy", "StochasticFilter", "StochasticRank", "LambdaMart", "GroupQuantile"}) {
    if (loss == grouped) {
      throw not_implemented_error(
          fmt::format("loss function {} (groups or pairs: GroupId, --learn-pairs) is not implemented in cbgpu", loss));
    }
  }
}

// --learn-err-log / --test-err-log: the trainer writes the logs into the train dir; the flags name a copy.
void copy_error_log(const std::string& train_dir, const char* name, const std::string& to, const char* flag) {
  if (to.empty()) return;
  const std::string from = (std::filesystem::path(train_dir) / name).string();
  std::ifstream in(from, std::ios::binary);
  if (!in) {
    throw usage_error(
        fmt::format("{}: the trainer wrote no {} (is allow_writing_files false, or no test set "
                    "given?)",
                    flag, from));
  }
  std::ostringstream text;
  text << in.rdbuf();
  write_text_file(to, text.str(), flag);
}

// Reads one pool file; prints what was read.
loaded_dataset read(const char* role, const std::string& path, const dsv_format& format,
                    const std::optional<column_description>& cd, bool needs_label) {
  const stopwatch t;
  loaded_dataset data = read_dsv(path, format, cd);
  const double read_ms = t.elapsed_ms();
  if (needs_label && data.label_dims == 0) {
    throw usage_error(fmt::format("{} set '{}' has no Label column (check the column description)", role, data.path));
  }
  const int64_t categorical = data.categorical_count();
  fmt::print(
      "{} set: {}: {} rows, {} columns ({} label, {} numeric, {} categorical{}{}{}), read "
      "in {:.1f} ms\n",
      role, data.path, data.rows, data.n_columns, data.label_dims,
      static_cast<int64_t>(data.features.size()) - categorical, categorical, data.has_weight ? ", 1 weight" : "",
      data.baseline_dims > 0 ? fmt::format(", {} baseline", data.baseline_dims) : "",
      data.auxiliary_columns > 0 ? fmt::format(", {} auxiliary", data.auxiliary_columns) : "", read_ms);
  return data;
}

// Builds the pool of a dataset read before; prints its shape.
pool_handle build(cbg_context_t* ctx, const char* role, loaded_dataset& data) {
  const stopwatch t;
  pool_handle pool = make_pool(ctx, data, context_device(ctx));
  fmt::print("{} pool: {} ({:.1f} ms)\n", role, describe_pool(pool_info(pool.get())), t.elapsed_ms());
  return pool;
}

}  // namespace

CLI::App* add_fit_command(CLI::App& app, fit_options& o) {
  CLI::App* cmd = app.add_subcommand("fit", "Train a model (catboost fit flags) and write it (.cbm)");
  cmd->add_option("-f,--learn-set", o.learn_set, "Learn set (delimiter-separated, optional dsv://)")->required();
  cmd->add_option("-t,--test-set", o.test_set, "Test set");
  add_data_options(cmd, o.data);
  cmd->add_option("-m,--model-file", o.model_file, "Where the model is written (CatBoost's .cbm)")
      ->capture_default_str();
  cmd->add_option("--model-format", o.model_format,
                  "CatboostBinary and/or Json, comma-separated (Json alongside: <model file>.json)")
      ->capture_default_str();
  cmd->add_option("--params-file", o.params_file,
                  "JSON object of CatBoost parameters; flags and key=value override it");
  cmd->add_option("--plot-learning-curve", o.learning_curve_html,
                  "Write every metric per iteration (learn and test) as a self-contained HTML page of charts");
  cmd->add_option("--train-dir", o.train_dir, "Directory for training logs")->capture_default_str();
  cmd->add_option("--eval-file", o.eval_file, "Write the model's predictions on the test set (as calc writes them)");
  cmd->add_option("--prediction-type", o.prediction_type, "--eval-file: comma-separated prediction types")
      ->capture_default_str();
  cmd->add_option("--output-columns", o.output_columns, "--eval-file: the columns, as calc's --output-columns");
  cmd->add_option("--learn-err-log", o.learn_err_log, "Copy of the learn metrics per iteration (learn_error.tsv)");
  cmd->add_option("--test-err-log", o.test_err_log, "Copy of the test metrics per iteration (test_error.tsv)");
  for (const parameter_spec& p : training_parameters()) {
    const std::string help = p.kind == value_kind::not_implemented
                                 ? fmt::format("{} (not implemented in cbgpu: exits 3)", p.help)
                                 : std::string(p.help);
    if (std::string_view(p.key) == "has_time") {
      cmd->add_flag_callback(
          p.flags, [&o, key = p.key] { o.parameters[key] = "true"; }, help);
      continue;
    }
    CLI::Option* opt = cmd->add_option(p.flags, o.parameters[p.key], help)->type_name(p.type_name);
    if (p.check != nullptr) {
      auto check = p.check;
      opt->check(CLI::Validator([check](std::string& v) { return check(v); }, "", p.key));
    }
  }
  cmd->add_option("overrides", o.overrides, "Trailing key=value training parameters")->type_name("KEY=VALUE");
  cmd->footer(exit_codes_help);
  return cmd;
}

int run_fit(fit_options o) {
  // Keep only the flags that were given, then apply the key=value overrides over them.
  std::erase_if(o.parameters, [](const auto& kv) { return kv.second.empty(); });
  const std::vector<std::string> unknown = apply_overrides(o.overrides, o.parameters);
  refuse_not_implemented(o.parameters);
  const dsv_format format = o.data.format();
  const std::vector<std::pair<std::string, int32_t>> outputs = model_outputs(o.model_file, o.model_format);
  nlohmann::json params = parameters_object(
      o.parameters, o.params_file.empty() ? std::string() : read_text_file(o.params_file), o.params_file);
  refuse_losses_needing_groups(params);
  log_library_to_stderr(library_log_level(o.parameters));

  fmt::print("cbgpu-bench {} (libcbgpu {}): fit\n", CBG_VERSION_STRING, cbg_version_string());
  const std::optional<column_description> cd = o.data.read_column_description();

  // Read everything first, so that bad input stops the command before any device work.
  loaded_dataset learn_data = read("learn", o.learn_set, format, cd, true);
  std::optional<loaded_dataset> test_data;
  if (!o.test_set.empty()) test_data = read("test", o.test_set, format, cd, false);
  if (const std::optional<std::vector<std::string>> names = class_names_for(params, learn_data)) {
    apply_class_names(learn_data, *names);
    if (test_data && test_data->label_dims > 0) apply_class_names(*test_data, *names);
    params["class_names"] = *names;
    if (!o.parameters.contains("class_names")) fmt::print("classes: {}\n", fmt::join(*names, ", "));
  } else {
    require_numeric_labels(learn_data);
    if (test_data) require_numeric_labels(*test_data);
  }

  const int32_t visible = device_count();
  uint64_t seed = 0;
  if (const auto s = params.find("random_seed"); s != params.end() && s->is_number_integer() && *s >= 0) {
    seed = s->get<uint64_t>();
  }
  context_handle ctx =
      make_context(device_from(value_of(o.parameters, "task_type"), value_of(o.parameters, "devices")), seed);
  fmt::print("{}\n", device_line(context_device(ctx.get()), visible, "--task-type CPU"));
  pool_handle learn = build(ctx.get(), "learn", learn_data);
  pool_handle test;
  if (test_data) test = build(ctx.get(), "test", *test_data);

  if (!o.parameters.empty()) {
    std::string list;
    for (const auto& [k, v] : o.parameters) {
      list += fmt::format("{}{}={}", list.empty() ? "" : " ", k, v);
    }
    fmt::print("parameters: {}\n", list);
  }
  for (const std::string& k : unknown) {
    fmt::print("parameter '{}' is not checked by this tool; the trainer judges it\n", k);
  }

  // Train through the C ABI; the library names any parameter it refuses.
  if (!params.contains("train_dir")) params["train_dir"] = o.train_dir;
  const std::string train_dir = params["train_dir"].is_string() ? params["train_dir"].get<std::string>() : o.train_dir;
  std::fflush(stdout);
  training_run run = train_pool(learn.get(), test.get(), params.dump());
  fmt::print("trained {} trees in {:.1f} ms ({:.3f} ms per iteration, median)\n", model_info(run.model.get()).n_trees,
             run.train_ms, median_after(run.iteration_ms, std::min<std::size_t>(5, run.iteration_ms.size() / 2)));
  const stopwatch save;
  save_models(run.model.get(), outputs);
  fmt::print("wrote model {} ({:.1f} ms); training logs in {}\n", o.model_file, save.elapsed_ms(), train_dir);
  if (!o.eval_file.empty()) {
    if (o.test_set.empty()) throw usage_error("--eval-file: give a test set (-t/--test-set)");
    calc_options c;
    c.input_path = o.test_set;
    c.data = o.data;
    c.output_path = o.eval_file;
    c.output_columns =
        o.output_columns.empty() ? fmt::format("SampleId,{},Label", o.prediction_type) : o.output_columns;
    c.task_type = value_of(o.parameters, "task_type");
    c.devices = value_of(o.parameters, "devices");
    std::fflush(stdout);
    apply_model(run.model.get(), c);
  }
  copy_error_log(train_dir, "learn_error.tsv", o.learn_err_log, "--learn-err-log");
  copy_error_log(train_dir, "test_error.tsv", o.test_err_log, "--test-err-log");
  if (!o.learning_curve_html.empty()) {
    std::vector<metric_curve> curves = read_error_logs(train_dir);
    if (curves.empty()) {  // no logs written (allow_writing_files false): the eval metric from the callback
      metric_curve c;
      c.metric = run.metric;
      for (std::size_t i = 0; i < run.learn_history.size(); ++i) c.iterations.push_back(static_cast<double>(i));
      c.learn = run.learn_history;
      if (test) c.test = run.eval_history;
      curves.push_back(std::move(c));
    }
    write_text_file(o.learning_curve_html, learning_curve_page("Learning curves: " + o.model_file, curves),
                    "--plot-learning-curve");
    fmt::print("wrote learning curve {} ({} iterations, {} metric{})\n", o.learning_curve_html,
               run.learn_history.size(), curves.size(), curves.size() == 1 ? "" : "s");
  }

  run.model.reset();
  learn.reset();
  test.reset();
  ctx.reset();
  if (managed_tensor::released_by_library_count() != managed_tensor::given_count()) {
    fmt::print(stderr, "error: the library released {} of the {} tensors it was given\n",
               managed_tensor::released_by_library_count(), managed_tensor::given_count());
    return exit_failure;
  }
  return exit_ok;
}

}  // namespace cbgpu_bench
