// SPDX-License-Identifier: Apache-2.0
// The tree search: the shared score math, the host reference on hand-made data whose best splits
// are known, and (tagged [gpu]) the GPU search equal to the host reference split for split and
// row for row, and repeatable.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/train/score_math.hpp"
#include "cbg/train/search_extension.hpp"
#include "cbg/train/tree_search.hpp"
#include "kernels/train/search_tuning.hpp"
#include "src/train/sliced_search.hpp"
#include "support/catch.hpp"
#include "support/shrink.hpp"

namespace tr = cbg::train;
namespace q = cbg::quantize;

namespace {

// A quantized pool from a bin matrix bins[f][r] (each <= border_count[f]).
q::host_quantized make_quantized(std::int64_t rows, const std::vector<std::int32_t>& border_count,
                                 const std::vector<std::vector<std::uint8_t>>& bins) {
  q::host_quantized h;
  h.rows = rows;
  h.features = static_cast<std::int64_t>(border_count.size());
  h.padded_rows = q::padded_rows_of(rows);
  h.border_count = border_count;
  h.mode.assign(border_count.size(), 0);
  h.borders.assign(border_count.size() * q::border_stride, 0.0f);
  for (std::size_t f = 0; f < border_count.size(); ++f) {
    for (int b = 0; b < border_count[f]; ++b) h.borders[f * q::border_stride + b] = static_cast<float>(b);
  }
  h.index.assign(static_cast<std::size_t>(q::groups_of(h.features) * h.padded_rows), 0u);
  for (std::int64_t f = 0; f < h.features; ++f) {
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::uint32_t b = bins[static_cast<std::size_t>(f)][static_cast<std::size_t>(r)];
      h.index[static_cast<std::size_t>((f / 4) * h.padded_rows + r)] |= b << (8 * (f % 4));
    }
  }
  return h;
}

struct search_case {
  q::host_quantized q;
  int dims = 1;
  std::vector<float> der;
  std::vector<float> weight;
};

tr::tree_structure host_search(const search_case& c, const tr::tree_search_params& p,
                               std::vector<std::uint32_t>& leaves, std::vector<double> noise = {},
                               std::vector<float> feature_weight = {}) {
  tr::host_search_input in;
  in.q = &c.q;
  in.dims = c.dims;
  in.der = c.der.data();
  in.weight = c.weight.data();
  in.noise = std::move(noise);
  in.feature_weight = std::move(feature_weight);
  return tr::search_tree_host(in, p, leaves);
}

// Rows with random bins; der = the sum of `effects` (feature, border, size: +size when the bin is
// above the border, -size otherwise) plus small noise; weight 1.
search_case additive_case(std::int64_t rows, const std::vector<std::int32_t>& border_count,
                          const std::vector<std::tuple<int, int, float>>& effects, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<std::uint8_t>> bins(border_count.size());
  for (std::size_t f = 0; f < border_count.size(); ++f) {
    std::uniform_int_distribution<int> u(0, border_count[f]);
    bins[f].resize(static_cast<std::size_t>(rows));
    for (auto& b : bins[f]) b = static_cast<std::uint8_t>(u(rng));
  }
  search_case c;
  c.q = make_quantized(rows, border_count, bins);
  c.der.assign(static_cast<std::size_t>(rows), 0.0f);
  c.weight.assign(static_cast<std::size_t>(rows), 1.0f);
  std::normal_distribution<float> noise(0.0f, 0.01f);
  for (std::int64_t r = 0; r < rows; ++r) {
    float v = noise(rng);
    for (const auto& [f, b, size] : effects) {
      v += bins[static_cast<std::size_t>(f)][static_cast<std::size_t>(r)] > b ? size : -size;
    }
    c.der[static_cast<std::size_t>(r)] = v;
  }
  return c;
}

