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
#include "cbg/memory/resource.hpp"
#include "cbg/runtime/device.hpp"
#include "src/dist/rank_calls.hpp"

namespace cbg::dist {

namespace {

// A level's answer: the base's columns (pool's device, every learn row) and their model-size
// multipliers (empty: none).
struct level_answer {
  std::vector<train::search_extension::column> columns;
  std::vector<float> weights;
};

// Grows `b` to at least `bytes` (by half again at least: a training's levels reallocate rarely),
// from `pool` on `stream`. The pools are stream-ordered (make_peer_pool_resource): a rank's thread
// allocates and frees while other ranks' collectives are in flight, where cudaMalloc or cudaFree
// could wait for a device whose collective waits for this thread.
void ensure_bytes(device_buffer<std::uint8_t>& b, std::size_t bytes,
                  const std::shared_ptr<device_memory_resource>& pool, cudaStream_t stream) {
  if (b.size() >= bytes) return;
  const std::size_t want = std::max(bytes, b.size() + b.size() / 2);
  b = device_buffer<std::uint8_t>(want, stream, pool);
}

std::vector<int> devices_of(const std::vector<const context*>& ranks) {
  std::vector<int> out;
  for (const context* c : ranks) out.push_back(c->device());
  return out;
}

}  // namespace

// The members are the views' (this file's) only.
class sharded_extension::shared {
 public:
  shared(train::search_extension& base, const context& ctx, const row_split& learn, const row_split& eval,
         const std::vector<int>& rank_devices)
      : base_(base),
        ctx_(ctx),
        pool_(make_peer_pool_resource(ctx.device(), rank_devices)),
        learn_(learn),
        eval_(eval),
        levels_(static_cast<int>(rank_devices.size()), "candidate columns", true),
        commits_(static_cast<int>(rank_devices.size()), "commits", false),
        staging_(rank_devices.size()) {}

  train::search_extension& base_;
  const context& ctx_;                            // the base's context (the learn pool's)
  std::shared_ptr<device_memory_resource> pool_;  // on its device, reachable from the ranks' devices
  row_split learn_, eval_;
  std::mutex mutex_;  // every use of the base and of what follows
  rank_calls<std::vector<train::split>, level_answer> levels_;
  rank_calls<std::size_t, std::int32_t> commits_;
  std::vector<device_buffer<std::uint8_t>> staging_;  // per rank: its rows of the level's columns (base's device)
};

class sharded_extension::view final : public train::search_extension {
 public:
  view(shared& s, int rank, const context& ctx)
      : s_(s), rank_(rank), ctx_(ctx), pool_(make_peer_pool_resource(ctx.device(), {s.ctx_.device()})) {}

  ~view() override {
    // The buffers were allocated on this rank's device.
    scoped_device on(ctx_.device());
    eval_.clear();
    landing_ = device_buffer<std::uint8_t>();
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
    // This rank's rows of the columns, before another rank can have the base replace them (the
    // lock; rank_calls computes the next level only once every rank has taken this one).
    const std::int64_t first = s_.learn_.first(rank_);
    const auto count = static_cast<std::size_t>(s_.learn_.counts[static_cast<std::size_t>(rank_)]);
    const std::size_t bytes = a.columns.size() * count;
    std::vector<column> mine(a.columns.size());
    if (bytes == 0) return mine;
    device_buffer<std::uint8_t>& staging = s_.staging_[static_cast<std::size_t>(rank_)];
    {
      scoped_device on(s_.ctx_.device());
      ensure_bytes(staging, bytes, s_.pool_, s_.ctx_.stream());
      for (std::size_t k = 0; k < a.columns.size(); ++k) {
        copy_bytes(staging.data() + k * count, memory_kind::device, a.columns[k].bins + first, memory_kind::device,
                   count, s_.ctx_.stream(), s_.ctx_.copies(), s_.ctx_.rules(), CBG_COPY_SITE("combination columns"));
      }
    }
    {
      scoped_device on(ctx_.device());
      ensure_bytes(landing_, bytes, pool_, ctx_.stream());
    }
    // Ordered after this rank's earlier reads of landing_ and before its search reads it.
    peer_copy(landing_.data(), ctx_, staging.data(), s_.ctx_, bytes);
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
    if (const auto it = eval_.find(feature); it != eval_.end())
      return it->second.size() > 0 ? it->second.data() : nullptr;
    const auto r = static_cast<std::size_t>(rank_);
    const std::int64_t count = r < s_.eval_.counts.size() ? s_.eval_.counts[r] : 0;
    const float* all = nullptr;
    {
      scoped_device on(s_.ctx_.device());
      all = s_.base_.eval_values(feature);
    }
    device_buffer<float>& mine = eval_[feature];
    if (all == nullptr || count == 0) return nullptr;
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(float);
    {
      scoped_device on(ctx_.device());
      mine = device_buffer<float>(static_cast<std::size_t>(count), ctx_.stream(), pool_);
    }
    scoped_device on(s_.ctx_.device());
    device_buffer<std::uint8_t> staging(bytes, s_.ctx_.stream(), s_.pool_);
    copy_bytes(staging.data(), memory_kind::device, all + s_.eval_.first(rank_), memory_kind::device, bytes,
               s_.ctx_.stream(), s_.ctx_.copies(), s_.ctx_.rules(), CBG_COPY_SITE("combination eval values"));
    peer_copy(mine.data(), ctx_, staging.data(), s_.ctx_, bytes);
    return mine.data();  // staging is freed in the base's stream order, after the copy
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
  shared& s_;
  int rank_;
  const context& ctx_;                                         // the rank's
  std::shared_ptr<device_memory_resource> pool_;               // on its device, reachable from the base's
  device_buffer<std::uint8_t> landing_;                        // this rank's rows of the level's columns
  std::vector<float> weights_;                                 // the level's model-size multipliers
  mutable std::map<std::int32_t, device_buffer<float>> eval_;  // committed features' eval values (its rows)
};

sharded_extension::sharded_extension(train::search_extension& base, const context& base_ctx, const row_split& learn,
                                     const row_split& eval, const std::vector<const context*>& ranks)
    : shared_(std::make_unique<shared>(base, base_ctx, learn, eval, devices_of(ranks))) {
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
