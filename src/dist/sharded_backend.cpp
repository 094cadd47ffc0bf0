// SPDX-License-Identifier: Apache-2.0
// Sharded training (include/cbg/dist/train.hpp): rank setup, the fan-out of backend calls to one
// thread per rank, and the contexts' communicators.
#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cbg/tensor/dlpack.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/dist/border_sample.hpp"
#include "cbg/dist/rank.hpp"
#include "cbg/dist/shard.hpp"
#include "cbg/dist/train.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/train/boosting_math.hpp"
#include "cbg/train/reduce_math.hpp"
#include "kernels/dist/gather.hpp"
#include "src/dist/all_rows.hpp"
#include "src/dist/rank_threads.hpp"
#include "src/dist/sharded_extension.hpp"

namespace cbg::dist {

namespace {

// ---- communicators attached to contexts ----------------------------------------------------------
struct attached {
  std::weak_ptr<context> ctx;
  communicator comm;
};
std::mutex registry_mutex;
std::map<const context*, attached>& registry() {
  static std::map<const context*, attached> r;
  return r;
}

// ---- what one rank holds ---------------------------------------------------------------------------
struct rank_state {
  std::shared_ptr<context> ctx;
  std::unique_ptr<shard_pool> learn, eval;
  quantize::device_quantized quantized;
  rank_inputs inputs;
  std::unique_ptr<train::boosting_backend> backend;
};

std::shared_ptr<context> rank_context(const context& base, int device) {
  context_options o;
  o.device = device;
  o.seed = base.seed();
  o.strict_no_d2h = base.rules().strict_no_d2h;
  o.profile = base.profiling();
  std::shared_ptr<context> ctx = context::create(o);
  set_policy(*ctx, base.policy());  // the ranks take the caller's implementation choices
  return ctx;
}

// The border sample gathered from every rank (row order) followed by this rank's rows, as one pool
// of compact columns on this rank's device, for the borders of the whole set.
struct gathered_pool {
  std::vector<device_buffer<unsigned char>> columns;
  std::vector<std::int64_t> shape, strides;
  std::vector<DLTensor> dl;
  std::optional<pool> p;
};

// A device set's communicators, kept on a context between trainings (context::keep).
struct local_reducers {
  std::vector<std::unique_ptr<reducer>> reducers;
};

class sharded_backend final : public train::boosting_backend {
 public:
  sharded_backend(const train::backend_inputs& in, train::search_extension* extension) {
    const steady::time_point constructed = steady::now();
    if (in.learn->ctx()->profiling()) {
      profiled_ = in.learn->ctx();
      profile_ = std::make_unique<dist_profile>(profiled_->stage_profiler());
    }
    const pool& learn = *in.learn;
    const std::shared_ptr<context>& base = learn.ctx();
    const std::optional<communicator> comm = communicator_of(*base);
    const std::vector<int> devices = parse_devices(in.devices, visible_device_count());
    if (comm.has_value()) {
      CBG_EXPECTS(
          devices.size() <= 1 && (devices.empty() || devices[0] == base->device()), status::invalid_argument,
          fmt::format("devices '{}' with a caller's communicator: each process trains on its context's device ({})",
                      in.devices, base->device()));
      setup_communicator(in, *comm);
    } else {
      setup_local(in, devices);
    }
    const std::chrono::microseconds spin(
        std::clamp<std::int64_t>(in.learn->ctx()->policy().dist_spin_us, 0, 10'000'000));
    // One process: the extension is the pool device's over all learn rows, each rank reads its rows
    // through a view. Several processes: the trainer's extension is this rank's already
    // (src/dist/all_rows.hpp).
    if (extension != nullptr && !comm.has_value()) {
      std::vector<const context*> contexts;
      for (const auto& r : ranks_) contexts.push_back(r->ctx.get());
      extension_ = std::make_unique<sharded_extension>(*extension, *base, learn_split_, eval_split_, contexts, spin);
    }
    std::vector<reducer*> reds;
    for (auto& r : reducers_) reds.push_back(r.get());
    std::vector<int> devs;
    for (auto& r : ranks_) devs.push_back(r->ctx->device());
    threads_ = std::make_unique<rank_threads>(devs, reds, profile_.get(), spin);
    // A failed rank never reaches the extension's next rendezvous: the others leave it.
    if (extension_) threads_->on_failure([ext = extension_.get()](const std::string& why) { ext->cancel(why); });
    threads_->run("setup", [&](int k) {
      rank_state& r = *ranks_[static_cast<std::size_t>(k)];
      train::backend_inputs bi;
      bi.learn = r.learn ? &*r.learn->p : in.learn;
      bi.eval = r.eval ? &*r.eval->p : in.eval;
      bi.quantize = in.quantize;
      bi.rank = &r.inputs;
      r.backend = train::make_device_backend(bi, extension_ ? &extension_->rank(k) : extension);
    });
    features_ = ranks_[0]->backend->features();
    modes_ = ranks_[0]->backend->nan_modes();
    if (profile_) profile_->phase("construct", constructed, steady::now());
  }