// The leaf index a structure gives each row.
std::vector<std::uint32_t> leaves_of(const q::host_quantized& h, const tr::tree_structure& t) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(h.rows), 0u);
  for (std::size_t d = 0; d < t.splits.size(); ++d) {
    for (std::int64_t r = 0; r < h.rows; ++r) {
      if (static_cast<std::int32_t>(h.bin(r, t.splits[d].feature)) > t.splits[d].bin) {
        out[static_cast<std::size_t>(r)] |= 1u << d;
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("score math: fixed point, child terms, scores, candidate order", "[train][tree]") {
  CHECK(tr::fixed_exponent(0.0f) == 0);
  CHECK(tr::fixed_exponent(1.0f) == 23);   // 1 < 2^1
  CHECK(tr::fixed_exponent(0.75f) == 24);  // 0.75 < 2^0
  CHECK(tr::fixed_exponent(3.0f) == 22);
  const double s = tr::pow2(tr::fixed_exponent(3.0f));
  CHECK(tr::to_fixed(3.0f, s) == 3 * (1 << 22));
  CHECK(std::abs(tr::to_fixed(-3.0f, s)) <= (1 << tr::fixed_value_bits));
  CHECK(tr::to_fixed(2.5f, 1.0) == 3);
  CHECK(tr::to_fixed(-2.5f, 1.0) == -3);
  CHECK(tr::to_fixed(0.49f, 1.0) == 0);
  CHECK(tr::to_fixed(-0.51f, 1.0) == -1);
  CHECK(tr::from_fixed(3 << 22, tr::pow2(-22)) == 3.0);

  double num = 0.0;
  double den = 0.0;
  tr::add_child(tr::score_function::cosine, 1.0, 2.0, 1.0, num, den);  // mu = 1
  CHECK(num == 2.0);
  CHECK(den == 1.0);
  tr::add_child(tr::score_function::cosine, 1.0, 5.0, 0.0, num, den);  // no weight: nothing
  CHECK(num == 2.0);
  CHECK(tr::finish_score(tr::score_function::cosine, num, den + tr::cosine_den0) ==
        -2.0 / std::sqrt(1.0 + tr::cosine_den0));
  num = 0.0;
  tr::add_child(tr::score_function::l2, 3.0, 2.0, 1.0, num, den);  // -4 / 4
  CHECK(num == -1.0);
  tr::add_child(tr::score_function::l2, 3.0, 2.0, 0.0, num, den);
  CHECK(num == -1.0);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(tr::better_candidate(-1.0, 5, 5, 0.0, 0, 0));
  CHECK_FALSE(tr::better_candidate(0.0, 0, 0, -1.0, 5, 5));
  CHECK(tr::better_candidate(1.0, 1, 7, 1.0, 2, 0));   // tie: lower feature
  CHECK(tr::better_candidate(1.0, 1, 3, 1.0, 1, 4));   // tie: lower bin
  CHECK(tr::better_candidate(-0.0, 1, 3, 0.0, 1, 4));  // -0 == 0
  CHECK(tr::better_candidate(1e300, 9, 9, nan, 0, 0));
  CHECK_FALSE(tr::better_candidate(nan, 0, 0, 1e300, 9, 9));
  CHECK(tr::better_candidate(nan, 0, 0, nan, 0, 1));
}

TEST_CASE("host search: the planted splits, level by level, and the leaf index", "[train][tree]") {
  // der = 3*[f2 > 4] + 2*[f0 > 1] + 1*[f5 > 6]: the levels take f2/4, f0/1, f5/6 in that order.
  const std::vector<std::int32_t> borders = {3, 8, 8, 1, 0, 12, 255};
  for (const auto fn : {tr::score_function::cosine, tr::score_function::l2}) {
    CAPTURE(static_cast<int>(fn));
    search_case c = additive_case(1000, borders, {{2, 4, 3.0f}, {0, 1, 2.0f}, {5, 6, 1.0f}}, 11);
    tr::tree_search_params p;
    p.depth = 3;
    p.score = fn;
    std::vector<std::uint32_t> leaves;
    const tr::tree_structure t = host_search(c, p, leaves);
    REQUIRE(t.splits.size() == 3);
    CHECK(t.splits[0] == tr::split{2, 4});
    CHECK(t.splits[1] == tr::split{0, 1});
    CHECK(t.splits[2] == tr::split{5, 6});
    CHECK(leaves == leaves_of(c.q, t));
  }
}

TEST_CASE("host search: the best border of one feature; weights with zeros", "[train][tree]") {
  // One feature, 10 bins; der = +1 above bin 6, -1 at or below; weight 1: the border is 6.
  const std::int64_t rows = 200;
  std::vector<std::vector<std::uint8_t>> bins(1, std::vector<std::uint8_t>(rows));
  search_case c;
  c.der.resize(rows);
  c.weight.assign(rows, 1.0f);
  for (std::int64_t r = 0; r < rows; ++r) {
    bins[0][static_cast<std::size_t>(r)] = static_cast<std::uint8_t>(r % 10);
    c.der[static_cast<std::size_t>(r)] = r % 10 > 6 ? 1.0f : -1.0f;
  }
  c.q = make_quantized(rows, {9}, bins);
  tr::tree_search_params p;
  p.depth = 1;
  std::vector<std::uint32_t> leaves;
  CHECK(host_search(c, p, leaves).splits == std::vector<tr::split>{{0, 6}});
  // Zero-weight rows (with zero der) that disagree do not move it; they still get leaves.
  for (std::int64_t r = 0; r < rows; r += 3) {
    c.weight[static_cast<std::size_t>(r)] = 0.0f;
    c.der[static_cast<std::size_t>(r)] = 0.0f;
  }
  CHECK(host_search(c, p, leaves).splits == std::vector<tr::split>{{0, 6}});
  CHECK(leaves == leaves_of(c.q, tr::tree_structure{{{0, 6}}}));
  // Rows of bin 7 weigh 0: borders 6 and 7 make the same children; the tie goes to the lower bin.
  for (std::int64_t r = 0; r < rows; ++r) {
    if (r % 10 == 7) {
      c.weight[static_cast<std::size_t>(r)] = 0.0f;
      c.der[static_cast<std::size_t>(r)] = 0.0f;
    }
  }
  CHECK(host_search(c, p, leaves).splits == std::vector<tr::split>{{0, 6}});
}

namespace {

// Four features where 3 is a copy of 1, the feature the label depends on.
search_case copies_case() {
  search_case c = additive_case(500, {4, 4, 4, 4}, {{1, 2, 1.0f}}, 5);
  for (std::int64_t r = 0; r < c.q.rows; ++r) {
    const std::uint32_t b1 = c.q.bin(r, 1);
    auto& w = c.q.index[static_cast<std::size_t>(r)];
    w = (w & 0x00ffffffu) | (b1 << 24);
  }
  return c;
}

}  // namespace

TEST_CASE("host search: ties go to the lowest feature; noise moves the choice", "[train][tree]") {
  // Features 1 and 3 are copies: the split is on 1. A noise value that lowers feature 3's score
  // (Cosine) moves it to 3; under L2 the noise is ignored.
  search_case c = copies_case();
  tr::tree_search_params p;
  p.depth = 1;
  std::vector<std::uint32_t> leaves;
  CHECK(host_search(c, p, leaves).splits == std::vector<tr::split>{{1, 2}});
  std::vector<double> noise = {0.0, 0.0, 0.0, -1e-9};
  CHECK(host_search(c, p, leaves, noise).splits == std::vector<tr::split>{{3, 2}});
  noise = {0.0, 1e-9, 0.0, 0.0};
  CHECK(host_search(c, p, leaves, noise).splits == std::vector<tr::split>{{3, 2}});
  p.score = tr::score_function::l2;
  CHECK(host_search(c, p, leaves, noise).splits == std::vector<tr::split>{{1, 2}});
}

TEST_CASE("size_weighted_score: the weight of a feature not in the tree yet", "[train][tree]") {
  const float weight[] = {1.0f, 0.5f, 0.25f};
  const tr::split splits[] = {{2, 0}, {0, 3}};
  CHECK(tr::size_weighted_score(-8.0, nullptr, 1, splits, 2) == -8.0);
  CHECK(tr::size_weighted_score(-8.0, weight, 1, splits, 2) == -4.0);
  CHECK(tr::size_weighted_score(-8.0, weight, 2, splits, 0) == -2.0);
  CHECK(tr::size_weighted_score(-8.0, weight, 2, splits, 1) == -8.0);  // split on at level 0
}

TEST_CASE("host search: model-size weights move the choice", "[train][tree]") {
  // Features 1 and 3 are copies: the split is on 1; weighting 1 down (its scores toward 0) moves it
  // to 3, under Cosine and L2; weights of other features change nothing.
  search_case c = copies_case();
  tr::tree_search_params p;
  p.depth = 1;
  std::vector<std::uint32_t> leaves;
  for (const auto fn : {tr::score_function::cosine, tr::score_function::l2}) {
    p.score = fn;
    CHECK(host_search(c, p, leaves, {}, {1.0f, 1.0f, 1.0f, 1.0f}).splits == std::vector<tr::split>{{1, 2}});
    CHECK(host_search(c, p, leaves, {}, {0.5f, 0.9f, 0.5f, 1.0f}).splits == std::vector<tr::split>{{3, 2}});
    CHECK(host_search(c, p, leaves, {}, {0.5f, 1.0f, 0.5f, 0.9f}).splits == std::vector<tr::split>{{1, 2}});
  }
  std::vector<float> wrong(3, 1.0f);
  CHECK_THROWS_AS(host_search(c, p, leaves, {}, wrong), cbg::error);
}

TEST_CASE("host search: stops when the best split repeats or nothing can split", "[train][tree]") {
  // Only feature 1 has a border (binary): level 1's best is the same split, so the tree has one.
  search_case c = additive_case(300, {0, 1, 0}, {{1, 0, 1.0f}}, 3);
  tr::tree_search_params p;
  p.depth = 4;
  std::vector<std::uint32_t> leaves;
  const tr::tree_structure t = host_search(c, p, leaves);
  CHECK(t.splits == std::vector<tr::split>{{1, 0}});
  CHECK(leaves == leaves_of(c.q, t));
  // No feature with borders: an empty tree, every row in leaf 0.
  search_case e = additive_case(40, {0, 0}, {}, 4);
  CHECK(host_search(e, p, leaves).splits.empty());
  CHECK(leaves == std::vector<std::uint32_t>(40, 0u));
}

// A search extension with one column (its bins given) that records what the search asks.
class one_column_extension final : public tr::search_extension {
 public:
  std::vector<std::uint8_t> bins;
  std::int32_t border_count = 0;
  std::int32_t id = 0;  // the feature id its commit gives
  int commits = 0;
  std::vector<std::vector<tr::split>> asked;  // the splits chosen, per candidates() call

  void set_nan_modes(const std::vector<std::uint8_t>& /*modes*/) override {}
  std::vector<column> candidates(const std::vector<tr::split>& chosen,
                                 const std::function<float(std::int32_t, std::int32_t)>& /*float_border*/) override {
    asked.push_back(chosen);
    return {column{bins.data(), border_count}};
  }
  std::int32_t commit(std::size_t k) override {
    CHECK(k == 0);
    ++commits;
    return id;
  }
  [[nodiscard]] float border(std::int32_t /*feature*/, std::int32_t /*bin*/) const override { return 0.0f; }
  [[nodiscard]] const float* eval_values(std::int32_t /*feature*/) const override { return nullptr; }
};

TEST_CASE("host search: an extension's column wins under its committed id and moves the leaves", "[train][tree]") {
  // der = 3*[x > 4] + 2*[f0 > 1], x only in the extension's column: level 0 takes the column (under
  // the id its commit gives), level 1 the pool's f0/1; the leaf index follows the column's bins.
  const std::int64_t rows = 800;
  search_case c = additive_case(rows, {3, 8}, {{0, 1, 2.0f}}, 21);
  one_column_extension ext;
  ext.border_count = 9;
  ext.id = 7;
  std::mt19937 rng(22);
  std::uniform_int_distribution<int> u(0, 9);
  for (std::int64_t r = 0; r < rows; ++r) {
    ext.bins.push_back(static_cast<std::uint8_t>(u(rng)));
    c.der[static_cast<std::size_t>(r)] += ext.bins.back() > 4 ? 3.0f : -3.0f;
  }
  tr::host_search_input in;
  in.q = &c.q;
  in.der = c.der.data();
  in.weight = c.weight.data();
  tr::tree_search_params p;
  p.depth = 2;
  std::vector<std::uint32_t> leaves;
  const tr::tree_structure t = tr::search_tree_host(in, p, leaves, &ext);
  CHECK(t.splits == std::vector<tr::split>{{7, 4}, {0, 1}});
  CHECK(ext.commits == 1);
  REQUIRE(ext.asked.size() == 2);
  CHECK(ext.asked[0].empty());
  CHECK(ext.asked[1] == std::vector<tr::split>{{7, 4}});
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto i = static_cast<std::size_t>(r);
    CHECK(leaves[i] == ((ext.bins[i] > 4 ? 1u : 0u) | (c.q.bin(r, 0) > 1 ? 2u : 0u)));
  }
  // Noise on the column (Cosine; a higher score loses) leaves level 0 to the pool; L2 ignores it.
  in.noise.assign(static_cast<std::size_t>(p.depth * c.q.features), 0.0);
  ext.column_noise = [](int /*level*/, std::size_t /*column*/) { return 1e6; };
  CHECK(tr::search_tree_host(in, p, leaves, &ext).splits.front() == tr::split{0, 1});
  p.score = tr::score_function::l2;
  CHECK(tr::search_tree_host(in, p, leaves, &ext).splits.front() == tr::split{7, 4});
}

TEST_CASE("sharded search: the policy's dist_sliced_score forces the sliced scoring off or on", "[train][tree]") {
  namespace d = cbg::train::detail;
  const std::int64_t many = 4 * d::sliced_features_per_multiprocessor * 132;
  // -1: by shape (more than sliced_features_per_multiprocessor features per SM), on several ranks only.
  CHECK(d::sliced_scoring_enabled(-1, 2, many, 132));
  CHECK_FALSE(d::sliced_scoring_enabled(-1, 2, 28, 132));
  CHECK_FALSE(d::sliced_scoring_enabled(-1, 1, many, 132));
  CHECK_FALSE(d::sliced_scoring_enabled(0, 4, many, 132));
  CHECK(d::sliced_scoring_enabled(1, 2, 28, 132));
  CHECK_FALSE(d::sliced_scoring_enabled(1, 1, 28, 132));
  CHECK(cbg::policy{}.dist_sliced_score == -1);
}

TEST_CASE("host search: several dimensions share the weight", "[train][tree]") {
  // Dimension 0 is noise, dimension 1 follows f1 > 5.
  search_case c = additive_case(800, {8, 8, 8}, {}, 9);
  c.dims = 2;
  std::mt19937 rng(1);
  std::normal_distribution<float> n(0.0f, 0.05f);
  c.der.resize(2 * 800);
  for (std::int64_t r = 0; r < 800; ++r) {
    c.der[static_cast<std::size_t>(r)] = n(rng);
    c.der[static_cast<std::size_t>(800 + r)] = c.q.bin(r, 1) > 5 ? 2.0f : -1.0f;
  }
  tr::tree_search_params p;
  p.depth = 1;
  std::vector<std::uint32_t> leaves;
  CHECK(host_search(c, p, leaves).splits == std::vector<tr::split>{{1, 5}});
}

TEST_CASE("host search: argument and data errors", "[train][tree]") {
  search_case c = additive_case(50, {3, 3}, {{0, 1, 1.0f}}, 2);
  std::vector<std::uint32_t> leaves;
  tr::tree_search_params p;
  const auto code = [&](const tr::tree_search_params& params, std::vector<double> noise = {}) {
    try {
      host_search(c, params, leaves, std::move(noise));
    } catch (const cbg::error& e) {
      return e.code();
    }
    return cbg::status::ok;
  };
  p.depth = 0;
  CHECK(code(p) == cbg::status::invalid_argument);
  p.depth = 17;
  CHECK(code(p) == cbg::status::invalid_argument);
  p.depth = 2;
  CHECK(code(p, {1.0, 2.0, 3.0}) == cbg::status::invalid_argument);
  CHECK(code(p, {0.0, 0.0, 0.0, 0.0}) == cbg::status::ok);
  p.l2_leaf_reg = -1.0;
  CHECK(code(p) == cbg::status::invalid_argument);
  p.l2_leaf_reg = 3.0;
  c.der[7] = std::numeric_limits<float>::quiet_NaN();
  CHECK(code(p) == cbg::status::bad_data);
  c.der[7] = 0.0f;
  c.weight[3] = std::numeric_limits<float>::infinity();
  CHECK(code(p) == cbg::status::bad_data);
}

// ---- GPU ---------------------------------------------------------------------------------------------
namespace {

std::shared_ptr<cbg::context> gpu_context(bool strict = false) {
  cbg::context_options o;
  o.device = 0;
  o.strict_no_d2h = strict;
  return cbg::context::create(o);
}

template <class T>
cbg::device_buffer<T> to_device(const cbg::context& ctx, const std::vector<T>& v) {
  cbg::device_buffer<T> d(std::max<std::size_t>(v.size(), 1), ctx.stream(), ctx.resource());
  if (!v.empty()) {
    cbg::copy_bytes(d.data(), cbg::memory_kind::device, v.data(), cbg::memory_kind::host, v.size() * sizeof(T),
                    ctx.stream(), ctx.copies(), ctx.rules(), CBG_COPY_SITE("test upload"));
  }
  return d;
}

template <class T>
std::vector<T> to_host(const cbg::context& ctx, const T* d, std::size_t n) {
  std::vector<T> v(n);
  if (n > 0) {
    cbg::copy_bytes(v.data(), cbg::memory_kind::host, d, cbg::memory_kind::device, n * sizeof(T), ctx.stream(),
                    ctx.copies(), ctx.rules(), CBG_COPY_SITE("test download"));
  }
  ctx.sync();
  return v;
}

q::device_quantized upload(const cbg::context& ctx, const q::host_quantized& h) {
  q::device_quantized d;
  d.rows = h.rows;
  d.features = h.features;
  d.padded_rows = h.padded_rows;
  d.device = ctx.device();
  d.borders = to_device(ctx, h.borders);
  d.border_count = to_device(ctx, h.border_count);
  d.mode = to_device(ctx, h.mode);
  d.index = to_device(ctx, h.index);
  return d;
}

// Random bins (border counts cycling through `borders`), der with planted effects on a few features
// plus noise in every dimension, exponential weights with a share of zeros (der 0 there).
search_case random_case(std::int64_t rows, int features, const std::vector<std::int32_t>& borders, int dims,
                        double zero_share, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::int32_t> counts(static_cast<std::size_t>(features));
  std::vector<std::vector<std::uint8_t>> bins(static_cast<std::size_t>(features));
  for (int f = 0; f < features; ++f) {
    counts[static_cast<std::size_t>(f)] = borders[static_cast<std::size_t>(f) % borders.size()];
    std::uniform_int_distribution<int> u(0, counts[static_cast<std::size_t>(f)]);
    bins[static_cast<std::size_t>(f)].resize(static_cast<std::size_t>(rows));
    for (auto& b : bins[static_cast<std::size_t>(f)]) b = static_cast<std::uint8_t>(u(rng));
  }
  search_case c;
  c.q = make_quantized(rows, counts, bins);
  c.dims = dims;
  c.der.resize(static_cast<std::size_t>(rows * dims));
  c.weight.resize(static_cast<std::size_t>(rows));
  std::normal_distribution<float> normal;
  std::exponential_distribution<float> expo(1.0f);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const bool zero = unit(rng) < zero_share;
    c.weight[static_cast<std::size_t>(r)] = zero ? 0.0f : expo(rng);
    for (int j = 0; j < dims; ++j) {
      float v = normal(rng);
      for (int f = j % 3; f < features; f += 5) {
        const std::int32_t nb = counts[static_cast<std::size_t>(f)];
        if (nb > 0) v += 0.3f * static_cast<float>(bins[static_cast<std::size_t>(f)][static_cast<std::size_t>(r)]) / nb;
      }
      c.der[static_cast<std::size_t>(j * rows + r)] = zero ? 0.0f : v * c.weight[static_cast<std::size_t>(r)];
    }
  }
  return c;
}

struct device_case {
  q::device_quantized q;
  cbg::device_buffer<float> der;
  cbg::device_buffer<float> weight;
  cbg::device_buffer<std::uint32_t> leaves;
};

device_case upload_case(const cbg::context& ctx, const search_case& c) {
  device_case d;
  d.q = upload(ctx, c.q);
  d.der = to_device(ctx, c.der);
  d.weight = to_device(ctx, c.weight);
  d.leaves = cbg::device_buffer<std::uint32_t>(static_cast<std::size_t>(std::max<std::int64_t>(c.q.rows, 1)),
                                               ctx.stream(), ctx.resource());
  return d;
}

tr::tree_structure device_search(const cbg::context& ctx, const search_case& c, device_case& d,
                                 tr::device_search_workspace& ws, const tr::tree_search_params& p,
                                 std::vector<std::uint32_t>& leaves, std::vector<double> noise = {},
                                 std::vector<float> feature_weight = {}) {
  tr::device_search_input in;
  in.q = &d.q;
  in.dims = c.dims;
  in.der = d.der.data();
  in.weight = d.weight.data();
  in.noise = std::move(noise);
  in.feature_weight = std::move(feature_weight);
  const tr::tree_structure t = tr::search_tree_device(ctx, in, p, ws, d.leaves.data());
  leaves = to_host(ctx, d.leaves.data(), static_cast<std::size_t>(c.q.rows));
  return t;
}

std::vector<double> make_noise(int depth, int features, double sigma, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, sigma);
  std::vector<double> v(static_cast<std::size_t>(depth * features));
  for (auto& x : v) x = n(rng);
  return v;
}

}  // namespace

