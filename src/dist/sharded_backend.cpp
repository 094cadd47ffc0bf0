// SPDX-License-Identifier: Apache-2.0
// Sharded training (include/cbg/dist/train.hpp): rank setup, the fan-out of backend calls to one
// thread per rank, and the contexts' communicators.
#include <condition_variable>
#include <exception>
#include <functional>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "cbgpu/cbgpu_dlpack.h"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/dist/rank.hpp"
#include "cbg/dist/shard.hpp"
#include "cbg/dist/train.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/train/boosting_math.hpp"
#include "cbg/train/reduce_math.hpp"

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

// ---- one rank without peers (a single device other than the pool's) -----------------------------
class solo_reducer final : public reducer {
 public:
  [[nodiscard]] int rank() const noexcept override { return 0; }
  [[nodiscard]] int size() const noexcept override { return 1; }
  void sum_i64(long long*, std::size_t, cudaStream_t) override {}
  void max_u32(unsigned*, std::size_t, cudaStream_t) override {}
  void max_u64(unsigned long long*, std::size_t, cudaStream_t) override {}
  void min_u64(unsigned long long*, std::size_t, cudaStream_t) override {}
  void all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) override {
    if (bytes > 0 && send != recv) CBG_CUDA_TRY(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, stream));
  }
  void abort() noexcept override {}
};

// ---- a thread per rank -----------------------------------------------------------------------------
// Backend calls come every few hundred microseconds, so a woken thread would add its wake-up time to
// every call: threads spin on the generation counter for a short while before they sleep.
class rank_threads {
 public:
  rank_threads(std::vector<int> devices, std::vector<reducer*> reducers)
      : devices_(std::move(devices)), reducers_(std::move(reducers)) {
    for (std::size_t r = 0; r < devices_.size(); ++r) threads_.emplace_back([this, r] { loop(static_cast<int>(r)); });
  }
  ~rank_threads() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  rank_threads(const rank_threads&) = delete;
  rank_threads& operator=(const rank_threads&) = delete;

  [[nodiscard]] int size() const noexcept { return static_cast<int>(devices_.size()); }

  // Runs f(rank) on every rank's thread; rethrows the first failure (after aborting the
  // communicators, so that ranks waiting for the failed one return).
  void run(const std::function<void(int)>& f) {
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
    if (first_error_) {
      broken_ = true;
      std::exception_ptr e = first_error_;
      first_error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

 private:
  template <class Ready>
  static void spin_until(Ready&& ready) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    while (!ready()) {
      for (int i = 0; i < 64 && !ready(); ++i) std::this_thread::yield();
      if (std::chrono::steady_clock::now() > until) return;
    }
  }

  void loop(int rank) {
    std::uint64_t seen = 0;
    const bool device_set = cudaSetDevice(devices_[static_cast<std::size_t>(rank)]) == cudaSuccess;
    while (true) {
      spin_until([&] { return stop_.load() || generation_.load() != seen; });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
        if (stop_.load()) return;
        seen = generation_.load();
      }
      const std::function<void(int)>* f = task_;
      std::exception_ptr failed;
      try {
        CBG_EXPECTS(device_set, status::cuda, fmt::format("cannot make device {} current", devices_[static_cast<std::size_t>(rank)]));
        (*f)(rank);
      } catch (...) {
        failed = std::current_exception();
      }
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
          for (reducer* red : reducers_) red->abort();
        }
      }
      if (pending_.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_all();
      }
    }
  }

  std::vector<int> devices_;
  std::vector<reducer*> reducers_;
  std::vector<std::thread> threads_;
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
  return context::create(o);
}

// The features of this rank's learn pool, gathered from every rank (row order) into one pool of
// compact columns on this rank's device, for the borders of the whole set.
struct gathered_pool {
  std::vector<device_buffer<unsigned char>> columns;
  std::vector<std::shared_ptr<shard_pool>> local;  // compact copies of this rank's columns
  std::vector<std::int64_t> shape, strides;
  std::vector<DLTensor> dl;
  std::optional<pool> p;
};

