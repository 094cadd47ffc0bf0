// SPDX-License-Identifier: Apache-2.0
// GPU quantizer: the stages of stages.hpp in order on the context's stream. The math is
// quantize_math.hpp, shared with the host reference (src/quantize/quantize_host.cpp), so the GPU
// result equals it bit for bit.
//
// One upload (settings, column views, the border subset, the log table), one scratch allocation
// sized up front, no host synchronisation until the 4-byte status is read at the end.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/quantize/stages.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/quantize/sampling.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::quantize {

namespace {

// The device-wide sort's passes grow with log2(features) and CUB's segmented sort puts one block
// on each feature: up to this many features the device-wide sort is the faster (bench run of
// cbgpu-quantize-bench, H100, 2026-11-21: bench/RESULTS.md).
constexpr std::int64_t device_wide_sort_max_features = 64;

constexpr int no_error = 0x7fffffff;

void mark(cudaEvent_t e, cudaStream_t stream) {
  if (e != nullptr) CBG_CUDA_TRY(cudaEventRecord(e, stream));
}

// A byte image built on the host, uploaded in one copy; parts at 256-byte aligned offsets.
class upload_image {
 public:
  explicit upload_image(std::size_t capacity) { bytes_.reserve(capacity); }
  template <class T>
  std::size_t add(const T* data, std::size_t count) {
    const std::size_t at = (bytes_.size() + 255) / 256 * 256;
    bytes_.resize(at + count * sizeof(T));
    if (count != 0) std::memcpy(bytes_.data() + at, data, count * sizeof(T));
    return at;
  }
  template <class T>
  std::size_t add(const std::vector<T>& v) {
    return add(v.data(), v.size());
  }
  [[nodiscard]] const std::vector<unsigned char>& bytes() const noexcept { return bytes_; }

