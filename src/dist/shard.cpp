// SPDX-License-Identifier: Apache-2.0
// Shards of pools and quantized sets on other devices (include/cbg/dist/shard.hpp); the gather kernel
// is kernels/dist/gather.cu.
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "kernels/dist/gather.hpp"

#include "cbg/tensor/dlpack.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/dist/shard.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/stream.hpp"

namespace cbg::dist {

struct shard_tensor {
  device_buffer<unsigned char> data;
  std::int64_t shape[2] = {0, 1};
  std::int64_t strides[2] = {1, 0};
  DLTensor dl{};
};

namespace {

// Memory that other devices can copy to and from: plain cudaMalloc (with peer access enabled where
// the hardware has it). Allocations of a stream-ordered pool are reachable from other devices only
// after cudaMemPoolSetAccess, which our pools (and the callers') do not promise.
class peer_resource final : public device_memory_resource {
 public:
  explicit peer_resource(int device) : device_(device) {}
  void* allocate(std::size_t bytes, cudaStream_t) override {
    scoped_device on(device_);
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      CBG_FAIL(e == cudaErrorMemoryAllocation ? status::out_of_memory : status::cuda,
               std::string("cudaMalloc of a shard buffer: ") + cudaGetErrorString(e));
    }
    return p;
  }
  void deallocate(void* p, std::size_t, cudaStream_t stream) noexcept override {
    scoped_device on(device_);
    (void)cudaStreamSynchronize(stream);
    (void)cudaFree(p);
  }

 private:
  int device_;
};

}  // namespace

std::shared_ptr<device_memory_resource> peer_memory(int device) {
  static std::mutex mutex;
  static std::map<int, std::shared_ptr<device_memory_resource>> by_device;
  std::lock_guard<std::mutex> lock(mutex);
  auto& r = by_device[device];
  if (!r) r = std::make_shared<peer_resource>(device);
  return r;
}

void enable_peer_access(int from, int to) {
  if (from == to) return;
  int can = 0;
  CBG_CUDA_TRY(cudaDeviceCanAccessPeer(&can, from, to));
  if (can == 0) return;  // copies still work, staged by the driver
  scoped_device on(from);
  const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
    return;
  }
  CBG_CUDA_TRY(e);
}

namespace {

// Rows [first, first + count) of every column of `t` (1-D or 2-D) on dst's device, compact and
// column-major ([count] or [count, k] with strides [1, count]).
std::shared_ptr<shard_tensor> copy_rows(const tensor_view& t, std::int64_t first, std::int64_t count,
                                        const context& src, const context& dst) {
  CBG_EXPECTS(t.memory != memory_kind::host, status::device,
              "sharding reads device, managed or pinned memory; a column is in pageable host memory");
  auto out = std::make_shared<shard_tensor>();
  const std::int64_t k = t.rank >= 2 ? t.shape[1] : 1;
  const std::size_t elem = size_of(t.type);
  const std::size_t bytes = static_cast<std::size_t>(count * k) * elem;
  {
    scoped_device on(dst.device());
    out->data = device_buffer<unsigned char>(std::max<std::size_t>(bytes, 64), dst.stream(), peer_memory(dst.device()));
  }
  if (bytes > 0) {
    enable_peer_access(src.device(), dst.device());
    scoped_device on(src.device());
    device_buffer<unsigned char> block(bytes, src.stream(), peer_memory(src.device()));
    for (std::int64_t j = 0; j < k; ++j) {
      const column_view c = column_of(t, j);
      gather(static_cast<const unsigned char*>(c.data) + first * c.stride * static_cast<std::int64_t>(elem), c.stride,
             elem, count, block.data() + static_cast<std::size_t>(j * count) * elem, src.stream());
    }
    copy_bytes(out->data.data(), memory_kind::device, block.data(), memory_kind::device, bytes, src.stream(),
               src.copies(), src.rules(), CBG_COPY_SITE("shard rows"));
    CBG_CUDA_TRY(cudaStreamSynchronize(src.stream()));
  }
  out->shape[0] = count;
  out->shape[1] = k;
  out->strides[0] = 1;
  out->strides[1] = count;
  out->dl.data = out->data.data();
  out->dl.device.device_type = kDLCUDA;
  out->dl.device.device_id = dst.device();
  out->dl.ndim = t.rank >= 2 && k > 1 ? 2 : 1;  // [rows, 1] becomes [rows]: the same column
  out->dl.dtype = dlpack::type_of(t.type);
  out->dl.shape = out->shape;
  out->dl.strides = out->strides;
  return out;
}

tensor_ref ref_of(const std::shared_ptr<shard_tensor>& t) {
  tensor_ref r;
  r.kind = tensor_ref_kind::dltensor;
  r.ptr = &t->dl;
  return r;
}

}  // namespace

