// SPDX-License-Identifier: Apache-2.0
#include "bench_command.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <cstdio>
#include <new>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cbg/io/atomic_file.hpp"
#include "categorical_data.hpp"
#include "cuda_device.hpp"
#include "dataset_pool.hpp"
#include "errors.hpp"
#include "exit_codes.hpp"
#include "json_writer.hpp"
#include "library.hpp"
#include "managed_tensor.hpp"
#include "prediction_run.hpp"
#include "synthetic_data.hpp"
#include "timer.hpp"
#include "training_run.hpp"

namespace cbgpu_bench {

namespace {

int32_t parse_device(const std::string& s) {
  if (s == "auto") return CBG_DEVICE_AUTO;
  if (s == "cpu") return CBG_DEVICE_CPU;
  int32_t ordinal = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), ordinal);
  if (ec != std::errc() || end != s.data() + s.size() || ordinal < 0) {
    throw usage_error(fmt::format("--device: '{}' is not 'auto', 'cpu' or a CUDA ordinal", s));
  }
  return ordinal;
}

// Phase timings; std::nullopt: the phase did not run.
struct phase_times {
  double generate = 0, context = 0, pool = 0, train = 0, save = 0, predict = 0, total = 0;
  std::optional<double> upload;
};

struct training_facts {
  int64_t iterations = 0;
  double ms_per_iteration = 0;       // median after warm-up
  double mean_ms_per_iteration = 0;  // mean after --warmup iterations
  std::string stage_times = "{}";    // the library's stage times after the warm-up (--profile)
  double first_iteration_ms = 0;
  std::string metric;
  double learn_metric = 0;
  int64_t trees = 0;
  int64_t peak_device_bytes = -1;  // library allocations (GPU only)
  int64_t input_bytes = 0;         // features + label
  int64_t quantized_bytes = 0;     // the packed bin index
  std::string params;
};

// The prediction stage: the learn rows (their metric must equal training's last learn metric) and
// the held-out rows (timed; their metrics measure the model).
struct prediction_facts {
  prediction_run learn, held_out;
  std::vector<metric_value> learn_metrics, held_out_metrics;
  // The evaluator's learn metric against training's: equal, different, or not comparable (the bench
  // computes Logloss, MultiClass and RMSE only).
  std::optional<bool> learn_metric_matches;
};

struct bench_facts {
  int64_t rows = 0, features = 0, positives = 0, cat_features = 0;
  std::vector<int64_t> cardinality;
  int32_t visible_devices = 0;
  int32_t device = CBG_DEVICE_CPU;
  std::string device_name;
  phase_times ms;
  cbg_pool_info_t pool{};
  cbg_copy_stats_t copies{};
  uint64_t tensors_given = 0, tensors_released = 0;
  training_facts training;
  prediction_facts prediction;
};

// The dataset in the pool's memory: on a GPU, device copies made with cbg_tensor_copy (accounted
// as h2d by the context); on the host path, the generated arrays themselves.
struct pool_tensors {
  managed_tensor features;
  managed_tensor label;
};

// Copies `host` into a new device buffer. The copy goes as one flat 1-D tensor: the bytes are the
// same in any layout, and cbg_tensor_copy 0.1 copies a column-major matrix row by row.
std::shared_ptr<void> upload(cbg_context_t* ctx, int32_t device, const std::shared_ptr<std::vector<float>>& host,
                             const char* what) {
  const auto n = static_cast<int64_t>(host->size());
  std::shared_ptr<void> memory = device_allocate(host->size() * sizeof(float), device);
  const managed_tensor src =
      managed_tensor::wrap(host, host->data(), dl::DLDevice{dl::kDLCPU, 0}, dtype_of<float>(), {n});
  const managed_tensor dst =
      managed_tensor::wrap(memory, memory.get(), dl::DLDevice{dl::kDLCUDA, device}, dtype_of<float>(), {n});
  const cbg_tensor_ref_t d = dst.borrow(), s = src.borrow();
  check(cbg_tensor_copy(ctx, &d, &s), fmt::format("cbg_tensor_copy({} to device)", what));
  return memory;
}