TEST_CASE("GPU search equals the host reference split for split and row for row", "[gpu][train][tree][parts]") {
  CBG_REQUIRE_GPU();
  auto ctx = gpu_context();
  struct shape {
    std::int64_t rows;
    int features;
    std::vector<std::int32_t> borders;
    int depth;
    int dims;
    tr::score_function fn;
    double noise;  // sigma; 0: none
    double zero_share;
  };
  const auto cos = tr::score_function::cosine;
  const auto l2 = tr::score_function::l2;
  const std::vector<shape> shapes = {
      {1000, 6, {128}, 1, 1, cos, 0.0, 0.0},
      {5003, 10, {1, 2, 5, 255, 0, 32}, 6, 1, l2, 0.0, 0.2},
      {20011, 9, {255, 3, 128}, 8, 1, cos, 0.05, 0.1},
      {777, 5, {7, 254, 1}, 3, 3, cos, 0.0, 0.0},
      {3001, 7, {16, 255}, 5, 3, l2, 0.0, 0.3},
      {40000, 3, {8, 3, 15}, 16, 1, cos, 0.0, 0.05},
      {30001, 12, {32, 2, 255}, 12, 1, cos, 0.01, 0.1},
      {9000, 13, {255}, 10, 3, cos, 0.02, 0.0},  // levels split into several slot passes
      {100003, 28, {128}, 6, 1, cos, 0.01, 0.0},
      {500, 6, {255, 100}, 2, 60, cos, 0.0, 0.1},  // 61 channels: two features per block
      {33, 4, {4}, 4, 1, l2, 0.0, 0.5},
  };
  std::uint32_t seed = 100;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const shape& s = shapes[i];
    ++seed;  // every shape its own data, whichever part runs it
    if (!cbg::test::in_test_part(i)) continue;
    CAPTURE(s.rows, s.features, s.depth, s.dims, static_cast<int>(s.fn), s.noise);
    const search_case c =
        random_case(cbg::test::shrunk<std::int64_t>(s.rows, 8000), s.features, s.borders, s.dims, s.zero_share, seed);
    tr::tree_search_params p;
    p.depth = s.depth;
    p.score = s.fn;
    const std::vector<double> noise =
        s.noise > 0 ? make_noise(s.depth, s.features, s.noise, seed) : std::vector<double>{};
    // Model-size weights on every other shape (some features weighted down, as unused CTRs are).
    std::vector<float> weights;
    if (i % 2 == 1) {
      std::mt19937 wr(seed);
      std::uniform_real_distribution<float> u(0.5f, 1.0f);
      for (int f = 0; f < s.features; ++f) weights.push_back(f % 3 == 0 ? 1.0f : u(wr));
    }
    std::vector<std::uint32_t> host_leaves;
    const tr::tree_structure host = host_search(c, p, host_leaves, noise, weights);
    device_case d = upload_case(*ctx, c);
    auto ws = tr::make_device_search_workspace(*ctx, d.q, s.dims, p);
    for (const int kernel : {1, 2, 4, 0}) {  // both histogram kernels (one dimension); groups per block
      CAPTURE(kernel);
      tr::detail::set_fast_histograms(*ws, d.q, kernel > 0);
      tr::detail::set_histogram_groups_per_block(*ws, d.q, std::max(kernel, 1));
      tr::detail::set_histogram_prefetch(*ws, d.q, kernel != 2);
      tr::detail::set_histogram_row_lists(*ws, kernel != 2);  // levels >= 1 from the row lists, or every row
      std::vector<std::uint32_t> gpu_leaves;
      const tr::tree_structure gpu = device_search(*ctx, c, d, *ws, p, gpu_leaves, noise, weights);
      CAPTURE(host.splits.size(), gpu.splits.size());
      CHECK(gpu == host);
      CHECK(gpu_leaves == host_leaves);
    }
    CHECK(host.splits.size() >= std::min<std::size_t>(static_cast<std::size_t>(s.depth), 3));
  }
}

