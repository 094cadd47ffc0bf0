// SPDX-License-Identifier: Apache-2.0
// Feature combinations from device data (issue 5; kernels/ctr/combinations_device.cu): what the host
// extension of combinations.hpp computes, with every per-row quantity on the device and equal to
// the host's bit for bit. The candidate rule and the CTR features of a projection are the host's
// (combination_bases, combination_candidates, projection_features: one definition). A level's new
// candidate projections are made together: per projection the device computes every learn row's
// projection key (model::projection_add_cat and projection_add_bit, as the evaluator), dense ids and
// the runs of the ordered statistics (an open-addressing table of the keys, then one ~23-bit radix
// sort of the rows' slots in permutation order), the ordered CTR values over the simple CTRs'
// permutation and target classes (ctr_device.hpp, ctr_math.hpp); then the level's columns are
// quantized together with each CTR's border count and type, as the host quantizes each, into 8-bit
// bins columns: Uniform, Median and UniformAndQuantiles on a border subset drawn once per training
// (src/quantize/subset_quantizer.hpp: Uniform from the subset's least and greatest values), other
// types through quantize_device. A committed column's table over all learn rows is built on the
// device with the keys in order of first appearance (the host's ids) and CatBoost's bucket layout,
// so the model builder writes the same table; its eval values are computed on the device from it.
//
// Copies back: per level its projections' distinct counts and its columns' borders (at most 255
// floats each) in one copy (per projection with Counter CTRs the distinct count at once, and per
// quantize_device call its borders), per
// committed column its table (category-sized, in pieces strict mode allows). Nothing per row.
//
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cbg/ctr/combinations.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/search_extension.hpp"

namespace cbg::ctr {

// The extension for the GPU tree search (search_extension.hpp: bins and eval values in device
// memory; the host's control flow over GPU primitives) over pools the context's device reads (as
// prepare_categorical_device), with `prepared` from prepare_categorical_device on the same pools (it must outlive it;
// committed combinations are appended to it). `rule`, `binarize` and `seed` as given to prepare_categorical_device;
// `nan_modes`: the quantized nan_mode of each float feature (or empty, then set_nan_modes before the first candidates);
// `max_complexity` at most 16.
std::unique_ptr<train::search_extension> make_combinations_device(
    const pool& learn, const pool* eval, const options& o, const train::target_rule& rule, bool binarize,
    std::uint64_t seed, int max_complexity, const std::vector<std::uint8_t>& nan_modes, prepared_data& prepared,
    std::shared_ptr<combination_borders> shared = nullptr);

// The trainer's entry on a GPU: the extension for training with parameters `p` on the pools
// `prepared` was made from by prepare_for_training (its GPU path: categorical columns and label in
// memory the device reads), or null when max_ctr_complexity is 1 or no categorical feature has
// CTRs. `shared` as for combinations_for_training.
std::unique_ptr<train::search_extension> combinations_for_training_device(
    const pool& learn, const pool* eval, const train::train_params& p, prepared_data& prepared,
    std::shared_ptr<combination_borders> shared = nullptr);

}  // namespace cbg::ctr
