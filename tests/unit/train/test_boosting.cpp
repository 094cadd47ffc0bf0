// SPDX-License-Identifier: Apache-2.0
// The boosting side of the trainer: deterministic math, parameters, loss derivatives, the host
// boosting loop (callbacks, early stopping, determinism, the model it writes), and (tagged [gpu])
// the GPU loop equal to the host reference tree for tree and byte for byte, deterministic, and
// free of dataset-sized device-to-host copies in strict mode. Quality against CatBoost itself is
// tested in tests/python/test_train_catboost.py.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/model/host_evaluator.hpp"
#include "cbg/model/io.hpp"
#include "cbg/runtime/policy.hpp"
#include "cbg/runtime/profiler.hpp"
#include "cbg/train/boosting_math.hpp"
#include "cbg/train/det_math.hpp"
#include "cbg/train/leaf_math.hpp"
#include "cbg/train/loss.hpp"
#include "cbg/train/metric.hpp"
#include "cbg/train/params.hpp"
#include "cbg/train/reduce_math.hpp"
#include "cbg/train/trainer.hpp"
#include "unit/train/train_data.hpp"  // the generated data set
#include "src/train/boosting_common.hpp"
#include "support/catch.hpp"
#include "support/test_context.hpp"
#include "support/dlpack_fixtures.hpp"
#include "support/shrink.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tr = cbg::train;

namespace {

using cbg::test::make_context;

// The generated data set shared with the multi-GPU tests, with this file's constants.
using dataset = cbg::test::train_data;

dataset make_data(std::int64_t rows, int features, const std::string& kind, std::uint32_t seed, bool weights = false) {
  return cbg::test::make_train_data(rows, features, kind, seed, {/*nan_every=*/7, /*noise=*/0.2f, weights});
}

// The tensors a pool borrows, kept alive with it.
struct pool_fixture {
  std::unique_ptr<cbg::test::fake_tensor> x, label, weight;
  std::unique_ptr<cbg::pool> pool;
};

pool_fixture host_pool(const std::shared_ptr<cbg::context>& ctx, dataset& d, bool with_weight = false) {
  pool_fixture f;
  f.x = std::make_unique<cbg::test::fake_tensor>(d.x.data(), cbg::test::dl_float(32),
                                                 std::vector<std::int64_t>{d.rows, d.features},
                                                 std::vector<std::int64_t>{1, d.rows});
  f.label = std::make_unique<cbg::test::fake_tensor>(d.label.data(), cbg::test::dl_float(32),
                                                     std::vector<std::int64_t>{d.rows});
  cbg::pool_inputs in;
  in.features = f.x->as_borrowed();
  in.label = f.label->as_borrowed();
  if (with_weight) {
    f.weight = std::make_unique<cbg::test::fake_tensor>(d.weight.data(), cbg::test::dl_float(32),
                                                        std::vector<std::int64_t>{d.rows});
    in.weight = f.weight->as_borrowed();
  }
  f.pool = std::make_unique<cbg::pool>(cbg::pool::build(ctx, std::move(in)));
  return f;
}

std::vector<std::uint8_t> cbm_bytes(const cbg::model::model& m) { return cbg::model::write_cbm(m); }

// Raw predictions of the model for the dataset's rows (host evaluator).
std::vector<double> predict(const cbg::model::model& m, const dataset& d) {
  std::vector<float> rows(static_cast<std::size_t>(d.rows * d.features));
  for (std::int64_t r = 0; r < d.rows; ++r) {
    for (int f = 0; f < d.features; ++f) {
      rows[static_cast<std::size_t>(r * d.features + f)] = d.x[static_cast<std::size_t>(f * d.rows + r)];
    }
  }
  cbg::model::host_rows hr;
  hr.n_rows = static_cast<std::size_t>(d.rows);
  hr.floats = rows.data();
  hr.float_row_stride = static_cast<std::size_t>(d.features);
  std::vector<double> out(static_cast<std::size_t>(d.rows * m.approx_dimension));
  cbg::model::predict_host(m, hr, cbg::model::prediction_type::raw_formula_val, 0, m.tree_count(), out.data(),
                           out.size());
  return out;
}

double rmse(const std::vector<double>& p, const std::vector<float>& y) {
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += (p[i] - y[i]) * (p[i] - y[i]);
  return std::sqrt(s / static_cast<double>(y.size()));
}

// What the progress callback saw of each iteration, and the model, with the learn metric summed by the
// next weak pass (the policy's default) or by a metric pass of its own.
struct reported_training {
  std::vector<std::uint8_t> model;
  std::vector<std::string> progress;  // iteration, learn (bits), eval (bits), best iteration
};
reported_training train_reported(cbg::context& ctx, const cbg::pool& learn, const cbg::pool* eval,
                                 const std::string& params, bool fused_learn_metric, int stop_after = -1) {
  cbg::policy policy;
  policy.fused_learn_metric = fused_learn_metric;
  cbg::set_policy(ctx, policy);
  reported_training out;
  tr::train_options o;
  o.eval = eval;
  o.on_iteration = [&](const tr::progress& p) {
    out.progress.push_back(
        fmt::format("{} {} {:a} {} {:a} {}", p.iteration, p.has_learn, p.learn, p.has_eval, p.eval, p.best_iteration));
    return stop_after < 0 || p.iteration < stop_after;
  };
  out.model = cbm_bytes(tr::train(learn, tr::parse_params(params), o));
  cbg::set_policy(ctx, cbg::policy{});
  return out;
}

}  // namespace

// ---- deterministic math -----------------------------------------------------------------------------
TEST_CASE("det_exp, det_log and det_log1p are within a few ulp of libm", "[train]") {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> e(-700.0, 700.0), l(-300.0, 300.0), t(0.0, 3.0);
  for (int i = 0; i < 20000; ++i) {
    const double x = e(rng);
    CHECK(std::fabs(tr::det_exp(x) / std::exp(x) - 1) < 1e-15);
    const double y = std::pow(10.0, l(rng));
    CHECK(std::fabs(tr::det_log(y) - std::log(y)) <= 1e-15 * std::max(1.0, std::fabs(std::log(y))));
    const double z = std::pow(10.0, -t(rng) * 6);
    CHECK(std::fabs(tr::det_log1p(z) / std::log1p(z) - 1) < 1e-15);
  }
  CHECK(tr::det_exp(0.0) == 1.0);
  CHECK(tr::det_log(1.0) == 0.0);
  CHECK(tr::det_exp(-1000.0) == 0.0);
  CHECK(std::isinf(tr::det_exp(1000.0)));
  CHECK(std::isinf(tr::det_log(0.0)));
  CHECK(std::isnan(tr::det_log(-1.0)));
  CHECK(std::fabs(tr::det_log(4.9e-324) - std::log(4.9e-324)) < 1e-12);
  CHECK(std::fabs(tr::det_sigmoid(800.0) - 1.0) == 0.0);
  CHECK(tr::det_sigmoid(-800.0) >= 0.0);
  CHECK(std::fabs(tr::det_softplus(-50.0) - std::exp(-50.0)) < 1e-35);
}

