// SPDX-License-Identifier: Apache-2.0
// Turns a dataset read from a file into a pool through the C ABI: one host tensor per feature
// column (float32 numeric, int64 categorical codes), plus label, weight and baseline tensors.
#pragma once

#include "cbgpu/cbgpu.h"
#include "dataset.hpp"
#include "library.hpp"

namespace cbgpu_bench {

// Moves the arrays of `data` into tensors the library consumes; `data` keeps its shape facts.
// With device >= 0 (a GPU context) every array is first copied to that device (the GPU trainer
// reads device memory).
pool_handle make_pool(cbg_context_t* ctx, loaded_dataset& data, int32_t device = CBG_DEVICE_CPU);

}  // namespace cbgpu_bench
