// SPDX-License-Identifier: Apache-2.0
// cbg_get_api: the function table for dlopen users. Filled once (a function-local static, which
// C++ initialises thread-safely); immutable afterwards.
#include <cstddef>

#include <fmt/format.h>

#include "cbgpu/cbgpu.h"
#include "guard.hpp"

namespace {

cbg_api_v1_t make_table_v1() noexcept {
  cbg_api_v1_t t{};
  t.struct_size = sizeof(cbg_api_v1_t);
  t.api_version = CBG_API_VERSION_1;
  t.library_version = cbg_version_number();
  t.status_string = &cbg_status_string;
  t.last_error = &cbg_last_error;
  t.version_number = &cbg_version_number;
  t.version_string = &cbg_version_string;
  t.build_info = &cbg_build_info;
  t.device_count = &cbg_device_count;
  t.set_log_callback = &cbg_set_log_callback;
  t.context_desc_init = &cbg_context_desc_init;
  t.context_create = &cbg_context_create;
  t.context_free = &cbg_context_free;
  t.context_device = &cbg_context_device;
  t.context_set_stream = &cbg_context_set_stream;
  t.context_get_stream = &cbg_context_get_stream;
  t.context_sync = &cbg_context_sync;
  t.copy_stats = &cbg_copy_stats;
  t.copy_stats_reset = &cbg_copy_stats_reset;
  t.pool_desc_init = &cbg_pool_desc_init;
  t.pool_from_dlpack = &cbg_pool_from_dlpack;
  t.pool_free = &cbg_pool_free;
  t.pool_info = &cbg_pool_info;
  t.pool_feature_name = &cbg_pool_feature_name;
  t.pool_is_categorical = &cbg_pool_is_categorical;
  t.tensor_copy = &cbg_tensor_copy;
  t.quantize_desc_init = &cbg_quantize_desc_init;
  t.quantize_pool = &cbg_quantize_pool;
  t.quantized_free = &cbg_quantized_free;
  t.quantized_borders = &cbg_quantized_borders;
  t.quantized_feature_bins = &cbg_quantized_feature_bins;
  t.model_load_file = &cbg_model_load_file;
  t.model_load_buffer = &cbg_model_load_buffer;
  t.model_save_file = &cbg_model_save_file;
  t.model_save_buffer = &cbg_model_save_buffer;
  t.model_free = &cbg_model_free;
  t.model_info = &cbg_model_info;
  t.model_feature_name = &cbg_model_feature_name;
  t.model_cat_feature_index = &cbg_model_cat_feature_index;
  t.model_float_feature_index = &cbg_model_float_feature_index;
  t.model_class_name = &cbg_model_class_name;
  t.model_info_value = &cbg_model_info_value;
  t.cat_hash_string = &cbg_cat_hash_string;
  t.cat_hash_int64 = &cbg_cat_hash_int64;
  t.model_prediction_columns = &cbg_model_prediction_columns;
  t.model_predict_host_desc_init = &cbg_model_predict_host_desc_init;
  t.model_predict_host = &cbg_model_predict_host;
  t.model_leaf_indexes_host = &cbg_model_leaf_indexes_host;
  t.train_callbacks_init = &cbg_train_callbacks_init;
  t.train = &cbg_train;
  t.predict_desc_init = &cbg_predict_desc_init;
  t.predict_output_shape = &cbg_predict_output_shape;
  t.predict_to_device = &cbg_predict_to_device;
  t.predict_to_host = &cbg_predict_to_host;
  t.context_memory_stats = &cbg_context_memory_stats;
  t.context_reset_memory_peak = &cbg_context_reset_memory_peak;
  t.context_fail_allocation = &cbg_context_fail_allocation;
  t.pool_cat_hashes = &cbg_pool_cat_hashes;
  t.pool_from_arrow = &cbg_pool_from_arrow;
  t.model_feature_importance = &cbg_model_feature_importance;
  t.context_stage_times = &cbg_context_stage_times;
  t.context_stage_times_reset = &cbg_context_stage_times_reset;
  t.nccl_unique_id = &cbg_nccl_unique_id;
  t.context_abort = &cbg_context_abort;
  return t;
}

}  // namespace

extern "C" CBG_API cbg_status cbg_get_api(uint32_t version, const void** table) {
  return cbg::capi::guarded("cbg_get_api", [&] {
    cbg::capi::require(table, "table");
    *table = nullptr;
    if (version != CBG_API_VERSION_1) {
      CBG_FAIL(cbg::status::unsupported,
               fmt::format("cbg_get_api: table version {} is unknown to this library ({}); it knows "
                           "version {}",
                           version, cbg_version_string(), CBG_API_VERSION_1));
    }
    static const cbg_api_v1_t table_v1 = make_table_v1();
    *table = &table_v1;
  });
}
