// SPDX-License-Identifier: Apache-2.0
// The search extension's rank views in a one-process sharded training (sharded_extension.hpp).
#include "src/dist/sharded_extension.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

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

// The bytes a rank's bounce blocks hold: what crosses between the devices per copy.
constexpr std::size_t bounce_bytes = std::size_t{16} << 20;

}  // namespace

// The members are the views' (this file's) only.
class sharded_extension::shared {
 public:
  shared(train::search_extension& base, const context& ctx, const row_split& learn, const row_split& eval, int ranks)
      : base_(base),
        ctx_(ctx),
        learn_(learn),
        eval_(eval),
        levels_(ranks, "candidate columns", true),
        commits_(ranks, "commits", false) {}

  train::search_extension& base_;
  const context& ctx_;  // the base's context (the learn pool's)
  row_split learn_, eval_;
  std::mutex mutex_;  // every use of the base and of what follows
  rank_calls<std::vector<train::split>, level_answer> levels_;
  rank_calls<std::size_t, std::int32_t> commits_;
};

// A rank's view. What it copies crosses between the devices through two blocks of peer memory made
// with the view (on the main thread, before any collective): during the training a rank's thread
// allocates only from the contexts' stream-ordered pools, on its own device or the base's. A
// cudaMalloc or cudaFree there could wait for a device whose collective waits for this thread.
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
    std::lock_guard<std::mutex> lock(s_.mutex_);
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
    // This rank's rows of the columns, column after column in landing_, copied before another rank
    // can have the base replace them (the lock; rank_calls computes the next level only once every
    // rank has taken this one).
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

  std::int32_t commit(std::size_t k) override {
    std::lock_guard<std::mutex> lock(s_.mutex_);
    return s_.commits_.call(rank_, k, [&] {
      scoped_device on(s_.ctx_.device());
      return s_.base_.commit(k);
    });
  }

  [[nodiscard]] float border(std::int32_t feature, std::int32_t bin) const override {
    std::lock_guard<std::mutex> lock(s_.mutex_);
    return s_.base_.border(feature, bin);
  }

  // This rank's eval rows of a committed feature's values, copied once.
  [[nodiscard]] const float* eval_values(std::int32_t feature) const override {
    std::lock_guard<std::mutex> lock(s_.mutex_);
    if (const auto it = eval_.find(feature); it != eval_.end()) {
      return it->second.size() > 0 ? it->second.data() : nullptr;
    }
    const auto r = static_cast<std::size_t>(rank_);
    const std::int64_t count = r < s_.eval_.counts.size() ? s_.eval_.counts[r] : 0;
    const float* all = nullptr;
    {
      scoped_device on(s_.ctx_.device());
      all = s_.base_.eval_values(feature);
    }
    device_buffer<float>& mine = eval_[feature];
    if (all == nullptr || count == 0) return nullptr;
    {
      scoped_device on(ctx_.device());
      mine = device_buffer<float>(static_cast<std::size_t>(count), ctx_.stream(), ctx_.resource());
    }
    const auto* from = reinterpret_cast<const std::uint8_t*>(all + s_.eval_.first(rank_));
    transfer(reinterpret_cast<std::uint8_t*>(mine.data()), static_cast<std::size_t>(count) * sizeof(float),
             [&](std::size_t at, std::size_t n, std::uint8_t* into) {
               copy_bytes(into, memory_kind::device, from + at, memory_kind::device, n, s_.ctx_.stream(),
                          s_.ctx_.copies(), s_.ctx_.rules(), CBG_COPY_SITE("combination eval values"));
             });
    return mine.data();
  }

  [[nodiscard]] std::uint64_t column_unique_values(std::size_t k) const override {
    std::lock_guard<std::mutex> lock(s_.mutex_);
    return s_.base_.column_unique_values(k);
  }
  [[nodiscard]] const model::ctr_base* column_base(std::size_t k) const override {
    std::lock_guard<std::mutex> lock(s_.mutex_);
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
  // piece is then copied to this rank's block (peer_copy orders it after this rank's earlier work and
  // before its later) and from there to its place. Holds the lock (the bounce blocks are reused).
  template <class Gather>
  void transfer(std::uint8_t* to, std::size_t total, Gather&& gather) const {
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
  const context& ctx_;                                         // the rank's
  mutable device_buffer<std::uint8_t> bounce_from_;            // peer memory on the base's device
  mutable device_buffer<std::uint8_t> bounce_to_;              // peer memory on this rank's
  device_buffer<std::uint8_t> landing_;                        // this rank's rows of the level's columns
  std::vector<float> weights_;                                 // the level's model-size multipliers
  mutable std::map<std::int32_t, device_buffer<float>> eval_;  // committed features' eval values (its rows)
};

sharded_extension::sharded_extension(train::search_extension& base, const context& base_ctx, const row_split& learn,
                                     const row_split& eval, const std::vector<const context*>& ranks)
    : shared_(std::make_unique<shared>(base, base_ctx, learn, eval, static_cast<int>(ranks.size()))) {
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

}  // namespace cbg::dist
