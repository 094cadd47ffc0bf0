// SPDX-License-Identifier: Apache-2.0
// Host reference of the quantizer (the GPU version is kernels/quantize/quantize.cu); both follow
// quantize_math.hpp.
#include <algorithm>
#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/quantize/sampling.hpp"

namespace cbg::quantize {

std::shared_ptr<const std::vector<double>> greedy_log_table(std::uint32_t n) {
  static std::mutex mutex;
  static std::shared_ptr<const std::vector<double>> table;
  const std::scoped_lock lock(mutex);
  if (table == nullptr || table->size() <= n) {
    auto t = std::make_shared<std::vector<double>>(static_cast<std::size_t>(n) + 1);
    for (std::uint32_t k = 0; k <= n; ++k) (*t)[k] = std::log(static_cast<double>(k) + 1e-8);
    table = std::move(t);
  }
  return table;
}

feature_settings resolve_settings(const pool& p, const options& o) {
  CBG_EXPECTS(o.type == border_type::greedy_log_sum, status::not_implemented,
              "only the GreedyLogSum border type is implemented");
  CBG_EXPECTS(o.border_count >= 1 && o.border_count <= max_border_count,
              status::invalid_argument,
              fmt::format("border_count {} is outside 1..{}", o.border_count, max_border_count));
  CBG_EXPECTS(o.mode == nan_mode::forbidden || o.mode == nan_mode::min || o.mode == nan_mode::max,
              status::invalid_argument, "unknown nan_mode");
  CBG_EXPECTS(o.max_subset_size >= 1, status::invalid_argument,
              "max_subset_size must be positive");
  const auto n = static_cast<std::size_t>(p.num_features());
  feature_settings s;
  s.border_count.assign(n, o.border_count);
  s.mode.assign(n, static_cast<std::uint8_t>(o.mode));
  for (const feature_override& f : o.overrides) {
    CBG_EXPECTS(f.feature >= 0 && f.feature < p.num_features(), status::invalid_argument,
                fmt::format("override for feature {} of {}", f.feature, p.num_features()));
    if (f.border_count != 0) {
      CBG_EXPECTS(f.border_count >= 1 && f.border_count <= max_border_count,
                  status::invalid_argument,
                  fmt::format("feature {}: border_count {} is outside 1..{}", f.feature,
                              f.border_count, max_border_count));
      s.border_count[static_cast<std::size_t>(f.feature)] = f.border_count;
    }
    if (f.mode != -1) {
      CBG_EXPECTS(f.mode >= 0 && f.mode <= 2, status::invalid_argument,
                  fmt::format("feature {}: unknown nan_mode {}", f.feature, f.mode));
      s.mode[static_cast<std::size_t>(f.feature)] = static_cast<std::uint8_t>(f.mode);
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    if (p.is_categorical(static_cast<std::int64_t>(j))) s.border_count[j] = 0;
  }
  return s;
}

host_quantized quantize_host(const pool& p, const options& o) {
  const feature_settings settings = resolve_settings(p, o);
  host_quantized q;
  q.rows = p.num_rows();
  q.features = p.num_features();
  q.padded_rows = padded_rows_of(q.rows);
  const auto nf = static_cast<std::size_t>(q.features);
  q.borders.assign(nf * border_stride, 0.0f);
  q.border_count.assign(nf, 0);
  q.mode.assign(nf, static_cast<std::uint8_t>(nan_mode::forbidden));
  q.index.assign(static_cast<std::size_t>(groups_of(q.features) * q.padded_rows), 0u);
  for (const column_view& c : p.features()) {
    CBG_EXPECTS(!is_device_side(c.memory), status::device,
                "quantize_host reads host or pinned memory only");
  }

  const std::vector<std::uint32_t> subset =
      border_subset(static_cast<std::uint64_t>(q.rows), o.max_subset_size, p.ctx()->seed());
  const std::uint32_t m =
      subset.empty() ? static_cast<std::uint32_t>(q.rows) : static_cast<std::uint32_t>(subset.size());
  const std::shared_ptr<const std::vector<double>> logs = greedy_log_table(m);
  std::vector<float> sample(m);
  std::vector<greedy_bin> heap(greedy_heap_capacity);
  std::vector<std::uint32_t> starts(border_stride);

  for (std::size_t f = 0; f < nf; ++f) {
    if (settings.border_count[f] == 0) continue;
    const column_view& c = p.features()[f];
    std::uint32_t valid = 0;
    for (std::uint32_t i = 0; i < m; ++i) {
      const float v = to_feature_float(c.value(subset.empty() ? i : subset[i]));
      if (!is_nan(v)) sample[valid++] = v;
    }
    const bool has_nan = valid < m;
    const auto requested = static_cast<nan_mode>(settings.mode[f]);
    CBG_EXPECTS(!(has_nan && requested == nan_mode::forbidden), status::bad_data,
                fmt::format("feature {} has NaN values and its nan_mode is Forbidden", f));
    std::sort(sample.begin(), sample.begin() + valid);
    float* out = q.borders.data() + f * border_stride;
    int count = greedy_log_sum_borders(sample.data(), valid,
                                       search_border_budget(settings.border_count[f], has_nan),
                                       logs->data(), heap.data(), starts.data(), out);
    const nan_mode mode = effective_nan_mode(requested, has_nan);
    count = add_nan_border(out, count, mode);
    q.border_count[f] = count;
    q.mode[f] = static_cast<std::uint8_t>(mode);
  }

  for (std::size_t f = 0; f < nf; ++f) {
    if (q.border_count[f] == 0) continue;  // every value in bin 0
    const column_view& c = p.features()[f];
    const float* b = q.borders.data() + f * border_stride;
    const auto mode = static_cast<nan_mode>(q.mode[f]);
    std::uint32_t* words = q.index.data() + static_cast<std::size_t>(f / 4) * q.padded_rows;
    const unsigned shift = 8u * static_cast<unsigned>(f % 4);
    for (std::int64_t r = 0; r < q.rows; ++r) {
      words[r] |= bin_of(to_feature_float(c.value(r)), b, q.border_count[f], mode) << shift;
    }
  }
  return q;
}

}  // namespace cbg::quantize
