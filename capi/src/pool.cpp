// SPDX-License-Identifier: Apache-2.0
// Pool entry points.
#include <cstddef>
#include <cstring>

#include "cbg/categorical/hashing.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/runtime/device.hpp"
#include "desc.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "pool_desc.hpp"
#include "tensor_ref.hpp"

namespace cbg::capi {

void read_pool_desc(const cbg_pool_desc_t& in, cbg_pool_desc_t& out) {
  constexpr std::size_t before_strings = offsetof(cbg_pool_desc_t, string_columns);
  CBG_EXPECTS(in.struct_size == before_strings || in.struct_size == sizeof(cbg_pool_desc_t),
              cbg::status::invalid_argument,
              fmt::format("cbg_pool_desc_t.struct_size is {}, expected sizeof(cbg_pool_desc_t) = {} (or {}, the "
                          "layout before string_columns; call cbg_pool_desc_init)",
                          in.struct_size, sizeof(cbg_pool_desc_t), before_strings));
  read_desc(in, out, before_strings, "cbg_pool_desc_t");
}

void release_consumed(const cbg_pool_desc_t& d) noexcept {
  cbg::dlpack_owner(to_core(d.features)).reset();
  if (d.columns != nullptr) {
    for (std::size_t j = 0; j < d.n_columns; ++j) cbg::dlpack_owner(to_core(d.columns[j])).reset();
  }
  if (d.string_columns != nullptr) {
    for (std::size_t k = 0; k < d.n_string_columns; ++k) {
      cbg::dlpack_owner(to_core(d.string_columns[k].offsets)).reset();
      cbg::dlpack_owner(to_core(d.string_columns[k].bytes)).reset();
      cbg::dlpack_owner(to_core(d.string_columns[k].codes)).reset();
    }
  }
  cbg::dlpack_owner(to_core(d.label)).reset();
  cbg::dlpack_owner(to_core(d.weight)).reset();
  cbg::dlpack_owner(to_core(d.baseline)).reset();
}

cbg::pool_inputs to_inputs(const cbg_pool_desc_t& d) {
  cbg::pool_inputs in;
  in.features = to_core(d.features);
  CBG_EXPECTS(d.n_columns == 0 || d.columns != nullptr, cbg::status::null_pointer,
              fmt::format("desc.columns is NULL but desc.n_columns is {}", d.n_columns));
  for (std::size_t j = 0; j < d.n_columns; ++j) in.columns.push_back(to_core(d.columns[j]));
  CBG_EXPECTS(d.n_string_columns == 0 || d.string_columns != nullptr, cbg::status::null_pointer,
              fmt::format("desc.string_columns is NULL but desc.n_string_columns is {}", d.n_string_columns));
  for (std::size_t k = 0; k < d.n_string_columns; ++k) {
    const cbg_string_column_t& sc = d.string_columns[k];
    cbg::string_column_input input;
    input.feature = sc.feature;
    input.offsets = to_core(sc.offsets);
    input.bytes = to_core(sc.bytes);
    input.codes = to_core(sc.codes);
    in.string_columns.push_back(input);
  }
  in.label = to_core(d.label);
  in.weight = to_core(d.weight);
  in.baseline = to_core(d.baseline);
  CBG_EXPECTS(d.n_cat_features == 0 || d.cat_features != nullptr, cbg::status::null_pointer,
              fmt::format("desc.cat_features is NULL but desc.n_cat_features is {}", d.n_cat_features));
  in.cat_features.assign(d.cat_features, d.cat_features + d.n_cat_features);
  in.producer_stream = reinterpret_cast<cudaStream_t>(d.producer_stream);
  return in;
}

void name_features(cbg::pool& p, const cbg_pool_desc_t& d) {
  if (d.feature_names == nullptr && d.n_feature_names == 0) return;
  CBG_EXPECTS(d.feature_names != nullptr, cbg::status::null_pointer,
              fmt::format("desc.feature_names is NULL but desc.n_feature_names is {}", d.n_feature_names));
  CBG_EXPECTS(static_cast<int64_t>(d.n_feature_names) == p.num_features(), cbg::status::invalid_argument,
              fmt::format("{} feature names given for {} features", d.n_feature_names, p.num_features()));
  std::vector<std::string> names;
  for (int64_t j = 0; j < p.num_features(); ++j) {
    CBG_EXPECTS(d.feature_names[j] != nullptr, cbg::status::null_pointer,
                fmt::format("desc.feature_names[{}] is NULL", j));
    names.emplace_back(d.feature_names[j]);
  }
  p.set_feature_names(std::move(names));
}

}  // namespace cbg::capi

using namespace cbg::capi;