 private:
  std::vector<unsigned char> bytes_;
};

template <class T>
T* at(unsigned char* base, std::size_t offset) {
  return reinterpret_cast<T*>(base + offset);
}

// One pass of the quantizer; returns the status word (no_error, a Forbidden feature, or
// subset_short when the GPU's subset draws fell short and the subset must come from the host).
int run(const pool& p, const options& o, const feature_settings& settings, const stage_marks& when,
        bool draw_on_gpu, device_quantized& q) {
  const context& ctx = *p.ctx();
  const cudaStream_t stream = ctx.stream();
  mark(when.start, stream);
  q.rows = p.num_rows();
  q.features = p.num_features();
  q.padded_rows = padded_rows_of(q.rows);
  q.device = ctx.device();
  const std::int64_t nf = q.features;
  const std::int64_t groups = groups_of(nf);

  // Host side: the border subset (or its plan on the GPU), the log table, the settings, in one image.
  const auto rows = static_cast<std::uint64_t>(q.rows);
  const bool sampled = rows > o.max_subset_size;
  CBG_EXPECTS(!sampled || rows <= 0xffffffffULL, status::unsupported,
              std::to_string(rows) + " rows: the quantizer indexes rows with 32 bits");
  const std::uint32_t m = sampled ? o.max_subset_size : static_cast<std::uint32_t>(rows);
  detail::draw_plan draws;
  if (draw_on_gpu && sampled) draws = detail::plan_subset_draws(rows, m);
  const bool gpu_draws = draws.draws != 0 && draws.usable();
  const std::vector<std::uint32_t> subset =
      sampled && !gpu_draws ? border_subset(rows, o.max_subset_size, ctx.seed()) : std::vector<std::uint32_t>{};
  mark(when.subset, stream);
  const std::size_t total = static_cast<std::size_t>(nf) * m;
  CBG_EXPECTS(total < (1ULL << 31), status::unsupported,
              "the border subsets hold " + std::to_string(total) + " values; at most 2^31 - 1 are supported");
  sort_method method = o.sort;
  if (method == sort_method::automatic) {
    method = nf <= device_wide_sort_max_features ? sort_method::device_wide : sort_method::segmented;
  }
  std::vector<std::uint8_t> group_float4(static_cast<std::size_t>(groups));
  for (std::int64_t g = 0; g < groups; ++g) {
    group_float4[static_cast<std::size_t>(g)] =
        detail::group_is_float4(p.features().data() + 4 * g, std::min<std::int64_t>(4, nf - 4 * g)) ? 1 : 0;
  }
  std::vector<int> offsets;
  if (method == sort_method::segmented) {
    offsets.resize(static_cast<std::size_t>(nf) + 1);
    for (std::int64_t f = 0; f <= nf; ++f) offsets[static_cast<std::size_t>(f)] = static_cast<int>(f * m);
  }
  const std::shared_ptr<const std::vector<double>> logs = greedy_log_table(m);
  upload_image image(16 * 256 + sizeof(column_view) * static_cast<std::size_t>(nf) +
                     6 * static_cast<std::size_t>(nf) + offsets.size() * sizeof(int) +
                     subset.size() * sizeof(std::uint32_t) + (static_cast<std::size_t>(m) + 1) * sizeof(double));
  const std::size_t columns_at = image.add(p.features());
  const std::size_t count_at = image.add(settings.border_count);
  const std::size_t mode_at = image.add(settings.mode);
  const std::size_t float4_at = image.add(group_float4);
  const std::size_t offsets_at = image.add(offsets);
  const std::size_t error_at = image.add(&no_error, 1);
  const std::size_t subset_at = image.add(subset);
  const std::size_t logs_at = image.add(logs->data(), static_cast<std::size_t>(m) + 1);
  const detail::subset_plan plan = detail::plan_subsets(method, nf, m);
  mark(when.prepare, stream);

  // Device side: the small outputs; then one allocation for the image, the NaN counts, the subset
  // drawn on the GPU, and the scratch that the draws and then the sort use.
  q.borders = device_buffer<float>(static_cast<std::size_t>(nf * border_stride), stream, ctx.resource());
  q.border_count = device_buffer<std::int32_t>(static_cast<std::size_t>(nf), stream, ctx.resource());
  q.mode = device_buffer<std::uint8_t>(static_cast<std::size_t>(nf), stream, ctx.resource());
  if (nf == 0) {
    q.index = device_buffer<std::uint32_t>(0, stream, ctx.resource());
    return no_error;
  }
  const auto align = [](std::size_t b) { return (b + 255) / 256 * 256; };
  const std::size_t nan_at = align(image.bytes().size());
  const std::size_t drawn_at = align(nan_at + static_cast<std::size_t>(nf) * sizeof(unsigned));
  const std::size_t scratch_at = align(drawn_at + (gpu_draws ? std::size_t{m} * sizeof(std::uint32_t) : 0));
  device_buffer<unsigned char> work(scratch_at + std::max(plan.bytes(), gpu_draws ? draws.bytes() : 0),
                                    stream, ctx.resource());
  mark(when.allocate, stream);
  unsigned char* w = work.data();
  copy_bytes(w, memory_kind::device, image.bytes().data(), memory_kind::host, image.bytes().size(),
             stream, ctx.copies(), ctx.rules(), CBG_COPY_SITE("quantizer settings, subset, log table"));
  auto* nan_counts = at<unsigned int>(w, nan_at);
  CBG_CUDA_TRY(cudaMemsetAsync(nan_counts, 0, static_cast<std::size_t>(nf) * sizeof(unsigned), stream));
  CBG_CUDA_TRY(cudaMemsetAsync(q.borders.data(), 0, q.borders.size_bytes(), stream));
  const auto* columns = at<const column_view>(w, columns_at);
  const auto* requested_count = at<const std::int32_t>(w, count_at);
  int* status_word = at<int>(w, error_at);
  mark(when.setup, stream);

  // 1-2. The border subsets, sorted.
  void* scratch = w + scratch_at;
  const std::uint32_t* subset_rows = nullptr;
  if (gpu_draws) {
    auto* drawn = at<std::uint32_t>(w, drawn_at);
    detail::draw_subset(draws, scratch, catboost_rng64(ctx.seed()).streams(), rows, m, drawn, status_word, stream);
    subset_rows = drawn;
  } else if (sampled) {
    subset_rows = at<const std::uint32_t>(w, subset_at);
  }
  detail::gather_subsets(plan, scratch, columns, subset_rows, requested_count, nan_counts, stream);
  mark(when.gather, stream);
  const float* sorted = detail::sort_subsets(plan, scratch, at<const int>(w, offsets_at), stream);
  mark(when.sort, stream);
  // 3. GreedyLogSum per feature.
  detail::search_borders(sorted, m, nf, requested_count, at<const std::uint8_t>(w, mode_at), nan_counts,
                         at<const double>(w, logs_at), q.borders.data(), q.border_count.data(),
                         q.mode.data(), status_word, stream);
  mark(when.borders, stream);
  // 4. Every value to its bin. The index is allocated only now: mapping its memory (about a
  // millisecond per GB with a pool that returns memory at each synchronisation) overlaps the
  // stages above, which are queued.
  q.index = device_buffer<std::uint32_t>(static_cast<std::size_t>(groups * q.padded_rows), stream,
                                         ctx.resource());
  detail::binarize(columns, at<const std::uint8_t>(w, float4_at), nf, q.rows, q.padded_rows,
                   q.borders.data(), q.border_count.data(), q.mode.data(), q.index.data(), stream);
  mark(when.binarize, stream);

  int status_host = no_error;
  copy_bytes(&status_host, memory_kind::host, status_word, memory_kind::device, sizeof(int),
             stream, ctx.copies(), ctx.rules(), CBG_COPY_SITE("quantizer status"));
  CBG_CUDA_TRY(cudaStreamSynchronize(stream));
  return status_host;
}

}  // namespace

device_quantized quantize_device(const pool& p, const options& o, const stage_marks* marks) {
  const stage_marks none{};
  const context& ctx = *p.ctx();
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "quantize_device needs a GPU context");
  for (const column_view& c : p.features()) {
    CBG_EXPECTS(c.memory != memory_kind::host, status::device,
                "quantize_device cannot read pageable host memory; use quantize_host");
  }
  const feature_settings settings = resolve_settings(p, o);
  scoped_device guard(ctx.device());
  device_quantized q;
  int status_word = run(p, o, settings, marks != nullptr ? *marks : none, /*draw_on_gpu=*/true, q);
  if (status_word == detail::subset_short) {
    q = device_quantized{};
    status_word = run(p, o, settings, marks != nullptr ? *marks : none, /*draw_on_gpu=*/false, q);
  }
  CBG_EXPECTS(status_word == no_error, status::bad_data,
              "feature " + std::to_string(status_word) + " has NaN values and its nan_mode is Forbidden");
  return q;
}

}  // namespace cbg::quantize
