// SPDX-License-Identifier: Apache-2.0
// The public header compiled as C++ (CTest runs -std=c++11 -pedantic-errors -Werror -fsyntax-only).
#include "cbgpu/cbgpu.h"

static_assert(sizeof(cbg_status) == 4, "cbg_status is a 32-bit integer");

int main() {
  cbg_context_t* ctx = nullptr;
  return cbg_context_create(nullptr, &ctx) == CBG_OK ? cbg_context_free(ctx) : 1;
}
