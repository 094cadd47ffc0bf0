// SPDX-License-Identifier: Apache-2.0
// Small collectives of one process's ranks through peer-to-peer stores (dist.hpp,
// with_peer_collectives). A leaf-estimation pass of a sharded training all-gathers a few kilobytes
// about 20 times per tree, and every one is on the critical path of all ranks: what counts is the
// latency. Here one kernel per rank and collective pushes the rank's bytes into a staging slot on
// every rank (NVLink stores), raises a flag there, waits for every rank's flag on its own device
// and then gathers (or reduces) the slots. Large collectives (histograms of the deep levels) stay
// with NCCL.
//
// Staging on each rank (plain cudaMalloc, reachable by its peers): slots[2][ranks][slot_bytes] and
// flags[2][ranks][slot_bytes / chunk_bytes]; block b of a collective moves bytes [b, b + 1) * chunk_bytes
// of every rank's part and has a flag of its own. Collective number k (counted per rank; every rank calls the same
// collectives in the same order) uses parity k & 1 and sets flags to k. Why two parities suffice:
// rank r writes parity k & 1 on rank p during collective k only after its collective k - 1
// finished, which needed p's flags of k - 1, which p raised after its collective k - 2 (the
// previous reader of that parity) had finished, in stream order.
// Exactness: gathers copy bytes; reductions are integer sums (wrapping, order-free) and maxima or
// minima: the same results as NCCL's, bit for bit.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/dist/shard.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::dist {

