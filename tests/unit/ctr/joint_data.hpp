// SPDX-License-Identifier: Apache-2.0
// Test data for feature combinations: three categorical int32 columns and a float column whose
// label depends on two categorical features jointly, and the model's predictions on it.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/model/hash.hpp"
#include "support/dlpack_fixtures.hpp"
#include "unit/ctr/predict_util.hpp"

namespace cbg::test {

// Three categorical int32 columns (a: 8 values, b: 8 values, c: 5 values of noise) and a float
// column; the label is a function of (a, b) jointly (their sum mod 3), with some noise.
struct joint_data {
  std::int64_t rows = 0;
  std::vector<float> x;
  std::vector<std::vector<std::int32_t>> cat;  // [3][rows]
  std::vector<float> label;
  std::vector<std::unique_ptr<fake_tensor>> tensors;
  std::unique_ptr<cbg::pool> pool;
};

inline std::unique_ptr<joint_data> make_joint(const std::shared_ptr<cbg::context>& ctx, std::int64_t rows,
                                              std::uint32_t seed) {
  auto d = std::make_unique<joint_data>();
  d->rows = rows;
  d->cat.resize(3);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  const int card[3] = {8, 8, 5};
  for (std::int64_t r = 0; r < rows; ++r) {
    d->x.push_back(normal(rng));
    for (int k = 0; k < 3; ++k)
      d->cat[static_cast<std::size_t>(k)].push_back(static_cast<std::int32_t>(rng() % card[k]) * 11 - k);
    const int a = (d->cat[0].back() + 0) / 11, b = (d->cat[1].back() + 1) / 11;
    const bool hit = (a + b) % 3 == 0;
    d->label.push_back((hit ? 1.f : 0.f) != ((rng() % 10) == 0 ? 1.f : 0.f) ? 1.f : 0.f);
  }
  const std::vector<std::int64_t> shape{rows};
  d->tensors.push_back(std::make_unique<fake_tensor>(d->x.data(), dl_float(32), shape));
  for (auto& c : d->cat) {
    d->tensors.push_back(std::make_unique<fake_tensor>(c.data(), dl_int(32), shape));
  }
  d->tensors.push_back(std::make_unique<fake_tensor>(d->label.data(), dl_float(32), shape));
  cbg::pool_inputs in;
  for (int k = 0; k < 4; ++k) in.columns.push_back(d->tensors[static_cast<std::size_t>(k)]->as_borrowed());
  in.label = d->tensors[4]->as_borrowed();
  in.cat_features = {1, 2, 3};
  d->pool = std::make_unique<cbg::pool>(cbg::pool::build(ctx, std::move(in)));
  return d;
}

inline std::vector<std::uint32_t> hashes_of(const joint_data& d, std::int64_t r) {
  std::vector<std::uint32_t> h;
  for (const auto& c : d.cat) h.push_back(cbg::model::cat_hash_int(c[static_cast<std::size_t>(r)]));
  return h;
}

inline std::vector<double> predict(const cbg::model::model& m, const joint_data& d) {
  std::vector<std::uint32_t> cats;
  for (std::int64_t r = 0; r < d.rows; ++r) {
    for (std::uint32_t h : hashes_of(d, r)) cats.push_back(h);
  }
  return predict_raw(m, d.x.data(), cats, 3, d.rows);
}

}  // namespace cbg::test