void peer_copy(void* to, const context& dst, const void* from, const context& src, std::size_t bytes,
               cudaEvent_t dst_mark, cudaEvent_t src_mark) {
  if (bytes == 0) return;
  {
    scoped_device on(dst.device());
    CBG_CUDA_TRY(cudaEventRecord(dst_mark, dst.stream()));
  }
  scoped_device on(src.device());
  CBG_CUDA_TRY(cudaStreamWaitEvent(src.stream(), dst_mark, 0));
  copy_bytes(to, memory_kind::device, from, memory_kind::device, bytes, src.stream(), src.copies(), src.rules(),
             CBG_COPY_SITE("peer copy"));
  CBG_CUDA_TRY(cudaEventRecord(src_mark, src.stream()));
  CBG_CUDA_TRY(cudaStreamWaitEvent(dst.stream(), src_mark, 0));
}

void peer_copy(void* to, const context& dst, const void* from, const context& src, std::size_t bytes) {
  if (bytes == 0) return;
  const auto mark = [](int device) {
    scoped_device on(device);
    return event();
  };
  const event d = mark(dst.device());
  const event s = mark(src.device());
  peer_copy(to, dst, from, src, bytes, d.get(), s.get());
  // Destroying recorded events is safe: the waits keep the dependencies.
}

std::unique_ptr<shard_pool> make_shard_pool(const pool& src, std::int64_t first, std::int64_t count,
                                            const std::shared_ptr<context>& dst, bool features) {
  CBG_EXPECTS(first >= 0 && count >= 0 && first + count <= src.num_rows(), status::internal,
              "make_shard_pool: bad row range");
  const context& from = *src.ctx();
  auto s = std::make_unique<shard_pool>();
  pool_inputs in;
  if (features) {
    for (const column_view& c : src.features()) {
      tensor_view t;
      t.data = c.data;
      t.type = c.type;
      t.memory = c.memory;
      t.device_id = c.device_id;
      t.rank = 1;
      t.shape[0] = c.size;
      t.strides[0] = c.stride;
      s->tensors.push_back(copy_rows(t, first, count, from, *dst));
      in.columns.push_back(ref_of(s->tensors.back()));
    }
    for (std::int64_t j = 0; j < src.num_features(); ++j) {
      if (src.is_categorical(j)) in.cat_features.push_back(static_cast<std::int32_t>(j));
    }
  }
  const auto add = [&](const std::optional<tensor_view>& t, tensor_ref& ref) {
    if (!t.has_value()) return;
    s->tensors.push_back(copy_rows(*t, first, count, from, *dst));
    ref = ref_of(s->tensors.back());
  };
  add(src.label(), in.label);
  add(src.weight(), in.weight);
  add(src.baseline(), in.baseline);
  if (!features) {
    CBG_EXPECTS(src.label().has_value(), status::bad_data, "the learn pool has no label");
    in.columns.push_back(in.label);  // a stand-in: the shard's bins come from slice_quantized
  }
  s->p.emplace(pool::build(dst, std::move(in)));
  return s;
}

