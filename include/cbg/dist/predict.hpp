// SPDX-License-Identifier: Apache-2.0
// Prediction with rows spread over several GPUs (src/dist/predict.cpp).
#pragma once

#include <string>

#include "cbg/apply/evaluator.hpp"

namespace cbg::dist {

// apply::predict_to_device, with the rows split into one contiguous block per device of `devices`
// (CatBoost's syntax; empty, or only the pool's device: exactly apply::predict_to_device). Each
// block's columns are copied device to device, evaluated on its device into a temporary, and the
// results copied device to device into `out` (device memory of the pool's device, row-major and
// compact). Ordered after `stream`'s earlier work; `stream` waits for the results. Blocks until
// the blocks' inputs are copied and their results are written.
void predict_to_devices(const std::string& devices, apply::device_model_cache& cache, const model::model& m,
                        const pool& p, const apply::predict_options& o, const mutable_tensor_view& out,
                        cudaStream_t stream);

// Throws unsupported when `devices` names anything but the pool's device (host outputs).
void refuse_other_devices(const std::string& devices, apply::device_model_cache& cache, const model::model& m,
                          const pool& p, const apply::predict_options& o, const mutable_tensor_view& out,
                          cudaStream_t stream);

}  // namespace cbg::dist
