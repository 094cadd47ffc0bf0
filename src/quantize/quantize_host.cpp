// SPDX-License-Identifier: Apache-2.0
// Host reference of the quantizer (the GPU version is kernels/quantize/quantize.cu); both follow
// quantize_math.hpp.
#include <algorithm>
#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/quantize/border_types.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/quantize/sampling.hpp"

namespace cbg::quantize {

namespace {

std::shared_ptr<const std::vector<double>> make_gains(penalty pen, std::uint32_t n) {
  auto t = std::make_shared<std::vector<double>>(static_cast<std::size_t>(n) + 1);
  for (std::uint32_t k = 0; k <= n; ++k) {
    const double w = static_cast<double>(k);
    (*t)[k] = pen == penalty::entropy ? -(w * std::log(w + 1e-8)) : std::log(w + 1e-8);
  }
  return t;
}

bool valid_type(int t) noexcept { return t >= 0 && t < border_type_count; }

}  // namespace

std::shared_ptr<const std::vector<double>> gain_table(penalty pen, std::uint32_t n) {
  CBG_EXPECTS(pen != penalty::none, status::internal, "no gain table for this border type");
  static std::mutex mutex;
  static std::shared_ptr<const std::vector<double>> tables[2];
  const std::scoped_lock lock(mutex);
  auto& table = tables[pen == penalty::entropy ? 1 : 0];
  if (table == nullptr || table->size() <= n) table = make_gains(pen, n);
  return table;
}

bool feature_settings::uses(penalty pen) const noexcept {
  for (std::size_t f = 0; f < type.size(); ++f) {
    if (border_count[f] != 0 && penalty_of(static_cast<border_type>(type[f])) == pen) return true;
  }
  return false;
}

bool feature_settings::uses_exact() const noexcept {
  for (std::size_t f = 0; f < type.size(); ++f) {
    if (border_count[f] != 0 && is_exact(static_cast<border_type>(type[f]))) return true;
  }
  return false;
}

feature_settings resolve_settings(const pool& p, const options& o) {
  CBG_EXPECTS(valid_type(static_cast<int>(o.type)), status::invalid_argument, "unknown border type");
  CBG_EXPECTS(o.border_count >= 1 && o.border_count <= max_border_count, status::invalid_argument,
              fmt::format("border_count {} is outside 1..{}", o.border_count, max_border_count));
  CBG_EXPECTS(o.mode == nan_mode::forbidden || o.mode == nan_mode::min || o.mode == nan_mode::max,
              status::invalid_argument, "unknown nan_mode");
  CBG_EXPECTS(o.max_subset_size >= 1, status::invalid_argument, "max_subset_size must be positive");
  CBG_EXPECTS(o.subset == subset_rule::sampled || o.subset == subset_rule::first_rows, status::invalid_argument,
              "unknown subset rule");
  const auto n = static_cast<std::size_t>(p.num_features());
  feature_settings s;
  s.border_count.assign(n, o.border_count);
  s.mode.assign(n, static_cast<std::uint8_t>(o.mode));
  s.type.assign(n, static_cast<std::uint8_t>(o.type));
  for (const feature_override& f : o.overrides) {
    CBG_EXPECTS(f.feature >= 0 && f.feature < p.num_features(), status::invalid_argument,
                fmt::format("override for feature {} of {}", f.feature, p.num_features()));
    const auto j = static_cast<std::size_t>(f.feature);
    if (f.border_count != 0) {
      CBG_EXPECTS(
          f.border_count >= 1 && f.border_count <= max_border_count, status::invalid_argument,
          fmt::format("feature {}: border_count {} is outside 1..{}", f.feature, f.border_count, max_border_count));
      s.border_count[j] = f.border_count;
    }
    if (f.mode != -1) {
      CBG_EXPECTS(f.mode >= 0 && f.mode <= 2, status::invalid_argument,
                  fmt::format("feature {}: unknown nan_mode {}", f.feature, f.mode));
      s.mode[j] = static_cast<std::uint8_t>(f.mode);
    }
    if (f.type != -1) {
      CBG_EXPECTS(valid_type(f.type), status::invalid_argument,
                  fmt::format("feature {}: unknown border type {}", f.feature, f.type));
      s.type[j] = static_cast<std::uint8_t>(f.type);
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    if (p.is_categorical(static_cast<std::int64_t>(j))) s.border_count[j] = 0;
  }
  return s;
}

subset_shape border_subset_shape(std::uint64_t rows, const options& o, const feature_settings& s) {
  subset_shape shape;
  const bool above = rows > o.max_subset_size;
  shape.drawn = above && o.subset == subset_rule::sampled;
  shape.m = above ? o.max_subset_size : static_cast<std::uint32_t>(rows);
  CBG_EXPECTS(!shape.drawn || rows <= 0xffffffffULL, status::unsupported,
              fmt::format("{} rows: the quantizer indexes rows with 32 bits", rows));
  CBG_EXPECTS(!s.uses_exact() || shape.m <= exact_max_subset, status::unsupported,
              fmt::format("MinEntropy/MaxLogSum borders from {} objects: at most {} are supported "
                          "(CatBoost sums their counts in float)",
                          shape.m, exact_max_subset));
  return shape;
}

namespace {

// What one feature's border search needs on the host, grown as needed.
class host_search {
 public:
  // The searched borders (before the NaN border) of `n` sorted non-NaN values.
  int run(border_type type, const float* sorted, std::uint32_t n, int budget, const double* log_gains,
          const double* entropy_gains, float* out) {
    const double* gains = penalty_of(type) == penalty::entropy ? entropy_gains : log_gains;
    int count = 0;
    switch (type) {
      case border_type::greedy_log_sum:
      case border_type::greedy_min_entropy:
        return greedy_borders(sorted, n, budget, gains, heap_.data(), starts_.data(), out);
      case border_type::median:
        count = median_candidates(sorted, n, budget, out);
        break;
      case border_type::uniform:
        count = uniform_candidates(sorted, n, budget, out);
        break;
      case border_type::uniform_and_quantiles:
        count = uniform_and_quantiles_candidates(sorted, n, budget, out);
        break;
      case border_type::min_entropy:
      case border_type::max_log_sum:
        count = exact_candidates(sorted, n, budget, gains, exact_scratch_for(n, budget), out);
        break;
    }
    return finish_borders(out, count);
  }

 private:
  template <class T>
  static T* grown(std::unique_ptr<T[]>& p, std::size_t& have, std::size_t want) {
    if (have < want) {
      p.reset(new T[want]);  // uninitialised: the search writes before it reads
      have = want;
    }
    return p.get();
  }
  exact_scratch exact_scratch_for(std::uint32_t n, int k) {
    const std::size_t n1 = std::max<std::size_t>(n, 1);
    float* values = grown(values_, values_size_, n1);
    double* err = grown(err_, err_size_, 4 * n1);
    std::uint32_t* idx = grown(idx_, idx_size_, 3 * n1);
    std::uint32_t* choice = grown(choice_, choice_size_, std::max<std::size_t>(exact_choice_size(n, k), 1));
    return exact_scratch{values, idx, err, err + n1, err + 2 * n1, err + 3 * n1, idx + n1, idx + 2 * n1, choice};
  }

  std::vector<greedy_bin> heap_ = std::vector<greedy_bin>(greedy_heap_capacity);
  std::vector<std::uint32_t> starts_ = std::vector<std::uint32_t>(border_stride);
  std::unique_ptr<float[]> values_;
  std::unique_ptr<double[]> err_;
  std::unique_ptr<std::uint32_t[]> idx_;
  std::unique_ptr<std::uint32_t[]> choice_;
  std::size_t values_size_ = 0, err_size_ = 0, idx_size_ = 0, choice_size_ = 0;
};

}  // namespace

namespace {

// Every value of `p` to its bin under q's borders and modes, into q's (zeroed) index.
void binarize_into(const pool& p, host_quantized& q) {
  const auto nf = static_cast<std::size_t>(q.features);
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
}

}  // namespace

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
    CBG_EXPECTS(!is_device_side(c.memory), status::device, "quantize_host reads host or pinned memory only");
  }

