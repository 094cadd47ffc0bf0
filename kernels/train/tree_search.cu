// SPDX-License-Identifier: Apache-2.0
// GPU tree search (tree_search.hpp). Placeholder until the kernels land: the host reference
// (src/train/tree_search_host.cpp) is the implementation to use meanwhile.
#include "cbg/core/error.hpp"
#include "cbg/train/tree_search.hpp"

namespace cbg::train {

class device_search_workspace {};

void device_search_workspace_deleter::operator()(device_search_workspace* w) const noexcept { delete w; }

device_search_workspace_ptr make_device_search_workspace(const context&, const quantize::device_quantized&,
                                                         int, const tree_search_params&) {
  CBG_FAIL(status::not_implemented, "search_tree_device: the GPU tree learner is not built yet");
}

tree_structure search_tree_device(const context&, const device_search_input&, const tree_search_params&,
                                  device_search_workspace&, std::uint32_t*) {
  CBG_FAIL(status::not_implemented, "search_tree_device: the GPU tree learner is not built yet");
}

}  // namespace cbg::train
