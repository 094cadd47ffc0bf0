// SPDX-License-Identifier: Apache-2.0
// The prediction post-processing math CatBoost's outputs depend on bit for bit: its fast exponent
// (values taken from CatBoost's own softmax and Exponent outputs) and the softmax / log-softmax rows
// built from it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cbg/model/apply_math.hpp"
#include "support/catch.hpp"

namespace cm = cbg::model;

namespace {

std::uint64_t bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

}  // namespace

TEST_CASE("CatBoost's fast exponent: its values, its clamping, its vector lanes", "[model]") {
  // Values of CatBoost's FastExpWithInfInplace (where they differ from std::exp, so does it).
  CHECK(cm::fast_exp(0.0) == 1.0);
  CHECK(cm::fast_exp(0.5) == 0x1.a61298e1e069cp+0);
  CHECK(cm::fast_exp(-1.25) == 0x1.25618372a584fp-2);
  CHECK(cm::fast_exp(3.0) == 0x1.415e5bf6fb106p+4);
  CHECK(cm::fast_exp(-20.125) == 0x1.f3fe0cb68b1f9p-30);  // std::exp: ...b20cp-30
  CHECK(cm::fast_exp(100.5) == 0x1.fcc37a76f9eaap+144);   // std::exp: ...9e76p+144
  CHECK(cm::fast_exp(-700.0) == 0x1.14f2b0fb92fdap-1010);
  // The one-value form flushes; a vector lane clamps to the bound instead.
  CHECK(cm::fast_exp(-709.0) == 0.0);
  CHECK(cm::fast_exp(710.0) == std::numeric_limits<double>::infinity());
  CHECK(cm::fast_exp_vector_lane(-709.0) == 0x1p-1022);
  CHECK(cm::fast_exp_vector_lane(-1.25) == cm::fast_exp(-1.25));
  // Elements of an array of n: groups of four take the vector lane, the tail the one-value form.
  CHECK(cm::fast_exp_at(-709.0, 3, 5) == 0x1p-1022);
  CHECK(cm::fast_exp_at(-709.0, 4, 5) == 0.0);
  CHECK(cm::fast_exp_at(-709.0, 2, 3) == 0.0);
  // Close to std::exp everywhere in range (fmath's error grows with |x|, to about 8e-14).
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-700.0, 700.0);
  for (int i = 0; i < 100000; ++i) {
    const double x = u(rng);
    REQUIRE(std::abs(cm::fast_exp(x) / std::exp(x) - 1.0) < 2e-13);
  }
}

TEST_CASE("softmax and log-softmax rows as CatBoost computes them", "[model]") {
  cm::postprocess_plan soft, log_soft;
  soft.kind = cm::post_kind::softmax;
  log_soft.kind = cm::post_kind::log_softmax;
  for (const std::vector<double>& raw : std::vector<std::vector<double>>{
           {0.25, -1.5, 2.0}, {3.0, 3.0, -2.0, 1.0, 0.5}, {1000.0, -1000.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0}}) {
    const int dim = static_cast<int>(raw.size());
    std::vector<double> p(raw.size()), lp(raw.size());
    cm::postprocess_row(soft, raw.data(), dim, [&](int j, double v) { p[static_cast<std::size_t>(j)] = v; });
    cm::postprocess_row(log_soft, raw.data(), dim, [&](int j, double v) { lp[static_cast<std::size_t>(j)] = v; });
    double mx = raw[0];
    for (double r : raw) mx = std::max(mx, r);
    double sum = 0.0;
    for (int k = 0; k < dim; ++k) sum += cm::fast_exp_at(raw[static_cast<std::size_t>(k)] - mx, k, dim);
    for (int k = 0; k < dim; ++k) {
      const auto j = static_cast<std::size_t>(k);
      CHECK(p[j] == cm::fast_exp_at(raw[j] - mx, k, dim) / sum);
      CHECK(lp[j] == (raw[j] - mx) - std::log(sum));
    }
  }
  // Differences past the exponent's range: the vector lanes give 2^-1022, the tail 0.
  const std::vector<double> far = {0.0, -800.0, -800.0, -800.0, -800.0};
  std::vector<double> p(far.size());
  cm::postprocess_row(soft, far.data(), 5, [&](int j, double v) { p[static_cast<std::size_t>(j)] = v; });
  CHECK(p[0] == 1.0);
  CHECK(p[1] == 0x1p-1022);
  CHECK(p[4] == 0.0);
}
