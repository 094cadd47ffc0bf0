// SPDX-License-Identifier: Apache-2.0
// The border sample of several processes (border_sample.hpp), on the host reference: for every
// split of the rows over ranks, quantizing [the gathered sample; a rank's rows] gives the borders
// of the whole set quantized at once (the single-GPU borders) and that rank's rows their bins.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/dist/border_sample.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/quantize/sampling.hpp"
#include "cbg/runtime/context.hpp"
#include "support/catch.hpp"
#include "support/dlpack_fixtures.hpp"

namespace cd = cbg::dist;
namespace q = cbg::quantize;

namespace {

// Column-major [rows, 4] float32: normal, few integers, NaNs, a heavy tail.
std::vector<float> features(std::int64_t rows, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> small(0, 9);
  std::vector<float> x(static_cast<std::size_t>(rows * 4));
  for (std::int64_t r = 0; r < rows; ++r) {
    x[static_cast<std::size_t>(r)] = normal(rng);
    x[static_cast<std::size_t>(rows + r)] = static_cast<float>(small(rng));
    x[static_cast<std::size_t>(2 * rows + r)] = small(rng) < 2 ? std::numeric_limits<float>::quiet_NaN() : normal(rng);
    x[static_cast<std::size_t>(3 * rows + r)] = std::exp(3.0f * normal(rng));
  }
  return x;
}

q::host_quantized quantize(const std::vector<float>& x, std::int64_t rows, std::uint64_t seed, const q::options& o) {
  std::vector<float> copy = x;
  cbg::test::fake_tensor t(copy.data(), cbg::test::dl_float(32), {rows, 4}, {1, rows});
  cbg::pool_inputs in;
  in.features = t.as_borrowed();
  cbg::context_options co;
  co.device = cbg::cpu_device;
  co.seed = seed;
  const cbg::pool p = cbg::pool::build(cbg::context::create(co), std::move(in));
  return q::quantize_host(p, o);
}

q::feature_settings settings_of(const q::options& o) {
  q::feature_settings s;
  s.border_count.assign(4, o.border_count);
  s.mode.assign(4, static_cast<std::uint8_t>(o.mode));
  s.type.assign(4, static_cast<std::uint8_t>(o.type));
  return s;
}

}  // namespace

TEST_CASE("border sample: every rank's borders and bins are the single-GPU ones", "[dist]") {
  const std::int64_t rows = 5000;
  const std::uint64_t seed = 7;
  const std::vector<float> x = features(rows, 3);
  struct layout {
    std::vector<std::int64_t> counts;
    std::uint32_t max_subset;
    q::subset_rule rule;
  };
  const std::vector<layout> layouts = {
      {{2500, 2500}, 1000, q::subset_rule::sampled},        // drawn by the shuffle rule
      {{1000, 3000, 1000}, 4000, q::subset_rule::sampled},  // most rows
      {{4096, 904}, 300, q::subset_rule::sampled},          // drawn by the hash-set rule (k small)
      {{17, 4900, 83}, 1200, q::subset_rule::first_rows},   // the first rows: a whole rank and part of one
      {{2000, 3000}, 200000, q::subset_rule::sampled},      // every row (rows <= the subset size)
  };
  for (const layout& l : layouts) {
    CAPTURE(l.counts, l.max_subset, static_cast<int>(l.rule));
    q::options o;
    o.border_count = 32;
    o.max_subset_size = l.max_subset;
    o.subset = l.rule;
    const q::host_quantized whole = quantize(x, rows, seed, o);
    const cd::row_split split{l.counts};
    std::vector<std::vector<float>> picked(l.counts.size());  // each rank's sample rows, column-major
    std::vector<cd::border_sample> plans;
    for (int k = 0; k < split.ranks(); ++k) plans.push_back(cd::plan_border_sample(split, k, o, settings_of(o), seed));
    const std::uint32_t m = plans[0].size;
    CHECK(m == std::min<std::uint32_t>(l.max_subset, static_cast<std::uint32_t>(rows)));
    std::int64_t held = 0;
    for (int k = 0; k < split.ranks(); ++k) {
      CHECK(plans[static_cast<std::size_t>(k)].counts == plans[0].counts);  // every rank plans the same
      CHECK(static_cast<std::int64_t>(plans[static_cast<std::size_t>(k)].local.size()) ==
            plans[0].counts[static_cast<std::size_t>(k)]);
      held += plans[0].counts[static_cast<std::size_t>(k)];
    }
    CHECK(held == m);
    if (l.rule == q::subset_rule::sampled && m < rows) {  // the quantizer's own draw, rank by rank
      const std::vector<std::uint32_t> drawn = q::border_subset(rows, l.max_subset, seed);
      std::vector<std::uint32_t> joined;
      for (int k = 0; k < split.ranks(); ++k) {
        for (const std::int64_t r : plans[static_cast<std::size_t>(k)].local) {
          joined.push_back(static_cast<std::uint32_t>(split.first(k) + r));
        }
      }
      CHECK(joined == drawn);
    }
    for (int k = 0; k < split.ranks(); ++k) {
      // [the sample in row order; rank k's rows], as the sharded backend builds it on the device.
      const std::int64_t own = split.counts[static_cast<std::size_t>(k)], first = split.first(k);
      const std::int64_t n = m + own;
      std::vector<float> joined(static_cast<std::size_t>(n * 4));
      for (int f = 0; f < 4; ++f) {
        std::int64_t at = 0;
        for (int j = 0; j < split.ranks(); ++j) {
          for (const std::int64_t r : plans[static_cast<std::size_t>(j)].local) {
            joined[static_cast<std::size_t>(f * n + at++)] = x[static_cast<std::size_t>(f * rows + split.first(j) + r)];
          }
        }
        for (std::int64_t r = 0; r < own; ++r) {
          joined[static_cast<std::size_t>(f * n + m + r)] = x[static_cast<std::size_t>(f * rows + first + r)];
        }
      }
      const q::host_quantized part = quantize(joined, n, seed, cd::sample_first_options(o, m));
      CHECK(part.border_count == whole.border_count);
      CHECK(part.borders == whole.borders);
      CHECK(part.mode == whole.mode);
      bool bins_equal = true;
      for (std::int64_t r = 0; r < own && bins_equal; ++r) {
        for (int f = 0; f < 4; ++f) bins_equal = bins_equal && part.bin(m + r, f) == whole.bin(first + r, f);
      }
      CHECK(bins_equal);
    }
  }
}

TEST_CASE("border sample: sample_first_options takes the first rows", "[dist]") {
  q::options o;
  o.max_subset_size = 200000;
  const q::options s = cd::sample_first_options(o, 1234);
  CHECK(s.max_subset_size == 1234);
  CHECK(s.subset == q::subset_rule::first_rows);
  CHECK_THROWS(cd::sample_first_options(o, 0));
}
