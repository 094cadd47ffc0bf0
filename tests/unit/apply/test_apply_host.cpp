// SPDX-License-Identifier: Apache-2.0
// The GPU evaluator's host-side parts, tested without a GPU: the byte-slot encoding and the packed
// splits reproduce the host evaluator's leaf indexes (the same per-element functions the kernels
// call, emulated row by row), the tile planner's invariants, the output-shape query and argument
// checking, and the CPU-context path of predict_to_host.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "cbg/apply/device_model.hpp"
#include "cbg/apply/evaluator.hpp"
#include "cbg/apply/input.hpp"
#include "cbg/apply/slots.hpp"
#include "cbg/core/error.hpp"
#include "cbg/model/host_evaluator.hpp"
#include "kernels/apply/stages.hpp"
#include "support/catch.hpp"
#include "support/dlpack_fixtures.hpp"
#include "support/matrix_view.hpp"
#include "support/random_model.hpp"

namespace ca = cbg::apply;
namespace cm = cbg::model;
using cbg::status;

namespace {

status code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const cbg::error& e) {
    return e.code();
  }
  return status::ok;
}

// Host rows for the host evaluator from column-major flat inputs.
struct host_rows_data {
  std::vector<float> floats;
  std::vector<std::uint32_t> cats;
  cm::host_rows rows;
};
host_rows_data host_rows_of(const cm::model& m, const cbg::test::random_inputs& in) {
  host_rows_data h;
  const auto rows = static_cast<std::size_t>(in.rows);
  const std::size_t nf = m.float_features.size(), nc = m.cat_features.size();
  h.floats.resize(rows * nf);
  h.cats.resize(rows * nc);
  for (std::size_t f = 0; f < nf; ++f)
    for (std::size_t r = 0; r < rows; ++r)
      h.floats[r * nf + f] = in.floats[static_cast<std::size_t>(m.float_features[f].flat_index) * rows + r];
  for (std::size_t c = 0; c < nc; ++c)
    for (std::size_t r = 0; r < rows; ++r)
      h.cats[r * nc + c] =
          cbg::test::int_cat_hash(in.cats[static_cast<std::size_t>(m.cat_features[c].flat_index) * rows + r]);
  h.rows = cm::host_rows{rows, h.floats.data(), nf, h.cats.data(), nc};
  return h;
}

cm::ctr_table_view table_view(const cm::model& m, const cm::ctr_base& base) {
  for (const auto& t : m.ctr_tables)
    if (t.base == base)
      return {t.bucket_hashes.data(), t.bucket_indices.data(), t.bucket_hashes.size(), t.means.data(),
              t.counts.data(),        t.counter_denominator,   t.target_classes_count};
  return {};
}

