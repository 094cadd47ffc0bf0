// SPDX-License-Identifier: Apache-2.0
// Multi-GPU (issue 9) on the GPU: training sharded over 2 and 4 devices gives the single-GPU model
// byte for byte (every info but the `devices` parameter itself), and sharded prediction gives the
// single-device predictions bit for bit. Skipped where fewer devices are visible.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <chrono>
#include <map>
#include <optional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cbg/apply/evaluator.hpp"
#include "cbg/ctr/combinations.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/dist/train.hpp"
#include "cbg/dist/predict.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/memory/resource.hpp"
#include "cbg/model/io.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/policy.hpp"
#include "cbg/runtime/profiler.hpp"
#include "cbg/train/trainer.hpp"
#include "support/catch.hpp"
#include "support/dlpack_fixtures.hpp"
#include "unit/ctr/cat_data.hpp"
#include "unit/ctr/combo_data.hpp"
#include "unit/train/train_data.hpp"

namespace tr = cbg::train;

namespace {

// Catch2 2 has no SKIP: a warning and an early return, as CBG_REQUIRE_GPU does.
#define CBG_REQUIRE_GPUS(n)                                                                                \
  do {                                                                                                     \
    if (::cbg::visible_device_count() < (n)) {                                                             \
      WARN("SKIPPED: " << (n) << " CUDA devices needed, " << ::cbg::visible_device_count() << " visible"); \
      return;                                                                                              \
    }                                                                                                      \
    if (!::cbg::dist::nccl_available()) {                                                                  \
      WARN("SKIPPED: NCCL is not available");                                                              \
      return;                                                                                              \
    }                                                                                                      \
  } while (0)

// The generated data set shared with the training tests, with this file's constants (weights
// always drawn, so that the data stays the same whether a case trains with them or not).
using data = cbg::test::train_data;

data make_data(std::int64_t rows, int features, const std::string& kind, std::uint32_t seed) {
  return cbg::test::make_train_data(rows, features, kind, seed, {/*nan_every=*/11, /*noise=*/0.3f, /*weights=*/true});
}

std::shared_ptr<cbg::context> context_on(int device) {
  cbg::context_options o;
  o.device = device;
  return cbg::context::create(o);
}

std::string with_devices(const std::string& params, const std::string& devices) {
  nlohmann::json j = nlohmann::json::parse(params);
  j["devices"] = devices;
  return j.dump();
}

// The sharded model must be the single-GPU one: the same file once the `devices` parameter, which
// the model's params record, is made the same.
void check_same_model(const cbg::model::model& single, cbg::model::model sharded) {
  REQUIRE(sharded.tree_count() == single.tree_count());
  std::size_t first_split_diff = single.tree_splits.size();
  for (std::size_t i = 0; i < std::min(single.tree_splits.size(), sharded.tree_splits.size()); ++i) {
    if (!(single.tree_splits[i] == sharded.tree_splits[i])) {
      first_split_diff = i;
      break;
    }
  }
  INFO("first differing split: " << first_split_diff << " of " << single.tree_splits.size());
  CHECK(first_split_diff == single.tree_splits.size());
  CHECK(sharded.tree_splits.size() == single.tree_splits.size());
  std::size_t leaf_diff = 0;
  double gap = 0;
  for (std::size_t i = 0; i < std::min(single.leaf_values.size(), sharded.leaf_values.size()); ++i) {
    leaf_diff += single.leaf_values[i] != sharded.leaf_values[i] ? 1 : 0;
    gap = std::max(gap, std::fabs(single.leaf_values[i] - sharded.leaf_values[i]));
  }
  INFO("leaf values that differ: " << leaf_diff << ", largest gap " << gap);
  CHECK(leaf_diff == 0);
  const std::string& a = *single.info_value("training");
  const std::string& b = *sharded.info_value("training");
  std::size_t at = 0;
  while (at < std::min(a.size(), b.size()) && a[at] == b[at]) ++at;
  INFO("metric history differs at " << at << ": '" << a.substr(at > 30 ? at - 30 : 0, 90) << "' vs '"
                                    << b.substr(at > 30 ? at - 30 : 0, 90) << "'");
  CHECK(a == b);
  for (auto& [key, value] : sharded.info) {
    if (key == "params") value = *single.info_value("params");
  }
  CHECK(cbg::model::write_cbm(sharded) == cbg::model::write_cbm(single));
}

}  // namespace

