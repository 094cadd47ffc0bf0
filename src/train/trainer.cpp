// SPDX-License-Identifier: Apache-2.0
// The boosting loop, written once over the data passes of boosting.hpp (host reference or GPU):
// weak target and bootstrap, score noise, tree search, leaf estimation (Newton / Gradient with
// backtracking), approx updates, metrics, early stopping, callbacks, progress lines, train_dir
// logs and model assembly (catboost-training.md §3-§5).
#include "cbg/train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/io/atomic_file.hpp"
#include "cbg/ctr/combinations.hpp"
#include "cbg/train/search_extension.hpp"
#include "cbg/ctr/combinations_device.hpp"
#include "cbg/dist/train.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/ctr/permutation_scheme.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/model_builder.hpp"
#include "cbg/train/dataset.hpp"
#include "cbg/train/class_labels.hpp"
#include "cbg/train/metric_names.hpp"
#include "cbg/train/metric_tables.hpp"
#include "cbg/train/tensorboard_log.hpp"
#include "cbg/train/params.hpp"
#include "src/dist/all_rows.hpp"
#include "src/train/ctr_size_penalty.hpp"

namespace cbg::train {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr const char* log_category = "cbgpu.train";

bool loss_is_bounded(loss_kind k) {
  return k == loss_kind::logloss || k == loss_kind::cross_entropy || k == loss_kind::multiclass ||
         k == loss_kind::multiclass_one_vs_all || k == loss_kind::mae || k == loss_kind::quantile;
}

// Fixed-point scales of the leaf channels from bounds on |channel|.
std::vector<fixed_scale> scales_from(const std::vector<float>& max_abs, std::int64_t rows) {
  std::vector<fixed_scale> s;
  s.reserve(max_abs.size());
  for (float m : max_abs) {
    CBG_EXPECTS(std::isfinite(m), status::bad_data,
                "a derivative is not finite (the approx overflowed; try a smaller learning_rate)");
    s.push_back(fixed_scale_for(m, rows));
  }
  return s;
}

// Static bounds on the leaf channels of the bounded losses (valid at any point).
std::vector<float> channel_bounds(const loss_spec& l, int hess_channels, double max_weight) {
  const double der = l.kind == loss_kind::mae || l.kind == loss_kind::quantile ? std::max(l.alpha, 1.0 - l.alpha) : 1.0;
  std::vector<float> b;
  for (int k = 0; k < l.dims; ++k) b.push_back(static_cast<float>(der * max_weight * 1.0001));
  for (int k = 0; k < hess_channels; ++k) b.push_back(static_cast<float>(0.25 * max_weight * 1.0001));
  b.push_back(static_cast<float>(max_weight * 1.0001));
  return b;
}

// A standard normal draw for (iteration, level, feature), from the counter-based stream.
double noise_normal(std::uint64_t seed, int iteration, std::int64_t index) {
  const std::uint64_t key = stream_key(seed ^ 0x6e6f697365ull, static_cast<std::uint64_t>(iteration));
  const double u1 = draw_uniform(key, static_cast<std::uint64_t>(2 * index));
  const double u2 = draw_uniform(key, static_cast<std::uint64_t>(2 * index + 1));
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(6.283185307179586 * u2);
}

// IncToDec overfitting detector (CatBoost's docs: expected increase with decay 0.99).
class inc_to_dec_detector {
 public:
  explicit inc_to_dec_detector(double threshold) : threshold_(threshold) {}
  // Adds a score (to maximise); true when training should stop.
  bool add(double score) {
    scores_.push_back(score);
    running_max_.push_back(score);
    best_ = scores_.size() == 1 ? score : std::max(best_, score);
    double expected = 0, decay = 1;
    for (std::size_t i1 = scores_.size(); i1-- > 0;) {
      running_max_[i1] = std::max(running_max_[i1], score);
      expected = std::max(expected, decay * (running_max_[i1] - scores_[i1]));
      decay *= 0.99;
    }
    const double drop = best_ - score;
    if (threshold_ <= 0 || drop <= 0 || expected <= 0) return false;
    const double p = std::exp(-0.5 / (expected / drop));
    return p < threshold_;
  }

 private:
  double threshold_;
  double best_ = 0;
  std::vector<double> scores_, running_max_;
};

std::string format_duration(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.0f}us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.3g}ms", seconds * 1e3);
  if (seconds < 60) return fmt::format("{:.3g}s", seconds);
  if (seconds < 3600) return fmt::format("{}m {}s", static_cast<int>(seconds / 60), static_cast<int>(seconds) % 60);
  return fmt::format("{}h {}m", static_cast<int>(seconds / 3600), static_cast<int>(seconds / 60) % 60);
}