namespace {

constexpr int max_ranks = 8;
constexpr int p2p_threads = 256;
constexpr std::size_t chunk_bytes = 4096;  // per block
constexpr unsigned long long timeout_ns = 20ull * 1000 * 1000 * 1000;

// The largest collective done here, in bytes per rank: CBGPU_DIST_P2P_BYTES (default 64 KiB, at most
// 1 MiB: 256 blocks, all resident at once), rounded up to whole chunks.
std::size_t slot_bytes_from_environment() {
  const char* v = std::getenv("CBGPU_DIST_P2P_BYTES");
  long long b = 64 * 1024;
  if (v != nullptr && *v != 0) {
    char* end = nullptr;
    const long long parsed = std::strtoll(v, &end, 10);
    if (end != v && parsed > 0) b = std::min(parsed, 1LL << 20);
  }
  return (static_cast<std::size_t>(b) + chunk_bytes - 1) / chunk_bytes * chunk_bytes;
}

enum class p2p_op : int { gather = 0, sum_i64, max_u32, max_u64, min_u64 };

struct p2p_args {
  int rank = 0;
  int ranks = 1;
  unsigned long long seq = 0;  // this collective's number, from 1
  const unsigned char* send = nullptr;
  unsigned char* recv = nullptr;  // gather: ranks * bytes; reductions: bytes (may be send)
  std::size_t bytes = 0;          // per rank, a multiple of 8 for the reductions
  std::size_t slot_bytes = 0;     // staging per rank and parity
  unsigned blocks = 0;            // flags per rank and parity (slot_bytes / chunk_bytes)
  unsigned char* slots[max_ranks] = {};            // every rank's staging
  unsigned long long* flags[max_ranks] = {};       // every rank's flags
  volatile int* abort_flag = nullptr;              // host-mapped: a rank failed
  volatile int* error = nullptr;                   // host-mapped: this rank timed out
};

__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <class T>
__device__ inline T combine(p2p_op op, T a, T b) {
  switch (op) {
    case p2p_op::sum_i64: return static_cast<T>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
    case p2p_op::min_u64: return b < a ? b : a;
    default: return b > a ? b : a;
  }
}

template <class T>
__device__ void reduce_chunk(const p2p_args& a, p2p_op op, std::size_t begin, std::size_t end, const unsigned char* mine) {
  const std::size_t first = begin / sizeof(T), last = end / sizeof(T);
  for (std::size_t i = first + threadIdx.x; i < last; i += blockDim.x) {
    // Peers' stores: read past L1 (__ldcg), after the flags and the fence.
    T v = __ldcg(reinterpret_cast<const T*>(mine) + i);
    for (int s = 1; s < a.ranks; ++s) {
      const unsigned char* slot = mine + static_cast<std::size_t>(s) * a.slot_bytes;
      v = combine<T>(op, v, __ldcg(reinterpret_cast<const T*>(slot) + i));
    }
    reinterpret_cast<T*>(a.recv)[i] = v;
  }
}

// Block b handles bytes [b * chunk_bytes, (b + 1) * chunk_bytes) of every rank's part.
__global__ void __launch_bounds__(p2p_threads) p2p_kernel(p2p_args a, p2p_op op) {
  __shared__ int skip;
  if (threadIdx.x == 0) skip = *a.error != 0 || *a.abort_flag != 0;
  __syncthreads();
  if (skip != 0) return;
  const unsigned parity = static_cast<unsigned>(a.seq & 1ull);
  const std::size_t begin = static_cast<std::size_t>(blockIdx.x) * chunk_bytes;
  const std::size_t end = std::min(a.bytes, begin + chunk_bytes);
  const bool words = (a.bytes % 8) == 0;
  // Push this rank's chunk into slot [parity][rank] of every rank.
  for (int p = 0; p < a.ranks; ++p) {
    unsigned char* dst = a.slots[p] + (static_cast<std::size_t>(parity) * a.ranks + a.rank) * a.slot_bytes;
    if (words) {
      for (std::size_t i = begin / 8 + threadIdx.x; i < end / 8; i += blockDim.x) {
        reinterpret_cast<unsigned long long*>(dst)[i] = reinterpret_cast<const unsigned long long*>(a.send)[i];
      }
    } else {
      for (std::size_t i = begin + threadIdx.x; i < end; i += blockDim.x) dst[i] = a.send[i];
    }
  }
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x < static_cast<unsigned>(a.ranks)) {
    __threadfence_system();  // cumulative: the whole block's pushes before the flag
    const int p = static_cast<int>(threadIdx.x);
    volatile unsigned long long* flag =
        a.flags[p] + (static_cast<std::size_t>(parity) * a.ranks + a.rank) * a.blocks + blockIdx.x;
    *flag = a.seq;
  }
  // Wait for every rank's chunk here.
  __shared__ int failed;
  if (threadIdx.x == 0) failed = 0;
  __syncthreads();
  if (threadIdx.x < static_cast<unsigned>(a.ranks)) {
    const int s = static_cast<int>(threadIdx.x);
    volatile unsigned long long* flag =
        a.flags[a.rank] + (static_cast<std::size_t>(parity) * a.ranks + s) * a.blocks + blockIdx.x;
    const unsigned long long started = global_ns();
    unsigned spins = 0;
    while (*flag < a.seq) {
      if (++spins % 256 == 0 && (*a.abort_flag != 0 || global_ns() - started > timeout_ns)) {
        atomicExch(&failed, 1);
        break;
      }
    }
  }
  __threadfence_system();
  __syncthreads();
  if (failed != 0) {
    if (threadIdx.x == 0 && *a.abort_flag == 0) *a.error = 1;
    return;
  }
  const unsigned char* mine = a.slots[a.rank] + static_cast<std::size_t>(parity) * a.ranks * a.slot_bytes;
  switch (op) {
    case p2p_op::gather:
      for (int s = 0; s < a.ranks; ++s) {
        const unsigned char* src = mine + static_cast<std::size_t>(s) * a.slot_bytes;
        unsigned char* dst = a.recv + static_cast<std::size_t>(s) * a.bytes;
        if (words) {
          for (std::size_t i = begin / 8 + threadIdx.x; i < end / 8; i += blockDim.x) {
            // dst is 8-byte aligned when bytes is a multiple of 8 and recv is (checked on the host).
            reinterpret_cast<unsigned long long*>(dst)[i] = __ldcg(reinterpret_cast<const unsigned long long*>(src) + i);
          }
        } else {
          for (std::size_t i = begin + threadIdx.x; i < end; i += blockDim.x) dst[i] = __ldcg(src + i);
        }
      }
      break;
    case p2p_op::sum_i64:
    case p2p_op::max_u64:
    case p2p_op::min_u64: reduce_chunk<unsigned long long>(a, op, begin, end, mine); break;
    case p2p_op::max_u32: reduce_chunk<unsigned>(a, op, begin, end, mine); break;
  }
}

