// SPDX-License-Identifier: Apache-2.0
// The metrics that are not sums of row terms: confusion-table metrics (TotalF1, MCC, Kappa, WKappa,
// BalancedAccuracy) and ranked ones (weighted AUC, AUC type Mu, NormalizedGini, PRAUC) against
// small hand-computed cases, the parser's metric parameters, and (tagged [gpu]) the GPU launchers
// equal to the host reference bit for bit. Parity with CatBoost's own values is tested in
// tests/python/test_metrics_catboost.py.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/train/metric.hpp"
#include "cbg/train/metric_names.hpp"
#include "cbg/train/metric_tables.hpp"
#include "cbg/train/params.hpp"
#include "kernels/train/metric_tables.hpp"
#include "src/train/metric_host.hpp"
#include "support/catch.hpp"

namespace tr = cbg::train;

namespace {

tr::metric_spec spec_of(const char* text) { return tr::parse_metric(text, "custom_metric").spec; }

tr::loss_spec binary_loss() {
  tr::loss_spec l;
  l.kind = tr::loss_kind::logloss;
  l.dims = 1;
  return l;
}

tr::loss_spec multiclass_loss(int classes) {
  tr::loss_spec l;
  l.kind = tr::loss_kind::multiclass;
  l.dims = classes;
  return l;
}

// Same bits (NaN-free values).
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

}  // namespace

TEST_CASE("confusion-table metrics: hand-computed binary and three-class tables", "[train][metric]") {
  // Binary table (true major): [[TN=3, FP=1], [FN=2, TP=4]], total 10.
  const std::vector<double> b = {3, 1, 2, 4};
  // F1(0) = 6/9, F1(1) = 8/11; support 4 and 6.
  CHECK(tr::table_metric(spec_of("TotalF1"), b, 2) == Approx((4 * 6.0 / 9 + 6 * 8.0 / 11) / 10));
  CHECK(tr::table_metric(spec_of("TotalF1:average=Macro"), b, 2) == Approx((6.0 / 9 + 8.0 / 11) / 2));
  CHECK(tr::table_metric(spec_of("TotalF1:average=Micro"), b, 2) == Approx(0.7));
  // MCC = (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)) for two classes.
  CHECK(tr::table_metric(spec_of("MCC"), b, 2) == Approx((4.0 * 3 - 1 * 2) / std::sqrt(5.0 * 6 * 4 * 5)));
  CHECK(tr::table_metric(spec_of("BalancedAccuracy"), b, 2) == Approx((4.0 / 6 + 3.0 / 4) / 2));
  // Kappa: po = 0.7, pe = (4*5 + 6*5) / 100 = 0.5.
  CHECK(tr::table_metric(spec_of("Kappa"), b, 2) == Approx((0.7 - 0.5) / 0.5));
  CHECK(tr::table_metric(spec_of("WKappa"), b, 2) == Approx(0.4));  // two classes: the weights are Kappa's

  // Three classes: [[5,1,0],[1,3,2],[0,1,4]] (total 17). Quadratic weights 0, 1/4, 1.
  const std::vector<double> t = {5, 1, 0, 1, 3, 2, 0, 1, 4};
  const double truth[3] = {6, 6, 5}, predicted[3] = {6, 5, 6};
  double observed = 0, expected = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const double w = (i - j) * (i - j) / 4.0;
      observed += w * t[static_cast<std::size_t>(i * 3 + j)];
      expected += w * truth[i] * predicted[j] / 17;
    }
  }
  CHECK(tr::table_metric(spec_of("WKappa"), t, 3) == Approx(1 - observed / expected));
  const double po = 12.0 / 17, pe = (36.0 + 30 + 30) / (17.0 * 17);
  CHECK(tr::table_metric(spec_of("Kappa"), t, 3) == Approx((po - pe) / (1 - pe)));
  // Gorodkin: (N * correct - sum t_k p_k) / sqrt((N^2 - sum p_k^2)(N^2 - sum t_k^2)).
  CHECK(tr::table_metric(spec_of("MCC"), t, 3) == Approx((17.0 * 12 - 96) / std::sqrt((289.0 - 97) * (289.0 - 97))));
}