TEST_CASE("counter-based draws are uniform and depend only on (seed, stream, index)", "[train]") {
  const std::uint64_t k1 = tr::stream_key(7, 3), k2 = tr::stream_key(7, 4), k3 = tr::stream_key(8, 3);
  CHECK(k1 != k2);
  CHECK(k1 != k3);
  double mean = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const double u = tr::draw_uniform(k1, i);
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    mean += u;
  }
  CHECK(std::fabs(mean / 100000 - 0.5) < 0.005);
  CHECK(tr::draw_uniform(k1, 12345) == tr::draw_uniform(tr::stream_key(7, 3), 12345));
}

TEST_CASE("ordered sums follow the tile order; fixed point never overflows", "[train]") {
  for (const std::int64_t n : {0L, 1L, 255L, 4096L, 4097L, 100000L, 5000000L}) {
    double out[2];
    tr::ordered_sum_host<2>(
        n,
        [](std::int64_t r, double* v) {
          v[0] = 1.0;
          v[1] = static_cast<double>(r % 3);
        },
        out);
    CHECK(out[0] == static_cast<double>(n));
    double expect = 0;
    for (std::int64_t r = 0; r < n; ++r) expect += static_cast<double>(r % 3);
    CHECK(out[1] == expect);
  }
  // The order, not only the value: a sum that rounds differently in row order.
  double o[1];
  tr::ordered_sum_host<1>(
      4, [](std::int64_t r, double* v) { v[0] = r == 0 ? 1e16 : 1.0; }, o);
  CHECK(o[0] == 1e16 + 2.0);  // pairwise: (1e16 + 1) + (1 + 1); in row order it would stay 1e16
  for (const double m : {1e-30, 0.3, 1.0, 7.5, 1e20}) {
    const tr::fixed_scale s = tr::fixed_scale_for(m, 10000000);
    CHECK(std::fabs(m * s.to_fixed * 1e7) < std::ldexp(1.0, 62));
    CHECK(std::fabs(m * s.to_fixed * 1e7) > std::ldexp(1.0, 57));
    CHECK(std::fabs(tr::from_fixed64(tr::to_fixed64(m, s), s) / m - 1) < 1e-10);
  }
}

// ---- losses -------------------------------------------------------------------------------------------
TEST_CASE("loss derivatives are the negative gradient and the Hessian of the loss", "[train]") {
  using tr::loss_kind;
  struct item {
    loss_kind kind;
    int dims;
    float target;
  };
  const std::vector<item> items = {
      {loss_kind::rmse, 1, 1.5f},       {loss_kind::logloss, 1, 1.0f},    {loss_kind::cross_entropy, 1, 0.3f},
      {loss_kind::multiclass, 3, 2.0f}, {loss_kind::multiclass, 3, 0.0f}, {loss_kind::multiclass_one_vs_all, 3, 1.0f},
      {loss_kind::poisson, 1, 3.0f},    {loss_kind::tweedie, 1, 2.0f},    {loss_kind::rmse_with_uncertainty, 2, 0.7f},
  };
  for (const item& it : items) {
    CAPTURE(static_cast<int>(it.kind));
    tr::loss_spec l;
    l.kind = it.kind;
    l.dims = it.dims;
    l.variance_power = 1.4;
    const double a[3] = {0.3, -0.4, 0.2};
    double der[3], hess[6];
    tr::point_derivatives(l, a, it.target, 2.0, der, hess);
    const double h = 1e-5;
    for (int i = 0; i < it.dims; ++i) {
      double ap[3] = {a[0], a[1], a[2]}, am[3] = {a[0], a[1], a[2]};
      ap[i] += h;
      am[i] -= h;
      const double grad = (tr::point_loss(l, ap, it.target) - tr::point_loss(l, am, it.target)) / (2 * h);
      CHECK(std::fabs(der[i] + 2.0 * grad) < 1e-6);
      // Second derivative (the diagonal, or H[i][i] of the full Hessian).
      double d_plus[3], d_minus[3], tmp[6];
      tr::point_derivatives(l, ap, it.target, 2.0, d_plus, tmp);
      tr::point_derivatives(l, am, it.target, 2.0, d_minus, tmp);
      const double second = -(d_plus[i] - d_minus[i]) / (2 * h);
      const double hv = tr::full_hessian(l) ? hess[tr::triangle_index(l.dims, i, i)] : hess[i];
      CHECK(std::fabs(hv - second) < 1e-5);
    }
  }
}

TEST_CASE("the fused loss and derivatives equal the separate ones bit for bit", "[train]") {
  using tr::loss_kind;
  const auto bits = [](double v) {
    std::uint64_t u;
    std::memcpy(&u, &v, sizeof(u));
    return u;
  };
  for (const loss_kind kind : {loss_kind::logloss, loss_kind::cross_entropy, loss_kind::rmse, loss_kind::poisson}) {
    tr::loss_spec l;
    l.kind = kind;
    for (const double x :
         {0.0, -0.0, 1e-300, -1e-300, 0.3, -0.3, 2.5, -2.5, 36.0, -36.0, 700.0, -700.0, 800.0, -800.0}) {
      for (const float t : {0.0f, 1.0f, 0.25f}) {
        CAPTURE(static_cast<int>(kind), x, t);
        double d1[1], h1[1], d2[1], h2[1];
        tr::point_derivatives(l, &x, t, 1.5, d1, h1);
        const double v1 = tr::point_loss(l, &x, t);
        const double v2 = tr::point_loss_and_derivatives(l, &x, t, 1.5, d2, h2);
        CHECK(bits(v1) == bits(v2));
        CHECK(bits(d1[0]) == bits(d2[0]));
        CHECK(bits(h1[0]) == bits(h2[0]));
      }
    }
  }
}

