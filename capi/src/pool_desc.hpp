// SPDX-License-Identifier: Apache-2.0
// The parts of cbg_pool_desc_t handling that cbg_pool_from_dlpack and cbg_pool_from_arrow share.
#pragma once

#include "cbg/data/pool.hpp"
#include "cbgpu/cbgpu.h"

namespace cbg::capi {

// Copies the caller's descriptor: its struct_size must be the size of a released layout (the one
// before string_columns, or the current one), so a size cutting a field in two is refused.
void read_pool_desc(const cbg_pool_desc_t& in, cbg_pool_desc_t& out);
// Deletes every consumed tensor of `d` once: used when a call fails before a pool owns them.
void release_consumed(const cbg_pool_desc_t& d) noexcept;
// The tensors and roles of `d` as pool inputs (throws on inconsistent counts).
pool_inputs to_inputs(const cbg_pool_desc_t& d);
// Applies d.feature_names when given (one per feature).
void name_features(pool& p, const cbg_pool_desc_t& d);

}  // namespace cbg::capi
