// SPDX-License-Identifier: Apache-2.0
// The rank threads of a one-process sharded training and the timings of their hand-offs (rank_threads.hpp).
#include "src/dist/rank_threads.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"

namespace cbg::dist {

namespace {

double ms_between(steady::time_point a, steady::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

void solo_reducer::all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) {
  if (bytes > 0 && send != recv) CBG_CUDA_TRY(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, stream));
}

void solo_reducer::sum_scatter_i64(const long long* send, long long* recv, std::size_t recv_count,
                                   cudaStream_t stream) {
  if (recv_count > 0 && send != recv) {
    CBG_CUDA_TRY(cudaMemcpyAsync(recv, send, recv_count * sizeof(long long), cudaMemcpyDeviceToDevice, stream));
  }
}

// ---- profile -----------------------------------------------------------------------------------------
void dist_profile::add(const char* name, steady::time_point dispatch, steady::time_point back,
                       const std::vector<steady::time_point>& start, const std::vector<steady::time_point>& end) {
  const std::string call = fmt::format("dist.{}", name);
  const steady::time_point last_start = *std::max_element(start.begin(), start.end());
  const steady::time_point first_end = *std::min_element(end.begin(), end.end());
  const steady::time_point last_end = *std::max_element(end.begin(), end.end());
  out_.add(call, ms_between(dispatch, back));
  out_.add(call + ": wake", ms_between(dispatch, last_start));
  out_.add(call + ": skew", ms_between(first_end, last_end));
  out_.add(call + ": tail", ms_between(last_end, back));
  if (last_back_ != steady::time_point{}) out_.add(call + ": gap before", ms_between(last_back_, dispatch));
  last_back_ = back;
  rank_work_ms_.resize(start.size(), 0.0);
  double longest = 0;
  for (std::size_t r = 0; r < start.size(); ++r) {
    const double w = ms_between(start[r], end[r]);
    rank_work_ms_[r] += w;
    longest = std::max(longest, w);
  }
  out_.add(call + ": work", longest);
}

void dist_profile::phase(const std::string& name, steady::time_point from, steady::time_point to) {
  out_.add("dist." + name, ms_between(from, to));
}

void dist_profile::finish(const std::vector<rank_totals>& ranks) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::string rank = fmt::format("dist.rank {}", r);
    out_.add(rank + ": work", r < rank_work_ms_.size() ? rank_work_ms_[r] : 0.0, 0);
    out_.add(rank + ": collectives", ranks[r].collective_host_ms, static_cast<std::int64_t>(ranks[r].collectives));
    out_.add(rank + ": d2h copies", 0.0, static_cast<std::int64_t>(ranks[r].d2h_copies));
  }
}

// ---- threads -----------------------------------------------------------------------------------------
rank_threads::rank_threads(std::vector<int> devices, std::vector<reducer*> reducers, dist_profile* profile,
                           std::chrono::microseconds spin)
    : devices_(std::move(devices)),
      reducers_(std::move(reducers)),
      profile_(profile),
      spin_(spin),
      start_(devices_.size()),
      end_(devices_.size()) {
  for (std::size_t r = 0; r < devices_.size(); ++r) threads_.emplace_back([this, r] { loop(static_cast<int>(r)); });
}

rank_threads::~rank_threads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

template <class Ready>
void rank_threads::spin_until(Ready&& ready) const {
  if (spin_.count() <= 0) return;
  const auto until = steady::now() + spin_;
  while (!ready()) {
    for (int i = 0; i < 64 && !ready(); ++i) std::this_thread::yield();
    if (steady::now() > until) return;
  }
}

void rank_threads::run(const char* name, const std::function<void(int)>& f) {
  const steady::time_point dispatch = steady::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CBG_EXPECTS(!broken_, status::internal, "a rank of this sharded training failed earlier: " + first_message_);
    task_ = &f;
    pending_.store(size());
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  spin_until([&] { return pending_.load() == 0; });
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_.load() == 0; });
  task_ = nullptr;
  if (profile_ != nullptr) profile_->add(name, dispatch, steady::now(), start_, end_);
  if (first_error_) {
    broken_ = true;
    std::exception_ptr e = first_error_;
    first_error_ = nullptr;
    std::rethrow_exception(e);
  }
}

bool rank_threads::broken() {
  std::lock_guard<std::mutex> lock(mutex_);
  return broken_ || first_error_ != nullptr;
}

void rank_threads::on_failure(std::function<void(const std::string&)> cancel) {
  std::lock_guard<std::mutex> lock(mutex_);
  on_failure_ = std::move(cancel);
}

void rank_threads::loop(int rank) {
  std::uint64_t seen = 0;
  const auto r = static_cast<std::size_t>(rank);
  // A negative device: a thread that touches no GPU (the host tests).
  const bool device_set = devices_[r] < 0 || cudaSetDevice(devices_[r]) == cudaSuccess;
  while (true) {
    spin_until([&] { return stop_.load() || generation_.load() != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
      if (stop_.load()) return;
      seen = generation_.load();
    }
    start_[r] = steady::now();
    const std::function<void(int)>* f = task_;
    std::exception_ptr failed;
    const reducer* own = reducers_.empty() ? nullptr : reducers_[std::min(r, reducers_.size() - 1)];
    try {
      CBG_EXPECTS(device_set, status::cuda, fmt::format("cannot make device {} current", devices_[r]));
      (*f)(rank);
      if (own != nullptr) own->check_live();  // an aborted collective's results are garbage, thrown or not
    } catch (...) {
      failed = std::current_exception();
      // What went wrong after an abort (a timeout, another process's failure) is its consequence:
      // report the abort's reason.
      try {
        if (own != nullptr) own->check_live();
      } catch (...) {
        failed = std::current_exception();
      }
    }
    end_[r] = steady::now();
    if (failed) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!first_error_) {
        first_error_ = failed;
        try {
          std::rethrow_exception(failed);
        } catch (const std::exception& e) {
          first_message_ = e.what();
        } catch (...) {
          first_message_ = "unknown error";
        }
        for (reducer* red : reducers_) red->cancel();
        if (on_failure_) {
          try {
            on_failure_(fmt::format("rank {} failed: {}", rank, first_message_));
          } catch (...) {  // the message only
            on_failure_("a rank failed");
          }
        }
      }
    }
    if (pending_.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_all();
    }
  }
}

}  // namespace cbg::dist
