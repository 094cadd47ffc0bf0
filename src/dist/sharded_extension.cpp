// SPDX-License-Identifier: Apache-2.0
// The search extension's rank views in a one-process sharded training (sharded_extension.hpp).
#include "src/dist/sharded_extension.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/dist/shard.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/device.hpp"
#include "src/dist/column_pieces.hpp"
#include "src/dist/rank_calls.hpp"

namespace cbg::dist {

namespace {

// A level's answer: the base's columns (pool's device, every learn row) and their model-size
// multipliers (empty: none).
struct level_answer {
  std::vector<train::search_extension::column> columns;
  std::vector<float> weights;
};

// A commit's answer: the feature id and its values on every eval row (pool's device; null: none).
struct commit_answer {
  std::int32_t feature = -1;
  const float* eval = nullptr;
};

// The bytes a rank's bounce blocks hold: what crosses between the devices per copy.
constexpr std::size_t bounce_bytes = std::size_t{16} << 20;

}  // namespace

// The members are the views' (this file's) only.
class sharded_extension::shared {
 public:
  shared(train::search_extension& base, const context& ctx, const row_split& learn, const row_split& eval, int ranks,
         std::chrono::microseconds spin)
      : base_(base),
        ctx_(ctx),
        learn_(learn),
        eval_(eval),
        levels_(ranks, "candidate columns", spin),
        commits_(ranks, "commits", spin) {}

  train::search_extension& base_;
  const context& ctx_;  // the base's context (the learn pool's)
  row_split learn_, eval_;
  // The base's computations: at rendezvous of all ranks (rank_calls.hpp), so never two at once.
  rank_calls<std::vector<train::split>, level_answer> levels_;
  rank_calls<std::size_t, commit_answer> commits_;
  // The base's host lookups (borders, counts) from several ranks at once; held across no wait. They
  // never overlap a computation: a rank asks after its search, whose calls every rank has made.
  std::mutex reads_;
};

// A rank's view. Everything it does on the devices outside the rendezvous is enqueued on streams,
// never waited for: the copies of its rows go through two blocks of peer memory made with the view
// (on the main thread, before any collective), and its buffers come from the contexts'
// stream-ordered pools. A cudaMalloc or cudaFree could wait for a device whose collective waits
// for this thread.
class sharded_extension::view final : public train::search_extension {
 public:
  view(shared& s, int rank, const context& ctx) : s_(s), rank_(rank), ctx_(ctx) {
    {
      scoped_device on(s_.ctx_.device());
      bounce_from_ = device_buffer<std::uint8_t>(bounce_bytes, s_.ctx_.stream(), peer_memory(s_.ctx_.device()));
    }
    scoped_device on(ctx_.device());
    bounce_to_ = device_buffer<std::uint8_t>(bounce_bytes, ctx_.stream(), peer_memory(ctx_.device()));
  }

  ~view() override {
    {
      scoped_device on(ctx_.device());
      eval_.clear();
      landing_ = device_buffer<std::uint8_t>();
      bounce_to_ = device_buffer<std::uint8_t>();
    }
    scoped_device on(s_.ctx_.device());
    bounce_from_ = device_buffer<std::uint8_t>();
  }
  view(const view&) = delete;
  view& operator=(const view&) = delete;

  void set_nan_modes(const std::vector<std::uint8_t>& /*modes*/) override {}  // the trainer sets the base's

  std::vector<column> candidates(const std::vector<train::split>& chosen,
                                 const std::function<float(std::int32_t, std::int32_t)>& float_border) override {
    const level_answer a = s_.levels_.call(rank_, chosen, [&] {
      scoped_device on(s_.ctx_.device());
      level_answer out;
      out.columns = s_.base_.candidates(chosen, float_border);
      if (s_.base_.column_weights && !out.columns.empty()) {
        out.weights = s_.base_.column_weights(chosen, out.columns.size());
      }
      return out;
    });
    weights_ = a.weights;
    // This rank's rows of the columns, column after column in landing_. Enqueued now, before this
    // rank queues another collective; the base replaces the columns only at the next level's
    // rendezvous, after every rank's copies here (in the base stream's order).
    const std::int64_t first = s_.learn_.first(rank_);
    const auto count = static_cast<std::size_t>(s_.learn_.counts[static_cast<std::size_t>(rank_)]);
    const std::size_t bytes = a.columns.size() * count;
    std::vector<column> mine(a.columns.size());
    if (bytes == 0) return mine;
    if (landing_.size() < bytes) {
      scoped_device on(ctx_.device());
      landing_ = device_buffer<std::uint8_t>(std::max(bytes, landing_.size() + landing_.size() / 2), ctx_.stream(),
                                             ctx_.resource());
    }
    transfer(landing_.data(), bytes, [&](std::size_t at, std::size_t n, std::uint8_t* into) {
      for (const column_piece& p : column_pieces(at, n, count)) {
        copy_bytes(into, memory_kind::device, a.columns[p.column].bins + first + p.offset, memory_kind::device, p.bytes,
                   s_.ctx_.stream(), s_.ctx_.copies(), s_.ctx_.rules(), CBG_COPY_SITE("combination columns"));
        into += p.bytes;
      }
    });
    for (std::size_t k = 0; k < a.columns.size(); ++k) {
      mine[k].bins = landing_.data() + k * count;
      mine[k].border_count = a.columns[k].border_count;
    }
    return mine;
  }