// One metric the loop tracks.
struct tracked_metric {
  named_metric m;
  bool on_learn = true;
  std::vector<double> learn, eval;  // per iteration (NaN where not computed)
};

double compute_metric(boosting_backend& b, const metric_spec& m, bool eval, int classes) {
  if (is_table_metric(m.kind)) return table_metric(m, b.confusion_table(m, eval, classes), classes);
  // Unweighted binary AUC keeps its exact integer path; the rest ranks with weights.
  if (m.kind == metric_kind::auc && !m.use_weights && m.auc == auc_type::classic) return b.auc(eval);
  if (m.kind == metric_kind::auc || m.kind == metric_kind::prauc || m.kind == metric_kind::normalized_gini) {
    return b.ranked_metric(m, eval);
  }
  double s[metric_terms];
  b.metric_sums(m, eval, s);
  return metric_final(m, s);
}

std::string tsv_number(double v) { return fmt::format("{:.10g}", v); }

void write_train_dir(const train_params& p, const std::vector<tracked_metric>& metrics, bool has_eval,
                     const std::vector<int>& iterations_logged, const std::vector<double>& passed, int planned) {
  if (p.train_dir.empty() || !p.allow_writing_files) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(p.train_dir, ec);
  CBG_EXPECTS(!ec, status::io, fmt::format("cannot create train_dir '{}': {}", p.train_dir, ec.message()));
  nlohmann::json meta;
  meta["learn_sets"] = {"learn"};
  meta["test_sets"] = has_eval ? nlohmann::json::array({"test"}) : nlohmann::json::array();
  meta["learn_metrics"] = nlohmann::json::array();
  meta["test_metrics"] = nlohmann::json::array();
  for (const auto& t : metrics) {
    const nlohmann::json entry{{"best_value", higher_is_better(t.m.spec.kind) ? "Max" : "Min"}, {"name", t.m.name}};
    if (t.on_learn) meta["learn_metrics"].push_back(entry);
    if (has_eval) meta["test_metrics"].push_back(entry);
  }
  meta["launch_mode"] = "Train";
  meta["parameters"] = "";
  meta["iteration_count"] = planned;
  meta["name"] = p.name;

  std::ostringstream learn, test, time_left;
  learn << "iter";
  if (has_eval) test << "iter";
  for (const auto& t : metrics) {
    if (t.on_learn) learn << '\t' << t.m.name;
    if (has_eval) test << '\t' << t.m.name;
  }
  learn << '\n';
  if (has_eval) test << '\n';
  time_left << "iter\tPassed\tRemaining\n";
  std::string json_text = "{\n\"meta\":" + meta.dump() + ",\n\"iterations\":[\n";
  for (std::size_t k = 0; k < iterations_logged.size(); ++k) {
    const int it = iterations_logged[k];
    const auto i = static_cast<std::size_t>(it);
    std::string lv, tv;
    learn << it;
    if (has_eval) test << it;
    for (const auto& t : metrics) {
      if (t.on_learn) {
        learn << '\t' << tsv_number(t.learn[i]);
        lv += (lv.empty() ? "" : ",") + tsv_number(t.learn[i]);
      }
      if (has_eval) {
        test << '\t' << tsv_number(t.eval[i]);
        tv += (tv.empty() ? "" : ",") + tsv_number(t.eval[i]);
      }
    }
    learn << '\n';
    if (has_eval) test << '\n';
    const double remaining = it + 1 < planned ? passed[k] / (it + 1) * (planned - it - 1) : 0.0;
    time_left << it << '\t' << static_cast<std::int64_t>(passed[k] * 1000) << '\t'
              << static_cast<std::int64_t>(remaining * 1000) << '\n';
    json_text +=
        fmt::format("{{\"learn\":[{}],\"iteration\":{},\"passed_time\":{},\"remaining_time\":{}{}}}{}\n", lv, it,
                    tsv_number(passed[k]), tsv_number(remaining), has_eval ? ",\"test\":[" + tv + "]" : std::string(),
                    k + 1 < iterations_logged.size() ? "," : "");
  }
  json_text += "]}";
  // CatBoost's logs all or none: a failure leaves the previous run's logs (and the folder) as they were.
  const std::string learn_text = learn.str(), test_text = test.str(), time_text = time_left.str();
  std::vector<std::pair<std::string, std::string_view>> files{
      {(fs::path(p.train_dir) / "learn_error.tsv").string(), learn_text},
      {(fs::path(p.train_dir) / "time_left.tsv").string(), time_text},
      {(fs::path(p.train_dir) / "catboost_training.json").string(), json_text}};
  if (has_eval) files.emplace_back((fs::path(p.train_dir) / "test_error.tsv").string(), test_text);
  try {
    io::write_files_atomically(files);
  } catch (const io::file_error& e) {
    CBG_FAIL(status::io, fmt::format("train_dir: {}", e.what()));
  }

  // Then TensorBoard's view of the same metrics, where CatBoost puts it (learn/, test/), and CatBoost's tmp/.
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double started = now - (passed.empty() ? 0.0 : passed.back());
  for (const bool eval : {false, true}) {
    if (eval && !has_eval) continue;
    tensorboard_scalars s;
    std::vector<std::size_t> columns;
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      if (eval || metrics[m].on_learn) {
        s.tags.push_back(metrics[m].m.name);
        columns.push_back(m);
      }
    }
    for (std::size_t k = 0; k < iterations_logged.size(); ++k) {
      const auto i = static_cast<std::size_t>(iterations_logged[k]);
      s.steps.push_back(iterations_logged[k]);
      s.wall_times.push_back(started + passed[k]);
      std::vector<double> row;
      for (const std::size_t m : columns) row.push_back(eval ? metrics[m].eval[i] : metrics[m].learn[i]);
      s.values.push_back(std::move(row));
    }
    const fs::path dir = fs::path(p.train_dir) / (eval ? "test" : "learn");
    fs::create_directories(dir, ec);
    CBG_EXPECTS(!ec, status::io, fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
    try {
      io::write_file_atomically((dir / "events.out.tfevents").string(), tensorboard_events(s));
    } catch (const io::file_error& e) {
      CBG_FAIL(status::io, fmt::format("train_dir: {}", e.what()));
    }
  }
  fs::create_directories(fs::path(p.train_dir) / "tmp", ec);
}

}  // namespace

