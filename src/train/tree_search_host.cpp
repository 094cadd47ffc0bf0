// SPDX-License-Identifier: Apache-2.0
// Host reference of the tree search (tree_search.hpp): the host primitives of the level loop
// (tree_search_levels.hpp); the GPU's are tree_search_device.cpp. Both follow score_math.hpp:
// fixed-point channel sums, then every candidate's score accumulated leaf by leaf in ascending
// order. This one builds every leaf's histogram directly (no subtraction trick: with exact integer
// sums the result is the same).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/train/score_math.hpp"
#include "cbg/train/search_extension.hpp"
#include "cbg/train/tree_search.hpp"
#include "src/train/tree_search_common.hpp"
#include "src/train/tree_search_levels.hpp"

namespace cbg::train {

namespace detail {

void validate_search(const quantize::host_quantized* q_host, const quantize::device_quantized* q_dev, int dims,
                     const void* der, const void* weight, const std::vector<double>& noise,
                     const std::vector<float>& feature_weight, const tree_search_params& params) {
  CBG_EXPECTS(q_host != nullptr || q_dev != nullptr, status::null_pointer, "tree search: no quantized pool");
  const std::int64_t rows = q_host != nullptr ? q_host->rows : q_dev->rows;
  const std::int64_t features = q_host != nullptr ? q_host->features : q_dev->features;
  CBG_EXPECTS(params.depth >= 1 && params.depth <= max_depth, status::invalid_argument,
              fmt::format("tree search: depth {} is outside 1..{}", params.depth, max_depth));
  CBG_EXPECTS(std::isfinite(params.l2_leaf_reg) && params.l2_leaf_reg >= 0.0, status::invalid_argument,
              fmt::format("tree search: l2_leaf_reg {} must be finite and >= 0", params.l2_leaf_reg));
  CBG_EXPECTS(params.score == score_function::cosine || params.score == score_function::l2, status::invalid_argument,
              "tree search: unknown score function");
  CBG_EXPECTS(dims >= 1 && dims <= max_search_dims, status::invalid_argument,
              fmt::format("tree search: dims {} is outside 1..{}", dims, max_search_dims));
  CBG_EXPECTS(rows == 0 || (der != nullptr && weight != nullptr), status::null_pointer,
              "tree search: der and weight are required");
  CBG_EXPECTS(noise.empty() || noise.size() == static_cast<std::size_t>(params.depth * features),
              status::invalid_argument,
              fmt::format("tree search: {} noise values given; depth * features = {} expected", noise.size(),
                          params.depth * features));
  CBG_EXPECTS(
      feature_weight.empty() || feature_weight.size() == static_cast<std::size_t>(features), status::invalid_argument,
      fmt::format("tree search: {} feature weights given; features = {} expected", feature_weight.size(), features));
}

std::string non_finite_message(int channel, int dims) {
  return channel < dims ? fmt::format("tree search: der (dimension {}) holds a NaN or infinity", channel)
                        : std::string("tree search: weight holds a NaN or infinity");
}

tree_structure structure_of(const split* splits, int count) {
  tree_structure t;
  t.splits.assign(splits, splits + count);
  return t;
}

}  // namespace detail

namespace {

// Sums of every (leaf, channel, bin) at one level: [leaf][channel][total bins].
struct level_histograms {
  std::int64_t total_bins = 0;
  int channels = 0;
  std::vector<long long> sums;
  [[nodiscard]] const long long* at(std::int64_t leaf, int channel, std::int64_t offset) const {
    return sums.data() + (leaf * channels + channel) * total_bins + offset;
  }
};

class host_search final : public detail::search_primitives {
 public:
  host_search(const host_search_input& in, const tree_search_params& params, std::vector<std::uint32_t>& leaf_index)
      : in_(in),
        q_(*in.q),
        params_(params),
        leaf_index_(leaf_index),
        rows_(q_.rows),
        nf_(q_.features),
        dims_(in.dims),
        channels_(in.dims + 1) {}

  void begin() override {
    // Per-channel scales from the exact maxima; every row's values in fixed point.
    const auto channel_of = [&](int c) {
      return c < dims_ ? in_.der + static_cast<std::size_t>(c) * rows_ : in_.weight;
    };
    inv_scale_.resize(static_cast<std::size_t>(channels_));
    fixed_.resize(static_cast<std::size_t>(channels_ * rows_));
    for (int c = 0; c < channels_; ++c) {
      const float* v = channel_of(c);
      float max_abs = 0.0f;
      for (std::int64_t r = 0; r < rows_; ++r) {
        CBG_EXPECTS(std::isfinite(v[r]), status::bad_data, detail::non_finite_message(c, dims_));
        max_abs = std::max(max_abs, std::fabs(v[r]));
      }
      const int k = fixed_exponent(max_abs);
      const double scale = pow2(k);
      inv_scale_[static_cast<std::size_t>(c)] = pow2(-k);
      for (std::int64_t r = 0; r < rows_; ++r) fixed_[static_cast<std::size_t>(c * rows_ + r)] = to_fixed(v[r], scale);
    }
    leaf_index_.assign(static_cast<std::size_t>(rows_), 0u);
    // Histogram columns of the pool: feature f owns bins offset[f] .. offset[f] + bins[f] (none
    // without borders).
    pool_layout_ = detail::make_bin_layout(q_.border_count);
  }

