// SPDX-License-Identifier: Apache-2.0
// A rendezvous for calls that every rank of a one-process sharded training makes in the same order
// (the search extension's, src/dist/sharded_extension.cpp): a call is computed once, by the last
// rank to make it, while the other ranks wait for it; then every rank takes the same answer.
//
// Why every rank waits for the last one: the computation runs on the pool's device and may wait
// for the host (read-backs, stream syncs, lazy kernel loads, allocations) while the ranks' NCCL
// collectives are queued on the devices. A collective finishes only once every rank has queued its
// part. When all ranks have arrived at the same call, each has queued the same collectives (they make
// the same calls in the same order), so every queued collective has all its parts and any wait
// inside the computation ends. A rank that computed as soon as it arrived could wait on its own
// device's collective whose partner another rank queues only after this call: a deadlock.
//
// The ranks must ask the same (the same key): a difference is a bug, reported to every rank as
// status::internal. A failing computation fails the call on every rank. cancel() (a rank failed
// elsewhere) makes waiting and later calls fail, so that no rank waits for one that will never come.
// Thread-safe. Internal (not installed).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cbg/core/error.hpp"

namespace cbg::dist {

template <class Key, class Answer>
class rank_calls {
 public:
  // `what` names the calls in messages. `spin`: how long a waiting rank busy-waits (yielding)
  // before it sleeps (the rank threads' dist_spin_us: waking a sleeping thread costs more than a
  // level's host work).
  rank_calls(int ranks, const char* what, std::chrono::microseconds spin = std::chrono::microseconds(0))
      : next_(static_cast<std::size_t>(ranks), 0), what_(what), spin_(spin) {}

  // Rank `rank`'s next call with `key`: waits until every rank has made it; the last computes
  // compute() (outside the lock) and every rank gets its answer (or its failure).
  template <class Compute>
  Answer call(int rank, const Key& key, Compute&& compute) {
    std::unique_lock<std::mutex> lock(mutex_);
    CBG_EXPECTS(rank >= 0 && static_cast<std::size_t>(rank) < next_.size(), status::internal,
                fmt::format("{}: rank {} of {}", what_, rank, next_.size()));
    throw_if_cancelled();
    const std::uint64_t i = next_[static_cast<std::size_t>(rank)]++;
    if (i == first_ + kept_.size()) kept_.emplace_back(key);
    CBG_EXPECTS(i >= first_ && i < first_ + kept_.size(), status::internal,
                fmt::format("sharded training: rank {} asked for {} {}, which is gone", rank, what_, i));
    entry& e = kept_[static_cast<std::size_t>(i - first_)];  // deque: stays valid while others are added
    ++e.arrived;
    if (!e.done && !(e.key == key)) {
      finish(e, std::make_exception_ptr(
                    error(status::internal,
                          fmt::format("sharded training: the ranks asked for different {} (call {})", what_, i))));
    } else if (!e.done && e.arrived == static_cast<int>(next_.size())) {
      lock.unlock();  // the others wait on the entry, not on the lock
      std::optional<Answer> answer;
      std::exception_ptr failed;
      try {
        answer.emplace(compute());
      } catch (...) {
        failed = std::current_exception();
      }
      lock.lock();
      if (answer) e.answer = std::move(*answer);
      finish(e, failed);
    } else if (!e.done) {
      lock.unlock();
      spin_until(i);
      lock.lock();
      done_.wait(lock, [&] { return e.done || cancelled_; });
      if (!e.done) throw_if_cancelled();
    }
    ++e.taken;
    const std::exception_ptr failed = e.error;
    Answer out = e.error ? Answer{} : e.answer;
    while (!kept_.empty() && kept_.front().done && kept_.front().taken == static_cast<int>(next_.size())) {
      kept_.pop_front();
      ++first_;
    }
    if (failed) std::rethrow_exception(failed);
    return out;
  }

  // A rank failed: calls waiting now and later fail with `why`.
  void cancel(const std::string& why) noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cancelled_) return;
      cancelled_ = true;
      try {
        why_ = why;
      } catch (...) {}
    }
    done_.notify_all();
  }

  // Calls finished so far, and calls some rank has made that not every rank has taken.
  [[nodiscard]] std::uint64_t computed() const noexcept { return finished_.load(); }
  [[nodiscard]] std::size_t waiting() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return kept_.size();
  }

 private:
  struct entry {
    explicit entry(const Key& k) : key(k) {}
    Key key;
    int arrived = 0;
    int taken = 0;
    bool done = false;
    Answer answer{};
    std::exception_ptr error;
  };

  // Under the lock.
  void finish(entry& e, std::exception_ptr failed) {
    e.error = std::move(failed);
    e.done = true;
    finished_.fetch_add(1);
    done_.notify_all();
  }
  void throw_if_cancelled() const {
    if (cancelled_) CBG_FAIL(status::internal, fmt::format("sharded training: {}: {}", what_, why_));
  }
  // Outside the lock: busy-waits (yielding) until call i is finished, for at most spin_.
  void spin_until(std::uint64_t i) const {
    if (spin_.count() <= 0) return;
    const auto until = std::chrono::steady_clock::now() + spin_;
    while (finished_.load() <= i) {
      for (int k = 0; k < 64 && finished_.load() <= i; ++k) std::this_thread::yield();
      if (std::chrono::steady_clock::now() > until) return;
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable done_;
  std::vector<std::uint64_t> next_;  // per rank: the index of its next call
  std::deque<entry> kept_;           // calls [first_, first_ + kept_.size())
  std::uint64_t first_ = 0;
  std::atomic<std::uint64_t> finished_{0};  // calls finished (done), in order: call i is done once this is > i
  bool cancelled_ = false;
  std::string why_;
  const char* what_;
  std::chrono::microseconds spin_;
};

}  // namespace cbg::dist
