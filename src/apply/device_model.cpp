// SPDX-License-Identifier: Apache-2.0
// The device image of a model (layout: include/cbg/apply/device_model.hpp): built on the host with
// final device pointers, uploaded in one accounted copy, cached per device.
#include "cbg/apply/device_model.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::apply {

namespace {

// Parts at 16-byte aligned offsets of one byte image; pointers are `base + offset`.
class image_builder {
 public:
  explicit image_builder(const void* base) : base_(reinterpret_cast<std::uintptr_t>(base)) {}

  template <class T>
  const T* add(const T* data, std::size_t count) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::size_t at = (bytes_.size() + 15) / 16 * 16;
    bytes_.resize(at + count * sizeof(T));
    if (count != 0) std::memcpy(bytes_.data() + at, data, count * sizeof(T));
    return reinterpret_cast<const T*>(base_ + at);  // integer arithmetic: base may be null (sizing)
  }
  template <class T>
  const T* add(const std::vector<T>& v) {
    return add(v.data(), v.size());
  }
  std::vector<unsigned char> take() { return std::move(bytes_); }

 private:
  std::uintptr_t base_;
  std::vector<unsigned char> bytes_;
};

std::uint32_t checked_u32(std::size_t v, const char* what) {
  CBG_EXPECTS(v <= 0xffffffffULL, status::unsupported, fmt::format("the model has {} {}; at most 2^32 - 1", v, what));
  return static_cast<std::uint32_t>(v);
}

}  // namespace

