// SPDX-License-Identifier: Apache-2.0
#include "dataset_pool.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cbgpu_bench {

namespace {

// [rows] for one dimension, [rows, dims] otherwise.
std::vector<int64_t> rows_shape(int64_t rows, int64_t dims) {
  return dims == 1 ? std::vector<int64_t>{rows} : std::vector<int64_t>{rows, dims};
}

// A tensor the library consumes: over `values` on the host, or over a device copy of them.
template <class T>
managed_tensor tensor_of(std::vector<T> values, std::vector<int64_t> shape, int32_t device) {
  if (device < 0) return managed_tensor::host(std::move(values), std::move(shape));
  return device_tensor(values, std::move(shape), device);
}

}  // namespace

cbg_string_column_t dictionary_column::give(int64_t feature) noexcept {
  return cbg_string_column_t{feature, offsets.give(), bytes.give(), codes.give()};
}

dictionary_column dictionary_column_of(const feature_column& f, int32_t device) {
  std::vector<int64_t> offsets{0};
  std::vector<uint8_t> bytes;
  for (const std::string& text : f.categories) {
    bytes.insert(bytes.end(), text.begin(), text.end());
    offsets.push_back(static_cast<int64_t>(bytes.size()));
  }
  const auto n_offsets = static_cast<int64_t>(offsets.size());
  if (bytes.empty()) bytes.push_back(0);  // only empty strings (or none): keep the buffer non-empty
  const auto n_bytes = static_cast<int64_t>(bytes.size());
  const auto rows = static_cast<int64_t>(f.codes.size());
  return dictionary_column{tensor_of(f.codes, {rows}, device), tensor_of(std::move(offsets), {n_offsets}, device),
                           tensor_of(std::move(bytes), {n_bytes}, device)};
}

void feature_tensors::add_categorical(const feature_column& f, int32_t device) {
  categorical_.emplace_back(static_cast<int64_t>(columns_.size()), dictionary_column_of(f, device));
  columns_.emplace_back();
}

void feature_tensors::give_to(cbg_pool_desc_t& desc) {
  refs_.clear();
  strings_.clear();
  refs_.reserve(columns_.size());  // no allocation can fail between the give() calls
  strings_.reserve(categorical_.size());
  for (std::optional<managed_tensor>& c : columns_) refs_.push_back(c ? c->give() : cbg_tensor_ref_t{});
  for (auto& [j, c] : categorical_) strings_.push_back(c.give(j));
  desc.columns = refs_.empty() ? nullptr : refs_.data();
  desc.n_columns = refs_.size();
  desc.string_columns = strings_.empty() ? nullptr : strings_.data();
  desc.n_string_columns = strings_.size();
}

pool_handle make_pool(cbg_context_t* ctx, loaded_dataset& data, int32_t device) {
  const int64_t rows = data.rows;
  feature_tensors features;
  std::vector<std::string> names;
  bool any_name = false;
  for (feature_column& f : data.features) {
    if (f.categorical) {
      features.add_categorical(f, device);
      f.codes = {};
    } else {
      features.add_numeric(tensor_of(std::move(f.values), {rows}, device));
    }
    names.push_back(f.name);
    any_name = any_name || !f.name.empty();
  }
  std::vector<const char*> name_ptrs;
  for (const std::string& n : names) name_ptrs.push_back(n.c_str());

  cbg_pool_desc_t desc;
  check(cbg_pool_desc_init(&desc), "cbg_pool_desc_init");
  // Build every tensor before giving any away, so a failure here leaves nothing half-handed.
  std::optional<managed_tensor> label, weight, baseline;
  if (data.label_dims > 0) {
    label = tensor_of(std::move(data.label), rows_shape(rows, data.label_dims), device);
  }
  if (data.has_weight) weight = tensor_of(std::move(data.weight), {rows}, device);
  if (data.baseline_dims > 0) {
    baseline = tensor_of(std::move(data.baseline), rows_shape(rows, data.baseline_dims), device);
  }
  features.give_to(desc);
  if (label) desc.label = label->give();
  if (weight) desc.weight = weight->give();
  if (baseline) desc.baseline = baseline->give();
  desc.feature_names = any_name ? name_ptrs.data() : nullptr;
  desc.n_feature_names = any_name ? name_ptrs.size() : 0;

  cbg_pool_t* pool = nullptr;
  check(cbg_pool_from_dlpack(ctx, &desc, &pool), "cbg_pool_from_dlpack");
  return pool_handle(pool);
}

}  // namespace cbgpu_bench
