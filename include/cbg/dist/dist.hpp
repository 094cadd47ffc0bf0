// SPDX-License-Identifier: Apache-2.0
// Doc-parallel training and sharded prediction over several GPUs (issue 9): device lists, row
// splits and the reducer, the one interface through which the trainer's shards agree.
//
// Why the sharded model is the single-GPU model byte for byte:
//  * the tree learner's histograms and leaf sums are 64-bit fixed-point integers (det_math.hpp,
//    reduce_math.hpp): an integer all-reduce is exact and independent of the order;
//  * the fixed-point scales come from maxima (all-reduced with max) and the global row count;
//  * ordered double sums (metrics, line-search values, the noise spread) are taken over tiles of
//    4096 rows (reduce_math.hpp): every shard but the last holds a multiple of 4096 rows, so a
//    shard's tile sums are the single-GPU tile sums; they are gathered in row order and folded as
//    on one GPU;
//  * per-row draws (bootstrap) are keyed by the global row index;
//  * borders come from the whole learn set, quantized once, and every shard gets its rows' bins
//    (several processes: from the border sample of the whole set, border_sample.hpp).
// With a caller's communicator (several processes) the shards are the callers' row blocks: the
// model is exact when every rank but the last holds a multiple of 4096 rows, else ordered sums
// are taken over each rank's own tiles (deterministic and the same on every rank, but a double
// sum in another order than one GPU's: the metrics may differ from a single-GPU run in the last
// bits, and so could a line-search or early-stopping decision that depends on them).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace cbg::dist {

// ---- devices ----------------------------------------------------------------------------------------
// CatBoost's `devices` syntax: "0", "0:1:3", "0-3", mixtures ("0:2-3"), or "-1" (every visible
// device). Whitespace is ignored. The result is in the order given, without duplicates; every
// ordinal must be < visible. Throws invalid_argument naming the bad part, no_device for an ordinal
// that is not visible. An empty text gives an empty list (the caller's default device).
std::vector<int> parse_devices(const std::string& text, int visible);

// ---- row splits -------------------------------------------------------------------------------------
// Rows of a data set spread over ranks: rank r holds rows [first(r), first(r) + counts[r]).
struct row_split {
  std::vector<std::int64_t> counts;

  [[nodiscard]] int ranks() const noexcept { return static_cast<int>(counts.size()); }
  [[nodiscard]] std::int64_t total() const noexcept;
  [[nodiscard]] std::int64_t first(int rank) const noexcept;
  [[nodiscard]] std::int64_t max_count() const noexcept;
  // Whether every rank but the last holds a multiple of `tile` rows (ordered sums are exact).
  [[nodiscard]] bool aligned(std::int64_t tile) const noexcept;
};

// The split the single-process trainer uses: contiguous blocks of a multiple of `tile` rows
// (the last takes the rest; trailing ranks may get none when there are few rows).
row_split even_split(std::int64_t rows, int ranks, std::int64_t tile);

// ---- the reducer ------------------------------------------------------------------------------------
// Collectives over the ranks of one training (one device each), enqueued on a stream; every rank
// calls the same ones in the same order. In place unless said otherwise.
class reducer {
 public:
  virtual ~reducer() = default;
  [[nodiscard]] virtual int rank() const noexcept = 0;
  [[nodiscard]] virtual int size() const noexcept = 0;
  virtual void sum_i64(long long* data, std::size_t count, cudaStream_t stream) = 0;
  virtual void max_u32(unsigned* data, std::size_t count, cudaStream_t stream) = 0;
  virtual void max_u64(unsigned long long* data, std::size_t count, cudaStream_t stream) = 0;
  virtual void min_u64(unsigned long long* data, std::size_t count, cudaStream_t stream) = 0;
  // recv (size() * bytes) receives every rank's `bytes` of send, in rank order.
  virtual void all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) = 0;
  // Reduce-scatter: send holds size() blocks of recv_count; recv (recv_count, not overlapping send)
  // receives the sum over the ranks of block rank() (exact: 64-bit integers).
  virtual void sum_scatter_i64(const long long* send, long long* recv, std::size_t recv_count, cudaStream_t stream) = 0;
  // Makes every pending and later collective of this reducer fail (after another rank failed), so
  // that no rank waits forever. Idempotent.
  virtual void cancel() noexcept = 0;
  // Throws why, when this reducer's communicator was aborted (a timeout, a failed rank,
  // cbg_context_abort): the results of its collectives since are not to be used.
  virtual void check_live() const {}
  // Collectives enqueued so far and the host time spent enqueuing them (the sharded backend's
  // stage timings when its context profiles).
  struct counters {
    std::uint64_t calls = 0;
    double host_ms = 0;
  };
  [[nodiscard]] virtual counters enqueued() const noexcept { return {}; }
};