model::model train(const pool& learn, const train_params& p, const train_options& options) {
  const auto started = clock_type::now();
  const context& ctx = *learn.ctx();

  CBG_EXPECTS(learn.num_rows() > 0, status::bad_data, "the learn pool has no rows");
  CBG_EXPECTS(learn.label().has_value(), status::bad_data, "the learn pool has no label");
  ctr::check_table_bounds_supported(p.ctr, ctx.is_cpu());
  const pool* eval = options.eval;
  if (eval != nullptr) {
    CBG_EXPECTS(
        eval->num_features() == learn.num_features(), status::invalid_argument,
        fmt::format("the eval pool has {} features, the learn pool {}", eval->num_features(), learn.num_features()));
    CBG_EXPECTS(eval->ctx()->device() == ctx.device(), status::invalid_argument,
                "the eval pool was made with a context of another device");
    CBG_EXPECTS(eval->num_rows() > 0, status::bad_data, "the eval pool has no rows");
    CBG_EXPECTS(eval->label().has_value(), status::bad_data, "the eval pool has no label");
    for (std::int64_t j = 0; j < eval->num_features(); ++j) {
      CBG_EXPECTS(eval->is_categorical(j) == learn.is_categorical(j), status::invalid_argument,
                  fmt::format("feature {} is categorical in one of the learn and eval pools only", j));
    }
  }

  // classes_count and class_names (checked against the loss by parse_params).
  const nlohmann::json flat = nlohmann::json::parse(p.flat_json);
  const int classes_count = flat.contains("classes_count") ? flat["classes_count"].get<int>() : 0;
  const std::vector<double>& class_values = p.class_values;

  // The data prepared for training: relabelled, categorical columns added, staged, quantized.
  dataset data(learn, eval, p);
  // Several permutations of the ordered CTRs (ctr/permutation_scheme.hpp): the main backend holds
  // the estimation permutation (its approx gives the metrics and the eval set; its leaves go into
  // the model), the others the learn permutations (their own approxes and leaves, the learn set only).
  const int permutations = data.permutation_count();
  const int estimation = ctr::estimation_permutation(permutations);
  backend_inputs in = data.take_permutation_inputs(estimation, true);
  CBG_EXPECTS(permutations == 1 || ctx.is_cpu() || !dist::wants_sharding(in), status::not_implemented,
              fmt::format("parameter 'permutation_count': {} permutations on several GPUs (devices '{}') are not "
                          "implemented; use permutation_count=1, or one GPU",
                          p.permutation_count, p.devices));
  ctr::prepared_data* const cat = data.categorical();
  // Feature combinations: one extension per permutation of the ordered CTRs (its seed's values), all
  // sharing the prepared data (ids, tables) and the columns' borders (ctr/combinations.hpp).
  const std::shared_ptr<ctr::combination_borders> shared_borders =
      permutations > 1 ? std::make_shared<ctr::combination_borders>() : nullptr;
  const auto combinations_of = [&](int k) -> std::unique_ptr<search_extension> {
    train_params pk = p;
    pk.random_seed = ctr::permutation_seed(p.random_seed, k);
    return ctx.is_cpu()
               ? ctr::combinations_for_training(data.labelled_learn(), data.labelled_eval(), pk, *cat, shared_borders)
               : ctr::combinations_for_training_device(data.labelled_learn(), data.labelled_eval(), pk, *cat,
                                                       shared_borders);
  };
  std::unique_ptr<search_extension> combinations;  // feature combinations (of the estimation permutation)
  if (cat != nullptr && permutations > 1) {
    combinations = combinations_of(estimation);
  } else if (cat != nullptr) {
    if (ctx.is_cpu()) {
      combinations = ctr::combinations_for_training(data.labelled_learn(), data.labelled_eval(), p, *cat);
    } else if (ctr::max_ctr_complexity_of(p.ctr, p.iterations) > 1) {
      // CatBoost's rule, set or by default: on the pool's device over all learn rows, where the dataset
      // staged any pageable columns and labels to the device (the GPU CTR path reads them there). With
      // several devices of one process each rank reads its rows of the columns; over several
      // processes each process computes them over every rank's rows (the dataset gathered them) and
      // its search reads its rows.
      bool device_data = true;
      for (const pool* q : {cat->learn.get(), cat->eval.get()}) {
        if (q == nullptr) continue;
        for (const column_view& c : q->features()) device_data = device_data && c.memory != memory_kind::host;
      }
      CBG_EXPECTS(device_data, status::internal, "feature combinations: a categorical column was not staged");
      combinations = ctr::combinations_for_training_device(data.labelled_learn(), data.labelled_eval(), p, *cat);
      if (combinations && data.rank_rows()) {
        combinations = dist::rank_rows_extension(std::move(combinations), data.rank_rows()->learn_first,
                                                 data.rank_rows()->eval_first);
      }
    }
  }
  std::unique_ptr<boosting_backend> b =
      ctx.is_cpu() ? make_host_backend(in, combinations.get()) : make_device_backend(in, combinations.get());
  if (combinations) combinations->set_nan_modes(b->nan_modes());
  std::vector<std::unique_ptr<search_extension>> learn_combinations;  // the learn permutations' combinations
  std::vector<std::unique_ptr<boosting_backend>> learn_permutations;  // empty with one permutation
  for (int k = 0; permutations > 1 && k < ctr::learn_permutation_count(permutations); ++k) {
    const backend_inputs lin = data.take_permutation_inputs(k, false);
    learn_combinations.push_back(combinations ? combinations_of(k) : nullptr);
    search_extension* e = learn_combinations.back().get();
    learn_permutations.push_back(ctx.is_cpu() ? make_host_backend(lin, e) : make_device_backend(lin, e));
    if (e != nullptr) e->set_nan_modes(learn_permutations.back()->nan_modes());
  }

  // Targets and the data-dependent defaults.
  const label_facts lf = b->labels(false);
  data_facts facts;
  facts.rows = b->rows();  // all shards' rows when sharded
  facts.features = learn.num_features();
  facts.has_baseline = learn.baseline().has_value();
  const bool multiclass = p.loss.kind == loss_kind::multiclass || p.loss.kind == loss_kind::multiclass_one_vs_all;
  const int given_classes = class_values.empty() ? classes_count : static_cast<int>(class_values.size());
  if (multiclass && given_classes > 0) {
    facts.classes = given_classes;  // prepare_targets refuses labels outside [0, classes), naming the row
  } else if (multiclass) {
    if (!(lf.all_integer && lf.min >= 0 && lf.max < 1e6)) {
      // Let the target check name the first offending row and its label.
      target_rule probe;
      probe.loss = p.loss.kind;
      probe.classes = lf.max >= 1 ? static_cast<int>(std::min(std::floor(lf.max), 999999.0)) + 1 : 1;
      b->prepare_targets(probe);
    }
    CBG_EXPECTS(lf.all_integer && lf.min >= 0 && lf.max < 1e6, status::bad_data,
                fmt::format("{} takes class indices 0, 1, ... as labels (found {} .. {}{})", p.loss_name, lf.min,
                            lf.max, lf.all_integer ? "" : ", not all integers"));
    facts.classes = static_cast<int>(lf.max) + 1;
  } else if (p.loss.kind == loss_kind::logloss) {
    facts.classes = 2;
  }
  if (eval != nullptr) {
    const label_facts ef = b->labels(true);
    facts.has_eval = true;
    facts.eval_target_constant = ef.constant;
  }
  const resolved_params r = resolve_params(p, facts);
  if (p.verbose && !p.learning_rate && ctx.log_enabled(log::level::info)) {
    ctx.log(log::level::info, log_category, fmt::format("Learning rate set to {:g}", r.learning_rate));
  }
  target_rule rule;
  rule.loss = p.loss.kind;
  rule.has_border = p.target_border.has_value();
  rule.border = p.target_border.value_or(0.5);
  rule.classes = facts.classes;
  b->prepare_targets(rule);
  for (auto& lb : learn_permutations) lb->prepare_targets(rule);

  // The start: boost_from_average's optimal constant (§3.9).
  const loss_spec loss = r.loss;
  const int dims = loss.dims;
  std::vector<double> bias(static_cast<std::size_t>(dims), 0.0);
  double moments[4];
  b->target_moments(moments);
  const double max_weight = moments[3];
  if (r.boost_from_average && moments[0] > 0) {
    const double mean = moments[1] / moments[0];
    switch (loss.kind) {
      case loss_kind::rmse:
        bias[0] = mean;
        break;
      case loss_kind::logloss:
      case loss_kind::cross_entropy:
        bias[0] = mean > 0 && mean < 1 ? std::log(mean / (1 - mean)) : 0.0;
        break;
      case loss_kind::mae:
      case loss_kind::quantile:
        bias[0] = b->weighted_quantile(loss.alpha);
        break;
      case loss_kind::rmse_with_uncertainty: {
        bias[0] = mean;
        const double var = moments[2] / moments[0] - mean * mean;
        bias[1] = var > 0 ? 0.5 * std::log(var) : 0.0;
        break;
      }
      default:
        break;
    }
  }
  b->start(loss, bias);
  for (auto& lb : learn_permutations) lb->start(loss, bias);

  // Metrics: the eval metric first, then the objective, then the custom ones (CatBoost's order).
  std::vector<tracked_metric> metrics;
  const auto add_metric = [&](const named_metric& m) {
    for (const auto& t : metrics)
      if (t.m.name == m.name) return;
    tracked_metric t;
    t.m = m;
    // A multiclass AUC is of type Mu (CatBoost's multiclass default; the only multiclass type here).
    if (m.spec.kind == metric_kind::auc) t.m.spec.auc = dims > 1 ? auc_type::mu : auc_type::classic;
    t.on_learn = !m.skip_train.value_or(default_skip_train(m.spec.kind));
    metrics.push_back(std::move(t));
  };
  add_metric(r.eval_metric);
  add_metric(r.objective);
  for (const auto& m : p.custom_metrics) add_metric(m);
  const int table_classes = dims > 1 ? dims : 2;  // classes of the confusion tables
  const bool has_eval = eval != nullptr;
  const bool maximize = higher_is_better(r.eval_metric.spec.kind);

  const int hess_channels = r.method == leaf_method::newton ? hessian_size(loss) : 0;
  const double l2 = r.l2_leaf_reg > 0 ? r.l2_leaf_reg : 1e-20;
  tree_search_params search_params;
  search_params.depth = p.depth;
  search_params.l2_leaf_reg = l2;
  search_params.score = p.score;
  const std::int64_t n = b->rows();
  const int features = b->features();
  const auto& modes = b->nan_modes();
  ctr_size_penalty size_penalty(cat, features, n, p.model_size_reg);
  std::vector<search_extension*> all_combinations;  // each permutation's
  if (combinations) all_combinations.push_back(combinations.get());
  for (auto& e : learn_combinations) {
    if (e) all_combinations.push_back(e.get());
  }
  for (search_extension* ext : all_combinations) {
    ext->column_weights = nullptr;
    if (size_penalty.active()) {
      ext->column_weights = [&size_penalty, ext](const std::vector<split>& chosen, std::size_t count) {
        return size_penalty.column_weights(*ext, chosen, count);
      };
    }
  }
  std::vector<std::map<std::int32_t, float>> borders(static_cast<std::size_t>(features));

  const bool bounded = loss_is_bounded(loss.kind);
  const std::vector<fixed_scale> bound_scales = bounded && r.leaf_iterations > 1
                                                    ? scales_from(channel_bounds(loss, hess_channels, max_weight), n)
                                                    : std::vector<fixed_scale>{};

  std::vector<built_tree> trees;
  std::vector<int> logged;
  std::vector<double> passed;
  int best_iteration = -1;
  double best_value = 0;
  inc_to_dec_detector inc_to_dec(p.od_pval);
  const int period = std::max(1, p.metric_period);
  // Iteration i computes the learn metrics when it logs, writes train_dir or calls back.
  const auto learn_metric_wanted = [&](int i) {
    return i % period == 0 || i + 1 == p.iterations || !p.train_dir.empty() || static_cast<bool>(options.on_iteration);
  };
  // The learn metric summed by the next weak pass (policy.fused_learn_metric): the first additive one,
  // with one permutation (the weak pass then reads the approx the metric is of).
  int fused = -1;
  if (ctx.policy().fused_learn_metric && permutations == 1) {
    for (std::size_t k = 0; k < metrics.size() && fused < 0; ++k) {
      if (metrics[k].on_learn && is_additive(metrics[k].m.spec.kind)) fused = static_cast<int>(k);
    }
  }
  int pending = -1;            // the iteration whose report waits for its learn metric
  double pending_elapsed = 0;  // its wall time at its end
  // Best iteration, early stopping, progress line and callback of iteration i (its metrics are in);
  // true: stop.
  const auto report = [&](int i, double elapsed) {
    const auto at = static_cast<std::size_t>(i);
    const bool last = i + 1 == p.iterations;
    const bool log_now = i % period == 0 || last;
    const bool want_learn = learn_metric_wanted(i);
    bool stop = false;
    if (has_eval) {
      const double v = metrics[0].eval[at];
      const bool better = best_iteration < 0 || (maximize ? v > best_value : v < best_value);
      if (better) {
        best_value = v;
        best_iteration = i;
      }
      if (p.od_type == od_kind::iter && i - best_iteration >= p.od_wait) stop = true;
      if (p.od_type == od_kind::inc_to_dec && inc_to_dec.add(maximize ? v : -v)) stop = true;
    }
    const double remaining = last ? 0.0 : elapsed / (i + 1) * (p.iterations - i - 1);
    if (want_learn) {
      logged.push_back(i);
      passed.push_back(elapsed);
    }
    if (p.verbose && (log_now || stop) && ctx.log_enabled(log::level::info)) {
      std::string line =
          fmt::format("{}:\tlearn: {:.7f}", i, metrics[0].on_learn ? metrics[0].learn[at] : metrics[1].learn[at]);
      if (has_eval) {
        line += fmt::format("\ttest: {:.7f}\tbest: {:.7f} ({})", metrics[0].eval[at], best_value, best_iteration);
      }
      line += fmt::format("\ttotal: {}\tremaining: {}", format_duration(elapsed), format_duration(remaining));
      ctx.log(log::level::info, log_category, line);
    }
    if (options.on_iteration) {
      progress pg;
      pg.iteration = i;
      pg.iterations = p.iterations;
      pg.metric = r.eval_metric.name;
      pg.has_learn = metrics[0].on_learn && !std::isnan(metrics[0].learn[at]);
      pg.learn = pg.has_learn ? metrics[0].learn[at] : 0.0;
      pg.has_eval = has_eval;
      pg.eval = has_eval ? metrics[0].eval[at] : 0.0;
      pg.best_eval = best_value;
      pg.best_iteration = best_iteration;
      pg.elapsed_s = elapsed;
      pg.remaining_s = remaining;
      if (!options.on_iteration(pg)) stop = true;
    }
    if (stop && p.verbose) {
      ctx.log(log::level::info, log_category,
              fmt::format("Stopped after iteration {} (best {} at iteration {})", i, best_value, best_iteration));
    }
    return stop;
  };

  for (int it = 0; it < p.iterations; ++it) {
    // Weak target and bootstrap.
    weak_request wr;
    wr.bootstrap.kind = p.bootstrap;
    wr.bootstrap.bagging_temperature = p.bagging_temperature;
    wr.bootstrap.subsample = r.subsample;
    wr.bootstrap.mvs_reg = p.mvs_reg.value_or(-1.0);
    wr.bootstrap.key = stream_key(p.random_seed, static_cast<std::uint64_t>(it));
    wr.newton_weights = p.newton_score;
    wr.want_value = r.leaf_iterations > 1;
    wr.hess_channels = hess_channels;
    // The tree is searched on one learn permutation's columns (the one permutation when there is one).
    const int searched = permutations > 1 ? ctr::search_permutation(p.random_seed, it, permutations) : 0;
    boosting_backend& searcher = permutations > 1 ? *learn_permutations[static_cast<std::size_t>(searched)] : *b;
    search_extension* const search_combinations = permutations > 1 && combinations
                                                      ? learn_combinations[static_cast<std::size_t>(searched)].get()
                                                      : combinations.get();
    if (pending >= 0) wr.learn_metric = &metrics[static_cast<std::size_t>(fused)].m.spec;
    const weak_result weak = searcher.weak_target(wr);
    if (pending >= 0) {  // the previous iteration's report, its learn metric from this pass
      tracked_metric& t = metrics[static_cast<std::size_t>(fused)];
      t.learn[static_cast<std::size_t>(pending)] = metric_final(t.m.spec, weak.metric);
      const int reported = pending;
      pending = -1;
      if (report(reported, pending_elapsed)) break;
    }

    // Score noise (§3.5): Cosine only.
    std::vector<double> noise;
    if (search_combinations != nullptr) search_combinations->column_noise = nullptr;
    if (p.random_strength > 0 && p.score == score_function::cosine) {
      const double spread = std::sqrt(weak.sigma_sum / (static_cast<double>(n) + 1e-100));
      const double length = std::exp(std::log(static_cast<double>(n)) - it * r.learning_rate);
      const double sigma = p.random_strength * spread * (length / (1 + length));
      if (sigma > 0) {
        noise.resize(static_cast<std::size_t>(p.depth * features));
        for (std::size_t k = 0; k < noise.size(); ++k) {
          noise[k] = sigma * noise_normal(p.random_seed, it, static_cast<std::int64_t>(k));
        }
        if (search_combinations != nullptr) {  // feature combinations: draws after the pool's, one per (level, column)
          const std::int64_t base = static_cast<std::int64_t>(noise.size());
          const std::uint64_t seed = p.random_seed;
          const auto column_noise = [sigma, seed, it, base](int level, std::size_t column) {
            const std::int64_t index = base + level * (std::int64_t{1} << 24) + static_cast<std::int64_t>(column);
            return sigma * noise_normal(seed, it, index);
          };
          search_combinations->column_noise = column_noise;
        }
      }
    }
    const tree_structure tree = searcher.search(search_params, std::move(noise), size_penalty.pool_weights());
    size_penalty.add_tree(tree.splits);
    const int leaves = 1 << tree.splits.size();

    // Leaf estimation (§3.7): sums at the current approx, then Newton/Gradient steps with
    // backtracking when more than one iteration is asked for (leaf_math.hpp; on the GPU it stays on
    // the device).
    // With several permutations every one estimates its own leaves at its own approx.
    const auto estimate = [&](boosting_backend& e, const weak_result& at) {
      const std::vector<fixed_scale> zero_scales = scales_from(at.channel_max, n);
      leaf_request lreq;
      lreq.config.loss = loss;
      lreq.config.newton = r.method == leaf_method::newton ? 1 : 0;
      lreq.config.backtracking = static_cast<std::int32_t>(p.backtracking);
      lreq.config.iterations = r.leaf_iterations;
      lreq.config.bounded = bounded ? 1 : 0;
      lreq.config.leaves = leaves;
      lreq.config.hess_channels = hess_channels;
      lreq.config.rows = n;
      lreq.config.l2 = l2;
      lreq.zero_scales = &zero_scales;
      lreq.bound_scales = &bound_scales;
      lreq.start_value = at.value;
      leaf_result out = r.method == leaf_method::exact
                            ? e.exact_leaves(leaves, loss.alpha, zero_scales[static_cast<std::size_t>(dims)])
                            : e.estimate_leaves(lreq);
      for (double& v : out.point) v *= r.learning_rate;  // the deltas
      return out;
    };
    // The derivatives at another permutation's approx, for its leaf estimation only (no bootstrap:
    // leaf estimation uses the sample weights).
    weak_request at_approx = wr;
    at_approx.bootstrap = bootstrap_spec{};
    at_approx.learn_metric = nullptr;
    std::vector<std::vector<double>> learn_deltas;
    for (std::size_t k = 0; k < learn_permutations.size(); ++k) {
      boosting_backend& lb = *learn_permutations[k];
      const bool was_searched = static_cast<int>(k) == searched;
      if (!was_searched) lb.use_tree(tree.splits);
      learn_deltas.push_back(estimate(lb, was_searched ? weak : lb.weak_target(at_approx)).point);
    }
    if (permutations > 1) b->use_tree(tree.splits);
    leaf_result leaf = estimate(*b, permutations > 1 ? b->weak_target(at_approx) : weak);
    const std::vector<double>& delta = leaf.point;
    const std::vector<double>& leaf_weight = leaf.leaf_weight;

    std::vector<value_split> vs;
    const std::vector<float> values = b->split_borders(tree.splits);
    for (std::size_t k = 0; k < tree.splits.size(); ++k) {
      const split& s = tree.splits[k];
      const auto f = static_cast<std::size_t>(s.feature);
      if (f >= borders.size()) borders.resize(f + 1);  // a feature combination (after the pool's features)
      borders[f][s.bin] = values[k];
      vs.push_back({s.feature, values[k],
                    static_cast<std::uint8_t>(f < modes.size() &&
                                              modes[f] == static_cast<std::uint8_t>(quantize::nan_mode::max))});
    }
    b->apply(vs, delta);
    for (std::size_t k = 0; k < learn_permutations.size(); ++k) learn_permutations[k]->apply(vs, learn_deltas[k]);
    trees.push_back({tree.splits, delta, leaf_weight});

    // Metrics of this iteration. The fused learn metric comes from the next iteration's weak pass
    // (its approx is this one), which then reports this iteration; the last one reports now.
    const bool last = it + 1 == p.iterations;
    const bool want_learn = learn_metric_wanted(it);
    const bool defer = want_learn && fused >= 0 && !last;
    for (std::size_t k = 0; k < metrics.size(); ++k) {
      tracked_metric& t = metrics[k];
      t.learn.push_back(std::nan(""));
      t.eval.push_back(std::nan(""));
      const bool from_next_pass = defer && static_cast<int>(k) == fused;
      if (t.on_learn && want_learn && !from_next_pass) {
        t.learn.back() = compute_metric(*b, t.m.spec, false, table_classes);
      }
      if (has_eval) t.eval.back() = compute_metric(*b, t.m.spec, true, table_classes);
    }
    const double elapsed = std::chrono::duration<double>(clock_type::now() - started).count();
    if (defer) {
      pending = it;
      pending_elapsed = elapsed;
      continue;
    }
    if (report(it, elapsed)) break;
  }

  if (has_eval && p.verbose) {
    ctx.log(log::level::info, log_category,
            fmt::format("bestTest = {:.10g}\nbestIteration = {}", best_value, best_iteration));
  }
  std::size_t keep = trees.size();
  if (r.use_best_model && best_iteration >= 0) {
    keep = static_cast<std::size_t>(best_iteration) + 1;
    if (p.verbose && keep < trees.size()) {
      ctx.log(log::level::info, log_category, fmt::format("Shrink model to first {} iterations.", keep));
    }
  }
  trees.resize(keep);
  write_train_dir(p, metrics, has_eval, logged, passed, p.iterations);

  // The model (§ model assembly): float splits become borders; the info holds the parameters.
  model_inputs mi;
  mi.trees = &trees;
  mi.borders = &borders;
  mi.nan_modes = &modes;
  mi.categorical = cat;
  if (cat) borders.resize(std::max(borders.size(), static_cast<std::size_t>(cat->float_count) + cat->derived.size()));
  for (std::int64_t j = 0; j < learn.num_features(); ++j) mi.feature_names.push_back(learn.feature_name(j));
  mi.loss = loss;
  mi.bias = bias;
  std::vector<std::string> class_names;
  if (p.loss.kind == loss_kind::logloss || multiclass) {
    for (int c = 0; c < std::max(2, facts.classes); ++c) {
      const auto k = static_cast<std::size_t>(c);
      class_names.push_back(!p.class_name_texts.empty() ? p.class_name_texts[k]
                            : class_values.empty()      ? std::to_string(c)
                                                        : fmt::format("{}", class_values[k]));
    }
  }
  mi.class_names = class_names;
  mi.class_names_are_text = !p.class_name_texts.empty();
  mi.classes_count = classes_count;
  mi.params_json = catboost_params_json(r, class_names);
  mi.output_options_json = catboost_output_options_json(r);
  // CatBoost's "training" info (it reads these keys when it loads a model): per-iteration learn
  // metrics, per-iteration lists (one per eval set) of eval metrics, and the best values. As in
  // CatBoost, the history covers every iteration run, also those use_best_model cut off the model.
  nlohmann::json history{{"learn_metrics_history", nlohmann::json::array()},
                         {"test_metrics_history", nlohmann::json::array()},
                         {"learn_best_error", nlohmann::json::object()},
                         {"test_best_error", nlohmann::json::array()}};
  const std::size_t run = metrics.empty() ? 0 : metrics[0].learn.size();
  for (std::size_t it = 0; it < run; ++it) {
    nlohmann::json lh = nlohmann::json::object(), th = nlohmann::json::object();
    for (const auto& t : metrics) {
      if (t.on_learn && !std::isnan(t.learn[it])) lh[t.m.name] = t.learn[it];
      if (has_eval) th[t.m.name] = t.eval[it];
    }
    history["learn_metrics_history"].push_back(lh);
    if (has_eval) history["test_metrics_history"].push_back(nlohmann::json::array({th}));
  }
  for (const auto& t : metrics) {
    const bool up = higher_is_better(t.m.spec.kind);
    const auto best_of = [&](const std::vector<double>& v) {
      double best = std::nan("");
      for (std::size_t it = 0; it < run; ++it) {
        if (!std::isnan(v[it]) && (std::isnan(best) || (up ? v[it] > best : v[it] < best))) best = v[it];
      }
      return best;
    };
    if (t.on_learn && !std::isnan(best_of(t.learn))) history["learn_best_error"][t.m.name] = best_of(t.learn);
  }
  if (has_eval && run > 0) {
    nlohmann::json tb = nlohmann::json::object();
    const std::size_t at = best_iteration >= 0 ? static_cast<std::size_t>(best_iteration) : run - 1;
    for (const auto& t : metrics) tb[t.m.name] = t.eval[at];
    history["test_best_error"].push_back(tb);
    history["best_iteration"] = best_iteration;
  }
  mi.training_json = nlohmann::json{{"metrics", history}}.dump();
  return build_model(mi);
}

}  // namespace cbg::train