class sharded_backend final : public train::boosting_backend {
 public:
  explicit sharded_backend(const train::backend_inputs& in) {
    const pool& learn = *in.learn;
    const std::shared_ptr<context>& base = learn.ctx();
    const std::optional<communicator> comm = communicator_of(*base);
    const std::vector<int> devices = parse_devices(in.devices, visible_device_count());
    if (comm.has_value()) {
      CBG_EXPECTS(devices.size() <= 1 && (devices.empty() || devices[0] == base->device()), status::invalid_argument,
                  fmt::format("devices '{}' with a caller's communicator: each process trains on its context's device ({})",
                              in.devices, base->device()));
      setup_communicator(in, *comm);
    } else {
      setup_local(in, devices);
    }
    std::vector<reducer*> reds;
    for (auto& r : reducers_) reds.push_back(r.get());
    std::vector<int> devs;
    for (auto& r : ranks_) devs.push_back(r->ctx->device());
    threads_ = std::make_unique<rank_threads>(devs, reds);
    threads_->run([&](int k) {
      rank_state& r = *ranks_[static_cast<std::size_t>(k)];
      train::backend_inputs bi;
      bi.learn = r.learn ? &*r.learn->p : in.learn;
      bi.eval = r.eval ? &*r.eval->p : in.eval;
      bi.quantize = in.quantize;
      bi.rank = &r.inputs;
      r.backend = train::make_device_backend(bi);
    });
    features_ = ranks_[0]->backend->features();
    modes_ = ranks_[0]->backend->nan_modes();
  }

  ~sharded_backend() override {
    if (!threads_) return;
    try {
      threads_->run([&](int k) { ranks_[static_cast<std::size_t>(k)]->backend.reset(); });
    } catch (...) {
      // A broken training: the backends are freed below, on this thread.
    }
    threads_.reset();
  }
  sharded_backend(const sharded_backend&) = delete;
  sharded_backend& operator=(const sharded_backend&) = delete;

  [[nodiscard]] std::int64_t rows() const override { return learn_split_.total(); }
  [[nodiscard]] std::int64_t eval_rows() const override { return eval_split_.total(); }
  [[nodiscard]] int features() const override { return features_; }
  [[nodiscard]] const std::vector<std::uint8_t>& nan_modes() const override { return modes_; }

