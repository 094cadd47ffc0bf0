// SPDX-License-Identifier: Apache-2.0
// Compiled with the core layer's include directories, this include against the arrows must fail
// (the layers.core_to_capi test expects the compiler's "not found").
#include "cbgpu/cbgpu.h"