// The binarize and tree stages of kernels/apply/, emulated on the host with the same functions.
std::vector<std::uint32_t> emulated_leaves(const cm::model& m, const host_rows_data& h) {
  const ca::model_image image = ca::make_image(m, nullptr);
  const std::size_t rows = h.rows.n_rows;
  const std::size_t padded = (rows + 3) / 4 * 4;
  std::vector<std::uint8_t> bins(std::max<std::size_t>(image.view.n_slots, 1) * padded, 0);
  const auto float_at = [&](std::size_t r, std::int32_t f) {
    const auto& ff = m.float_features[static_cast<std::size_t>(f)];
    return cm::nan_substituted(h.floats[r * m.float_features.size() + static_cast<std::size_t>(f)], ff.has_nans,
                               static_cast<std::uint8_t>(ff.nan_value_treatment));
  };
  const auto cat_at = [&](std::size_t r, std::int32_t c) {
    return h.cats[r * m.cat_features.size() + static_cast<std::size_t>(c)];
  };
  // The one-hot feature behind each one-hot entry: they come in model order, empty ones skipped.
  std::vector<const cm::one_hot_feature*> one_hot_of(image.features.size(), nullptr);
  std::size_t next_one_hot = 0;
  for (std::size_t i = 0; i < image.features.size(); ++i) {
    if (image.features[i].kind != ca::bin_kind::one_hot) continue;
    while (m.one_hot_features[next_one_hot].values.empty()) ++next_one_hot;
    one_hot_of[i] = &m.one_hot_features[next_one_hot++];
  }
  for (const ca::bin_feature& f : image.features) {
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::uint32_t g = 0; g < f.n_slots; ++g) {
        std::uint32_t byte = 0;
        if (f.kind == ca::bin_kind::float_feature) {
          const auto& b = m.float_features[static_cast<std::size_t>(f.input)].borders;
          byte = ca::counted_slot_byte(
              cm::borders_below(b.data(), static_cast<std::uint32_t>(b.size()), float_at(r, f.input)), g);
        } else if (f.kind == ca::bin_kind::ctr) {
          const auto& cf = m.ctr_features[static_cast<std::size_t>(f.input)];
          const auto& p = cf.ctr.base.proj;
          const std::uint64_t key = cm::projection_key(
              p.cat_features.data(), p.cat_features.size(), p.float_splits.data(), p.float_splits.size(),
              p.one_hot_splits.data(), p.one_hot_splits.size(), [&](std::int32_t c) { return cat_at(r, c); },
              [&](std::int32_t fi) { return float_at(r, fi); });
          const float v = cm::ctr_value_of(table_view(m, cf.ctr.base), cm::calc_of(cf.ctr), key);
          byte = ca::counted_slot_byte(
              cm::borders_below(cf.borders.data(), static_cast<std::uint32_t>(cf.borders.size()), v), g);
        } else {
          const auto& values = one_hot_of[&f - image.features.data()]->values;
          std::int32_t k = -1;
          for (std::size_t i = 0; i < values.size(); ++i)
            if (values[i] == static_cast<std::int32_t>(cat_at(r, f.input))) k = static_cast<std::int32_t>(i);
          byte = ca::one_hot_slot_byte(k, g);
        }
        REQUIRE(byte <= ca::slot_capacity);
        bins[(f.first_slot + g) * padded + r] = static_cast<std::uint8_t>(byte);
      }
    }
  }
  std::vector<std::uint32_t> leaves(rows * m.tree_count());
  for (std::size_t w = 0; w < padded / 4; ++w) {
    for (std::size_t t = 0; t < m.tree_count(); ++t) {
      std::uint32_t lo = 0, hi = 0;
      for (int d = 0; d < 16; ++d) {
        const ca::decoded_split s = d < m.tree_sizes[t]
                                        ? ca::decode_split(image.packed_splits[static_cast<std::size_t>(
                                              m.tree_splits[static_cast<std::size_t>(m.tree_start_offsets[t] + d)])])
                                        : ca::never_true_split();
        std::uint32_t word = 0;
        std::memcpy(&word, bins.data() + s.slot * padded + 4 * w, 4);
        const std::uint32_t bits = ca::split_bits4(word, s.x4, s.t4);
        if (d < 8)
          lo |= bits << d;
        else
          hi |= bits << (d - 8);
      }
      for (std::size_t j = 0; j < 4 && 4 * w + j < rows; ++j)
        leaves[(4 * w + j) * m.tree_count() + t] = ((lo >> (8 * j)) & 0xffu) | (((hi >> (8 * j)) & 0xffu) << 8);
    }
  }
  return leaves;
}

}  // namespace

