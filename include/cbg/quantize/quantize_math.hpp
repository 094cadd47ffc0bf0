// SPDX-License-Identifier: Apache-2.0
// The quantizer's math, written once for the host reference (src/quantize/) and the kernels
// (kernels/quantize/): CatBoost's greedy border search (GreedyLogSum, GreedyMinEntropy), border
// finishing with the NaN modes, and the bin of one value. The other border types are in
// border_types.hpp. The facts are in ../shared/docs/catboost-training.md §1 and CatBoost's
// library/cpp/grid_creator/binarization.cpp.
//
// Everything here is deterministic and uses no libm call: the penalty terms of the scores come
// from a table that the host fills once with std::log and the device receives as is (gain_table),
// so the host and the GPU compare the very same doubles (CUDA's log() may differ from glibc's by
// an ulp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cbg/config.hpp"

namespace cbg::quantize {

// CatBoost's GPU defaults and limits (data_processing_options.cpp, quantization.h).
inline constexpr int default_border_count = 128;
inline constexpr int max_border_count = 255;  // bins fit one byte
inline constexpr std::uint32_t default_max_subset_size = 200000;
// Border slots per feature in border arrays (max_border_count rounded up).
inline constexpr int border_stride = 256;
// Heap entries the greedy search needs: max_border_count + 1 bins, plus one while splitting.
inline constexpr int greedy_heap_capacity = max_border_count + 2;

// Values match the C ABI's CBG_NAN_MODE_*.
enum class nan_mode : std::uint8_t { forbidden = 0, min = 1, max = 2 };
// Values match the C ABI's CBG_BORDER_*.
enum class border_type : std::uint8_t {
  greedy_log_sum = 0,
  greedy_min_entropy = 1,
  median = 2,
  uniform = 3,
  uniform_and_quantiles = 4,
  min_entropy = 5,
  max_log_sum = 6,
};
inline constexpr int border_type_count = 7;
// CatBoost's names of the border types (EBorderSelectionType), in border_type order.
inline constexpr const char* border_type_names[border_type_count] = {
    "GreedyLogSum", "GreedyMinEntropy", "Median", "Uniform", "UniformAndQuantiles", "MinEntropy", "MaxLogSum"};
// The type of a CatBoost name; false for any other text.
[[nodiscard]] inline bool border_type_from_name(const char* name, border_type& out) noexcept {
  for (int i = 0; i < border_type_count; ++i) {
    if (std::strcmp(name, border_type_names[i]) == 0) {
      out = static_cast<border_type>(i);
      return true;
    }
  }
  return false;
}

[[nodiscard]] CBG_HOST_DEVICE constexpr bool is_greedy(border_type t) noexcept {
  return t == border_type::greedy_log_sum || t == border_type::greedy_min_entropy;
}
[[nodiscard]] CBG_HOST_DEVICE constexpr bool is_exact(border_type t) noexcept {
  return t == border_type::min_entropy || t == border_type::max_log_sum;
}
// The penalty a border type scores bins with, as the table of its gains (see gain_table):
// MaxSumLog (gain ln(w + 1e-8)) or MinEntropy (gain -w ln(w + 1e-8)); none for the others.
enum class penalty : std::uint8_t { none = 0, log_sum = 1, entropy = 2 };
[[nodiscard]] CBG_HOST_DEVICE constexpr penalty penalty_of(border_type t) noexcept {
  if (t == border_type::greedy_log_sum || t == border_type::max_log_sum) return penalty::log_sum;
  if (t == border_type::greedy_min_entropy || t == border_type::min_entropy) return penalty::entropy;
  return penalty::none;
}

// A value as the quantizer sees it: float32 (CatBoost stores float features as float), with every
// NaN made the canonical positive quiet NaN so that a radix sort puts all of them last.
CBG_HOST_DEVICE inline float canonical_nan() noexcept {
  const std::uint32_t bits = 0x7fc00000u;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}
CBG_HOST_DEVICE inline float to_feature_float(double v) noexcept {
  if (v != v) return canonical_nan();
  return static_cast<float>(v);
}

CBG_HOST_DEVICE inline bool is_nan(float v) noexcept { return v != v; }

// The border between two neighbouring distinct sorted values: 0.5f*a + 0.5f*b in float, each
// operation rounded on its own (no fused multiply-add, which would change the last bit).
CBG_HOST_DEVICE inline float greedy_border_between(float a, float b) noexcept {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(0.5f, a), __fmul_rn(0.5f, b));
#else
  volatile float ha = 0.5f * a;  // volatile: keep the host compiler from contracting to an FMA
  volatile float hb = 0.5f * b;
  return ha + hb;
#endif
}

// One bin of the greedy search: the sorted positions [start, end), its best cut and that cut's
// score (-inf when the bin cannot be cut).
struct greedy_bin {
  double score;
  std::uint32_t start;
  std::uint32_t end;
  std::uint32_t split;
  std::uint32_t pad;
};

