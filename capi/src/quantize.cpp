// SPDX-License-Identifier: Apache-2.0
// Quantization entry points.
#include <cstring>

#include <fmt/format.h>

#include "cbg/quantize/quantizer.hpp"
#include "cbg/runtime/device.hpp"
#include "desc.hpp"
#include "guard.hpp"
#include "handles.hpp"

namespace {

using namespace cbg::capi;
using cbg::quantize::border_type;

static_assert(CBG_BORDER_GREEDY_LOG_SUM == static_cast<int>(border_type::greedy_log_sum));
static_assert(CBG_BORDER_GREEDY_MIN_ENTROPY == static_cast<int>(border_type::greedy_min_entropy));
static_assert(CBG_BORDER_MEDIAN == static_cast<int>(border_type::median));
static_assert(CBG_BORDER_UNIFORM == static_cast<int>(border_type::uniform));
static_assert(CBG_BORDER_UNIFORM_AND_QUANTILES == static_cast<int>(border_type::uniform_and_quantiles));
static_assert(CBG_BORDER_MIN_ENTROPY == static_cast<int>(border_type::min_entropy));
static_assert(CBG_BORDER_MAX_LOG_SUM == static_cast<int>(border_type::max_log_sum));
static_assert(CBG_SUBSET_SAMPLED == static_cast<int>(cbg::quantize::subset_rule::sampled));
static_assert(CBG_SUBSET_FIRST_ROWS == static_cast<int>(cbg::quantize::subset_rule::first_rows));

cbg::quantize::options to_options(const cbg_quantize_desc_t& d) {
  cbg::quantize::options o;
  o.border_count = d.border_count;
  CBG_EXPECTS(d.nan_mode >= 0 && d.nan_mode <= 2, cbg::status::invalid_argument,
              fmt::format("desc.nan_mode {} is not a CBG_NAN_MODE_*", d.nan_mode));
  o.mode = static_cast<cbg::quantize::nan_mode>(d.nan_mode);
  CBG_EXPECTS(d.border_type >= 0 && d.border_type < cbg::quantize::border_type_count, cbg::status::invalid_argument,
              fmt::format("desc.border_type {} is not a CBG_BORDER_*", d.border_type));
  o.type = static_cast<cbg::quantize::border_type>(d.border_type);
  o.max_subset_size = d.max_subset_size;
  CBG_EXPECTS(d.subset_rule == CBG_SUBSET_SAMPLED || d.subset_rule == CBG_SUBSET_FIRST_ROWS,
              cbg::status::invalid_argument, fmt::format("desc.subset_rule {} is not a CBG_SUBSET_*", d.subset_rule));
  o.subset = static_cast<cbg::quantize::subset_rule>(d.subset_rule);
  if (d.n_overrides != 0) {
    require(d.override_features, "desc.override_features");
    require(d.override_border_counts, "desc.override_border_counts");
    require(d.override_nan_modes, "desc.override_nan_modes");
  }
  for (std::size_t i = 0; i < d.n_overrides; ++i) {
    o.overrides.push_back({d.override_features[i], d.override_border_counts[i], d.override_nan_modes[i],
                           d.override_border_types != nullptr ? d.override_border_types[i] : -1});
  }
  return o;
}

std::int64_t checked_feature(const cbg_quantized_t& q, std::int64_t feature) {
  const std::int64_t n = q.on_device ? q.device.features : q.host.features;
  CBG_EXPECTS(feature >= 0 && feature < n, cbg::status::invalid_argument,
              fmt::format("feature {} is outside 0..{}", feature, n - 1));
  return feature;
}

}  // namespace

