// SPDX-License-Identifier: Apache-2.0
// The tree kernel of the GPU evaluator. A block owns a tile of R rows (R a multiple of 4) and walks
// the trees of the range in chunks of C:
//   - the tile's slot bytes are staged in shared memory once (or read from global memory when the
//     model has too many slots), four rows to a 32-bit word;
//   - per chunk, the chunk's splits are decoded into shared memory, then every (tree, word) item
//     computes the leaf indexes of four rows at once with byte-wise compares inside 32-bit words
//     (device_model.hpp explains the trick), into a shared [tree][row] table of leaf indexes;
//   - then every (row, dimension) item adds its leaf values of the chunk's trees to its running
//     sum, in tree order, in double: the host evaluator's sum, bit for bit;
//   - at the end each row gets Scale/Bias and its prediction type, and is written out.
// Leaf indexes (output_kind::leaf_indexes) skip the sums and write the indexes directly.
// Nothing here synchronises with the host; the launch fits inside a CUDA graph.
#include <algorithm>
#include <atomic>

#include "kernels/apply/stages.hpp"
#include "kernels/apply/tuning_apply.hpp"

#include "cbg/apply/input.hpp"
#include "cbg/core/cuda_check.hpp"

namespace cbg::apply::detail {

namespace {

// One split of the current chunk, decoded: the word offset of its slot in the bins, and the
// comparison's xor mask and threshold replicated into the four bytes.
struct split_entry {
  std::uint64_t offset;
  std::uint32_t x4;
  std::uint32_t t4;
};
static_assert(sizeof(split_entry) == 16);

constexpr std::size_t align16(std::size_t b) { return (b + 15) / 16 * 16; }

template <bool WideLeaves, bool SmemBins, bool LeafIndexes>
__global__ __launch_bounds__(apply_block) void evaluate_kernel(const eval_args a) {
  using leaf_t = std::conditional_t<WideLeaves, std::uint16_t, std::uint8_t>;
  extern __shared__ __align__(16) unsigned char smem[];
  const eval_plan& p = a.plan;
  const device_model_view& m = a.model;
  const int R = p.tile_rows;
  const int C = p.tree_chunk;
  const int D = p.max_depth;
  const int B = static_cast<int>(blockDim.x);
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t tile0 = static_cast<std::int64_t>(blockIdx.x) * R;
  const int rows_here = static_cast<int>(min(static_cast<std::int64_t>(R), a.rows - tile0));
  const int words = (rows_here + 3) / 4;
  const int dim = m.dim;

  auto* table = reinterpret_cast<split_entry*>(smem);
  auto* leaf_offsets = reinterpret_cast<std::uint64_t*>(smem + p.off_leaf_offsets);
  auto* idx = reinterpret_cast<leaf_t*>(smem + p.off_idx);
  double* acc = nullptr;  // running sums of the tile's rows, [row][dim]
  if constexpr (!LeafIndexes) {
    acc = p.smem_acc ? reinterpret_cast<double*>(smem + p.off_acc)
                     : a.acc_global + static_cast<std::size_t>(blockIdx.x) * static_cast<std::size_t>(R) * dim;
  }

  // The tile's bins: words[slot * stride + w] for w < words.
  const std::uint32_t* bins;
  std::int64_t stride;
  if constexpr (SmemBins) {
    auto* staged = reinterpret_cast<std::uint32_t*>(smem + p.off_bins);
    const int wstride = R / 4;
    const std::uint32_t slots = max(m.n_slots, 1u);
    const std::uint32_t* from = a.bins + tile0 / 4;
    for (std::uint32_t i = tid; i < slots * static_cast<std::uint32_t>(words); i += B) {
      const std::uint32_t s = i / static_cast<std::uint32_t>(words);
      const std::uint32_t w = i - s * static_cast<std::uint32_t>(words);
      staged[s * wstride + w] = from[static_cast<std::int64_t>(s) * a.padded_words + w];
    }
    bins = staged;
    stride = wstride;
  } else {
    bins = a.bins + tile0 / 4;
    stride = a.padded_words;
  }
  if constexpr (!LeafIndexes) {
    for (int i = tid; i < rows_here * dim; i += B) acc[i] = 0.0;
  }

  // Items are walked with a fixed step of B: (t, w) advance by (B / words, B % words) and carry.
  const int step_t = B / words, step_w = B - step_t * words;
  const int step_r = B / dim, step_k = B - step_r * dim;

  for (std::uint32_t c0 = a.tree_begin; c0 < a.tree_end; c0 += static_cast<std::uint32_t>(C)) {
    const int nt = static_cast<int>(min(static_cast<std::uint32_t>(C), a.tree_end - c0));
    __syncthreads();  // the previous chunk is done with the table and the leaf indexes
    for (int i = tid; i < nt * D; i += B) {
      const int t = i / D;
      const int d = i - t * D;
      const std::uint32_t tree = c0 + static_cast<std::uint32_t>(t);
      const decoded_split ds = d < m.tree_depth[tree]
                                   ? decode_split(m.splits[m.tree_first_split[tree] + static_cast<std::uint32_t>(d)])
                                   : never_true_split();
      table[i] = split_entry{static_cast<std::uint64_t>(ds.slot) * static_cast<std::uint64_t>(stride), ds.x4, ds.t4};
    }
    if constexpr (!LeafIndexes) {
      for (int i = tid; i < nt; i += B) leaf_offsets[i] = m.leaf_offset[c0 + static_cast<std::uint32_t>(i)];
    }
    __syncthreads();

    // Leaf indexes of four rows per item.
    int t = tid / words, w = tid - (tid / words) * words;
    for (int i = tid; i < nt * words; i += B) {
      std::uint32_t lo = 0, hi = 0;
      const split_entry* splits = table + t * D;
      for (int d = 0; d < D; ++d) {
        const split_entry e = splits[d];
        const std::uint32_t bits = split_bits4(bins[e.offset + static_cast<std::uint64_t>(w)], e.x4, e.t4);
        if (!WideLeaves || d < 8) {
          lo |= bits << d;
        } else {
          hi |= bits << (d - 8);
        }
      }
      if constexpr (LeafIndexes) {
        const std::int64_t column = static_cast<std::int64_t>(c0 - a.tree_begin) + t;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int row = 4 * w + j;
          if (row < rows_here) {
            const std::uint32_t leaf = ((lo >> (8 * j)) & 0xffu) | (((hi >> (8 * j)) & 0xffu) << 8);
            store_output(a.out, a.out_type, (tile0 + row) * a.out_row_stride + column * a.out_col_stride, leaf);
          }
        }
      } else if constexpr (WideLeaves) {
        auto* pairs = reinterpret_cast<std::uint32_t*>(idx) + static_cast<std::size_t>(t) * (R / 2) + 2 * w;
        pairs[0] = __byte_perm(lo, hi, 0x5140);  // rows 0, 1: low byte from lo, high byte from hi
        pairs[1] = __byte_perm(lo, hi, 0x7362);  // rows 2, 3
      } else {
        reinterpret_cast<std::uint32_t*>(idx)[static_cast<std::size_t>(t) * (R / 4) + w] = lo;
      }
      t += step_t;
      w += step_w;
      if (w >= words) {
        w -= words;
        ++t;
      }
    }

    if constexpr (!LeafIndexes) {
      __syncthreads();
      // Each (row, dimension) adds the chunk's leaf values in tree order.
      int row = tid / dim, k = tid - (tid / dim) * dim;
      for (int i = tid; i < rows_here * dim; i += B) {
        double s = acc[i];
        const leaf_t* leaf = idx + row;
#pragma unroll 4
        for (int tt = 0; tt < nt; ++tt) {
          const std::uint64_t at = leaf_offsets[tt] + static_cast<std::uint64_t>(leaf[tt * R]) * dim + k;
          s += __ldg(m.leaf_values + at);
        }
        acc[i] = s;
        row += step_r;
        k += step_k;
        if (k >= dim) {
          k -= dim;
          ++row;
        }
      }
    }
  }

