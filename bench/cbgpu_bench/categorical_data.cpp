// SPDX-License-Identifier: Apache-2.0
#include "categorical_data.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

namespace cbgpu_bench {

namespace {

std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double uniform_of(std::uint64_t h) { return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53; }

// A value's effect on the label, in [-1, 1).
double effect(std::uint64_t salt, std::int64_t value) {
  return 2.0 * uniform_of(mix(salt ^ mix(static_cast<std::uint64_t>(value)))) - 1.0;
}

// The Zipf law's cumulative weights of ranks 1..k (s = 1.1), normalised to end at 1.
std::vector<double> zipf_cdf(std::int64_t k) {
  std::vector<double> cdf(static_cast<std::size_t>(k));
  double sum = 0.0;
  for (std::int64_t r = 0; r < k; ++r) {
    sum += std::pow(static_cast<double>(r + 1), -1.1);
    cdf[static_cast<std::size_t>(r)] = sum;
  }
  for (double& c : cdf) c /= sum;
  return cdf;
}

}  // namespace

const char* categorical_label_rule() {
  return "label = 1 with probability sigmoid(2.5*(2*numeric_label - 1) + 1.5*e0(c0) + 1.0*e1(c1) + "
         "1.5*e01(c0, c2)), e: fixed pseudo-random effects in [-1, 1); c_j Zipf(1.1) over cardinalities "
         "10 .. max, log-evenly spaced";
}

categorical_columns add_categorical_columns(const categorical_options& o, uint64_t seed, synthetic_dataset& data) {
  categorical_columns out;
  const int64_t rows = data.rows;
  const int64_t n = o.columns;
  for (int64_t j = 0; j < n; ++j) {
    const double t = n > 1 ? static_cast<double>(j) / static_cast<double>(n - 1) : 0.0;
    const double lo = std::log10(10.0), hi = std::log10(static_cast<double>(std::max<int64_t>(10, o.max_cardinality)));
    out.cardinality.push_back(static_cast<int64_t>(std::llround(std::pow(10.0, lo + t * (hi - lo)))));
  }
  out.values.assign(static_cast<std::size_t>(n), std::vector<int64_t>(static_cast<std::size_t>(rows)));
  const int64_t threads =
      std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, std::max<int64_t>(1, rows / 10000));
  for (int64_t j = 0; j < n; ++j) {
    const std::vector<double> cdf = zipf_cdf(out.cardinality[static_cast<std::size_t>(j)]);
    // Ranks map to codes through a fixed shuffle-like multiplier, so frequent codes are not 0, 1, 2...
    const auto card = static_cast<std::uint64_t>(out.cardinality[static_cast<std::size_t>(j)]);
    std::vector<int64_t>& col = out.values[static_cast<std::size_t>(j)];
    auto fill = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const double u =
            uniform_of(mix(seed ^ mix(static_cast<std::uint64_t>(i) * 977 + static_cast<std::uint64_t>(j))));
        const auto rank = static_cast<std::uint64_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        col[static_cast<std::size_t>(i)] = static_cast<int64_t>((std::min(rank, card - 1) * 2654435761ULL) % card);
      }
    };
    std::vector<std::thread> workers;
    for (int64_t t = 1; t < threads; ++t) workers.emplace_back(fill, rows * t / threads, rows * (t + 1) / threads);
    fill(0, rows / threads);
    for (std::thread& w : workers) w.join();
  }
  const auto value = [&](int64_t j, int64_t i) {
    return j < n ? out.values[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)] : int64_t{0};
  };
  data.positives = 0;
  for (int64_t i = 0; i < rows; ++i) {
    double score = 2.5 * (2.0 * data.label[static_cast<std::size_t>(i)] - 1.0);
    if (n > 0) score += 1.5 * effect(11, value(0, i));
    if (n > 1) score += 1.0 * effect(12, value(1, i));
    if (n > 2) score += 1.5 * effect(13, value(0, i) * 1000003 + value(2, i));
    const double p = 1.0 / (1.0 + std::exp(-score));
    const bool positive = uniform_of(mix(seed ^ 0xC0FFEEULL ^ mix(static_cast<std::uint64_t>(i)))) < p;
    data.label[static_cast<std::size_t>(i)] = positive ? 1.0f : 0.0f;
    data.positives += positive ? 1 : 0;
  }
  return out;
}

}  // namespace cbgpu_bench