TEST_CASE("byte slots and packed splits give the host evaluator's leaf indexes", "[apply]") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    cbg::test::random_model_spec s;
    s.n_float = 5;
    s.n_cat = 3;
    s.n_one_hot = 2;
    s.n_ctr = 7;
    s.n_trees = 25;
    s.max_depth = seed % 2 == 0 ? 12 : 6;
    s.big_one_hot = seed % 3 == 0;
    s.cat_values = s.big_one_hot ? 160 : 12;
    s.seed = seed;
    const cm::model m = cbg::test::random_model(s);
    cm::validate(m);
    const auto in = cbg::test::random_data(m, 203, s.cat_values, seed + 100);
    const host_rows_data h = host_rows_of(m, in);
    std::vector<std::uint32_t> expected(h.rows.n_rows * m.tree_count());
    cm::leaf_indexes_host(m, h.rows, 0, m.tree_count(), expected.data(), expected.size());
    const auto got = emulated_leaves(m, h);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < got.size(); ++i) mismatches += got[i] != expected[i] ? 1 : 0;
    CHECK(mismatches == 0);
  }
}

TEST_CASE("slot bytes and the four-row compare", "[apply]") {
  // Counted slots: 300 borders over three slots.
  CHECK(ca::counted_slot_byte(0, 0) == 0);
  CHECK(ca::counted_slot_byte(5, 0) == 5);
  CHECK(ca::counted_slot_byte(127, 0) == 127);
  CHECK(ca::counted_slot_byte(128, 0) == 127);
  CHECK(ca::counted_slot_byte(128, 1) == 1);
  CHECK(ca::counted_slot_byte(300, 2) == 46);
  CHECK(ca::one_hot_slot_byte(-1, 0) == 0);
  CHECK(ca::one_hot_slot_byte(0, 0) == 1);
  CHECK(ca::one_hot_slot_byte(130, 0) == 0);
  CHECK(ca::one_hot_slot_byte(130, 1) == 4);
  // Every byte value against every threshold and xor mask, four rows at once.
  for (std::uint32_t t = 1; t <= 128; ++t) {
    for (std::uint32_t x : {0u, 1u, 63u, 127u ^ (t & 127u)}) {
      for (std::uint32_t b = 0; b <= 127; b += 1) {
        const std::uint32_t word = b | ((127 - b) << 8) | ((b / 2) << 16) | ((b ^ 85u) << 24);
        const std::uint32_t bits = ca::split_bits4(word, x * 0x01010101u, t * 0x01010101u);
        for (int j = 0; j < 4; ++j) {
          const std::uint32_t v = (word >> (8 * j)) & 0xffu;
          CHECK(((bits >> (8 * j)) & 0xffu) == (((v ^ x) >= t) ? 1u : 0u));
        }
      }
    }
  }
}

TEST_CASE("tile planner: fits shared memory, covers every row", "[apply]") {
  const ca::detail::tiling defaults{1024, 32, 96 * 1024, false, 0, 64};
  for (std::int64_t rows : {1, 3, 4, 5, 1000, 65536, 10000000}) {
    for (std::uint32_t slots : {0u, 28u, 2000u, 65536u}) {
      for (int dim : {1, 3, 200}) {
        for (int depth : {0, 6, 8, 9, 16}) {
          for (bool leaf : {false, true}) {
            for (bool global : {false, true}) {
              CAPTURE(rows, slots, dim, depth, leaf, global);
              ca::detail::tiling t = defaults;
              t.force_global_bins = global;
              t.min_tiles = global ? 264 : 0;
              const auto p = ca::detail::plan_evaluation(t, rows, slots, dim, depth, leaf);
              CHECK(p.tile_rows % 4 == 0);
              CHECK(p.tile_rows >= 4);
              CHECK(p.tree_chunk >= 1);
              CHECK(p.tiles * p.tile_rows >= rows);
              CHECK((p.tiles - 1) * p.tile_rows < rows);
              CHECK(p.smem_bytes <= 227u * 1024u);
              CHECK(p.wide_leaves == (depth > 8));
              CHECK((!global || !p.smem_bins));
              if (!leaf && !p.smem_acc) CHECK(p.global_acc >= static_cast<std::size_t>(rows) * dim);
              if (p.smem_bins)
                CHECK(p.off_bins + std::max(slots, 1u) * static_cast<std::size_t>(p.tile_rows) <= p.smem_bytes);
            }
          }
        }
      }
    }
  }
  // The narrow benchmark shape stages its bins with sums in shared memory, full tiles.
  const auto narrow = ca::detail::plan_evaluation(defaults, 10000000, 28, 1, 6, false);
  CHECK(narrow.smem_bins);
  CHECK(narrow.smem_acc);
  CHECK(narrow.tile_rows == 1024);
  // Small batches are spread over at least min_tiles blocks (an H100 has 132 SMs: 264).
  ca::detail::tiling spread = defaults;
  spread.min_tiles = 264;
  CHECK(ca::detail::plan_evaluation(spread, 10000000, 28, 1, 6, false).tile_rows == 1024);
  const auto thousand = ca::detail::plan_evaluation(spread, 1000, 28, 1, 6, false);
  CHECK(thousand.tile_rows == 4);
  CHECK(thousand.tiles == 250);
  const auto batch64k = ca::detail::plan_evaluation(spread, 65536, 28, 1, 6, false);
  CHECK(batch64k.tile_rows == 252);
  CHECK(batch64k.tiles == 261);
  CHECK(ca::detail::plan_evaluation(spread, 1, 28, 1, 6, false).tile_rows == 4);
  // 2000 slots: no staged tile of 256 rows fits; global bins, 256 rows, 64 trees per pass.
  const auto wide = ca::detail::plan_evaluation(spread, 100000, 2000, 1, 6, false);
  CHECK(!wide.smem_bins);
  CHECK(wide.tile_rows == 256);
  CHECK(wide.tree_chunk == 64);
}

