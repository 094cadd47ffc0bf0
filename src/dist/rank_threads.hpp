// SPDX-License-Identifier: Apache-2.0
// A thread per rank of a one-process sharded training (src/dist/sharded_backend.cpp), and the
// timings of its hand-offs for the context's stage profiler (profiler.hpp).
//
// Backend calls come every few hundred microseconds and every one is a hand-off to all ranks and
// back. A thread that sleeps between calls pays the kernel's wake-up on every call (on the
// virtual machines we measured on, futex wake-ups cost far more than the calls' host work), so
// the ranks and the caller busy-wait (yielding) for a while before they sleep: the context
// policy's dist_spin_us (policy.hpp; default 20000 µs, 0: sleep at once).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cbg/dist/dist.hpp"
#include "cbg/runtime/profiler.hpp"

namespace cbg::dist {

using steady = std::chrono::steady_clock;

// The reducer of a training with one rank (a single device other than the pool's): collectives are
// no-ops, a gather a copy.
class solo_reducer : public reducer {
 public:
  [[nodiscard]] int rank() const noexcept override { return 0; }
  [[nodiscard]] int size() const noexcept override { return 1; }
  void sum_i64(long long*, std::size_t, cudaStream_t) override {}
  void max_u32(unsigned*, std::size_t, cudaStream_t) override {}
  void max_u64(unsigned long long*, std::size_t, cudaStream_t) override {}
  void min_u64(unsigned long long*, std::size_t, cudaStream_t) override {}
  void all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) override;
  void sum_scatter_i64(const long long* send, long long* recv, std::size_t recv_count, cudaStream_t stream) override;
  void cancel() noexcept override {}
};

// The hand-offs' timings, added to a profiler (the profiling context's) as they happen: per call
// "dist.<call>" (the caller's wall time: dispatch to return) and its parts "dist.<call>: wake"
// (dispatch to the last rank's start), ": work" (the longest rank's time in the call), ": skew"
// (first rank done to last rank done), ": tail" (last rank done to the return) and ": gap before"
// (the caller's time since its previous call returned: the trainer's host work); set-up and
// tear-down phases "dist.<phase>"; per rank "dist.rank <r>: work", ": collectives" (calls and host
// time) and ": d2h copies" (calls).
class dist_profile {
 public:
  struct rank_totals {
    std::uint64_t collectives = 0;
    double collective_host_ms = 0;
    std::uint64_t d2h_copies = 0;
  };

  explicit dist_profile(profiler& out) : out_(out) {}

  void add(const char* name, steady::time_point dispatch, steady::time_point back,
           const std::vector<steady::time_point>& start, const std::vector<steady::time_point>& end);
  // The time of a phase outside the calls (set-up, tear-down), added up by name.
  void phase(const std::string& name, steady::time_point from, steady::time_point to);
  // The ranks' totals at the end of the training (given by the caller) and their work in the calls.
  void finish(const std::vector<rank_totals>& ranks);

 private:
  profiler& out_;
  std::vector<double> rank_work_ms_;
  steady::time_point last_back_{};
};

class rank_threads {
 public:
  // Thread r makes devices[r] current (none for a negative one); a failure cancels every reducer so that waiting ranks
  // return. spin: how long the caller and the ranks busy-wait before they sleep (0: sleep at once).
  rank_threads(std::vector<int> devices, std::vector<reducer*> reducers, dist_profile* profile,
               std::chrono::microseconds spin);
  ~rank_threads();
  rank_threads(const rank_threads&) = delete;
  rank_threads& operator=(const rank_threads&) = delete;

  [[nodiscard]] int size() const noexcept { return static_cast<int>(devices_.size()); }

  // Runs f(rank) on every rank's thread; rethrows the first failure (after cancelling the
  // communicators, so that ranks waiting for the failed one return). `name` labels the profile.
  void run(const char* name, const std::function<void(int)>& f);
  // Whether a call failed on some rank (its communicators are aborted then: not to be used again).
  [[nodiscard]] bool broken();
  // Also called (with the failure's message) when a rank fails, after the communicators are
  // cancelled: for other places where ranks wait for each other (a rendezvous). Set before run().
  void on_failure(std::function<void(const std::string&)> cancel);

 private:
  template <class Ready>
  void spin_until(Ready&& ready) const;
  void loop(int rank);

  std::vector<int> devices_;
  std::vector<reducer*> reducers_;
  dist_profile* profile_;
  std::chrono::microseconds spin_;
  std::vector<std::thread> threads_;
  std::vector<steady::time_point> start_, end_;  // per rank, of the current call
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* task_ = nullptr;  // written under mutex_ before generation_ moves
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  bool broken_ = false;
  std::exception_ptr first_error_;
  std::string first_message_;
  std::function<void(const std::string&)> on_failure_;
};

}  // namespace cbg::dist
