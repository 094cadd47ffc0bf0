// SPDX-License-Identifier: Apache-2.0
#include "dataset_pool.hpp"

#include <optional>
#include <string>
#include <vector>

#include "cuda_device.hpp"
#include "managed_tensor.hpp"

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
  std::shared_ptr<void> memory = device_copy(values.data(), values.size() * sizeof(T), device);
  void* data = memory.get();
  return managed_tensor::wrap(std::move(memory), data, dl::DLDevice{dl::kDLCUDA, device}, dtype_of<T>(),
                              std::move(shape));
}

}  // namespace

pool_handle make_pool(cbg_context_t* ctx, loaded_dataset& data, int32_t device) {
  const int64_t rows = data.rows;
  std::vector<managed_tensor> columns;
  std::vector<int32_t> cat_features;
  std::vector<std::string> names;
  bool any_name = false;
  for (feature_column& f : data.features) {
    if (f.categorical) {
      cat_features.push_back(static_cast<int32_t>(columns.size()));
      columns.push_back(tensor_of(std::move(f.codes), {rows}, device));
    } else {
      columns.push_back(tensor_of(std::move(f.values), {rows}, device));
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
  std::vector<cbg_tensor_ref_t> refs;
  refs.reserve(columns.size());  // no allocation can fail between the give() calls
  for (managed_tensor& c : columns) refs.push_back(c.give());
  desc.columns = refs.data();
  desc.n_columns = refs.size();
  if (label) desc.label = label->give();
  if (weight) desc.weight = weight->give();
  if (baseline) desc.baseline = baseline->give();
  desc.cat_features = cat_features.empty() ? nullptr : cat_features.data();
  desc.n_cat_features = cat_features.size();
  desc.feature_names = any_name ? name_ptrs.data() : nullptr;
  desc.n_feature_names = any_name ? name_ptrs.size() : 0;

  cbg_pool_t* pool = nullptr;
  check(cbg_pool_from_dlpack(ctx, &desc, &pool), "cbg_pool_from_dlpack");
  return pool_handle(pool);
}

}  // namespace cbgpu_bench
