// SPDX-License-Identifier: Apache-2.0
// The GPU boosting backend (boosting.hpp): the host orchestration of the boosting loop's data passes,
// whose kernels and launchers are kernels/train/ (boosting_launch.hpp). Everything stays on the
// context's stream; only scalars, per-leaf sums (leaves x channels) and per-split border values come
// back to the host. Plain C++ (the CUDA runtime API and the launchers): no device code here.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/metric_tables.hpp"
#include "kernels/train/search_tuning.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/column_view.hpp"
#include "cbg/dist/rank.hpp"
#include "cbg/dist/train.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/profiler.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/boosting_math.hpp"
#include "cbg/train/search_extension.hpp"
#include "src/train/boosting_common.hpp"

namespace cbg::train {

namespace {

using launch::eval_tree;
using launch::grid_of;
using launch::key_value;
using launch::label_facts_dev;
using launch::max_fold_ranks;
using launch::pass_fold;
using launch::pass_pack;
using launch::point_args;
using launch::rows_view;
using launch::start_args;
using launch::tiles_of;
using launch::weak_args;

// One device buffer holds everything a pass hands back, so that it comes back in one copy:
// ordered sums (up to the weak pass's two and a metric's terms), channel maxima, then per-leaf
// fixed-point sums.
constexpr std::size_t result_sums_at = 0;
constexpr std::size_t result_max_at = launch::weak_sums_with_metric * sizeof(double);
constexpr std::size_t result_leaf_at = (result_max_at + max_channels * sizeof(unsigned) + 63) / 64 * 64;

// When the context profiles: the device time of each leaf pass's stages (point kernel; the exchange:
// collectives, folds and the value's tile sums; the decision), from events recorded between them
// (a stage_range per stage would wait for the stream after every pass, which the batching avoids).
class pass_clock {
 public:
  explicit pass_clock(bool on) : on_(on) {}
  ~pass_clock() {
    for (cudaEvent_t e : events_) CBG_ASSERT_CUDA_SUCCESS(cudaEventDestroy(e));
  }
  pass_clock(const pass_clock&) = delete;
  pass_clock& operator=(const pass_clock&) = delete;
  // Mark i of a batch of passes: 0 before the first, 3k + 1, 3k + 2, 3k + 3 after pass k's stages.
  void mark(std::size_t i, cudaStream_t s) {
    if (!on_) return;
    while (events_.size() <= i) {
      cudaEvent_t e = nullptr;
      CBG_CUDA_TRY(cudaEventCreate(&e));
      events_.push_back(e);
    }
    CBG_CUDA_TRY(cudaEventRecord(events_[i], s));
  }
  // The stages of a batch of `passes` passes (after its marks) into the profile.
  void add(profiler& p, int passes) const {
    if (!on_ || passes <= 0) return;
    static const char* const names[3] = {"boosting.leaf_pass (device): point kernel",
                                         "boosting.leaf_pass (device): exchange",
                                         "boosting.leaf_pass (device): decide"};
    CBG_CUDA_TRY(cudaEventSynchronize(events_[static_cast<std::size_t>(3 * passes)]));
    for (int k = 0; k < passes; ++k) {
      for (int st = 0; st < 3; ++st) {
        float ms = 0.0f;
        const auto at = static_cast<std::size_t>(3 * k + st);
        CBG_CUDA_TRY(cudaEventElapsedTime(&ms, events_[at], events_[at + 1]));
        p.add(names[st], static_cast<double>(ms));
      }
    }
  }

 private:
  bool on_;
  std::vector<cudaEvent_t> events_;
};

// ---- the backend -------------------------------------------------------------------------------------
class device_backend final : public boosting_backend {
 public:
  explicit device_backend(const backend_inputs& in, search_extension* extension = nullptr)
      : ctx_(*in.learn->ctx()), learn_(*in.learn), eval_(in.eval), guard_(ctx_.device()), ext_(extension) {
    for (const pool* p : {in.learn, in.eval}) {
      if (p == nullptr) continue;
      // The learn features go through the quantizer, which stages pageable columns; the trainer
      // (src/train/trainer.cpp) stages the other pageable inputs before it makes this backend.
      for (const column_view& c : p->features()) {
        CBG_EXPECTS(p == in.learn || c.memory != memory_kind::host, status::device,
                    "the GPU trainer reads device, managed or pinned memory; an eval feature column is in "
                    "pageable host memory");
      }
      for (const auto* t : {&p->label(), &p->weight(), &p->baseline()}) {
        CBG_EXPECTS(!t->has_value() || (*t)->memory != memory_kind::host, status::device,
                    "the GPU trainer reads device, managed or pinned memory; a label, weight or baseline is in "
                    "pageable host memory");
      }
    }
    if (in.rank != nullptr) link_ = std::make_unique<dist::rank_link>(*in.rank, ctx_);
    if (in.rank != nullptr && in.rank->quantized != nullptr) {
      q_ = std::move(*in.rank->quantized);  // a shard: its rows, the whole set's borders
    } else {
      CBG_EXPECTS(in.device_quantized != nullptr, status::internal, "the GPU backend takes a quantized learn set");
      q_ = std::move(*in.device_quantized);  // the dataset's (dataset.hpp)
    }
    modes_.resize(static_cast<std::size_t>(q_.features));
    for (std::size_t at = 0; at < modes_.size(); at += strict_d2h_metadata_limit) {
      const std::size_t k = std::min(strict_d2h_metadata_limit, modes_.size() - at);
      d2h(modes_.data() + at, q_.mode.data() + at, k, "nan modes");
    }
    leaf_ = buffer<std::uint32_t>(static_cast<std::size_t>(q_.rows));
    weight_ = read_weights(learn_);
    if (eval_ != nullptr) eval_weight_ = read_weights(*eval_);
    scratch_a_ = buffer<double>(static_cast<std::size_t>(tiles_of(rows()) * metric_terms));
    scratch_b_ = buffer<double>(static_cast<std::size_t>(tiles_of(tiles_of(rows())) * metric_terms));
    result_ = buffer<unsigned char>(result_leaf_at);
    zero(result_.data(), result_.size());  // read back as whole records (see ensure)
  }