  ~sharded_backend() override {
    if (!threads_) return;
    const steady::time_point t0 = steady::now();
    std::vector<dist_profile::rank_totals> totals;
    if (profile_) totals = rank_totals();
    pending_apply_.reset();  // nothing reads the approx after the last call
    bool healthy = true;
    try {
      threads_->run("teardown", [&](int k) { ranks_[static_cast<std::size_t>(k)]->backend.reset(); });
      healthy = !threads_->broken();
    } catch (...) {
      healthy = false;  // a broken training: the backends are freed below, on this thread
    }
    threads_.reset();
    for (auto& r : ranks_) r->backend.reset();
    extension_.reset();  // its buffers on the ranks' devices, before their contexts
    const steady::time_point t1 = steady::now();
    if (profiled_ != nullptr) {  // the stages the ranks timed on their own contexts
      for (std::size_t r = 0; r < ranks_.size(); ++r) {
        const context& rc = *ranks_[r]->ctx;
        if (&rc != profiled_.get()) profiled_->stage_profiler().merge(rc.stage_profiler(), fmt::format("rank {}: ", r));
      }
    }
    ranks_.clear();  // shards, rank contexts
    const steady::time_point t2 = steady::now();
    // Our own communicators go back to the learn pool's context for the next training on these
    // devices (making and destroying them costs more than a hundred iterations), unless a rank failed.
    if (healthy && kept_on_ != nullptr && !kept_key_.empty()) {
      kept_on_->keep(kept_key_, std::make_shared<local_reducers>(std::move(reducers_)));
    }
    reducers_.clear();  // communicators (a broken training's, or a caller's borrowed ones)
    if (profile_) {
      const steady::time_point t3 = steady::now();
      profile_->phase("destruct: backends", t0, t1);
      profile_->phase("destruct: shards and contexts", t1, t2);
      profile_->phase("destruct: communicators", t2, t3);
      profile_->finish(totals);
    }
  }
  sharded_backend(const sharded_backend&) = delete;
  sharded_backend& operator=(const sharded_backend&) = delete;

  [[nodiscard]] std::int64_t rows() const override { return learn_split_.total(); }
  [[nodiscard]] std::int64_t eval_rows() const override { return eval_split_.total(); }
  [[nodiscard]] int features() const override { return features_; }
  [[nodiscard]] const std::vector<std::uint8_t>& nan_modes() const override { return modes_; }

