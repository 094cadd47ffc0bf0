// SPDX-License-Identifier: Apache-2.0
// The GPU tree search's hook for a device_search_extension (search_extension_device.hpp): one level's
// extra candidate columns, after the pool's split has been chosen (stages.hpp's choose_split).
// Internal (kernels/train).
#pragma once

#include "kernels/train/stages.hpp"

#include "cbg/quantize/quantizer.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/train/search_extension_device.hpp"

namespace cbg::train::detail {

// Level `level` of a search with `ext`: reads the splits so far back, asks the extension for its
// columns, builds their histograms over the level's leaves (every leaf, no subtraction), scores
// every border as the host reference does (search_tree_host: same sums, same order, same noise)
// and compares the best with the pool's best (v.best, after score_splits). When a column wins it
// is committed and the search state, the next level's compute bits and the leaf index are updated
// from its bins; returns true then (the caller skips update_leaves), false when the pool's split
// stands. v.row_list must be null (the leaf update here writes no row lists).
bool extension_level(const context& ctx, const search_view& v, const quantize::device_quantized& q,
                     device_search_extension& ext, const tree_search_params& params, int level, bool last_level);

}  // namespace cbg::train::detail
