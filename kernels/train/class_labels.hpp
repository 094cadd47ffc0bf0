// SPDX-License-Identifier: Apache-2.0
// The class_names relabelling kernel's launcher (src/train/class_labels.cpp drives it).
#pragma once

#include <cuda_runtime_api.h>

#include "cbg/data/column_view.hpp"

namespace cbg::train::launch {

// out[i]: the class index of labels[i] among `count` sorted names (class_of[k] for sorted_names[k]),
// -1 for an unknown one; first_bad (the all-ones value before the call): the lowest unknown row.
void relabel(const column_view& labels, const double* sorted_names, const float* class_of, int count, float* out,
             unsigned long long* first_bad, cudaStream_t stream);

}  // namespace cbg::train::launch
