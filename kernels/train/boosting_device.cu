// SPDX-License-Identifier: Apache-2.0
// The GPU data passes of the boosting loop (boosting.hpp): targets, weak target and bootstrap,
// leaf sums, approx updates and metrics as kernels on the context's stream, reproducing the host
// reference (src/train/boosting_host.cpp) bit for bit:
//  * per-row math from loss.hpp / metric.hpp / boosting_math.hpp (compiled with --fmad=false);
//  * ordered sums in the tile order of reduce_math.hpp (256 lanes x 16 rows per block, then the
//    pairwise fold in shared memory, then the same over the tile sums);
//  * leaf sums in 64-bit fixed point with integer atomics (order-free), maxima with integer atomics;
//  * AUC and the weighted quantile through CUB's (stable, deterministic) radix sort, scans and
//    reductions over integers.
// Only scalars, per-leaf sums (leaves x channels) and per-split border values come back to the host.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <cstring>

#include <string>

#include "kernels/common/cccl.cuh"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/column_view.hpp"
#include "cbg/dist/rank.hpp"
#include "cbg/dist/train.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/boosting_math.hpp"
#include "src/train/boosting_common.hpp"

namespace cbg::train {

namespace {

constexpr int lanes = sum_lanes;  // threads per block of every row kernel

// ---- ordered sums -------------------------------------------------------------------------------
// Folds the C per-lane sums of a block pairwise (lane i += lane i + s, s = 128 .. 1) and writes
// lane 0's to out[C]. `shared` holds C * lanes doubles.
template <int C>
__device__ void fold_block(const double (&acc)[C], double* shared, double* out) {
  const int t = static_cast<int>(threadIdx.x);
  for (int c = 0; c < C; ++c) shared[c * lanes + t] = acc[c];
  __syncthreads();
  for (int s = lanes / 2; s > 0; s >>= 1) {
    if (t < s) {
      for (int c = 0; c < C; ++c) shared[c * lanes + t] += shared[c * lanes + t + s];
    }
    __syncthreads();
  }
  if (t == 0) {
    for (int c = 0; c < C; ++c) out[c] = shared[c * lanes];
  }
}

// Rows of tile blockIdx.x as lane threadIdx.x visits them: r = tile * 4096 + j * 256 + lane.
#define CBG_FOR_TILE_ROWS(r, n)                                                               \
  for (std::int64_t j_ = 0, r = static_cast<std::int64_t>(blockIdx.x) * sum_tile + threadIdx.x; \
       j_ < sum_rows_per_lane && r < (n); ++j_, r += lanes)

template <int C>
__global__ void __launch_bounds__(lanes) reduce_tiles_kernel(const double* in, std::int64_t n, double* out) {
  __shared__ double shared[C * lanes];
  double acc[C];
  for (int c = 0; c < C; ++c) acc[c] = 0.0;
  CBG_FOR_TILE_ROWS(r, n) {
    for (int c = 0; c < C; ++c) acc[c] += in[r * C + c];
  }
  fold_block<C>(acc, shared, out + static_cast<std::int64_t>(blockIdx.x) * C);
}

// ---- small device helpers -------------------------------------------------------------------------
__device__ inline std::uint64_t order_key(double v) {
  const std::uint64_t b = double_bits(v);
  return (b >> 63) != 0 ? ~b : b | 0x8000000000000000ull;
}
__host__ __device__ inline double key_value(std::uint64_t k) {
  return double_from_bits((k >> 63) != 0 ? k & 0x7fffffffffffffffull : ~k);
}

struct label_facts_dev {
  unsigned long long min_key;
  unsigned long long max_key;
  unsigned non_integer;
  unsigned non_constant;
};

__global__ void label_facts_kernel(column_view c, std::int64_t n, label_facts_dev* out) {
  const double first = c.value(0);
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double v = c.value(r);
    atomicMin(&out->min_key, static_cast<unsigned long long>(order_key(v)));
    atomicMax(&out->max_key, static_cast<unsigned long long>(order_key(v)));
    if (v != floor(v)) atomicOr(&out->non_integer, 1u);
    if (v != first) atomicOr(&out->non_constant, 1u);
  }
}

__global__ void targets_kernel(column_view c, target_rule rule, std::int64_t n, std::int64_t first_row, float* out,
                               unsigned long long* first_bad) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float t = 0.f;
    const target_problem p = target_of(rule, c.value(r), t);
    out[r] = t;
    if (p != target_problem::none) {
      atomicMin(first_bad, (static_cast<unsigned long long>(r + first_row) << 8) | static_cast<unsigned>(p));
    }
  }
}

__global__ void value_at_kernel(column_view c, std::int64_t r, double* out) { *out = c.value(r); }

__global__ void to_float_kernel(column_view c, std::int64_t n, float* out) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[r] = static_cast<float>(c.value(r));
  }
}

__global__ void fill_kernel(float* out, std::int64_t n, float v) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[r] = v;
  }
}

struct start_args {
  column_view baseline[max_dims];
  double bias[max_dims];
  int dims = 1;
  bool has_baseline = false;
};

__global__ void start_kernel(start_args a, std::int64_t n, double* approx) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    for (int k = 0; k < a.dims; ++k) {
      double v = a.bias[k];
      if (a.has_baseline) v += a.baseline[k].value(r);
      approx[k * n + r] = v;
    }
  }
}

// The sample weight of a row (1 without weights).
__device__ inline double weight_of(const float* w, std::int64_t r) { return w == nullptr ? 1.0 : w[r]; }

// ---- learn-set passes -------------------------------------------------------------------------------
struct rows_view {
  const double* approx = nullptr;  // [dims][n]
  const float* target = nullptr;
  const float* weight = nullptr;   // null: 1
  std::int64_t n = 0;
};