// The weak pass takes a Logloss / CrossEntropy metric's row terms from its value (-w * loss): the
// metric's own terms must be that value negated, bit for bit, wherever metric_is_weighted_loss says so.
TEST_CASE("a weighted Logloss metric's row terms are the negated weak-pass value bit for bit", "[train]") {
  using tr::loss_kind;
  using tr::metric_kind;
  const auto bits = [](double v) {
    std::uint64_t u;
    std::memcpy(&u, &v, sizeof(u));
    return u;
  };
  for (const loss_kind lk : {loss_kind::logloss, loss_kind::cross_entropy}) {
    for (const metric_kind mk : {metric_kind::logloss, metric_kind::cross_entropy}) {
      tr::loss_spec l;
      l.kind = lk;
      tr::metric_spec m;
      m.kind = mk;
      REQUIRE(tr::metric_is_weighted_loss(m, l));
      for (const double x : {0.0, -0.0, 1e-300, 0.3, -0.3, 2.5, -2.5, 36.0, -36.0, 700.0, -800.0}) {
        for (const float t : {0.0f, 1.0f, 0.25f}) {
          for (const double w : {1.0, 0.37, 2.5e-3, 7.0}) {
            CAPTURE(static_cast<int>(lk), static_cast<int>(mk), x, t, w);
            double der[1], hess[1], terms[tr::metric_terms];
            const double value = -w * tr::point_loss_and_derivatives(l, &x, t, w, der, hess);
            tr::metric_row_terms(m, l, &x, t, w, terms);
            CHECK(bits(terms[0]) == bits(-value));
            CHECK(bits(terms[1]) == bits(w));
            CHECK(terms[2] == 0.0);
            CHECK(terms[3] == 0.0);
          }
        }
      }
    }
  }
  tr::loss_spec rmse;
  rmse.kind = loss_kind::rmse;
  tr::metric_spec logloss, unweighted;
  logloss.kind = unweighted.kind = metric_kind::logloss;
  unweighted.use_weights = false;
  tr::loss_spec binary;
  binary.kind = loss_kind::logloss;
  CHECK_FALSE(tr::metric_is_weighted_loss(logloss, rmse));
  CHECK_FALSE(tr::metric_is_weighted_loss(unweighted, binary));
}

TEST_CASE("leaf estimation steps: Newton with backtracking on a one-leaf problem", "[train]") {
  // One leaf, Logloss-like sums given directly: the state machine's decisions in order.
  tr::leaf_search_config c;
  c.loss.kind = tr::loss_kind::logloss;
  c.iterations = 3;
  c.bounded = 1;
  c.leaves = 1;
  c.hess_channels = 1;
  c.rows = 100;
  c.l2 = 1.0;
  std::vector<double> point(1), direction(1), candidate(1), weight(1);
  std::vector<tr::fixed_scale> scales(3);
  tr::leaf_search_status st;
  const tr::leaf_search_view v{&st, point.data(), direction.data(), candidate.data(), weight.data(), scales.data()};
  const std::vector<tr::fixed_scale> unit(3);  // scale 1: sums are the values
  const std::vector<std::int64_t> at_zero = {30, 9, 100};
  tr::leaf_zero_point(c, v, 0, 1);
  tr::leaf_directions(c, v, at_zero.data(), unit.data(), true, 0, 1);
  tr::leaf_start(v, -70.0);
  REQUIRE(tr::leaf_begin_direction(c, v, at_zero.data(), unit.data()));
  tr::leaf_candidate(c, v, st.step, 0, 1);
  CHECK(weight[0] == 100.0);
  CHECK(direction[0] == 3.0);  // 30 / (9 + 1)
  CHECK(candidate[0] == 3.0);
  CHECK(st.gdir == 90.0);
  // A worse value: rejected, half the step.
  tr::leaf_next n = tr::leaf_after_candidate(c, v, -80.0);
  CHECK((!n.accept && n.candidate && !n.directions));
  tr::leaf_candidate(c, v, st.step, 0, 1);
  CHECK(candidate[0] == 1.5);
  CHECK(st.used == 1);
  // Better: accepted, new direction from the candidate's sums.
  n = tr::leaf_after_candidate(c, v, -60.0);
  CHECK((n.accept && n.directions));
  tr::leaf_accept(c, v, 0, 1);
  CHECK(point[0] == 1.5);
  const std::vector<std::int64_t> at_candidate = {4, 7, 100};
  tr::leaf_directions(c, v, at_candidate.data(), unit.data(), false, 0, 1);
  REQUIRE(tr::leaf_begin_direction(c, v, at_candidate.data(), unit.data()));
  tr::leaf_candidate(c, v, st.step, 0, 1);
  CHECK(candidate[0] == 2.0);  // 1.5 + 4 / 8
  // The third attempt uses up the iterations: done whatever the value.
  n = tr::leaf_after_candidate(c, v, -61.0);
  CHECK(st.mode == tr::leaf_mode_done);
  CHECK(point[0] == 1.5);
  CHECK(weight[0] == 100.0);
}

TEST_CASE("Poisson bootstrap: a row is left out with probability 1 - subsample, mean -ln(1 - subsample)", "[train]") {
  tr::bootstrap_spec b;
  b.kind = tr::bootstrap_kind::poisson;
  b.subsample = 0.66;
  b.key = tr::stream_key(11, 4);
  const int n = 200000;
  int zeros = 0;
  double total = 0;
  for (int r = 0; r < n; ++r) {
    const double k = tr::bootstrap_factor(b, r);
    CHECK(k == std::floor(k));
    if (k == 0) ++zeros;
    total += k;
  }
  CHECK(std::fabs(static_cast<double>(zeros) / n - 0.34) < 0.005);
  CHECK(std::fabs(total / n + std::log(1 - 0.66)) < 0.01);
  b.subsample = 1.0;
  CHECK(tr::bootstrap_factor(b, 17) == 1.0);
}

TEST_CASE("MVS keeps about the subsample, unbiased, the largest derivatives for sure", "[train]") {
  const std::int64_t n = 20000;  // two full blocks of 8192 and a partial one
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> der(static_cast<std::size_t>(n)), weight(static_cast<std::size_t>(n), 1.f);
  for (float& d : der) d = normal(gen);
  der[5] = 40.f;  // far above any threshold
  for (const double subsample : {0.3, 0.8}) {
    std::vector<float> d = der, w = weight;
    tr::bootstrap_spec b;
    b.kind = tr::bootstrap_kind::mvs;
    b.subsample = subsample;
    b.key = tr::stream_key(7, 1);
    cbg::train::mvs_bootstrap_host(d, w, 1, b);
    std::int64_t kept = 0;
    double total = 0;
    for (std::int64_t r = 0; r < n; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (w[i] > 0) ++kept;
      total += w[i];
      if (w[i] == 0.f)
        CHECK(d[i] == 0.f);
      else
        CHECK(std::fabs(d[i] - der[i] * w[i]) <= 1e-6f * std::fabs(der[i] * w[i]));
    }
    CAPTURE(subsample, kept, total);
    CHECK(std::fabs(static_cast<double>(kept) / n - subsample) < 0.02);
    CHECK(std::fabs(total / n - 1.0) < 0.05);
    CHECK(w[5] == 1.f);
    // The same key gives the same weights; another key others.
    std::vector<float> d2 = der, w2 = weight;
    cbg::train::mvs_bootstrap_host(d2, w2, 1, b);
    CHECK(w2 == w);
    b.key = tr::stream_key(7, 2);
    std::vector<float> d3 = der, w3 = weight;
    cbg::train::mvs_bootstrap_host(d3, w3, 1, b);
    CHECK(w3 != w);
  }
}

