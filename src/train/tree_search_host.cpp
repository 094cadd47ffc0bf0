// SPDX-License-Identifier: Apache-2.0
// Host reference of the tree search (tree_search.hpp); the GPU version is kernels/train/. Both
// follow score_math.hpp: fixed-point channel sums, then every candidate's score accumulated leaf by
// leaf in ascending order. This one builds every leaf's histogram directly (no subtraction trick:
// with exact integer sums the result is the same).
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

namespace cbg::train {

namespace detail {

void validate_search(const quantize::host_quantized* q_host, const quantize::device_quantized* q_dev,
                     int dims, const void* der, const void* weight, const std::vector<double>& noise,
                     const tree_search_params& params) {
  CBG_EXPECTS(q_host != nullptr || q_dev != nullptr, status::null_pointer,
              "tree search: no quantized pool");
  const std::int64_t rows = q_host != nullptr ? q_host->rows : q_dev->rows;
  const std::int64_t features = q_host != nullptr ? q_host->features : q_dev->features;
  CBG_EXPECTS(params.depth >= 1 && params.depth <= max_depth, status::invalid_argument,
              fmt::format("tree search: depth {} is outside 1..{}", params.depth, max_depth));
  CBG_EXPECTS(std::isfinite(params.l2_leaf_reg) && params.l2_leaf_reg >= 0.0, status::invalid_argument,
              fmt::format("tree search: l2_leaf_reg {} must be finite and >= 0", params.l2_leaf_reg));
  CBG_EXPECTS(params.score == score_function::cosine || params.score == score_function::l2,
              status::invalid_argument, "tree search: unknown score function");
  CBG_EXPECTS(dims >= 1 && dims <= max_search_dims, status::invalid_argument,
              fmt::format("tree search: dims {} is outside 1..{}", dims, max_search_dims));
  CBG_EXPECTS(rows == 0 || (der != nullptr && weight != nullptr), status::null_pointer,
              "tree search: der and weight are required");
  CBG_EXPECTS(noise.empty() || noise.size() == static_cast<std::size_t>(params.depth * features),
              status::invalid_argument,
              fmt::format("tree search: {} noise values given; depth * features = {} expected",
                          noise.size(), params.depth * features));
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

}  // namespace

tree_structure search_tree_host(const host_search_input& in, const tree_search_params& params,
                                std::vector<std::uint32_t>& leaf_index) {
  return search_tree_host(in, params, leaf_index, nullptr);
}

tree_structure search_tree_host(const host_search_input& in, const tree_search_params& params,
                                std::vector<std::uint32_t>& leaf_index, search_extension* extension) {
  detail::validate_search(in.q, nullptr, in.dims, in.der, in.weight, in.noise, params);
  const quantize::host_quantized& q = *in.q;
  const std::int64_t rows = q.rows;
  const std::int64_t nf = q.features;
  const int dims = in.dims;
  const int channels = dims + 1;  // der dimensions, then the weight
  const auto channel_of = [&](int c) { return c < dims ? in.der + static_cast<std::size_t>(c) * rows : in.weight; };

  // 1. Per-channel scales from the exact maxima; every row's values in fixed point.
  std::vector<double> inv_scale(static_cast<std::size_t>(channels));
  std::vector<std::int32_t> fixed(static_cast<std::size_t>(channels * rows));
  for (int c = 0; c < channels; ++c) {
    const float* v = channel_of(c);
    float max_abs = 0.0f;
    for (std::int64_t r = 0; r < rows; ++r) {
      CBG_EXPECTS(std::isfinite(v[r]), status::bad_data, detail::non_finite_message(c, dims));
      max_abs = std::max(max_abs, std::fabs(v[r]));
    }
    const int k = fixed_exponent(max_abs);
    const double scale = pow2(k);
    inv_scale[static_cast<std::size_t>(c)] = pow2(-k);
    for (std::int64_t r = 0; r < rows; ++r) fixed[static_cast<std::size_t>(c * rows + r)] = to_fixed(v[r], scale);
  }

  leaf_index.assign(static_cast<std::size_t>(rows), 0u);
  tree_structure tree;
  level_histograms h;
  h.channels = channels;
  std::vector<double> part_num;
  std::vector<double> part_den;
  std::vector<double> w_left;
  std::vector<double> w_right;
  for (int d = 0; d < params.depth; ++d) {
    // 2. Histogram columns: feature f owns bins offset[f] .. offset[f] + bins[f] (none without
    // borders); the extension's columns of this level (if any) come after the pool's features.
    const std::vector<search_extension::column> extra =
        extension != nullptr ? extension->candidates(d, tree.splits, q) : std::vector<search_extension::column>{};
    std::vector<std::int32_t> border_count = q.border_count;
    for (const auto& e : extra) border_count.push_back(e.border_count);
    const detail::bin_layout layout = detail::make_bin_layout(border_count);
    const std::int64_t all_features = nf + static_cast<std::int64_t>(extra.size());
    const auto bin_of = [&](std::int64_t r, std::int64_t f) -> std::uint32_t {
      return f < nf ? q.bin(r, f) : extra[static_cast<std::size_t>(f - nf)].bins[r];
    };
    h.total_bins = layout.total_bins;
    const std::int64_t leaves = std::int64_t{1} << d;
    h.sums.assign(static_cast<std::size_t>(leaves * channels * h.total_bins), 0);
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t p = leaf_index[static_cast<std::size_t>(r)];
      for (std::int64_t f = 0; f < all_features; ++f) {
        const std::int32_t nb = layout.bins[static_cast<std::size_t>(f)];
        if (nb == 0) continue;
        const std::int64_t col = layout.offset[static_cast<std::size_t>(f)] + bin_of(r, f);
        for (int c = 0; c < channels; ++c) {
          h.sums[static_cast<std::size_t>((p * channels + c) * h.total_bins + col)] +=
              fixed[static_cast<std::size_t>(c * rows + r)];
        }
      }
    }

    // 3. Every candidate's score; the best one.
    bool found = false;
    double best_score = 0.0;
    split best{};
    for (std::int64_t f = 0; f < all_features; ++f) {
      const std::int32_t nb = layout.bins[static_cast<std::size_t>(f)];
      if (nb < 2) continue;
      const std::int64_t borders = nb - 1;
      const std::int64_t off = layout.offset[static_cast<std::size_t>(f)];
      part_num.assign(static_cast<std::size_t>(leaves * borders), 0.0);
      part_den.assign(static_cast<std::size_t>(leaves * borders), 0.0);
      w_left.resize(static_cast<std::size_t>(borders));
      w_right.resize(static_cast<std::size_t>(borders));
      const double inv_w = inv_scale[static_cast<std::size_t>(dims)];
      for (std::int64_t p = 0; p < leaves; ++p) {
        const long long* wh = h.at(p, dims, off);
        long long total_w = 0;
        for (std::int32_t b = 0; b < nb; ++b) total_w += wh[b];
        long long prefix = 0;
        for (std::int64_t b = 0; b < borders; ++b) {
          prefix += wh[b];
          w_left[static_cast<std::size_t>(b)] = from_fixed(prefix, inv_w);
          w_right[static_cast<std::size_t>(b)] = from_fixed(total_w - prefix, inv_w);
        }
        for (int j = 0; j < dims; ++j) {
          const long long* sh = h.at(p, j, off);
          const double inv_s = inv_scale[static_cast<std::size_t>(j)];
          long long total_s = 0;
          for (std::int32_t b = 0; b < nb; ++b) total_s += sh[b];
          long long prefix_s = 0;
          for (std::int64_t b = 0; b < borders; ++b) {
            prefix_s += sh[b];
            double& num = part_num[static_cast<std::size_t>(p * borders + b)];
            double& den = part_den[static_cast<std::size_t>(p * borders + b)];
            add_child(params.score, params.l2_leaf_reg, from_fixed(prefix_s, inv_s),
                      w_left[static_cast<std::size_t>(b)], num, den);
            add_child(params.score, params.l2_leaf_reg, from_fixed(total_s - prefix_s, inv_s),
                      w_right[static_cast<std::size_t>(b)], num, den);
          }
        }
      }
      bool noisy = params.score == score_function::cosine && !in.noise.empty();
      double noise = 0.0;
      if (noisy && f < nf) {
        noise = in.noise[static_cast<std::size_t>(d * nf + f)];
      } else if (noisy) {  // an extension column
        noisy = static_cast<bool>(extension->column_noise);
        if (noisy) noise = extension->column_noise(d, static_cast<std::size_t>(f - nf));
      }
      for (std::int64_t b = 0; b < borders; ++b) {
        double num = 0.0;
        double den = cosine_den0;
        for (std::int64_t i = 0; i < leaves; ++i) {
          const std::int64_t p = visit_leaf(d, static_cast<std::uint32_t>(i));
          num += part_num[static_cast<std::size_t>(p * borders + b)];
          den += part_den[static_cast<std::size_t>(p * borders + b)];
        }
        double score = finish_score(params.score, num, den);
        if (noisy) score += noise;
        const auto fi = static_cast<std::int32_t>(f);
        const auto bi = static_cast<std::int32_t>(b);
        if (!found || better_candidate(score, fi, bi, best_score, best.feature, best.bin)) {
          found = true;
          best_score = score;
          best = split{fi, bi};
        }
      }
    }
    // 4. No candidate, or the best split is already in the tree: the tree ends here. An extension
    // column is recorded under the id the extension gives it.
    if (!found) break;
    const std::int64_t column = best.feature;
    if (column >= nf) best.feature = extension->commit(static_cast<std::size_t>(column - nf));
    if (std::find(tree.splits.begin(), tree.splits.end(), best) != tree.splits.end()) break;
    tree.splits.push_back(best);
    for (std::int64_t r = 0; r < rows; ++r) {
      if (static_cast<std::int32_t>(bin_of(r, column)) > best.bin) {
        leaf_index[static_cast<std::size_t>(r)] |= 1u << d;
      }
    }
  }
  return tree;
}

}  // namespace cbg::train
