// SPDX-License-Identifier: Apache-2.0
#include "synthetic_data.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <thread>

namespace cbgpu_bench {

namespace {

// splitmix64: tiny, fast, and fully specified, unlike std::normal_distribution.
class random_stream {
 public:
  explicit random_stream(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1): never 0, so log() below is finite.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  double normal() { return std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * std::numbers::pi * uniform()); }

 private:
  uint64_t state_;
};

// Feature j's kind cycles momentum, angle, observable, like Higgs' mix of columns.
double draw_feature(random_stream& rng, int64_t j) {
  switch (j % 3) {
    case 0:
      return std::exp(0.5 * rng.normal());  // momentum: > 0, skewed
    case 1:
      return std::numbers::pi * (2.0 * rng.uniform() - 1.0);  // angle
    default:
      return rng.normal();  // observable
  }
}

}  // namespace

const char* synthetic_label_rule() {
  return "label = 1 if 1.2*tanh(x0 - 1) + sin(x1)*x2 - 0.6*(x2^2 - 1) + 0.4*mean_j>=3(cos(j)*x_j)"
         " + N(0, 0.5^2) > 0.25 (indices wrap around when there are fewer than 3 features); "
         "x_j: exp(N(0,1)/2) for j%3==0, U(-pi,pi) for j%3==1, N(0,1) for j%3==2";
}

namespace {

// Fills rows [begin, end); returns how many are positive. Row i draws from its own stream, so the
// data does not depend on how rows are split across threads.
int64_t fill_rows(const synthetic_options& o, synthetic_dataset& d, int64_t begin, int64_t end) {
  std::vector<double> x(static_cast<std::size_t>(o.features));
  auto f = [&](int64_t j) { return x[static_cast<std::size_t>(j % o.features)]; };
  const int64_t tail = o.features - 3;
  int64_t positives = 0;
  for (int64_t i = begin; i < end; ++i) {
    random_stream rng(o.seed ^ (0xD1B54A32D192ED03ULL * static_cast<uint64_t>(i + 1)));
    for (int64_t j = 0; j < o.features; ++j) {
      x[static_cast<std::size_t>(j)] = draw_feature(rng, j);
      const int64_t at = o.column_major ? j * o.rows + i : i * o.features + j;
      d.features[static_cast<std::size_t>(at)] = static_cast<float>(f(j));
    }
    double score = 1.2 * std::tanh(f(0) - 1.0) + std::sin(f(1)) * f(2) - 0.6 * (f(2) * f(2) - 1.0);
    if (tail > 0) {
      double linear = 0.0;
      for (int64_t j = 3; j < o.features; ++j) linear += std::cos(static_cast<double>(j)) * f(j);
      score += 0.4 * linear / static_cast<double>(tail);
    }
    score += 0.5 * rng.normal();
    const bool positive = score > 0.25;  // the score's median with 28 features: balanced classes
    d.label[static_cast<std::size_t>(i)] = positive ? 1.0f : 0.0f;
    positives += positive ? 1 : 0;
  }
  return positives;
}

}  // namespace

synthetic_dataset make_synthetic_dataset(const synthetic_options& o) {
  synthetic_dataset d;
  d.rows = o.rows;
  d.n_features = o.features;
  d.column_major = o.column_major;
  d.features.resize(static_cast<std::size_t>(o.rows * o.features));
  d.label.resize(static_cast<std::size_t>(o.rows));

  // One block of rows per hardware thread; small datasets stay on this thread.
  const int64_t threads =
      std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, std::max<int64_t>(1, o.rows / 10000));
  std::vector<int64_t> positives(static_cast<std::size_t>(threads), 0);
  std::vector<std::thread> workers;
  try {
    for (int64_t t = 1; t < threads; ++t) {
      workers.emplace_back([&, t] {
        positives[static_cast<std::size_t>(t)] = fill_rows(o, d, o.rows * t / threads, o.rows * (t + 1) / threads);
      });
    }
  } catch (...) {
    for (std::thread& w : workers) w.join();  // a joinable std::thread must not be destroyed
    throw;
  }
  positives[0] = fill_rows(o, d, 0, o.rows / threads);
  for (std::thread& w : workers) w.join();
  for (const int64_t p : positives) d.positives += p;
  return d;
}

}  // namespace cbgpu_bench
