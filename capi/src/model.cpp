// SPDX-License-Identifier: Apache-2.0
// Model entry points: CatBoost .cbm/JSON load and save, queries, host prediction.
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "cbg/model/hash.hpp"
#include "cbg/model/host_evaluator.hpp"
#include "cbg/model/io.hpp"
#include "desc.hpp"
#include "guard.hpp"
#include "handles.hpp"

cbg_model_t::cbg_model_t(cbg::model::model m) : impl(std::move(m)) {
  flat_names.resize(impl.flat_feature_count());
  for (const auto& f : impl.float_features) flat_names[static_cast<std::size_t>(f.flat_index)] = f.name;
  for (const auto& f : impl.cat_features) flat_names[static_cast<std::size_t>(f.flat_index)] = f.name;
  class_names = cbg::model::semantics(impl).class_names;
}

namespace {

using namespace cbg::capi;
namespace cm = cbg::model;

cm::file_format to_format(int32_t format) {
  CBG_EXPECTS(format == CBG_MODEL_FORMAT_CBM || format == CBG_MODEL_FORMAT_JSON, cbg::status::invalid_argument,
              fmt::format("format is {}, expected CBG_MODEL_FORMAT_CBM (0) or CBG_MODEL_FORMAT_JSON (1)", format));
  return static_cast<cm::file_format>(format);
}

cm::prediction_type to_prediction_type(int32_t type) {
  CBG_EXPECTS(type >= 0 && type < cm::prediction_type_count, cbg::status::invalid_argument,
              fmt::format("prediction_type is {}, expected a CBG_PREDICTION_* value", type));
  return static_cast<cm::prediction_type>(type);
}

std::size_t index_in(int64_t index, std::size_t n, const char* what) {
  CBG_EXPECTS(index >= 0 && static_cast<uint64_t>(index) < n, cbg::status::invalid_argument,
              fmt::format("{} {} out of range [0, {})", what, index, n));
  return static_cast<std::size_t>(index);
}

struct host_call {
  cm::host_rows rows;
  std::size_t tree_begin = 0, tree_end = 0;
  int32_t type = 0;
};

host_call to_call(const cm::model& m, const cbg_model_predict_host_desc_t* desc) {
  require(desc, "desc");
  cbg_model_predict_host_desc_t d{};
  d.struct_size = sizeof(d);
  read_desc(*desc, d, sizeof(cbg_model_predict_host_desc_t), "cbg_model_predict_host_desc_t");
  CBG_EXPECTS(d.n_rows >= 0 && d.float_row_stride >= 0 && d.cat_row_stride >= 0, cbg::status::invalid_argument,
              "desc.n_rows and the row strides must not be negative");
  CBG_EXPECTS(d.tree_begin >= 0 && d.tree_end >= 0, cbg::status::invalid_argument, "negative tree range");
  host_call c;
  c.rows.n_rows = static_cast<std::size_t>(d.n_rows);
  c.rows.floats = d.float_features;
  c.rows.float_row_stride = static_cast<std::size_t>(d.float_row_stride);
  c.rows.cat_hashes = d.cat_hashes;
  c.rows.cat_row_stride = static_cast<std::size_t>(d.cat_row_stride);
  c.tree_begin = static_cast<std::size_t>(d.tree_begin);
  c.tree_end = d.tree_end == 0 ? m.tree_count() : static_cast<std::size_t>(d.tree_end);
  c.type = d.prediction_type;
  return c;
}

}  // namespace

extern "C" {

CBG_API cbg_status cbg_model_load_file(const char* path, int32_t format, cbg_model_t** out) {
  return guarded(__func__, [&] {
    require(path, "path");
    require(out, "out");
    *out = nullptr;
    publish(out, cm::load_model_file(path, to_format(format)));
  });
}

CBG_API cbg_status cbg_model_load_buffer(const void* data, size_t size, int32_t format, cbg_model_t** out) {
  return guarded(__func__, [&] {
    require(out, "out");
    *out = nullptr;
    CBG_EXPECTS(data != nullptr || size == 0, cbg::status::null_pointer, "data is NULL");
    publish(out, cm::read_model(data, size, to_format(format)));
  });
}

CBG_API cbg_status cbg_model_save_file(const cbg_model_t* model, const char* path, int32_t format) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    require(path, "path");
    cm::save_model_file(m.impl, path, to_format(format));
  });
}