TEST_CASE("sharded training on 2 and 4 GPUs gives the single-GPU model byte for byte", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  auto ctx = context_on(0);
  struct train_case {
    const char* kind;
    const char* params;
    bool weights;
  };
  const std::vector<train_case> cases = {
      {"regression", R"({"loss_function": "RMSE", "iterations": 20, "custom_metric": ["R2", "MAE"]})", true},
      {"binary", R"({"loss_function": "Logloss", "iterations": 20, "custom_metric": ["AUC", "F1"],
                     "leaf_estimation_iterations": 4, "bootstrap_type": "Bernoulli", "subsample": 0.7})",
       false},
      {"multiclass", R"({"loss_function": "MultiClass", "iterations": 10, "depth": 4})", false},
      {"regression", R"({"loss_function": "Quantile:alpha=0.3", "iterations": 10})", true},
      {"regression", R"({"loss_function": "RMSE", "iterations": 15, "score_function": "L2", "depth": 8,
                        "bagging_temperature": 2, "early_stopping_rounds": 5})",
       false},
      // The device-side leaf search (issue 7) with its passes reduced over the ranks: backtracking
      // (the value of each candidate), a bounded loss, MVS (the global mvs_reg) and Poisson draws.
      {"binary", R"({"loss_function": "Logloss", "iterations": 12, "leaf_estimation_iterations": 6,
                     "leaf_estimation_backtracking": "Armijo", "bootstrap_type": "MVS", "subsample": 0.6})",
       true},
      {"binary", R"({"loss_function": "Poisson", "iterations": 12, "leaf_estimation_iterations": 3,
                         "leaf_estimation_backtracking": "AnyImprovement", "bootstrap_type": "Poisson",
                         "subsample": 0.5})",
       false},
      {"multiclass", R"({"loss_function": "MultiClass", "iterations": 6, "depth": 3, "bootstrap_type": "MVS",
                         "mvs_reg": 0.1, "leaf_estimation_iterations": 2})",
       false},
  };
  for (const train_case& c : cases) {
    const data d = make_data(50000, 6, c.kind, 5);
    const data e = make_data(13000, 6, c.kind, 6);
    auto learn = cbg::test::device_pool(ctx, d, c.weights);
    auto eval = cbg::test::device_pool(ctx, e, false);
    tr::train_options o;
    o.eval = eval.pool.get();
    const cbg::model::model single = tr::train(*learn.pool, tr::parse_params(with_devices(c.params, "0")), o);
    for (const int n : {2, 4}) {
      if (cbg::visible_device_count() < n) {
        WARN("SKIPPED: " << n << " devices");
        continue;
      }
      CAPTURE(c.params, n);
      const cbg::model::model sharded =
          tr::train(*learn.pool, tr::parse_params(with_devices(c.params, n == 2 ? "0:1" : "0-3")), o);
      check_same_model(single, sharded);
    }
  }
}

// The A/B switches of the policy (the unfused leaf passes, no spinning) and stage timings change how
// the ranks work, never the model; the profile holds the hand-offs and each rank's backend calls.
TEST_CASE("sharded training: the policy's switches and profiling keep the single-GPU model", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  auto ctx = context_on(0);
  cbg::context_options po;
  po.device = 0;
  po.profile = true;
  auto profiled = cbg::context::create(po);
  cbg::policy unfused;
  unfused.dist_fused_pass = false;
  unfused.dist_spin_us = 0;
  cbg::set_policy(*profiled, unfused);
  const std::string params = R"({"loss_function": "Logloss", "iterations": 8, "leaf_estimation_iterations": 4,
                                 "leaf_estimation_backtracking": "Armijo", "custom_metric": ["AUC"]})";
  const data d = make_data(40000, 6, "binary", 7);
  auto learn = cbg::test::device_pool(ctx, d, true);
  auto learn_profiled = cbg::test::device_pool(profiled, d, true);
  const cbg::model::model single = tr::train(*learn.pool, tr::parse_params(with_devices(params, "0")), {});
  const cbg::model::model sharded = tr::train(*learn_profiled.pool, tr::parse_params(with_devices(params, "0:1")), {});
  check_same_model(single, sharded);
  std::map<std::string, cbg::stage_total> by;
  for (const cbg::stage_total& t : profiled->stage_profiler().totals()) by[t.stage] = t;
  CHECK(by["dist.weak_target"].calls == 8);
  CHECK(by["rank 0: boosting.weak_target"].calls == 8);
  CHECK(by["rank 1: boosting.estimate_leaves"].calls == 8);
  CHECK(by["rank 1: boosting.leaf_pass (device): exchange"].calls > 0);
  CHECK(by["dist.rank 1: collectives"].calls > 0);
  CHECK(ctx->stage_profiler().totals().empty());  // profiling off: nothing recorded
}

