// SPDX-License-Identifier: Apache-2.0
// The targets of the GPU's ordered statistics (targets_device.hpp).
#include "src/ctr/targets_device.hpp"

#include <algorithm>
#include <string>

#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/quantize/quantizer.hpp"

namespace cbg::ctr::detail {

void ensure_targets(const pool& learn, const train::target_rule& rule, bool binarize, const permutation_rule& perm,
                    quantize::border_type border_type, int border_count, target_state& t) {
  const context& ctx = *learn.ctx();
  const std::int64_t n = learn.num_rows();
  const auto un = static_cast<std::size_t>(n);
  if (t.order.size() == un) return;
  const bool multiclass =
      rule.loss == train::loss_kind::multiclass || rule.loss == train::loss_kind::multiclass_one_vs_all;
  CBG_EXPECTS(learn.label().has_value(), status::bad_data, "the learn pool has no label");
  t.targets = device_buffer<float>(un, ctx.stream(), ctx.resource());
  train::target_rule r = rule;
  if (multiclass) r.classes = max_target_classes;  // class indices; checked below
  training_targets(ctx, column_of(*learn.label(), 0), r, n, t.targets.data());
  t.fixed_scale = fixed_scale_for(largest_abs(ctx, t.targets.data(), n, "CTR largest |target|"), n);
  target_borders borders;
  borders.count = 1;
  borders.values[0] = 0.5f;
  if (multiclass) {
    const float top = largest(ctx, t.targets.data(), n, "CTR class count");
    CBG_EXPECTS(top >= 0 && top < static_cast<float>(max_target_classes), status::bad_data,
                "target CTRs take class indices 0 .. " + std::to_string(max_target_classes - 1) + " as labels");
    t.classes = std::max(2, static_cast<int>(top) + 1);
  } else if (binarize) {
    // The target borders: the quantizer's borders of the targets, over all rows up to 2^24.
    pool_parts parts;
    column_view targets;
    targets.data = t.targets.data();
    targets.memory = memory_kind::device;
    targets.device_id = ctx.device();
    targets.size = n;
    parts.features.push_back(targets);
    const pool tp = pool::borrow(learn.ctx(), std::move(parts));
    quantize::options qo;
    qo.border_count = std::min(border_count, max_target_borders);
    qo.mode = quantize::nan_mode::forbidden;
    qo.type = border_type;
    qo.max_subset_size = static_cast<std::uint32_t>(std::min<std::int64_t>(n, std::int64_t{1} << 24));
    const quantize::device_quantized q = quantize::quantize_device(tp, qo);
    const std::int32_t count = download(ctx, q.border_count.data(), 1, "CTR target border count")[0];
    if (count == 0) {  // a constant target: every row is class 0
      borders.values[0] = download(ctx, t.targets.data(), 1, "CTR constant target")[0];
    } else {
      const std::vector<float> b =
          download(ctx, q.borders.data(), static_cast<std::size_t>(count), "CTR target borders");
      borders.count = count;
      std::copy(b.begin(), b.end(), borders.values);
    }
    t.classes = borders.count + 1;
  }
  t.cls = device_buffer<std::uint8_t>(un, ctx.stream(), ctx.resource());
  target_classes(ctx, t.targets.data(), borders, multiclass, n, t.cls.data());
  t.order = permutation(ctx, perm, n);
}

}  // namespace cbg::ctr::detail
