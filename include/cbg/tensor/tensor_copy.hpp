// SPDX-License-Identifier: Apache-2.0
// Copying a tensor into another of the same dtype and shape, any strides, any memory the context
// reaches, through the accounted copy path.
#pragma once

#include "cbg/runtime/context.hpp"
#include "cbg/tensor/tensor_view.hpp"

namespace cbg {

// Blocks until done. Throws cbg::error (dtype, shape, unsupported for zero strides, strict_d2h).
void copy_tensor(const context& ctx, const mutable_tensor_view& dst, const tensor_view& src);

}  // namespace cbg