// The loss with its dimension count fixed at compile time where it is 1 (the fast path).
template <int D>
__device__ inline loss_spec fixed_loss(loss_spec l) {
  if constexpr (D > 0) l.dims = D;
  return l;
}

template <int D>
__global__ void __launch_bounds__(lanes) moments_kernel(rows_view v, double* partial, unsigned* max_key) {
  __shared__ double shared[3 * lanes];
  double acc[3] = {0.0, 0.0, 0.0};
  unsigned top = 0;
  CBG_FOR_TILE_ROWS(r, v.n) {
    const double w = weight_of(v.weight, r);
    const double t = v.target[r];
    acc[0] += w;
    acc[1] += w * t;
    acc[2] += w * (t * t);
    top = max(top, abs_float_key(static_cast<float>(w)));
  }
  atomicMax(max_key, top);
  fold_block<3>(acc, shared, partial + static_cast<std::int64_t>(blockIdx.x) * 3);
}

struct weak_args {
  rows_view v;
  loss_spec loss;
  weak_request req;
  float* der = nullptr;     // [dims][n], bootstrapped
  float* weight = nullptr;  // [n], bootstrapped
  unsigned* max_key = nullptr;
  double* partial = nullptr;  // [tiles][2]
  std::int64_t first_row = 0;  // of this shard (draws are keyed by the global row)
};

template <int D>
__global__ void __launch_bounds__(lanes) weak_kernel(weak_args a) {
  __shared__ double shared[2 * lanes];
  __shared__ unsigned block_max[max_channels];
  const loss_spec l = fixed_loss<D>(a.loss);
  const int channels = l.dims + a.req.hess_channels + 1;
  for (int c = static_cast<int>(threadIdx.x); c < channels; c += lanes) block_max[c] = 0;
  __syncthreads();
  double acc[2] = {0.0, 0.0};
  CBG_FOR_TILE_ROWS(r, a.v.n) {
    double ap[D > 0 ? D : max_dims], der[D > 0 ? D : max_dims];
    double hess[D > 0 ? D : max_hessian];
    gather_approx(a.v.approx, a.v.n, l.dims, r, ap);
    const double w = weight_of(a.v.weight, r);
    const float t = a.v.target[r];
    point_derivatives(l, ap, t, w, der, hess);
    const weak_row row = weak_row_values(l, a.req, der, hess, w, bootstrap_factor(a.req.bootstrap, r + a.first_row));
    for (int k = 0; k < l.dims; ++k) a.der[k * a.v.n + r] = row.der[k];
    a.weight[r] = row.weight;
    acc[0] += row.sigma;
    acc[1] += a.req.want_value ? -w * point_loss(l, ap, t) : 0.0;
    double ch[D > 0 ? D + D + 1 : max_channels];
    leaf_channels(l, a.req.hess_channels, der, hess, w, ch);
    for (int c = 0; c < channels; ++c) atomicMax(&block_max[c], abs_float_key(static_cast<float>(ch[c])));
  }
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.x); c < channels; c += lanes) atomicMax(&a.max_key[c], block_max[c]);
  fold_block<2>(acc, shared, a.partial + static_cast<std::int64_t>(blockIdx.x) * 2);
}

// Leaf sums in shared memory when they fit.
constexpr int shared_sum_slots = 2048;

struct point_args {
  rows_view v;
  loss_spec loss;
  const std::uint32_t* leaf = nullptr;
  const double* point = nullptr;  // [leaves][dims], or null
  int leaves = 1;
  int hess_channels = 0;
  bool want_value = false;
  bool want_max = false;
  const fixed_scale* scales = nullptr;      // [channels], or null: no sums
  unsigned long long* sums = nullptr;       // [leaves][channels]
  unsigned* max_key = nullptr;
  double* partial = nullptr;                // [tiles]
};

template <int D>
__global__ void __launch_bounds__(lanes) point_kernel(point_args a) {
  __shared__ double shared[lanes];
  __shared__ unsigned block_max[max_channels];
  __shared__ unsigned long long block_sums[shared_sum_slots];
  __shared__ fixed_scale scales[max_channels];
  const loss_spec l = fixed_loss<D>(a.loss);
  const int channels = l.dims + a.hess_channels + 1;
  const int slots = a.leaves * channels;
  const bool shared_sums = a.scales != nullptr && slots <= shared_sum_slots;
  for (int c = static_cast<int>(threadIdx.x); c < channels; c += lanes) {
    block_max[c] = 0;
    if (a.scales != nullptr) scales[c] = a.scales[c];
  }
  if (shared_sums) {
    for (int s = static_cast<int>(threadIdx.x); s < slots; s += lanes) block_sums[s] = 0;
  }
  __syncthreads();
  double acc[1] = {0.0};
  CBG_FOR_TILE_ROWS(r, a.v.n) {
    double ap[D > 0 ? D : max_dims], der[D > 0 ? D : max_dims];
    double hess[D > 0 ? D : max_hessian];
    const std::uint32_t leaf = a.leaf[r];
    gather_approx(a.v.approx, a.v.n, l.dims, r, ap);
    if (a.point != nullptr) {
      for (int k = 0; k < l.dims; ++k) ap[k] += a.point[static_cast<std::int64_t>(leaf) * l.dims + k];
    }
    const double w = weight_of(a.v.weight, r);
    const float t = a.v.target[r];
    if (a.want_value) acc[0] += -w * point_loss(l, ap, t);
    if (a.scales == nullptr && !a.want_max) continue;
    point_derivatives(l, ap, t, w, der, hess);
    double ch[D > 0 ? D + D + 1 : max_channels];
    leaf_channels(l, a.hess_channels, der, hess, w, ch);
    for (int c = 0; c < channels; ++c) {
      if (a.want_max) atomicMax(&block_max[c], abs_float_key(static_cast<float>(ch[c])));
      if (a.scales != nullptr) {
        const auto v = static_cast<unsigned long long>(to_fixed64(ch[c], scales[c]));
        unsigned long long* slot = shared_sums ? &block_sums[leaf * channels + c]
                                               : &a.sums[static_cast<std::int64_t>(leaf) * channels + c];
        atomicAdd(slot, v);
      }
    }
  }
  __syncthreads();
  if (a.want_max) {
    for (int c = static_cast<int>(threadIdx.x); c < channels; c += lanes) atomicMax(&a.max_key[c], block_max[c]);
  }
  if (shared_sums) {
    for (int s = static_cast<int>(threadIdx.x); s < slots; s += lanes) {
      if (block_sums[s] != 0) atomicAdd(&a.sums[s], block_sums[s]);
    }
  }
  if (a.want_value) fold_block<1>(acc, shared, a.partial + blockIdx.x);
}

