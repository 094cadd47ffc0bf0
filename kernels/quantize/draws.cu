// SPDX-License-Identifier: Apache-2.0
// The border subset drawn on the GPU, the same set as border_subset (sampling.hpp). The host draws
// one at a time (milliseconds for 200 000); here every thread makes a run of draws from its own
// copy of the generator, advanced to the run's start, and the rest is sorting and scanning. The
// chosen rows are set in a bitmap over the rows, which reads out ascending.
//
// Rejection into a set (the first draws that hold k distinct rows):
//  1. draw d gives key (row << draw_bits | d), or an all-ones key when rejected (uniform's
//     rejection of the top partial range: a draw that CatBoost skips);
//  2. sorting the keys puts each row's first draw first among its draws;
//  3. first[d] = 1 for those first draws; a scan over d counts the distinct rows so far;
//  4. the rows first drawn at or before the k-th distinct one are the subset.
// The draws made hold k distinct rows with a margin of many standard deviations; if ever they do
// not, the status becomes subset_short and the caller draws on the host instead.
//
// Partial Fisher-Yates (step i swaps positions i and j_i = i + uniform(n - i)): step i chooses
// the value at j_i, which is j_i itself unless an earlier step i' swapped into j_i, the last such
// one putting there what position i' held at its own step, V(i'). V(i') is i' unless an earlier
// step's j was i', and so on down a chain of ever earlier steps. Sorting the (j_i, i) pairs gives
// each step its previous step with the same j, and each position below k its last writer; every
// thread then walks its chain. A draw that uniform would reject (about one in 2^64 / n) makes the
// status subset_short.
#include <algorithm>
#include <bit>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels/common/cccl.cuh"
#include "kernels/quantize/stages.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"