  const subset_shape shape = border_subset_shape(static_cast<std::uint64_t>(q.rows), o, settings);
  const std::uint32_t m = shape.m;
  const std::vector<std::uint32_t> subset =
      shape.drawn ? border_subset(static_cast<std::uint64_t>(q.rows), o.max_subset_size, p.ctx()->seed())
                  : std::vector<std::uint32_t>{};
  const auto log_gains = settings.uses(penalty::log_sum) ? gain_table(penalty::log_sum, m) : nullptr;
  const auto entropy_gains = settings.uses(penalty::entropy) ? gain_table(penalty::entropy, m) : nullptr;
  std::vector<float> sample(m);
  host_search search;

  for (std::size_t f = 0; f < nf; ++f) {
    if (settings.border_count[f] == 0) continue;
    const column_view& c = p.features()[f];
    std::uint32_t valid = 0;
    for (std::uint32_t i = 0; i < m; ++i) {
      const float v = to_feature_float(c.value(shape.drawn ? subset[i] : i));
      if (!is_nan(v)) sample[valid++] = v;
    }
    const bool has_nan = valid < m;
    const auto requested = static_cast<nan_mode>(settings.mode[f]);
    CBG_EXPECTS(!(has_nan && requested == nan_mode::forbidden), status::bad_data,
                fmt::format("feature {} has NaN values and its nan_mode is Forbidden", f));
    std::sort(sample.begin(), sample.begin() + valid);
    float* out = q.borders.data() + f * border_stride;
    int count = search.run(static_cast<border_type>(settings.type[f]), sample.data(), valid,
                           search_border_budget(settings.border_count[f], has_nan),
                           log_gains != nullptr ? log_gains->data() : nullptr,
                           entropy_gains != nullptr ? entropy_gains->data() : nullptr, out);
    const nan_mode mode = effective_nan_mode(requested, has_nan);
    count = add_nan_border(out, count, mode);
    q.border_count[f] = count;
    q.mode[f] = static_cast<std::uint8_t>(mode);
  }

  binarize_into(p, q);
  return q;
}

host_quantized binarize_host(const pool& p, const host_quantized& like) {
  CBG_EXPECTS(p.num_features() == like.features, status::internal,
              "binarize_host: the pool's features differ from the quantized set's");
  for (const column_view& c : p.features()) {
    CBG_EXPECTS(!is_device_side(c.memory), status::device, "binarize_host reads host or pinned memory only");
  }
  host_quantized q;
  q.rows = p.num_rows();
  q.features = like.features;
  q.padded_rows = padded_rows_of(q.rows);
  q.borders = like.borders;
  q.border_count = like.border_count;
  q.mode = like.mode;
  q.index.assign(static_cast<std::size_t>(groups_of(q.features) * q.padded_rows), 0u);
  binarize_into(p, q);
  return q;
}

}  // namespace cbg::quantize
