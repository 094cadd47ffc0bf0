// SPDX-License-Identifier: Apache-2.0
// The device image of a model: everything the GPU evaluator's kernels read, flattened into one
// device allocation, built once per device and cached in the model handle (device_model_cache).
//
// Binarization into byte slots
// ----------------------------
// Every binary feature of the model (catboost-model-format.md §3.1) is tested through one byte per
// row, a *slot*, holding up to slot_capacity = 127 conditions of one feature (CatBoost packs 254
// per byte; we keep the top bit free for the comparisons below):
//   float and CTR features: slot g of a feature with B borders holds clamp(c - 127 g, 0, 127),
//     where c is the number of borders the value is greater than; border j is true iff
//     slot byte >= j % 127 + 1.
//   one-hot features: slot g holds k % 127 + 1 when the row's hash equals value k of group g, else 0;
//     value k is true iff the byte equals k % 127 + 1, tested as (byte ^ (127 ^ t)) >= 127.
// So every split is "(byte ^ x) >= t" with x, t <= 127 and byte <= 127, and four rows' bytes of a
// slot sit in one 32-bit word: ((word ^ 0x01010101 x) | 0x80808080) - 0x01010101 t has bit 7 of
// each byte set exactly when that row's condition holds (no borrow crosses a byte), which the tree
// kernel turns into four leaf indexes at once. A split is packed as slot | x << 16 | t << 24.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include <cuda_runtime_api.h>

#include "cbg/apply/slots.hpp"
#include "cbg/config.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/model/apply_math.hpp"
#include "cbg/model/host_evaluator.hpp"
#include "cbg/model/model.hpp"

namespace cbg::apply {

enum class bin_kind : std::uint8_t { float_feature = 0, one_hot = 1, ctr = 2 };

// One feature to binarize into its slots.
struct bin_feature {
  bin_kind kind = bin_kind::float_feature;
  std::uint8_t has_nans = 0;
  std::uint8_t treatment = 0;  // ENanValueTreatment
  std::uint8_t reserved = 0;
  std::int32_t input = 0;  // float feature index, categorical feature index, or CTR feature index
  std::uint32_t first_slot = 0;
  std::uint32_t n_slots = 0;
  std::uint32_t values = 0;  // first border (float, CTR) or first one_hot_entry (one-hot)
  std::uint32_t n_values = 0;
};

// One-hot values sorted by value, with their position in the feature's value list.
struct one_hot_entry {
  std::int32_t value = 0;
  std::int32_t position = 0;
};

// The NaN rule of a float feature (read by CTR projections).
struct float_info {
  std::uint8_t has_nans = 0;
  std::uint8_t treatment = 0;
};

// A CTR feature: its formula, its table and its projection, all in the device allocation.
struct device_ctr {
  model::ctr_calc calc;
  model::ctr_table_view table;
  const std::int32_t* cats = nullptr;
  const model::float_split* float_splits = nullptr;
  const model::one_hot_split* one_hot_splits = nullptr;
  std::uint32_t n_cats = 0;
  std::uint32_t n_float_splits = 0;
  std::uint32_t n_one_hot_splits = 0;
};

// What the kernels read: pointers into the device allocation (trivially copyable, by value).
struct device_model_view {
  const bin_feature* features = nullptr;
  const float* borders = nullptr;
  const one_hot_entry* one_hot = nullptr;
  const device_ctr* ctrs = nullptr;
  const float_info* floats = nullptr;
  const std::int32_t* used_cats = nullptr;  // categorical features that one-hot or CTR features read
  std::uint32_t n_features = 0;
  std::uint32_t n_float = 0;
  std::uint32_t n_cat = 0;
  std::uint32_t n_used_cats = 0;
  std::uint32_t n_slots = 0;
  std::uint32_t n_trees = 0;
  const std::uint32_t* splits = nullptr;            // packed, tree after tree
  const std::uint32_t* tree_first_split = nullptr;  // per tree
  const std::uint8_t* tree_depth = nullptr;         // per tree
  const std::uint64_t* leaf_offset = nullptr;       // per tree: first leaf value ([leaf][dim] follows)
  const double* leaf_values = nullptr;
  const double* bias = nullptr;  // dim values
  std::int32_t dim = 1;
  double scale = 1.0;
};
static_assert(std::is_trivially_copyable_v<device_model_view>);

// The host part of the image: the layout the kernels get, before it is uploaded.
struct model_image {
  std::vector<unsigned char> bytes;  // what is copied to the device, pointers already final
  device_model_view view;
  std::vector<std::uint8_t> depths;          // per tree (host copy, for tiling decisions)
  std::vector<std::uint32_t> packed_splits;  // per binary feature (tests)
  std::vector<bin_feature> features;         // what the binarize stage walks (tests)
};
// Builds the image of `m` for an allocation that will start at device address `base` (nullptr:
// offsets only, for sizing). Throws unsupported when the model needs more than max_slots slots.
model_image make_image(const model::model& m, const void* base);

// What a prediction type gives for this model, found once (the model's loss lives in JSON text).
struct type_facts {
  bool supported = false;
  std::int64_t columns = 0;
  model::postprocess_plan post;
};

// The image of one model on one device. Frees its memory on destruction.
class device_model {
 public:
  // Uploads `m` to `device` on `stream` and waits for the copy (done once per model and device).
  device_model(const model::model& m, int device, cudaStream_t stream, copy_counters& counters,
               const copy_rules& rules);
  ~device_model();
  device_model(const device_model&) = delete;
  device_model& operator=(const device_model&) = delete;

  [[nodiscard]] const device_model_view& view() const noexcept { return view_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  // Deepest tree in [tree_begin, tree_end).
  [[nodiscard]] int max_depth(std::size_t tree_begin, std::size_t tree_end) const noexcept;
  // Facts of prediction type `type` (a model::prediction_type value).
  [[nodiscard]] const type_facts& facts(int type) const noexcept { return facts_[static_cast<std::size_t>(type)]; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  int device_ = -1;
  device_model_view view_;
  std::vector<std::uint8_t> depths_;
  type_facts facts_[model::prediction_type_count];
};

// Device images of one model, one per device, made on first use. Thread-safe: concurrent callers
// of get() for the same device wait for the one upload and then share the image.
class device_model_cache {
 public:
  device_model_cache() = default;
  device_model_cache(const device_model_cache&) = delete;
  device_model_cache& operator=(const device_model_cache&) = delete;

  const device_model& get(const model::model& m, int device, cudaStream_t stream, copy_counters& counters,
                          const copy_rules& rules);

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<device_model>> images_;  // by device ordinal
};

}  // namespace cbg::apply
