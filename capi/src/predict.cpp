// SPDX-License-Identifier: Apache-2.0
// Prediction entry points: the GPU evaluator over pools (cbg_predict_*).
#include <fmt/format.h>

#include <cstddef>
#include <string>

#include "cbg/apply/evaluator.hpp"
#include "cbg/dist/predict.hpp"
#include "desc.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "tensor_ref.hpp"

namespace {

using namespace cbg::capi;
namespace ca = cbg::apply;

ca::predict_options to_options(const cbg_predict_desc_t* desc) {
  cbg_predict_desc_t d{};
  init_desc(d);
  if (desc != nullptr) read_desc(*desc, d, offsetof(cbg_predict_desc_t, devices), "cbg_predict_desc_t");
  CBG_EXPECTS(d.prediction_type >= 0 && d.prediction_type < cbg::model::prediction_type_count,
              cbg::status::invalid_argument,
              fmt::format("desc.prediction_type is {}, expected a CBG_PREDICTION_* value", d.prediction_type));
  CBG_EXPECTS(d.output == CBG_PREDICT_VALUES || d.output == CBG_PREDICT_LEAF_INDEXES, cbg::status::invalid_argument,
              fmt::format("desc.output is {}, expected CBG_PREDICT_VALUES or CBG_PREDICT_LEAF_INDEXES", d.output));
  CBG_EXPECTS(d.tree_begin >= 0 && d.tree_end >= 0, cbg::status::invalid_argument, "negative tree range");
  ca::predict_options o;
  o.type = static_cast<cbg::model::prediction_type>(d.prediction_type);
  o.output = d.output == CBG_PREDICT_LEAF_INDEXES ? ca::output_kind::leaf_indexes : ca::output_kind::values;
  o.tree_begin = static_cast<std::size_t>(d.tree_begin);
  o.tree_end = static_cast<std::size_t>(d.tree_end);
  return o;
}

// The desc's `devices` text (empty: the pool's device).
std::string devices_of(const cbg_predict_desc_t* desc) {
  cbg_predict_desc_t d{};
  init_desc(d);
  if (desc != nullptr) read_desc(*desc, d, offsetof(cbg_predict_desc_t, devices), "cbg_predict_desc_t");
  return d.devices != nullptr ? std::string(d.devices) : std::string();
}

// The caller's output tensor (borrowed whatever its kind).
cbg::mutable_tensor_view output_view(const cbg_tensor_ref_t* out, int device) {
  require(out, "out");
  return cbg::import_mutable_tensor(to_core(*out), cbg::import_rules{"out", 1, 2, true, device});
}

// cbg_predict_to_device / cbg_predict_to_host: the same checks, then `run`.
template <class Run>
void predict(const cbg_model_t* model, const cbg_pool_t* pool, const cbg_predict_desc_t* desc,
             const cbg_tensor_ref_t* out, cbg_stream_t stream, Run run) {
  const auto& m = checked(model, "model");
  const auto& p = checked(pool, "pool");
  const ca::predict_options o = to_options(desc);
  const cbg::mutable_tensor_view v = output_view(out, p.impl.ctx()->device());
  cudaStream_t s = stream;
  run(m.device_images, m.impl, p.impl, o, v, s);
}

}  // namespace

extern "C" {

CBG_API cbg_status cbg_predict_desc_init(cbg_predict_desc_t* desc) {
  return guarded(__func__, [&] {
    require(desc, "desc");
    init_desc(*desc);
    desc->prediction_type = CBG_PREDICTION_RAW_FORMULA_VAL;
    desc->output = CBG_PREDICT_VALUES;
  });
}

CBG_API cbg_status cbg_predict_output_shape(const cbg_model_t* model, const cbg_predict_desc_t* desc, int64_t n_rows,
                                            int64_t* shape) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    require(shape, "shape");
    const auto s = ca::output_shape(m.impl, to_options(desc), n_rows);
    shape[0] = s[0];
    shape[1] = s[1];
  });
}

CBG_API cbg_status cbg_predict_to_device(const cbg_model_t* model, const cbg_pool_t* pool,
                                         const cbg_predict_desc_t* desc, const cbg_tensor_ref_t* out,
                                         cbg_stream_t stream) {
  return guarded(__func__, [&] {
    const std::string devices = devices_of(desc);
    predict(model, pool, desc, out, stream, [&](auto&... args) { cbg::dist::predict_to_devices(devices, args...); });
  });
}

CBG_API cbg_status cbg_predict_to_host(const cbg_model_t* model, const cbg_pool_t* pool, const cbg_predict_desc_t* desc,
                                       const cbg_tensor_ref_t* out, cbg_stream_t stream) {
  return guarded(__func__, [&] {
    const std::string devices = devices_of(desc);
    predict(model, pool, desc, out, stream, [&](auto&... args) {
      cbg::dist::refuse_other_devices(devices, args...);
      ca::predict_to_host(args...);
    });
  });
}

}  // extern "C"