  // The won column's feature id; this rank's eval rows of its values are copied now (at the
  // rendezvous' point, like the columns), so that applying a tree later waits for nothing.
  std::int32_t commit(std::size_t k) override {
    const commit_answer a = s_.commits_.call(rank_, k, [&] {
      scoped_device on(s_.ctx_.device());
      commit_answer out;
      out.feature = s_.base_.commit(k);
      out.eval = s_.base_.eval_values(out.feature);
      return out;
    });
    if (eval_.count(a.feature) > 0) return a.feature;  // committed before: copied then
    const auto r = static_cast<std::size_t>(rank_);
    const std::int64_t count = r < s_.eval_.counts.size() ? s_.eval_.counts[r] : 0;
    device_buffer<float>& mine = eval_[a.feature];
    if (a.eval == nullptr || count == 0) return a.feature;
    {
      scoped_device on(ctx_.device());
      mine = device_buffer<float>(static_cast<std::size_t>(count), ctx_.stream(), ctx_.resource());
    }
    const auto* from = reinterpret_cast<const std::uint8_t*>(a.eval + s_.eval_.first(rank_));
    transfer(reinterpret_cast<std::uint8_t*>(mine.data()), static_cast<std::size_t>(count) * sizeof(float),
             [&](std::size_t at, std::size_t n, std::uint8_t* into) {
               copy_bytes(into, memory_kind::device, from + at, memory_kind::device, n, s_.ctx_.stream(),
                          s_.ctx_.copies(), s_.ctx_.rules(), CBG_COPY_SITE("combination eval values"));
             });
    return a.feature;
  }

  [[nodiscard]] float border(std::int32_t feature, std::int32_t bin) const override {
    std::lock_guard<std::mutex> lock(s_.reads_);
    return s_.base_.border(feature, bin);
  }

  // This rank's eval rows of a committed feature's values (copied at its commit, on this thread).
  [[nodiscard]] const float* eval_values(std::int32_t feature) const override {
    const auto it = eval_.find(feature);
    CBG_EXPECTS(it != eval_.end(), status::internal,
                fmt::format("sharded feature combinations: feature {} was not committed through this rank", feature));
    return it->second.size() > 0 ? it->second.data() : nullptr;
  }

  [[nodiscard]] std::uint64_t column_unique_values(std::size_t k) const override {
    std::lock_guard<std::mutex> lock(s_.reads_);
    return s_.base_.column_unique_values(k);
  }
  [[nodiscard]] const model::ctr_base* column_base(std::size_t k) const override {
    std::lock_guard<std::mutex> lock(s_.reads_);
    return s_.base_.column_base(k);
  }

  void follow_base() {
    column_noise = s_.base_.column_noise;  // (level, column) -> a draw: pure, the same on every rank
    column_weights = nullptr;
    if (s_.base_.column_weights) {
      column_weights = [this](const std::vector<train::split>& /*chosen*/, std::size_t /*count*/) { return weights_; };
    }
  }

 private:
  // `total` bytes into `to` (this rank's device), in pieces of the bounce blocks' size: gather(at, n,
  // into) enqueues bytes [at, at + n) into `into` (the base's device) on the base's stream; each
  // piece is then copied to this rank's block (peer_copy orders it after this rank's work so far
  // and this rank's later work after it) and from there to its place. Only enqueues: the ranks
  // call it right after a rendezvous, when each has queued the same collectives, so the base
  // stream's waits for the ranks' streams all end. The bounce blocks are this view's own.
  template <class Gather>
  void transfer(std::uint8_t* to, std::size_t total, Gather&& gather) {
    for (std::size_t at = 0; at < total; at += bounce_bytes) {
      const std::size_t n = std::min(bounce_bytes, total - at);
      {
        scoped_device on(s_.ctx_.device());
        gather(at, n, bounce_from_.data());
      }
      peer_copy(bounce_to_.data(), ctx_, bounce_from_.data(), s_.ctx_, n);
      scoped_device on(ctx_.device());
      copy_bytes(to + at, memory_kind::device, bounce_to_.data(), memory_kind::device, n, ctx_.stream(), ctx_.copies(),
                 ctx_.rules(), CBG_COPY_SITE("combination columns"));
    }
  }

  shared& s_;
  int rank_;
  const context& ctx_;                                 // the rank's
  device_buffer<std::uint8_t> bounce_from_;            // peer memory on the base's device
  device_buffer<std::uint8_t> bounce_to_;              // peer memory on this rank's
  device_buffer<std::uint8_t> landing_;                // this rank's rows of the level's columns
  std::vector<float> weights_;                         // the level's model-size multipliers
  std::map<std::int32_t, device_buffer<float>> eval_;  // committed features' eval values (its rows)
};

sharded_extension::sharded_extension(train::search_extension& base, const context& base_ctx, const row_split& learn,
                                     const row_split& eval, const std::vector<const context*>& ranks,
                                     std::chrono::microseconds spin)
    : shared_(std::make_unique<shared>(base, base_ctx, learn, eval, static_cast<int>(ranks.size()), spin)) {
  CBG_EXPECTS(!base_ctx.is_cpu() && learn.ranks() == static_cast<int>(ranks.size()), status::internal,
              "sharded feature combinations: the ranks do not match the row split");
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    enable_peer_access(base_ctx.device(), ranks[k]->device());
    enable_peer_access(ranks[k]->device(), base_ctx.device());
    views_.push_back(std::make_unique<view>(*shared_, static_cast<int>(k), *ranks[k]));
  }
}

sharded_extension::~sharded_extension() {
  views_.clear();
  scoped_device on(shared_->ctx_.device());
  shared_.reset();
}

train::search_extension& sharded_extension::rank(int k) { return *views_.at(static_cast<std::size_t>(k)); }

void sharded_extension::follow_base() {
  for (auto& v : views_) v->follow_base();
}

void sharded_extension::cancel(const std::string& why) noexcept {
  shared_->levels_.cancel(why);
  shared_->commits_.cancel(why);
}

}  // namespace cbg::dist