TEST_CASE("host training: Exact leaves are the weighted quantiles of the residuals", "[train]") {
  // Depth 1 on one feature: two leaves; the first tree's leaf values are learning_rate times the
  // alpha-quantile of (label - start) of each side, the start being the alpha-quantile of all labels.
  auto hctx = make_context(cbg::cpu_device);
  dataset d = make_data(2001, 4, "regression", 5, /*weights=*/false);
  pool_fixture hp = host_pool(hctx, d, false);
  const double alpha = 0.3;
  const cbg::model::model m =
      tr::train(*hp.pool, tr::parse_params(R"({"loss_function": "Quantile:alpha=0.3", "iterations": 1,
      "depth": 1, "leaf_estimation_method": "Exact", "learning_rate": 1.0, "random_strength": 0,
      "bootstrap_type": "No", "boost_from_average": true})"),
                {});
  REQUIRE(m.tree_count() == 1);
  const auto quantile = [alpha](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    // The smallest value whose cumulative count reaches alpha * count (unit weights are exact).
    const double goal = alpha * static_cast<double>(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (static_cast<double>(i + 1) >= goal) return v[i];
    }
    return v.back();
  };
  std::vector<double> labels(d.label.begin(), d.label.end());
  const double start = quantile(labels);
  // The one split: the only feature with a border.
  std::size_t f = 0;
  while (f < m.float_features.size() && m.float_features[f].borders.empty()) ++f;
  REQUIRE(f < m.float_features.size());
  REQUIRE(m.float_features[f].borders.size() == 1);
  const float border = m.float_features[f].borders[0];
  const auto column = static_cast<std::size_t>(m.float_features[f].flat_index);
  std::vector<double> left, right;
  for (std::int64_t r = 0; r < d.rows; ++r) {
    const double res = static_cast<double>(d.label[static_cast<std::size_t>(r)]) - start;
    (d.x[column * static_cast<std::size_t>(d.rows) + static_cast<std::size_t>(r)] > border ? right : left)
        .push_back(res);
  }
  CHECK(m.leaf_values.at(0) == quantile(left));
  CHECK(m.leaf_values.at(1) == quantile(right));
}

// ---- parameters ---------------------------------------------------------------------------------------
TEST_CASE("parameters: CatBoost's names, aliases, GPU defaults", "[train]") {
  const tr::train_params d = tr::parse_params("");
  CHECK(d.iterations == 1000);
  CHECK(d.depth == 6);
  CHECK(d.border_count == 128);
  CHECK(d.bootstrap == tr::bootstrap_kind::bayesian);
  CHECK(d.random_strength == 1.0);
  CHECK(d.score == tr::score_function::cosine);
  const tr::train_params p = tr::parse_params(
      R"({"objective": "Quantile:alpha=0.3", "eta": "0.2", "max_depth": 4, "n_estimators": "50",
          "random_state": 3, "reg_lambda": 5, "early_stopping_rounds": 7, "verbose": false})");
  CHECK(p.loss.kind == tr::loss_kind::quantile);
  CHECK(p.loss.alpha == 0.3);
  CHECK(*p.learning_rate == 0.2);
  CHECK(p.depth == 4);
  CHECK(p.iterations == 50);
  CHECK(p.random_seed == 3);
  CHECK(*p.l2_leaf_reg == 5.0);
  CHECK(p.od_type == tr::od_kind::iter);
  CHECK(p.od_wait == 7);
  CHECK_FALSE(p.verbose);
}

TEST_CASE("parameters: an unknown or invalid one is refused by name", "[train]") {
  const auto fails_with = [](const std::string& json, cbg::status code, const std::string& name) {
    CAPTURE(json);
    try {
      (void)tr::parse_params(json);
      FAIL("accepted");
    } catch (const cbg::error& e) {
      CHECK(e.code() == code);
      CHECK(std::string(e.what()).find(name) != std::string::npos);
    }
  };
  fails_with(R"({"depht": 6})", cbg::status::invalid_argument, "'depht'");
  fails_with(R"({"depth": 17})", cbg::status::invalid_argument, "'depth'");
  fails_with(R"({"depth": 2.5})", cbg::status::invalid_argument, "'depth'");
  fails_with(R"({"learning_rate": -1})", cbg::status::invalid_argument, "'learning_rate'");
  fails_with(R"({"learning_rate": "fast"})", cbg::status::invalid_argument, "'learning_rate'");
  fails_with(R"({"loss_function": "Huber"})", cbg::status::not_implemented, "'loss_function'");  // CatBoost's
  fails_with(R"({"loss_function": "Hubber"})", cbg::status::invalid_argument, "'loss_function'");
  fails_with(R"({"loss_function": "AUC"})", cbg::status::invalid_argument, "'loss_function'");
  fails_with(R"({"loss_function": "Quantile:alpha=2"})", cbg::status::invalid_argument, "'loss_function'");
  fails_with(R"({"loss_function": "Tweedie"})", cbg::status::invalid_argument, "'loss_function'");
  fails_with(R"({"bootstrap_type": "Bernoulli", "bagging_temperature": 2})", cbg::status::invalid_argument,
             "'bagging_temperature'");
  fails_with(R"({"subsample": 0.5})", cbg::status::invalid_argument, "'subsample'");
  fails_with(R"({"eval_metric": "AUC"})", cbg::status::invalid_argument, "'eval_metric'");
  fails_with(R"({"border_count": 300})", cbg::status::invalid_argument, "'border_count'");
  fails_with(R"({"iterations": 10, "n_estimators": 10})", cbg::status::invalid_argument, "'iterations'");
  fails_with(R"({"boosting_type": "Ordered"})", cbg::status::not_implemented, "'boosting_type'");
  fails_with(R"({"leaf_estimation_method": "Simple"})", cbg::status::not_implemented, "'leaf_estimation_method'");
  fails_with(R"([1, 2])", cbg::status::invalid_argument, "JSON object");
  fails_with(R"({"depth": )", cbg::status::invalid_argument, "not valid JSON");
}