  if constexpr (!LeafIndexes) {
    __syncthreads();
    for (int row = tid; row < rows_here; row += B) {
      double* raw = acc + static_cast<std::size_t>(row) * dim;
      for (int k = 0; k < dim; ++k) raw[k] = model::scaled_raw(raw[k], m.scale, m.bias[k], a.add_bias);
      const std::int64_t out_row = (tile0 + row) * a.out_row_stride;
      model::postprocess_row(a.post, raw, dim, [&](int j, double v) {
        store_output(a.out, a.out_type, out_row + j * a.out_col_stride, v);
      });
    }
  }
}

// Lets a kernel use all the shared memory a block may opt into, once per device and kernel (so that
// later launches, e.g. inside CUDA graph capture, make no such call).
template <class Kernel>
void allow_large_shared_memory(Kernel* kernel, std::atomic<std::uint64_t>& done) {
  int device = 0;
  CBG_CUDA_TRY(cudaGetDevice(&device));
  const std::uint64_t bit = device < 64 ? std::uint64_t{1} << device : 0;
  if (bit != 0 && (done.load(std::memory_order_acquire) & bit) != 0) return;
  int optin = 0;
  CBG_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  CBG_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  done.fetch_or(bit, std::memory_order_acq_rel);
}

template <bool WideLeaves, bool SmemBins, bool LeafIndexes>
void launch(const eval_args& a, cudaStream_t stream) {
  static std::atomic<std::uint64_t> configured{0};
  auto* kernel = &evaluate_kernel<WideLeaves, SmemBins, LeafIndexes>;
  allow_large_shared_memory(kernel, configured);
  kernel<<<static_cast<unsigned int>(a.plan.tiles), apply_block, a.plan.smem_bytes, stream>>>(a);
  CBG_CUDA_TRY(cudaGetLastError());
}

template <bool WideLeaves, bool SmemBins>
void launch_mode(const eval_args& a, cudaStream_t stream) {
  if (a.leaf_indexes) {
    launch<WideLeaves, SmemBins, true>(a, stream);
  } else {
    launch<WideLeaves, SmemBins, false>(a, stream);
  }
}

struct layout {
  std::size_t leaf_offsets, idx, acc, bins, total;
};

layout shared_layout(int R, int C, int D, int leaf_bytes, std::uint32_t slots, int dim, bool leaf_indexes,
                     bool smem_acc, bool smem_bins) {
  layout l{};
  std::size_t at = align16(static_cast<std::size_t>(C) * static_cast<std::size_t>(D) * sizeof(split_entry));
  l.leaf_offsets = at;
  at = align16(at + (leaf_indexes ? 0 : static_cast<std::size_t>(C) * sizeof(std::uint64_t)));
  l.idx = at;
  at = align16(at + (leaf_indexes ? 0 : static_cast<std::size_t>(C) * static_cast<std::size_t>(R) * leaf_bytes));
  l.acc = at;
  at = align16(at + (leaf_indexes || !smem_acc ? 0 : static_cast<std::size_t>(R) * dim * sizeof(double)));
  l.bins = at;
  at = align16(at + (smem_bins ? static_cast<std::size_t>(std::max(slots, 1u)) * static_cast<std::size_t>(R) : 0));
  l.total = at;
  return l;
}

}  // namespace

