// SPDX-License-Identifier: Apache-2.0
// Compiled with the kernels layer's include directories, this include against the arrows must fail
// (the layers.kernels_to_core test expects the compiler's "not found").
#include "src/train/boosting_common.hpp"
