// SPDX-License-Identifier: Apache-2.0
// cbg_tensor_ref_t -> cbg::tensor_ref (the same two fields; the kinds share their values).
#pragma once

#include "cbg/tensor/dlpack_import.hpp"
#include "cbgpu/cbgpu.h"

namespace cbg::capi {

static_assert(CBG_TENSOR_NONE == static_cast<int>(tensor_ref_kind::none));
static_assert(CBG_TENSOR_DLPACK_VERSIONED == static_cast<int>(tensor_ref_kind::dlpack_versioned));
static_assert(CBG_TENSOR_DLPACK_LEGACY == static_cast<int>(tensor_ref_kind::dlpack_legacy));
static_assert(CBG_TENSOR_DLTENSOR == static_cast<int>(tensor_ref_kind::dltensor));

inline tensor_ref to_core(const cbg_tensor_ref_t& r) noexcept {
  return tensor_ref{static_cast<tensor_ref_kind>(r.kind), r.ptr};
}

}  // namespace cbg::capi