quantize::device_quantized slice_quantized(const quantize::device_quantized& full, std::int64_t first,
                                           std::int64_t count, const context& src, const context& dst) {
  quantize::device_quantized q;
  q.rows = count;
  q.features = full.features;
  q.padded_rows = quantize::padded_rows_of(count);
  q.device = dst.device();
  const std::int64_t groups = (full.features + 3) / 4;
  const auto memory = peer_memory(dst.device());
  q.borders = device_buffer<float>(std::max<std::size_t>(full.borders.size(), 1), dst.stream(), memory);
  q.border_count =
      device_buffer<std::int32_t>(std::max<std::size_t>(full.border_count.size(), 1), dst.stream(), memory);
  q.mode = device_buffer<std::uint8_t>(std::max<std::size_t>(full.mode.size(), 1), dst.stream(), memory);
  q.index = device_buffer<std::uint32_t>(static_cast<std::size_t>(std::max<std::int64_t>(groups * q.padded_rows, 1)),
                                         dst.stream(), memory);
  {
    scoped_device on(dst.device());
    CBG_CUDA_TRY(cudaMemsetAsync(q.index.data(), 0, q.index.size_bytes(), dst.stream()));  // the padding rows
  }
  enable_peer_access(src.device(), dst.device());
  // On src: the settings and this shard's rows of the bins, packed in peer memory; then one copy.
  const std::size_t settings = full.borders.size_bytes() + full.border_count.size_bytes() + full.mode.size_bytes();
  const std::size_t index_bytes = static_cast<std::size_t>(groups * count) * sizeof(std::uint32_t);
  device_buffer<unsigned char> block;
  {
    scoped_device on(src.device());
    block = device_buffer<unsigned char>(settings + index_bytes, src.stream(), peer_memory(src.device()));
    std::size_t at = 0;
    for (const auto& [from, bytes] :
         {std::pair<const void*, std::size_t>{full.borders.data(), full.borders.size_bytes()},
          {full.border_count.data(), full.border_count.size_bytes()},
          {full.mode.data(), full.mode.size_bytes()}}) {
      if (bytes > 0) {
        copy_bytes(block.data() + at, memory_kind::device, from, memory_kind::device, bytes, src.stream(), src.copies(),
                   src.rules(), CBG_COPY_SITE("shard bins"));
      }
      at += bytes;
    }
    if (index_bytes > 0) {
      copy_bytes_2d(block.data() + settings, static_cast<std::size_t>(count) * sizeof(std::uint32_t),
                    memory_kind::device, full.index.data() + first,
                    static_cast<std::size_t>(full.padded_rows) * sizeof(std::uint32_t), memory_kind::device,
                    static_cast<std::size_t>(count) * sizeof(std::uint32_t), static_cast<std::size_t>(groups),
                    src.stream(), src.copies(), src.rules(), CBG_COPY_SITE("shard bins"));
    }
  }
  // The peer copies, then on dst the index rows into their padded places.
  device_buffer<unsigned char> landing(std::max<std::size_t>(settings + index_bytes, 1), dst.stream(), memory);
  peer_copy(landing.data(), dst, block.data(), src, settings + index_bytes);
  scoped_device on(dst.device());
  std::size_t at = 0;
  for (const auto& [to, bytes] : {std::pair<void*, std::size_t>{q.borders.data(), full.borders.size_bytes()},
                                  {q.border_count.data(), full.border_count.size_bytes()},
                                  {q.mode.data(), full.mode.size_bytes()}}) {
    if (bytes > 0) {
      copy_bytes(to, memory_kind::device, landing.data() + at, memory_kind::device, bytes, dst.stream(), dst.copies(),
                 dst.rules(), CBG_COPY_SITE("shard bins"));
    }
    at += bytes;
  }
  if (index_bytes > 0) {
    copy_bytes_2d(q.index.data(), static_cast<std::size_t>(q.padded_rows) * sizeof(std::uint32_t), memory_kind::device,
                  landing.data() + settings, static_cast<std::size_t>(count) * sizeof(std::uint32_t),
                  memory_kind::device, static_cast<std::size_t>(count) * sizeof(std::uint32_t),
                  static_cast<std::size_t>(groups), dst.stream(), dst.copies(), dst.rules(),
                  CBG_COPY_SITE("shard bins"));
  }
  CBG_CUDA_TRY(cudaStreamSynchronize(dst.stream()));
  {
    scoped_device on_src(src.device());
    CBG_CUDA_TRY(cudaStreamSynchronize(src.stream()));
  }
  return q;
}

}  // namespace cbg::dist
