// SPDX-License-Identifier: Apache-2.0
// cbg_tensor_copy.
#include "cbg/tensor/tensor_copy.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "tensor_ref.hpp"

extern "C" {

CBG_API cbg_status cbg_tensor_copy(cbg_context_t* ctx, const cbg_tensor_ref_t* dst, const cbg_tensor_ref_t* src) {
  using namespace cbg::capi;
  return guarded(__func__, [&] {
    const auto& c = checked(ctx, "ctx");
    require(dst, "dst");
    require(src, "src");
    const int device = c.impl->device();
    // Both tensors are borrowed here: no dlpack_owner, the caller keeps them.
    const cbg::tensor_view s =
        cbg::import_tensor(to_core(*src), cbg::import_rules{"src", 0, cbg::max_tensor_rank, false, device});
    const cbg::mutable_tensor_view d =
        cbg::import_mutable_tensor(to_core(*dst), cbg::import_rules{"dst", 0, cbg::max_tensor_rank, true, device});
    cbg::copy_tensor(*c.impl, d, s);
  });
}

}  // extern "C"
