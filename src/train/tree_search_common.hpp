// SPDX-License-Identifier: Apache-2.0
// What the host and GPU tree searches share besides score_math.hpp: argument checks and the bin
// layout of the histograms. Internal (not installed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cbg/train/tree_search.hpp"

namespace cbg::train::detail {

// Output dimensions the learner accepts (MultiClass with up to this many classes).
inline constexpr int max_search_dims = 256;

// Throws invalid_argument / null_pointer for bad arguments (one of q_host, q_dev given).
void validate_search(const quantize::host_quantized* q_host, const quantize::device_quantized* q_dev, int dims,
                     const void* der, const void* weight, const std::vector<double>& noise,
                     const std::vector<float>& feature_weight, const tree_search_params& params);

// "der (dimension j) holds a NaN or infinity" / "weight holds ...", for channel c of dims + 1.
std::string non_finite_message(int channel, int dims);

// The structure of splits[0..count) (built here: nvcc's front end rejects copying `split` into a
// vector with GCC 12's library).
tree_structure structure_of(const split* splits, int count);

// Histogram columns: feature f owns bins offset[f] .. offset[f] + bins[f], bins = border_count + 1
// (0 for a feature without borders: never split on, no column).
struct bin_layout {
  std::vector<std::int32_t> bins;
  std::vector<std::int64_t> offset;
  std::int64_t total_bins = 0;
  std::int32_t max_bins = 0;
};

inline bin_layout make_bin_layout(const std::vector<std::int32_t>& border_count) {
  bin_layout l;
  l.bins.resize(border_count.size());
  l.offset.resize(border_count.size());
  for (std::size_t f = 0; f < border_count.size(); ++f) {
    const std::int32_t nb = border_count[f] > 0 ? border_count[f] + 1 : 0;
    l.bins[f] = nb;
    l.offset[f] = l.total_bins;
    l.total_bins += nb;
    if (nb > l.max_bins) l.max_bins = nb;
  }
  return l;
}

}  // namespace cbg::train::detail