  [[nodiscard]] std::int64_t rows() const override { return q_.rows; }
  [[nodiscard]] std::int64_t eval_rows() const override { return eval_ == nullptr ? 0 : eval_->num_rows(); }
  [[nodiscard]] int features() const override { return static_cast<int>(q_.features); }
  [[nodiscard]] const std::vector<std::uint8_t>& nan_modes() const override { return modes_; }

  [[nodiscard]] std::vector<float> split_borders(const std::vector<split>& splits) override {
    const stage_range range(ctx_, "boosting.split_borders");
    std::vector<float> out(splits.size());
    if (splits.empty()) return out;
    // The pool's borders are fixed for the training: read once (metadata-sized pieces), so that a
    // tree's borders cost no device round trip (one wait for the stream per iteration fewer).
    if (host_borders_.empty()) {
      host_borders_.resize(q_.borders.size());
      for (std::size_t at = 0; at < host_borders_.size(); at += strict_d2h_metadata_limit / sizeof(float)) {
        d2h(host_borders_.data() + at, q_.borders.data() + at,
            std::min(strict_d2h_metadata_limit / sizeof(float), host_borders_.size() - at), "borders");
      }
    }
    for (std::size_t k = 0; k < splits.size(); ++k) {
      // A feature of the search extension (feature combinations): its border comes from it.
      out[k] = splits[k].feature < q_.features
                   ? host_borders_[static_cast<std::size_t>(splits[k].feature) * quantize::border_stride +
                                   static_cast<std::size_t>(splits[k].bin)]
                   : ext_->border(splits[k].feature, splits[k].bin);
    }
    return out;
  }

  label_facts labels(bool eval) override {
    const pool& p = eval ? *eval_ : learn_;
    CBG_EXPECTS(p.label().has_value(), status::bad_data, "the pool has no label");
    CBG_EXPECTS(
        pool::dims_of(p.label()) == 1, status::unsupported,
        "labels of " + std::to_string(pool::dims_of(p.label())) + " columns: the trainer takes one label column");
    device_buffer<label_facts_dev> d = buffer<label_facts_dev>(1);
    label_facts_dev init{~0ull, 0ull, 0u, 0u};
    h2d(d.data(), &init, 1, "label facts");
    launch::label_facts(column_of(*p.label(), 0), p.num_rows(), d.data(), stream());
    if (link_ != nullptr) {  // sharded: every rank's facts
      auto* k = reinterpret_cast<unsigned long long*>(d.data());
      link_->red().min_u64(k, 1, stream());
      link_->red().max_u64(k + 1, 1, stream());
      link_->red().max_u32(reinterpret_cast<unsigned*>(k + 2), 2, stream());
    }
    label_facts_dev h{};
    d2h(&h, d.data(), 1, "label facts");
    label_facts f;
    f.min = key_value(h.min_key);
    f.max = key_value(h.max_key);
    f.all_integer = h.non_integer == 0;
    f.constant = h.non_constant == 0 && (link_ == nullptr || h.min_key == h.max_key);
    return f;
  }

  void prepare_targets(const target_rule& rule) override {
    target_ = read_targets(learn_, rule, "learn");
    if (eval_ != nullptr) eval_target_ = read_targets(*eval_, rule, "eval");
  }

  void target_moments(double out[4]) override {
    zero(max_keys(), 1);
    const int tiles = tiles_of(rows());
    launch::target_moments(learn_view(), scratch_a_.data(), max_keys(), stream());
    finish_sums<3>(tiles);
    const std::vector<unsigned char> r = read_result(1, 0);
    std::memcpy(out, r.data() + result_sums_at, 3 * sizeof(double));
    unsigned key = 0;
    std::memcpy(&key, r.data() + result_max_at, sizeof(key));
    out[3] = float_of_key(key);
  }

  double weighted_quantile(double alpha) override {
    std::int64_t n = rows();
    const float* targets = target_.data();
    device_buffer<float> all_targets;
    if (link_ != nullptr) {  // sharded: the quantile of every rank's rows
      n = link_->total_rows(false);
      all_targets = buffer<float>(static_cast<std::size_t>(n));
      link_->gather_rows(target_.data(), sizeof(float), false, all_targets.data());
      targets = all_targets.data();
    }
    auto keys_out = buffer<float>(static_cast<std::size_t>(n));
    auto w_in = buffer<float>(static_cast<std::size_t>(n));
    auto w_out = buffer<float>(static_cast<std::size_t>(n));
    if (weight_.empty()) {
      fill_ones(w_in.data(), n);
    } else if (link_ != nullptr) {
      link_->gather_rows(weight_.data(), sizeof(float), false, w_in.data());
    } else {
      copy_d2d(w_in.data(), weight_.data(), n);
    }
    launch::sort_by_target(targets, keys_out.data(), w_in.data(), w_out.data(), n, stream(), ctx_.resource());
    double moments[4];
    target_moments(moments);
    const fixed_scale s = fixed_scale_for(moments[3], n);
    auto fixed = buffer<long long>(static_cast<std::size_t>(n));
    launch::cumulative_fixed_weights(w_out.data(), n, s, fixed.data(), stream(), ctx_.resource());
    long long total = 0;
    d2h(&total, fixed.data() + (n - 1), 1, "quantile total");
    auto first = buffer<unsigned long long>(1);
    const unsigned long long none = static_cast<unsigned long long>(n - 1);
    h2d(first.data(), &none, 1, "quantile index");
    launch::first_reaching(fixed.data(), n, s, alpha * from_fixed64(total, s), first.data(), stream());
    unsigned long long at = 0;
    d2h(&at, first.data(), 1, "quantile index");
    float t = 0.f;
    d2h(&t, keys_out.data() + at, 1, "quantile value");
    return t;
  }

