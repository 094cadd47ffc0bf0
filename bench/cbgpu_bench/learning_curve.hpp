// SPDX-License-Identifier: Apache-2.0
// `fit --plot-learning-curve FILE.png`: the learn and eval metric per iteration as a small line
// chart, written as a PNG by hand (palette image, zlib stream of stored deflate blocks: no image
// or compression library needed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cbgpu_bench {

// Writes a PNG (8-bit palette) of `pixels` ([height][width] palette indexes) with `palette`
// (RGB triples). Throws usage_error when the file cannot be written.
void write_png(const std::string& path, int32_t width, int32_t height, const std::vector<uint8_t>& palette,
               const std::vector<uint8_t>& pixels);

// Plots `learn` (blue) and `eval` (orange) against the iteration on a shared y range (NaN values
// are skipped; either may be empty), with axes and tick marks at the y range's ends; returns the
// y range as "min .. max" for the caller to print.
std::string plot_learning_curve(const std::string& path, const std::vector<double>& learn,
                                const std::vector<double>& eval);

}  // namespace cbgpu_bench