TEST_CASE("GPU search: repeated runs and other launch geometries give the same tree", "[gpu][train][tree][parts]") {
  CBG_REQUIRE_GPU();
  auto ctx = gpu_context();
  const search_case c = random_case(cbg::test::shrunk<std::int64_t>(200003, 20003), 40, {128, 255, 9}, 1, 0.1, 7);
  tr::tree_search_params p;
  p.depth = 8;
  device_case d = upload_case(*ctx, c);
  auto ws = tr::make_device_search_workspace(*ctx, d.q, 1, p);
  const std::vector<double> noise = make_noise(8, 40, 0.01, 3);
  std::vector<std::uint32_t> first_leaves;
  const tr::tree_structure first = device_search(*ctx, c, d, *ws, p, first_leaves, noise);
  REQUIRE(first.splits.size() == 8);
  std::size_t variant = 0;
  for (const bool fast : {true, false}) {
    tr::detail::set_fast_histograms(*ws, d.q, fast);
    for (int blocks : {4, 1, 2, 3}) {
      for (int groups : {1, 2, 4, 0}) {
        if (!cbg::test::in_test_part(variant++)) continue;
        const bool prefetch = groups != 2;
        const bool lists = groups != 1;
        CAPTURE(fast, blocks, groups, prefetch, lists);
        tr::detail::set_histogram_row_lists(*ws, lists);
        tr::detail::set_histogram_blocks_per_sm(*ws, d.q, blocks);
        tr::detail::set_histogram_groups_per_block(*ws, d.q, groups);
        tr::detail::set_histogram_prefetch(*ws, d.q, prefetch);
        std::vector<std::uint32_t> leaves;
        CHECK(device_search(*ctx, c, d, *ws, p, leaves, noise) == first);
        CHECK(leaves == first_leaves);
      }
    }
  }
  // A shallower tree on the same workspace is the deeper one's prefix.
  tr::tree_search_params shallow = p;
  shallow.depth = 3;
  std::vector<std::uint32_t> leaves;
  const tr::tree_structure t3 =
      device_search(*ctx, c, d, *ws, shallow, leaves, std::vector<double>(noise.begin(), noise.begin() + 3 * 40));
  CHECK(t3.splits == std::vector<tr::split>(first.splits.begin(), first.splits.begin() + 3));
}

