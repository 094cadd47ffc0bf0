// SPDX-License-Identifier: Apache-2.0
// The NCCL reducer. libnccl.so.2 is loaded with dlopen on first use, so that libcbgpu.so loads and
// works (one GPU) on machines without NCCL; the few types used are declared here from NCCL's
// documented ABI (nccl.h 2.x), so the build does not need nccl.h either.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::dist {

namespace {

// ---- NCCL's ABI (nccl.h, 2.x) ----------------------------------------------------------------------
using nccl_comm = void*;  // ncclComm_t
struct nccl_uid {
  char internal[128];
};
using nccl_result = int;                     // ncclResult_t: 0 is ncclSuccess
constexpr nccl_result nccl_in_progress = 7;  // ncclInProgress: a non-blocking call still runs
// ncclConfig_t as NCCL 2.14 declared it (later versions append fields and read `size`/`version`).
struct nccl_config {
  std::size_t size = sizeof(nccl_config);
  unsigned magic = 0xcafebeef;
  unsigned version = 21400;  // NCCL_VERSION(2, 14, 0)
  int blocking = 1;
  int cga_cluster_size = std::numeric_limits<int>::min();  // NCCL_CONFIG_UNDEF_INT: NCCL's default
  int min_ctas = std::numeric_limits<int>::min();
  int max_ctas = std::numeric_limits<int>::min();
  const char* net_name = nullptr;
};
enum nccl_type : int { nccl_uint32 = 3, nccl_int64 = 4, nccl_uint64 = 5, nccl_uint8 = 1 };
enum nccl_op : int { nccl_sum = 0, nccl_max = 2, nccl_min = 3 };

struct nccl_api {
  nccl_result (*comm_init_all)(nccl_comm*, int, const int*) = nullptr;
  nccl_result (*get_unique_id)(nccl_uid*) = nullptr;
  nccl_result (*comm_init_rank)(nccl_comm*, int, nccl_uid, int) = nullptr;
  // NCCL >= 2.14 (optional: without them a communicator's creation cannot time out).
  nccl_result (*comm_init_rank_config)(nccl_comm*, int, nccl_uid, int, nccl_config*) = nullptr;
  nccl_result (*comm_get_async_error)(nccl_comm, nccl_result*) = nullptr;
  nccl_result (*comm_destroy)(nccl_comm) = nullptr;
  nccl_result (*comm_abort)(nccl_comm) = nullptr;
  nccl_result (*comm_count)(nccl_comm, int*) = nullptr;
  nccl_result (*comm_user_rank)(nccl_comm, int*) = nullptr;
  nccl_result (*all_reduce)(const void*, void*, std::size_t, int, int, nccl_comm, cudaStream_t) = nullptr;
  nccl_result (*all_gather)(const void*, void*, std::size_t, int, nccl_comm, cudaStream_t) = nullptr;
  nccl_result (*reduce_scatter)(const void*, void*, std::size_t, int, int, nccl_comm, cudaStream_t) = nullptr;
  const char* (*error_string)(nccl_result) = nullptr;
  nccl_result (*get_version)(int*) = nullptr;
  std::string missing;  // why it is not usable; empty when it is
};

template <class F>
bool bind(void* lib, const char* name, F& f, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (f == nullptr && missing.empty()) missing = fmt::format("libnccl has no symbol {}", name);
  return f != nullptr;
}

const nccl_api& api() {
  static const nccl_api a = [] {
    nccl_api r;
    // CBGPU_NCCL_LIBRARY names the file when it is not on the loader's path (a pip wheel's, say).
    const char* named = std::getenv("CBGPU_NCCL_LIBRARY");
    void* lib = named != nullptr && *named != 0 ? dlopen(named, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (lib == nullptr) lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = dlerror();
      r.missing = fmt::format("NCCL is not installed or not on the library path (dlopen libnccl.so.2: {})",
                              e != nullptr ? e : "not found");
      return r;
    }
    bind(lib, "ncclCommInitAll", r.comm_init_all, r.missing);
    bind(lib, "ncclCommDestroy", r.comm_destroy, r.missing);
    bind(lib, "ncclCommAbort", r.comm_abort, r.missing);
    bind(lib, "ncclCommCount", r.comm_count, r.missing);
    bind(lib, "ncclCommUserRank", r.comm_user_rank, r.missing);
    bind(lib, "ncclAllReduce", r.all_reduce, r.missing);
    bind(lib, "ncclAllGather", r.all_gather, r.missing);
    bind(lib, "ncclReduceScatter", r.reduce_scatter, r.missing);
    bind(lib, "ncclGetErrorString", r.error_string, r.missing);
    bind(lib, "ncclGetVersion", r.get_version, r.missing);
    bind(lib, "ncclGetUniqueId", r.get_unique_id, r.missing);
    bind(lib, "ncclCommInitRank", r.comm_init_rank, r.missing);
    std::string optional;
    bind(lib, "ncclCommInitRankConfig", r.comm_init_rank_config, optional);
    bind(lib, "ncclCommGetAsyncError", r.comm_get_async_error, optional);
    if (r.comm_init_rank_config == nullptr || r.comm_get_async_error == nullptr) {
      r.comm_init_rank_config = nullptr;
      r.comm_get_async_error = nullptr;
    }
    return r;
  }();
  return a;
}

const nccl_api& require_api() {
  const nccl_api& a = api();
  CBG_EXPECTS(a.missing.empty(), status::unsupported, "multi-GPU needs NCCL: " + a.missing);
  return a;
}

std::string text_of(nccl_result r) {
  const char* text = api().error_string != nullptr ? api().error_string(r) : nullptr;
  return fmt::format("{} (ncclResult_t {})", text != nullptr ? text : "unknown", r);
}

void check(nccl_result r, const char* what) {
  if (r == 0) return;
  CBG_FAIL(status::cuda, fmt::format("NCCL {} failed: {}", what, text_of(r)));
}

// A non-blocking communicator's call may return ncclInProgress: its state is polled until it
// settles, at most `timeout` (then the communicator is aborted by the caller).
nccl_result settle(nccl_comm comm, nccl_result r, std::chrono::milliseconds timeout, nccl_owner* owner = nullptr) {
  if (r != nccl_in_progress || api().comm_get_async_error == nullptr) return r;
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (int polls = 0;; ++polls) {
    nccl_result state = 0, q = 0;
    if (owner == nullptr) {
      q = api().comm_get_async_error(comm, &state);
    } else if (!owner->use([&](nccl_comm c) { q = api().comm_get_async_error(c, &state); })) {
      return 0;  // aborted meanwhile: the caller reports the reason
    }
    if (q != 0) return q;
    if (state != nccl_in_progress) return state;
    if (std::chrono::steady_clock::now() > until) return nccl_in_progress;
    // Usually settled within microseconds (a collective's enqueue): spin first, then sleep.
    if (polls < 1000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

// Collectives whose completion the watchdog waits for longer than the timeout: an event recorded
// after each on its stream is polled from a thread of its own, which also polls the communicator's
// asynchronous error; either aborts the communicator, so that a rank waiting for a peer that failed
// or stopped returns instead of hanging (the next collective then reports why).
class collective_watchdog {
 public:
  collective_watchdog(std::shared_ptr<nccl_owner> owner, int device, std::chrono::milliseconds timeout)
      : owner_(std::move(owner)), device_(device), timeout_(timeout) {
    CBG_CUDA_TRY(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    thread_ = std::thread([this] { loop(); });
  }
  ~collective_watchdog() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    (void)cudaEventDestroy(event_);
  }
  collective_watchdog(const collective_watchdog&) = delete;
  collective_watchdog& operator=(const collective_watchdog&) = delete;

  // After a collective was enqueued on `stream`.
  void enqueued(cudaStream_t stream) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (cudaEventRecord(event_, stream) != cudaSuccess) {
      (void)cudaGetLastError();
      return;  // unwatched; the training thread sees the stream's error itself
    }
    since_ = std::chrono::steady_clock::now();
    pending_ = true;
  }

 private:
  void loop() {
    (void)cudaSetDevice(device_);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::milliseconds(20));
      if (stop_) break;
      if (api().comm_get_async_error != nullptr) {
        nccl_result state = 0, q = 0;
        if (!owner_->use([&](nccl_comm c) { q = api().comm_get_async_error(c, &state); })) break;  // aborted
        if (q == 0 && state != 0 && state != nccl_in_progress) {
          owner_->abort(fmt::format("NCCL reported an error on this rank's communicator: {}", text_of(state)));
          break;
        }
      }
      if (!pending_) continue;
      const cudaError_t e = cudaEventQuery(event_);
      if (e == cudaErrorNotReady) {
        if (std::chrono::steady_clock::now() - since_ > timeout_) {
          owner_->abort(
              fmt::format("an NCCL collective did not complete within {} ms (nccl_timeout_ms): another "
                          "rank failed, stopped or is not training; the communicator was aborted",
                          timeout_.count()));
          break;
        }
      } else {
        if (e != cudaSuccess) (void)cudaGetLastError();  // the training thread reports the stream's error
        pending_ = false;
      }
    }
  }

  std::shared_ptr<nccl_owner> owner_;
  int device_;
  std::chrono::milliseconds timeout_;
  cudaEvent_t event_ = nullptr;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool pending_ = false;
  std::chrono::steady_clock::time_point since_;
  std::thread thread_;
};

class nccl_reducer final : public reducer {
 public:
  // owner: null for a caller's communicator (borrowed: never aborted or destroyed here).
  nccl_reducer(nccl_comm comm, int rank, int size, std::shared_ptr<nccl_owner> owner,
               std::chrono::milliseconds timeout = std::chrono::milliseconds(0), int device = 0)
      : comm_(comm), rank_(rank), size_(size), owner_(std::move(owner)), timeout_(timeout) {
    if (owner_ != nullptr && timeout.count() > 0) {
      watchdog_ = std::make_unique<collective_watchdog>(owner_, device, timeout);
    }
  }
  ~nccl_reducer() override = default;
  nccl_reducer(const nccl_reducer&) = delete;
  nccl_reducer& operator=(const nccl_reducer&) = delete;

  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }

