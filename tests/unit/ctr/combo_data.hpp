// SPDX-License-Identifier: Apache-2.0
// The feature-combination tests' data set as a pool (host or device memory), shared by the
// combination tests and the multi-GPU tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/context.hpp"
#include "support/dlpack_fixtures.hpp"
#include "unit/ctr/cat_data.hpp"

namespace cbg::test {

// Two float columns, one categorical column of 3 values (one-hot) and three of 6, 10 and 40 values
// (CTRs), a binary or regression label; in host or device memory.
struct combo_data {
  std::int64_t rows = 0;
  std::vector<float> x0, x1, label;
  std::vector<std::vector<std::int32_t>> cats;  // [4][rows]
  std::vector<cbg::device_buffer<float>> dfloats;
  std::vector<cbg::device_buffer<std::int32_t>> dints;
  std::vector<std::unique_ptr<cbg::test::fake_tensor>> tensors;
  std::unique_ptr<cbg::pool> pool;
};

// The class of score s among `classes` > 2: three bands, or more of equal width for more classes.
inline float class_of(float s, int classes) {
  if (classes == 3) return s < -0.3f ? 0.f : s < 0.6f ? 1.f : 2.f;
  const float band = std::floor((s + 1.0f) * static_cast<float>(classes) / 3.0f);
  return std::clamp(band, 0.0f, static_cast<float>(classes - 1));
}

// d's pool from its values (copied to ctx's device when on_device).
inline void build_combo_pool(const std::shared_ptr<cbg::context>& ctx, combo_data& d, bool on_device) {
  const std::vector<std::int64_t> shape{d.rows};
  std::vector<void*> ptr{d.x0.data(), d.x1.data()};
  for (auto& c : d.cats) ptr.push_back(c.data());
  ptr.push_back(d.label.data());
  DLDevice where{kDLCPU, 0};
  if (on_device) {
    d.dfloats.push_back(cbg::test::upload(d.x0, *ctx));
    d.dfloats.push_back(cbg::test::upload(d.x1, *ctx));
    d.dfloats.push_back(cbg::test::upload(d.label, *ctx));
    for (auto& c : d.cats) d.dints.push_back(cbg::test::upload(c, *ctx));
    ptr = {d.dfloats[0].data(), d.dfloats[1].data()};
    for (auto& c : d.dints) ptr.push_back(c.data());
    ptr.push_back(d.dfloats[2].data());
    where = {kDLCUDA, ctx->device()};
  }
  for (std::size_t k = 0; k < ptr.size(); ++k) {
    const bool is_float = k < 2 || k + 1 == ptr.size();
    d.tensors.push_back(std::make_unique<cbg::test::fake_tensor>(
        ptr[k], is_float ? cbg::test::dl_float(32) : cbg::test::dl_int(32), shape, std::vector<std::int64_t>{}, where));
  }
  cbg::pool_inputs in;
  for (std::size_t k = 0; k + 1 < ptr.size(); ++k) in.columns.push_back(d.tensors[k]->as_borrowed());
  in.label = d.tensors.back()->as_borrowed();
  in.cat_features = {2, 3, 4, 5};
  d.pool = std::make_unique<cbg::pool>(cbg::pool::build(ctx, std::move(in)));
}

inline std::unique_ptr<combo_data> make_combo_data(const std::shared_ptr<cbg::context>& ctx, std::int64_t rows,
                                                   bool binary, std::uint32_t seed, bool on_device, int classes = 2,
                                                   bool extra_values = false) {
  auto d = std::make_unique<combo_data>();
  d->rows = rows;
  d->cats.resize(4);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  const int card[4] = {3, 6, 10, 40};
  for (std::int64_t r = 0; r < rows; ++r) {
    d->x0.push_back(normal(rng));
    d->x1.push_back(r % 97 == 0 ? std::numeric_limits<float>::quiet_NaN() : normal(rng));
    for (int k = 0; k < 4; ++k)
      d->cats[static_cast<std::size_t>(k)].push_back(static_cast<std::int32_t>(rng() % card[k]) * 3 + k);
    const int a = d->cats[1].back() / 3, b = d->cats[2].back() / 3;
    const float s = 0.4f * d->x0.back() + ((a + b) % 3 == 0 ? 1.f : -0.5f) + (d->cats[0].back() == 0 ? 0.5f : 0.f) +
                    0.01f * static_cast<float>(d->cats[3].back()) + 0.3f * normal(rng);
    d->label.push_back(classes > 2 ? class_of(s, classes) : binary ? (s > 0.2f ? 1.f : 0.f) : s);
    // A value of the last feature no other set has (an eval set's categories a learn set lacks).
    if (extra_values && r % 7 == 0) d->cats[3].back() = card[3] * 3 + 3;
  }
  build_combo_pool(ctx, *d, on_device);
  return d;
}

// Rows [first, first + count) of `src` as a data set of their own, its pool on `ctx` (a rank's rows).
inline std::unique_ptr<combo_data> combo_rows(const std::shared_ptr<cbg::context>& ctx, const combo_data& src,
                                              std::int64_t first, std::int64_t count, bool on_device) {
  auto d = std::make_unique<combo_data>();
  d->rows = count;
  const auto part = [&](const auto& v) {
    return std::vector<typename std::decay_t<decltype(v)>::value_type>(v.begin() + first, v.begin() + first + count);
  };
  d->x0 = part(src.x0);
  d->x1 = part(src.x1);
  d->label = part(src.label);
  for (const auto& c : src.cats) d->cats.push_back(part(c));
  build_combo_pool(ctx, *d, on_device);
  return d;
}

}  // namespace cbg::test
