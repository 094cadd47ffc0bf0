// SPDX-License-Identifier: Apache-2.0
// The border sample of a training over several processes (src/dist/sharded_backend.cpp): the rows
// whose values the borders come from, chosen over all ranks' rows by the quantizer's subset rule,
// as one GPU holding every row would choose them (quantizer.hpp: all rows up to max_subset_size,
// else max_subset_size rows drawn with CatBoost's generator, or the first ones). Each rank gathers
// only these rows from the others (at most max_subset_size of them, 200000 by default) instead of
// every rank's whole feature set, so a rank's device memory for its borders is O(its own rows +
// the sample). The borders of a set depend only on the sorted values of its border subset
// (border_types.hpp) and its NaN presence, so quantizing [the sample; this rank's rows] with the
// first_rows rule and max_subset_size = the sample's size gives the single-GPU borders, and this
// rank's rows get the single-GPU bins.
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/dist/dist.hpp"
#include "cbg/quantize/quantizer.hpp"

namespace cbg::dist {

struct border_sample {
  std::uint32_t size = 0;            // rows in the sample, over all ranks
  std::vector<std::int64_t> counts;  // per rank: the sample rows it holds (their sum is size)
  std::vector<std::int64_t> local;   // this rank's sample rows, as its own row indices, ascending
};

// The sample of `split`'s rows (rank order: the rows of one GPU) for quantization options `o` and
// the features' settings `s`; `seed` is the context's (the draw's, as quantize_device takes it).
// Throws what border_subset_shape throws (32-bit rows, too large a subset for an exact type).
border_sample plan_border_sample(const row_split& split, int rank, const quantize::options& o,
                                 const quantize::feature_settings& s, std::uint64_t seed);

// The options that quantize [the sample's rows in row order; this rank's rows] with the borders of
// the sample alone.
quantize::options sample_first_options(quantize::options o, std::uint32_t sample_size);

}  // namespace cbg::dist