TEST_CASE("parameters: the data-dependent defaults of CatBoost's GPU mode", "[train]") {
  // Worked examples of catboost-training.md §3.8 (1000 iterations).
  const auto lr = [](tr::loss_kind k, double n, bool best, bool bfa) {
    return *tr::automatic_learning_rate(k, static_cast<std::int64_t>(n), 1000, best, bfa);
  };
  CHECK(std::fabs(lr(tr::loss_kind::logloss, 1e4, false, false) - 0.0297) < 1e-4);
  CHECK(std::fabs(lr(tr::loss_kind::logloss, 1e7, false, false) - 0.0203) < 1e-4);
  CHECK(std::fabs(lr(tr::loss_kind::logloss, 1e5, true, false) - 0.0481) < 1e-4);
  CHECK(std::fabs(lr(tr::loss_kind::rmse, 1e6, false, true) - 0.0998) < 1e-4);
  CHECK(std::fabs(lr(tr::loss_kind::rmse, 1e7, true, true) - 0.1679) < 1e-4);
  CHECK(std::fabs(lr(tr::loss_kind::multiclass, 1e5, false, false) - 0.166) < 1e-3);
  CHECK_FALSE(tr::automatic_learning_rate(tr::loss_kind::cross_entropy, 1000, 1000, false, false));

  tr::data_facts f;
  f.rows = 1000;
  f.features = 30;
  f.classes = 2;
  tr::resolved_params r = tr::resolve_params(tr::parse_params(R"({"loss_function": "Logloss"})"), f);
  CHECK(r.leaf_iterations == 10);
  CHECK_FALSE(r.boost_from_average);
  CHECK(r.method == tr::leaf_method::newton);
  r = tr::resolve_params(tr::parse_params(R"({"loss_function": "Logloss", "iterations": 100})"),
                         tr::data_facts{1000, 10, 2, false, true, false});
  CHECK(r.leaf_iterations == 1);  // < 200 iterations and < 20 features
  r = tr::resolve_params(tr::parse_params(R"({"loss_function": "RMSE", "learning_rate": 0.1})"), f);
  CHECK(r.boost_from_average);
  CHECK(r.learning_rate == 0.1);
  r = tr::resolve_params(tr::parse_params(R"({"loss_function": "MAE"})"), f);
  CHECK(r.method == tr::leaf_method::gradient);
  // Exact: CatBoost's GPU choice for MAE/Quantile once boosting_type Plain is set; MAE/Quantile only.
  r = tr::resolve_params(tr::parse_params(R"({"loss_function": "MAE", "boosting_type": "Plain"})"), f);
  CHECK(r.method == tr::leaf_method::exact);
  r = tr::resolve_params(
      tr::parse_params(R"({"loss_function": "Quantile:alpha=0.2", "leaf_estimation_method": "Exact"})"), f);
  CHECK(r.method == tr::leaf_method::exact);
  CHECK_THROWS_AS(
      tr::resolve_params(tr::parse_params(R"({"loss_function": "RMSE", "leaf_estimation_method": "Exact"})"), f),
      cbg::error);
  r = tr::resolve_params(tr::parse_params(R"({"loss_function": "Tweedie:variance_power=1.5"})"), f);
  CHECK(r.leaf_iterations == 20);
  f.has_eval = true;
  f.eval_target_constant = false;
  r = tr::resolve_params(tr::parse_params(R"({"loss_function": "RMSE"})"), f);
  CHECK(r.use_best_model);
  f.classes = 4;
  r = tr::resolve_params(tr::parse_params(R"({"loss_function": "MultiClass"})"), f);
  CHECK(r.loss.dims == 4);
  f.has_baseline = true;
  r = tr::resolve_params(tr::parse_params(R"({"loss_function": "RMSE"})"), f);
  CHECK_FALSE(r.boost_from_average);
}

// ---- the host boosting loop -----------------------------------------------------------------------------
TEST_CASE("host training: every loss learns; the model predicts what training computed", "[train]") {
  auto ctx = make_context(cbg::cpu_device);
  struct loss_case {
    const char* loss;
    const char* kind;
  };
  for (const loss_case lc :
       {loss_case{"RMSE", "regression"}, loss_case{"Logloss", "binary"}, loss_case{"CrossEntropy", "binary"},
        loss_case{"MultiClass", "multiclass"}, loss_case{"MultiClassOneVsAll", "multiclass"},
        loss_case{"MAE", "regression"}, loss_case{"Quantile:alpha=0.8", "regression"}, loss_case{"Poisson", "count"},
        loss_case{"Tweedie:variance_power=1.5", "count"}, loss_case{"RMSEWithUncertainty", "regression"}}) {
    CAPTURE(lc.loss);
    dataset d = make_data(600, 6, lc.kind, 3, /*weights=*/true);
    pool_fixture f = host_pool(ctx, d, true);
    std::vector<double> learn;
    tr::train_options o;
    o.on_iteration = [&](const tr::progress& p) {
      if (p.has_learn) learn.push_back(p.learn);
      return true;
    };
    const std::string params = fmt::format(
        R"({{"loss_function": "{}", "iterations": 30, "depth": 4, "learning_rate": 0.2, "verbose": false}})", lc.loss);
    const cbg::model::model m = tr::train(*f.pool, tr::parse_params(params), o);
    CHECK(m.tree_count() == 30);
    REQUIRE(learn.size() == 30);
    CHECK(learn.back() < learn.front());
    const auto s = cbg::model::semantics(m);
    CHECK(s.loss == std::string(lc.loss).substr(0, std::string(lc.loss).find(':')));
  }
}