// Categorical features: the one-hot and ordered CTR columns are computed once, on the pool's device,
// over all learn rows (the statistics every shard sees are the single-GPU ones), then sharded like
// float columns; the model's CTR tables come from all learn rows too.
TEST_CASE("sharded training on categorical data gives the single-GPU model byte for byte", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  auto ctx = context_on(0);
  for (const bool binary : {true, false}) {
    auto learn = cbg::test::make_cat_data(ctx, 60000, binary, 71, true);  // 4 shards: 3 x 16384 + 10848
    auto eval = cbg::test::make_cat_data(ctx, 9000, binary, 72, true);
    const std::string params = binary ? R"({"loss_function": "Logloss", "iterations": 15, "one_hot_max_size": 4})"
                                      : R"({"loss_function": "RMSE", "iterations": 15})";
    tr::train_options o;
    o.eval = eval->pool.get();
    const cbg::model::model single = tr::train(*learn->pool, tr::parse_params(with_devices(params, "0")), o);
    REQUIRE(!single.ctr_features.empty());
    for (const int n : {2, 4}) {
      if (cbg::visible_device_count() < n) continue;
      INFO(n << " devices, " << (binary ? "Logloss" : "RMSE"));
      check_same_model(single,
                       tr::train(*learn->pool, tr::parse_params(with_devices(params, n == 2 ? "0:1" : "0-3")), o));
    }
  }
}

// Feature combinations: the trainer's extension works on the pool's device over all learn rows (the
// single-GPU candidate columns, tables and eval values); each rank's search reads its rows of the
// columns and all-reduces their histograms. With an eval set, score noise and model-size weights.
TEST_CASE("sharded training with feature combinations gives the single-GPU model byte for byte", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  auto ctx = context_on(0);
  for (const int complexity : {2, 4}) {
    const bool binary = complexity == 2;
    auto learn = cbg::test::make_combo_data(ctx, 60000, binary, 81, true);  // 4 shards: 3 x 16384 + 10848
    auto eval = cbg::test::make_combo_data(ctx, 7000, binary, 82, true);
    const std::string params = std::string(R"({"iterations": 25, "depth": 5, "one_hot_max_size": 3, )") +
                               R"("learning_rate": 0.2, "loss_function": ")" + (binary ? "Logloss" : "RMSE") +
                               R"(", "max_ctr_complexity": )" + std::to_string(complexity) + "}";
    tr::train_options o;
    o.eval = eval->pool.get();
    const cbg::model::model single = tr::train(*learn->pool, tr::parse_params(params), o);
    std::size_t combinations = 0;
    for (const cbg::model::ctr_feature& f : single.ctr_features) {
      combinations += cbg::ctr::projection_length(f.ctr.base.proj) > 1 ? 1 : 0;
    }
    REQUIRE(combinations > 0);
    for (const int n : {2, 4}) {
      if (cbg::visible_device_count() < n) {
        WARN("SKIPPED: " << n << " devices with max_ctr_complexity " << complexity << ": "
                         << cbg::visible_device_count() << " visible");
        continue;
      }
      INFO(n << " devices, max_ctr_complexity " << complexity);
      check_same_model(single,
                       tr::train(*learn->pool, tr::parse_params(with_devices(params, n == 2 ? "0:1" : "0-3")), o));
    }
  }
}

TEST_CASE("sharded training: a small eval set (ranks without eval rows), devices in another order", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  auto ctx = context_on(0);
  const data d = make_data(30000, 5, "binary", 8);
  const data e = make_data(3000, 5, "binary", 9);
  auto learn = cbg::test::device_pool(ctx, d, false);
  auto eval = cbg::test::device_pool(ctx, e, false);
  tr::train_options o;
  o.eval = eval.pool.get();
  const std::string params = R"({"loss_function": "Logloss", "iterations": 12, "eval_metric": "AUC"})";
  const cbg::model::model single = tr::train(*learn.pool, tr::parse_params(params), o);
  check_same_model(single, tr::train(*learn.pool, tr::parse_params(with_devices(params, "1:0")), o));
  if (cbg::visible_device_count() >= 4)
    check_same_model(single, tr::train(*learn.pool, tr::parse_params(with_devices(params, "0-3")), o));
  // One device other than the pool's: the same path with one rank (no NCCL traffic).
  check_same_model(single, tr::train(*learn.pool, tr::parse_params(with_devices(params, "1")), o));
}

namespace {

// Rows [first, first + count) of a data set.
data rows_of(const data& d, std::int64_t first, std::int64_t count) {
  data out;
  out.rows = count;
  out.features = d.features;
  for (int f = 0; f < d.features; ++f) {
    const auto* col = d.x.data() + static_cast<std::size_t>(f * d.rows + first);
    out.x.insert(out.x.end(), col, col + count);
  }
  out.label.assign(d.label.begin() + first, d.label.begin() + first + count);
  out.weight.assign(d.weight.begin() + first, d.weight.begin() + first + count);
  return out;
}

}  // namespace