  void start(const loss_spec& loss, const std::vector<double>& bias) override {
    loss_ = loss;
    approx_ = start_approx(learn_, rows(), bias);
    if (eval_ != nullptr) eval_approx_ = start_approx(*eval_, eval_rows(), bias);
    der_ = buffer<float>(static_cast<std::size_t>(loss.dims * rows()));
    search_weight_ = buffer<float>(static_cast<std::size_t>(rows()));
  }

  weak_result weak_target(const weak_request& req) override {
    const stage_range range(ctx_, "boosting.weak_target");
    const int channels = loss_.dims + req.hess_channels + 1;
    zero(max_keys(), static_cast<std::size_t>(channels));
    weak_args a;
    a.v = learn_view();
    a.loss = loss_;
    a.req = req;
    a.der = der_.data();
    a.weight = search_weight_.data();
    a.max_key = max_keys();
    a.partial = scratch_a_.data();
    if (saves_derivatives()) {
      ensure(saved_, static_cast<std::size_t>(rows()));
      a.saved = saved_.data();
    }
    a.first_row = link_ != nullptr ? link_->first_row(false) : 0;
    a.with_metric = req.learn_metric != nullptr;
    if (a.with_metric) {
      a.metric = *req.learn_metric;
      a.metric_from_value = req.want_value && metric_is_weighted_loss(a.metric, loss_);
    }
    const int tiles = tiles_of(rows());
    if (a.with_metric) {
      ensure(scratch_a_, static_cast<std::size_t>(tiles) * launch::weak_sums_with_metric);
      ensure(scratch_b_, static_cast<std::size_t>(tiles_of(tiles)) * launch::weak_sums_with_metric);
      a.partial = scratch_a_.data();
    }
    launch::weak_target(a, stream());
    // Sharded: the tile sums and the maxima in one all-gather (merged_pass), else a gather of the
    // tiles and an all-reduce of the maxima.
    const bool merged = a.with_metric ? fused_passes() && merged_pass<launch::weak_sums_with_metric>(channels, 0, true)
                                      : fused_passes() && merged_pass<launch::weak_sums>(channels, 0, true);
    if (!merged) {
      if (a.with_metric)
        finish_sums<launch::weak_sums_with_metric>(tiles);
      else
        finish_sums<launch::weak_sums>(tiles);
    }
    const std::vector<unsigned char> r = read_result(channels, 0, merged);
    weak_result out;
    std::memcpy(&out.sigma_sum, r.data() + result_sums_at, sizeof(double));
    std::memcpy(&out.value, r.data() + result_sums_at + sizeof(double), sizeof(double));
    if (a.with_metric) {
      std::memcpy(out.metric, r.data() + result_sums_at + launch::weak_sums * sizeof(double), sizeof(out.metric));
    }
    out.channel_max = maxima_of(r, channels);
    if (req.bootstrap.kind == bootstrap_kind::mvs) mvs_bootstrap(req.bootstrap);
    return out;
  }

  tree_structure search(const tree_search_params& p, std::vector<double> noise,
                        std::vector<float> feature_weight) override {
    const stage_range range(ctx_, "boosting.search");
    if (!workspace_) {
      workspace_ = make_device_search_workspace(ctx_, q_, loss_.dims, p);
      // Profiling: also the search's stages (events between its stages; they add ~0.1-0.15 ms to each
      // search, so the "boosting.search" time is then higher).
      if (ctx_.profiling()) detail::set_search_profiling(*workspace_, true);
    }
    device_search_input in;
    in.q = &q_;
    in.dims = loss_.dims;
    in.der = der_.data();
    in.weight = search_weight_.data();
    in.noise = std::move(noise);
    in.feature_weight = std::move(feature_weight);
    in.reducer = link_ != nullptr ? &link_->red() : nullptr;
    in.extension = ext_;
    tree_structure tree = search_tree_device(ctx_, in, p, *workspace_, leaf_.data());
    if (ctx_.profiling()) {  // the search's stages (device time between its events)
      for (const auto& [name, ms] : detail::last_search_stats(*workspace_).stages) {
        ctx_.stage_profiler().add("boosting.search (device): " + name, ms);
      }
    }
    return tree;
  }

  point_result at_point(const point_request& req) override {
    const stage_range range(ctx_, "boosting.at_point");
    const int channels = loss_.dims + req.hess_channels + 1;
    const int tiles = tiles_of(rows());
    const std::size_t slots =
        req.scales != nullptr ? static_cast<std::size_t>(req.leaves) * static_cast<std::size_t>(channels) : 0;
    ensure(result_, result_leaf_at + slots * sizeof(unsigned long long));
    point_args a = pass_args(req.leaves, req.hess_channels);
    a.want_value = req.want_value;
    a.want_max = req.want_max;
    if (req.point != nullptr && !req.point->empty()) {
      ensure(point_, req.point->size());
      h2d(point_.data(), req.point->data(), req.point->size(), "leaf point");
      a.point = point_.data();
    }
    if (req.scales != nullptr) {
      zero(leaf_sums(), slots);
      ensure(scales_, static_cast<std::size_t>(channels));
      h2d(scales_.data(), req.scales->data(), static_cast<std::size_t>(channels), "fixed-point scales");
      a.scales = scales_.data();
      a.sums = leaf_sums();
    }
    if (req.want_max) zero(max_keys(), static_cast<std::size_t>(channels));
    launch_point(a);
    if (req.want_value) finish_sums<1>(tiles);
    // Everything in one copy (per-leaf sums are model-sized: pieces that strict mode admits).
    const std::vector<unsigned char> r = read_result(req.want_max ? channels : 0, slots);
    point_result out;
    if (req.want_value) std::memcpy(&out.value, r.data() + result_sums_at, sizeof(double));
    if (req.want_max) out.channel_max = maxima_of(r, channels);
    if (slots > 0) {
      out.sums.resize(slots);
      std::memcpy(out.sums.data(), r.data() + result_leaf_at, slots * sizeof(std::int64_t));
    }
    return out;
  }

