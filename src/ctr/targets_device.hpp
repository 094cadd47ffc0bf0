// SPDX-License-Identifier: Apache-2.0
// The targets of the GPU's ordered statistics (prepare_device.cpp, combinations_device.cpp): the
// permutation and the target classes, made once from the learn labels over the launchers of
// kernels/ctr/ctr_device.hpp. Internal (not installed).
#pragma once

#include <cstdint>

#include "cbg/data/pool.hpp"
#include "cbg/quantize/border_types.hpp"
#include "cbg/train/boosting.hpp"
#include "kernels/ctr/ctr_device.hpp"

namespace cbg::ctr::detail {

// Fills `t` from the learn labels under `rule` (the first time only): classes by `border_count`
// target borders of type `border_type` when `binarize`, class indices for multiclass, else
// target > 0.5.
void ensure_targets(const pool& learn, const train::target_rule& rule, bool binarize, const permutation_rule& perm,
                    quantize::border_type border_type, int border_count, target_state& t);

}  // namespace cbg::ctr::detail