model_image make_image(const model::model& m, const void* base) {
  namespace cm = cbg::model;
  image_builder b(base);
  model_image out;
  device_model_view& v = out.view;

  // Float features: NaN rules, borders; slots in the order of the binary features (§3.1).
  std::vector<float_info> floats;
  std::vector<float> borders;
  std::vector<bin_feature> features;
  std::uint32_t slots = 0;
  std::vector<std::uint32_t> float_first(m.float_features.size()), one_hot_first(m.one_hot_features.size()),
      ctr_first(m.ctr_features.size());
  for (std::size_t f = 0; f < m.float_features.size(); ++f) {
    const auto& ff = m.float_features[f];
    floats.push_back(
        {static_cast<std::uint8_t>(ff.has_nans ? 1 : 0), static_cast<std::uint8_t>(ff.nan_value_treatment)});
    float_first[f] = slots;
    if (ff.borders.empty()) continue;
    bin_feature bf;
    bf.kind = bin_kind::float_feature;
    bf.has_nans = floats.back().has_nans;
    bf.treatment = floats.back().treatment;
    bf.input = static_cast<std::int32_t>(f);
    bf.first_slot = slots;
    bf.n_slots = slots_for(checked_u32(ff.borders.size(), "borders in a feature"));
    bf.values = checked_u32(borders.size(), "borders");
    bf.n_values = static_cast<std::uint32_t>(ff.borders.size());
    borders.insert(borders.end(), ff.borders.begin(), ff.borders.end());
    slots += bf.n_slots;
    features.push_back(bf);
  }
  std::vector<one_hot_entry> one_hot;
  for (std::size_t f = 0; f < m.one_hot_features.size(); ++f) {
    const auto& oh = m.one_hot_features[f];
    one_hot_first[f] = slots;
    if (oh.values.empty()) continue;
    bin_feature bf;
    bf.kind = bin_kind::one_hot;
    bf.input = oh.cat_index;
    bf.first_slot = slots;
    bf.n_slots = slots_for(checked_u32(oh.values.size(), "one-hot values in a feature"));
    bf.values = checked_u32(one_hot.size(), "one-hot values");
    bf.n_values = static_cast<std::uint32_t>(oh.values.size());
    const std::size_t first = one_hot.size();
    for (std::size_t k = 0; k < oh.values.size(); ++k) one_hot.push_back({oh.values[k], static_cast<std::int32_t>(k)});
    std::sort(one_hot.begin() + static_cast<std::ptrdiff_t>(first), one_hot.end(),
              [](const one_hot_entry& a, const one_hot_entry& c) { return a.value < c.value; });
    slots += bf.n_slots;
    features.push_back(bf);
  }
  for (std::size_t f = 0; f < m.ctr_features.size(); ++f) {
    const auto& cf = m.ctr_features[f];
    ctr_first[f] = slots;
    if (cf.borders.empty()) continue;
    bin_feature bf;
    bf.kind = bin_kind::ctr;
    bf.input = static_cast<std::int32_t>(f);
    bf.first_slot = slots;
    bf.n_slots = slots_for(checked_u32(cf.borders.size(), "borders in a feature"));
    bf.values = checked_u32(borders.size(), "borders");
    bf.n_values = static_cast<std::uint32_t>(cf.borders.size());
    borders.insert(borders.end(), cf.borders.begin(), cf.borders.end());
    slots += bf.n_slots;
    features.push_back(bf);
  }
  CBG_EXPECTS(slots <= max_slots, status::unsupported,
              fmt::format("the model needs {} byte slots of binary features; the GPU evaluator supports at most {}",
                          slots, max_slots));

  // Packed splits of every binary feature.
  for (const cm::binary_feature& f : cm::binary_features(m)) {
    const auto item = static_cast<std::uint32_t>(f.item);
    const std::uint32_t t = item % slot_capacity + 1;
    switch (f.kind) {
      case cm::split_kind::float_feature:
        out.packed_splits.push_back(
            pack_split(float_first[static_cast<std::size_t>(f.feature)] + item / slot_capacity, 0, t));
        break;
      case cm::split_kind::one_hot:
        out.packed_splits.push_back(
            pack_split(one_hot_first[static_cast<std::size_t>(f.feature)] + item / slot_capacity, slot_capacity ^ t,
                       slot_capacity));
        break;
      case cm::split_kind::ctr:
        out.packed_splits.push_back(
            pack_split(ctr_first[static_cast<std::size_t>(f.feature)] + item / slot_capacity, 0, t));
        break;
    }
  }

  // Categorical features that inputs must provide.
  std::vector<bool> cat_used(m.cat_features.size(), false);
  for (const auto& oh : m.one_hot_features)
    if (!oh.values.empty()) cat_used[static_cast<std::size_t>(oh.cat_index)] = true;
  for (const auto& cf : m.ctr_features) {
    for (std::int32_t c : cf.ctr.base.proj.cat_features) cat_used[static_cast<std::size_t>(c)] = true;
    for (const auto& s : cf.ctr.base.proj.one_hot_splits) cat_used[static_cast<std::size_t>(s.cat_index)] = true;
  }
  std::vector<std::int32_t> used_cats;
  for (std::size_t c = 0; c < cat_used.size(); ++c)
    if (cat_used[c]) used_cats.push_back(static_cast<std::int32_t>(c));

  // Raw arrays first, so the descriptors below can point at them.
  v.floats = b.add(floats);
  v.borders = b.add(borders);
  v.one_hot = b.add(one_hot);
  v.used_cats = b.add(used_cats);
  std::map<cm::ctr_base, cm::ctr_table_view> tables;
  for (const cm::ctr_table& t : m.ctr_tables) {
    cm::ctr_table_view tv;
    tv.hashes = b.add(t.bucket_hashes);
    tv.indices = b.add(t.bucket_indices);
    tv.n_buckets = t.bucket_hashes.size();
    tv.means = b.add(t.means);
    tv.counts = b.add(t.counts);
    tv.counter_denominator = t.counter_denominator;
    tv.target_classes_count = t.target_classes_count;
    tables.emplace(t.base, tv);
  }
  std::vector<device_ctr> ctrs;
  for (const auto& cf : m.ctr_features) {
    const auto& p = cf.ctr.base.proj;
    device_ctr d;
    d.calc = cm::ctr_calc{
        cf.ctr.base.type, cf.ctr.target_border_idx, cf.ctr.prior_num, cf.ctr.prior_denom, cf.ctr.shift, cf.ctr.scale};
    const auto table = tables.find(cf.ctr.base);
    CBG_EXPECTS(table != tables.end(), status::format, "invalid model: a CTR feature has no table");
    d.table = table->second;
    d.cats = b.add(p.cat_features);
    d.float_splits = b.add(p.float_splits);
    d.one_hot_splits = b.add(p.one_hot_splits);
    d.n_cats = static_cast<std::uint32_t>(p.cat_features.size());
    d.n_float_splits = static_cast<std::uint32_t>(p.float_splits.size());
    d.n_one_hot_splits = static_cast<std::uint32_t>(p.one_hot_splits.size());
    ctrs.push_back(d);
  }
  v.ctrs = b.add(ctrs);
  v.features = b.add(features);
  out.features = features;

  // Trees.
  const std::size_t n_trees = m.tree_count();
  std::vector<std::uint32_t> splits(m.tree_splits.size()), first_split(n_trees);
  std::vector<std::uint64_t> leaf_offset(n_trees);
  out.depths.resize(n_trees);
  for (std::size_t i = 0; i < m.tree_splits.size(); ++i)
    splits[i] = out.packed_splits[static_cast<std::size_t>(m.tree_splits[i])];
  std::uint64_t leaves = 0;
  for (std::size_t t = 0; t < n_trees; ++t) {
    first_split[t] = checked_u32(static_cast<std::size_t>(m.tree_start_offsets[t]), "tree splits");
    out.depths[t] = static_cast<std::uint8_t>(m.tree_sizes[t]);
    leaf_offset[t] = leaves;
    leaves += (std::uint64_t{1} << m.tree_sizes[t]) * static_cast<std::uint64_t>(m.approx_dimension);
  }
  v.splits = b.add(splits);
  v.tree_first_split = b.add(first_split);
  v.tree_depth = b.add(out.depths);
  v.leaf_offset = b.add(leaf_offset);
  v.leaf_values = b.add(m.leaf_values);
  v.bias = b.add(m.bias);

  v.n_features = static_cast<std::uint32_t>(features.size());
  v.n_float = static_cast<std::uint32_t>(m.float_features.size());
  v.n_cat = static_cast<std::uint32_t>(m.cat_features.size());
  v.n_used_cats = static_cast<std::uint32_t>(used_cats.size());
  v.n_slots = slots;
  v.n_trees = checked_u32(n_trees, "trees");
  v.dim = m.approx_dimension;
  v.scale = m.scale;
  out.bytes = b.take();
  return out;
}