// ---- feature slices (feature-parallel split scoring) --------------------------------------------------
// The sharded tree search reduce-scatters each level's histograms: rank r receives the summed
// columns [column[r], column[r + 1]) of features [begin[r], begin[r + 1]) and scores only those.
// Slices are contiguous, cover every feature once, and are balanced by histogram columns (bins);
// width is the largest slice's columns (every rank's block of the reduce-scatter is padded to it).
struct feature_slices {
  std::vector<std::int64_t> begin;   // ranks + 1 feature indices
  std::vector<std::int64_t> column;  // ranks + 1 histogram columns: offset of begin[r], total at the end
  std::int64_t width = 0;
};
// offset: per feature, its first histogram column (non-decreasing, the layout of the tree search);
// total_columns: the columns of all features. Throws invalid_argument for ranks < 1 or an offset
// out of order.
feature_slices slice_features(const std::vector<std::int64_t>& offset, std::int64_t total_columns, int ranks);

// ---- NCCL (loaded at run time: libcbgpu.so works without it) ----------------------------------------
// Whether libnccl.so.2 could be loaded (once per process); `why` receives the reason when not.
bool nccl_available(std::string* why = nullptr);
// One communicator per device of a single process (ncclCommInitAll); reducer r belongs to
// devices[r]. Throws unsupported when NCCL is missing, cuda/internal when NCCL fails.
std::vector<std::unique_ptr<reducer>> make_local_reducers(const std::vector<int>& devices);
// A reducer over a communicator the caller made (ncclComm_t as void*), borrowed: it must outlive
// the reducer and be used by no one else meanwhile. Checks rank and size against the communicator.
std::unique_ptr<reducer> make_comm_reducer(void* comm, int rank, int size);

// A communicator the library made (ncclCommInitAll, ncclCommInitRank): destroyed with its last
// owner, unless aborted (a failed rank, a timeout, cbg_context_abort), which frees it too and makes
// the reducers over it fail with the reason.
class nccl_owner {
 public:
  explicit nccl_owner(void* comm);
  ~nccl_owner();
  nccl_owner(const nccl_owner&) = delete;
  nccl_owner& operator=(const nccl_owner&) = delete;
  // Runs f(comm) unless the communicator was aborted (then returns false): abort waits for the
  // calls in progress, so that NCCL never sees a freed communicator.
  template <class F>
  bool use(F&& f) {
    const std::shared_lock<std::shared_mutex> lock(use_);
    if (aborted_.load()) return false;
    f(comm_);
    return true;
  }
  // ncclCommAbort once (thread-safe, idempotent): collectives in flight on any rank's stream end.
  void abort(const std::string& why) noexcept;
  [[nodiscard]] bool aborted() const noexcept { return aborted_.load(); }
  [[nodiscard]] std::string reason() const;

 private:
  void* comm_;
  std::shared_mutex use_;
  mutable std::mutex mutex_;
  std::atomic<bool> aborted_{false};
  std::string reason_;
};

// ---- a communicator on a context -------------------------------------------------------------------
struct communicator {
  void* comm = nullptr;  // ncclComm_t
  int rank = 0;
  int size = 1;
  // Set when the library made it from a unique id (owned; aborted on failures and timeouts); null
  // for a caller's communicator (borrowed).
  std::shared_ptr<nccl_owner> owner;
  // Owned ones: how long a collective may take to complete before the communicator is aborted.
  std::chrono::milliseconds timeout{0};
};

// NCCL's unique id (ncclGetUniqueId): made once, on the process of rank 0 (it serves the other
// ranks' connection until they have joined), and given to every rank.
inline constexpr std::size_t nccl_unique_id_bytes = 128;
std::array<std::uint8_t, nccl_unique_id_bytes> nccl_unique_id();
// This process's rank of a communicator over `size` ranks, made from `id` on `device`
// (ncclCommInitRank, non-blocking where NCCL >= 2.14: fails with status cuda when not every rank
// joined within `timeout`). Blocks until every rank has joined.
communicator make_id_communicator(const std::array<std::uint8_t, nccl_unique_id_bytes>& id, int rank, int size,
                                  int device, std::chrono::milliseconds timeout);
// The reducer of a context's communicator: borrowed (make_comm_reducer) or owned (with a watchdog
// that aborts it when a collective does not complete within its timeout). `device`: the rank's.
std::unique_ptr<reducer> make_reducer(const communicator& c, int device);

}  // namespace cbg::dist