  std::vector<float> split_borders(const std::vector<train::split>& splits) override {
    // search() read them already (the trainer asks for the borders of the tree it just searched).
    if (borders_valid_ && splits == borders_splits_) return borders_;
    return each<std::vector<float>>("split_borders",
                                    [&](train::boosting_backend& b) { return b.split_borders(splits); });
  }
  train::label_facts labels(bool eval) override {
    return each<train::label_facts>("labels", [&](train::boosting_backend& b) { return b.labels(eval); });
  }
  void prepare_targets(const train::target_rule& rule) override {
    each<int>("prepare_targets", [&](train::boosting_backend& b) {
      b.prepare_targets(rule);
      return 0;
    });
  }
  void target_moments(double out[4]) override {
    const auto m = each<std::array<double, 4>>("target_moments", [&](train::boosting_backend& b) {
      std::array<double, 4> r{};
      b.target_moments(r.data());
      return r;
    });
    for (int k = 0; k < 4; ++k) out[k] = m[static_cast<std::size_t>(k)];
  }
  double weighted_quantile(double alpha) override {
    return each<double>("weighted_quantile", [&](train::boosting_backend& b) { return b.weighted_quantile(alpha); });
  }
  void start(const train::loss_spec& loss, const std::vector<double>& bias) override {
    each<int>("start", [&](train::boosting_backend& b) {
      b.start(loss, bias);
      return 0;
    });
  }
  train::weak_result weak_target(const train::weak_request& r) override {
    if (r.bootstrap.kind == train::bootstrap_kind::mvs) {
      // MVS draws per block of mvs_block_rows rows: exact only where every rank starts at a block.
      for (int k = 0; k < static_cast<int>(learn_split_.counts.size()); ++k) {
        CBG_EXPECTS(learn_split_.first(k) % train::mvs_block_rows == 0, status::unsupported,
                    fmt::format("bootstrap_type MVS with several devices needs every rank but the last to hold a "
                                "multiple of {} learn rows (rank {} starts at row {}); use another bootstrap_type "
                                "or split the rows so",
                                train::mvs_block_rows, k, learn_split_.first(k)));
      }
    }
    return each<train::weak_result>("weak_target", [&](train::boosting_backend& b) { return b.weak_target(r); });
  }
  train::tree_structure search(const train::tree_search_params& p, std::vector<double> noise,
                               std::vector<float> feature_weight) override {
    std::vector<train::tree_structure> out(ranks_.size());
    std::vector<std::vector<float>> borders(ranks_.size());
    borders_valid_ = false;
    if (extension_) extension_->follow_base();  // the noise and weights the trainer set for this search
    dispatch("search", [&](int k) {
      const auto r = static_cast<std::size_t>(k);
      train::boosting_backend& b = *ranks_[r]->backend;
      out[r] = b.search(p, noise, feature_weight);
      // The borders of the splits now rather than in a hand-off of their own (the trainer asks next).
      borders[r] = b.split_borders(out[r].splits);
    });
    // Every rank reduced the same histograms, so they must agree; a difference is a bug, not noise.
    for (std::size_t r = 0; r < out.size(); ++r) {
      CBG_EXPECTS(out[r] == out[0] && borders[r] == borders[0], status::internal,
                  "sharded training: the ranks found different trees");
    }
    borders_splits_ = out[0].splits;
    borders_ = std::move(borders[0]);
    borders_valid_ = true;
    return std::move(out[0]);
  }
  train::point_result at_point(const train::point_request& r) override {
    return each<train::point_result>("at_point", [&](train::boosting_backend& b) { return b.at_point(r); });
  }
  train::leaf_result estimate_leaves(const train::leaf_request& r) override {
    // Every rank runs the device-side leaf search on its rows; the passes' sums, maxima and values
    // are reduced over the ranks inside, so the results must agree.
    std::vector<train::leaf_result> out(ranks_.size());
    dispatch("estimate_leaves", [&](int k) {
      out[static_cast<std::size_t>(k)] = ranks_[static_cast<std::size_t>(k)]->backend->estimate_leaves(r);
    });
    for (const auto& l : out) {
      CBG_EXPECTS(l.point == out[0].point && l.leaf_weight == out[0].leaf_weight, status::internal,
                  "sharded training: the ranks estimated different leaf values");
    }
    return std::move(out[0]);
  }
  train::leaf_result exact_leaves(int, double, const train::fixed_scale&) override {
    CBG_FAIL(status::unsupported,
             "leaf_estimation_method Exact is not supported with several devices (per-leaf quantiles over all "
             "ranks' rows); use Newton or Gradient, or train on one device");
  }
  void apply(const std::vector<train::value_split>& splits, const std::vector<double>& delta) override {
    // Nothing comes back: the ranks do it at the start of the next call's hand-off (one hand-off per
    // iteration fewer). A failure is reported by that call.
    if (pending_apply_.has_value()) flush();
    pending_apply_.emplace(deferred_apply{splits, delta});
  }
  void metric_sums(const train::metric_spec& m, bool eval, double out[train::metric_terms]) override {
    const auto s = each<std::array<double, train::metric_terms>>("metric_sums", [&](train::boosting_backend& b) {
      std::array<double, train::metric_terms> r{};
      b.metric_sums(m, eval, r.data());
      return r;
    });
    for (int k = 0; k < train::metric_terms; ++k) out[k] = s[static_cast<std::size_t>(k)];
  }
  double auc(bool eval) override {
    return each<double>("auc", [&](train::boosting_backend& b) { return b.auc(eval); });
  }