  // Leaf estimation with every decision on the device: the pass at the approx, a start kernel, then
  // rounds of (pass the search's mode asks for, its ordered value, a decide kernel) enqueued without
  // a host round trip; one read of the status, point and leaf weights at the end (more rounds only
  // when nothing was accepted yet: backtracking may try up to 100 candidates).
  // Sharded training (issue 9): after every pass the leaf sums (fixed point, exact) and maxima are
  // all-reduced over the ranks and the value's tile partials gathered in row order (finish_sums), so
  // every rank's state machine sees the single-GPU numbers and takes the same decisions.
  leaf_result estimate_leaves(const leaf_request& r) override {
    const stage_range range(ctx_, "boosting.estimate_leaves");
    const leaf_search_config& c = r.config;
    const int channels = c.channels();
    CBG_EXPECTS(channels <= max_channels && r.zero_scales != nullptr &&
                    r.zero_scales->size() >= static_cast<std::size_t>(channels) &&
                    (c.bounded == 0 || c.iterations <= 1 ||
                     (r.bound_scales != nullptr && r.bound_scales->size() >= static_cast<std::size_t>(channels))),
                status::internal, "estimate_leaves: bad request");
    const auto values = static_cast<std::size_t>(c.values());
    const auto leaves = static_cast<std::size_t>(c.leaves);
    const std::size_t slots = leaves * static_cast<std::size_t>(channels);
    constexpr std::size_t head = 8;  // doubles holding the status
    static_assert(sizeof(leaf_search_status) <= head * sizeof(double));
    ensure(result_, result_leaf_at + slots * sizeof(unsigned long long));
    ensure(leaf_block_, head + 3 * values + leaves);
    ensure(scales_, static_cast<std::size_t>(3 * max_channels));
    fixed_scale* zero_scales = scales_.data();
    fixed_scale* bound_scales = scales_.data() + max_channels;
    h2d(zero_scales, r.zero_scales->data(), static_cast<std::size_t>(channels), "fixed-point scales");
    const bool use_bound = c.bounded != 0 && c.iterations > 1;
    if (use_bound) h2d(bound_scales, r.bound_scales->data(), static_cast<std::size_t>(channels), "fixed-point scales");
    leaf_search_view v;
    v.status = reinterpret_cast<leaf_search_status*>(leaf_block_.data());
    v.point = leaf_block_.data() + head;
    v.leaf_weight = v.point + values;
    v.direction = v.leaf_weight + leaves;
    v.candidate = v.direction + values;
    v.scales = scales_.data() + 2 * max_channels;

    point_args a = pass_args(c.leaves, c.hess_channels);
    a.scales = zero_scales;
    a.sums = leaf_sums();
    if (saves_derivatives()) a.saved = saved_.data();  // the weak pass's, at the same approx
    zero(leaf_sums(), slots);
    launch_point(a);
    reduce_pass(0, slots);
    launch::leaf_start(c, v, leaf_sums(), zero_scales, r.start_value, max_keys(), stream());

    point_args ra = pass_args(c.leaves, c.hess_channels);
    ra.search = v.status;
    ra.search_candidate = v.candidate;
    ra.search_point = v.point;
    ra.candidate_scales = c.bounded != 0 ? bound_scales : nullptr;
    ra.sums_scales = v.scales;
    ra.candidate_value = c.backtracking != 0;
    ra.sums = leaf_sums();
    const double* value = reinterpret_cast<const double*>(result_.data() + result_sums_at);
    int rounds = c.iterations <= 1 ? 0 : (c.bounded != 0 ? c.iterations : 2 * c.iterations);
    // Sharded: as many passes as a search that accepts every candidate needs (a bounded one a pass per
    // iteration; else a candidate and a sums pass per iteration but the last), so that no collective
    // runs after the search is done; more rounds follow after the status read when needed.
    if (link_ != nullptr && c.bounded == 0 && rounds > 0) rounds = 2 * c.iterations - 1;
    int total = 0;
    std::vector<double> back(head + values + leaves);
    leaf_search_status st;
    pass_fold fused;
    const bool fuse = fused_layout(channels, slots, c.backtracking != 0, fused);
    if (fuse) {  // the passes add into the send block, zeroed once here, then by each decision
      zero(pass_send_.data(), fused.p.tiles_at);
      ra.sums = reinterpret_cast<unsigned long long*>(pass_send_.data());
      ra.max_key = reinterpret_cast<unsigned*>(pass_send_.data() + fused.p.keys_at);
      ra.partial = reinterpret_cast<double*>(pass_send_.data() + fused.p.tiles_at);
    }
    while (true) {
      pass_clock_.mark(0, stream());
      for (int i = 0; i < rounds; ++i) {
        const auto m = static_cast<std::size_t>(3 * i);
        launch_point(ra);
        pass_clock_.mark(m + 1, stream());
        if (fuse) {
          if (link_ != nullptr) link_->red().all_gather(pass_send_.data(), pass_recv_.data(), fused.p.block, stream());
          pass_clock_.mark(m + 2, stream());
          const unsigned char* recv = link_ != nullptr ? pass_recv_.data() : pass_send_.data();
          launch::fold_and_decide(fused, recv, c.backtracking != 0, c, v, leaf_sums(), max_keys(),
                                  reinterpret_cast<double*>(result_.data() + result_sums_at), bound_scales, ra.sums,
                                  ra.max_key, stream());
          pass_clock_.mark(m + 3, stream());
          continue;
        }
        if (!merged_pass(channels, slots, c.backtracking != 0)) {
          reduce_pass(channels, slots);
          if (c.backtracking != 0) finish_sums<1>(tiles_of(rows()));
        }
        pass_clock_.mark(m + 2, stream());
        launch::leaf_decide(c, v, leaf_sums(), value, bound_scales, max_keys(), stream());
        pass_clock_.mark(m + 3, stream());
      }
      total += rounds;
      const std::size_t bytes = back.size() * sizeof(double);
      const auto* src = reinterpret_cast<const unsigned char*>(leaf_block_.data());
      auto* dst = reinterpret_cast<unsigned char*>(back.data());
      for (std::size_t at = 0; at < bytes; at += strict_d2h_metadata_limit) {
        d2h(dst + at, src + at, std::min(strict_d2h_metadata_limit, bytes - at), "leaf values");
      }
      pass_clock_.add(ctx_.stage_profiler(), rounds);
      std::memcpy(static_cast<void*>(&st), back.data(), sizeof(st));
      CBG_EXPECTS(st.error == 0, status::bad_data, non_finite_derivative_message);
      if (st.mode == leaf_mode_done) break;
      CBG_EXPECTS(total < 400, status::internal, "leaf estimation did not finish");
      rounds = link_ != nullptr ? 4 : 16;  // sharded: every pass costs a collective, so smaller steps
    }
    leaf_result out;
    out.point.assign(back.begin() + head, back.begin() + static_cast<std::ptrdiff_t>(head + values));
    out.leaf_weight.assign(back.begin() + static_cast<std::ptrdiff_t>(head + values), back.end());
    return out;
  }