TEST_CASE("confusion table on the host: weights, use_weights=false, argmax classes", "[train][metric]") {
  const tr::loss_spec l = multiclass_loss(3);
  // approx [dims][rows] for 4 rows: predicted classes 0, 2, 1, 2.
  const std::vector<double> approx = {1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1};
  const std::vector<float> target = {0, 2, 2, 1};
  const std::vector<float> weight = {0.5f, 2.f, 1.f, 0.25f};
  std::vector<double> c = tr::confusion_table_host(spec_of("TotalF1"), l, approx, target, weight, 3);
  CHECK(c == std::vector<double>{0.5, 0, 0, 0, 0, 0.25, 0, 1, 2});
  c = tr::confusion_table_host(spec_of("TotalF1:use_weights=false"), l, approx, target, weight, 3);
  CHECK(c == std::vector<double>{1, 0, 0, 0, 0, 1, 0, 1, 1});
}

TEST_CASE("ranked metrics on the host: ties count one half, weights multiply pairs", "[train][metric]") {
  const tr::loss_spec l = binary_loss();
  const std::vector<double> approx = {0.1, 0.4, 0.4, 0.8, -0.3};
  const std::vector<float> target = {0, 1, 0, 1, 1};
  const std::vector<float> ones(5, 1.f);
  // Positives 0.4, 0.8, -0.3 against negatives 0.1, 0.4: wins 0.5+1 + 1+1 + 0 = 3.5 of 6.
  CHECK(tr::ranked_metric_host(spec_of("AUC:use_weights=true"), l, approx, target, ones) == Approx(3.5 / 6));
  CHECK(tr::ranked_metric_host(spec_of("NormalizedGini"), l, approx, target, ones) == Approx(2 * 3.5 / 6 - 1));
  const std::vector<float> w = {2, 1, 1, 3, 0.5f};
  // Pairs weighted w_pos * w_neg: (0.4:1) vs 0.1:2 -> 2, vs 0.4:1 -> 0.5; (0.8:3) -> 3*(2+1); (-0.3) -> 0.
  const double auc = (2 + 0.5 + 9) / ((1 + 3 + 0.5) * 3);
  CHECK(tr::ranked_metric_host(spec_of("AUC:use_weights=true"), l, approx, target, w) == Approx(auc));
  CHECK(tr::ranked_metric_host(spec_of("AUC:use_weights=false"), l, approx, target, w) == Approx(3.5 / 6));
  // PRAUC (thresholds descending from recall 0, precision 1): 0.8 -> (1/3, 1); 0.4 -> (2/3, 2/3);
  // 0.1 -> (2/3, 1/2); -0.3 -> (1, 3/5). Trapezoids: 1/3 * 1 + 1/3 * (1 + 2/3) / 2 + 0 + 1/3 * (1/2 + 3/5) / 2.
  const double prauc = 1.0 / 3 + (1 + 2.0 / 3) / 6 + (0.5 + 0.6) / 6;
  CHECK(tr::ranked_metric_host(spec_of("PRAUC"), l, approx, target, ones) == Approx(prauc));
}

TEST_CASE("AUC type Mu: the mean over class pairs of the AUC of a_i - a_j", "[train][metric]") {
  const tr::loss_spec l = multiclass_loss(3);
  // Rows: classes 0, 1, 2, 0; approx [3][4].
  const std::vector<double> approx = {2, 0, 0, 1,   // a_0
                                      0, 2, 0, 1,   // a_1
                                      0, 0, 2, 1};  // a_2
  const std::vector<float> target = {0, 1, 2, 0};
  const std::vector<float> ones(4, 1.f);
  tr::metric_spec m = spec_of("AUC:type=Mu");
  // Pair (0,1): rows 0, 3 positive (scores 2, 0), row 1 negative (-2): AUC 1. Same for (0,2) and
  // (1,2) (row 1: 2, row 2: -2): the mean is 1.
  CHECK(tr::ranked_metric_host(m, l, approx, target, ones) == 1.0);
  const std::vector<float> flipped = {1, 0, 2, 1};  // pair (0,1): row 1 positive at -2 below rows 0, 3
  CHECK(tr::ranked_metric_host(m, l, approx, flipped, ones) < 1.0);
}