// ---- the group of one process's ranks -------------------------------------------------------------------
class p2p_group {
 public:
  explicit p2p_group(std::vector<int> devices)
      : devices_(std::move(devices)), slot_bytes_(slot_bytes_from_environment()) {
    try {
      allocate();
    } catch (...) {
      release();
      throw;
    }
  }
  ~p2p_group() { release(); }
  p2p_group(const p2p_group&) = delete;
  p2p_group& operator=(const p2p_group&) = delete;

  [[nodiscard]] int ranks() const noexcept { return static_cast<int>(devices_.size()); }
  [[nodiscard]] std::size_t flag_bytes() const noexcept {
    return 2 * devices_.size() * (slot_bytes_ / chunk_bytes) * sizeof(unsigned long long);
  }
  [[nodiscard]] std::size_t slot_bytes() const noexcept { return slot_bytes_; }
  void fill(p2p_args& a, int rank) const {
    a.rank = rank;
    a.ranks = ranks();
    for (std::size_t p = 0; p < devices_.size(); ++p) {
      a.slots[p] = slots_[p];
      a.flags[p] = flags_[p];
    }
    a.slot_bytes = slot_bytes_;
    a.blocks = static_cast<unsigned>(slot_bytes_ / chunk_bytes);
    a.abort_flag = host_words_;
    a.error = host_words_ + 1 + rank;
  }
  void abort() noexcept { *host_words_ = 1; }
  [[nodiscard]] bool aborted() const noexcept { return *host_words_ != 0; }
  [[nodiscard]] bool timed_out(int rank) const noexcept { return host_words_[1 + rank] != 0; }

 private:
  void allocate() {
    const int n = static_cast<int>(devices_.size());
    void* words = nullptr;
    CBG_CUDA_TRY(cudaHostAlloc(&words, sizeof(int) * (1 + max_ranks), cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(words, 0, sizeof(int) * (1 + max_ranks));
    host_words_ = static_cast<volatile int*>(words);
    for (int r = 0; r < n; ++r) {
      for (int p = 0; p < n; ++p) enable_peer_access(devices_[static_cast<std::size_t>(r)], devices_[static_cast<std::size_t>(p)]);
    }
    for (int r = 0; r < n; ++r) {
      scoped_device on(devices_[static_cast<std::size_t>(r)]);
      void* s = nullptr;
      void* f = nullptr;
      CBG_CUDA_TRY(cudaMalloc(&s, 2 * static_cast<std::size_t>(n) * slot_bytes_));
      slots_.push_back(static_cast<unsigned char*>(s));
      CBG_CUDA_TRY(cudaMalloc(&f, flag_bytes()));
      flags_.push_back(static_cast<unsigned long long*>(f));
    }
    // The flags are zero before any rank's first collective (set-up only: a stream of our own).
    for (int r = 0; r < n; ++r) {
      scoped_device on(devices_[static_cast<std::size_t>(r)]);
      cudaStream_t s = nullptr;
      CBG_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      const cudaError_t e = cudaMemsetAsync(flags_[static_cast<std::size_t>(r)], 0, flag_bytes(), s);
      const cudaError_t w = cudaStreamSynchronize(s);
      (void)cudaStreamDestroy(s);
      CBG_CUDA_TRY(e);
      CBG_CUDA_TRY(w);
    }
  }
  void release() noexcept {
    for (std::size_t r = 0; r < slots_.size(); ++r) {
      scoped_device on(devices_[r]);
      (void)cudaFree(slots_[r]);  // synchronises the device: no collective is in flight
      if (r < flags_.size()) (void)cudaFree(flags_[r]);
    }
    if (host_words_ != nullptr) (void)cudaFreeHost(const_cast<int*>(host_words_));
  }

  std::vector<int> devices_;
  std::size_t slot_bytes_;
  std::vector<unsigned char*> slots_;
  std::vector<unsigned long long*> flags_;
  volatile int* host_words_ = nullptr;  // [abort, error of rank 0, 1, ...]
};

class p2p_reducer final : public reducer {
 public:
  p2p_reducer(std::shared_ptr<p2p_group> group, int rank, std::unique_ptr<reducer> large)
      : group_(std::move(group)), rank_(rank), large_(std::move(large)) {}
  ~p2p_reducer() override = default;
  p2p_reducer(const p2p_reducer&) = delete;
  p2p_reducer& operator=(const p2p_reducer&) = delete;

  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return group_->ranks(); }

  void sum_i64(long long* data, std::size_t count, cudaStream_t stream) override {
    if (!small(count * 8, data)) return large_->sum_i64(data, count, stream);
    launch(p2p_op::sum_i64, data, data, count * 8, stream);
  }
  void max_u32(unsigned* data, std::size_t count, cudaStream_t stream) override {
    if (!small(count * 4, data)) return large_->max_u32(data, count, stream);
    launch(p2p_op::max_u32, data, data, count * 4, stream);
  }
  void max_u64(unsigned long long* data, std::size_t count, cudaStream_t stream) override {
    if (!small(count * 8, data)) return large_->max_u64(data, count, stream);
    launch(p2p_op::max_u64, data, data, count * 8, stream);
  }
  void min_u64(unsigned long long* data, std::size_t count, cudaStream_t stream) override {
    if (!small(count * 8, data)) return large_->min_u64(data, count, stream);
    launch(p2p_op::min_u64, data, data, count * 8, stream);
  }
  void all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) override {
    if (!small(bytes, recv) || reinterpret_cast<std::uintptr_t>(send) % 8 != 0) {
      return large_->all_gather(send, recv, bytes, stream);
    }
    launch(p2p_op::gather, send, recv, bytes, stream);
  }
  void abort() noexcept override {
    group_->abort();
    large_->abort();
  }
  [[nodiscard]] counters enqueued() const noexcept override {
    counters c = large_->enqueued();
    c.calls += calls_;
    return c;
  }