TEST_CASE("GPU search: no dataset-sized copy to the host; bad data; workspace mismatch", "[gpu][train][tree]") {
  CBG_REQUIRE_GPU();
  auto ctx = gpu_context(/*strict=*/true);
  search_case c = random_case(cbg::test::shrunk<std::int64_t>(300000, 30000), 16, {128}, 1, 0.0, 9);
  tr::tree_search_params p;
  device_case d = upload_case(*ctx, c);
  auto ws = tr::make_device_search_workspace(*ctx, d.q, 1, p);
  ctx->copies().reset();
  tr::device_search_input in;
  in.q = &d.q;
  in.der = d.der.data();
  in.weight = d.weight.data();
  const tr::tree_structure t = tr::search_tree_device(*ctx, in, p, *ws, d.leaves.data());
  CHECK(t.splits.size() == 6);
  const cbg::copy_totals totals = ctx->copies().totals();
  CHECK(totals.calls_in(cbg::copy_direction::d2h) == 1);
  CHECK(totals.bytes_in(cbg::copy_direction::d2h) < 256);
  // NaN in der: bad_data after the search.
  c.der[123] = std::numeric_limits<float>::quiet_NaN();
  d.der = to_device(*ctx, c.der);
  in.der = d.der.data();
  try {
    tr::search_tree_device(*ctx, in, p, *ws, d.leaves.data());
    FAIL("no error");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::bad_data);
  }
  // A deeper tree or more dimensions than the workspace holds.
  tr::tree_search_params deeper = p;
  deeper.depth = 7;
  CHECK_THROWS_AS(tr::search_tree_device(*ctx, in, deeper, *ws, d.leaves.data()), cbg::error);
  in.dims = 2;
  CHECK_THROWS_AS(tr::search_tree_device(*ctx, in, p, *ws, d.leaves.data()), cbg::error);
}
