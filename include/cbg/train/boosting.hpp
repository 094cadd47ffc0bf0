// SPDX-License-Identifier: Apache-2.0
// The boosting loop's data passes, behind one interface with two implementations: the host
// reference (src/train/boosting_host.cpp) and the GPU (src/train/device_backend.cpp, whose kernels
// are kernels/train/). The loop itself (src/train/trainer.cpp: noise, leaf estimation with
// backtracking, early stopping, callbacks, logs, model assembly) is written once over this
// interface, so both paths take the
// same decisions from the same numbers: every reduction here is deterministic and defined in
// reduce_math.hpp, every per-row formula in loss.hpp / metric.hpp.
//
// Per-row "leaf channels" (what leaf estimation sums per leaf, in fixed point):
//   [der_0 .. der_{D-1}, hess_0 .. hess_{H-1}, w]
// D = loss.dims; H = hessian_size(loss) for Newton, 0 for Gradient; w is the sample weight (1 when
// the pool has none). Leaf estimation uses the sample weights, not the bootstrapped ones.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/train/leaf_math.hpp"
#include "cbg/train/loss.hpp"
#include "cbg/train/metric.hpp"
#include "cbg/train/params.hpp"
#include "cbg/train/reduce_math.hpp"
#include "cbg/train/tree_search.hpp"

namespace cbg::dist {
struct rank_inputs;
}

namespace cbg::train {

// How targets are read from the label column (plain data, passed to kernels).
struct target_rule {
  loss_kind loss = loss_kind::rmse;
  bool has_border = false;  // Logloss target_border: target = label > border
  double border = 0.5;
  int classes = 0;  // classification: labels must be integers in [0, classes)
};

// Facts about a label column, found where it lives (a few scalars come back from the GPU).
struct label_facts {
  double min = 0, max = 0;
  bool all_integer = true;
  bool constant = true;  // every label equals the first
};

// One split of a finished tree in terms of values: row goes to side 1 when value > border
// (NaN: side 1 only for nan_mode Max, as its bin is the last).
struct value_split {
  std::int32_t feature = 0;
  float border = 0.f;
  std::uint8_t nan_is_one = 0;
};

// Bootstrap of one iteration.
struct bootstrap_spec {
  bootstrap_kind kind = bootstrap_kind::no;
  double bagging_temperature = 1.0;
  double subsample = 1.0;
  double mvs_reg = -1.0;  // MVS: the lambda of the candidates; negative: (mean |der|)^2 of the iteration
  std::uint64_t key = 0;  // stream_key(seed, iteration)
};

// Inputs of the weak-target pass.
struct weak_request {
  bootstrap_spec bootstrap;
  bool newton_weights = false;  // NewtonCosine/NewtonL2: the search weights are hess
  bool want_value = false;      // also the function value at the current approx
  int hess_channels = 0;        // H above
  // Also this additive metric's sums at the current approx (metric_sums' bits): the loop's learn metric
  // of the previous iteration, from the pass that reads the approx anyway. Null: none.
  const metric_spec* learn_metric = nullptr;
};
struct weak_result {
  double sigma_sum = 0;              // sum over rows and dims of der^2 / weight (weight > 0), unbootstrapped
  double value = 0;                  // sum of -w * loss (when asked)
  std::vector<float> channel_max;    // max |channel| over rows, per leaf channel
  double metric[metric_terms] = {};  // learn_metric's sums (when asked)
};

// A point of leaf estimation: per-leaf offsets (leaves * dims) added to the approx of every row of
// that leaf. `point` empty = zero.
struct point_request {
  const std::vector<double>* point = nullptr;
  int leaves = 1;
  int hess_channels = 0;
  bool want_value = false;
  bool want_max = false;
  const std::vector<fixed_scale>* scales = nullptr;  // per channel; null: no leaf sums
};
struct point_result {
  double value = 0;
  std::vector<float> channel_max;
  std::vector<std::int64_t> sums;  // leaves * channels
};

// Leaf estimation of the last searched tree (leaf_math.hpp): the sums at the approx (zero_scales),
// then the Newton/Gradient steps with backtracking.
struct leaf_request {
  leaf_search_config config;
  const std::vector<fixed_scale>* zero_scales = nullptr;   // of the sums at the approx
  const std::vector<fixed_scale>* bound_scales = nullptr;  // bounded losses: of every candidate's sums
  double start_value = 0;                                  // the function value at the approx
};
struct leaf_result {
  std::vector<double> point;        // leaves * dims
  std::vector<double> leaf_weight;  // leaves: sum of w
};

class boosting_backend {
 public:
  virtual ~boosting_backend() = default;

