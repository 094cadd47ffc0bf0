// SPDX-License-Identifier: Apache-2.0
// Which objects the borders are built from: CatBoost's rule (catboost-training.md §1.2). With more
// than `max_subset` objects, a subset of `max_subset` indices is drawn with CatBoost's generator
// (TRestorableFastRng64 seeded with the random seed: two PCG-XSH-RR 32-bit streams seeded from a
// third), by a partial Fisher-Yates shuffle when k > n / log2(k), else by rejection into a set.
// Only the set of indices matters (the values are sorted afterwards); it is returned ascending.
// The data are taken as not shuffled (CatBoost's Pool.quantize, and training with Plain boosting
// and no categorical features); a shuffled learn set takes its first `max_subset` objects instead.
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/config.hpp"

namespace cbg::quantize {

// One PCG-XSH-RR 32-bit stream: a 64-bit LCG state and its odd increment. Shared with the GPU,
// which draws the subset in parallel by advancing copies of the streams.
struct pcg32_stream {
  std::uint64_t state;
  std::uint64_t increment;
};
inline constexpr std::uint64_t pcg_multiplier = 6364136223846793005ULL;

CBG_HOST_DEVICE inline std::uint32_t pcg_next(pcg32_stream& s) noexcept {
  s.state = s.state * pcg_multiplier + s.increment;
  const std::uint64_t x = s.state;
  const auto xorshifted = static_cast<std::uint32_t>(((x >> 18u) ^ x) >> 27u);
  const auto rot = static_cast<std::uint32_t>(x >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

// The stream `steps` outputs later, in O(log steps): the LCG step is an affine map, squared.
CBG_HOST_DEVICE inline pcg32_stream pcg_advance(pcg32_stream s, std::uint64_t steps) noexcept {
  std::uint64_t acc_mult = 1, acc_plus = 0, cur_mult = pcg_multiplier, cur_plus = s.increment;
  for (; steps > 0; steps >>= 1) {
    if ((steps & 1u) != 0) {
      acc_mult *= cur_mult;
      acc_plus = acc_plus * cur_mult + cur_plus;
    }
    cur_plus = (cur_mult + 1) * cur_plus;
    cur_mult *= cur_mult;
  }
  s.state = acc_mult * s.state + acc_plus;
  return s;
}

// TFastRng64's two streams; a 64-bit draw is the first stream's output above the second's.
struct rng64_streams {
  pcg32_stream high;
  pcg32_stream low;
};
CBG_HOST_DEVICE inline std::uint64_t rng64_next(rng64_streams& s) noexcept {
  const std::uint64_t x = pcg_next(s.high);
  return (x << 32) | pcg_next(s.low);
}
CBG_HOST_DEVICE inline rng64_streams rng64_advance(const rng64_streams& s, std::uint64_t draws) noexcept {
  return {pcg_advance(s.high, draws), pcg_advance(s.low, draws)};
}

// CatBoost's TFastRng64 (util/random/fast.h), reimplemented from its description.
class catboost_rng64 {
 public:
  explicit catboost_rng64(std::uint64_t seed) noexcept;
  [[nodiscard]] const rng64_streams& streams() const noexcept { return s_; }
  std::uint64_t next() noexcept { return rng64_next(s_); }
  // Uniform on [0, bound) by rejection of the top partial range, as util/random/common_ops.h.
  std::uint64_t uniform(std::uint64_t bound) noexcept;
  // The same with the rejection limit computed once for many draws of one bound.
  static std::uint64_t rejection_limit(std::uint64_t bound) noexcept;
  std::uint64_t uniform(std::uint64_t bound, std::uint64_t limit) noexcept;

 private:
  rng64_streams s_{};
};

// Whether CatBoost draws k of n indices by a partial Fisher-Yates shuffle (else by rejection
// into a set): k > n / log2(k).
bool subset_by_shuffle(std::uint64_t n, std::uint64_t k) noexcept;

// The sorted indices of the border subset, or an empty vector when every object is used
// (rows <= max_subset).
std::vector<std::uint32_t> border_subset(std::uint64_t rows, std::uint32_t max_subset, std::uint64_t seed);

}  // namespace cbg::quantize
