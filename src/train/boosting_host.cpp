// SPDX-License-Identifier: Apache-2.0
// The host reference of the boosting loop's data passes (boosting.hpp): plain loops over host
// memory, in the orders reduce_math.hpp defines, so the GPU reproduces every number.
#include <algorithm>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/runtime/profiler.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/boosting_math.hpp"
#include "cbg/train/det_math.hpp"
#include "cbg/train/search_extension.hpp"
#include "src/train/boosting_common.hpp"
#include "src/train/metric_host.hpp"

namespace cbg::train {

namespace {

class host_backend final : public boosting_backend {
 public:
  host_backend(const backend_inputs& in, search_extension* extension)
      : ctx_(*in.learn->ctx()), learn_(*in.learn), eval_(in.eval), ext_(extension) {
    CBG_EXPECTS(in.host_quantized != nullptr, status::internal, "the host backend takes a quantized learn set");
    q_ = std::move(*in.host_quantized);
    leaf_.assign(static_cast<std::size_t>(q_.rows), 0u);
    weight_ = read_weights(learn_);
    if (eval_ != nullptr) eval_weight_ = read_weights(*eval_);
  }

  [[nodiscard]] std::int64_t rows() const override { return q_.rows; }
  [[nodiscard]] std::int64_t eval_rows() const override { return eval_ == nullptr ? 0 : eval_->num_rows(); }
  [[nodiscard]] int features() const override { return static_cast<int>(q_.features); }
  [[nodiscard]] std::vector<float> split_borders(const std::vector<split>& splits) override {
    const stage_range range(ctx_, "boosting.split_borders");
    std::vector<float> out;
    for (const split& s : splits) {
      if (s.feature >= q_.features) {  // a feature of the search extension
        out.push_back(ext_->border(s.feature, s.bin));
        continue;
      }
      out.push_back(
          q_.borders[static_cast<std::size_t>(s.feature) * quantize::border_stride + static_cast<std::size_t>(s.bin)]);
    }
    return out;
  }
  [[nodiscard]] const std::vector<std::uint8_t>& nan_modes() const override { return q_.mode; }

  label_facts labels(bool eval) override { return host_label_facts(eval ? *eval_ : learn_); }

  void prepare_targets(const target_rule& rule) override {
    target_ = read_targets(learn_, rule, "learn");
    if (eval_ != nullptr) eval_target_ = read_targets(*eval_, rule, "eval");
  }

  void target_moments(double out[4]) override {
    ordered_sum_host<3>(
        rows(),
        [&](std::int64_t r, double* v) {
          const double w = weight_[static_cast<std::size_t>(r)];
          const double t = target_[static_cast<std::size_t>(r)];
          v[0] = w;
          v[1] = w * t;
          v[2] = w * (t * t);
        },
        out);
    out[3] = *std::max_element(weight_.begin(), weight_.end());
  }

  double weighted_quantile(double alpha) override {
    std::vector<std::uint32_t> order(static_cast<std::size_t>(rows()));
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return target_[a] < target_[b]; });
    std::vector<float> sorted_w(order.size());
    std::vector<float> sorted_t(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      sorted_w[i] = weight_[order[i]];
      sorted_t[i] = target_[order[i]];
    }
    return quantile_of_sorted(sorted_t, sorted_w, alpha);
  }

  void start(const loss_spec& loss, const std::vector<double>& bias) override {
    loss_ = loss;
    approx_ = start_approx(learn_, loss, bias);
    if (eval_ != nullptr) eval_approx_ = start_approx(*eval_, loss, bias);
    der_.assign(static_cast<std::size_t>(loss.dims * rows()), 0.f);
    search_weight_.assign(static_cast<std::size_t>(rows()), 0.f);
  }

  weak_result weak_target(const weak_request& req) override {
    const stage_range range(ctx_, "boosting.weak_target");
    const int d = loss_.dims;
    const int channels = d + req.hess_channels + 1;
    weak_result out;
    std::vector<std::uint32_t> max_key(static_cast<std::size_t>(channels), 0u);
    const std::int64_t n = rows();
    double sums[2];
    ordered_sum_host<2>(
        n,
        [&](std::int64_t r, double* v) {
          double a[max_dims], der[max_dims], hess[max_dims * (max_dims + 1) / 2];
          const auto i = static_cast<std::size_t>(r);
          gather_approx(approx_.data(), n, d, r, a);
          const double w = weight_[i];
          point_derivatives(loss_, a, target_[i], w, der, hess);
          const weak_row row = weak_row_values(loss_, req, der, hess, w, bootstrap_factor(req.bootstrap, r));
          for (int k = 0; k < d; ++k) der_[static_cast<std::size_t>(k * n + r)] = row.der[k];
          search_weight_[i] = row.weight;
          v[0] = row.sigma;
          v[1] = req.want_value ? -w * point_loss(loss_, a, target_[i]) : 0.0;
          double ch[max_channels];
          leaf_channels(loss_, req.hess_channels, der, hess, w, ch);
          for (int c = 0; c < channels; ++c) {
            max_key[static_cast<std::size_t>(c)] =
                std::max(max_key[static_cast<std::size_t>(c)], abs_float_key(static_cast<float>(ch[c])));
          }
        },
        sums);
    if (req.bootstrap.kind == bootstrap_kind::mvs) mvs_bootstrap_host(der_, search_weight_, d, req.bootstrap);
    if (req.learn_metric != nullptr) metric_sums(*req.learn_metric, false, out.metric);  // the same approx
    out.sigma_sum = sums[0];
    out.value = sums[1];
    for (std::uint32_t k : max_key) out.channel_max.push_back(float_of_key(k));
    return out;
  }

