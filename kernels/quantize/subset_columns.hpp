// SPDX-License-Identifier: Apache-2.0
// The stages that quantize float columns of the same rows over a border subset drawn once
// (src/quantize/subset_quantizer.cpp runs them with the quantizer's gather, sort and search,
// stages.hpp): the stand-in for a Uniform column's sorted subset (its least and greatest values,
// make_uniform_stand_in), every column's bins as bytes, and the borders packed for one read-back.
// Each launcher only enqueues work on `stream`; none synchronises.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace cbg::quantize::detail {

// For `features` float columns: ends[3f..3f+3) and nan_counts[f], column f's uniform_stand_in over
// the subset (subset == nullptr: rows 0..m-1; m > 0). `scratch`: 3 * features words.
void uniform_stand_ins(const float* const* columns, std::int64_t features, const std::uint32_t* subset, std::uint32_t m,
                       std::uint32_t* scratch, float* ends, unsigned int* nan_counts, cudaStream_t stream);

// bins[f][r] = the bin of columns[f][r] (bin_of: borders[f * border_stride ...], border_count[f],
// mode[f]) for every column f < features and row r < rows.
void byte_bins(const float* const* columns, std::uint8_t* const* bins, std::int64_t features, std::int64_t rows,
               const float* borders, const std::int32_t* border_count, const std::uint8_t* mode, cudaStream_t stream);

// results[1 + slot[f] * stride] = border_count[f], followed by its borders' bits, for every f <
// features (stride > every count).
void pack_borders(std::int64_t features, const std::uint32_t* slot, std::size_t stride, const float* borders,
                  const std::int32_t* border_count, std::uint32_t* results, cudaStream_t stream);

}  // namespace cbg::quantize::detail