 private:
  struct deferred_apply {
    std::vector<train::value_split> splits;
    std::vector<double> delta;
  };

  // Runs f(rank) on every rank's thread, after the apply the trainer left pending (if any).
  void dispatch(const char* name, const std::function<void(int)>& f) {
    if (!pending_apply_.has_value()) {
      threads_->run(name, f);
      return;
    }
    const deferred_apply a = std::move(*pending_apply_);
    pending_apply_.reset();
    threads_->run(name, [&](int k) {
      ranks_[static_cast<std::size_t>(k)]->backend->apply(a.splits, a.delta);
      f(k);
    });
  }
  void flush() {
    dispatch("apply", [](int) {});
  }

  // Runs f on every rank's backend (each on its thread); every rank computes the same answer:
  // rank 0's is returned.
  template <class R, class F>
  R each(const char* name, F&& f) {
    std::vector<R> out(ranks_.size());
    dispatch(name, [&](int k) { out[static_cast<std::size_t>(k)] = f(*ranks_[static_cast<std::size_t>(k)]->backend); });
    return std::move(out[0]);
  }

  [[nodiscard]] std::vector<dist_profile::rank_totals> rank_totals() const {
    std::vector<dist_profile::rank_totals> totals(ranks_.size());
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      const std::size_t q = std::min(r, reducers_.size() - 1);
      reducer::counters c = reducers_[q]->enqueued();
      if (q < counters_at_start_.size()) {  // kept communicators count earlier trainings' collectives too
        c.calls -= counters_at_start_[q].calls;
        c.host_ms -= counters_at_start_[q].host_ms;
      }
      totals[r].collectives = c.calls;
      totals[r].collective_host_ms = c.host_ms;
      totals[r].d2h_copies = ranks_[r]->ctx->copies().totals().calls_in(copy_direction::d2h);
    }
    return totals;
  }

  void setup_local(const train::backend_inputs& in, const std::vector<int>& devices) {
    const pool& learn = *in.learn;
    const context& base = *learn.ctx();
    const int n = static_cast<int>(devices.size());
    const steady::time_point t0 = steady::now();
    if (n > 1) {
      kept_key_ = fmt::format("nccl communicators of devices {}", fmt::join(devices, ","));
      kept_on_ = learn.ctx();
      if (std::shared_ptr<void> kept = kept_on_->take(kept_key_)) {
        reducers_ = std::move(std::static_pointer_cast<local_reducers>(kept)->reducers);
      } else {
        reducers_ = make_local_reducers(devices);
      }
      for (const auto& red : reducers_) counters_at_start_.push_back(red->enqueued());
    } else {
      reducers_.push_back(std::make_unique<solo_reducer>());
    }
    if (profile_) profile_->phase("construct: communicators", t0, steady::now());
    // Blocks of the ordered sums' tile and of MVS's blocks (a multiple of it), so that both are exact.
    static_assert(train::mvs_block_rows % train::sum_tile == 0);
    learn_split_ = even_split(learn.num_rows(), n, train::mvs_block_rows);
    for (int k = 0; k < n; ++k) {
      CBG_EXPECTS(learn_split_.counts[static_cast<std::size_t>(k)] > 0, status::invalid_argument,
                  fmt::format("{} learn rows are too few for {} devices: shards are blocks of a multiple of {} rows "
                              "and every device needs one",
                              learn.num_rows(), n, train::mvs_block_rows));
    }
    if (in.eval != nullptr) eval_split_ = even_split(in.eval->num_rows(), n, train::sum_tile);
    // Borders once, from the whole learn set, on the pool's device (the dataset's quantization).
    const steady::time_point t1 = steady::now();
    CBG_EXPECTS(in.device_quantized != nullptr, status::internal, "the sharded backend takes a quantized learn set");
    const quantize::device_quantized full = std::move(*in.device_quantized);
    const steady::time_point t2 = steady::now();
    if (profile_) profile_->phase("construct: quantize", t1, t2);
    for (int k = 0; k < n; ++k) {
      auto r = std::make_unique<rank_state>();
      r->ctx = rank_context(base, devices[static_cast<std::size_t>(k)]);
      const std::int64_t first = learn_split_.first(k), count = learn_split_.counts[static_cast<std::size_t>(k)];
      r->quantized = slice_quantized(full, first, count, base, *r->ctx);
      r->learn = make_shard_pool(learn, first, count, r->ctx, false);
      if (in.eval != nullptr) {
        r->eval = make_shard_pool(*in.eval, eval_split_.first(k), eval_split_.counts[static_cast<std::size_t>(k)],
                                  r->ctx, true);
      }
      r->inputs.red = reducers_[static_cast<std::size_t>(k)].get();
      r->inputs.learn = learn_split_;
      r->inputs.eval = eval_split_;
      r->inputs.quantized = &r->quantized;
      ranks_.push_back(std::move(r));
    }
    if (in.eval == nullptr) {
      for (auto& r : ranks_) r->inputs.eval = row_split{std::vector<std::int64_t>(static_cast<std::size_t>(n), 0)};
    }
    if (profile_) profile_->phase("construct: contexts and shards", t2, steady::now());
  }