  void pool_level(int level, bool /*last_level*/) override {
    found_ = false;
    best_score_ = 0.0;
    best_ = split{};
    build(level, pool_layout_, nf_, [&](std::int64_t r, std::int64_t f) { return q_.bin(r, f); });
    const float* weight = in_.feature_weight.empty() ? nullptr : in_.feature_weight.data();
    for (std::int64_t f = 0; f < nf_; ++f) {
      const bool noisy = params_.score == score_function::cosine && !in_.noise.empty();
      scan(level, pool_layout_, f, static_cast<std::int32_t>(f), noisy,
           noisy ? in_.noise[static_cast<std::size_t>(level * nf_ + f)] : 0.0, weight);
    }
  }

  std::optional<std::vector<split>> splits_before(int /*level*/) override { return tree_.splits; }

  float float_border(std::int32_t feature, std::int32_t bin) override {
    return q_.borders[static_cast<std::size_t>(feature) * quantize::border_stride + static_cast<std::size_t>(bin)];
  }

  detail::column_choice score_columns(int level, bool /*last_level*/,
                                      const std::vector<search_extension::column>& columns,
                                      const std::vector<double>& noise, const std::vector<float>& weight) override {
    // The columns come after the pool's features in the tie order (feature ids nf + k).
    std::vector<std::int32_t> border_count;
    for (const auto& c : columns) border_count.push_back(c.border_count);
    const detail::bin_layout layout = detail::make_bin_layout(border_count);
    const auto n = static_cast<std::int64_t>(columns.size());
    build(level, layout, n, [&](std::int64_t r, std::int64_t k) -> std::uint32_t {
      return columns[static_cast<std::size_t>(k)].bins[r];
    });
    const bool noisy = params_.score == score_function::cosine && !in_.noise.empty() && !noise.empty();
    // The columns' weights by column index (a column's split is not in the tree yet: the extension
    // gives a column of an earlier split weight 1).
    const float* column_weight = weight.empty() ? nullptr : weight.data();
    for (std::int64_t k = 0; k < n; ++k) {
      scan(level, layout, k, static_cast<std::int32_t>(nf_ + k), noisy,
           noisy ? noise[static_cast<std::size_t>(k)] : 0.0, column_weight, k);
    }
    if (!found_ || best_.feature < nf_) return {};
    return {static_cast<int>(best_.feature - nf_), best_.bin};
  }

  bool take_column(int level, bool /*last_level*/, const search_extension::column& column, split s) override {
    return take(level, s, [&](std::int64_t r) -> std::uint32_t { return column.bins[r]; });
  }

  bool take_pool_split(int level, bool /*last_level*/) override {
    if (!found_) return false;
    const std::int64_t f = best_.feature;
    return take(level, best_, [&](std::int64_t r) { return q_.bin(r, f); });
  }

  tree_structure finish() override { return tree_; }

 private:
  // The level's histograms of `count` columns laid out as `layout`, bin_of(row, column).
  template <class BinOf>
  void build(int level, const detail::bin_layout& layout, std::int64_t count, BinOf&& bin_of) {
    h_.channels = channels_;
    h_.total_bins = layout.total_bins;
    const std::int64_t leaves = std::int64_t{1} << level;
    h_.sums.assign(static_cast<std::size_t>(leaves * channels_ * h_.total_bins), 0);
    for (std::int64_t r = 0; r < rows_; ++r) {
      const std::int64_t p = leaf_index_[static_cast<std::size_t>(r)];
      for (std::int64_t f = 0; f < count; ++f) {
        const std::int32_t nb = layout.bins[static_cast<std::size_t>(f)];
        if (nb == 0) continue;
        const std::int64_t col = layout.offset[static_cast<std::size_t>(f)] + bin_of(r, f);
        for (int c = 0; c < channels_; ++c) {
          h_.sums[static_cast<std::size_t>((p * channels_ + c) * h_.total_bins + col)] +=
              fixed_[static_cast<std::size_t>(c * rows_ + r)];
        }
      }
    }
  }