pool_tensors place_data(cbg_context_t* ctx, int32_t device, synthetic_dataset data) {
  const int64_t rows = data.rows, cols = data.n_features;
  const std::vector<int64_t> strides =
      data.column_major ? std::vector<int64_t>{1, rows} : std::vector<int64_t>{cols, 1};
  auto x = std::make_shared<std::vector<float>>(std::move(data.features));
  auto y = std::make_shared<std::vector<float>>(std::move(data.label));
  if (device < 0) {
    return {managed_tensor::wrap(x, x->data(), dl::DLDevice{dl::kDLCPU, 0}, dtype_of<float>(), {rows, cols}, strides),
            managed_tensor::wrap(y, y->data(), dl::DLDevice{dl::kDLCPU, 0}, dtype_of<float>(), {rows})};
  }
  std::shared_ptr<void> x_mem = upload(ctx, device, x, "features");
  std::shared_ptr<void> y_mem = upload(ctx, device, y, "label");
  void* x_ptr = x_mem.get();
  void* y_ptr = y_mem.get();
  const dl::DLDevice gpu{dl::kDLCUDA, device};
  return {managed_tensor::wrap(std::move(x_mem), x_ptr, gpu, dtype_of<float>(), {rows, cols}, strides),
          managed_tensor::wrap(std::move(y_mem), y_ptr, gpu, dtype_of<float>(), {rows})};
  // The host arrays x and y are freed on return: only the device copies go on.
}

// The categorical workload's pool: one tensor per column (the numeric ones float32, the categorical
// ones int64 codes), in device memory on a GPU unless `host` (pageable host memory), the label too.
pool_handle make_column_pool(cbg_context_t* ctx, int32_t device, bool host, synthetic_dataset data,
                             categorical_columns cats) {
  const int64_t rows = data.rows;
  const int32_t where = host ? CBG_DEVICE_CPU : device;
  const auto tensor = [&](auto values) {
    return where < 0 ? managed_tensor::host(std::move(values), {rows}) : device_tensor(values, {rows}, where);
  };
  feature_tensors columns;
  for (int64_t j = 0; j < data.n_features; ++j) {
    const auto first = data.features.begin() + j * rows;
    columns.add_numeric(tensor(std::vector<float>(first, first + rows)));
  }
  std::vector<int32_t> cat_index;
  for (std::vector<int64_t>& c : cats.values) {
    cat_index.push_back(static_cast<int32_t>(data.n_features + static_cast<int64_t>(cat_index.size())));
    columns.add_numeric(tensor(std::move(c)));
  }
  managed_tensor label = tensor(std::move(data.label));
  cbg_pool_desc_t desc;
  check(cbg_pool_desc_init(&desc), "cbg_pool_desc_init");
  columns.give_to(desc);
  desc.label = label.give();
  desc.cat_features = cat_index.data();
  desc.n_cat_features = cat_index.size();
  cbg_pool_t* pool = nullptr;
  check(cbg_pool_from_dlpack(ctx, &desc, &pool), "cbg_pool_from_dlpack (categorical workload)");
  return pool_handle(pool);
}