  leaf_result exact_leaves(int leaves, double alpha, const fixed_scale& ws) override {
    const stage_range range(ctx_, "boosting.exact_leaves");
    const std::int64_t n = rows();
    const auto ul = static_cast<std::size_t>(leaves);
    auto out = buffer<double>(2 * ul);
    launch::exact_leaves(approx_.data(), target_.data(), weight_.empty() ? nullptr : weight_.data(), leaf_.data(), n,
                         leaves, alpha, ws, out.data(), stream(), ctx_.resource());
    std::vector<double> back(2 * ul);
    const std::size_t bytes = back.size() * sizeof(double);
    const auto* src = reinterpret_cast<const unsigned char*>(out.data());
    auto* dst = reinterpret_cast<unsigned char*>(back.data());
    for (std::size_t at = 0; at < bytes; at += strict_d2h_metadata_limit) {
      d2h(dst + at, src + at, std::min(strict_d2h_metadata_limit, bytes - at), "exact leaf values");
    }
    leaf_result r;
    r.point.assign(back.begin(), back.begin() + static_cast<std::ptrdiff_t>(ul));
    r.leaf_weight.assign(back.begin() + static_cast<std::ptrdiff_t>(ul), back.end());
    return r;
  }

  void use_tree(const std::vector<split>& splits) override {
    if (link_ != nullptr) {
      boosting_backend::use_tree(splits);  // refuses
      return;
    }
    const stage_range range(ctx_, "boosting.use_tree");
    CBG_EXPECTS(splits.size() <= static_cast<std::size_t>(max_depth), status::internal, "use_tree: too many splits");
    launch::quantized_tree t;
    t.count = static_cast<int>(splits.size());
    const std::vector<const std::uint8_t*> committed = combination_bins(ext_, splits, q_.features);
    for (std::size_t s = 0; s < splits.size(); ++s) {
      t.splits[s] = splits[s];
      t.columns[s] = committed[s];
    }
    launch::tree_leaves(q_.view(), t, leaf_.data(), stream());
  }

  void apply(const std::vector<value_split>& splits, const std::vector<double>& delta) override {
    const stage_range range(ctx_, "boosting.apply");
    ensure(delta_, delta.size());
    h2d(delta_.data(), delta.data(), delta.size(), "leaf values");
    launch::apply_learn(approx_.data(), rows(), loss_.dims, leaf_.data(), delta_.data(), stream());
    if (eval_ == nullptr) return;
    eval_tree t;
    t.count = static_cast<int>(splits.size());
    for (std::size_t s = 0; s < splits.size(); ++s) {
      t.split[s] = splits[s];
      t.column[s] = splits[s].feature < q_.features ? eval_->features()[static_cast<std::size_t>(splits[s].feature)]
                                                    : extension_eval_column(splits[s].feature);
    }
    launch::apply_eval(eval_approx_.data(), eval_rows(), loss_.dims, t, delta_.data(), stream());
  }

  void metric_sums(const metric_spec& m, bool eval, double out[metric_terms]) override {
    const stage_range range(ctx_, "boosting.metric_sums");
    const rows_view v = eval ? eval_view() : learn_view();
    const int tiles = tiles_of(v.n);
    ensure(scratch_a_, static_cast<std::size_t>(tiles * metric_terms));
    ensure(scratch_b_, static_cast<std::size_t>(tiles_of(tiles) * metric_terms));
    launch::metric_sums(v, loss_, m, scratch_a_.data(), stream());
    finish_sums<metric_terms>(tiles, eval);
    const std::vector<unsigned char> r = read_result(0, 0);
    std::memcpy(out, r.data() + result_sums_at, metric_terms * sizeof(double));
  }

  double auc(bool eval) override {
    const stage_range range(ctx_, "boosting.auc");
    rows_view v = eval ? eval_view() : learn_view();
    device_buffer<double> all_approx;
    device_buffer<float> all_targets;
    if (link_ != nullptr) {  // sharded: the AUC of every rank's rows
      v.n = link_->total_rows(eval);
      all_approx = buffer<double>(static_cast<std::size_t>(v.n));
      all_targets = buffer<float>(static_cast<std::size_t>(v.n));
      link_->gather_rows(v.approx, sizeof(double), eval, all_approx.data());
      link_->gather_rows(v.target, sizeof(float), eval, all_targets.data());
      v.approx = all_approx.data();
      v.target = all_targets.data();
    }
    const std::int64_t n = v.n;
    auto result = buffer<std::uint64_t>(2);
    launch::auc_counts(v.approx, v.target, n, result.data(), stream(), ctx_.resource());
    std::uint64_t r[2];
    d2h(r, result.data(), 2, "auc counts");
    return auc_from_counts(r[0], r[1], static_cast<std::uint64_t>(n) - r[1]);
  }

  std::vector<double> confusion_table(const metric_spec& m, bool eval, int classes) override {
    if (link_ != nullptr) return boosting_backend::confusion_table(m, eval, classes);  // refuses
    const rows_view v = eval ? eval_view() : learn_view();
    return confusion_table_device(ctx_, metric_rows{v.approx, v.target, v.weight, v.n}, loss_, m, classes);
  }

