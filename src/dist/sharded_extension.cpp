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
#include "cbg/runtime/stream.hpp"
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

// A commit's answer: the feature id, its values on every eval row (pool's device; null: none), and
// whether this commit made the feature (else an earlier one did: its values were copied then).
struct commit_answer {
  std::int32_t feature = -1;
  const float* eval = nullptr;
  bool fresh = false;
};

// The bytes a rank's bounce blocks hold: what crosses between the devices per copy.
constexpr std::size_t bounce_bytes = std::size_t{16} << 20;

// An event of `device`.
event event_on(int device) {
  scoped_device on(device);
  return event();
}

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
        commits_(ranks, "commits", spin),
        reduces_(ranks, "column reductions", spin) {}

  train::search_extension& base_;
  const context& ctx_;  // the base's context (the learn pool's)
  row_split learn_, eval_;
  std::vector<view*> views_;  // every rank's
  // The base's computations: at rendezvous of all ranks (rank_calls.hpp), so never two at once.
  rank_calls<std::vector<train::split>, level_answer> levels_;
  rank_calls<std::size_t, commit_answer> commits_;
  rank_calls<int, int> reduces_;  // the ranks meet before all-reducing a level's column histograms
  // The base's host lookups (borders, counts) from several ranks at once; held across no wait. They
  // never overlap a computation: a rank asks after its search, whose calls every rank has made.
  std::mutex reads_;
};

// A rank's view. It creates and frees nothing on a device during the training outside a rendezvous
// (where every rank waits on the host, not in the driver): its events and its two blocks of peer
// memory are made with it (on the main thread, before any collective), its buffers for a level's
// columns and for a committed feature's eval values by the rendezvous' computation. Creating or
// freeing a CUDA object takes a driver lock that a rank blocked in a synchronous copy holds; if that
// rank waits for a collective this one has yet to queue, neither returns (a cudaEventCreate here
// hung the previous version). Between rendezvous a view only enqueues copies and records events.
class sharded_extension::view final : public train::search_extension {
 public:
  view(shared& s, int rank, const context& ctx)
      : s_(s),
        rank_(rank),
        ctx_(ctx),
        learn_count_(static_cast<std::size_t>(s.learn_.counts[static_cast<std::size_t>(rank)])),
        eval_count_(static_cast<std::size_t>(rank) < s.eval_.counts.size()
                        ? static_cast<std::size_t>(s.eval_.counts[static_cast<std::size_t>(rank)])
                        : 0),
        from_mark_(event_on(s.ctx_.device())),
        to_mark_(event_on(ctx.device())) {
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
      level_answer out;
      {
        scoped_device on(s_.ctx_.device());
        out.columns = s_.base_.candidates(chosen, float_border);
        if (s_.base_.column_weights && !out.columns.empty()) {
          out.weights = s_.base_.column_weights(chosen, out.columns.size());
        }
      }
      for (view* v : s_.views_) v->reserve_columns(out.columns.size());
      return out;
    });
    weights_ = a.weights;
    // This rank's rows of the columns, column after column in landing_. Enqueued now, before this
    // rank queues another collective; the base replaces the columns only at the next level's
    // rendezvous, after every rank's copies here (in the base stream's order).
    const std::int64_t first = s_.learn_.first(rank_);
    const std::size_t count = learn_count_;
    std::vector<column> mine(a.columns.size());
    if (a.columns.empty() || count == 0) return mine;
    transfer(landing_.data(), a.columns.size() * count, [&](std::size_t at, std::size_t n, std::uint8_t* into) {
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

  // The ranks meet before the sum of the level's column histograms: by then each has made its
  // buffers for the level, so none allocates while another waits for the sum.
  void before_column_reduce(int level) override {
    (void)s_.reduces_.call(rank_, level, [] { return 0; });
  }

  // The won column's feature id; this rank's eval rows of its values are copied now (right after
  // the rendezvous, like the columns), so that applying a tree later waits for nothing.
  std::int32_t commit(std::size_t k) override {
    const commit_answer a = s_.commits_.call(rank_, k, [&] {
      commit_answer out;
      {
        scoped_device on(s_.ctx_.device());
        out.feature = s_.base_.commit(k);
        out.eval = s_.base_.eval_values(out.feature);
      }
      out.fresh = s_.views_.front()->eval_.count(out.feature) == 0;
      if (out.fresh) {
        for (view* v : s_.views_) v->reserve_eval(out.feature, out.eval != nullptr);
      }
      return out;
    });
    device_buffer<float>& mine = eval_.at(a.feature);
    if (!a.fresh || mine.size() == 0) return a.feature;
    const auto* from = reinterpret_cast<const std::uint8_t*>(a.eval + s_.eval_.first(rank_));
    transfer(reinterpret_cast<std::uint8_t*>(mine.data()), eval_count_ * sizeof(float),
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

  // This rank's eval rows of a committed feature's values (copied at its commit).
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
  // At a rendezvous (any rank's thread): room for `columns` columns of this rank's rows.
  void reserve_columns(std::size_t columns) {
    const std::size_t bytes = columns * learn_count_;
    if (landing_.size() >= bytes) return;
    scoped_device on(ctx_.device());
    landing_ = device_buffer<std::uint8_t>(std::max(bytes, landing_.size() + landing_.size() / 2), ctx_.stream(),
                                           ctx_.resource());
  }
  // At a rendezvous (any rank's thread): the buffer of a new feature's eval values on this rank's
  // rows (empty: none).
  void reserve_eval(std::int32_t feature, bool has_values) {
    device_buffer<float>& mine = eval_[feature];
    if (!has_values || eval_count_ == 0) return;
    scoped_device on(ctx_.device());
    mine = device_buffer<float>(eval_count_, ctx_.stream(), ctx_.resource());
  }

  // `total` bytes into `to` (this rank's device), in pieces of the bounce blocks' size: gather(at, n,
  // into) enqueues bytes [at, at + n) into `into` (the base's device) on the base's stream; each
  // piece is then copied to this rank's block (peer_copy orders it after this rank's work so far
  // and this rank's later work after it, through the view's events) and from there to its place.
  // Only enqueues: the ranks call it right after a rendezvous, when each has queued the same
  // collectives, so the base stream's waits for the ranks' streams all end.
  template <class Gather>
  void transfer(std::uint8_t* to, std::size_t total, Gather&& gather) {
    for (std::size_t at = 0; at < total; at += bounce_bytes) {
      const std::size_t n = std::min(bounce_bytes, total - at);
      {
        scoped_device on(s_.ctx_.device());
        gather(at, n, bounce_from_.data());
      }
      peer_copy(bounce_to_.data(), ctx_, bounce_from_.data(), s_.ctx_, n, to_mark_.get(), from_mark_.get());
      scoped_device on(ctx_.device());
      copy_bytes(to + at, memory_kind::device, bounce_to_.data(), memory_kind::device, n, ctx_.stream(), ctx_.copies(),
                 ctx_.rules(), CBG_COPY_SITE("combination columns"));
    }
  }

  shared& s_;
  int rank_;
  const context& ctx_;  // the rank's
  std::size_t learn_count_, eval_count_;
  event from_mark_;                                    // on the base's device
  event to_mark_;                                      // on this rank's
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
    shared_->views_.push_back(views_.back().get());
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
  shared_->reduces_.cancel(why);
}

}  // namespace cbg::dist