void write_json(const std::string& path, const bench_options& o, const bench_facts& f,
                const std::vector<std::string>& command_line) {
  json_writer j;
  j.begin_object();
  j.key("tool").value("cbgpu-bench").key("tool_version").value(CBG_VERSION_STRING);
  j.key("command").value("bench");
  j.key("command_line").begin_array();
  for (const std::string& a : command_line) j.value(a);
  j.end_array();
  j.key("library").raw(build_info_json());

  j.key("device").begin_object();
  j.key("requested").value(o.device).key("visible_devices").value(f.visible_devices);
  j.key("context_device").value(f.device).key("kind").value(f.device >= 0 ? "cuda" : "cpu");
  j.key("name");
  if (f.device >= 0) {
    j.value(f.device_name);
  } else {
    j.null();
  }
  j.end_object();

  j.key("dataset").begin_object();
  j.key("generator").value("synthetic-higgs-like").key("rows").value(f.rows);
  j.key("categorical_features").value(f.cat_features).key("cardinalities").begin_array();
  for (const int64_t c : f.cardinality) j.value(c);
  j.end_array();
  j.key("features").value(f.features).key("seed").value(o.seed);
  j.key("layout").value(o.layout == "column" ? "column-major" : "row-major");
  j.key("dtype").value("float32").key("label_rule").value(synthetic_label_rule());
  j.key("positives").value(f.positives);
  j.key("positive_fraction").value(static_cast<double>(f.positives) / static_cast<double>(f.rows));
  j.end_object();

  j.key("pool").begin_object();
  j.key("rows").value(f.pool.n_rows).key("features").value(f.pool.n_features);
  j.key("categorical").value(f.pool.n_cat_features).key("label_dims").value(f.pool.label_dims);
  j.key("has_weight").value(f.pool.has_weight != 0).key("device").value(f.pool.device);
  j.end_object();

  j.key("phases_ms").begin_object();
  j.key("generate").value(f.ms.generate).key("context").value(f.ms.context).key("upload");
  if (f.ms.upload) {
    j.value(*f.ms.upload);
  } else {
    j.null();
  }
  j.key("pool").value(f.ms.pool).key("train").value(f.ms.train).key("save_model").value(f.ms.save);
  j.key("predict").value(f.ms.predict);
  j.key("total").value(f.ms.total);
  j.key("end_to_end_from_device").value(f.ms.pool + f.ms.train);
  j.key("end_to_end_from_host").value(f.ms.upload.value_or(0.0) + f.ms.pool + f.ms.train);
  j.end_object();

  j.key("training").begin_object();
  j.key("params").raw(f.training.params);
  j.key("iterations").value(f.training.iterations).key("trees").value(f.training.trees);
  j.key("ms_per_iteration_median").value(f.training.ms_per_iteration);
  j.key("warmup_iterations")
      .value(o.warmup)
      .key("ms_per_iteration_mean_after_warmup")
      .value(f.training.mean_ms_per_iteration);
  j.key("stage_times").raw(f.training.stage_times);
  j.key("first_iteration_ms").value(f.training.first_iteration_ms);
  j.key("metric").value(f.training.metric).key("learn_metric").value(f.training.learn_metric);
  j.key("peak_device_bytes").value(f.training.peak_device_bytes);
  j.key("input_bytes").value(f.training.input_bytes).key("quantized_bytes").value(f.training.quantized_bytes);
  j.key("model_file").value(o.model_file);
  j.end_object();

  j.key("copy_stats").begin_object();
  j.key("h2d_bytes").value(f.copies.h2d_bytes).key("h2d_calls").value(f.copies.h2d_calls);
  j.key("d2h_bytes").value(f.copies.d2h_bytes).key("d2h_calls").value(f.copies.d2h_calls);
  j.key("d2d_bytes").value(f.copies.d2d_bytes).key("d2d_calls").value(f.copies.d2d_calls);
  j.key("h2h_bytes").value(f.copies.h2h_bytes).key("h2h_calls").value(f.copies.h2h_calls);
  j.end_object();

  j.key("tensors").begin_object();
  j.key("given_to_library").value(f.tensors_given);
  j.key("released_by_library").value(f.tensors_released);
  j.end_object();

  const prediction_facts& p = f.prediction;
  const auto metrics = [&j](const std::vector<metric_value>& values) {
    j.begin_object();
    for (const metric_value& m : values) j.key(m.name).value(m.value);
    j.end_object();
  };
  j.key("prediction").begin_object();
  j.key("evaluator").value(f.device >= 0 ? "cbg_predict_to_device" : "cbg_predict_to_host");
  j.key("learn_rows").value(p.learn.rows).key("learn_metrics");
  metrics(p.learn_metrics);
  j.key("learn_metric_matches_training");
  if (p.learn_metric_matches) {
    j.value(*p.learn_metric_matches);
  } else {
    j.null();
  }
  j.key("held_out_rows").value(p.held_out.rows).key("held_out_seed").value(o.seed + 1);
  j.key("held_out_first_ms").value(p.held_out.first_ms).key("held_out_ms").value(p.held_out.ms);
  j.key("held_out_metrics");
  metrics(p.held_out_metrics);
  j.end_object();
  j.key("not_implemented").begin_array().end_array();  // every stage of the pipeline runs
  j.key("complete").value(true);
  j.end_object();

  try {
    cbg::io::write_file_atomically(path, j.str() + '\n');
  } catch (const cbg::io::file_error& e) {
    throw usage_error(fmt::format("--json: {}", e.what()));
  }
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, bench_options& o) {
  CLI::App* cmd = app.add_subcommand("bench", "Benchmark on a synthetic Higgs-like binary classification dataset");
  cmd->add_option("--rows", o.rows, "Number of rows")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--features", o.features, "Number of float32 features")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--seed", o.seed, "Seed of the data generator and the context")->capture_default_str();
  cmd->add_option("--eval-rows", o.eval_rows,
                  "Held-out rows to predict (the generator with seed + 1); default rows / 4, 0: none")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--layout", o.layout, "Feature matrix layout")
      ->capture_default_str()
      ->check(CLI::IsMember({"column", "row"}));
  cmd->add_option("--device", o.device, "auto (a GPU if visible), cpu, or a CUDA ordinal")->capture_default_str();
  cmd->add_option("--json", o.json_path, "Write a machine-readable record of the run to this file");
  cmd->add_option("-i,--iterations", o.iterations, "Trees to train")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd->add_option("-n,--depth", o.depth, "Tree depth")->capture_default_str()->check(CLI::Range(1, 16));
  cmd->add_option("-w,--learning-rate", o.learning_rate, "Learning rate")->capture_default_str();
  cmd->add_option("-x,--border-count", o.border_count, "Borders per feature")
      ->capture_default_str()
      ->check(CLI::Range(1, 255));
  cmd->add_option("--loss-function", o.loss_function, "Loss (the label is binary)")->capture_default_str();
  cmd->add_option("-m,--model-file", o.model_file, "Write the trained model (.cbm) here");
  cmd->add_flag("-v,--verbose", o.verbose, "Show the library's debug log on stderr");
  cmd->add_option("--cat-features", o.cat_features,
                  "Categorical columns (Zipf-distributed integer codes) beside the --features numeric ones")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 10));
  cmd->add_option("--cat-max-cardinality", o.cat_max_cardinality,
                  "Cardinality of the last categorical column (the first has 10, log-evenly between)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{10}, int64_t{1} << 31));
  cmd->add_option("--max-ctr-complexity", o.max_ctr_complexity,
                  "max_ctr_complexity for training (0: not set, the library's default)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{16}));
  cmd->add_option("--permutation-count", o.permutation_count,
                  "permutation_count for training (0: not set, the library's default)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1000}));
  cmd->add_option("--devices", o.devices,
                  "The training parameter devices (CatBoost's syntax, e.g. 0:1): train sharded over those GPUs");
  cmd->add_option("--input", o.input, "Where the pool's columns are: auto (the GPU's memory on a GPU) or host")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "host"}));
  cmd->add_option("--warmup", o.warmup, "Iterations left out of the mean time per iteration")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  cmd->add_flag("--profile", o.profile,
                "Time the library's stages (slower: each waits for the GPU) over the iterations after --warmup");
  cmd->footer(exit_codes_help);
  return cmd;
}