  // Every border of column f of the level's histograms (feature id fi) against the best so far;
  // weight: the model-size multipliers, weight[weight_index] this column's (weight_index -1: fi's,
  // as a pool feature).
  void scan(int d, const detail::bin_layout& layout, std::int64_t f, std::int32_t fi, bool noisy, double noise,
            const float* weight, std::int64_t weight_index = -1) {
    const std::int32_t nb = layout.bins[static_cast<std::size_t>(f)];
    if (nb < 2) return;
    const int dims = dims_;
    const std::int64_t leaves = std::int64_t{1} << d;
    const std::int64_t borders = nb - 1;
    const std::int64_t off = layout.offset[static_cast<std::size_t>(f)];
    part_num_.assign(static_cast<std::size_t>(leaves * borders), 0.0);
    part_den_.assign(static_cast<std::size_t>(leaves * borders), 0.0);
    w_left_.resize(static_cast<std::size_t>(borders));
    w_right_.resize(static_cast<std::size_t>(borders));
    const double inv_w = inv_scale_[static_cast<std::size_t>(dims)];
    for (std::int64_t p = 0; p < leaves; ++p) {
      const long long* wh = h_.at(p, dims, off);
      long long total_w = 0;
      for (std::int32_t b = 0; b < nb; ++b) total_w += wh[b];
      long long prefix = 0;
      for (std::int64_t b = 0; b < borders; ++b) {
        prefix += wh[b];
        w_left_[static_cast<std::size_t>(b)] = from_fixed(prefix, inv_w);
        w_right_[static_cast<std::size_t>(b)] = from_fixed(total_w - prefix, inv_w);
      }
      for (int j = 0; j < dims; ++j) {
        const long long* sh = h_.at(p, j, off);
        const double inv_s = inv_scale_[static_cast<std::size_t>(j)];
        long long total_s = 0;
        for (std::int32_t b = 0; b < nb; ++b) total_s += sh[b];
        long long prefix_s = 0;
        for (std::int64_t b = 0; b < borders; ++b) {
          prefix_s += sh[b];
          double& num = part_num_[static_cast<std::size_t>(p * borders + b)];
          double& den = part_den_[static_cast<std::size_t>(p * borders + b)];
          add_child(params_.score, params_.l2_leaf_reg, from_fixed(prefix_s, inv_s),
                    w_left_[static_cast<std::size_t>(b)], num, den);
          add_child(params_.score, params_.l2_leaf_reg, from_fixed(total_s - prefix_s, inv_s),
                    w_right_[static_cast<std::size_t>(b)], num, den);
        }
      }
    }
    for (std::int64_t b = 0; b < borders; ++b) {
      double num = 0.0;
      double den = cosine_den0;
      for (std::int64_t i = 0; i < leaves; ++i) {
        const std::int64_t p = visit_leaf(d, static_cast<std::uint32_t>(i));
        num += part_num_[static_cast<std::size_t>(p * borders + b)];
        den += part_den_[static_cast<std::size_t>(p * borders + b)];
      }
      double score = weight_index < 0 ? size_weighted_score(finish_score(params_.score, num, den), weight, fi,
                                                            tree_.splits.data(), static_cast<int>(tree_.splits.size()))
                                      : size_weighted_score(finish_score(params_.score, num, den), weight,
                                                            static_cast<std::int32_t>(weight_index), nullptr, 0);
      if (noisy) score += noise;
      const auto bi = static_cast<std::int32_t>(b);
      if (!found_ || better_candidate(score, fi, bi, best_score_, best_.feature, best_.bin)) {
        found_ = true;
        best_score_ = score;
        best_ = split{fi, bi};
      }
    }
  }

  // Split s taken (the tree ends instead when it is already in it): rows with bin_of(row) > s.bin
  // get bit `level` of their leaf index.
  template <class BinOf>
  bool take(int level, split s, BinOf&& bin_of) {
    if (std::find(tree_.splits.begin(), tree_.splits.end(), s) != tree_.splits.end()) return false;
    tree_.splits.push_back(s);
    for (std::int64_t r = 0; r < rows_; ++r) {
      if (static_cast<std::int32_t>(bin_of(r)) > s.bin) leaf_index_[static_cast<std::size_t>(r)] |= 1u << level;
    }
    return true;
  }

  const host_search_input& in_;
  const quantize::host_quantized& q_;
  const tree_search_params& params_;
  std::vector<std::uint32_t>& leaf_index_;
  std::int64_t rows_;
  std::int64_t nf_;
  int dims_;
  int channels_;
  std::vector<double> inv_scale_;
  std::vector<std::int32_t> fixed_;
  detail::bin_layout pool_layout_;
  level_histograms h_;
  std::vector<double> part_num_, part_den_, w_left_, w_right_;
  tree_structure tree_;
  bool found_ = false;  // the level's best so far
  double best_score_ = 0.0;
  split best_{};
};

}  // namespace

tree_structure search_tree_host(const host_search_input& in, const tree_search_params& params,
                                std::vector<std::uint32_t>& leaf_index) {
  return search_tree_host(in, params, leaf_index, nullptr);
}

tree_structure search_tree_host(const host_search_input& in, const tree_search_params& params,
                                std::vector<std::uint32_t>& leaf_index, search_extension* extension) {
  detail::validate_search(in.q, nullptr, in.dims, in.der, in.weight, in.noise, in.feature_weight, params);
  host_search primitives(in, params, leaf_index);
  return detail::search_levels(primitives, extension, params.depth);
}

}  // namespace cbg::train