  std::vector<float> split_borders(const std::vector<train::split>& splits) override {
    return each<std::vector<float>>([&](train::boosting_backend& b) { return b.split_borders(splits); });
  }
  train::label_facts labels(bool eval) override {
    return each<train::label_facts>([&](train::boosting_backend& b) { return b.labels(eval); });
  }
  void prepare_targets(const train::target_rule& rule) override {
    each<int>([&](train::boosting_backend& b) {
      b.prepare_targets(rule);
      return 0;
    });
  }
  void target_moments(double out[4]) override {
    const auto m = each<std::array<double, 4>>([&](train::boosting_backend& b) {
      std::array<double, 4> r{};
      b.target_moments(r.data());
      return r;
    });
    for (int k = 0; k < 4; ++k) out[k] = m[static_cast<std::size_t>(k)];
  }
  double weighted_quantile(double alpha) override {
    return each<double>([&](train::boosting_backend& b) { return b.weighted_quantile(alpha); });
  }
  void start(const train::loss_spec& loss, const std::vector<double>& bias) override {
    each<int>([&](train::boosting_backend& b) {
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
    return each<train::weak_result>([&](train::boosting_backend& b) { return b.weak_target(r); });
  }
  train::tree_structure search(const train::tree_search_params& p, std::vector<double> noise) override {
    std::vector<train::tree_structure> out(ranks_.size());
    threads_->run([&](int k) { out[static_cast<std::size_t>(k)] = ranks_[static_cast<std::size_t>(k)]->backend->search(p, noise); });
    // Every rank reduced the same histograms, so they must agree; a difference is a bug, not noise.
    for (const auto& t : out) {
      CBG_EXPECTS(t == out[0], status::internal, "sharded training: the ranks found different trees");
    }
    return std::move(out[0]);
  }
  train::point_result at_point(const train::point_request& r) override {
    return each<train::point_result>([&](train::boosting_backend& b) { return b.at_point(r); });
  }
  train::leaf_result estimate_leaves(const train::leaf_request& r) override {
    // Every rank runs the device-side leaf search on its rows; the passes' sums, maxima and values
    // are reduced over the ranks inside, so the results must agree.
    std::vector<train::leaf_result> out(ranks_.size());
    threads_->run([&](int k) {
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
    each<int>([&](train::boosting_backend& b) {
      b.apply(splits, delta);
      return 0;
    });
  }
  void metric_sums(const train::metric_spec& m, bool eval, double out[train::metric_terms]) override {
    const auto s = each<std::array<double, train::metric_terms>>([&](train::boosting_backend& b) {
      std::array<double, train::metric_terms> r{};
      b.metric_sums(m, eval, r.data());
      return r;
    });
    for (int k = 0; k < train::metric_terms; ++k) out[k] = s[static_cast<std::size_t>(k)];
  }
  double auc(bool eval) override {
    return each<double>([&](train::boosting_backend& b) { return b.auc(eval); });
  }

 private:
  // Runs f on every rank's backend (each on its thread); every rank computes the same answer:
  // rank 0's is returned.
  template <class R, class F>
  R each(F&& f) {
    std::vector<R> out(ranks_.size());
    threads_->run([&](int k) { out[static_cast<std::size_t>(k)] = f(*ranks_[static_cast<std::size_t>(k)]->backend); });
    return std::move(out[0]);
  }

  void setup_local(const train::backend_inputs& in, const std::vector<int>& devices) {
    const pool& learn = *in.learn;
    const context& base = *learn.ctx();
    const int n = static_cast<int>(devices.size());
    if (n > 1) {
      reducers_ = make_local_reducers(devices);
    } else {
      reducers_.push_back(std::make_unique<solo_reducer>());
    }
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
    // Borders once, from the whole learn set, on the pool's device.
    const quantize::device_quantized full = quantize::quantize_device(learn, in.quantize);
    for (int k = 0; k < n; ++k) {
      auto r = std::make_unique<rank_state>();
      r->ctx = rank_context(base, devices[static_cast<std::size_t>(k)]);
      const std::int64_t first = learn_split_.first(k), count = learn_split_.counts[static_cast<std::size_t>(k)];
      r->quantized = slice_quantized(full, first, count, base, *r->ctx);
      r->learn = make_shard_pool(learn, first, count, r->ctx, false);
      if (in.eval != nullptr) {
        r->eval = make_shard_pool(*in.eval, eval_split_.first(k), eval_split_.counts[static_cast<std::size_t>(k)], r->ctx,
                                  true);
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
  }

  void setup_communicator(const train::backend_inputs& in, const communicator& c);

  std::vector<std::unique_ptr<reducer>> reducers_;
  std::vector<std::unique_ptr<rank_state>> ranks_;
  std::unique_ptr<rank_threads> threads_;
  row_split learn_split_, eval_split_;
  int features_ = 0;
  std::vector<std::uint8_t> modes_;
  std::shared_ptr<gathered_pool> gathered_;
};


void sharded_backend::setup_communicator(const train::backend_inputs& in, const communicator& c) {
  const pool& learn = *in.learn;
  const std::shared_ptr<context>& base = learn.ctx();
  scoped_device on(base->device());
  reducers_.push_back(make_comm_reducer(c.comm, c.rank, c.size));
  reducer& red = *reducers_[0];
  // Every rank's row counts (-1: no eval set).
  const std::int64_t mine[2] = {learn.num_rows(), in.eval != nullptr ? in.eval->num_rows() : -1};
  device_buffer<std::int64_t> counts(static_cast<std::size_t>(2 * (c.size + 1)), base->stream(), base->resource());
  copy_bytes(counts.data(), memory_kind::device, mine, memory_kind::host, sizeof(mine), base->stream(), base->copies(),
             base->rules(), CBG_COPY_SITE("rank row counts"));
  red.all_gather(counts.data(), counts.data() + 2, sizeof(mine), base->stream());
  std::vector<std::int64_t> all(static_cast<std::size_t>(2 * c.size));
  copy_bytes(all.data(), memory_kind::host, counts.data() + 2, memory_kind::device, all.size() * sizeof(std::int64_t),
             base->stream(), base->copies(), base->rules(), CBG_COPY_SITE("rank row counts"));
  CBG_CUDA_TRY(cudaStreamSynchronize(base->stream()));
  int with_eval = 0;
  for (int k = 0; k < c.size; ++k) {
    const std::int64_t l = all[static_cast<std::size_t>(2 * k)], e = all[static_cast<std::size_t>(2 * k + 1)];
    CBG_EXPECTS(l > 0, status::bad_data, fmt::format("rank {} has no learn rows", k));
    learn_split_.counts.push_back(l);
    eval_split_.counts.push_back(std::max<std::int64_t>(e, 0));
    with_eval += e >= 0 ? 1 : 0;
  }
  CBG_EXPECTS(with_eval == 0 || with_eval == c.size, status::invalid_argument,
              fmt::format("{} of {} ranks have an eval set: every rank or none must", with_eval, c.size));
  // The borders of the whole set: every rank's features, gathered in rank order.
  auto g = std::make_shared<gathered_pool>();
  rank_inputs gather_in;
  gather_in.red = &red;
  gather_in.learn = learn_split_;
  gather_in.eval = eval_split_;
  rank_link link(gather_in, *base);
  g->local.push_back(make_shard_pool(learn, 0, learn.num_rows(), base, true));
  const pool& compact = *g->local.back()->p;
  const std::int64_t total = learn_split_.total();
  const auto nf = static_cast<std::size_t>(compact.num_features());
  g->shape.assign(nf, total);
  g->strides.assign(nf, 1);
  g->dl.resize(nf);
  pool_inputs pi;
  for (std::size_t j = 0; j < nf; ++j) {
    const column_view& col = compact.features()[j];
    const std::size_t elem = size_of(col.type);
    g->columns.emplace_back(static_cast<std::size_t>(total) * elem, base->stream(), base->resource());
    link.gather_rows(col.data, elem, false, g->columns.back().data());
    DLTensor& d = g->dl[j];
    d.data = g->columns.back().data();
    d.device.device_type = kDLCUDA;
    d.device.device_id = base->device();
    d.ndim = 1;
    d.dtype.code = static_cast<std::uint8_t>(col.type == dtype::float16 || col.type == dtype::float32 || col.type == dtype::float64
                                                 ? kDLFloat
                                                 : (col.type == dtype::int8 || col.type == dtype::int16 || col.type == dtype::int32 ||
                                                            col.type == dtype::int64
                                                        ? kDLInt
                                                        : (col.type == dtype::boolean ? CBG_DLPACK_CODE_BOOL : kDLUInt)));
    d.dtype.bits = static_cast<std::uint8_t>(elem * 8);
    d.dtype.lanes = 1;
    d.shape = &g->shape[j];
    d.strides = &g->strides[j];
    tensor_ref r;
    r.kind = tensor_ref_kind::dltensor;
    r.ptr = &d;
    pi.columns.push_back(r);
    if (compact.is_categorical(static_cast<std::int64_t>(j))) pi.cat_features.push_back(static_cast<std::int32_t>(j));
  }
  g->p.emplace(pool::build(base, std::move(pi)));
  const quantize::device_quantized full = quantize::quantize_device(*g->p, in.quantize);
  auto r = std::make_unique<rank_state>();
  r->ctx = base;
  r->quantized = slice_quantized(full, learn_split_.first(c.rank), learn.num_rows(), *base, *base);
  r->inputs.red = &red;
  r->inputs.learn = learn_split_;
  r->inputs.eval = eval_split_;
  r->inputs.quantized = &r->quantized;
  ranks_.push_back(std::move(r));
  // g (the whole feature set) is freed here, ordered after the quantization on the stream.
}

}  // namespace

bool wants_sharding(const train::backend_inputs& in) {
  const context& ctx = *in.learn->ctx();
  if (communicator_of(ctx).has_value()) return true;
  if (in.devices.empty()) return false;
  const std::vector<int> d = parse_devices(in.devices, visible_device_count());
  return !(d.empty() || (d.size() == 1 && d[0] == ctx.device()));
}

std::unique_ptr<train::boosting_backend> make_sharded_backend(const train::backend_inputs& in) {
  return std::make_unique<sharded_backend>(in);
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