  [[nodiscard]] virtual std::int64_t rows() const = 0;
  [[nodiscard]] virtual std::int64_t eval_rows() const = 0;
  [[nodiscard]] virtual int features() const = 0;
  // The border value of each split (a few floats come back from the GPU per tree).
  [[nodiscard]] virtual std::vector<float> split_borders(const std::vector<split>& splits) = 0;
  // The effective quantize::nan_mode of each feature.
  [[nodiscard]] virtual const std::vector<std::uint8_t>& nan_modes() const = 0;

  // Facts about the labels of the learn (or eval) set; bad_data for a pool without labels.
  virtual label_facts labels(bool eval) = 0;
  // Reads the labels (and the eval labels) into targets; bad_data names the first bad label.
  virtual void prepare_targets(const target_rule& rule) = 0;
  // Ordered sums over the learn set of [w, w*t, w*t^2, 0]; max sample weight in out[3].
  virtual void target_moments(double out[4]) = 0;
  // The smallest target t with (sum of w over targets <= t) >= alpha * (sum of w), in fixed point.
  virtual double weighted_quantile(double alpha) = 0;

  // approx = baseline (if the pool has one) + bias, for the learn and eval sets; fixes the loss.
  virtual void start(const loss_spec& loss, const std::vector<double>& bias) = 0;

  // Derivatives at the current approx; bootstrapped der and weights for the tree search.
  virtual weak_result weak_target(const weak_request& r) = 0;
  // The structure search on the weak target; noise: depth * features values, or empty;
  // feature_weight: the model-size multiplier of each feature's scores (features values), or empty.
  virtual tree_structure search(const tree_search_params& p, std::vector<double> noise,
                                std::vector<float> feature_weight) = 0;
  // A pass at a point of leaf estimation (the leaf index of the last search).
  virtual point_result at_point(const point_request& r) = 0;
  // The whole leaf estimation of the last search. The host drives it pass by pass through at_point
  // (estimate_leaves_by_points); the GPU keeps it on the device (one read at the end).
  virtual leaf_result estimate_leaves(const leaf_request& r) = 0;
  // Exact leaves (MAE/Quantile) of the last search: per leaf the smallest residual target - approx
  // whose cumulative sample weight (ascending residuals, fixed point at weight_scale) reaches alpha
  // times the leaf's (the last residual if none does; 0 for an empty leaf); leaf weights as sums.
  virtual leaf_result exact_leaves(int leaves, double alpha, const fixed_scale& weight_scale) = 0;
  // approx += delta[leaf] (leaves * dims) for the learn set (leaf index of the last search) and
  // the eval set (leaves from the splits on raw values).
  virtual void apply(const std::vector<value_split>& splits, const std::vector<double>& delta) = 0;
  // Takes a tree searched on another backend as the last search: the learn rows' leaves from their
  // bins here (another permutation of the ordered CTRs, binned with the same borders;
  // ctr/permutation_scheme.hpp). Leaf estimation and apply then use them. The default refuses
  // (not_implemented).
  virtual void use_tree(const std::vector<split>& splits);