  tree_structure search(const tree_search_params& p, std::vector<double> noise,
                        std::vector<float> feature_weight) override {
    const stage_range range(ctx_, "boosting.search");
    host_search_input in;
    in.q = &q_;
    in.dims = loss_.dims;
    in.der = der_.data();
    in.weight = search_weight_.data();
    in.noise = std::move(noise);
    in.feature_weight = std::move(feature_weight);
    return search_tree_host(in, p, leaf_, ext_);
  }

  point_result at_point(const point_request& req) override {
    const stage_range range(ctx_, "boosting.at_point");
    const int d = loss_.dims;
    const int channels = d + req.hess_channels + 1;
    const std::int64_t n = rows();
    point_result out;
    std::vector<std::uint32_t> max_key(static_cast<std::size_t>(channels), 0u);
    if (req.scales != nullptr) out.sums.assign(static_cast<std::size_t>(req.leaves * channels), 0);
    double value = 0;
    ordered_sum_host<1>(
        n,
        [&](std::int64_t r, double* v) {
          double a[max_dims], der[max_dims], hess[max_dims * (max_dims + 1) / 2];
          const auto i = static_cast<std::size_t>(r);
          const std::uint32_t leaf = leaf_[i];
          gather_approx(approx_.data(), n, d, r, a);
          if (req.point != nullptr && !req.point->empty()) {
            for (int k = 0; k < d; ++k) a[k] += (*req.point)[static_cast<std::size_t>(leaf) * d + k];
          }
          const double w = weight_[i];
          v[0] = req.want_value ? -w * point_loss(loss_, a, target_[i]) : 0.0;
          if (req.scales == nullptr && !req.want_max) return;
          point_derivatives(loss_, a, target_[i], w, der, hess);
          double ch[max_channels];
          leaf_channels(loss_, req.hess_channels, der, hess, w, ch);
          for (int c = 0; c < channels; ++c) {
            if (req.want_max) {
              max_key[static_cast<std::size_t>(c)] =
                  std::max(max_key[static_cast<std::size_t>(c)], abs_float_key(static_cast<float>(ch[c])));
            }
            if (req.scales != nullptr) {
              // Two's complement wrap-around, as the GPU's unsigned atomics.
              auto& s = out.sums[static_cast<std::size_t>(leaf) * channels + c];
              s = static_cast<std::int64_t>(
                  static_cast<std::uint64_t>(s) +
                  static_cast<std::uint64_t>(to_fixed64(ch[c], (*req.scales)[static_cast<std::size_t>(c)])));
            }
          }
        },
        &value);
    out.value = value;
    if (req.want_max) {
      for (std::uint32_t k : max_key) out.channel_max.push_back(float_of_key(k));
    }
    return out;
  }

  leaf_result estimate_leaves(const leaf_request& r) override {
    const stage_range range(ctx_, "boosting.estimate_leaves");
    return estimate_leaves_by_points(*this, r);
  }

  leaf_result exact_leaves(int leaves, double alpha, const fixed_scale& ws) override {
    const stage_range range(ctx_, "boosting.exact_leaves");
    const std::int64_t n = rows();
    std::vector<std::vector<std::pair<double, float>>> by_leaf(static_cast<std::size_t>(leaves));
    for (std::int64_t r = 0; r < n; ++r) {
      const auto i = static_cast<std::size_t>(r);
      by_leaf[leaf_[i]].emplace_back(exact_residual(target_[i], approx_[i]), weight_[i]);
    }
    leaf_result out;
    out.point.assign(static_cast<std::size_t>(leaves), 0.0);
    out.leaf_weight.assign(static_cast<std::size_t>(leaves), 0.0);
    for (int leaf = 0; leaf < leaves; ++leaf) {
      auto& v = by_leaf[static_cast<std::size_t>(leaf)];
      if (v.empty()) continue;
      std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::int64_t total = 0;
      for (const auto& [res, w] : v) total += to_fixed64(w, ws);
      const double goal = alpha * from_fixed64(total, ws);
      double value = v.back().first;
      std::int64_t cum = 0;
      for (const auto& [res, w] : v) {
        cum += to_fixed64(w, ws);
        if (from_fixed64(cum, ws) >= goal) {
          value = res;
          break;
        }
      }
      out.point[static_cast<std::size_t>(leaf)] = value;
      out.leaf_weight[static_cast<std::size_t>(leaf)] = from_fixed64(total, ws);
    }
    return out;
  }