  void sum_i64(long long* data, std::size_t count, cudaStream_t stream) override {
    reduce(data, count, nccl_int64, nccl_sum, stream);
  }
  void max_u32(unsigned* data, std::size_t count, cudaStream_t stream) override {
    reduce(data, count, nccl_uint32, nccl_max, stream);
  }
  void max_u64(unsigned long long* data, std::size_t count, cudaStream_t stream) override {
    reduce(data, count, nccl_uint64, nccl_max, stream);
  }
  void min_u64(unsigned long long* data, std::size_t count, cudaStream_t stream) override {
    reduce(data, count, nccl_uint64, nccl_min, stream);
  }
  void all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) override {
    live();
    if (bytes == 0) return;
    const timed t(*this);
    enqueue([&](nccl_comm c) { return api().all_gather(send, recv, bytes, nccl_uint8, c, stream); }, "all-gather",
            stream);
  }
  void sum_scatter_i64(const long long* send, long long* recv, std::size_t recv_count, cudaStream_t stream) override {
    live();
    if (recv_count == 0) return;
    const timed t(*this);
    enqueue([&](nccl_comm c) { return api().reduce_scatter(send, recv, recv_count, nccl_int64, nccl_sum, c, stream); },
            "reduce-scatter", stream);
  }
  [[nodiscard]] counters enqueued() const noexcept override { return {calls_, host_ms_}; }
  void check_live() const override { live(); }
  void cancel() noexcept override {
    if (aborted_.exchange(true)) return;
    // A caller's communicator is theirs to abort; ours is aborted so that no rank waits forever.
    if (owner_ != nullptr) owner_->abort("another rank of this training failed");
  }

 private:
  void live() const {
    if (owner_ != nullptr && owner_->aborted()) CBG_FAIL(status::cuda, owner_->reason());
    CBG_EXPECTS(!aborted_.load(), status::internal, "the NCCL communicator was aborted after another rank failed");
  }
  void reduce(void* data, std::size_t count, int type, int op, cudaStream_t stream) {
    live();
    if (count == 0) return;
    const timed t(*this);
    enqueue([&](nccl_comm c) { return api().all_reduce(data, data, count, type, op, c, stream); }, "all-reduce",
            stream);
  }
  // Enqueues a collective (call(comm) -> ncclResult_t); a non-blocking communicator's settles first.
  template <class F>
  void enqueue(F&& call, const char* what, cudaStream_t stream) {
    if (owner_ == nullptr) {
      check(call(comm_), what);
      return;
    }
    nccl_result r = 0;
    if (!owner_->use([&](nccl_comm c) { r = call(c); })) live();  // aborted meanwhile: says why
    r = settle(comm_, r, timeout_.count() > 0 ? timeout_ : std::chrono::milliseconds(86'400'000), owner_.get());
    live();
    if (r != 0) {
      owner_->abort(fmt::format("NCCL {} failed: {}", what, text_of(r)));
      live();
    }
    if (watchdog_) watchdog_->enqueued(stream);
  }

  // Counts a collective and its enqueue time (each reducer is used by one thread at a time).
  class timed {
   public:
    explicit timed(nccl_reducer& r) : r_(r), start_(std::chrono::steady_clock::now()) {}
    ~timed() {
      r_.calls_ += 1;
      r_.host_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    }
    timed(const timed&) = delete;
    timed& operator=(const timed&) = delete;

   private:
    nccl_reducer& r_;
    std::chrono::steady_clock::time_point start_;
  };

  nccl_comm comm_;
  int rank_;
  int size_;
  std::shared_ptr<nccl_owner> owner_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<collective_watchdog> watchdog_;  // after owner_: stopped before it goes
  std::atomic<bool> aborted_{false};
  std::uint64_t calls_ = 0;
  double host_ms_ = 0;
};

}  // namespace