CBG_API cbg_status cbg_model_save_buffer(cbg_model_t* model, int32_t format, const void** data, size_t* size) {
  return guarded(__func__, [&] {
    auto& m = checked(model, "model");
    require(data, "data");
    require(size, "size");
    m.saved = cm::write_model(m.impl, to_format(format));
    *data = m.saved.data();
    *size = m.saved.size();
  });
}

CBG_API cbg_status cbg_model_free(cbg_model_t* model) {
  return guarded(__func__, [&] { destroy(model, "model"); });
}

CBG_API cbg_status cbg_model_info(const cbg_model_t* model, cbg_model_info_t* info) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    require(info, "info");
    check_out_struct(*info, sizeof(cbg_model_info_t), "cbg_model_info_t");
    info->n_trees = static_cast<int64_t>(m.impl.tree_count());
    info->approx_dimension = m.impl.approx_dimension;
    info->reserved = 0;
    info->n_flat_features = static_cast<int64_t>(m.flat_names.size());
    info->n_float_features = static_cast<int64_t>(m.impl.float_features.size());
    info->n_cat_features = static_cast<int64_t>(m.impl.cat_features.size());
    info->n_class_names = static_cast<int64_t>(m.class_names.size());
    info->scale = m.impl.scale;
  });
}

CBG_API cbg_status cbg_model_feature_name(const cbg_model_t* model, int64_t flat_index, const char** name) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    require(name, "name");
    *name = m.flat_names[index_in(flat_index, m.flat_names.size(), "flat_index")].c_str();
  });
}

CBG_API cbg_status cbg_model_cat_feature_index(const cbg_model_t* model, int64_t cat_index, int64_t* flat_index) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    require(flat_index, "flat_index");
    *flat_index = m.impl.cat_features[index_in(cat_index, m.impl.cat_features.size(), "cat_index")].flat_index;
  });
}

CBG_API cbg_status cbg_model_float_feature_index(const cbg_model_t* model, int64_t float_index, int64_t* flat_index) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    require(flat_index, "flat_index");
    *flat_index = m.impl.float_features[index_in(float_index, m.impl.float_features.size(), "float_index")].flat_index;
  });
}

CBG_API cbg_status cbg_model_class_name(const cbg_model_t* model, int64_t index, const char** name) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    require(name, "name");
    *name = m.class_names[index_in(index, m.class_names.size(), "index")].c_str();
  });
}

CBG_API cbg_status cbg_model_info_value(const cbg_model_t* model, const char* key, const char** value) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    require(key, "key");
    require(value, "value");
    const std::string* v = m.impl.info_value(key);
    *value = v == nullptr ? nullptr : v->c_str();
  });
}

CBG_API cbg_status cbg_cat_hash_string(const char* data, size_t size, uint32_t* hash) {
  return guarded(__func__, [&] {
    require(hash, "hash");
    CBG_EXPECTS(data != nullptr || size == 0, cbg::status::null_pointer, "data is NULL");
    *hash = cm::cat_hash(data == nullptr ? "" : data, size);
  });
}

CBG_API cbg_status cbg_cat_hash_int64(int64_t value, uint32_t* hash) {
  return guarded(__func__, [&] {
    require(hash, "hash");
    *hash = cm::cat_hash_int(value);
  });
}

CBG_API cbg_status cbg_model_prediction_columns(const cbg_model_t* model, int32_t prediction_type, int64_t* columns) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    require(columns, "columns");
    *columns = static_cast<int64_t>(cm::prediction_columns(m.impl, to_prediction_type(prediction_type)));
  });
}

CBG_API cbg_status cbg_model_predict_host_desc_init(cbg_model_predict_host_desc_t* desc) {
  return guarded(__func__, [&] {
    require(desc, "desc");
    init_desc(*desc);
    desc->prediction_type = CBG_PREDICTION_RAW_FORMULA_VAL;
  });
}

CBG_API cbg_status cbg_model_predict_host(const cbg_model_t* model, const cbg_model_predict_host_desc_t* desc,
                                          double* out, size_t out_size) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    const host_call c = to_call(m.impl, desc);
    cm::predict_host(m.impl, c.rows, to_prediction_type(c.type), c.tree_begin, c.tree_end, out, out_size);
  });
}

CBG_API cbg_status cbg_model_leaf_indexes_host(const cbg_model_t* model, const cbg_model_predict_host_desc_t* desc,
                                               uint32_t* out, size_t out_size) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    const host_call c = to_call(m.impl, desc);
    cm::leaf_indexes_host(m.impl, c.rows, c.tree_begin, c.tree_end, out, out_size);
  });
}

}  // extern "C"
