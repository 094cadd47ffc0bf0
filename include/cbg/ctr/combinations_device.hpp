// SPDX-License-Identifier: Apache-2.0
// Feature combinations from device data (issue 5; kernels/ctr/combinations_device.cu): what the host
// extension of combinations.hpp computes, with every per-row quantity on the device and equal to
// the host's bit for bit. The candidate rule and the CTR features of a projection are the host's
// (combination_bases, combination_candidates, projection_features: one definition); per candidate
// projection the device computes every learn row's projection key (model::projection_add_cat and
// projection_add_bit, as the evaluator), dense ids (a stable radix sort of the keys), the ordered
// CTR values over the simple CTRs' permutation and target classes (ctr_device.hpp, ctr_math.hpp),
// their quantization (quantize_device with the CTR's border count and type, as the host quantizes
// them) and an 8-bit bins column. A committed column's table over all learn rows is built with the
// keys in order of first appearance (the host's ids), so the model builder writes the same table,
// and its eval values are computed on the device from that table.
//
// Copies back: per projection its distinct count, per column its borders (at most 255 floats), per
// committed column its table (category-sized, in pieces strict mode allows). Nothing per row.
//
// Not (yet) done: the GPU tree search does not call it (kernels/train has no hook yet), so the
// trainer still refuses an explicit max_ctr_complexity > 1 on a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cbg/ctr/combinations.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/train/boosting.hpp"

namespace cbg::ctr {

class device_combinations {
 public:
  struct column {
    const std::uint8_t* bins = nullptr;  // device memory, [learn rows]
    std::int32_t border_count = 0;
  };
  virtual ~device_combinations() = default;
  // The candidate columns of a level whose tree has the splits `chosen` (float splits' borders by
  // `float_border(feature, bin)`), in the host extension's order. Valid until the next call.
  virtual std::vector<column> candidates(const std::vector<train::split>& chosen,
                                         const std::function<float(std::int32_t, std::int32_t)>& float_border) = 0;
  // Column k of the last candidates() won: its feature id (as the host extension gives it).
  virtual std::int32_t commit(std::size_t k) = 0;
  // A committed feature's border value of `bin`; its values on the eval rows (device memory, null
  // without an eval pool).
  [[nodiscard]] virtual float border(std::int32_t feature, std::int32_t bin) const = 0;
  [[nodiscard]] virtual const float* eval_values(std::int32_t feature) const = 0;
};

// The device extension over pools the context's device reads (as prepare_categorical_device), with
// `prepared` from prepare_categorical_device on the same pools (it must outlive it; committed
// combinations are appended to it). `rule`, `binarize` and `seed` as given to
// prepare_categorical_device; `nan_modes`: the quantized nan_mode of each float feature;
// `max_complexity` at most 8.
std::unique_ptr<device_combinations> make_combinations_device(const pool& learn, const pool* eval, const options& o,
                                                              const train::target_rule& rule, bool binarize,
                                                              std::uint64_t seed, int max_complexity,
                                                              const std::vector<std::uint8_t>& nan_modes,
                                                              prepared_data& prepared);

}  // namespace cbg::ctr