__global__ void apply_learn_kernel(double* approx, std::int64_t n, int dims, const std::uint32_t* leaf,
                                   const double* delta) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t at = static_cast<std::int64_t>(leaf[r]) * dims;
    for (int k = 0; k < dims; ++k) approx[k * n + r] += delta[at + k];
  }
}

struct eval_tree {
  column_view column[max_depth];
  value_split split[max_depth];
  int count = 0;
};

__global__ void apply_eval_kernel(double* approx, std::int64_t n, int dims, eval_tree tree, const double* delta) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint32_t leaf = 0;
    for (int s = 0; s < tree.count; ++s) {
      const float v = quantize::to_feature_float(tree.column[s].value(r));
      leaf |= (split_is_one(tree.split[s], v) ? 1u : 0u) << s;
    }
    for (int k = 0; k < dims; ++k) approx[k * n + r] += delta[static_cast<std::int64_t>(leaf) * dims + k];
  }
}

template <int D>
__global__ void __launch_bounds__(lanes) metric_kernel(rows_view v, loss_spec loss, metric_spec m, double* partial) {
  __shared__ double shared[metric_terms * lanes];
  const loss_spec l = fixed_loss<D>(loss);
  double acc[metric_terms] = {0.0, 0.0, 0.0, 0.0};
  CBG_FOR_TILE_ROWS(r, v.n) {
    double ap[D > 0 ? D : max_dims], t[metric_terms];
    gather_approx(v.approx, v.n, l.dims, r, ap);
    metric_row_terms(m, l, ap, v.target[r], weight_of(v.weight, r), t);
    for (int c = 0; c < metric_terms; ++c) acc[c] += t[c];
  }
  fold_block<metric_terms>(acc, shared, partial + static_cast<std::int64_t>(blockIdx.x) * metric_terms);
}

// ---- AUC and the weighted quantile (sorts) -----------------------------------------------------------
__global__ void auc_keys_kernel(const double* approx, const float* target, std::int64_t n, double* keys,
                                std::uint32_t* positive) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double a = approx[r];
    keys[r] = a == 0.0 ? 0.0 : a;  // -0 and +0 tie, as on the host
    positive[r] = target[r] > 0.5f ? 1u : 0u;
  }
}

__global__ void auc_terms_kernel(const std::uint32_t* pos, const std::uint32_t* count, const std::uint64_t* neg_below,
                                 std::int64_t groups, std::uint64_t* term) {
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t neg = count[g] - pos[g];
    term[g] = static_cast<std::uint64_t>(pos[g]) * (2 * neg_below[g] + neg);
  }
}

__global__ void negatives_kernel(const std::uint32_t* pos, const std::uint32_t* count, std::int64_t groups,
                                 std::uint64_t* neg) {
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    neg[g] = count[g] - pos[g];
  }
}

__global__ void fixed_weights_kernel(const float* w, std::int64_t n, fixed_scale s, long long* out) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[r] = to_fixed64(w == nullptr ? 1.0 : static_cast<double>(w[r]), s);
  }
}

__global__ void quantile_kernel(const long long* cum, std::int64_t n, fixed_scale s, double goal,
                                unsigned long long* first) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (from_fixed64(cum[r], s) >= goal) atomicMin(first, static_cast<unsigned long long>(r));
  }
}

struct border_gather {
  std::int64_t index[max_depth];
  int count = 0;
};

__global__ void gather_borders_kernel(const float* borders, border_gather g, float* out) {
  const int i = static_cast<int>(threadIdx.x);
  if (i < g.count) out[i] = borders[g.index[i]];
}

// One device buffer holds everything a pass hands back, so that it comes back in one copy:
// ordered sums (up to metric_terms doubles), channel maxima, then per-leaf fixed-point sums.
constexpr std::size_t result_sums_at = 0;
constexpr std::size_t result_max_at = metric_terms * sizeof(double);
constexpr std::size_t result_leaf_at =
    (result_max_at + max_channels * sizeof(unsigned) + 63) / 64 * 64;

int grid_of(std::int64_t n, int threads = 256) {
  return static_cast<int>(std::clamp<std::int64_t>((n + threads - 1) / threads, 1, 8192));
}
int tiles_of(std::int64_t n) { return static_cast<int>(std::max<std::int64_t>(1, sum_tiles_of(n))); }