  double ranked_metric(const metric_spec& m, bool eval) override {
    if (link_ != nullptr) return boosting_backend::ranked_metric(m, eval);  // refuses
    const rows_view v = eval ? eval_view() : learn_view();
    return ranked_metric_device(ctx_, metric_rows{v.approx, v.target, v.weight, v.n}, loss_, m);
  }

 private:
  [[nodiscard]] cudaStream_t stream() const { return ctx_.stream(); }

  template <class T>
  device_buffer<T> buffer(std::size_t count) const {
    return device_buffer<T>(std::max<std::size_t>(count, 1), ctx_.stream(), ctx_.resource());
  }
  template <class T>
  void ensure(device_buffer<T>& b, std::size_t count) const {
    if (b.size() >= count) return;
    b = buffer<T>(count);
    zero(b.data(), b.size());  // read-backs copy whole records, fields a pass leaves unwritten included
  }
  template <class T>
  void zero(T* p, std::size_t count) const {
    CBG_CUDA_TRY(cudaMemsetAsync(p, 0, count * sizeof(T), stream()));
  }
  template <class T>
  void d2h(T* dst, const T* src, std::size_t count, const char* what) const {
    copy_bytes(dst, memory_kind::host, src, memory_kind::device, count * sizeof(T), stream(), ctx_.copies(),
               ctx_.rules(), CBG_COPY_SITE(what));
  }
  template <class T>
  void h2d(T* dst, const T* src, std::size_t count, const char* what) const {
    copy_bytes(dst, memory_kind::device, src, memory_kind::host, count * sizeof(T), stream(), ctx_.copies(),
               ctx_.rules(), CBG_COPY_SITE(what));
  }
  template <class T>
  void copy_d2d(T* dst, const T* src, std::int64_t count) const {
    copy_bytes(dst, memory_kind::device, src, memory_kind::device, static_cast<std::size_t>(count) * sizeof(T),
               stream(), ctx_.copies(), ctx_.rules(), CBG_COPY_SITE("device copy"));
  }
  void fill_ones(float* p, std::int64_t n) const { launch::fill(p, n, 1.0f, stream()); }

  // One-dimensional losses whose derivatives cost exponentials: the weak pass keeps each row's der
  // and hess (16 bytes a row) for the leaf sums at the approx, which then need no math.
  [[nodiscard]] bool saves_derivatives() const {
    return loss_.dims == 1 && (loss_.kind == loss_kind::logloss || loss_.kind == loss_kind::cross_entropy ||
                               loss_.kind == loss_kind::poisson || loss_.kind == loss_kind::tweedie);
  }

  // MVS on the search der and weights (the weak pass wrote them unscaled).
  // Sharded (issue 9): the default mvs_reg from the ordered sum over every rank's rows (finish_sums
  // gathers the tiles), blocks of mvs_block_rows and draws keyed by the global row; the sharded
  // backend checks that every rank starts at a block boundary.
  void mvs_bootstrap(const bootstrap_spec& b) {
    const std::int64_t n = rows();
    const std::int64_t first_row = link_ != nullptr ? link_->first_row(false) : 0;
    CBG_EXPECTS(first_row % mvs_block_rows == 0, status::internal, "MVS: a shard starts inside a block");
    double lambda = b.mvs_reg;
    if (!(lambda >= 0)) {
      const int tiles = tiles_of(n);
      launch::mvs_l1(der_.data(), n, loss_.dims, scratch_a_.data(), stream());
      finish_sums<1>(tiles);
      double l1 = 0;
      d2h(&l1, reinterpret_cast<const double*>(result_.data() + result_sums_at), 1, "mvs lambda");
      const double mean = l1 / static_cast<double>(link_ != nullptr ? link_->total_rows(false) : n);
      lambda = mean * mean;
    }
    launch::mvs(der_.data(), search_weight_.data(), n, loss_.dims, static_cast<float>(lambda), b.subsample, b.key,
                first_row, stream());
  }

  // The arguments every learn-set pass shares.
  point_args pass_args(int leaves, int hess_channels) {
    point_args a;
    a.v = learn_view();
    a.loss = loss_;
    a.leaf = leaf_.data();
    a.leaves = leaves;
    a.hess_channels = hess_channels;
    a.partial = scratch_a_.data();
    a.max_key = max_keys();
    return a;
  }
  void launch_point(const point_args& a) { launch::leaf_pass(a, stream()); }

  [[nodiscard]] unsigned* max_keys() { return reinterpret_cast<unsigned*>(result_.data() + result_max_at); }
  [[nodiscard]] unsigned long long* leaf_sums() {
    return reinterpret_cast<unsigned long long*>(result_.data() + result_leaf_at);
  }

  // Sums C channels of the tile partials in scratch_a_ (tiles of them) in the ordered scheme into
  // the result buffer's sums, on the device.
  template <int C>
  void finish_sums(int tiles, bool eval = false) {
    double* in = scratch_a_.data();
    std::int64_t count = tiles;
    if (link_ != nullptr) {  // sharded: every rank's tile sums in row order, then folded as on one GPU
      count = link_->gather_tiles(scratch_a_.data(), C, eval, all_tiles_);
      in = all_tiles_.data();
    }
    reduce_tile_levels<C>(in, count);
  }

  // The ordered sum of `count` tiles of C channels at `in` (scratch_a_ or all_tiles_) into the result
  // buffer's sums.
  template <int C>
  void reduce_tile_levels(double* in, std::int64_t count) {
    if (in != scratch_a_.data()) {
      ensure(scratch_a_, static_cast<std::size_t>(tiles_of(count)) * C);
      ensure(scratch_b_, static_cast<std::size_t>(tiles_of(tiles_of(count))) * C);
    }
    while (true) {
      const int t = tiles_of(count);
      double* out = t == 1 ? reinterpret_cast<double*>(result_.data() + result_sums_at)
                           : (in == scratch_a_.data() ? scratch_b_.data() : scratch_a_.data());
      launch::reduce_tiles(C, in, count, out, stream());
      if (t == 1) return;
      in = out;
      count = t;
    }
  }

