// SPDX-License-Identifier: Apache-2.0
// Borrowed DLTensors over memory the library already reads (pool columns, label tensors, derived
// float columns), for the feature combinations' pools; and the derived pools of the CTR
// preparation (pool::borrow). The set owns the DLTensor structs and their shape/stride arrays until
// it is destroyed (pool::build copies what it needs).
#pragma once

#include <array>
#include <cstdint>
#include <deque>

#include "cbg/data/column_view.hpp"
#include "cbg/tensor/dlpack.hpp"
#include "cbg/tensor/dlpack_import.hpp"
#include "cbg/tensor/tensor_view.hpp"

namespace cbg::ctr {

class view_set {
 public:
  tensor_ref column(const column_view& c) {
    return make(c.data, c.type, c.memory, c.device_id, 1, {c.size, 0}, {c.stride, 0});
  }
  tensor_ref tensor(const tensor_view& t) {
    return make(t.data, t.type, t.memory, t.device_id, t.rank, {t.shape[0], t.rank > 1 ? t.shape[1] : 0},
                {t.strides[0], t.rank > 1 ? t.strides[1] : 0});
  }
  tensor_ref host_floats(const float* data, std::int64_t n) {
    return make(data, dtype::float32, memory_kind::host, -1, 1, {n, 0}, {1, 0});
  }
  tensor_ref device_floats(const float* data, std::int64_t n, int device) {
    return make(data, dtype::float32, memory_kind::device, device, 1, {n, 0}, {1, 0});
  }

 private:
  struct entry {
    DLTensor t{};
    std::array<std::int64_t, 2> shape{}, strides{};
  };

  tensor_ref make(const void* data, dtype type, memory_kind memory, int device, int rank,
                  std::array<std::int64_t, 2> shape, std::array<std::int64_t, 2> strides) {
    entry& e = entries_.emplace_back();
    e.shape = shape;
    e.strides = strides;
    e.t.data = const_cast<void*>(data);
    e.t.ndim = rank;
    e.t.dtype = dlpack::type_of(type);
    e.t.shape = e.shape.data();
    e.t.strides = e.strides.data();
    e.t.byte_offset = 0;
    switch (memory) {
      case memory_kind::host:
        e.t.device = {kDLCPU, 0};
        break;
      case memory_kind::pinned_host:
        e.t.device = {kDLCUDAHost, 0};
        break;
      case memory_kind::device:
        e.t.device = {kDLCUDA, device};
        break;
      case memory_kind::managed:
        e.t.device = {kDLCUDAManaged, device};
        break;
    }
    tensor_ref r;
    r.kind = tensor_ref_kind::dltensor;
    r.ptr = &e.t;
    return r;
  }

  std::deque<entry> entries_;
};

}  // namespace cbg::ctr

#include <memory>
#include <string>
#include <vector>

#include "cbg/ctr/features.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/quantize/quantizer.hpp"

namespace cbg::ctr {

// A float32 column of n contiguous values (derived columns: one-hot, CTR values, targets).
inline column_view float_column(const float* data, std::int64_t n, memory_kind memory, int device) {
  column_view c;
  c.data = data;
  c.type = dtype::float32;
  c.memory = memory;
  c.device_id = memory == memory_kind::host ? -1 : device;
  c.size = n;
  c.stride = 1;
  return c;
}

// A pool of `src`'s float features (the columns `float_flat`, viewed where they are), then the
// derived columns, with `src`'s label, weight and baseline (the caller keeps `derived`'s memory).
inline std::unique_ptr<pool> derived_pool(const pool& src, const std::vector<std::int32_t>& float_flat,
                                          const std::vector<column_view>& derived) {
  pool_parts parts;
  for (std::int32_t f : float_flat) {
    parts.features.push_back(src.features()[static_cast<std::size_t>(f)]);
    parts.names.push_back(src.feature_name(f));
  }
  for (const column_view& c : derived) {
    parts.features.push_back(c);
    parts.names.emplace_back();
  }
  parts.label = src.label();
  parts.weight = src.weight();
  parts.baseline = src.baseline();
  return std::make_unique<pool>(pool::borrow(src.ctx(), std::move(parts)));
}

// The CTR feature (base, target border or class j, prior) of categorical feature `cat`; false when
// `done` already holds it (a CTR listed twice), else it is added there.
inline bool next_ctr_feature(std::int32_t cat, const model::ctr_base& base, int j, const prior& pr,
                             std::vector<model::ctr_description>& done, derived_feature& d) {
  d = derived_feature{};
  d.kind = derived_kind::ctr;
  d.cat_index = cat;
  d.ctr.base = base;
  d.ctr.target_border_idx = j;
  d.ctr.prior_num = pr.num;
  d.ctr.prior_denom = pr.denom;
  for (const model::ctr_description& x : done) {
    if (x == d.ctr) return false;
  }
  done.push_back(d.ctr);
  return true;
}

// The quantization of derived column `feature`: its CTR's border count and type, no NaNs.
inline quantize::feature_override derived_override(std::int64_t feature, int border_count, quantize::border_type type) {
  quantize::feature_override ov;
  ov.feature = feature;
  ov.border_count = border_count;
  ov.mode = static_cast<int>(quantize::nan_mode::forbidden);
  ov.type = static_cast<int>(type);
  return ov;
}

}  // namespace cbg::ctr