// First index in [lo, hi) whose value is not less than v (std::lower_bound).
CBG_HOST_DEVICE inline std::uint32_t lower_bound_f(const float* a, std::uint32_t lo, std::uint32_t hi,
                                                   float v) noexcept {
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (a[mid] < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// First index in [lo, hi) whose value is greater than v (std::upper_bound).
CBG_HOST_DEVICE inline std::uint32_t upper_bound_f(const float* a, std::uint32_t lo, std::uint32_t hi,
                                                   float v) noexcept {
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (v < a[mid]) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// Score of cutting [s, e) at `pos`: gain(l) + gain(r) - gain(l + r), summed in that order, in
// double, where gain(w) = -penalty(w) is `gains[w]` (gain_table): for MaxSumLog
// ln(l + 1e-8) + ln(r + 1e-8) - ln(l + r + 1e-8); for MinEntropy the terms -w ln(w + 1e-8).
// (CatBoost adds the negated penalties: the negations are exact, so the sums are the same bits.)
CBG_HOST_DEVICE inline double greedy_score(const double* gains, std::uint32_t s, std::uint32_t e,
                                           std::uint32_t pos) noexcept {
  if (pos == s || pos == e) return -static_cast<double>(INFINITY);
  return (gains[pos - s] + gains[e - pos]) - gains[e - s];
}

// The bin [s, e) with its best cut, given the two edges of the run of its median value:
// lb = std::lower_bound(sorted + s, sorted + mid, v), ub = std::upper_bound(sorted + mid,
// sorted + e, v) with mid = s + (e - s) / 2 and v = sorted[mid]. An exact tie goes to lb.
// (The GPU finds lb and ub with a warp-wide search, the host with binary searches.)
CBG_HOST_DEVICE inline greedy_bin choose_greedy_cut(const double* gains, std::uint32_t s, std::uint32_t e,
                                                    std::uint32_t lb, std::uint32_t ub) noexcept {
  const double score_l = greedy_score(gains, s, e, lb);
  const double score_u = greedy_score(gains, s, e, ub);
  greedy_bin b;
  b.start = s;
  b.end = e;
  b.pad = 0;
  if (score_l >= score_u) {
    b.split = lb;
    b.score = score_l;
  } else {
    b.split = ub;
    b.score = score_u;
  }
  return b;
}

// The bin [s, e) over `sorted` with its best cut: the two edges of the run of the median value.
CBG_HOST_DEVICE inline greedy_bin make_greedy_bin(const float* sorted, const double* gains, std::uint32_t s,
                                                  std::uint32_t e) noexcept {
  const std::uint32_t mid = s + (e - s) / 2;
  const float v = sorted[mid];
  return choose_greedy_cut(gains, s, e, lower_bound_f(sorted, s, mid, v), upper_bound_f(sorted, mid, e, v));
}

CBG_HOST_DEVICE inline bool can_split(const greedy_bin& b) noexcept { return b.split != b.start && b.split != b.end; }

// A max-heap on score with the exact element moves of libc++'s std::priority_queue (push_heap's
// sift-up; pop_heap's Floyd sift-down followed by a sift-up), which CatBoost is built with. Bins
// of equal score are common; which of them is cut next depends on these moves.
namespace heap {

CBG_HOST_DEVICE inline bool less(const greedy_bin& a, const greedy_bin& b) noexcept { return a.score < b.score; }

// Moves the element at position len-1 up to its place.
CBG_HOST_DEVICE inline void sift_up(greedy_bin* h, std::uint32_t len) noexcept {
  if (len <= 1) return;
  std::uint32_t last = len - 1;
  std::uint32_t parent = (len - 2) / 2;
  if (!less(h[parent], h[last])) return;
  const greedy_bin t = h[last];
  while (true) {
    h[last] = h[parent];
    last = parent;
    if (parent == 0) break;
    parent = (parent - 1) / 2;
    if (!less(h[parent], t)) break;
  }
  h[last] = t;
}

CBG_HOST_DEVICE inline void push(greedy_bin* h, std::uint32_t& size, const greedy_bin& b) noexcept {
  h[size] = b;
  ++size;
  sift_up(h, size);
}

// Removes and returns the top.
CBG_HOST_DEVICE inline greedy_bin pop(greedy_bin* h, std::uint32_t& size) noexcept {
  const std::uint32_t len = size;
  const greedy_bin top = h[0];
  if (len > 1) {
    // Floyd: walk the hole from the root down to a leaf, always taking the larger child
    // (the right one only when the left is strictly smaller).
    std::uint32_t hole = 0;
    std::uint32_t child = 0;
    while (true) {
      std::uint32_t child_i = 2 * child + 1;
      child = child_i;
      if (child + 1 < len && less(h[child_i], h[child_i + 1])) {
        ++child_i;
        ++child;
      }
      h[hole] = h[child_i];
      hole = child_i;
      if (child > (len - 2) / 2) break;
    }
    const std::uint32_t last = len - 1;
    if (hole != last) {
      h[hole] = h[last];
      sift_up(h, hole + 1);
    }
  }
  size = len - 1;
  return top;
}

}  // namespace heap

// The border before sorted position s > 0 (a bin start): the midpoint, -0.0 made +0.0.
CBG_HOST_DEVICE inline float greedy_border_at(const float* sorted, std::uint32_t s) noexcept {
  float b = greedy_border_between(sorted[s - 1], sorted[s]);
  if (b == 0.0f) b = 0.0f;  // -0.0 -> +0.0
  return b;
}

// Drops, in place, each border equal to the one kept before it (the input is non-decreasing);
// returns the number kept.
CBG_HOST_DEVICE inline int unique_borders(float* b, int n) noexcept {
  int count = 0;
  for (int i = 0; i < n; ++i) {
    if (count > 0 && b[count - 1] == b[i]) continue;
    b[count++] = b[i];
  }
  return count;
}

// Sorts a few integers ascending in place (insertion sort; n <= 256).
CBG_HOST_DEVICE inline void sort_small(std::uint32_t* a, std::uint32_t n) noexcept {
  for (std::uint32_t i = 1; i < n; ++i) {
    const std::uint32_t v = a[i];
    std::uint32_t j = i;
    while (j > 0 && a[j - 1] > v) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = v;
  }
}

// The greedy search (GreedyLogSum or GreedyMinEntropy, by the table `gains`) on `n` sorted
// non-NaN values: writes at most `max_borders` borders to `out`, ascending, unique, -0.0 replaced
// by +0.0, and returns their number. `heap_scratch` holds greedy_heap_capacity bins and
// `start_scratch` border_stride integers.
CBG_HOST_DEVICE inline int greedy_borders(const float* sorted, std::uint32_t n, int max_borders, const double* gains,
                                          greedy_bin* heap_scratch, std::uint32_t* start_scratch, float* out) noexcept {
  if (n == 0 || max_borders <= 0) return 0;
  std::uint32_t size = 0;
  heap::push(heap_scratch, size, make_greedy_bin(sorted, gains, 0, n));
  while (size <= static_cast<std::uint32_t>(max_borders) && can_split(heap_scratch[0])) {
    const greedy_bin top = heap::pop(heap_scratch, size);
    heap::push(heap_scratch, size, make_greedy_bin(sorted, gains, top.start, top.split));
    heap::push(heap_scratch, size, make_greedy_bin(sorted, gains, top.split, top.end));
  }
  // Each bin but the first contributes the border before its first value. Bin starts in
  // ascending order give non-decreasing borders, so dropping equal neighbours makes them unique.
  std::uint32_t starts = 0;
  for (std::uint32_t i = 0; i < size; ++i) {
    if (heap_scratch[i].start != 0) start_scratch[starts++] = heap_scratch[i].start;
  }
  sort_small(start_scratch, starts);
  for (std::uint32_t i = 0; i < starts; ++i) out[i] = greedy_border_at(sorted, start_scratch[i]);
  const int count = unique_borders(out, static_cast<int>(starts));
  for (int i = count; i < static_cast<int>(starts); ++i) out[i] = 0.0f;  // the unused slots stay 0
  return count;
}

// The search budget for a feature: one border is kept for NaNs when the border sample has any and
// the mode puts them at an end.
CBG_HOST_DEVICE inline int search_border_budget(int border_count, bool sample_has_nan) noexcept {
  return sample_has_nan ? border_count - 1 : border_count;
}

// The NaN mode that binarization uses: Forbidden when the sample has no NaN (CatBoost's rule),
// else the requested mode (Forbidden with a NaN in the sample is an error raised by the caller).
CBG_HOST_DEVICE inline nan_mode effective_nan_mode(nan_mode requested, bool sample_has_nan) noexcept {
  return sample_has_nan ? requested : nan_mode::forbidden;
}

// Adds the NaN border to `count` searched borders in `borders` (room for one more): -FLT_MAX first
// for Min, +FLT_MAX last for Max. Returns the new count.
CBG_HOST_DEVICE inline int add_nan_border(float* borders, int count, nan_mode mode) noexcept {
  constexpr float flt_max = 3.40282346638528859811704183484516925e+38f;
  if (mode == nan_mode::min) {
    for (int i = count; i > 0; --i) borders[i] = borders[i - 1];
    borders[0] = -flt_max;
    return count + 1;
  }
  if (mode == nan_mode::max) {
    borders[count] = flt_max;
    return count + 1;
  }
  return count;
}

// The bin of value `v`: the number of borders strictly below it (so the split "border b" sends
// v > b to the right); NaN goes to the last bin with Max and to bin 0 otherwise.
CBG_HOST_DEVICE inline std::uint32_t bin_of(float v, const float* borders, int count, nan_mode mode) noexcept {
  if (is_nan(v)) return mode == nan_mode::max ? static_cast<std::uint32_t>(count) : 0u;
  return lower_bound_f(borders, 0, static_cast<std::uint32_t>(count), v);
}

}  // namespace cbg::quantize