extern "C" {

CBG_API cbg_status cbg_pool_desc_init(cbg_pool_desc_t* desc) {
  return guarded(__func__, [&] {
    require(desc, "desc");
    init_desc(*desc);
  });
}

CBG_API cbg_status cbg_pool_from_dlpack(cbg_context_t* ctx, const cbg_pool_desc_t* desc, cbg_pool_t** out) {
  return guarded(__func__, [&] {
    require(desc, "desc");
    cbg_pool_desc_t d{};
    cbg::pool_inputs in;
    try {
      read_pool_desc(*desc, d);
      require(out, "out");
      *out = nullptr;
      in = to_inputs(d);
      checked(ctx, "ctx");
    } catch (...) {
      // Nothing owns the tensors yet: delete them here, exactly once. With an invalid struct_size
      // the layout is unknown and the caller keeps the tensors (the header says so).
      if (d.struct_size == sizeof(cbg_pool_desc_t)) release_consumed(d);
      throw;
    }
    // From here on pool::build owns every consumed tensor (and deletes them if it throws).
    cbg::pool p = cbg::pool::build(ctx->impl, std::move(in));
    name_features(p, d);
    publish(out, std::move(p));
  });
}

CBG_API cbg_status cbg_pool_free(cbg_pool_t* pool) {
  return guarded(__func__, [&] { destroy(pool, "pool"); });
}

CBG_API cbg_status cbg_pool_info(const cbg_pool_t* pool, cbg_pool_info_t* info) {
  return guarded(__func__, [&] {
    const cbg::pool& p = checked(pool, "pool").impl;
    require(info, "info");
    check_out_struct(*info, sizeof(cbg_pool_info_t), "cbg_pool_info_t");
    info->n_rows = p.num_rows();
    info->n_features = p.num_features();
    info->n_cat_features = p.num_categorical();
    info->label_dims = cbg::pool::dims_of(p.label());
    info->baseline_dims = cbg::pool::dims_of(p.baseline());
    info->has_weight = p.weight().has_value() ? 1 : 0;
    info->device = p.device() >= 0 ? p.device() : CBG_DEVICE_CPU;
  });
}

CBG_API cbg_status cbg_pool_feature_name(const cbg_pool_t* pool, int64_t index, const char** name) {
  return guarded(__func__, [&] {
    const cbg::pool& p = checked(pool, "pool").impl;
    require(name, "name");
    *name = p.feature_name(index).c_str();
  });
}

CBG_API cbg_status cbg_pool_is_categorical(const cbg_pool_t* pool, int64_t index, int32_t* is_cat) {
  return guarded(__func__, [&] {
    const cbg::pool& p = checked(pool, "pool").impl;
    require(is_cat, "is_cat");
    CBG_EXPECTS(index >= 0 && index < p.num_features(), cbg::status::invalid_argument,
                fmt::format("feature index {} is outside 0..{}", index, p.num_features() - 1));
    *is_cat = p.is_categorical(index) ? 1 : 0;
  });
}

CBG_API cbg_status cbg_pool_cat_hashes(const cbg_pool_t* pool, int64_t feature, uint32_t* out, size_t capacity) {
  return guarded(__func__, [&] {
    const cbg::pool& p = checked(pool, "pool").impl;
    require(out, "out");
    CBG_EXPECTS(feature >= 0 && feature < p.num_features(), cbg::status::invalid_argument,
                fmt::format("feature index {} is outside 0..{}", feature, p.num_features() - 1));
    CBG_EXPECTS(p.is_categorical(feature), cbg::status::invalid_argument,
                fmt::format("feature {} is not categorical", feature));
    const auto rows = static_cast<std::size_t>(p.num_rows());
    CBG_EXPECTS(capacity >= rows, cbg::status::shape,
                fmt::format("out holds {} values but the pool has {} rows", capacity, rows));
    const cbg::column_view& c = p.features()[static_cast<std::size_t>(feature)];
    const cbg::context& ctx = *p.ctx();
    if (ctx.is_cpu() || c.memory == cbg::memory_kind::host) {  // the host can read it: no GPU needed
      cbg::categorical::hash_column_host(c, out);
      return;
    }
    cbg::scoped_device guard(ctx.device());
    const uint32_t* hashes = static_cast<const uint32_t*>(c.data);
    cbg::device_buffer<uint32_t> computed;
    if (!c.hashed) {
      computed = cbg::device_buffer<uint32_t>(rows, ctx.stream(), ctx.resource());
      cbg::categorical::hash_column_device(ctx, c, computed.data());
      hashes = computed.data();
    }
    cbg::copy_bytes(out, cbg::memory_kind::host, hashes, cbg::memory_kind::device, rows * sizeof(uint32_t),
                    ctx.stream(), ctx.copies(), ctx.rules(), CBG_COPY_SITE("cbg_pool_cat_hashes"));
    CBG_CUDA_TRY(cudaStreamSynchronize(ctx.stream()));
  });
}

}  // extern "C"