  void apply(const std::vector<value_split>& splits, const std::vector<double>& delta) override {
    const stage_range range(ctx_, "boosting.apply");
    const int d = loss_.dims;
    const std::int64_t n = rows();
    for (std::int64_t r = 0; r < n; ++r) {
      const std::uint32_t leaf = leaf_[static_cast<std::size_t>(r)];
      for (int k = 0; k < d; ++k) {
        approx_[static_cast<std::size_t>(k * n + r)] += delta[static_cast<std::size_t>(leaf) * d + k];
      }
    }
    if (eval_ == nullptr) return;
    const std::int64_t ne = eval_->num_rows();
    for (std::int64_t r = 0; r < ne; ++r) {
      std::uint32_t leaf = 0;
      for (std::size_t s = 0; s < splits.size(); ++s) {
        const auto f = static_cast<std::size_t>(splits[s].feature);
        const float v = f >= eval_->features().size() ? ext_->eval_values(splits[s].feature)[r]
                                                      : quantize::to_feature_float(eval_->features()[f].value(r));
        leaf |= (split_is_one(splits[s], v) ? 1u : 0u) << s;
      }
      for (int k = 0; k < d; ++k) {
        eval_approx_[static_cast<std::size_t>(k * ne + r)] += delta[static_cast<std::size_t>(leaf) * d + k];
      }
    }
  }

  void use_tree(const std::vector<split>& splits) override {
    const stage_range range(ctx_, "boosting.use_tree");
    const std::vector<const std::uint8_t*> committed = combination_bins(ext_, splits, q_.features);
    const quantize::quantized_rows q = q_.view();
    for (std::int64_t r = 0; r < q_.rows; ++r) {
      leaf_[static_cast<std::size_t>(r)] =
          quantized_leaf(q, splits.data(), static_cast<int>(splits.size()), r, committed.data());
    }
  }

  void metric_sums(const metric_spec& m, bool eval, double out[metric_terms]) override {
    const stage_range range(ctx_, "boosting.metric_sums");
    const std::vector<double>& approx = eval ? eval_approx_ : approx_;
    const std::vector<float>& target = eval ? eval_target_ : target_;
    const std::vector<float>& weight = eval ? eval_weight_ : weight_;
    const auto n = static_cast<std::int64_t>(target.size());
    ordered_sum_host<metric_terms>(
        n,
        [&](std::int64_t r, double* v) {
          double a[max_dims];
          gather_approx(approx.data(), n, loss_.dims, r, a);
          metric_row_terms(m, loss_, a, target[static_cast<std::size_t>(r)], weight[static_cast<std::size_t>(r)], v);
        },
        out);
  }

  double auc(bool eval) override {
    const stage_range range(ctx_, "boosting.auc");
    const std::vector<double>& approx = eval ? eval_approx_ : approx_;
    const std::vector<float>& target = eval ? eval_target_ : target_;
    std::vector<std::uint32_t> order(target.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return approx[a] < approx[b]; });
    std::vector<double> scores(order.size());
    std::vector<std::uint8_t> positive(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      scores[i] = approx[order[i]];
      positive[i] = target[order[i]] > 0.5f ? 1 : 0;
    }
    return auc_of_sorted(scores, positive);
  }

  std::vector<double> confusion_table(const metric_spec& m, bool eval, int classes) override {
    return eval ? confusion_table_host(m, loss_, eval_approx_, eval_target_, eval_weight_, classes)
                : confusion_table_host(m, loss_, approx_, target_, weight_, classes);
  }

  double ranked_metric(const metric_spec& m, bool eval) override {
    return eval ? ranked_metric_host(m, loss_, eval_approx_, eval_target_, eval_weight_)
                : ranked_metric_host(m, loss_, approx_, target_, weight_);
  }

 private:
  const context& ctx_;
  const pool& learn_;
  const pool* eval_;
  quantize::host_quantized q_;
  loss_spec loss_;
  std::vector<float> target_, eval_target_, weight_, eval_weight_;
  std::vector<double> approx_, eval_approx_;  // [dims][rows]
  std::vector<float> der_, search_weight_;
  std::vector<std::uint32_t> leaf_;
  search_extension* ext_ = nullptr;  // feature combinations, or none
};

}  // namespace

std::unique_ptr<boosting_backend> make_host_backend(const backend_inputs& in, search_extension* extension) {
  return std::make_unique<host_backend>(in, extension);
}

std::unique_ptr<boosting_backend> make_host_backend(const backend_inputs& in) { return make_host_backend(in, nullptr); }

}  // namespace cbg::train