  void setup_communicator(const train::backend_inputs& in, const communicator& c);

  std::vector<std::unique_ptr<reducer>> reducers_;
  std::vector<reducer::counters> counters_at_start_;  // of kept communicators, for the profile
  std::shared_ptr<context> kept_on_;                  // where our communicators are kept after training
  std::string kept_key_;
  std::vector<std::unique_ptr<rank_state>> ranks_;
  std::unique_ptr<sharded_extension> extension_;  // feature combinations: the ranks' views of the trainer's
  std::shared_ptr<context> profiled_;             // the caller's context, when it profiles
  std::unique_ptr<dist_profile> profile_;         // its hand-offs' timings; before threads_, which uses it
  std::unique_ptr<rank_threads> threads_;
  std::optional<deferred_apply> pending_apply_;
  bool borders_valid_ = false;  // borders_ are those of borders_splits_ (the last search)
  std::vector<train::split> borders_splits_;
  std::vector<float> borders_;
  row_split learn_split_, eval_split_;
  int features_ = 0;
  std::vector<std::uint8_t> modes_;
  std::shared_ptr<gathered_pool> gathered_;
};

void sharded_backend::setup_communicator(const train::backend_inputs& in, const communicator& c) {
  const pool& learn = *in.learn;
  const std::shared_ptr<context>& base = learn.ctx();
  scoped_device on(base->device());
  reducers_.push_back(make_reducer(c, base->device()));
  reducer& red = *reducers_[0];
  const rank_row_counts counts =
      exchange_row_counts(red, *base, learn.num_rows(), in.eval != nullptr ? in.eval->num_rows() : -1);
  learn_split_ = counts.learn;
  eval_split_ = counts.eval;
  // The borders of the whole set from its border sample (border_sample.hpp): the sample's rows,
  // gathered from the ranks that hold them in row order, then this rank's rows, quantized together
  // so that the borders come from the sample alone; this rank keeps its rows' bins.
  const border_sample plan = plan_border_sample(learn_split_, c.rank, in.quantize,
                                                quantize::resolve_settings(learn, in.quantize), base->seed());
  auto g = std::make_shared<gathered_pool>();
  rank_inputs gather_in;
  gather_in.red = &red;
  gather_in.learn = learn_split_;
  gather_in.eval = eval_split_;
  rank_link link(gather_in, *base);
  const auto sample = static_cast<std::int64_t>(plan.size);
  const std::int64_t own = learn.num_rows();
  const std::int64_t total = sample + own;
  const auto held = static_cast<std::int64_t>(plan.local.size());
  device_buffer<std::int64_t> sample_rows(static_cast<std::size_t>(std::max<std::int64_t>(held, 1)), base->stream(),
                                          base->resource());
  if (held > 0) {
    copy_bytes(sample_rows.data(), memory_kind::device, plan.local.data(), memory_kind::host,
               plan.local.size() * sizeof(std::int64_t), base->stream(), base->copies(), base->rules(),
               CBG_COPY_SITE("border sample rows"));
  }
  device_buffer<unsigned char> picked(static_cast<std::size_t>(std::max<std::int64_t>(held, 1)) * 8, base->stream(),
                                      base->resource());
  const auto nf = static_cast<std::size_t>(learn.num_features());
  g->shape.assign(nf, total);
  g->strides.assign(nf, 1);
  g->dl.resize(nf);
  pool_inputs pi;
  for (std::size_t j = 0; j < nf; ++j) {
    const column_view& col = learn.features()[j];
    CBG_EXPECTS(col.memory != memory_kind::host, status::device,
                "training over several processes reads device, managed or pinned memory; a column is in "
                "pageable host memory");
    const std::size_t elem = size_of(col.type);
    g->columns.emplace_back(static_cast<std::size_t>(total) * elem, base->stream(), base->resource());
    unsigned char* into = g->columns.back().data();
    std::vector<std::size_t> bytes;
    for (const std::int64_t n : plan.counts) bytes.push_back(static_cast<std::size_t>(n) * elem);
    gather_rows(col.data, col.stride, sample_rows.data(), elem, held, picked.data(), base->stream());
    link.gather_blocks(picked.data(), static_cast<std::size_t>(held) * elem, bytes, into);
    gather(col.data, col.stride, elem, own, into + static_cast<std::size_t>(sample) * elem, base->stream());
    DLTensor& d = g->dl[j];
    d.data = into;
    d.device.device_type = kDLCUDA;
    d.device.device_id = base->device();
    d.ndim = 1;
    d.dtype = dlpack::type_of(col.type);
    d.shape = &g->shape[j];
    d.strides = &g->strides[j];
    tensor_ref r;
    r.kind = tensor_ref_kind::dltensor;
    r.ptr = &d;
    pi.columns.push_back(r);
    if (learn.is_categorical(static_cast<std::int64_t>(j))) pi.cat_features.push_back(static_cast<std::int32_t>(j));
  }
  g->p.emplace(pool::build(base, std::move(pi)));
  const quantize::device_quantized full =
      quantize::quantize_device(*g->p, sample_first_options(in.quantize, plan.size));
  red.check_live();  // the sample's gathers completed (not aborted by a timeout)
  auto r = std::make_unique<rank_state>();
  r->ctx = base;
  r->quantized = slice_quantized(full, sample, own, *base, *base);
  r->inputs.red = &red;
  r->inputs.learn = learn_split_;
  r->inputs.eval = eval_split_;
  r->inputs.quantized = &r->quantized;
  ranks_.push_back(std::move(r));
  // g (the sample and this rank's rows) is freed here, ordered after the quantization on the stream.
}

}  // namespace