 private:
  // Whether a collective of `bytes` per rank goes through the staging (the same answer on every rank:
  // the sizes are).
  [[nodiscard]] bool small(std::size_t bytes, const void* out) const {
    return bytes > 0 && bytes <= group_->slot_bytes() && reinterpret_cast<std::uintptr_t>(out) % 8 == 0;
  }
  void launch(p2p_op op, const void* send, void* recv, std::size_t bytes, cudaStream_t stream) {
    CBG_EXPECTS(!group_->aborted(), status::internal, "the collectives were aborted after another rank failed");
    CBG_EXPECTS(!group_->timed_out(rank_), status::internal,
                "rank " + std::to_string(rank_) + ": a peer-to-peer collective waited more than " +
                    std::to_string(timeout_ns / 1000000000ull) + " s for another rank");
    p2p_args a;
    group_->fill(a, rank_);
    a.seq = ++seq_;
    a.send = static_cast<const unsigned char*>(send);
    a.recv = static_cast<unsigned char*>(recv);
    a.bytes = bytes;
    const auto blocks = static_cast<unsigned>((bytes + chunk_bytes - 1) / chunk_bytes);
    p2p_kernel<<<blocks, p2p_threads, 0, stream>>>(a, op);
    CBG_CHECK_CUDA(stream);
    ++calls_;
  }

  std::shared_ptr<p2p_group> group_;
  int rank_;
  std::unique_ptr<reducer> large_;
  unsigned long long seq_ = 0;
  std::uint64_t calls_ = 0;
};

bool peer_collectives_wanted() {
  const char* v = std::getenv("CBGPU_DIST_P2P");
  return v == nullptr || *v == 0 || std::strcmp(v, "0") != 0;
}

}  // namespace

std::vector<std::unique_ptr<reducer>> with_peer_collectives(const std::vector<int>& devices,
                                                            std::vector<std::unique_ptr<reducer>> nccl) {
  const int n = static_cast<int>(devices.size());
  if (n < 2 || n > max_ranks || static_cast<int>(nccl.size()) != n || !peer_collectives_wanted()) return nccl;
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (r == p) continue;
      int can = 0;
      CBG_CUDA_TRY(cudaDeviceCanAccessPeer(&can, devices[static_cast<std::size_t>(r)], devices[static_cast<std::size_t>(p)]));
      if (can == 0) return nccl;  // no direct path between every pair: NCCL for everything
    }
  }
  auto group = std::make_shared<p2p_group>(devices);
  std::vector<std::unique_ptr<reducer>> out;
  for (int r = 0; r < n; ++r) {
    out.push_back(std::make_unique<p2p_reducer>(group, r, std::move(nccl[static_cast<std::size_t>(r)])));
  }
  return out;
}

}  // namespace cbg::dist