TEST_CASE("a communicator from a unique id: one rank gives the single-GPU model through the border sample",
          "[gpu][dist]") {
  CBG_REQUIRE_GPUS(1);
  // More rows than the border subset (200000): the sample is drawn, gathered and quantized with the
  // rank's rows; the borders and bins must still be the single-GPU ones.
  const data d = make_data(260000, 6, "regression", 21);
  const std::string params = R"({"loss_function": "RMSE", "iterations": 8, "depth": 5})";
  auto plain = context_on(0);
  auto learn = cbg::test::device_pool(plain, d, true);
  const cbg::model::model single = tr::train(*learn.pool, tr::parse_params(params), {});
  auto ranked = context_on(0);
  cbg::dist::attach_communicator(
      ranked, cbg::dist::make_id_communicator(cbg::dist::nccl_unique_id(), 0, 1, 0, std::chrono::milliseconds(60000)));
  auto learn1 = cbg::test::device_pool(ranked, d, true);
  check_same_model(single, tr::train(*learn1.pool, tr::parse_params(params), {}));
  ranked->memory()->reset_peak();
  (void)tr::train(*learn1.pool, tr::parse_params(params), {});  // the communicator is kept on the context
  WARN("one rank of 260000 x 6: peak device memory " << static_cast<double>(ranked->memory()->stats().peak) / 1e6
                                                     << " MB");
}

namespace {

// Trains rank r's rows of `learn` (and of `eval`) on device r (or device 0 for all ranks, with one
// GPU: then ranks == 1) with communicators made from one unique id; the ranks' models.
std::vector<cbg::model::model> train_ranks(const cbg::test::combo_data& learn, const std::vector<std::int64_t>& rows,
                                           const cbg::test::combo_data* eval,
                                           const std::vector<std::int64_t>& eval_rows, const std::string& params) {
  const int n = static_cast<int>(rows.size());
  const auto id = cbg::dist::nccl_unique_id();
  std::vector<std::optional<cbg::model::model>> models(static_cast<std::size_t>(n));
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      const auto k = static_cast<std::size_t>(r);
      try {
        cbg::scoped_device on(r);
        auto ctx = context_on(r);
        cbg::dist::attach_communicator(ctx,
                                       cbg::dist::make_id_communicator(id, r, n, r, std::chrono::milliseconds(120000)));
        std::int64_t first = 0, eval_first = 0;
        for (std::size_t q = 0; q < k; ++q) {
          first += rows[q];
          if (eval != nullptr) eval_first += eval_rows[q];
        }
        auto mine = cbg::test::combo_rows(ctx, learn, first, rows[k], true);
        std::unique_ptr<cbg::test::combo_data> mine_eval;
        tr::train_options o;
        if (eval != nullptr) {
          mine_eval = cbg::test::combo_rows(ctx, *eval, eval_first, eval_rows[k], true);
          o.eval = mine_eval->pool.get();
        }
        models[k] = tr::train(*mine->pool, tr::parse_params(params), o);
      } catch (const std::exception& e) {
        errors[k] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<cbg::model::model> out;
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r << ": " << errors[static_cast<std::size_t>(r)]);
    REQUIRE(models[static_cast<std::size_t>(r)].has_value());
    out.push_back(std::move(*models[static_cast<std::size_t>(r)]));
  }
  return out;
}

}  // namespace

// Categorical features over several processes: every rank gathers the categorical columns and the
// labels (and for combinations the float columns) of every rank, computes the one-hot and CTR
// columns, the tables and the combinations over all rows as one GPU does, and trains on its rows of
// them. With an eval set (its categories partly unseen in the learn rows) and without; one rank (one
// GPU) and two (rank 0 a multiple of 4096 rows: the single-GPU model byte for byte).
TEST_CASE("a communicator: categorical features and combinations give the single-GPU model byte for byte",
          "[gpu][dist]") {
  CBG_REQUIRE_GPUS(1);
  auto plain = context_on(0);
  struct variant {
    std::string params;
    bool binary, combines;
    std::vector<bool> evals;
  };
  const std::vector<variant> variants = {
      {R"("iterations": 20, "depth": 5, "max_ctr_complexity": 1, "loss_function": "Logloss")",
       true,
       false,
       {true, false}},
      {R"("iterations": 20, "depth": 5, "max_ctr_complexity": 4, "loss_function": "RMSE")", false, true, {true, false}},
      // Unset: CatBoost's rule (from 200 iterations on, 4), as on one GPU.
      {R"("iterations": 200, "depth": 2, "loss_function": "Logloss")", true, true, {true}},
  };
  for (const variant& v : variants) {
    for (const bool with_eval : v.evals) {
      auto learn = cbg::test::make_combo_data(plain, 4096 * 5 + 2345, v.binary, 91, true);
      auto eval = cbg::test::make_combo_data(plain, 4096 + 1500, v.binary, 92, true, 2, true);
      const std::string params = std::string(R"({"one_hot_max_size": 3, "learning_rate": 0.2, )") + v.params + "}";
      tr::train_options o;
      if (with_eval) o.eval = eval->pool.get();
      const cbg::model::model single = tr::train(*learn->pool, tr::parse_params(params), o);
      REQUIRE(!single.ctr_features.empty());
      std::size_t combinations = 0;
      for (const cbg::model::ctr_feature& f : single.ctr_features) {
        combinations += cbg::ctr::projection_length(f.ctr.base.proj) > 1 ? 1 : 0;
      }
      CHECK((combinations > 0) == v.combines);
      INFO(params << (with_eval ? " with an eval set" : ""));
      {
        INFO("one rank");
        const std::vector<cbg::model::model> one =
            train_ranks(*learn, {learn->rows}, with_eval ? eval.get() : nullptr, {eval->rows}, params);
        check_same_model(single, one[0]);
      }
      if (cbg::visible_device_count() < 2) {
        WARN("SKIPPED: two ranks: 2 CUDA devices needed");
        continue;
      }
      INFO("two ranks");
      const std::vector<cbg::model::model> two = train_ranks(*learn, {4096 * 3, learn->rows - 4096 * 3},
                                                             with_eval ? eval.get() : nullptr, {4096, 1500}, params);
      check_same_model(single, two[0]);
      CHECK(cbg::model::write_cbm(two[0]) == cbg::model::write_cbm(two[1]));
    }
  }
}