namespace cbg::quantize::detail {

namespace {

constexpr int draws_block = 256;
constexpr int draws_per_thread = 16;
constexpr std::size_t part_alignment = 256;

constexpr std::size_t aligned(std::size_t bytes) noexcept {
  return (bytes + part_alignment - 1) / part_alignment * part_alignment;
}

constexpr std::uint32_t none = 0xffffffffu;

struct draw_parts {
  std::uint64_t* keys;
  std::uint64_t* keys_alt;
  std::uint32_t* rows;      // row of draw d (shuffle: j of step d)
  std::uint32_t* first;     // 1 where draw d is its row's first (shuffle: the previous step with this j)
  std::uint32_t* distinct;  // inclusive scan of first (shuffle: the last step that wrote position d)
  std::uint32_t* bitmap;    // chosen rows
  std::uint32_t* word_offsets;
  void* temp;
};

draw_parts parts_of(const draw_plan& plan, void* scratch) {
  auto* p = static_cast<unsigned char*>(scratch);
  const std::size_t d = plan.draws;
  draw_parts parts{};
  parts.keys = reinterpret_cast<std::uint64_t*>(p);
  p += aligned(d * 8);
  parts.keys_alt = reinterpret_cast<std::uint64_t*>(p);
  p += aligned(d * 8);
  parts.rows = reinterpret_cast<std::uint32_t*>(p);
  p += aligned(d * 4);
  parts.first = reinterpret_cast<std::uint32_t*>(p);
  p += aligned(d * 4);
  parts.distinct = reinterpret_cast<std::uint32_t*>(p);
  p += aligned(d * 4);
  parts.bitmap = reinterpret_cast<std::uint32_t*>(p);
  p += aligned(plan.words * 4);
  parts.word_offsets = reinterpret_cast<std::uint32_t*>(p);
  p += aligned(plan.words * 4);
  parts.temp = p;
  return parts;
}

__global__ __launch_bounds__(draws_block) void draw_kernel(rng64_streams rng, std::uint64_t rows, std::uint64_t limit,
                                                           std::uint32_t draws, int draw_bits, std::uint64_t rejected,
                                                           std::uint64_t* keys, std::uint32_t* out_rows) {
  const std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(draws_block) + threadIdx.x;
  const std::uint64_t begin = t * draws_per_thread;
  if (begin >= draws) return;
  rng64_streams s = rng64_advance(rng, begin);
  for (std::uint64_t d = begin; d < begin + draws_per_thread && d < draws; ++d) {
    const std::uint64_t r = rng64_next(s);
    const std::uint64_t row = r % rows;
    keys[d] = r < limit ? (row << draw_bits) | d : rejected;
    out_rows[d] = static_cast<std::uint32_t>(row);
  }
}

// first[d] = 1 when sorted key p is the first draw of its row (rejected keys: none).
__global__ __launch_bounds__(draws_block) void first_kernel(const std::uint64_t* sorted, std::uint32_t draws,
                                                            int draw_bits, std::uint64_t rejected,
                                                            std::uint32_t* first) {
  const std::uint64_t p = blockIdx.x * static_cast<std::uint64_t>(draws_block) + threadIdx.x;
  if (p >= draws || sorted[p] == rejected) return;
  const std::uint64_t key = sorted[p];
  if (p == 0 || (sorted[p - 1] >> draw_bits) != (key >> draw_bits)) {
    first[key & ((std::uint64_t{1} << draw_bits) - 1)] = 1;
  }
}

// The rows first drawn at or before the k-th distinct one go into the bitmap.
__global__ __launch_bounds__(draws_block) void mark_kernel(const std::uint32_t* rows, const std::uint32_t* first,
                                                           const std::uint32_t* distinct, std::uint32_t draws,
                                                           std::uint32_t k, std::uint32_t* bitmap, int* status) {
  const std::uint64_t d = blockIdx.x * static_cast<std::uint64_t>(draws_block) + threadIdx.x;
  if (d >= draws) return;
  if (first[d] != 0 && distinct[d] <= k) atomicOr(&bitmap[rows[d] / 32], 1u << (rows[d] % 32));
  if (d == draws - 1 && distinct[d] < k) atomicMin(status, subset_short);
}

// Partial Fisher-Yates, step d of `draws`: j_d and the key (j_d << draw_bits | d).
__global__ __launch_bounds__(draws_block) void shuffle_draw_kernel(rng64_streams rng, std::uint64_t rows,
                                                                   std::uint32_t draws, int draw_bits,
                                                                   std::uint64_t* keys, std::uint32_t* js,
                                                                   int* status) {
  const std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(draws_block) + threadIdx.x;
  const std::uint64_t begin = t * draws_per_thread;
  if (begin >= draws) return;
  rng64_streams s = rng64_advance(rng, begin);
  for (std::uint64_t d = begin; d < begin + draws_per_thread && d < draws; ++d) {
    const std::uint64_t r = rng64_next(s);
    const std::uint64_t bound = rows - d;
    // Under 2^64 - bound a draw is always below uniform's rejection limit.
    if (r > ~std::uint64_t{0} - bound && r >= ~std::uint64_t{0} - ~std::uint64_t{0} % bound) {
      atomicMin(status, subset_short);
    }
    const std::uint64_t j = d + r % bound;
    js[d] = static_cast<std::uint32_t>(j);
    keys[d] = (j << draw_bits) | d;
  }
}

// From the (j, step) pairs sorted: each step's previous step with the same j, and for each
// position below k the last step that swapped into it before its own step.
__global__ __launch_bounds__(draws_block) void shuffle_links_kernel(const std::uint64_t* sorted, std::uint32_t draws,
                                                                    int draw_bits, std::uint32_t* previous,
                                                                    std::uint32_t* writer) {
  const std::uint64_t p = blockIdx.x * static_cast<std::uint64_t>(draws_block) + threadIdx.x;
  if (p >= draws) return;
  const std::uint64_t mask = (std::uint64_t{1} << draw_bits) - 1;
  const std::uint64_t j = sorted[p] >> draw_bits;
  const auto step = static_cast<std::uint32_t>(sorted[p] & mask);
  const bool has_previous = p > 0 && (sorted[p - 1] >> draw_bits) == j;
  const std::uint32_t prev = has_previous ? static_cast<std::uint32_t>(sorted[p - 1] & mask) : none;
  previous[step] = prev;
  const bool last = p + 1 == draws || (sorted[p + 1] >> draw_bits) != j;
  // Position j's own step is j (steps never pick a j below their own index), so the last
  // writer before it is this entry, or the one before when this is step j itself.
  if (last && j < draws) writer[j] = step == j ? prev : step;
}

// The value each step chooses, into the bitmap.
__global__ __launch_bounds__(draws_block) void shuffle_choose_kernel(const std::uint32_t* js,
                                                                     const std::uint32_t* previous,
                                                                     const std::uint32_t* writer, std::uint32_t draws,
                                                                     std::uint32_t* bitmap) {
  const std::uint64_t d = blockIdx.x * static_cast<std::uint64_t>(draws_block) + threadIdx.x;
  if (d >= draws) return;
  std::uint32_t chosen = js[d];
  if (previous[d] != none) {
    chosen = previous[d];  // V(previous): down the chain of writers to a position never written
    while (writer[chosen] != none) chosen = writer[chosen];
  }
  atomicOr(&bitmap[chosen / 32], 1u << (chosen % 32));
}

__global__ __launch_bounds__(draws_block) void popcount_kernel(const std::uint32_t* bitmap, std::size_t words,
                                                               std::uint32_t* counts) {
  const std::size_t w = blockIdx.x * static_cast<std::size_t>(draws_block) + threadIdx.x;
  if (w < words) counts[w] = static_cast<std::uint32_t>(__popc(bitmap[w]));
}

__global__ __launch_bounds__(draws_block) void readout_kernel(const std::uint32_t* bitmap, const std::uint32_t* offsets,
                                                              std::size_t words, std::uint32_t* subset) {
  const std::size_t w = blockIdx.x * static_cast<std::size_t>(draws_block) + threadIdx.x;
  if (w >= words) return;
  std::uint32_t at = offsets[w];
  for (std::uint32_t bits = bitmap[w]; bits != 0; bits &= bits - 1) {
    subset[at++] = static_cast<std::uint32_t>(w * 32 + static_cast<std::size_t>(__ffs(static_cast<int>(bits)) - 1));
  }
}

unsigned blocks_for(std::uint64_t n) { return static_cast<unsigned>((n + draws_block - 1) / draws_block); }

}  // namespace

std::size_t draw_plan::bytes() const noexcept {
  return 2 * aligned(std::size_t{draws} * 8) + 3 * aligned(std::size_t{draws} * 4) + 2 * aligned(words * 4) +
         aligned(temp_bytes);
}

draw_plan plan_subset_draws(std::uint64_t rows, std::uint32_t k, std::uint32_t draws) {
  CBG_EXPECTS(rows > k && rows <= 0xffffffffULL, status::invalid_argument, "no subset to draw");
  draw_plan plan;
  plan.shuffle = subset_by_shuffle(rows, k);
  // Expected repeats among d draws of n rows: about d^2 / 2n, at most k / 35 here (n >= k log2 k);
  // twice that plus 4096 is many standard deviations of margin.
  const std::uint64_t repeats = (std::uint64_t{k} * k + rows - 1) / rows;
  plan.draws = plan.shuffle ? k
               : draws != 0
                   ? draws
                   : static_cast<std::uint32_t>(std::min<std::uint64_t>(k + 2 * repeats + 4096, 0x7fffffffULL));
  plan.draw_bits = static_cast<int>(std::bit_width(std::uint64_t{plan.draws} + 1));  // so no key is all ones
  plan.key_bits = plan.draw_bits + static_cast<int>(std::bit_width(rows));
  if (plan.key_bits > 63) return plan;  // not usable: the caller draws on the host
  plan.words = static_cast<std::size_t>((rows + 31) / 32);
  std::size_t sort_bytes = 0, scan_bytes = 0, word_scan_bytes = 0;
  cub::DoubleBuffer<std::uint64_t> keys(nullptr, nullptr);
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, keys, plan.draws, 0, plan.key_bits));
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, static_cast<const std::uint32_t*>(nullptr),
                                             static_cast<std::uint32_t*>(nullptr), plan.draws));
  CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, word_scan_bytes, static_cast<std::uint32_t*>(nullptr),
                                             static_cast<std::uint32_t*>(nullptr), plan.words));
  plan.temp_bytes = std::max({sort_bytes, scan_bytes, word_scan_bytes});
  return plan;
}