TEST_CASE("metric names and parameters: CatBoost's defaults, hints, refusals", "[train][metric]") {
  CHECK_FALSE(spec_of("AUC").use_weights);
  CHECK(spec_of("PRAUC").use_weights);
  CHECK(spec_of("BrierScore").use_weights);
  CHECK_FALSE(spec_of("MCC:use_weights=false").use_weights);
  CHECK(spec_of("TotalF1:average=Macro").average == tr::metric_average::macro);
  CHECK(tr::default_skip_train(tr::metric_kind::auc));
  CHECK(tr::default_skip_train(tr::metric_kind::normalized_gini));
  CHECK_FALSE(tr::default_skip_train(tr::metric_kind::prauc));
  CHECK(*tr::parse_metric("AUC:hints=skip_train~false", "eval_metric").skip_train == false);
  const auto status_of = [](const char* text) {
    try {
      (void)tr::parse_metric(text, "custom_metric");
    } catch (const cbg::error& e) {
      return e.code();
    }
    return cbg::status::ok;
  };
  CHECK(status_of("TotalF1:average=Median") == cbg::status::invalid_argument);
  CHECK(status_of("MCC:hints=skip_train~maybe") == cbg::status::invalid_argument);
  CHECK(status_of("AUC:type=OneVsAll") == cbg::status::not_implemented);
  CHECK(status_of("Kappa:average=Macro") == cbg::status::invalid_argument);  // TotalF1's only
}

TEST_CASE("GPU confusion tables and ranked metrics equal the host reference bit for bit", "[gpu][train][metric]") {
  CBG_REQUIRE_GPU();
  cbg::context_options o;
  o.device = 0;
  o.strict_no_d2h = true;  // only the table and a few scalars come back
  const auto ctx = cbg::context::create(o);
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<float> uniform(0.1f, 2.f);
  for (const int classes : {2, 4}) {
    const std::int64_t n = 70000;  // several tiles of the ordered sums
    const int dims = classes == 2 ? 1 : classes;
    const tr::loss_spec l = classes == 2 ? binary_loss() : multiclass_loss(classes);
    std::vector<double> approx(static_cast<std::size_t>(n * dims));
    // Rounded approxes: many ties, as in a trained model.
    for (double& a : approx) a = std::round(normal(rng) * 8) / 8;
    std::vector<float> target(static_cast<std::size_t>(n)), weight(static_cast<std::size_t>(n));
    for (std::int64_t r = 0; r < n; ++r) {
      target[static_cast<std::size_t>(r)] = static_cast<float>(rng() % static_cast<unsigned>(classes));
      weight[static_cast<std::size_t>(r)] = uniform(rng);
    }
    cbg::device_buffer<double> da(approx.size(), ctx->stream(), ctx->resource());
    cbg::device_buffer<float> dt(target.size(), ctx->stream(), ctx->resource());
    cbg::device_buffer<float> dw(weight.size(), ctx->stream(), ctx->resource());
    REQUIRE(cudaMemcpy(da.data(), approx.data(), da.size_bytes(), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemcpy(dt.data(), target.data(), dt.size_bytes(), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemcpy(dw.data(), weight.data(), dw.size_bytes(), cudaMemcpyHostToDevice) == cudaSuccess);
    const tr::metric_rows rows{da.data(), dt.data(), dw.data(), n};
    const tr::metric_rows unweighted{da.data(), dt.data(), nullptr, n};
    const std::vector<float> ones(static_cast<std::size_t>(n), 1.f);
    for (const char* text : {"TotalF1", "MCC", "Kappa", "WKappa", "TotalF1:use_weights=false"}) {
      CAPTURE(classes, text);
      const tr::metric_spec m = spec_of(text);
      CHECK(tr::confusion_table_device(*ctx, rows, l, m, classes) ==
            tr::confusion_table_host(m, l, approx, target, weight, classes));
      CHECK(tr::confusion_table_device(*ctx, unweighted, l, m, classes) ==
            tr::confusion_table_host(m, l, approx, target, ones, classes));
    }
    const std::vector<const char*> ranked =
        classes == 2 ? std::vector<const char*>{"AUC:use_weights=true", "AUC:use_weights=false", "PRAUC",
                                                "NormalizedGini", "PRAUC:use_weights=false"}
                     : std::vector<const char*>{"AUC:type=Mu", "AUC:type=Mu;use_weights=true"};
    for (const char* text : ranked) {
      CAPTURE(classes, text);
      const tr::metric_spec m = spec_of(text);
      CHECK(
          same_bits(tr::ranked_metric_device(*ctx, rows, l, m), tr::ranked_metric_host(m, l, approx, target, weight)));
      CHECK(same_bits(tr::ranked_metric_device(*ctx, unweighted, l, m),
                      tr::ranked_metric_host(m, l, approx, target, ones)));
    }
  }
}
