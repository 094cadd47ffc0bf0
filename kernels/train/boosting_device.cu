// SPDX-License-Identifier: Apache-2.0
// The GPU data passes of the boosting loop (boosting.hpp).
#include "cbg/core/error.hpp"
#include "cbg/train/boosting.hpp"

namespace cbg::train {

std::unique_ptr<boosting_backend> make_device_backend(const backend_inputs&) {
  CBG_FAIL(status::not_implemented, "GPU training is not implemented yet");
}

}  // namespace cbg::train