int run_bench(const bench_options& o, const std::vector<std::string>& command_line) {
  const stopwatch total;
  const int32_t requested = parse_device(o.device);
  if (o.verbose) log_library_to_stderr(CBG_LOG_DEBUG);
  bench_facts f;
  f.visible_devices = device_count();
  fmt::print("cbgpu-bench {} (libcbgpu {}): synthetic benchmark\n", CBG_VERSION_STRING, cbg_version_string());

  synthetic_options so;
  so.rows = o.rows;
  so.features = o.features;
  so.seed = o.seed;
  so.column_major = o.layout == "column";
  stopwatch t;
  synthetic_dataset data;
  try {
    data = make_synthetic_dataset(so);
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(
        fmt::format("out of host memory generating {} rows x {} features ({} of float32)", o.rows, o.features,
                    format_bytes(static_cast<uint64_t>(o.rows) * static_cast<uint64_t>(o.features) * 4)));
  }
  synthetic_options held_out_options = so;
  held_out_options.rows = o.eval_rows >= 0 ? o.eval_rows : std::max<int64_t>(1, o.rows / 4);
  held_out_options.seed = o.seed + 1;
  synthetic_dataset held_out =
      held_out_options.rows > 0 ? make_synthetic_dataset(held_out_options) : synthetic_dataset{};
  categorical_columns cats, held_out_cats;
  if (o.cat_features > 0) {
    if (o.layout != "column") throw usage_error("--cat-features: the categorical workload is column-major");
    const categorical_options co{o.cat_features, o.cat_max_cardinality};
    cats = add_categorical_columns(co, o.seed, data);
    if (held_out.rows > 0) held_out_cats = add_categorical_columns(co, o.seed + 1, held_out);
    f.cat_features = o.cat_features;
    f.cardinality = cats.cardinality;
  }
  f.ms.generate = t.elapsed_ms();
  f.rows = data.rows;
  f.features = data.n_features;
  f.positives = data.positives;

  t = stopwatch();
  // On a GPU the context's allocations go through counting hooks: the peak device memory of training.
  const int32_t target = requested == CBG_DEVICE_AUTO ? (f.visible_devices > 0 ? 0 : CBG_DEVICE_CPU) : requested;
  allocation_counter counter;
  context_handle ctx =
      target >= 0 ? make_counted_context(target, o.seed, counter, o.profile) : make_context(requested, o.seed);
  f.ms.context = t.elapsed_ms();
  f.device = context_device(ctx.get());
  if (f.device >= 0) f.device_name = device_description(f.device);
  fmt::print("{}\n", device_line(f.device, f.visible_devices, "--device cpu"));
  fmt::print("data: {} rows x {} features, float32, {}-major, seed {}, {:.1f}% positive\n", f.rows, f.features,
             o.layout, o.seed, 100.0 * static_cast<double>(f.positives) / static_cast<double>(f.rows));
  fmt::print("      {}\n", synthetic_label_rule());
  if (f.cat_features > 0) {
    fmt::print("      + {} categorical columns (int64 codes), cardinalities {}\n", f.cat_features,
               fmt::join(f.cardinality, ", "));
    fmt::print("      {}\n", categorical_label_rule());
  }
  fmt::print("{:<10} {:>10.1f} ms\n", "generate", f.ms.generate);
  fmt::print("{:<10} {:>10.1f} ms\n", "context", f.ms.context);

  // The labels stay on the host too, for the metrics of the predictions.
  const std::vector<float> learn_label = data.label, held_out_label = held_out.label;
  pool_handle pool, held_out_pool;
  if (f.cat_features > 0) {
    // The categorical workload: column tensors made and handed over in one step (their device
    // copies, if any, count as the pool's time).
    t = stopwatch();
    const bool host = o.input == "host";
    pool = make_column_pool(ctx.get(), f.device, host, std::move(data), std::move(cats));
    if (held_out.rows > 0) {
      held_out_pool = make_column_pool(ctx.get(), f.device, host, std::move(held_out), std::move(held_out_cats));
    }
    fmt::print("{:<10} {:>10}     columns in {} memory\n", "upload", "-",
               host || f.device < 0 ? "pageable host" : "device");
  } else {
    t = stopwatch();
    pool_tensors tensors = place_data(ctx.get(), f.device, std::move(data));
    std::optional<pool_tensors> held_out_tensors;
    if (held_out.rows > 0) held_out_tensors = place_data(ctx.get(), f.device, std::move(held_out));
    if (f.device >= 0) {
      f.ms.upload = t.elapsed_ms();
      fmt::print("{:<10} {:>10.1f} ms  (cudaMalloc + cbg_tensor_copy to device {})\n", "upload", *f.ms.upload,
                 f.device);
    } else {
      fmt::print("{:<10} {:>10}     skipped: the host path reads the generated arrays in place\n", "upload", "-");
    }

    t = stopwatch();
    cbg_pool_desc_t desc;
    check(cbg_pool_desc_init(&desc), "cbg_pool_desc_init");
    desc.features = tensors.features.give();
    desc.label = tensors.label.give();
    cbg_pool_t* raw_pool = nullptr;
    check(cbg_pool_from_dlpack(ctx.get(), &desc, &raw_pool), "cbg_pool_from_dlpack");
    pool.reset(raw_pool);
    if (held_out_tensors) {
      check(cbg_pool_desc_init(&desc), "cbg_pool_desc_init");
      desc.features = held_out_tensors->features.give();
      desc.label = held_out_tensors->label.give();
      check(cbg_pool_from_dlpack(ctx.get(), &desc, &raw_pool), "cbg_pool_from_dlpack (held-out rows)");
      held_out_pool.reset(raw_pool);
    }
  }
  f.ms.pool = t.elapsed_ms();
  f.pool = pool_info(pool.get());
  fmt::print("{:<10} {:>10.1f} ms  pool: {}\n", "pool", f.ms.pool, describe_pool(f.pool));

  // Training.
  training_facts& tf = f.training;
  tf.params = fmt::format(
      R"({{"loss_function": "{}", "iterations": {}, "depth": {}, "learning_rate": {}, "border_count": {}, )"
      R"("random_seed": {}, "verbose": false, "metric_period": {}{}{}{}}})",
      o.loss_function, o.iterations, o.depth, o.learning_rate, o.border_count, o.seed, o.iterations,
      o.max_ctr_complexity > 0 ? fmt::format(R"(, "max_ctr_complexity": {})", o.max_ctr_complexity) : std::string(),
      o.permutation_count > 0 ? fmt::format(R"(, "permutation_count": {})", o.permutation_count) : std::string(),
      o.devices.empty() ? std::string() : fmt::format(R"(, "devices": "{}")", o.devices));
  tf.input_bytes = f.rows * f.features * 4 + f.rows * 4 + f.rows * f.cat_features * 8;
  tf.quantized_bytes = (f.features + 3) / 4 * ((f.rows + 31) / 32 * 32) * 4;
  const int64_t held_before = counter.current.load();
  counter.peak.store(held_before);
  training_run run = train_pool(pool.get(), nullptr, tf.params, o.profile ? ctx.get() : nullptr, o.warmup);
  tf.mean_ms_per_iteration = mean_after(run.iteration_ms, static_cast<std::size_t>(o.warmup));
  if (o.profile) {
    const char* json = nullptr;
    check(cbg_context_stage_times(ctx.get(), &json), "cbg_context_stage_times");
    tf.stage_times = json;
    fmt::print("stages     (after {} iterations) {}\n", o.warmup, tf.stage_times);
  }
  f.ms.train = run.train_ms;
  tf.iterations = run.iterations;
  tf.trees = model_info(run.model.get()).n_trees;
  tf.ms_per_iteration = median_after(run.iteration_ms, std::min<std::size_t>(5, run.iteration_ms.size() / 2));
  tf.first_iteration_ms = run.iteration_ms.empty() ? 0.0 : run.iteration_ms.front();
  tf.metric = run.metric;
  tf.learn_metric = run.last_learn_metric;
  if (f.device >= 0) tf.peak_device_bytes = counter.peak.load();
  fmt::print(
      "{:<10} {:>10.1f} ms  {} trees of depth {}: {:.3f} ms per iteration (median after warm-up; "
      "first {:.1f} ms), learn {} {:.6f}\n",
      "train", f.ms.train, tf.trees, o.depth, tf.ms_per_iteration, tf.first_iteration_ms, tf.metric, tf.learn_metric);
  if (run.iteration_ms.size() > static_cast<std::size_t>(o.warmup)) {
    fmt::print("{:<10} {:>10.3f} ms per iteration: mean of iterations {}..{}\n", "train", tf.mean_ms_per_iteration,
               o.warmup + 1, run.iteration_ms.size());
  }
  if (tf.peak_device_bytes >= 0) {
    const double floor = static_cast<double>(tf.input_bytes + tf.quantized_bytes);
    fmt::print(
        "memory     peak {} held by the library (+ {} input the caller holds, {} quantized index "
        "included in the peak): {:.2f}x (input + quantized)\n",
        format_bytes(static_cast<uint64_t>(tf.peak_device_bytes)), format_bytes(static_cast<uint64_t>(tf.input_bytes)),
        format_bytes(static_cast<uint64_t>(tf.quantized_bytes)),
        static_cast<double>(tf.peak_device_bytes + tf.input_bytes) / floor);
    fmt::print("{:<10} {} device allocations by the library up to the trained model\n", "memory", counter.calls.load());
  }
  fmt::print("end to end (data -> trained model): from device tensors {:.1f} ms, from host arrays {:.1f} ms\n",
             f.ms.pool + f.ms.train, f.ms.upload.value_or(0.0) + f.ms.pool + f.ms.train);
  if (!o.model_file.empty()) {
    t = stopwatch();
    check(cbg_model_save_file(run.model.get(), o.model_file.c_str(), CBG_MODEL_FORMAT_CBM), "cbg_model_save_file");
    f.ms.save = t.elapsed_ms();
    fmt::print("{:<10} {:>10.1f} ms  wrote {}\n", "save", f.ms.save, o.model_file);
  }

  f.copies = copy_stats(ctx.get());
  fmt::print("copies: {} (up to the trained model)\n", describe_copy_stats(f.copies));

  // Prediction: the learn rows' metric must be training's (the evaluator and the trainer agree);
  // the held-out rows are timed and measure the model. Not for columns in pageable host memory on a
  // GPU (--input host): the GPU evaluator reads device memory.
  t = stopwatch();
  prediction_facts& pf = f.prediction;
  const bool predicts = f.device < 0 || o.input != "host";
  const double from_training = tf.learn_metric;
  double from_evaluator = 0;
  if (predicts) {
    pf.learn = predict_raw(ctx.get(), run.model.get(), pool.get(), f.rows);
    pf.learn_metrics = label_metrics(o.loss_function, pf.learn, learn_label);
    from_evaluator = pf.learn_metrics.front().value;
    // With CTRs training scores the learn rows with ordered CTR values, the model with its tables: the
    // two learn metrics differ by design.
    if (pf.learn_metrics.front().name == tf.metric && f.cat_features == 0) {
      pf.learn_metric_matches =
          std::fabs(from_evaluator - from_training) <= 1e-9 * std::fmax(1.0, std::fabs(from_training));
    }
    if (held_out_pool) {
      pf.held_out =
          predict_raw(ctx.get(), run.model.get(), held_out_pool.get(), static_cast<int64_t>(held_out_label.size()));
      pf.held_out_metrics = label_metrics(o.loss_function, pf.held_out, held_out_label);
    }
  }
  f.ms.predict = t.elapsed_ms();
  const char* evaluator =
      f.device >= 0 ? "GPU evaluator, cbg_predict_to_device" : "host evaluator, cbg_predict_to_host";
  if (!predicts) {
    fmt::print(
        "{:<10} {:>10}     skipped: the pool's columns are in pageable host memory (--input host), which the "
        "GPU evaluator does not read\n",
        "predict", "-");
  } else if (held_out_pool) {
    const auto& h = pf.held_out;
    std::string scores;
    for (const metric_value& m : pf.held_out_metrics) scores += fmt::format(", {} {:.6f}", m.name, m.value);
    fmt::print("{:<10} {:>10.3f} ms  {} held-out rows ({}): {:.3g} rows/s (first call {:.1f} ms){}\n", "predict", h.ms,
               h.rows, evaluator, 1e3 * static_cast<double>(h.rows) / std::fmax(h.ms, 1e-6), h.first_ms, scores);
  }
  if (pf.learn_metric_matches) {
    fmt::print("check      learn {} from the evaluator {:.9g}, from training {:.9g}: {}\n",
               pf.learn_metrics.front().name, from_evaluator, from_training,
               *pf.learn_metric_matches ? "the same" : "DIFFERENT");
  } else if (!predicts) {
    fmt::print("check      skipped: no prediction\n");
  } else if (f.cat_features > 0) {
    fmt::print("check      skipped: with CTRs training's learn metric uses ordered CTR values, not the model's\n");
  } else {
    fmt::print("check      skipped: training reports {}, the bench computes {} (Logloss, MultiClass and RMSE only)\n",
               tf.metric, pf.learn_metrics.front().name);
  }

  // Freeing the pools hands every tensor back through its deleter: check that it happened.
  held_out_pool.reset();
  pool.reset();
  ctx.reset();
  f.tensors_given = managed_tensor::given_count();
  f.tensors_released = managed_tensor::released_by_library_count();
  f.ms.total = total.elapsed_ms();
  fmt::print("tensors: {} given to the library, {} released through their deleters\n", f.tensors_given,
             f.tensors_released);
  fmt::print("{:<10} {:>10.1f} ms\n", "total", f.ms.total);

  if (!o.json_path.empty()) {
    write_json(o.json_path, o, f, command_line);
    fmt::print("json: wrote {}\n", o.json_path);
  }
  if (pf.learn_metric_matches == false) {
    fmt::print(stderr, "error: the evaluator's learn {} ({:.17g}) is not training's {} ({:.17g})\n",
               pf.learn_metrics.front().name, from_evaluator, tf.metric, from_training);
    return exit_failure;
  }
  if (f.tensors_released != f.tensors_given) {
    fmt::print(stderr, "error: the library released {} of the {} tensors it was given\n", f.tensors_released,
               f.tensors_given);
    return exit_failure;
  }
  return exit_ok;
}

}  // namespace cbgpu_bench