// ---- communicators the library owns ---------------------------------------------------------------
nccl_owner::nccl_owner(void* comm) : comm_(comm) {}
nccl_owner::~nccl_owner() {
  if (!aborted_.load()) (void)api().comm_destroy(comm_);
}
void nccl_owner::abort(const std::string& why) noexcept {
  const std::unique_lock<std::shared_mutex> using_it(use_);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_.load()) return;
    reason_ = why;
    aborted_.store(true);
  }
  (void)api().comm_abort(comm_);
}
std::string nccl_owner::reason() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return reason_;
}

bool nccl_available(std::string* why) {
  const nccl_api& a = api();
  if (why != nullptr) *why = a.missing;
  return a.missing.empty();
}

std::array<std::uint8_t, nccl_unique_id_bytes> nccl_unique_id() {
  const nccl_api& a = require_api();
  nccl_uid id{};
  check(a.get_unique_id(&id), "ncclGetUniqueId");
  std::array<std::uint8_t, nccl_unique_id_bytes> out{};
  static_assert(sizeof(id) == nccl_unique_id_bytes);
  std::memcpy(out.data(), &id, sizeof(id));
  return out;
}

communicator make_id_communicator(const std::array<std::uint8_t, nccl_unique_id_bytes>& id, int rank, int size,
                                  int device, std::chrono::milliseconds timeout) {
  CBG_EXPECTS(size >= 1 && rank >= 0 && rank < size, status::invalid_argument,
              fmt::format("NCCL rank {} of size {}: expected 0 <= rank < size", rank, size));
  CBG_EXPECTS(timeout.count() > 0, status::invalid_argument, "the NCCL timeout must be positive");
  const nccl_api& a = require_api();
  nccl_uid uid{};
  std::memcpy(&uid, id.data(), sizeof(uid));
  scoped_device on(device);
  nccl_comm comm = nullptr;
  if (a.comm_init_rank_config != nullptr) {
    // Non-blocking, so that a rank whose peers never come gives up after the timeout.
    nccl_config config;
    config.blocking = 0;
    nccl_result r = a.comm_init_rank_config(&comm, size, uid, rank, &config);
    if (comm != nullptr) r = settle(comm, r, timeout);
    if (r != 0) {
      if (comm != nullptr) (void)a.comm_abort(comm);
      CBG_EXPECTS(r != nccl_in_progress, status::cuda,
                  fmt::format("ncclCommInitRankConfig (rank {} of {}) did not complete within {} ms: not every "
                              "rank joined with the same unique id",
                              rank, size, timeout.count()));
      check(r, "ncclCommInitRankConfig");
    }
  } else {
    check(a.comm_init_rank(&comm, size, uid, rank), "ncclCommInitRank");  // NCCL < 2.14: cannot time out
  }
  communicator c;
  c.comm = comm;
  c.rank = rank;
  c.size = size;
  c.owner = std::make_shared<nccl_owner>(comm);
  c.timeout = timeout;
  return c;
}