extern "C" {

CBG_API cbg_status cbg_quantize_desc_init(cbg_quantize_desc_t* desc) {
  return guarded(__func__, [&] {
    require(desc, "desc");
    init_desc(*desc);
    desc->border_count = cbg::quantize::default_border_count;
    desc->nan_mode = CBG_NAN_MODE_MIN;
    desc->border_type = CBG_BORDER_GREEDY_LOG_SUM;
    desc->max_subset_size = cbg::quantize::default_max_subset_size;
    desc->subset_rule = CBG_SUBSET_SAMPLED;
  });
}

CBG_API cbg_status cbg_quantize_pool(cbg_pool_t* pool, const cbg_quantize_desc_t* desc, cbg_quantized_t** out) {
  return guarded(__func__, [&] {
    require(desc, "desc");
    require(out, "out");
    *out = nullptr;
    cbg_quantize_desc_t d{};
    read_desc(*desc, d, sizeof(cbg_quantize_desc_t), "cbg_quantize_desc_t");
    const cbg::pool& p = checked(pool, "pool").impl;
    const cbg::quantize::options o = to_options(d);
    cbg_quantized_t q;
    q.ctx = p.ctx();
    q.on_device = !p.ctx()->is_cpu();
    if (q.on_device) {
      q.device = cbg::quantize::quantize_device(p, o);
    } else {
      q.host = cbg::quantize::quantize_host(p, o);
    }
    publish(out, std::move(q));
  });
}

CBG_API cbg_status cbg_quantized_free(cbg_quantized_t* q) {
  return guarded(__func__, [&] { destroy(q, "q"); });
}

CBG_API cbg_status cbg_quantized_borders(const cbg_quantized_t* q, int64_t feature, float* borders, int32_t capacity,
                                         int32_t* count, int32_t* nan_mode) {
  return guarded(__func__, [&] {
    const cbg_quantized_t& h = checked(q, "q");
    require(count, "count");
    const std::int64_t f = checked_feature(h, feature);
    float b[cbg::quantize::border_stride];
    std::int32_t n = 0;
    std::uint8_t mode = 0;
    if (h.on_device) {
      const cbg::context& ctx = *h.ctx;
      cbg::scoped_device guard(ctx.device());
      const auto site = CBG_COPY_SITE("quantized borders");
      cbg::copy_bytes(&n, cbg::memory_kind::host, h.device.border_count.data() + f, cbg::memory_kind::device, sizeof(n),
                      ctx.stream(), ctx.copies(), ctx.rules(), site);
      cbg::copy_bytes(&mode, cbg::memory_kind::host, h.device.mode.data() + f, cbg::memory_kind::device, 1,
                      ctx.stream(), ctx.copies(), ctx.rules(), site);
      if (n > 0) {
        cbg::copy_bytes(b, cbg::memory_kind::host, h.device.borders.data() + f * cbg::quantize::border_stride,
                        cbg::memory_kind::device, sizeof(float) * static_cast<std::size_t>(n), ctx.stream(),
                        ctx.copies(), ctx.rules(), site);
      }
      ctx.sync();
    } else {
      const auto i = static_cast<std::size_t>(f);
      n = h.host.border_count[i];
      mode = h.host.mode[i];
      std::memcpy(b, h.host.borders.data() + i * cbg::quantize::border_stride,
                  sizeof(float) * static_cast<std::size_t>(n));
    }
    *count = n;
    if (nan_mode != nullptr) *nan_mode = mode;
    CBG_EXPECTS(capacity >= n, cbg::status::invalid_argument,
                fmt::format("capacity {} is below the {} borders of feature {}", capacity, n, f));
    if (n > 0) {
      require(borders, "borders");
      std::memcpy(borders, b, sizeof(float) * static_cast<std::size_t>(n));
    }
  });
}

CBG_API cbg_status cbg_quantized_feature_bins(const cbg_quantized_t* q, int64_t feature, uint8_t* bins,
                                              size_t capacity) {
  return guarded(__func__, [&] {
    const cbg_quantized_t& h = checked(q, "q");
    const std::int64_t f = checked_feature(h, feature);
    const std::int64_t rows = h.on_device ? h.device.rows : h.host.rows;
    CBG_EXPECTS(capacity >= static_cast<std::size_t>(rows), cbg::status::invalid_argument,
                fmt::format("capacity {} is below the {} rows", capacity, rows));
    if (rows == 0) return;
    require(bins, "bins");
    if (h.on_device) {
      const cbg::context& ctx = *h.ctx;
      cbg::scoped_device guard(ctx.device());
      // Byte f % 4 of each word of group f / 4: a 2-D copy with a 4-byte source pitch.
      const auto* src =
          reinterpret_cast<const unsigned char*>(h.device.index.data() + (f / 4) * h.device.padded_rows) + f % 4;
      cbg::copy_bytes_2d(bins, 1, cbg::memory_kind::host, src, 4, cbg::memory_kind::device, 1,
                         static_cast<std::size_t>(rows), ctx.stream(), ctx.copies(), ctx.rules(),
                         CBG_COPY_SITE("quantized feature bins"));
      ctx.sync();
    } else {
      for (std::int64_t r = 0; r < rows; ++r) {
        bins[r] = static_cast<uint8_t>(h.host.bin(r, f));
      }
    }
  });
}

}  // extern "C"
