/* SPDX-License-Identifier: Apache-2.0 */
/* Compiled with -std=c99/-std=c11 -pedantic-errors -Werror by CTest: the public header must stand on
 * its own in strict C, with no DLPack or CUDA header before it. */
#include "cbgpu/cbgpu.h"

static int use_types(void) {
  cbg_context_desc_t ctx_desc;
  cbg_pool_desc_t pool_desc;
  cbg_copy_stats_t stats;
  cbg_pool_info_t info;
  cbg_tensor_ref_t ref;
  ctx_desc.struct_size = sizeof ctx_desc;
  pool_desc.struct_size = sizeof pool_desc;
  stats.struct_size = sizeof stats;
  info.struct_size = sizeof info;
  ref.kind = CBG_TENSOR_NONE;
  ref.ptr = 0;
  return (int)(ctx_desc.struct_size + pool_desc.struct_size + stats.struct_size + info.struct_size) + ref.kind +
         CBG_VERSION_NUMBER + CBG_ERR_INTERNAL;
}

int main(void) { return use_types() == 0; }
