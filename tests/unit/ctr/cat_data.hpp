// SPDX-License-Identifier: Apache-2.0
// A small categorical data set as a pool (host or device memory), shared by the CTR tests and the
// multi-GPU tests: one float column, two categorical int32 columns (3 and 40 values), a binary,
// regression or multiclass label. With extra_values, every fifth row's second column holds one of
// three values the others never take (an eval set's categories a learn set lacks).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/context.hpp"
#include "support/dlpack_fixtures.hpp"

namespace cbg::test {

struct cat_data {
  std::int64_t rows = 0;
  std::vector<float> x;
  std::vector<std::int32_t> a, b;
  std::vector<float> label;
  std::vector<std::unique_ptr<cbg::test::fake_tensor>> tensors;
  std::vector<cbg::device_buffer<std::int32_t>> device_ints;  // device copies (on_device)
  std::vector<cbg::device_buffer<float>> device_floats;
  std::unique_ptr<cbg::pool> pool;
};

template <class T>
inline cbg::device_buffer<T> upload(const std::vector<T>& v, const cbg::context& ctx) {
  cbg::device_buffer<T> d(v.size(), ctx.stream(), ctx.resource());
  cbg::copy_bytes(d.data(), cbg::memory_kind::device, v.data(), cbg::memory_kind::host, v.size() * sizeof(T),
                  ctx.stream(), ctx.copies(), ctx.rules(), CBG_COPY_SITE("test upload"));
  return d;
}

inline std::unique_ptr<cat_data> make_cat_data(const std::shared_ptr<cbg::context>& ctx, std::int64_t rows, bool binary,
                                               std::uint32_t seed, bool on_device = false, int classes = 2,
                                               bool extra_values = false) {
  auto d = std::make_unique<cat_data>();
  d->rows = rows;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> effect(40);
  for (auto& e : effect) e = normal(rng);
  for (std::int64_t r = 0; r < rows; ++r) {
    d->x.push_back(normal(rng));
    d->a.push_back(static_cast<std::int32_t>(rng() % 3) - 1);
    d->b.push_back(static_cast<std::int32_t>(rng() % 40) * 7);
    const float s = 0.5f * d->x.back() + effect[static_cast<std::size_t>(d->b.back() / 7)] +
                    (d->a.back() == 1 ? 0.7f : 0.f) + 0.3f * normal(rng);
    d->label.push_back(classes > 2 ? (s < -0.3f ? 0.f : s < 0.6f ? 1.f : 2.f) : binary ? (s > 0.2f ? 1.f : 0.f) : s);
    if (extra_values && r % 5 == 0) d->b.back() = 280 + 7 * static_cast<std::int32_t>((r / 5) % 3);
  }
  const std::vector<std::int64_t> shape{rows};
  void* x = d->x.data();
  void* a = d->a.data();
  void* b = d->b.data();
  void* label = d->label.data();
  DLDevice where{kDLCPU, 0};
  if (on_device) {
    d->device_floats.push_back(upload(d->x, *ctx));
    d->device_floats.push_back(upload(d->label, *ctx));
    d->device_ints.push_back(upload(d->a, *ctx));
    d->device_ints.push_back(upload(d->b, *ctx));
    x = d->device_floats[0].data();
    label = d->device_floats[1].data();
    a = d->device_ints[0].data();
    b = d->device_ints[1].data();
    where = {kDLCUDA, ctx->device()};
  }
  d->tensors.push_back(
      std::make_unique<cbg::test::fake_tensor>(x, cbg::test::dl_float(32), shape, std::vector<std::int64_t>{}, where));
  d->tensors.push_back(
      std::make_unique<cbg::test::fake_tensor>(a, cbg::test::dl_int(32), shape, std::vector<std::int64_t>{}, where));
  d->tensors.push_back(
      std::make_unique<cbg::test::fake_tensor>(b, cbg::test::dl_int(32), shape, std::vector<std::int64_t>{}, where));
  d->tensors.push_back(std::make_unique<cbg::test::fake_tensor>(label, cbg::test::dl_float(32), shape,
                                                                std::vector<std::int64_t>{}, where));
  cbg::pool_inputs in;
  for (int k = 0; k < 3; ++k) in.columns.push_back(d->tensors[static_cast<std::size_t>(k)]->as_borrowed());
  in.label = d->tensors[3]->as_borrowed();
  in.cat_features = {1, 2};
  d->pool = std::make_unique<cbg::pool>(cbg::pool::build(ctx, std::move(in)));
  return d;
}

}  // namespace cbg::test