TEST_CASE("a communicator from a unique id: a rank whose peers never join times out", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(1);
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)cbg::dist::make_id_communicator(cbg::dist::nccl_unique_id(), 0, 2, 0, std::chrono::milliseconds(1500));
    FAIL("expected a timeout");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::cuda);
    CHECK(std::string(e.what()).find("did not complete within 1500 ms") != std::string::npos);
  }
  CHECK((std::chrono::steady_clock::now() - start < std::chrono::seconds(30)));
}

TEST_CASE(
    "communicators from a unique id: two ranks on two GPUs give the single-GPU model; a rank that stops "
    "makes the other time out",
    "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  const data d = make_data(2 * 4096 * 30 + 777, 6, "binary", 22);  // rank 0: a multiple of 4096 rows
  const std::int64_t first_rows = 4096 * 30;
  const std::string params = R"({"loss_function": "Logloss", "iterations": 10, "depth": 5})";
  auto plain = context_on(0);
  auto whole = cbg::test::device_pool(plain, d, false);
  const cbg::model::model single = tr::train(*whole.pool, tr::parse_params(params), {});
  const auto id = cbg::dist::nccl_unique_id();
  const std::vector<data> parts = {rows_of(d, 0, first_rows), rows_of(d, first_rows, d.rows - first_rows)};
  // stop_rank: -1 both train; else that rank leaves after making its communicator.
  const auto run = [&](int stop_rank, std::chrono::milliseconds timeout) {
    std::vector<std::optional<cbg::model::model>> models(2);
    std::vector<std::string> errors(2);
    std::vector<std::shared_ptr<cbg::context>> contexts = {context_on(0), context_on(1)};
    std::vector<std::thread> threads;
    const auto rank_id = stop_rank < 0 ? id : cbg::dist::nccl_unique_id();
    for (int r = 0; r < 2; ++r) {
      threads.emplace_back([&, r] {
        try {
          cbg::scoped_device on(r);
          cbg::dist::attach_communicator(contexts[static_cast<std::size_t>(r)],
                                         cbg::dist::make_id_communicator(rank_id, r, 2, r, timeout));
          if (r == stop_rank) {  // leaves without a word (its communicator freed, as a dead process's)
            cbg::dist::communicator_of(*contexts[static_cast<std::size_t>(r)])->owner->abort("this rank stopped");
            return;
          }
          auto pool =
              cbg::test::device_pool(contexts[static_cast<std::size_t>(r)], parts[static_cast<std::size_t>(r)], false);
          models[static_cast<std::size_t>(r)] = tr::train(*pool.pool, tr::parse_params(params), {});
        } catch (const std::exception& e) {
          errors[static_cast<std::size_t>(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    return std::make_pair(std::move(models), errors);
  };
  {
    auto [models, errors] = run(-1, std::chrono::milliseconds(120000));
    INFO(errors[0] << " | " << errors[1]);
    REQUIRE(models[0].has_value());
    REQUIRE(models[1].has_value());
    check_same_model(single, *models[0]);
    CHECK(cbg::model::write_cbm(*models[0]) == cbg::model::write_cbm(*models[1]));
  }
  {
    const auto start = std::chrono::steady_clock::now();
    auto [models, errors] = run(1, std::chrono::milliseconds(3000));
    // The other rank returns an error instead of hanging: the watchdog's timeout, or NCCL's own
    // report of the peer's abort, whichever comes first.
    INFO(errors[0]);
    CHECK_FALSE(models[0].has_value());
    CHECK(errors[0].find("NCCL") != std::string::npos);
    CHECK((std::chrono::steady_clock::now() - start < std::chrono::seconds(60)));
  }
}

TEST_CASE("sharded training refuses too few rows for the devices", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  auto ctx = context_on(0);
  const data d = make_data(3000, 4, "regression", 3);
  auto learn = cbg::test::device_pool(ctx, d, false);
  try {
    (void)tr::train(*learn.pool, tr::parse_params(R"({"iterations": 2, "devices": "0:1"})"), {});
    FAIL("expected an error");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::invalid_argument);
    CHECK(std::string(e.what()).find("too few") != std::string::npos);
  }
}

TEST_CASE("sharded prediction gives the single-device predictions bit for bit", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  auto ctx = context_on(0);
  const data d = make_data(20000, 6, "multiclass", 11);
  const data t = make_data(12345, 6, "multiclass", 12);
  auto learn = cbg::test::device_pool(ctx, d, false);
  auto test = cbg::test::device_pool(ctx, t, false);
  const cbg::model::model m =
      tr::train(*learn.pool, tr::parse_params(R"({"loss_function": "MultiClass", "iterations": 30})"), {});
  cbg::apply::device_model_cache cache;
  cbg::apply::predict_options po;
  po.type = cbg::model::prediction_type::probability;
  const auto shape = cbg::apply::output_shape(m, po, t.rows);
  const auto run = [&](const std::string& devices) {
    cbg::device_buffer<double> out(static_cast<std::size_t>(shape[0] * shape[1]), ctx->stream(), ctx->resource());
    cbg::mutable_tensor_view v;
    v.data = out.data();
    v.type = cbg::dtype::float64;
    v.memory = cbg::memory_kind::device;
    v.device_id = 0;
    v.rank = 2;
    v.shape[0] = shape[0];
    v.shape[1] = shape[1];
    v.strides[0] = shape[1];
    v.strides[1] = 1;
    cbg::dist::predict_to_devices(devices, cache, m, *test.pool, po, v, ctx->stream());
    std::vector<double> host(out.size());
    CBG_CUDA_TRY(cudaMemcpyAsync(host.data(), out.data(), out.size_bytes(), cudaMemcpyDeviceToHost, ctx->stream()));
    ctx->sync();
    return host;
  };
  const std::vector<double> single = run("");
  const auto differing = [&](const std::string& devices) {
    const std::vector<double> p = run(devices);
    std::size_t n = p.size() == single.size() ? 0 : single.size();
    for (std::size_t i = 0; i < std::min(p.size(), single.size()); ++i) n += p[i] != single[i] ? 1 : 0;
    return n;
  };
  CHECK(differing("0:1") == 0);
  CHECK(differing("1") == 0);
  CHECK(differing("1:0") == 0);
  if (cbg::visible_device_count() >= 4) CHECK(differing("0-3") == 0);
}

TEST_CASE("sharded training refuses Exact leaves with several devices", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  auto ctx = context_on(0);
  const data d = make_data(20000, 4, "regression", 4);
  auto learn = cbg::test::device_pool(ctx, d, false);
  const auto refused = [&](const std::string& params, const char* fragment) {
    CAPTURE(params);
    try {
      (void)tr::train(*learn.pool, tr::parse_params(params), {});
      FAIL("expected an error");
    } catch (const cbg::error& e) {
      CHECK(e.code() == cbg::status::unsupported);
      CHECK(std::string(e.what()).find(fragment) != std::string::npos);
      CHECK(std::string(e.what()).find("with several devices") != std::string::npos);
    }
  };
  refused(R"({"iterations": 2, "loss_function": "MAE", "boosting_type": "Plain", "devices": "0:1"})",
          "leaf_estimation_method Exact");
  // One device: Exact leaves work as before.
  CHECK_NOTHROW(tr::train(*learn.pool,
                          tr::parse_params(R"({"iterations": 2, "loss_function": "MAE", "boosting_type": "Plain",
                                            "devices": "0"})"),
                          {}));
}

// The reducers of one process (NCCL): gathers and reductions of the sizes and types the trainer uses
// (a few bytes to a few hundred kilobytes, odd sizes too), repeatedly; results against the host's.
TEST_CASE("local reducers: collectives give the exact results", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  for (const int n : {2, 4}) {
    if (cbg::visible_device_count() < n) continue;
    std::vector<int> devices;
    for (int d = 0; d < n; ++d) devices.push_back(d);
    const std::vector<std::unique_ptr<cbg::dist::reducer>> reds = cbg::dist::make_local_reducers(devices);
    REQUIRE(static_cast<int>(reds.size()) == n);
    const std::vector<std::size_t> gather_bytes = {8, 12, 4096, 4104, 65536, 65544};
    const std::vector<std::size_t> sum_counts = {1, 513, 8192, 8193};
    const std::vector<std::size_t> max_counts = {1, 3, 16384, 16385};
    const auto value = [](int rank, std::size_t i, int round) {
      return static_cast<std::uint64_t>(i * 0x9e3779b97f4a7c15ull +
                                        static_cast<std::uint64_t>(rank) * 0xbf58476d1ce4e5b9ull +
                                        static_cast<std::uint64_t>(round) * 0x94d049bb133111ebull);
    };
    // Per rank: gathered bytes, sums, u32 maxima, u64 maxima and minima of every round and size.
    std::vector<std::vector<std::vector<unsigned char>>> gathered(static_cast<std::size_t>(n));
    std::vector<std::vector<std::vector<std::uint64_t>>> sums(static_cast<std::size_t>(n)),
        max64(static_cast<std::size_t>(n)), min64(static_cast<std::size_t>(n));
    std::vector<std::vector<std::vector<unsigned>>> max32(static_cast<std::size_t>(n));
    std::vector<std::string> failures(static_cast<std::size_t>(n));
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        try {
          const auto ur = static_cast<std::size_t>(r);
          CBG_CUDA_TRY(cudaSetDevice(r));
          cudaStream_t s = nullptr;
          CBG_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
          void* a = nullptr;
          void* b = nullptr;
          CBG_CUDA_TRY(cudaMalloc(&a, 1 << 20));
          CBG_CUDA_TRY(cudaMalloc(&b, static_cast<std::size_t>(n) << 20));
          const auto run = [&](const std::vector<std::uint64_t>& host, std::size_t bytes, auto op) {
            CBG_CUDA_TRY(cudaMemcpyAsync(a, host.data(), bytes, cudaMemcpyHostToDevice, s));
            op();
            CBG_CUDA_TRY(cudaStreamSynchronize(s));
          };
          for (int round = 0; round < 3; ++round) {
            for (const std::size_t bytes : gather_bytes) {
              std::vector<std::uint64_t> h((bytes + 7) / 8);
              for (std::size_t i = 0; i < h.size(); ++i) h[i] = value(r, i, round);
              run(h, bytes, [&] { reds[ur]->all_gather(a, b, bytes, s); });
              std::vector<unsigned char> back(bytes * static_cast<std::size_t>(n));
              CBG_CUDA_TRY(cudaMemcpy(back.data(), b, back.size(), cudaMemcpyDeviceToHost));
              gathered[ur].push_back(std::move(back));
            }
            for (const std::size_t count : sum_counts) {
              std::vector<std::uint64_t> h(count);
              for (std::size_t i = 0; i < count; ++i) h[i] = value(r, i, round) >> 8;  // no signed overflow
              run(h, count * 8, [&] { reds[ur]->sum_i64(static_cast<long long*>(a), count, s); });
              CBG_CUDA_TRY(cudaMemcpy(h.data(), a, count * 8, cudaMemcpyDeviceToHost));
              sums[ur].push_back(h);
              for (std::size_t i = 0; i < count; ++i) h[i] = value(r, i, round);
              run(h, count * 8, [&] { reds[ur]->max_u64(static_cast<unsigned long long*>(a), count, s); });
              CBG_CUDA_TRY(cudaMemcpy(h.data(), a, count * 8, cudaMemcpyDeviceToHost));
              max64[ur].push_back(h);
              for (std::size_t i = 0; i < count; ++i) h[i] = value(r, i, round);
              run(h, count * 8, [&] { reds[ur]->min_u64(static_cast<unsigned long long*>(a), count, s); });
              CBG_CUDA_TRY(cudaMemcpy(h.data(), a, count * 8, cudaMemcpyDeviceToHost));
              min64[ur].push_back(h);
            }
            for (const std::size_t count : max_counts) {
              std::vector<std::uint64_t> h((count + 1) / 2);
              for (std::size_t i = 0; i < h.size(); ++i) h[i] = value(r, i, round);
              run(h, count * 4, [&] { reds[ur]->max_u32(static_cast<unsigned*>(a), count, s); });
              std::vector<unsigned> back(count);
              CBG_CUDA_TRY(cudaMemcpy(back.data(), a, count * 4, cudaMemcpyDeviceToHost));
              max32[ur].push_back(std::move(back));
            }
          }
          CBG_CUDA_TRY(cudaFree(a));
          CBG_CUDA_TRY(cudaFree(b));
          CBG_CUDA_TRY(cudaStreamDestroy(s));
        } catch (const std::exception& e) {
          failures[static_cast<std::size_t>(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (const std::string& f : failures) CHECK(f.empty());
    if (std::any_of(failures.begin(), failures.end(), [](const std::string& f) { return !f.empty(); })) continue;
    // The host's answers.
    std::size_t g = 0, k = 0, m = 0;
    for (int round = 0; round < 3; ++round) {
      for (const std::size_t bytes : gather_bytes) {
        std::vector<unsigned char> want;
        for (int r = 0; r < n; ++r) {
          std::vector<std::uint64_t> h((bytes + 7) / 8);
          for (std::size_t i = 0; i < h.size(); ++i) h[i] = value(r, i, round);
          const auto* p = reinterpret_cast<const unsigned char*>(h.data());
          want.insert(want.end(), p, p + bytes);
        }
        for (int r = 0; r < n; ++r) {
          CAPTURE(n, round, bytes, r);
          CHECK(gathered[static_cast<std::size_t>(r)][g] == want);
        }
        ++g;
      }
      for (const std::size_t count : sum_counts) {
        std::vector<std::uint64_t> s(count, 0), hi(count, 0), lo(count, ~0ull);
        for (int r = 0; r < n; ++r) {
          for (std::size_t i = 0; i < count; ++i) {
            s[i] += value(r, i, round) >> 8;
            hi[i] = std::max(hi[i], value(r, i, round));
            lo[i] = std::min(lo[i], value(r, i, round));
          }
        }
        for (int r = 0; r < n; ++r) {
          CAPTURE(n, round, count, r);
          CHECK(sums[static_cast<std::size_t>(r)][k] == s);
          CHECK(max64[static_cast<std::size_t>(r)][k] == hi);
          CHECK(min64[static_cast<std::size_t>(r)][k] == lo);
        }
        ++k;
      }
      for (const std::size_t count : max_counts) {
        std::vector<unsigned> hi(count, 0);
        for (int r = 0; r < n; ++r) {
          std::vector<std::uint64_t> h((count + 1) / 2);
          for (std::size_t i = 0; i < h.size(); ++i) h[i] = value(r, i, round);
          std::vector<unsigned> words(count);
          std::memcpy(words.data(), h.data(), count * 4);
          for (std::size_t i = 0; i < count; ++i) hi[i] = std::max(hi[i], words[i]);
        }
        for (int r = 0; r < n; ++r) {
          CAPTURE(n, round, count, r);
          CHECK(max32[static_cast<std::size_t>(r)][m] == hi);
        }
        ++m;
      }
    }
  }
}

namespace {

// Runs body(rank, stream) on one thread per rank (device `rank`, a stream of its own); the ranks'
// errors (empty where none).
template <class F>
std::vector<std::string> on_rank_threads(int n, F body) {
  std::vector<std::string> failures(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      cudaStream_t s = nullptr;
      try {
        CBG_CUDA_TRY(cudaSetDevice(r));
        CBG_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        body(r, s);
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(r)] = e.what();
      }
      if (s != nullptr) (void)cudaStreamDestroy(s);
    });
  }
  for (auto& t : threads) t.join();
  return failures;
}

// NCCL reducers over devices 0 .. n - 1; none when fewer are visible.
std::vector<std::unique_ptr<cbg::dist::reducer>> reducers_of_first(int n) {
  if (cbg::visible_device_count() < n) return {};
  std::vector<int> devices(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) devices[static_cast<std::size_t>(d)] = d;
  return cbg::dist::make_local_reducers(devices);
}

}  // namespace

TEST_CASE("local reducers: the reduce-scatter gives each rank the sum of its block", "[gpu][dist]") {
  CBG_REQUIRE_GPUS(2);
  for (const int n : {2, 4}) {
    const std::vector<std::unique_ptr<cbg::dist::reducer>> reds = reducers_of_first(n);
    if (reds.empty()) continue;
    const auto value = [](int rank, std::size_t i) {
      return static_cast<long long>(
                 (i * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(rank) * 0xbf58476d1ce4e5b9ull) >> 8) -
             (1ll << 54);
    };
    for (const std::size_t count : {std::size_t{1}, std::size_t{777}, std::size_t{16384}}) {
      std::vector<std::vector<long long>> got(static_cast<std::size_t>(n));
      const std::vector<std::string> failures = on_rank_threads(n, [&](int r, cudaStream_t s) {
        const auto ur = static_cast<std::size_t>(r);
        std::vector<long long> h(count * static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < h.size(); ++i) h[i] = value(r, i);
        const auto pool = cbg::make_async_pool_resource(r);
        cbg::device_buffer<long long> send(h.size(), s, pool);
        cbg::device_buffer<long long> recv(count, s, pool);
        CBG_CUDA_TRY(cudaMemcpyAsync(send.data(), h.data(), h.size() * 8, cudaMemcpyHostToDevice, s));
        reds[ur]->sum_scatter_i64(send.data(), recv.data(), count, s);
        got[ur].resize(count);
        CBG_CUDA_TRY(cudaMemcpyAsync(got[ur].data(), recv.data(), count * 8, cudaMemcpyDeviceToHost, s));
        CBG_CUDA_TRY(cudaStreamSynchronize(s));
      });
      for (int r = 0; r < n; ++r) {
        CAPTURE(n, count, r);
        REQUIRE(failures[static_cast<std::size_t>(r)].empty());
        std::vector<long long> want(count, 0);
        for (int q = 0; q < n; ++q) {
          for (std::size_t i = 0; i < count; ++i) want[i] += value(q, static_cast<std::size_t>(r) * count + i);
        }
        CHECK(got[static_cast<std::size_t>(r)] == want);
      }
    }
  }
}