TEST_CASE("host training: deterministic bytes, callback stop, early stopping, best model", "[train]") {
  auto ctx = make_context(cbg::cpu_device);
  dataset d = make_data(2000, 8, "binary", 5);
  dataset e = make_data(500, 8, "binary", 6);
  pool_fixture f = host_pool(ctx, d);
  pool_fixture g = host_pool(ctx, e);
  const std::string params = R"({"loss_function": "Logloss", "iterations": 40, "verbose": false})";
  const auto a = cbm_bytes(tr::train(*f.pool, tr::parse_params(params), {}));
  const auto b = cbm_bytes(tr::train(*f.pool, tr::parse_params(params), {}));
  CHECK(a == b);
  const auto c = cbm_bytes(tr::train(*f.pool, tr::parse_params(R"({"loss_function": "Logloss", "iterations": 40,
                                                  "verbose": false, "random_seed": 9})"),
                                     {}));
  CHECK(a != c);

  tr::train_options stop;
  stop.on_iteration = [](const tr::progress& p) { return p.iteration < 4; };
  CHECK(tr::train(*f.pool, tr::parse_params(params), stop).tree_count() == 5);

  // Early stopping on an eval set that the model overfits: stops, then keeps the best prefix.
  tr::train_options eo;
  eo.eval = g.pool.get();
  int last = -1, best = -1;
  eo.on_iteration = [&](const tr::progress& p) {
    last = p.iteration;
    best = p.best_iteration;
    CHECK(p.has_eval);
    return true;
  };
  const cbg::model::model m = tr::train(
      *f.pool, tr::parse_params(R"({"loss_function": "Logloss", "iterations": 400, "learning_rate": 0.5, "depth": 8,
                   "early_stopping_rounds": 10, "verbose": false})"),
      eo);
  CHECK(last < 399);
  CHECK(last - best == 10);
  CHECK(m.tree_count() == static_cast<std::size_t>(best + 1));

  // IncToDec (CatBoost's p-value detector): a loose threshold stops soon after the eval loss turns.
  last = -1;
  const cbg::model::model inc = tr::train(
      *f.pool, tr::parse_params(R"({"loss_function": "Logloss", "iterations": 400, "learning_rate": 0.5, "depth": 8,
                   "od_type": "IncToDec", "od_pval": 0.5, "use_best_model": false, "verbose": false})"),
      eo);
  CHECK(last < 399);
  CHECK(last > best);
  CHECK(inc.tree_count() == static_cast<std::size_t>(last + 1));
}

// The loop reports an iteration once the next weak pass has summed its learn metric: the same
// numbers, model, stops and early stopping as a metric pass after every tree.
TEST_CASE("host training: the learn metric from the next weak pass reports what a metric pass does", "[train]") {
  auto ctx = make_context(cbg::cpu_device);
  dataset d = make_data(3000, 8, "binary", 15, /*weights=*/true);
  dataset e = make_data(800, 8, "binary", 16);
  pool_fixture f = host_pool(ctx, d, true);
  pool_fixture g = host_pool(ctx, e);
  for (const std::string params :
       {R"({"loss_function": "Logloss", "iterations": 30, "verbose": false, "custom_metric": ["AUC", "Accuracy"]})",
        R"({"loss_function": "Logloss", "iterations": 200, "learning_rate": 0.5, "depth": 8,
            "early_stopping_rounds": 5, "verbose": false})",
        R"({"loss_function": "CrossEntropy", "iterations": 12, "metric_period": 4, "verbose": false})"}) {
    CAPTURE(params);
    for (const cbg::pool* eval :
         {static_cast<const cbg::pool*>(nullptr), static_cast<const cbg::pool*>(g.pool.get())}) {
      const reported_training a = train_reported(*ctx, *f.pool, eval, params, true);
      const reported_training b = train_reported(*ctx, *f.pool, eval, params, false);
      CHECK(a.model == b.model);
      CHECK(a.progress == b.progress);
      CHECK_FALSE(a.progress.empty());
    }
  }
  // A callback that stops after iteration 6 keeps 7 trees either way.
  const std::string params = R"({"loss_function": "Logloss", "iterations": 20, "verbose": false})";
  const reported_training a = train_reported(*ctx, *f.pool, nullptr, params, true, 6);
  const reported_training b = train_reported(*ctx, *f.pool, nullptr, params, false, 6);
  CHECK(a.progress.size() == 7);
  CHECK(a.progress == b.progress);
  CHECK(a.model == b.model);
}

TEST_CASE("host training: an RMSE model's predictions equal the boosted approxes", "[train]") {
  auto ctx = make_context(cbg::cpu_device);
  dataset d = make_data(1000, 5, "regression", 8);
  pool_fixture f = host_pool(ctx, d);
  const cbg::model::model m = tr::train(
      *f.pool, tr::parse_params(R"({"loss_function": "RMSE", "iterations": 50, "learning_rate": 0.3, "verbose": false,
                   "custom_metric": ["R2", "MAE"]})"),
      {});
  const std::vector<double> p = predict(m, d);
  double mean = 0;
  for (float y : d.label) mean += y;
  mean /= static_cast<double>(d.rows);
  std::vector<double> constant(p.size(), mean);
  CHECK(rmse(p, d.label) < 0.6 * rmse(constant, d.label));
  // The history in the model holds the learn RMSE of the last iteration: the model's own RMSE.
  const std::string* training = m.info_value("training");
  REQUIRE(training != nullptr);
  CHECK(training->find("\"R2\"") != std::string::npos);
  const auto history = nlohmann::json::parse(*training)["metrics"]["learn_metrics_history"];
  CHECK(std::fabs(history.back()["RMSE"].get<double>() - rmse(p, d.label)) < 1e-9);
}

TEST_CASE("host training: labels that do not fit the loss are refused", "[train]") {
  auto ctx = make_context(cbg::cpu_device);
  dataset d = make_data(100, 4, "regression", 1);
  pool_fixture f = host_pool(ctx, d);
  try {
    (void)tr::train(*f.pool, tr::parse_params(R"({"loss_function": "Logloss"})"), {});
    FAIL("accepted");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::bad_data);
    CHECK(std::string(e.what()).find("target_border") != std::string::npos);
  }
  // With target_border the same labels train.
  CHECK(
      tr::train(*f.pool, tr::parse_params(R"({"loss_function": "Logloss", "target_border": 0.5, "iterations": 3})"), {})
          .tree_count() == 3);
}

// ---- the GPU boosting loop -----------------------------------------------------------------------------
using cbg::test::device_pool;
using device_pool_fixture = cbg::test::device_train_pool;