device_model::device_model(const model::model& m, int device, cudaStream_t stream, copy_counters& counters,
                           const copy_rules& rules)
    : device_(device) {
  for (int type = 0; type < model::prediction_type_count; ++type) {
    type_facts& f = facts_[type];
    try {
      f.columns = static_cast<std::int64_t>(model::prediction_columns(m, static_cast<model::prediction_type>(type)));
      f.post = model::plan_postprocess(m, static_cast<model::prediction_type>(type));
      f.supported = true;
    } catch (const error&) {
      f.supported = false;  // the call that asks for it gets prediction_columns()'s error
    }
  }
  scoped_device guard(device);
  bytes_ = std::max<std::size_t>(make_image(m, nullptr).bytes.size(), 16);
  CBG_CUDA_TRY(cudaMalloc(&data_, bytes_));
  try {
    model_image image = make_image(m, data_);
    view_ = image.view;
    depths_ = std::move(image.depths);
    copy_bytes(data_, memory_kind::device, image.bytes.data(), memory_kind::host, image.bytes.size(), stream, counters,
               rules, CBG_COPY_SITE("model image"));
    CBG_CUDA_TRY(cudaStreamSynchronize(stream));
  } catch (...) {
    CBG_ASSERT_CUDA_SUCCESS(cudaFree(data_));
    throw;
  }
}

device_model::~device_model() {
  if (data_ == nullptr) return;
  // cudaFree waits for the kernels still reading the image (predictions enqueued before the free).
  int previous = -1;
  CBG_ASSERT_CUDA_SUCCESS(cudaGetDevice(&previous));
  if (previous != device_) CBG_ASSERT_CUDA_SUCCESS(cudaSetDevice(device_));
  CBG_ASSERT_CUDA_SUCCESS(cudaFree(data_));
  if (previous >= 0 && previous != device_) CBG_ASSERT_CUDA_SUCCESS(cudaSetDevice(previous));
}

int device_model::max_depth(std::size_t tree_begin, std::size_t tree_end) const noexcept {
  int d = 0;
  for (std::size_t t = tree_begin; t < tree_end && t < depths_.size(); ++t) d = std::max<int>(d, depths_[t]);
  return d;
}

const device_model& device_model_cache::get(const model::model& m, int device, cudaStream_t stream,
                                            copy_counters& counters, const copy_rules& rules) {
  CBG_EXPECTS(device >= 0, status::invalid_argument, "the model cache needs a CUDA device");
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto slot = static_cast<std::size_t>(device);
  if (images_.size() <= slot) images_.resize(slot + 1);
  if (!images_[slot]) images_[slot] = std::make_unique<device_model>(m, device, stream, counters, rules);
  return *images_[slot];
}

}  // namespace cbg::apply
