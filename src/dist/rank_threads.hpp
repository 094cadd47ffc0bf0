// SPDX-License-Identifier: Apache-2.0
// A thread per rank of a one-process sharded training (src/dist/sharded_backend.cpp), and the
// host-side profile of its hand-offs (CBGPU_DIST_PROFILE=<file>).
//
// Backend calls come every few hundred microseconds and every one is a hand-off to all ranks and
// back. A thread that sleeps between calls pays the kernel's wake-up on every call (on the
// virtual machines we measured on, futex wake-ups cost far more than the calls' host work), so
// the ranks and the caller busy-wait (yielding) for a while before they sleep:
// CBGPU_DIST_SPIN_US (default 20000 µs; 0: sleep at once).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cbg/dist/dist.hpp"

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

// Per-call totals of the hand-offs, appended as one JSON line to CBGPU_DIST_PROFILE's file when the
// training ends (off by default; the timestamps are taken anyway, they cost tens of nanoseconds).
class dist_profile {
 public:
  struct call {
    std::int64_t n = 0;
    double wall_ms = 0;  // caller: dispatch to return
    double wake_ms = 0;  // dispatch to the last rank's start
    double work_ms = 0;  // the longest rank's time in the call
    double skew_ms = 0;  // first rank done to last rank done
    double tail_ms = 0;  // last rank done to the caller's return
    double gap_ms = 0;   // the caller's time since its previous call returned (the trainer's host work)
  };
  struct rank_totals {
    double work_ms = 0;
    std::uint64_t collectives = 0;
    double collective_host_ms = 0;
    std::uint64_t d2h_copies = 0;
  };

  // The file from CBGPU_DIST_PROFILE, or null when profiling is off.
  static std::unique_ptr<dist_profile> from_environment();

  void add(const char* name, steady::time_point dispatch, steady::time_point back,
           const std::vector<steady::time_point>& start, const std::vector<steady::time_point>& end);
  // The time of a phase outside the calls (set-up, tear-down), added up by name.
  void phase(const std::string& name, steady::time_point from, steady::time_point to);
  // Appends the JSON line (ranks' totals given by the caller).
  void write(const std::vector<rank_totals>& ranks) const;

 private:
  explicit dist_profile(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::map<std::string, call> calls_;
  std::map<std::string, double> phases_;
  std::vector<double> rank_work_ms_;
  steady::time_point last_back_{};
};

class rank_threads {
 public:
  // Thread r makes devices[r] current (none for a negative one); a failure cancels every reducer so that waiting ranks return.
  rank_threads(std::vector<int> devices, std::vector<reducer*> reducers, dist_profile* profile);
  ~rank_threads();
  rank_threads(const rank_threads&) = delete;
  rank_threads& operator=(const rank_threads&) = delete;

  [[nodiscard]] int size() const noexcept { return static_cast<int>(devices_.size()); }

  // Runs f(rank) on every rank's thread; rethrows the first failure (after cancelling the
  // communicators, so that ranks waiting for the failed one return). `name` labels the profile.
  void run(const char* name, const std::function<void(int)>& f);
  // Whether a call failed on some rank (its communicators are aborted then: not to be used again).
  [[nodiscard]] bool broken();

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
};

}  // namespace cbg::dist