TEST_CASE("GPU training equals the host reference tree for tree, byte for byte", "[gpu][train][parts]") {
  CBG_REQUIRE_GPU();
  auto hctx = make_context(cbg::cpu_device);
  auto gctx = make_context(0);
  struct gpu_case {
    const char* kind;
    const char* params;
  };
  const std::vector<gpu_case> cases = {
      {"regression", R"({"loss_function": "RMSE", "iterations": 25, "custom_metric": ["R2", "MAE"]})"},
      {"binary", R"({"loss_function": "Logloss", "iterations": 25, "custom_metric": ["AUC", "F1", "Accuracy"],
                     "leaf_estimation_iterations": 5})"},
      {"binary", R"({"loss_function": "Logloss", "iterations": 15, "bootstrap_type": "Bernoulli",
                     "score_function": "L2", "depth": 8})"},
      {"multiclass", R"({"loss_function": "MultiClass", "iterations": 15, "depth": 4})"},
      {"multiclass", R"({"loss_function": "MultiClassOneVsAll", "iterations": 10})"},
      {"count", R"({"loss_function": "Poisson", "iterations": 15, "leaf_estimation_iterations": 4})"},
      {"regression", R"({"loss_function": "Quantile:alpha=0.3", "iterations": 15})"},
      {"regression", R"({"loss_function": "RMSEWithUncertainty", "iterations": 10})"},
      {"regression", R"({"loss_function": "RMSE", "iterations": 10, "score_function": "NewtonCosine",
                        "bagging_temperature": 3})"},
      {"binary", R"({"loss_function": "Logloss", "iterations": 12, "bootstrap_type": "MVS", "subsample": 0.5})"},
      {"binary", R"({"loss_function": "Logloss", "iterations": 10, "bootstrap_type": "Poisson", "subsample": 0.7,
                     "leaf_estimation_iterations": 3})"},
      {"regression", R"({"loss_function": "RMSE", "iterations": 10, "bootstrap_type": "MVS", "mvs_reg": 0.05})"},
      {"regression", R"({"loss_function": "Quantile:alpha=0.3", "iterations": 12, "leaf_estimation_method": "Exact"})"},
      {"regression", R"({"loss_function": "MAE", "iterations": 10, "boosting_type": "Plain", "depth": 3})"},
      // 1024 leaves x 3 channels: leaf sums past the block's shared copy (global atomics).
      {"binary", R"({"loss_function": "Logloss", "iterations": 4, "depth": 10, "leaf_estimation_iterations": 2})"},
      // Other border types, and per-feature quantization in CatBoost's syntax.
      {"regression", R"({"loss_function": "RMSE", "iterations": 8, "feature_border_type": "Median",
                        "per_float_feature_quantization": ["0:border_count=9,border_type=Uniform", "2:nan_mode=Max",
                                                           "3:border_type=MaxLogSum,border_count=16"]})"},
      {"binary", R"({"loss_function": "Logloss", "iterations": 8, "feature_border_type": "UniformAndQuantiles",
                     "border_count": 32})"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!cbg::test::in_test_part(i)) continue;
    const gpu_case& c = cases[i];
    CAPTURE(c.params);
    dataset d = make_data(cbg::test::shrunk<std::int64_t>(20000, 4000), 7, c.kind, 21, /*weights=*/true);
    dataset e = make_data(cbg::test::shrunk<std::int64_t>(3000, 1000), 7, c.kind, 22);
    pool_fixture hl = host_pool(hctx, d, true), he = host_pool(hctx, e);
    device_pool_fixture gl = device_pool(gctx, d, true), ge = device_pool(gctx, e);
    tr::train_options ho, go;
    ho.eval = he.pool.get();
    go.eval = ge.pool.get();
    const cbg::model::model hm = tr::train(*hl.pool, tr::parse_params(c.params), ho);
    const cbg::model::model gm = tr::train(*gl.pool, tr::parse_params(c.params), go);
    REQUIRE(gm.tree_count() == hm.tree_count());
    // The first tree that differs, if any, with what differs in it (not whole vectors).
    std::size_t first_diff = hm.tree_count();
    for (std::size_t t = 0; t < hm.tree_count() && first_diff == hm.tree_count(); ++t) {
      const auto at = static_cast<std::size_t>(hm.tree_start_offsets[t]);
      const auto size = static_cast<std::size_t>(hm.tree_sizes[t]);
      const bool same_splits =
          gm.tree_sizes[t] == hm.tree_sizes[t] &&
          std::equal(hm.tree_splits.begin() + at, hm.tree_splits.begin() + at + size, gm.tree_splits.begin() + at);
      if (!same_splits) first_diff = t;
    }
    INFO("first tree whose splits differ: " << first_diff << " of " << hm.tree_count());
    CHECK(first_diff == hm.tree_count());
    std::size_t leaf_diff = 0;
    double max_leaf_gap = 0;
    for (std::size_t i = 0; i < std::min(hm.leaf_values.size(), gm.leaf_values.size()); ++i) {
      if (hm.leaf_values[i] != gm.leaf_values[i]) {
        ++leaf_diff;
        max_leaf_gap = std::max(max_leaf_gap, std::fabs(hm.leaf_values[i] - gm.leaf_values[i]));
      }
    }
    INFO("leaf values that differ: " << leaf_diff << ", largest gap " << max_leaf_gap);
    CHECK(leaf_diff == 0);
    const std::string& ht = *hm.info_value("training");
    const std::string& gt = *gm.info_value("training");
    std::size_t text_at = 0;
    while (text_at < std::min(ht.size(), gt.size()) && ht[text_at] == gt[text_at]) ++text_at;
    INFO("metric history differs at character " << text_at << ": host '"
                                                << ht.substr(text_at > 40 ? text_at - 40 : 0, 120) << "' gpu '"
                                                << gt.substr(text_at > 40 ? text_at - 40 : 0, 120) << "'");
    CHECK(ht == gt);
    CHECK(cbm_bytes(gm) == cbm_bytes(hm));
  }
}

TEST_CASE("GPU training is deterministic: two runs give the same model file", "[gpu][train]") {
  CBG_REQUIRE_GPU();
  auto gctx = make_context(0);
  dataset d = make_data(cbg::test::shrunk<std::int64_t>(300000, 30000), 12, "binary", 31);
  device_pool_fixture g = device_pool(gctx, d);
  const std::string params = R"({"loss_function": "Logloss", "iterations": 30, "verbose": false})";
  const auto a = cbm_bytes(tr::train(*g.pool, tr::parse_params(params), {}));
  const auto b = cbm_bytes(tr::train(*g.pool, tr::parse_params(params), {}));
  CHECK(a == b);
}