  // Ordered sums of the metric's row terms at the current approx (eval: the eval set).
  virtual void metric_sums(const metric_spec& m, bool eval, double out[metric_terms]) = 0;
  // AUC of the current approx (binary: approx ranks, ties share), unweighted as CatBoost's default.
  virtual double auc(bool eval) = 0;
  // The weighted confusion table of the current approx (classes * classes cells, true class major;
  // metric_tables.hpp). The default refuses (not_implemented, naming the metric).
  virtual std::vector<double> confusion_table(const metric_spec& m, bool eval, int classes);
  // A ranked metric of the current approx (metric_ranked.hpp: weighted AUC, Mu, NormalizedGini,
  // PRAUC). The default refuses (not_implemented, naming the metric).
  virtual double ranked_metric(const metric_spec& m, bool eval);
};

struct backend_inputs {
  const pool* learn = nullptr;
  const pool* eval = nullptr;
  quantize::options quantize;
  // The quantized learn set (dataset.hpp), which the backend takes over: host_quantized for the host
  // reference, device_quantized for the GPU (absent for a training sharded over several processes,
  // which quantizes the features gathered from every rank).
  quantize::host_quantized* host_quantized = nullptr;
  quantize::device_quantized* device_quantized = nullptr;
  // Issue 9 (include/cbg/dist/): the `devices` parameter (empty: the pool's device), and for one
  // shard of a sharded training that rank's inputs.
  std::string devices;
  const dist::rank_inputs* rank = nullptr;
};

// The host reference (pools in host memory).
std::unique_ptr<boosting_backend> make_host_backend(const backend_inputs& in);
// The GPU (pools readable by the context's device); defined in src/train/device_backend.cpp.
std::unique_ptr<boosting_backend> make_device_backend(const backend_inputs& in);

// The leaf of quantized row `r` under `count` splits: bit s set when the row's bin is above split s's.
// A split whose `columns[s]` is set reads the bins of that column ([rows]: a feature combination's)
// instead of the quantized set's; `columns` may be null.
CBG_HOST_DEVICE inline std::uint32_t quantized_leaf(const quantize::quantized_rows& q, const split* splits, int count,
                                                    std::int64_t r,
                                                    const std::uint8_t* const* columns = nullptr) noexcept {
  std::uint32_t leaf = 0;
  for (int s = 0; s < count; ++s) {
    const std::uint32_t bin = columns != nullptr && columns[s] != nullptr ? columns[s][r] : q.bin(r, splits[s].feature);
    if (static_cast<std::int32_t>(bin) > splits[s].bin) leaf |= 1u << s;
  }
  return leaf;
}

// The side of a raw value under a split (the host and the kernels both use it).
CBG_HOST_DEVICE inline bool split_is_one(const value_split& s, float v) noexcept {
  if (v != v) return s.nan_is_one != 0;
  return v > s.border;
}

// Problems a label can have, in the order they are reported.
enum class target_problem : std::uint8_t { none = 0, not_finite, not_binary, not_probability, not_class };

// The training target of a label under the rule.
CBG_HOST_DEVICE inline target_problem target_of(const target_rule& r, double label, float& out) noexcept {
  out = static_cast<float>(label);
  if (out == 0.f) out = 0.f;  // -0 and +0 are one target (sorts then agree on both sides)
  if (!(label - label == 0)) return target_problem::not_finite;
  switch (r.loss) {
    case loss_kind::logloss:
      if (r.has_border) {
        out = label > r.border ? 1.f : 0.f;
        return target_problem::none;
      }
      return label == 0 || label == 1 ? target_problem::none : target_problem::not_binary;
    case loss_kind::cross_entropy:
      return label >= 0 && label <= 1 ? target_problem::none : target_problem::not_probability;
    case loss_kind::multiclass:
    case loss_kind::multiclass_one_vs_all: {
      const auto c = static_cast<std::int64_t>(label);
      return static_cast<double>(c) == label && c >= 0 && c < r.classes ? target_problem::none
                                                                        : target_problem::not_class;
    }
    default:
      return target_problem::none;
  }
}

}  // namespace cbg::train
