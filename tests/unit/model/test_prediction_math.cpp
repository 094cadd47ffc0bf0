// SPDX-License-Identifier: Apache-2.0
// The prediction post-processing math CatBoost's outputs depend on bit for bit: its fast exponent
// (values taken from CatBoost's own softmax and Exponent outputs), the portable C-library exp and
// log the GPU uses (equal to std::exp and std::log), and the softmax / log-softmax rows built from
// them.
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

TEST_CASE("the portable C-library log equals std::log bit for bit", "[model]") {
  // glibc runs the build the GPU reproduces (its FMA variant) on x86-64 CPUs with FMA and AVX2.
  if (!__builtin_cpu_supports("fma") || !__builtin_cpu_supports("avx2")) {
    WARN("this CPU has no FMA/AVX2: glibc's log runs another variant here; not compared");
    return;
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::size_t checked = 0, differ = 0;
  const auto check = [&](double x) {
    ++checked;
    if (bits(cm::libm_log_portable(x)) != bits(std::log(x)) && differ++ < 5) {
      UNSCOPED_INFO("x = " << x << ": portable " << cm::libm_log_portable(x) << " std::log " << std::log(x));
    }
  };
  for (int i = 0; i < 300000; ++i) {
    check(1.0 + unit(rng) * 63.0);                                                // sums of softmax rows
    check(1.0 + unit(rng) * std::ldexp(1.0, -(i % 52) - 1));                      // just above 1 (the near-1 branch)
    check(1.0 - unit(rng) * std::ldexp(1.0, -(i % 52) - 1));                      // just below 1
    check(std::ldexp(0.5 + unit(rng) * 0.5, static_cast<int>(i % 2000) - 1000));  // any exponent
  }
  for (double x : {1.0, 2.0, 0.5, 1e-310, 0.0, std::numeric_limits<double>::infinity(), 1e308}) check(x);
  CHECK(std::isnan(cm::libm_log_portable(std::numeric_limits<double>::quiet_NaN())));
  CHECK(std::isnan(cm::libm_log_portable(-1.0)));
  CHECK(differ == 0);
  CHECK(checked > 1000000);
}

TEST_CASE("the portable C-library exp equals std::exp bit for bit", "[model]") {
  if (!__builtin_cpu_supports("fma") || !__builtin_cpu_supports("avx2")) {
    WARN("this CPU has no FMA/AVX2: glibc's exp runs another variant here; not compared");
    return;
  }
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::size_t checked = 0, differ = 0;
  const auto check = [&](double x) {
    ++checked;
    if (bits(cm::libm_exp_portable(x)) != bits(std::exp(x)) && differ++ < 5) {
      UNSCOPED_INFO("x = " << x << ": portable " << cm::libm_exp_portable(x) << " std::exp " << std::exp(x));
    }
  };
  for (int i = 0; i < 300000; ++i) {
    check((unit(rng) - 0.5) * 80.0);                        // sigmoid arguments
    check(-745.2 + unit(rng) * 1455.0);                     // the whole range, subnormals included
    check((unit(rng) - 0.5) * std::ldexp(1.0, -(i % 60)));  // tiny
    check(512.0 + unit(rng) * 197.0);                       // the scaled branches
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (double x : {0.0, -0.0, 1.0, -1.0, 709.78, 709.79, -745.2, -746.0, 1e300, -1e300, inf, -inf}) check(x);
  CHECK(std::isnan(cm::libm_exp_portable(std::numeric_limits<double>::quiet_NaN())));
  CHECK(differ == 0);
  CHECK(checked > 1000000);
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
