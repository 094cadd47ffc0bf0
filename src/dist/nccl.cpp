// SPDX-License-Identifier: Apache-2.0
// The NCCL reducer. libnccl.so.2 is loaded with dlopen on first use, so that libcbgpu.so loads and
// works (one GPU) on machines without NCCL; the few types used are declared here from NCCL's
// documented ABI (nccl.h 2.x), so the build does not need nccl.h either.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::dist {

namespace {

// ---- NCCL's ABI (nccl.h, 2.x) ----------------------------------------------------------------------
using nccl_comm = void*;  // ncclComm_t
struct nccl_unique_id {
  char internal[128];
};
using nccl_result = int;  // ncclResult_t: 0 is ncclSuccess
enum nccl_type : int { nccl_uint32 = 3, nccl_int64 = 4, nccl_uint64 = 5, nccl_uint8 = 1 };
enum nccl_op : int { nccl_sum = 0, nccl_max = 2, nccl_min = 3 };

struct nccl_api {
  nccl_result (*comm_init_all)(nccl_comm*, int, const int*) = nullptr;
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
    return r;
  }();
  return a;
}

const nccl_api& require_api() {
  const nccl_api& a = api();
  CBG_EXPECTS(a.missing.empty(), status::unsupported, "multi-GPU needs NCCL: " + a.missing);
  return a;
}

void check(nccl_result r, const char* what) {
  if (r == 0) return;
  const char* text = api().error_string != nullptr ? api().error_string(r) : "unknown";
  CBG_FAIL(status::cuda, fmt::format("NCCL {} failed: {} (ncclResult_t {})", what, text != nullptr ? text : "?", r));
}

class nccl_reducer final : public reducer {
 public:
  nccl_reducer(nccl_comm comm, int rank, int size, bool owned) : comm_(comm), rank_(rank), size_(size), owned_(owned) {}
  ~nccl_reducer() override {
    if (owned_ && !aborted_.load()) (void)api().comm_destroy(comm_);
  }
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
    check(api().all_gather(send, recv, bytes, nccl_uint8, comm_, stream), "all-gather");
  }
  void sum_scatter_i64(const long long* send, long long* recv, std::size_t recv_count, cudaStream_t stream) override {
    live();
    if (recv_count == 0) return;
    const timed t(*this);
    check(api().reduce_scatter(send, recv, recv_count, nccl_int64, nccl_sum, comm_, stream), "reduce-scatter");
  }
  [[nodiscard]] counters enqueued() const noexcept override { return {calls_, host_ms_}; }
  void cancel() noexcept override {
    if (aborted_.exchange(true)) return;
    // A caller's communicator is theirs to abort; ours is aborted so that no rank waits forever.
    if (owned_) (void)api().comm_abort(comm_);
  }

 private:
  void live() const {
    CBG_EXPECTS(!aborted_.load(), status::internal, "the NCCL communicator was aborted after another rank failed");
  }
  void reduce(void* data, std::size_t count, int type, int op, cudaStream_t stream) {
    live();
    if (count == 0) return;
    const timed t(*this);
    check(api().all_reduce(data, data, count, type, op, comm_, stream), "all-reduce");
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
  bool owned_;
  std::atomic<bool> aborted_{false};
  std::uint64_t calls_ = 0;
  double host_ms_ = 0;
};

}  // namespace

bool nccl_available(std::string* why) {
  const nccl_api& a = api();
  if (why != nullptr) *why = a.missing;
  return a.missing.empty();
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
    out.push_back(std::make_unique<nccl_reducer>(comms[r], static_cast<int>(r), static_cast<int>(comms.size()), true));
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
  return std::make_unique<nccl_reducer>(comm, rank, size, false);
}

}  // namespace cbg::dist
