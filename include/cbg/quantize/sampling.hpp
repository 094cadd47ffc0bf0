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

namespace cbg::quantize {

// CatBoost's TFastRng64 (util/random/fast.h), reimplemented from its description.
class catboost_rng64 {
 public:
  explicit catboost_rng64(std::uint64_t seed) noexcept;
  std::uint64_t next() noexcept;
  // Uniform on [0, bound) by rejection of the top partial range, as util/random/common_ops.h.
  std::uint64_t uniform(std::uint64_t bound) noexcept;
  // The same with the rejection limit computed once for many draws of one bound.
  static std::uint64_t rejection_limit(std::uint64_t bound) noexcept;
  std::uint64_t uniform(std::uint64_t bound, std::uint64_t limit) noexcept;

 private:
  struct lcg32 {
    std::uint64_t state;
    std::uint64_t increment;
    std::uint32_t next() noexcept;
  };
  lcg32 r1_{}, r2_{};
};

// The sorted indices of the border subset, or an empty vector when every object is used
// (rows <= max_subset).
std::vector<std::uint32_t> border_subset(std::uint64_t rows, std::uint32_t max_subset,
                                         std::uint64_t seed);

}  // namespace cbg::quantize