// ---- the backend -------------------------------------------------------------------------------------
class device_backend final : public boosting_backend {
 public:
  explicit device_backend(const backend_inputs& in)
      : ctx_(*in.learn->ctx()), learn_(*in.learn), eval_(in.eval), guard_(ctx_.device()) {
    for (const pool* p : {in.learn, in.eval}) {
      if (p == nullptr) continue;
      for (const column_view& c : p->features()) {
        CBG_EXPECTS(c.memory != memory_kind::host, status::device,
                    "the GPU trainer reads device, managed or pinned memory; a feature column is in pageable host memory");
      }
      for (const auto* t : {&p->label(), &p->weight(), &p->baseline()}) {
        CBG_EXPECTS(!t->has_value() || (*t)->memory != memory_kind::host, status::device,
                    "the GPU trainer reads device, managed or pinned memory; a label, weight or baseline is in "
                    "pageable host memory");
      }
    }
    if (in.rank != nullptr) link_ = std::make_unique<dist::rank_link>(*in.rank, ctx_);
    if (in.rank != nullptr && in.rank->quantized != nullptr) {
      q_ = std::move(*in.rank->quantized);  // a shard: its rows, the whole set's borders
    } else {
      q_ = quantize::quantize_device(learn_, in.quantize);
    }
    modes_.resize(static_cast<std::size_t>(q_.features));
    for (std::size_t at = 0; at < modes_.size(); at += strict_d2h_metadata_limit) {
      const std::size_t k = std::min(strict_d2h_metadata_limit, modes_.size() - at);
      d2h(modes_.data() + at, q_.mode.data() + at, k, "nan modes");
    }
    leaf_ = buffer<std::uint32_t>(static_cast<std::size_t>(q_.rows));
    weight_ = read_weights(learn_);
    if (eval_ != nullptr) eval_weight_ = read_weights(*eval_);
    scratch_a_ = buffer<double>(static_cast<std::size_t>(tiles_of(rows()) * metric_terms));
    scratch_b_ = buffer<double>(static_cast<std::size_t>(tiles_of(tiles_of(rows())) * metric_terms));
    result_ = buffer<unsigned char>(result_leaf_at);
  }

  [[nodiscard]] std::int64_t rows() const override { return q_.rows; }
  [[nodiscard]] std::int64_t eval_rows() const override { return eval_ == nullptr ? 0 : eval_->num_rows(); }
  [[nodiscard]] int features() const override { return static_cast<int>(q_.features); }
  [[nodiscard]] const std::vector<std::uint8_t>& nan_modes() const override { return modes_; }

  [[nodiscard]] std::vector<float> split_borders(const std::vector<split>& splits) override {
    std::vector<float> out(splits.size());
    if (splits.empty()) return out;
    border_gather g;
    g.count = static_cast<int>(splits.size());
    for (std::size_t k = 0; k < splits.size(); ++k) {
      g.index[k] = static_cast<std::int64_t>(splits[k].feature) * quantize::border_stride + splits[k].bin;
    }
    ensure(gathered_, static_cast<std::size_t>(max_depth));
    gather_borders_kernel<<<1, max_depth, 0, stream()>>>(q_.borders.data(), g, gathered_.data());
    CBG_CHECK_CUDA(stream());
    d2h(out.data(), gathered_.data(), out.size(), "split borders");
    return out;
  }

  label_facts labels(bool eval) override {
    const pool& p = eval ? *eval_ : learn_;
    CBG_EXPECTS(p.label().has_value(), status::bad_data, "the pool has no label");
    CBG_EXPECTS(pool::dims_of(p.label()) == 1, status::unsupported,
                "labels of " + std::to_string(pool::dims_of(p.label())) + " columns: the trainer takes one label column");
    device_buffer<label_facts_dev> d = buffer<label_facts_dev>(1);
    label_facts_dev init{~0ull, 0ull, 0u, 0u};
    h2d(d.data(), &init, 1, "label facts");
    label_facts_kernel<<<grid_of(p.num_rows()), 256, 0, stream()>>>(column_of(*p.label(), 0), p.num_rows(), d.data());
    CBG_CHECK_CUDA(stream());
    if (link_ != nullptr) {  // sharded: every rank's facts
      auto* k = reinterpret_cast<unsigned long long*>(d.data());
      link_->red().min_u64(k, 1, stream());
      link_->red().max_u64(k + 1, 1, stream());
      link_->red().max_u32(reinterpret_cast<unsigned*>(k + 2), 2, stream());
    }
    label_facts_dev h{};
    d2h(&h, d.data(), 1, "label facts");
    label_facts f;
    f.min = key_value(h.min_key);
    f.max = key_value(h.max_key);
    f.all_integer = h.non_integer == 0;
    f.constant = h.non_constant == 0 && (link_ == nullptr || h.min_key == h.max_key);
    return f;
  }

  void prepare_targets(const target_rule& rule) override {
    target_ = read_targets(learn_, rule, "learn");
    if (eval_ != nullptr) eval_target_ = read_targets(*eval_, rule, "eval");
  }

  void target_moments(double out[4]) override {
    zero(max_keys(), 1);
    const int tiles = tiles_of(rows());
    moments_kernel<1><<<tiles, lanes, 0, stream()>>>(learn_view(), scratch_a_.data(), max_keys());
    CBG_CHECK_CUDA(stream());
    finish_sums<3>(tiles);
    const std::vector<unsigned char> r = read_result(1, 0);
    std::memcpy(out, r.data() + result_sums_at, 3 * sizeof(double));
    unsigned key = 0;
    std::memcpy(&key, r.data() + result_max_at, sizeof(key));
    out[3] = float_of_key(key);
  }