bool wants_sharding(const train::backend_inputs& in) {
  const context& ctx = *in.learn->ctx();
  if (communicator_of(ctx).has_value()) return true;
  if (in.devices.empty()) return false;
  const std::vector<int> d = parse_devices(in.devices, visible_device_count());
  return !(d.empty() || (d.size() == 1 && d[0] == ctx.device()));
}

std::unique_ptr<train::boosting_backend> make_sharded_backend(const train::backend_inputs& in,
                                                              train::search_extension* extension) {
  return std::make_unique<sharded_backend>(in, extension);
}

void attach_communicator(const std::shared_ptr<context>& ctx, const communicator& c) {
  CBG_EXPECTS(ctx != nullptr, status::null_pointer, "attach_communicator: no context");
  CBG_EXPECTS(c.size >= 1 && c.rank >= 0 && c.rank < c.size, status::invalid_argument,
              fmt::format("communicator rank {} of size {}: expected 0 <= rank < size", c.rank, c.size));
  CBG_EXPECTS(c.comm != nullptr, status::null_pointer, "the NCCL communicator is NULL");
  CBG_EXPECTS(!ctx->is_cpu(), status::invalid_argument, "a communicator needs a GPU context");
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto& r = registry();
  for (auto it = r.begin(); it != r.end();) it = it->second.ctx.expired() ? r.erase(it) : std::next(it);
  r[ctx.get()] = attached{ctx, c};
}

std::optional<communicator> communicator_of(const context& ctx) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto& r = registry();
  const auto it = r.find(&ctx);
  if (it == r.end()) return std::nullopt;
  const std::shared_ptr<context> live = it->second.ctx.lock();
  if (live.get() != &ctx) return std::nullopt;
  return it->second.comm;
}

}  // namespace cbg::dist
