// SPDX-License-Identifier: Apache-2.0
// Rows of a pool or of a quantized set copied to another device, device to device (a gather on
// the source device into a compact block, then one peer copy; never through the host).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <cuda_runtime_api.h>

#include "cbg/data/pool.hpp"
#include "cbg/quantize/quantizer.hpp"

namespace cbg::dist {

struct shard_tensor;  // a compact copy of some rows of a tensor (src/dist/shard.cpp)

// Rows [first, first + count) of `src` as a pool on `dst` (a context of any device). With
// `features` false the pool's only feature is a stand-in (its label column): for a learn shard,
// whose bins come from slice_quantized. Blocks until the copies are done.
struct shard_pool {
  std::vector<std::shared_ptr<shard_tensor>> tensors;
  std::optional<pool> p;
};
std::unique_ptr<shard_pool> make_shard_pool(const pool& src, std::int64_t first, std::int64_t count,
                                            const std::shared_ptr<context>& dst, bool features);

// Rows [first, first + count) of a quantized set (borders, settings and bins) on dst's device.
// Blocks until the copies are done.
quantize::device_quantized slice_quantized(const quantize::device_quantized& full, std::int64_t first,
                                           std::int64_t count, const context& src, const context& dst);

// Device memory that other devices copy to and from (plain cudaMalloc: pool allocations are not
// reachable from peers without cudaMemPoolSetAccess). Setup-time buffers only: frees synchronise.
std::shared_ptr<device_memory_resource> peer_memory(int device);
// Enables direct access from `from` to `to` where the hardware allows (idempotent).
void enable_peer_access(int from, int to);

// Copies `bytes` from device memory of src's device to device memory of dst's device, ordered
// after the work queued on both streams so far; dst's stream waits for the copy. Accounted on src.
// Both ends must be peer_memory (or plain cudaMalloc) when the devices differ.
void peer_copy(void* to, const context& dst, const void* from, const context& src, std::size_t bytes);
// The same through the caller's events (dst_mark: of dst's device, src_mark: of src's), recorded but
// not created: for a rank's thread during a training. Creating (or destroying) a CUDA object takes a
// driver lock that a thread blocked in a synchronous copy holds; if that thread waits for a
// collective this one has yet to queue, neither returns.
void peer_copy(void* to, const context& dst, const void* from, const context& src, std::size_t bytes,
               cudaEvent_t dst_mark, cudaEvent_t src_mark);

}  // namespace cbg::dist
