// SPDX-License-Identifier: Apache-2.0
// The border subset (see sampling.hpp).
#include "cbg/quantize/sampling.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "cbg/core/error.hpp"

namespace cbg::quantize {

catboost_rng64::catboost_rng64(std::uint64_t seed) noexcept {
  // The seeding generator: one stream with increment 1.
  pcg32_stream seeder{seed, 1};
  const auto next64 = [&seeder] {
    const std::uint64_t lo = pcg_next(seeder);
    const std::uint64_t hi = pcg_next(seeder);
    return lo | (hi << 32);
  };
  const std::uint64_t seed1 = next64();
  const std::uint32_t seq1 = pcg_next(seeder);
  const std::uint64_t seed2 = next64();
  std::uint32_t seq2 = pcg_next(seeder);
  constexpr std::uint32_t mask = ~0u >> 1;
  if ((seq1 & mask) == (seq2 & mask)) seq2 = ~seq2;  // the two streams must differ
  s_.high = pcg32_stream{seed1, (static_cast<std::uint64_t>(seq1) << 1u) | 1u};
  s_.low = pcg32_stream{seed2, (static_cast<std::uint64_t>(seq2) << 1u) | 1u};
}

bool subset_by_shuffle(std::uint64_t n, std::uint64_t k) noexcept {
  return k > 1 && static_cast<double>(k) > static_cast<double>(n) / std::log2(static_cast<double>(k));
}

std::uint64_t catboost_rng64::uniform(std::uint64_t bound) noexcept { return uniform(bound, rejection_limit(bound)); }

std::uint64_t catboost_rng64::rejection_limit(std::uint64_t bound) noexcept {
  const std::uint64_t rand_max = ~std::uint64_t{0};
  return rand_max - rand_max % bound;
}

std::uint64_t catboost_rng64::uniform(std::uint64_t bound, std::uint64_t limit) noexcept {
  std::uint64_t r;
  while ((r = next()) >= limit) {}
  return r % bound;
}

namespace {

// The set bits of a bitmap over [0, n), ascending.
std::vector<std::uint32_t> set_bits(const std::vector<std::uint64_t>& bitmap, std::size_t count) {
  std::vector<std::uint32_t> out;
  out.reserve(count);
  for (std::size_t w = 0; w < bitmap.size(); ++w) {
    for (std::uint64_t word = bitmap[w]; word != 0; word &= word - 1) {
      out.push_back(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(word))));
    }
  }
  return out;
}

}  // namespace

std::vector<std::uint32_t> border_subset(std::uint64_t rows, std::uint32_t max_subset, std::uint64_t seed) {
  CBG_EXPECTS(max_subset > 0, status::invalid_argument, "the border subset size must be positive");
  CBG_EXPECTS(rows <= 0xffffffffULL, status::unsupported,
              fmt::format("{} rows: the quantizer indexes rows with 32 bits", rows));
  if (rows <= max_subset) return {};
  const std::uint64_t n = rows;
  const std::uint64_t k = max_subset;
  catboost_rng64 rng(seed);
  // Both branches collect the chosen indices in a bitmap over the rows (n / 8 bytes), which reads
  // out sorted: only the set matters.
  std::vector<std::uint64_t> chosen((n + 63) / 64, 0);
  if (subset_by_shuffle(n, k)) {
    std::vector<std::uint32_t> all(n);
    std::iota(all.begin(), all.end(), 0u);
    for (std::uint64_t i = 0; i < k; ++i) std::swap(all[i], all[i + rng.uniform(n - i)]);
    for (std::uint64_t i = 0; i < k; ++i) chosen[all[i] / 64] |= std::uint64_t{1} << (all[i] % 64);
  } else {
    // CatBoost inserts into a hash set until it holds k indices.
    const std::uint64_t limit = catboost_rng64::rejection_limit(n);
    for (std::uint64_t count = 0; count < k;) {
      const std::uint64_t r = rng.uniform(n, limit);
      std::uint64_t& word = chosen[r / 64];
      const std::uint64_t bit = std::uint64_t{1} << (r % 64);
      if ((word & bit) == 0) {
        word |= bit;
        ++count;
      }
    }
  }
  return set_bits(chosen, k);
}

}  // namespace cbg::quantize