  // Sharded leaf pass in one collective (pass_pack): the `slots` leaf sums, `channels` maxima and, with
  // `value`, the value's tile partials of every rank, folded into the result buffer (and the value's
  // ordered sum) as reduce_pass and finish_sums<1> give them. False (nothing done) on one GPU or past
  // max_fold_ranks ranks: the caller takes the separate collectives.
  // The layout of a sharded pass's all-gather block (pass_send_ and pass_recv_ sized for it); false
  // past max_fold_ranks ranks. One GPU: one rank of tiles_of(rows()) tiles (a one-GPU fused leaf
  // pass reads its own send block).
  // C: doubles per value tile (the weak pass's two ordered sums; gather_tiles' layout).
  bool pass_layout(int channels, std::size_t slots, bool value, pass_fold& f, int C = 1) {
    const int ranks = link_ != nullptr ? link_->split(false).ranks() : 1;
    if (ranks > max_fold_ranks) return false;
    f.ranks = ranks;
    std::int64_t most = 0;
    for (int r = 0; r < ranks; ++r) {
      const std::int64_t count =
          link_ != nullptr ? sum_tiles_of(link_->split(false).counts[static_cast<std::size_t>(r)]) : tiles_of(rows());
      const std::int64_t t = value ? count * C : 0;
      f.first_tile[r + 1] = f.first_tile[r] + t;
      most = std::max(most, t);
    }
    const int rank = link_ != nullptr ? link_->rank() : 0;
    pass_pack& p = f.p;
    p.slots = slots;
    p.channels = channels;
    p.tiles = f.first_tile[rank + 1] - f.first_tile[rank];
    p.keys_at = slots * sizeof(unsigned long long);
    p.tiles_at = (p.keys_at + static_cast<std::size_t>(channels) * sizeof(unsigned) + 7) / 8 * 8;
    p.block = std::max<std::size_t>(8, p.tiles_at + static_cast<std::size_t>(most) * sizeof(double));
    ensure(pass_send_, p.tiles_at + static_cast<std::size_t>(std::max<std::int64_t>(most, tiles_of(rows()))) *
                                        sizeof(double));  // a fused pass's kernel writes tiles_of(rows()) partials
    if (link_ != nullptr) ensure(pass_recv_, p.block * static_cast<std::size_t>(ranks));
    return true;
  }

  // Fused leaf passes (pass_fold_decide_kernel): the point kernel adds straight into the all-gather's
  // send block, one kernel folds and decides (one GPU: it folds the send block itself, the value's
  // ordered sum in reduce_tiles' order, so no tile-sum kernel runs between the pass and its decision).
  // False where the value's tiles of all ranks exceed one tile of tiles, or with the policy's
  // dist_fused_pass (sharded; off also gives the weak pass its two collectives back) or
  // fused_leaf_pass (one GPU) off: the benchmark's A/B switches.
  [[nodiscard]] bool fused_passes() const { return ctx_.policy().dist_fused_pass; }
  bool fused_layout(int channels, std::size_t slots, bool value, pass_fold& f) {
    if (!(link_ != nullptr ? fused_passes() : ctx_.policy().fused_leaf_pass)) return false;
    if (!pass_layout(channels, slots, value, f)) return false;
    return f.first_tile[f.ranks] <= sum_tile;
  }

  template <int C = 1>
  bool merged_pass(int channels, std::size_t slots, bool value) {
    if (link_ == nullptr) return false;
    pass_fold f;
    if (!pass_layout(channels, slots, value, f, C)) return false;
    const pass_pack& p = f.p;
    const int ranks = f.ranks;
    const std::int64_t all = f.first_tile[ranks];
    if (value) ensure(all_tiles_, static_cast<std::size_t>(std::max<std::int64_t>(all, C)));
    launch::pack_pass(p, leaf_sums(), max_keys(), scratch_a_.data(), pass_send_.data(), stream());
    link_->red().all_gather(pass_send_.data(), pass_recv_.data(), p.block, stream());
    launch::fold_pass(f, pass_recv_.data(), leaf_sums(), max_keys(), all_tiles_.data(), stream());
    if (!value) return true;
    if (all == 0) {  // no rows anywhere: one zero tile, as gather_tiles gives it
      zero(all_tiles_.data(), C);
      reduce_tile_levels<C>(all_tiles_.data(), 1);
    } else {
      reduce_tile_levels<C>(all_tiles_.data(), all / C);
    }
    return true;
  }

  // Sharded training: the first `channels` maxima and `slots` fixed-point leaf sums of the result
  // buffer over the ranks (no-op on one GPU).
  void reduce_pass(int channels, std::size_t slots) {
    if (link_ == nullptr) return;
    if (channels > 0) link_->red().max_u32(max_keys(), static_cast<std::size_t>(channels), stream());
    if (slots > 0) link_->red().sum_i64(reinterpret_cast<long long*>(leaf_sums()), slots, stream());
  }

  // The result buffer up to `channels` maxima, or with `slots` leaf sums: one copy (pieces of at
  // most the strict-mode limit where the leaf sums are large).
  // reduced: the caller already combined the ranks' maxima and sums (merged_pass).
  std::vector<unsigned char> read_result(int channels, std::size_t slots, bool reduced = false) {
    if (!reduced) reduce_pass(channels, slots);  // sharded: maxima and fixed-point leaf sums over the ranks
    const std::size_t bytes = slots > 0 ? result_leaf_at + slots * sizeof(unsigned long long)
                                        : result_max_at + static_cast<std::size_t>(channels) * sizeof(unsigned);
    std::vector<unsigned char> r(bytes);
    for (std::size_t at = 0; at < bytes; at += strict_d2h_metadata_limit) {
      d2h(r.data() + at, result_.data() + at, std::min(strict_d2h_metadata_limit, bytes - at), "pass results");
    }
    return r;
  }