void draw_subset(const draw_plan& plan, void* scratch, const rng64_streams& rng, std::uint64_t rows, std::uint32_t k,
                 std::uint32_t* subset, int* status, cudaStream_t stream) {
  const draw_parts parts = parts_of(plan, scratch);
  CBG_CUDA_TRY(cudaMemsetAsync(parts.bitmap, 0, plan.words * 4, stream));
  const unsigned draw_blocks = blocks_for((plan.draws + draws_per_thread - 1) / draws_per_thread);
  cub::DoubleBuffer<std::uint64_t> keys(parts.keys, parts.keys_alt);
  std::size_t temp_bytes = plan.temp_bytes;
  if (plan.shuffle) {
    CBG_CUDA_TRY(cudaMemsetAsync(parts.distinct, 0xff, std::size_t{plan.draws} * 4, stream));  // none
    shuffle_draw_kernel<<<draw_blocks, draws_block, 0, stream>>>(rng, rows, plan.draws, plan.draw_bits, parts.keys,
                                                                 parts.rows, status);
    CBG_CHECK_CUDA(stream);
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortKeys(parts.temp, temp_bytes, keys, plan.draws, 0, plan.key_bits, stream));
    shuffle_links_kernel<<<blocks_for(plan.draws), draws_block, 0, stream>>>(keys.Current(), plan.draws, plan.draw_bits,
                                                                             parts.first, parts.distinct);
    CBG_CHECK_CUDA(stream);
    shuffle_choose_kernel<<<blocks_for(plan.draws), draws_block, 0, stream>>>(parts.rows, parts.first, parts.distinct,
                                                                              plan.draws, parts.bitmap);
    CBG_CHECK_CUDA(stream);
  } else {
    const std::uint64_t limit = ~std::uint64_t{0} - ~std::uint64_t{0} % rows;  // uniform's rejection
    const std::uint64_t rejected = (std::uint64_t{1} << plan.key_bits) - 1;
    CBG_CUDA_TRY(cudaMemsetAsync(parts.first, 0, std::size_t{plan.draws} * 4, stream));
    draw_kernel<<<draw_blocks, draws_block, 0, stream>>>(rng, rows, limit, plan.draws, plan.draw_bits, rejected,
                                                         parts.keys, parts.rows);
    CBG_CHECK_CUDA(stream);
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortKeys(parts.temp, temp_bytes, keys, plan.draws, 0, plan.key_bits, stream));
    first_kernel<<<blocks_for(plan.draws), draws_block, 0, stream>>>(keys.Current(), plan.draws, plan.draw_bits,
                                                                     rejected, parts.first);
    CBG_CHECK_CUDA(stream);
    temp_bytes = plan.temp_bytes;
    CBG_CUDA_TRY(
        cub::DeviceScan::InclusiveSum(parts.temp, temp_bytes, parts.first, parts.distinct, plan.draws, stream));
    mark_kernel<<<blocks_for(plan.draws), draws_block, 0, stream>>>(parts.rows, parts.first, parts.distinct, plan.draws,
                                                                    k, parts.bitmap, status);
    CBG_CHECK_CUDA(stream);
  }
  popcount_kernel<<<blocks_for(plan.words), draws_block, 0, stream>>>(parts.bitmap, plan.words, parts.word_offsets);
  CBG_CHECK_CUDA(stream);
  temp_bytes = plan.temp_bytes;
  CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(parts.temp, temp_bytes, parts.word_offsets, parts.word_offsets, plan.words,
                                             stream));
  readout_kernel<<<blocks_for(plan.words), draws_block, 0, stream>>>(parts.bitmap, parts.word_offsets, plan.words,
                                                                     subset);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::quantize::detail