  double weighted_quantile(double alpha) override {
    std::int64_t n = rows();
    const float* targets = target_.data();
    device_buffer<float> all_targets;
    if (link_ != nullptr) {  // sharded: the quantile of every rank's rows
      n = link_->total_rows(false);
      all_targets = buffer<float>(static_cast<std::size_t>(n));
      link_->gather_rows(target_.data(), sizeof(float), false, all_targets.data());
      targets = all_targets.data();
    }
    auto keys_out = buffer<float>(static_cast<std::size_t>(n));
    auto w_in = buffer<float>(static_cast<std::size_t>(n));
    auto w_out = buffer<float>(static_cast<std::size_t>(n));
    if (weight_.empty()) {
      fill_ones(w_in.data(), n);
    } else if (link_ != nullptr) {
      link_->gather_rows(weight_.data(), sizeof(float), false, w_in.data());
    } else {
      copy_d2d(w_in.data(), weight_.data(), n);
    }
    std::size_t bytes = 0;
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, targets, keys_out.data(), w_in.data(),
                                                 w_out.data(), n, 0, 32, stream()));
    auto temp = buffer<unsigned char>(bytes);
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, targets, keys_out.data(), w_in.data(),
                                                 w_out.data(), n, 0, 32, stream()));
    double moments[4];
    target_moments(moments);
    const fixed_scale s = fixed_scale_for(moments[3], n);
    auto fixed = buffer<long long>(static_cast<std::size_t>(n));
    fixed_weights_kernel<<<grid_of(n), 256, 0, stream()>>>(w_out.data(), n, s, fixed.data());
    CBG_CHECK_CUDA(stream());
    std::size_t scan_bytes = 0;
    CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, fixed.data(), fixed.data(), n, stream()));
    auto scan_temp = buffer<unsigned char>(scan_bytes);
    CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(scan_temp.data(), scan_bytes, fixed.data(), fixed.data(), n, stream()));
    long long total = 0;
    d2h(&total, fixed.data() + (n - 1), 1, "quantile total");
    auto first = buffer<unsigned long long>(1);
    const unsigned long long none = static_cast<unsigned long long>(n - 1);
    h2d(first.data(), &none, 1, "quantile index");
    quantile_kernel<<<grid_of(n), 256, 0, stream()>>>(fixed.data(), n, s, alpha * from_fixed64(total, s), first.data());
    CBG_CHECK_CUDA(stream());
    unsigned long long at = 0;
    d2h(&at, first.data(), 1, "quantile index");
    float t = 0.f;
    d2h(&t, keys_out.data() + at, 1, "quantile value");
    return t;
  }

  void start(const loss_spec& loss, const std::vector<double>& bias) override {
    loss_ = loss;
    approx_ = start_approx(learn_, rows(), bias);
    if (eval_ != nullptr) eval_approx_ = start_approx(*eval_, eval_rows(), bias);
    der_ = buffer<float>(static_cast<std::size_t>(loss.dims * rows()));
    search_weight_ = buffer<float>(static_cast<std::size_t>(rows()));
  }

  weak_result weak_target(const weak_request& req) override {
    const int channels = loss_.dims + req.hess_channels + 1;
    zero(max_keys(), static_cast<std::size_t>(channels));
    weak_args a;
    a.v = learn_view();
    a.loss = loss_;
    a.req = req;
    a.der = der_.data();
    a.weight = search_weight_.data();
    a.max_key = max_keys();
    a.partial = scratch_a_.data();
    a.first_row = link_ != nullptr ? link_->first_row(false) : 0;
    const int tiles = tiles_of(rows());
    if (loss_.dims == 1) weak_kernel<1><<<tiles, lanes, 0, stream()>>>(a);
    else weak_kernel<0><<<tiles, lanes, 0, stream()>>>(a);
    CBG_CHECK_CUDA(stream());
    finish_sums<2>(tiles);
    const std::vector<unsigned char> r = read_result(channels, 0);
    weak_result out;
    std::memcpy(&out.sigma_sum, r.data() + result_sums_at, sizeof(double));
    std::memcpy(&out.value, r.data() + result_sums_at + sizeof(double), sizeof(double));
    out.channel_max = maxima_of(r, channels);
    return out;
  }

  tree_structure search(const tree_search_params& p, std::vector<double> noise) override {
    if (!workspace_) workspace_ = make_device_search_workspace(ctx_, q_, loss_.dims, p);
    device_search_input in;
    in.q = &q_;
    in.dims = loss_.dims;
    in.der = der_.data();
    in.weight = search_weight_.data();
    in.noise = std::move(noise);
    in.reducer = link_ != nullptr ? &link_->red() : nullptr;
    return search_tree_device(ctx_, in, p, *workspace_, leaf_.data());
  }

  point_result at_point(const point_request& req) override {
    const int channels = loss_.dims + req.hess_channels + 1;
    const int tiles = tiles_of(rows());
    const std::size_t slots =
        req.scales != nullptr ? static_cast<std::size_t>(req.leaves) * static_cast<std::size_t>(channels) : 0;
    ensure(result_, result_leaf_at + slots * sizeof(unsigned long long));
    point_args a;
    a.v = learn_view();
    a.loss = loss_;
    a.leaf = leaf_.data();
    a.leaves = req.leaves;
    a.hess_channels = req.hess_channels;
    a.want_value = req.want_value;
    a.want_max = req.want_max;
    a.partial = scratch_a_.data();
    a.max_key = max_keys();
    if (req.point != nullptr && !req.point->empty()) {
      ensure(point_, req.point->size());
      h2d(point_.data(), req.point->data(), req.point->size(), "leaf point");
      a.point = point_.data();
    }
    if (req.scales != nullptr) {
      zero(leaf_sums(), slots);
      ensure(scales_, static_cast<std::size_t>(channels));
      h2d(scales_.data(), req.scales->data(), static_cast<std::size_t>(channels), "fixed-point scales");
      a.scales = scales_.data();
      a.sums = leaf_sums();
    }
    if (req.want_max) zero(max_keys(), static_cast<std::size_t>(channels));
    if (loss_.dims == 1) point_kernel<1><<<tiles, lanes, 0, stream()>>>(a);
    else point_kernel<0><<<tiles, lanes, 0, stream()>>>(a);
    CBG_CHECK_CUDA(stream());
    if (req.want_value) finish_sums<1>(tiles);
    // Everything in one copy (per-leaf sums are model-sized: pieces that strict mode admits).
    const std::vector<unsigned char> r = read_result(req.want_max ? channels : 0, slots);
    point_result out;
    if (req.want_value) std::memcpy(&out.value, r.data() + result_sums_at, sizeof(double));
    if (req.want_max) out.channel_max = maxima_of(r, channels);
    if (slots > 0) {
      out.sums.resize(slots);
      std::memcpy(out.sums.data(), r.data() + result_leaf_at, slots * sizeof(std::int64_t));
    }
    return out;
  }

  void apply(const std::vector<value_split>& splits, const std::vector<double>& delta) override {
    ensure(delta_, delta.size());
    h2d(delta_.data(), delta.data(), delta.size(), "leaf values");
    apply_learn_kernel<<<grid_of(rows()), 256, 0, stream()>>>(approx_.data(), rows(), loss_.dims, leaf_.data(),
                                                              delta_.data());
    CBG_CHECK_CUDA(stream());
    if (eval_ == nullptr) return;
    eval_tree t;
    t.count = static_cast<int>(splits.size());
    for (std::size_t s = 0; s < splits.size(); ++s) {
      t.split[s] = splits[s];
      t.column[s] = eval_->features()[static_cast<std::size_t>(splits[s].feature)];
    }
    apply_eval_kernel<<<grid_of(eval_rows()), 256, 0, stream()>>>(eval_approx_.data(), eval_rows(), loss_.dims, t,
                                                                  delta_.data());
    CBG_CHECK_CUDA(stream());
  }

  void metric_sums(const metric_spec& m, bool eval, double out[metric_terms]) override {
    const rows_view v = eval ? eval_view() : learn_view();
    const int tiles = tiles_of(v.n);
    ensure(scratch_a_, static_cast<std::size_t>(tiles * metric_terms));
    ensure(scratch_b_, static_cast<std::size_t>(tiles_of(tiles) * metric_terms));
    if (loss_.dims == 1) metric_kernel<1><<<tiles, lanes, 0, stream()>>>(v, loss_, m, scratch_a_.data());
    else metric_kernel<0><<<tiles, lanes, 0, stream()>>>(v, loss_, m, scratch_a_.data());
    CBG_CHECK_CUDA(stream());
    finish_sums<metric_terms>(tiles, eval);
    const std::vector<unsigned char> r = read_result(0, 0);
    std::memcpy(out, r.data() + result_sums_at, metric_terms * sizeof(double));
  }

  double auc(bool eval) override {
    rows_view v = eval ? eval_view() : learn_view();
    device_buffer<double> all_approx;
    device_buffer<float> all_targets;
    if (link_ != nullptr) {  // sharded: the AUC of every rank's rows
      v.n = link_->total_rows(eval);
      all_approx = buffer<double>(static_cast<std::size_t>(v.n));
      all_targets = buffer<float>(static_cast<std::size_t>(v.n));
      link_->gather_rows(v.approx, sizeof(double), eval, all_approx.data());
      link_->gather_rows(v.target, sizeof(float), eval, all_targets.data());
      v.approx = all_approx.data();
      v.target = all_targets.data();
    }
    const std::int64_t n = v.n;
    auto keys = buffer<double>(static_cast<std::size_t>(n));
    auto keys_sorted = buffer<double>(static_cast<std::size_t>(n));
    auto pos = buffer<std::uint32_t>(static_cast<std::size_t>(n));
    auto pos_sorted = buffer<std::uint32_t>(static_cast<std::size_t>(n));
    auc_keys_kernel<<<grid_of(n), 256, 0, stream()>>>(v.approx, v.target, n, keys.data(), pos.data());
    CBG_CHECK_CUDA(stream());
    std::size_t bytes = 0;
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys.data(), keys_sorted.data(), pos.data(),
                                                 pos_sorted.data(), n, 0, 64, stream()));
    std::size_t rle_bytes = 0, reduce_bytes = 0, scan_bytes = 0, sum_bytes = 0;
    auto unique = buffer<double>(static_cast<std::size_t>(n));
    auto counts = buffer<std::uint32_t>(static_cast<std::size_t>(n));
    auto group_pos = buffer<std::uint32_t>(static_cast<std::size_t>(n));
    auto groups = buffer<std::int64_t>(2);
    auto neg = buffer<std::uint64_t>(static_cast<std::size_t>(n));
    auto term = buffer<std::uint64_t>(static_cast<std::size_t>(n));
    auto result = buffer<std::uint64_t>(2);
    CBG_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, keys_sorted.data(), unique.data(),
                                                    counts.data(), groups.data(), n, stream()));
    CBG_CUDA_TRY(cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, keys_sorted.data(), unique.data(),
                                                pos_sorted.data(), group_pos.data(), groups.data() + 1, cuda::std::plus<std::uint32_t>{}, n,
                                                stream()));
    CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, neg.data(), neg.data(), n, stream()));
    std::size_t count_bytes = 0;
    CBG_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, sum_bytes, term.data(), result.data(), n, stream()));
    CBG_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, count_bytes, pos.data(), result.data() + 1, n, stream()));
    auto temp = buffer<unsigned char>(std::max({bytes, rle_bytes, reduce_bytes, scan_bytes, sum_bytes, count_bytes}));
    zero(counts.data(), static_cast<std::size_t>(n));
    zero(group_pos.data(), static_cast<std::size_t>(n));
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys.data(), keys_sorted.data(), pos.data(),
                                                 pos_sorted.data(), n, 0, 64, stream()));
    CBG_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(temp.data(), rle_bytes, keys_sorted.data(), unique.data(),
                                                    counts.data(), groups.data(), n, stream()));
    CBG_CUDA_TRY(cub::DeviceReduce::ReduceByKey(temp.data(), reduce_bytes, keys_sorted.data(), unique.data(),
                                                pos_sorted.data(), group_pos.data(), groups.data() + 1, cuda::std::plus<std::uint32_t>{}, n,
                                                stream()));
    negatives_kernel<<<grid_of(n), 256, 0, stream()>>>(group_pos.data(), counts.data(), n, neg.data());
    CBG_CHECK_CUDA(stream());
    CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), scan_bytes, neg.data(), neg.data(), n, stream()));
    auc_terms_kernel<<<grid_of(n), 256, 0, stream()>>>(group_pos.data(), counts.data(), neg.data(), n, term.data());
    CBG_CHECK_CUDA(stream());
    CBG_CUDA_TRY(cub::DeviceReduce::Sum(temp.data(), sum_bytes, term.data(), result.data(), n, stream()));
    CBG_CUDA_TRY(cub::DeviceReduce::Sum(temp.data(), count_bytes, pos.data(), result.data() + 1, n, stream()));
    std::uint64_t r[2];
    d2h(r, result.data(), 2, "auc counts");
    return auc_from_counts(r[0], r[1], static_cast<std::uint64_t>(n) - r[1]);
  }

 private:
  [[nodiscard]] cudaStream_t stream() const { return ctx_.stream(); }

  template <class T>
  device_buffer<T> buffer(std::size_t count) const {
    return device_buffer<T>(std::max<std::size_t>(count, 1), ctx_.stream(), ctx_.resource());
  }
  template <class T>
  void ensure(device_buffer<T>& b, std::size_t count) const {
    if (b.size() < count) b = buffer<T>(count);
  }
  template <class T>
  void zero(T* p, std::size_t count) const {
    CBG_CUDA_TRY(cudaMemsetAsync(p, 0, count * sizeof(T), stream()));
  }
  template <class T>
  void d2h(T* dst, const T* src, std::size_t count, const char* what) const {
    copy_bytes(dst, memory_kind::host, src, memory_kind::device, count * sizeof(T), stream(), ctx_.copies(), ctx_.rules(),
               CBG_COPY_SITE(what));
  }
  template <class T>
  void h2d(T* dst, const T* src, std::size_t count, const char* what) const {
    copy_bytes(dst, memory_kind::device, src, memory_kind::host, count * sizeof(T), stream(), ctx_.copies(), ctx_.rules(),
               CBG_COPY_SITE(what));
  }
  template <class T>
  void copy_d2d(T* dst, const T* src, std::int64_t count) const {
    copy_bytes(dst, memory_kind::device, src, memory_kind::device, static_cast<std::size_t>(count) * sizeof(T), stream(),
               ctx_.copies(), ctx_.rules(), CBG_COPY_SITE("device copy"));
  }
  void fill_ones(float* p, std::int64_t n) const {
    fill_kernel<<<grid_of(n), 256, 0, stream()>>>(p, n, 1.0f);
    CBG_CHECK_CUDA(stream());
  }

  [[nodiscard]] unsigned* max_keys() { return reinterpret_cast<unsigned*>(result_.data() + result_max_at); }
  [[nodiscard]] unsigned long long* leaf_sums() {
    return reinterpret_cast<unsigned long long*>(result_.data() + result_leaf_at);
  }

  // Sums C channels of the tile partials in scratch_a_ (tiles of them) in the ordered scheme into
  // the result buffer's sums, on the device.
  template <int C>
  void finish_sums(int tiles, bool eval = false) {
    double* in = scratch_a_.data();
    std::int64_t count = tiles;
    if (link_ != nullptr) {  // sharded: every rank's tile sums in row order, then folded as on one GPU
      count = link_->gather_tiles(scratch_a_.data(), C, eval, all_tiles_);
      in = all_tiles_.data();
      ensure(scratch_a_, static_cast<std::size_t>(tiles_of(count)) * C);
      ensure(scratch_b_, static_cast<std::size_t>(tiles_of(tiles_of(count))) * C);
    }
    while (true) {
      const int t = tiles_of(count);
      double* out = t == 1 ? reinterpret_cast<double*>(result_.data() + result_sums_at)
                           : (in == scratch_a_.data() ? scratch_b_.data() : scratch_a_.data());
      reduce_tiles_kernel<C><<<t, lanes, 0, stream()>>>(in, count, out);
      CBG_CHECK_CUDA(stream());
      if (t == 1) return;
      in = out;
      count = t;
    }
  }

  // The result buffer up to `channels` maxima, or with `slots` leaf sums: one copy (pieces of at
  // most the strict-mode limit where the leaf sums are large).
  std::vector<unsigned char> read_result(int channels, std::size_t slots) {
    if (link_ != nullptr) {  // sharded: maxima and fixed-point leaf sums over the ranks
      link_->red().max_u32(max_keys(), static_cast<std::size_t>(channels), stream());
      link_->red().sum_i64(reinterpret_cast<long long*>(leaf_sums()), slots, stream());
    }
    const std::size_t bytes = slots > 0 ? result_leaf_at + slots * sizeof(unsigned long long)
                                        : result_max_at + static_cast<std::size_t>(channels) * sizeof(unsigned);
    std::vector<unsigned char> r(bytes);
    for (std::size_t at = 0; at < bytes; at += strict_d2h_metadata_limit) {
      d2h(r.data() + at, result_.data() + at, std::min(strict_d2h_metadata_limit, bytes - at), "pass results");
    }
    return r;
  }

  static std::vector<float> maxima_of(const std::vector<unsigned char>& r, int channels) {
    std::vector<float> out;
    for (int c = 0; c < channels; ++c) {
      unsigned key = 0;
      std::memcpy(&key, r.data() + result_max_at + static_cast<std::size_t>(c) * sizeof(unsigned), sizeof(key));
      out.push_back(float_of_key(key));
    }
    return out;
  }

  device_buffer<float> read_weights(const pool& p) {
    if (!p.weight()) return {};
    auto w = buffer<float>(static_cast<std::size_t>(p.num_rows()));
    to_float_kernel<<<grid_of(p.num_rows()), 256, 0, stream()>>>(column_of(*p.weight(), 0), p.num_rows(), w.data());
    CBG_CHECK_CUDA(stream());
    return w;
  }

  device_buffer<float> read_targets(const pool& p, const target_rule& rule, const char* what) {
    CBG_EXPECTS(p.label().has_value(), status::bad_data, std::string("the ") + what + " pool has no label");
    const std::int64_t n = p.num_rows();
    auto t = buffer<float>(static_cast<std::size_t>(n));
    auto bad = buffer<unsigned long long>(1);
    const unsigned long long none = ~0ull;
    h2d(bad.data(), &none, 1, "target check");
    const column_view c = column_of(*p.label(), 0);
    const bool eval = &p != &learn_;
    const std::int64_t first_row = link_ != nullptr ? link_->first_row(eval) : 0;
    targets_kernel<<<grid_of(n), 256, 0, stream()>>>(c, rule, n, first_row, t.data(), bad.data());
    CBG_CHECK_CUDA(stream());
    if (link_ != nullptr) link_->red().min_u64(bad.data(), 1, stream());  // sharded: the first bad row of all
    unsigned long long first = 0;
    d2h(&first, bad.data(), 1, "target check");
    if (first != ~0ull) {
      const auto row = static_cast<std::int64_t>(first >> 8);
      const int ranks = link_ != nullptr ? link_->red().size() : 1;
      auto value = buffer<double>(static_cast<std::size_t>(ranks) + 1);
      int owner = 0;
      if (link_ != nullptr) {
        while (owner + 1 < ranks && link_->split(eval).first(owner + 1) <= row) ++owner;
      }
      if (owner == (link_ != nullptr ? link_->rank() : 0)) {
        value_at_kernel<<<1, 1, 0, stream()>>>(c, row - first_row, value.data());
        CBG_CHECK_CUDA(stream());
      }
      if (link_ != nullptr) link_->red().all_gather(value.data(), value.data() + 1, sizeof(double), stream());
      double label = 0;
      d2h(&label, value.data() + (link_ != nullptr ? 1 + owner : 0), 1, "bad label");
      throw_target_problem(static_cast<target_problem>(first & 0xff), rule, what, row, label);
    }
    return t;
  }

  device_buffer<double> start_approx(const pool& p, std::int64_t n, const std::vector<double>& bias) {
    auto a = buffer<double>(static_cast<std::size_t>(loss_.dims * n));
    start_args s;
    s.dims = loss_.dims;
    for (int k = 0; k < loss_.dims; ++k) s.bias[k] = bias[static_cast<std::size_t>(k)];
    if (p.baseline()) {
      check_baseline(p, loss_);
      s.has_baseline = true;
      for (int k = 0; k < loss_.dims; ++k) s.baseline[k] = column_of(*p.baseline(), k);
    }
    start_kernel<<<grid_of(n), 256, 0, stream()>>>(s, n, a.data());
    CBG_CHECK_CUDA(stream());
    return a;
  }

  [[nodiscard]] rows_view learn_view() const {
    return {approx_.data(), target_.data(), weight_.empty() ? nullptr : weight_.data(), rows()};
  }
  [[nodiscard]] rows_view eval_view() const {
    return {eval_approx_.data(), eval_target_.data(), eval_weight_.empty() ? nullptr : eval_weight_.data(), eval_rows()};
  }

  const context& ctx_;
  const pool& learn_;
  const pool* eval_;
  scoped_device guard_;
  quantize::device_quantized q_;
  std::vector<std::uint8_t> modes_;
  loss_spec loss_;
  device_buffer<float> target_, eval_target_, weight_, eval_weight_;
  device_buffer<double> approx_, eval_approx_;
  device_buffer<float> der_, search_weight_;
  device_buffer<std::uint32_t> leaf_;
  device_buffer<double> scratch_a_, scratch_b_, point_, delta_;
  device_buffer<unsigned char> result_;
  device_buffer<float> gathered_;
  device_buffer<fixed_scale> scales_;
  device_search_workspace_ptr workspace_;
  std::unique_ptr<dist::rank_link> link_;  // sharded training (issue 9); null on one GPU
  device_buffer<double> all_tiles_;
};

}  // namespace

std::unique_ptr<boosting_backend> make_device_backend(const backend_inputs& in) {
  if (in.rank == nullptr && dist::wants_sharding(in)) return dist::make_sharded_backend(in);
  return std::make_unique<device_backend>(in);
}

}  // namespace cbg::train