  static std::vector<float> maxima_of(const std::vector<unsigned char>& r, int channels) {
    std::vector<float> out;
    for (int c = 0; c < channels; ++c) {
      unsigned key = 0;
      std::memcpy(&key, r.data() + result_max_at + static_cast<std::size_t>(c) * sizeof(unsigned), sizeof(key));
      out.push_back(float_of_key(key));
    }
    return out;
  }

  device_buffer<float> read_weights(const pool& p) {
    if (!p.weight()) return {};
    auto w = buffer<float>(static_cast<std::size_t>(p.num_rows()));
    launch::to_float(column_of(*p.weight(), 0), p.num_rows(), w.data(), stream());
    return w;
  }

  device_buffer<float> read_targets(const pool& p, const target_rule& rule, const char* what) {
    CBG_EXPECTS(p.label().has_value(), status::bad_data, std::string("the ") + what + " pool has no label");
    const std::int64_t n = p.num_rows();
    auto t = buffer<float>(static_cast<std::size_t>(n));
    auto bad = buffer<unsigned long long>(1);
    const unsigned long long none = ~0ull;
    h2d(bad.data(), &none, 1, "target check");
    const column_view c = column_of(*p.label(), 0);
    const bool eval = &p != &learn_;
    const std::int64_t first_row = link_ != nullptr ? link_->first_row(eval) : 0;
    launch::targets(c, rule, n, first_row, t.data(), bad.data(), stream());
    if (link_ != nullptr) link_->red().min_u64(bad.data(), 1, stream());  // sharded: the first bad row of all
    unsigned long long first = 0;
    d2h(&first, bad.data(), 1, "target check");
    if (first != ~0ull) {
      const auto row = static_cast<std::int64_t>(first >> 8);
      const int ranks = link_ != nullptr ? link_->red().size() : 1;
      auto value = buffer<double>(static_cast<std::size_t>(ranks) + 1);
      int owner = 0;
      if (link_ != nullptr) {
        while (owner + 1 < ranks && link_->split(eval).first(owner + 1) <= row) ++owner;
      }
      if (owner == (link_ != nullptr ? link_->rank() : 0)) {
        launch::value_at(c, row - first_row, value.data(), stream());
      }
      if (link_ != nullptr) link_->red().all_gather(value.data(), value.data() + 1, sizeof(double), stream());
      double label = 0;
      d2h(&label, value.data() + (link_ != nullptr ? 1 + owner : 0), 1, "bad label");
      throw_target_problem(static_cast<target_problem>(first & 0xff), rule, what, row, label);
    }
    return t;
  }

  device_buffer<double> start_approx(const pool& p, std::int64_t n, const std::vector<double>& bias) {
    auto a = buffer<double>(static_cast<std::size_t>(loss_.dims * n));
    start_args s;
    s.dims = loss_.dims;
    for (int k = 0; k < loss_.dims; ++k) s.bias[k] = bias[static_cast<std::size_t>(k)];
    if (p.baseline()) {
      check_baseline(p, loss_);
      s.has_baseline = true;
      for (int k = 0; k < loss_.dims; ++k) s.baseline[k] = column_of(*p.baseline(), k);
    }
    launch::start_approx(s, n, a.data(), stream());
    return a;
  }

  [[nodiscard]] rows_view learn_view() const {
    return {approx_.data(), target_.data(), weight_.empty() ? nullptr : weight_.data(), rows()};
  }
  // A feature of the search extension on the eval rows (its float values in device memory).
  [[nodiscard]] column_view extension_eval_column(std::int32_t feature) const {
    column_view c;
    c.data = ext_->eval_values(feature);
    c.type = dtype::float32;
    c.memory = memory_kind::device;
    c.device_id = ctx_.device();
    c.size = eval_rows();
    c.stride = 1;
    CBG_EXPECTS(c.data != nullptr || c.size == 0, status::internal, "feature combinations: no eval values");
    return c;
  }

  [[nodiscard]] rows_view eval_view() const {
    return {eval_approx_.data(), eval_target_.data(), eval_weight_.empty() ? nullptr : eval_weight_.data(),
            eval_rows()};
  }

  const context& ctx_;
  const pool& learn_;
  const pool* eval_;
  scoped_device guard_;
  quantize::device_quantized q_;
  std::vector<std::uint8_t> modes_;
  loss_spec loss_;
  device_buffer<float> target_, eval_target_, weight_, eval_weight_;
  device_buffer<double> approx_, eval_approx_;
  device_buffer<float> der_, search_weight_;
  device_buffer<std::uint32_t> leaf_;
  device_buffer<double> scratch_a_, scratch_b_, point_, delta_;
  device_buffer<double> leaf_block_;  // leaf estimation: status, point, leaf weights, direction, candidate
  device_buffer<double2> saved_;      // (der, hess) per row at the approx (saves_derivatives)
  device_buffer<unsigned char> result_;
  std::vector<float> host_borders_;  // q_.borders, read by the first split_borders
  device_buffer<fixed_scale> scales_;
  device_search_workspace_ptr workspace_;
  pass_clock pass_clock_{ctx_.profiling()};
  search_extension* ext_ = nullptr;        // feature combinations (issue 5), or none
  std::unique_ptr<dist::rank_link> link_;  // sharded training (issue 9); null on one GPU
  device_buffer<double> all_tiles_;
  device_buffer<unsigned char> pass_send_, pass_recv_;  // merged_pass's blocks
};

}  // namespace

std::unique_ptr<boosting_backend> make_device_backend(const backend_inputs& in) {
  if (in.rank == nullptr && dist::wants_sharding(in)) return dist::make_sharded_backend(in);
  return std::make_unique<device_backend>(in);
}

std::unique_ptr<boosting_backend> make_device_backend(const backend_inputs& in, search_extension* extension) {
  if (in.rank == nullptr && dist::wants_sharding(in)) return dist::make_sharded_backend(in, extension);
  return std::make_unique<device_backend>(in, extension);
}

}  // namespace cbg::train
