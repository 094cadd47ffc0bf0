// SPDX-License-Identifier: Apache-2.0
// Prediction over several GPUs (include/cbg/dist/predict.hpp).
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/dist/predict.hpp"
#include "cbg/dist/shard.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/stream.hpp"

namespace cbg::dist {

namespace {

// One context per device for the blocks of other devices, made on first use and kept.
std::shared_ptr<context> device_context(int device) {
  static std::mutex mutex;
  // Never destroyed: a static destructor would run after the CUDA runtime's own teardown.
  static auto* contexts = new std::map<int, std::shared_ptr<context>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& c = (*contexts)[device];
  if (!c) {
    context_options o;
    o.device = device;
    c = context::create(o);
  }
  return c;
}

bool only_pool_device(const std::vector<int>& d, const pool& p) {
  return d.empty() || (d.size() == 1 && d[0] == p.ctx()->device());
}

}  // namespace

void refuse_other_devices(const std::string& devices, apply::device_model_cache&, const model::model&, const pool& p,
                          const apply::predict_options&, const mutable_tensor_view&, cudaStream_t) {
  if (devices.empty()) return;
  CBG_EXPECTS(only_pool_device(parse_devices(devices, visible_device_count()), p), status::unsupported,
              fmt::format("devices '{}': predictions into host memory run on the pool's device only; use "
                          "cbg_predict_to_device for several devices",
                          devices));
}

void predict_to_devices(const std::string& devices, apply::device_model_cache& cache, const model::model& m,
                        const pool& p, const apply::predict_options& o, const mutable_tensor_view& out,
                        cudaStream_t stream) {
  const std::vector<int> list = devices.empty() ? std::vector<int>{} : parse_devices(devices, visible_device_count());
  if (only_pool_device(list, p)) {
    apply::predict_to_device(cache, m, p, o, out, stream);
    return;
  }
  const std::shared_ptr<context>& base = p.ctx();
  CBG_EXPECTS(!base->is_cpu(), status::unsupported, "devices: the pool is on a CPU context");
  const std::int64_t rows = p.num_rows();
  const auto shape = apply::output_shape(m, o, rows);
  CBG_EXPECTS(
      out.memory == memory_kind::device && out.device_id == base->device(), status::device,
      fmt::format("devices '{}': the output must be device memory of the pool's device {}", devices, base->device()));
  CBG_EXPECTS(out.as_const().is_row_major_compact(), status::unsupported,
              fmt::format("devices '{}': the output must be row-major and compact", devices));
  CBG_EXPECTS(out.rank >= 1 && out.shape[0] == rows, status::shape,
              fmt::format("the output has {} rows, the pool {}", out.rank >= 1 ? out.shape[0] : 0, rows));
  const std::int64_t columns = shape[1];
  const std::size_t row_bytes = static_cast<std::size_t>(columns) * size_of(out.type);
  const cudaStream_t caller = stream != nullptr ? stream : base->stream();
  {
    scoped_device on(base->device());
    stream_wait_for(base->stream(), caller);  // the inputs are ready for the caller's stream
  }
  const row_split split = even_split(rows, static_cast<int>(list.size()), 1);
  struct block {
    std::shared_ptr<context> ctx;
    std::unique_ptr<shard_pool> shard;
    device_buffer<unsigned char> result;
  };
  std::vector<block> blocks;
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::int64_t count = split.counts[k], first = split.first(static_cast<int>(k));
    if (count == 0) continue;
    block b;
    b.ctx = device_context(list[k]);
    b.shard = make_shard_pool(p, first, count, b.ctx, true);
    scoped_device on(b.ctx->device());
    b.result = device_buffer<unsigned char>(static_cast<std::size_t>(count) * row_bytes, b.ctx->stream(),
                                            peer_memory(b.ctx->device()));
    mutable_tensor_view v = out;
    v.data = b.result.data();
    v.device_id = b.ctx->device();
    v.shape[0] = count;
    apply::predict_to_device(cache, m, *b.shard->p, o, v, b.ctx->stream());
    blocks.push_back(std::move(b));
  }
  // Every block's results into one buffer on the pool's device, then into the caller's output.
  device_buffer<unsigned char> gathered(std::max<std::size_t>(static_cast<std::size_t>(rows) * row_bytes, 1),
                                        base->stream(), peer_memory(base->device()));
  for (std::size_t k = 0, at = 0; k < list.size(); ++k) {
    const std::int64_t count = split.counts[k], first = split.first(static_cast<int>(k));
    if (count == 0) continue;
    block& b = blocks[at++];
    enable_peer_access(b.ctx->device(), base->device());
    peer_copy(gathered.data() + static_cast<std::size_t>(first) * row_bytes, *base, b.result.data(), *b.ctx,
              static_cast<std::size_t>(count) * row_bytes);
  }
  scoped_device on(base->device());
  copy_bytes(out.data, memory_kind::device, gathered.data(), memory_kind::device,
             static_cast<std::size_t>(rows) * row_bytes, base->stream(), base->copies(), base->rules(),
             CBG_COPY_SITE("sharded prediction"));
  stream_wait_for(caller, base->stream());
  CBG_CUDA_TRY(cudaStreamSynchronize(caller));
}

}  // namespace cbg::dist