namespace {

// A CPU-context pool over column-major inputs: float32 numeric columns, int64 categorical ones.
struct host_pool {
  std::vector<std::unique_ptr<cbg::test::fake_tensor>> tensors;
  std::shared_ptr<cbg::context> ctx;
  std::optional<cbg::pool> pool;
};
host_pool make_host_pool(cbg::test::random_inputs& in) {
  host_pool hp;
  cbg::context_options o;
  o.device = cbg::cpu_device;
  hp.ctx = cbg::context::create(o);
  cbg::pool_inputs pi;
  for (std::size_t j = 0; j < in.is_cat.size(); ++j) {
    const auto off = j * static_cast<std::size_t>(in.rows);
    if (in.is_cat[j]) {
      hp.tensors.push_back(std::make_unique<cbg::test::fake_tensor>(in.cats.data() + off, cbg::test::dl_int(64),
                                                                    std::vector<std::int64_t>{in.rows}));
      pi.cat_features.push_back(static_cast<std::int32_t>(j));
    } else {
      hp.tensors.push_back(std::make_unique<cbg::test::fake_tensor>(in.floats.data() + off, cbg::test::dl_float(32),
                                                                    std::vector<std::int64_t>{in.rows}));
    }
    pi.columns.push_back(hp.tensors.back()->as_borrowed());
  }
  hp.pool.emplace(cbg::pool::build(hp.ctx, std::move(pi)));
  return hp;
}

cbg::mutable_tensor_view host_out(void* data, cbg::dtype t, std::int64_t rows, std::int64_t cols, bool column_major) {
  return cbg::test::matrix_view(data, t, cbg::memory_kind::host, -1, rows, cols, column_major ? 1 : 0);
}

}  // namespace

