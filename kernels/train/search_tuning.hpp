// SPDX-License-Identifier: Apache-2.0
// Knobs and figures of the GPU tree search for benchmarks and tests (not part of the contract).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernels/train/stages.hpp"

namespace cbg::train::detail {

struct search_stats {
  int launches = 0;                                   // kernels enqueued by the last search
  int memsets = 0;                                    // cudaMemsetAsync calls of the last search
  std::vector<std::pair<std::string, float>> stages;  // profiling: (stage, ms) in order
};

// Records an event after every stage of the following searches (adds host work; benchmarks only).
void set_search_profiling(device_search_workspace& w, bool on);
// Histogram blocks resident per SM that the plans aim at (default 2; the occupancy bounds it).
void set_histogram_blocks_per_sm(device_search_workspace& w, const quantize::device_quantized& q, int blocks);
// histogram_fast where it applies (one dimension; the default), else histogram_simple everywhere.
void set_fast_histograms(device_search_workspace& w, const quantize::device_quantized& q, bool on);
// histogram_fast: packed word groups (4 features) per block where they fit (1, 2 or 4; 0, the default:
// by the feature count).
void set_histogram_groups_per_block(device_search_workspace& w, const quantize::device_quantized& q, int groups);
// histogram_fast: L2 prefetch of the next round's rows (default off: slower where measured).
void set_histogram_prefetch(device_search_workspace& w, const quantize::device_quantized& q, bool on);
// histogram_fast at levels >= 1: read only the rows of computed children from a list the leaf update
// writes (default on), else every row.
void set_histogram_row_lists(device_search_workspace& w, bool on);
const search_stats& last_search_stats(const device_search_workspace& w);
const std::vector<histogram_plan>& histogram_plans(const device_search_workspace& w);  // per level

}  // namespace cbg::train::detail