eval_plan plan_evaluation(const tiling& t, std::int64_t rows, std::uint32_t n_slots, int dim, int max_depth,
                          bool leaf_indexes) {
  eval_plan p;
  p.max_depth = max_depth;
  p.wide_leaves = max_depth > 8;
  const int leaf_bytes = p.wide_leaves ? 2 : 1;
  const auto budget = static_cast<std::size_t>(t.smem_budget);
  const std::int64_t rows4 = std::max<std::int64_t>(4, (rows + 3) / 4 * 4);
  std::int64_t cap64 = std::min<std::int64_t>(std::max(4, t.max_tile_rows / 4 * 4), rows4);
  if (t.min_tiles > 0) {  // spread a small batch over the GPU: a tile's trees are walked serially
    const std::int64_t spread = (rows + t.min_tiles - 1) / t.min_tiles;
    cap64 = std::min(cap64, std::max<std::int64_t>(4, (spread + 3) / 4 * 4));
  }
  const int cap = static_cast<int>(cap64);
  // More trees per pass for small tiles: the leaf-index phase wants ~2 items per thread.
  int base_chunk = std::max(t.tree_chunk, 1);
  const auto chunk_for = [&](int R) {
    const int words = R / 4;
    const int wanted = (2 * apply_block + words - 1) / words;
    int c = base_chunk;
    while (c < wanted && c < max_tree_chunk) c *= 2;
    return std::min(c, std::max(max_tree_chunk, base_chunk));
  };
  const auto fits = [&](int R, int C, bool smem_acc, bool smem_bins) {
    return shared_layout(R, C, max_depth, leaf_bytes, n_slots, dim, leaf_indexes, smem_acc, smem_bins).total <= budget;
  };
  const auto half = [](int R) { return std::max(4, R / 8 * 4); };  // keeps a multiple of 4
  int R = cap;
  // Staged bins: the largest tile that fits, down to min_staged_tile_rows; sums in shared memory if
  // they fit beside, else in global scratch.
  if (!t.force_global_bins) {
    for (R = cap;; R = half(R)) {
      const int C = chunk_for(R);
      if (fits(R, C, true, true)) {
        p.smem_bins = p.smem_acc = true;
        break;
      }
      if (fits(R, C, false, true)) {
        p.smem_bins = true;
        break;
      }
      if (R <= std::min(min_staged_tile_rows, cap) || R == 4) break;
    }
  }
  if (!p.smem_bins) {
    // Bins from global memory: asked for (the tiling as given), or too many slots to stage a tile
    // of min_staged_tile_rows (the tiling of global_bins_tile_rows and global_tree_chunk).
    R = t.force_global_bins ? cap : std::min(cap, global_bins_tile_rows);
    if (!t.force_global_bins) base_chunk = std::max(t.global_tree_chunk, 1);
    for (; R > 4 && !fits(R, chunk_for(R), false, false);) R = half(R);
    p.smem_acc = fits(R, chunk_for(R), true, false);
  }
  p.tile_rows = R;
  p.tree_chunk = chunk_for(R);
  while (p.tree_chunk > 1 && !fits(R, p.tree_chunk, p.smem_acc, p.smem_bins)) p.tree_chunk /= 2;
  const layout l =
      shared_layout(R, p.tree_chunk, max_depth, leaf_bytes, n_slots, dim, leaf_indexes, p.smem_acc, p.smem_bins);
  CBG_EXPECTS(l.total <= 227 * 1024, status::unsupported,
              "the model's trees are too deep or wide for the GPU evaluator's shared memory");
  p.off_leaf_offsets = l.leaf_offsets;
  p.off_idx = l.idx;
  p.off_acc = l.acc;
  p.off_bins = l.bins;
  p.smem_bytes = l.total;
  p.tiles = (rows + R - 1) / R;
  p.global_acc = p.smem_acc || leaf_indexes ? 0 : static_cast<std::size_t>(p.tiles) * R * static_cast<std::size_t>(dim);
  return p;
}

void evaluate(const eval_args& a, cudaStream_t stream) {
  if (a.plan.tiles == 0) return;
  CBG_EXPECTS(a.plan.tiles <= 0x7fffffff, status::unsupported, "too many rows for one launch");
  if (a.plan.wide_leaves) {
    if (a.plan.smem_bins) {
      launch_mode<true, true>(a, stream);
    } else {
      launch_mode<true, false>(a, stream);
    }
  } else if (a.plan.smem_bins) {
    launch_mode<false, true>(a, stream);
  } else {
    launch_mode<false, false>(a, stream);
  }
}

}  // namespace cbg::apply::detail