TEST_CASE("predict_to_host on a CPU context: the host evaluator over the pool's columns", "[apply]") {
  cbg::test::random_model_spec s;
  s.n_float = 4;
  s.n_cat = 2;
  s.n_one_hot = 1;
  s.n_ctr = 3;
  s.n_trees = 12;
  s.dim = 3;
  s.loss = "MultiClass";
  s.bias = true;
  const cm::model m = cbg::test::random_model(s);
  cm::validate(m);
  auto in = cbg::test::random_data(m, 57, s.cat_values, 5);
  host_pool hp = make_host_pool(in);
  const host_rows_data h = host_rows_of(m, in);
  ca::device_model_cache cache;
  for (const auto type :
       {cm::prediction_type::raw_formula_val, cm::prediction_type::probability, cm::prediction_type::class_index}) {
    const std::size_t cols = cm::prediction_columns(m, type);
    std::vector<double> expected(57 * cols);
    cm::predict_host(m, h.rows, type, 1, 11, expected.data(), expected.size());
    ca::predict_options o;
    o.type = type;
    o.tree_begin = 1;
    o.tree_end = 11;
    CHECK(ca::output_shape(m, o, 57) == std::array<std::int64_t, 2>{57, static_cast<std::int64_t>(cols)});
    std::vector<double> got(expected.size());
    ca::predict_to_host(cache, m, *hp.pool, o,
                        host_out(got.data(), cbg::dtype::float64, 57, static_cast<std::int64_t>(cols), true), nullptr);
    std::vector<double> transposed(expected.size());
    for (std::size_t r = 0; r < 57; ++r)
      for (std::size_t j = 0; j < cols; ++j) transposed[r * cols + j] = got[j * 57 + r];
    CHECK(transposed == expected);
  }
  // Leaf indexes as int64.
  ca::predict_options o;
  o.output = ca::output_kind::leaf_indexes;
  std::vector<std::uint32_t> expected(57 * m.tree_count());
  cm::leaf_indexes_host(m, h.rows, 0, m.tree_count(), expected.data(), expected.size());
  std::vector<std::int64_t> got(expected.size());
  ca::predict_to_host(cache, m, *hp.pool, o,
                      host_out(got.data(), cbg::dtype::int64, 57, static_cast<std::int64_t>(m.tree_count()), false),
                      nullptr);
  CHECK(std::equal(got.begin(), got.end(), expected.begin(), [](std::int64_t a, std::uint32_t b) { return a == b; }));

  // Errors: device entry point on a CPU context, output shape, dtype, overlap, tree range, type.
  std::vector<double> out(57 * 3);
  ca::predict_options raw;
  CHECK(code_of([&] {
          ca::predict_to_device(cache, m, *hp.pool, raw, host_out(out.data(), cbg::dtype::float64, 57, 3, false),
                                nullptr);
        }) == status::no_device);
  CHECK(code_of([&] {
          ca::predict_to_host(cache, m, *hp.pool, raw, host_out(out.data(), cbg::dtype::float64, 57, 2, false),
                              nullptr);
        }) == status::shape);
  CHECK(code_of([&] {
          ca::predict_to_host(cache, m, *hp.pool, raw, host_out(out.data(), cbg::dtype::int32, 57, 3, false), nullptr);
        }) == status::dtype);
  auto overlapping = host_out(out.data(), cbg::dtype::float64, 57, 3, false);
  overlapping.strides[0] = 2;
  CHECK(code_of([&] { ca::predict_to_host(cache, m, *hp.pool, raw, overlapping, nullptr); }) ==
        status::invalid_argument);
  ca::predict_options bad_range;
  bad_range.tree_begin = 5;
  bad_range.tree_end = 4;
  CHECK(code_of([&] { (void)ca::output_shape(m, bad_range, 57); }) == status::invalid_argument);
  ca::predict_options uncertainty;
  uncertainty.type = cm::prediction_type::rmse_with_uncertainty;
  CHECK(code_of([&] { (void)ca::output_shape(m, uncertainty, 57); }) == status::unsupported);
  CHECK(code_of([&] { (void)ca::output_shape(m, raw, -1); }) == status::invalid_argument);
  // A pool whose roles differ from the model's: a categorical feature given as numeric.
  cm::model swapped = m;
  std::swap(swapped.float_features[0].flat_index, swapped.cat_features[0].flat_index);
  CHECK(code_of([&] {
          ca::predict_to_host(cache, swapped, *hp.pool, raw, host_out(out.data(), cbg::dtype::float64, 57, 3, false),
                              nullptr);
        }) == status::invalid_argument);
}