// The one-GPU fused leaf pass (its value sum folded by the decision kernel) and the fused search levels
// (the score kernel's last block chooses; one memset per tree) against their A/B switches off: the
// same model. Logloss is bounded (a pass per iteration), RMSE not (candidate and sums passes); depth
// 10 also takes the choose kernel past 256 leaves.
TEST_CASE("GPU training: the policy's fused leaf pass and search levels give the model of the separate kernels",
          "[gpu][train]") {
  CBG_REQUIRE_GPU();
  auto gctx = make_context(0);
  dataset d = make_data(cbg::test::shrunk<std::int64_t>(200000, 30000), 10, "binary", 41);
  device_pool_fixture g = device_pool(gctx, d);
  for (const std::string params :
       {R"({"loss_function": "Logloss", "iterations": 12, "leaf_estimation_iterations": 6})",
        R"({"loss_function": "RMSE", "iterations": 8, "depth": 10, "leaf_estimation_iterations": 3,
            "leaf_estimation_method": "Newton"})"}) {
    CAPTURE(params);
    cbg::policy fused;
    REQUIRE(fused.fused_leaf_pass);
    REQUIRE(fused.fused_search_levels);
    cbg::set_policy(*gctx, fused);
    const auto a = cbm_bytes(tr::train(*g.pool, tr::parse_params(params), {}));
    cbg::policy separate;
    separate.fused_leaf_pass = false;
    separate.fused_search_levels = false;
    cbg::set_policy(*gctx, separate);
    const auto b = cbm_bytes(tr::train(*g.pool, tr::parse_params(params), {}));
    cbg::set_policy(*gctx, fused);
    CHECK(a == b);
  }
}

// The learn metric's sums taken by the next weak-target kernel (tile for tile the metric kernel's
// order) against the metric pass: the same bits, over losses, weights and a stop by callback.
TEST_CASE("GPU training: the learn metric from the next weak pass equals the metric pass bit for bit", "[gpu][train]") {
  CBG_REQUIRE_GPU();
  auto gctx = make_context(0);
  dataset d = make_data(cbg::test::shrunk<std::int64_t>(150000, 30000), 8, "binary", 43, /*weights=*/true);
  dataset e = make_data(cbg::test::shrunk<std::int64_t>(20000, 5000), 8, "binary", 44);
  dataset m = make_data(cbg::test::shrunk<std::int64_t>(60000, 20000), 6, "multiclass", 45);
  dataset r = make_data(cbg::test::shrunk<std::int64_t>(60000, 20000), 6, "regression", 46);
  device_pool_fixture gd = device_pool(gctx, d, true), ge = device_pool(gctx, e), gm = device_pool(gctx, m),
                      gr = device_pool(gctx, r);
  struct gpu_case {
    const cbg::pool* learn;
    const cbg::pool* eval;
    const char* params;
    int stop_after;
  };
  const std::vector<gpu_case> cases = {
      {gd.pool.get(), ge.pool.get(), R"({"loss_function": "Logloss", "iterations": 15, "custom_metric": ["AUC"]})", -1},
      {gd.pool.get(), nullptr, R"({"loss_function": "Logloss", "iterations": 15, "eval_metric": "Accuracy"})", 8},
      {gm.pool.get(), nullptr, R"({"loss_function": "MultiClass", "iterations": 10, "depth": 4})", -1},
      {gr.pool.get(), nullptr, R"({"loss_function": "RMSE", "iterations": 12, "custom_metric": ["R2"]})", -1},
      {gd.pool.get(), nullptr, R"({"loss_function": "Logloss", "iterations": 9, "metric_period": 4})", -1},
  };
  for (const gpu_case& c : cases) {
    CAPTURE(c.params);
    const reported_training a = train_reported(*gctx, *c.learn, c.eval, c.params, true, c.stop_after);
    const reported_training b = train_reported(*gctx, *c.learn, c.eval, c.params, false, c.stop_after);
    CHECK(a.model == b.model);
    CHECK(a.progress == b.progress);
    if (c.stop_after >= 0) CHECK(a.progress.size() == static_cast<std::size_t>(c.stop_after) + 1);
  }
}

// Stage timings wait for the stream after each backend call: they must not change the model, and they
// time every call of the loop (once per iteration for the weak target, the search and the leaves).
TEST_CASE("GPU training with stage timings gives the same model and times every backend call", "[gpu][train]") {
  CBG_REQUIRE_GPU();
  auto gctx = make_context(0);
  cbg::context_options po;
  po.device = 0;
  po.profile = true;
  auto pctx = cbg::context::create(po);
  dataset d = make_data(cbg::test::shrunk<std::int64_t>(100000, 20000), 8, "binary", 37);
  device_pool_fixture g = device_pool(gctx, d);
  device_pool_fixture p = device_pool(pctx, d);
  const std::string params = R"({"loss_function": "Logloss", "iterations": 12, "leaf_estimation_iterations": 4,
                                 "custom_metric": ["AUC"]})";
  CHECK(cbm_bytes(tr::train(*p.pool, tr::parse_params(params), {})) ==
        cbm_bytes(tr::train(*g.pool, tr::parse_params(params), {})));
  std::map<std::string, cbg::stage_total> by;
  for (const cbg::stage_total& t : pctx->stage_profiler().totals()) by[t.stage] = t;
  CHECK(by["boosting.weak_target"].calls == 12);
  CHECK(by["boosting.search"].calls == 12);
  CHECK(by["boosting.estimate_leaves"].calls == 12);
  CHECK(by["boosting.leaf_pass (device): point kernel"].calls > 0);
  CHECK(by["boosting.search"].ms > 0);
  CHECK(gctx->stage_profiler().totals().empty());
}

TEST_CASE("GPU training from device tensors copies no dataset-sized data to the host", "[gpu][train]") {
  CBG_REQUIRE_GPU();
  auto sctx = make_context(0, /*strict=*/true);
  const std::int64_t rows = cbg::test::shrunk<std::int64_t>(1000000, 100000);
  dataset d = make_data(rows, 10, "regression", 41);
  dataset e = make_data(cbg::test::shrunk<std::int64_t>(200000, 20000), 10, "regression", 42);
  device_pool_fixture g = device_pool(sctx, d, true), ge = device_pool(sctx, e);
  sctx->copies().reset();
  tr::train_options o;
  o.eval = ge.pool.get();
  const int iterations = 20;
  const cbg::model::model m =
      tr::train(*g.pool,
                tr::parse_params(fmt::format(
                    R"({{"loss_function": "RMSE", "iterations": {}, "custom_metric": "R2", "use_best_model": false}})",
                    iterations)),
                o);
  CHECK(m.tree_count() == static_cast<std::size_t>(iterations));
  const cbg::copy_totals t = sctx->copies().totals();
  const std::uint64_t d2h = t.bytes_in(cbg::copy_direction::d2h);
  INFO("device-to-host: " << d2h << " bytes in " << t.calls_in(cbg::copy_direction::d2h) << " calls");
  // Per iteration: a tree structure, its borders, leaf sums (64 leaves x 3 channels), a few
  // scalars: a few KiB. One float per row would be 4 MB (400 KB under CBGPU_TEST_SHRINK).
  CHECK(d2h < 16 * 1024 * static_cast<std::uint64_t>(iterations));
  CHECK(d2h < static_cast<std::uint64_t>(rows) * sizeof(float) / 10);
}
