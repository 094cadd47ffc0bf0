// SPDX-License-Identifier: Apache-2.0
// Calls that every rank of a one-process sharded training makes in the same order, each answered
// once (the search extension's, src/dist/sharded_extension.cpp): the first rank to make its i-th call
// computes the answer, the others take the one kept. An answer is kept until every rank has taken it.
// The ranks must ask the same (the same key): a difference is a bug, reported as status::internal.
// Not synchronised: the caller holds one mutex around every call. Internal (not installed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cbg/core/error.hpp"

namespace cbg::dist {

template <class Key, class Answer>
class rank_calls {
 public:
  // `what` names the calls in messages. `one_at_a_time`: an answer refers to something that the
  // next computation replaces (the extension's candidate columns live until its next call), so a
  // call may only be computed once every rank has taken the previous one.
  rank_calls(int ranks, const char* what, bool one_at_a_time)
      : next_(static_cast<std::size_t>(ranks), 0), what_(what), one_at_a_time_(one_at_a_time) {}

  // Rank `rank`'s next call with `key`: compute() when no rank has made it yet, else the kept answer.
  template <class Compute>
  Answer call(int rank, const Key& key, Compute&& compute) {
    CBG_EXPECTS(rank >= 0 && static_cast<std::size_t>(rank) < next_.size(), status::internal,
                fmt::format("{}: rank {} of {}", what_, rank, next_.size()));
    std::uint64_t& next = next_[static_cast<std::size_t>(rank)];
    const std::uint64_t i = next;
    if (i == first_ + kept_.size()) {  // a new call
      CBG_EXPECTS(!one_at_a_time_ || kept_.empty(), status::internal,
                  fmt::format("sharded training: {} {} was asked for before every rank took {}", what_, i, i - 1));
      kept_.push_back(entry{key, compute(), 0});
    }
    CBG_EXPECTS(i >= first_ && i < first_ + kept_.size(), status::internal,
                fmt::format("sharded training: rank {} asked for {} {}, which is gone", rank, what_, i));
    entry& e = kept_[static_cast<std::size_t>(i - first_)];
    CBG_EXPECTS(e.key == key, status::internal,
                fmt::format("sharded training: the ranks asked for different {} (call {})", what_, i));
    Answer out = e.answer;
    ++next;
    ++e.taken;
    while (!kept_.empty() && kept_.front().taken == static_cast<int>(next_.size())) {
      kept_.pop_front();
      ++first_;
    }
    return out;
  }

  // Calls computed so far, and answers still waiting for a rank.
  [[nodiscard]] std::uint64_t computed() const noexcept { return first_ + kept_.size(); }
  [[nodiscard]] std::size_t waiting() const noexcept { return kept_.size(); }

 private:
  struct entry {
    Key key;
    Answer answer;
    int taken = 0;
  };
  std::vector<std::uint64_t> next_;  // per rank: the index of its next call
  std::deque<entry> kept_;           // the answers of calls [first_, first_ + kept_.size())
  std::uint64_t first_ = 0;
  const char* what_;
  bool one_at_a_time_;
};

}  // namespace cbg::dist