std::vector<std::unique_ptr<reducer>> make_local_reducers(const std::vector<int>& devices) {
  CBG_EXPECTS(!devices.empty(), status::invalid_argument, "make_local_reducers: no devices");
  const nccl_api& a = require_api();
  std::vector<nccl_comm> comms(devices.size(), nullptr);
  {
    // ncclCommInitAll sets devices itself; the caller's current device is restored.
    scoped_device keep(devices[0]);
    check(a.comm_init_all(comms.data(), static_cast<int>(devices.size()), devices.data()), "ncclCommInitAll");
  }
  std::vector<std::unique_ptr<reducer>> out;
  for (std::size_t r = 0; r < comms.size(); ++r) {
    out.push_back(std::make_unique<nccl_reducer>(comms[r], static_cast<int>(r), static_cast<int>(comms.size()),
                                                 std::make_shared<nccl_owner>(comms[r])));
  }
  return out;
}

std::unique_ptr<reducer> make_comm_reducer(void* comm, int rank, int size) {
  CBG_EXPECTS(comm != nullptr, status::null_pointer, "the NCCL communicator is NULL");
  const nccl_api& a = require_api();
  int n = 0, r = 0;
  check(a.comm_count(comm, &n), "ncclCommCount");
  check(a.comm_user_rank(comm, &r), "ncclCommUserRank");
  CBG_EXPECTS(n == size && r == rank, status::invalid_argument,
              fmt::format("the context says rank {} of {}, the NCCL communicator rank {} of {}", rank, size, r, n));
  return std::make_unique<nccl_reducer>(comm, rank, size, nullptr);
}

std::unique_ptr<reducer> make_reducer(const communicator& c, int device) {
  if (c.owner == nullptr) return make_comm_reducer(c.comm, c.rank, c.size);
  CBG_EXPECTS(!c.owner->aborted(), status::cuda, "the context's NCCL communicator was aborted: " + c.owner->reason());
  return std::make_unique<nccl_reducer>(c.comm, c.rank, c.size, c.owner, c.timeout, device);
}

}  // namespace cbg::dist
