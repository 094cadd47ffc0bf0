// SPDX-License-Identifier: Apache-2.0
// cbg_model_feature_importance: CatBoost's feature importances (cbg/fstr) of a model, on a pool
// where the type needs one. The pool contributes its rows' leaf indexes (the GPU evaluator on a GPU
// context, the host one on a CPU context) and its label, weight and baseline columns.
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "cbg/apply/evaluator.hpp"
#include "cbg/fstr/feature_importance.hpp"
#include "cbg/tensor/tensor_copy.hpp"
#include "guard.hpp"
#include "handles.hpp"

namespace {

using namespace cbg::capi;
namespace cf = cbg::fstr;

const char* type_name(cf::fstr_type t) {
  switch (t) {
    case cf::fstr_type::prediction_values_change:
      return "PredictionValuesChange";
    case cf::fstr_type::loss_function_change:
      return "LossFunctionChange";
    case cf::fstr_type::shap_values:
      return "ShapValues";
    case cf::fstr_type::interaction:
      return "Interaction";
  }
  return "?";
}

// Column `j` of a pool tensor as doubles; device memory is copied to the host first (accounted).
std::vector<double> host_column(const cbg::context& ctx, const cbg::tensor_view& t, std::int64_t j) {
  cbg::tensor_view v = t;
  std::vector<unsigned char> copy;
  if (t.memory == cbg::memory_kind::device) {
    copy.resize(static_cast<std::size_t>(t.size()) * cbg::size_of(t.type));
    cbg::mutable_tensor_view dst;
    dst.data = copy.data();
    dst.type = t.type;
    dst.rank = t.rank;
    std::int64_t stride = 1;
    for (int i = t.rank - 1; i >= 0; --i) {
      dst.shape[i] = t.shape[i];
      dst.strides[i] = stride;
      stride *= t.shape[i];
    }
    cbg::copy_tensor(ctx, dst, t);
    v = dst.as_const();
  }
  const cbg::column_view c = cbg::column_of(v, j);
  std::vector<double> out(static_cast<std::size_t>(c.size));
  for (std::int64_t r = 0; r < c.size; ++r) out[static_cast<std::size_t>(r)] = c.value(r);
  return out;
}

cf::pool_leaves leaves_of(const cbg_model_t& m, const cbg::pool& p) {
  cf::pool_leaves out;
  out.rows = static_cast<std::size_t>(p.num_rows());
  const std::size_t trees = m.impl.tree_count();
  out.leaves.resize(out.rows * trees);
  cbg::apply::predict_options o;
  o.output = cbg::apply::output_kind::leaf_indexes;
  cbg::mutable_tensor_view v;
  v.data = out.leaves.data();
  v.type = cbg::dtype::uint32;
  v.rank = 2;
  v.shape[0] = p.num_rows();
  v.shape[1] = static_cast<std::int64_t>(trees);
  v.strides[0] = static_cast<std::int64_t>(trees);
  v.strides[1] = 1;
  if (out.rows > 0 && trees > 0) cbg::apply::predict_to_host(m.device_images, m.impl, p, o, v, nullptr);
  if (p.weight()) {
    for (double w : host_column(*p.ctx(), *p.weight(), 0)) out.weights.push_back(static_cast<float>(w));
  }
  return out;
}

cf::pool_targets targets_of(const cbg::model::model& m, const cbg::pool& p) {
  CBG_EXPECTS(p.label().has_value(), cbg::status::bad_data, "LossFunctionChange needs a pool with a label");
  CBG_EXPECTS(cbg::pool::dims_of(p.label()) == 1, cbg::status::unsupported,
              "LossFunctionChange takes one label column");
  cf::pool_targets t;
  t.labels = host_column(*p.ctx(), *p.label(), 0);
  if (p.baseline()) {
    const std::int64_t k = cbg::pool::dims_of(p.baseline());
    CBG_EXPECTS(k == m.approx_dimension, cbg::status::bad_data,
                fmt::format("the baseline has {} columns; the model has {} dimensions", k, m.approx_dimension));
    const auto rows = static_cast<std::size_t>(p.num_rows());
    t.baseline.resize(rows * static_cast<std::size_t>(k));
    for (std::int64_t j = 0; j < k; ++j) {
      const std::vector<double> c = host_column(*p.ctx(), *p.baseline(), j);
      for (std::size_t r = 0; r < rows; ++r)
        t.baseline[r * static_cast<std::size_t>(k) + static_cast<std::size_t>(j)] = c[r];
    }
  }
  return t;
}

}  // namespace

extern "C" {

CBG_API cbg_status cbg_model_feature_importance(const cbg_model_t* model, int32_t type, const cbg_pool_t* pool,
                                                double* out, size_t capacity, int64_t* shape, int32_t* ndim) {
  return guarded(__func__, [&] {
    const auto& m = checked(model, "model");
    require(shape, "shape");
    require(ndim, "ndim");
    CBG_EXPECTS(type >= 0 && type < cf::fstr_type_count, cbg::status::invalid_argument,
                fmt::format("type is {}, expected a CBG_FSTR_* value", type));
    const auto t = static_cast<cf::fstr_type>(type);
    const cbg_pool_t* p = pool != nullptr ? &checked(pool, "pool") : nullptr;
    const bool needs_pool = t == cf::fstr_type::loss_function_change || t == cf::fstr_type::shap_values;
    CBG_EXPECTS(!needs_pool || p != nullptr, cbg::status::null_pointer,
                fmt::format("{} needs a pool (pool is NULL)", type_name(t)));
    CBG_EXPECTS(m.impl.tree_count() > 0, cbg::status::invalid_argument, "the model has no trees");
    if (p != nullptr) {
      CBG_EXPECTS(p->impl.num_features() >= static_cast<std::int64_t>(m.impl.flat_feature_count()), cbg::status::shape,
                  fmt::format("the model reads {} features but the pool has {}", m.impl.flat_feature_count(),
                              p->impl.num_features()));
    }
    const auto features = static_cast<std::int64_t>(m.impl.flat_feature_count());
    std::vector<cf::feature_pair_score> pairs;
    std::size_t needed = 0;
    switch (t) {
      case cf::fstr_type::prediction_values_change:
      case cf::fstr_type::loss_function_change:
        *ndim = 1;
        shape[0] = features;
        needed = static_cast<std::size_t>(features);
        break;
      case cf::fstr_type::shap_values: {
        const int dims = cf::shap_dimensions(m.impl);
        const std::int64_t rows = p->impl.num_rows();
        const std::int64_t width = p->impl.num_features();
        // As CatBoost: three axes for every model of several dimensions (RMSEWithUncertainty: [rows, 1, ...]).
        const bool multi = m.impl.approx_dimension > 1;
        *ndim = multi ? 3 : 2;
        shape[0] = rows;
        shape[1] = multi ? dims : width + 1;
        if (multi) shape[2] = width + 1;
        needed = static_cast<std::size_t>(rows) * static_cast<std::size_t>(dims) * static_cast<std::size_t>(width + 1);
        break;
      }
      case cf::fstr_type::interaction:
        pairs = cf::interaction(m.impl);
        *ndim = 2;
        shape[0] = static_cast<std::int64_t>(pairs.size());
        shape[1] = 3;
        needed = pairs.size() * 3;
        break;
    }
    if (out == nullptr && capacity == 0) return;  // the size query
    require(out, "out");
    CBG_EXPECTS(capacity >= needed, cbg::status::shape,
                fmt::format("out holds {} values; {} needs {}", capacity, type_name(t), needed));
    switch (t) {
      case cf::fstr_type::prediction_values_change: {
        std::vector<double> w = m.impl.leaf_weights;
        if (p != nullptr) w = cf::pool_leaf_weights(m.impl, leaves_of(m, p->impl));
        const std::vector<double> v = cf::prediction_values_change(m.impl, w);
        std::memcpy(out, v.data(), v.size() * sizeof(double));
        break;
      }
      case cf::fstr_type::loss_function_change: {
        const cf::pool_leaves leaves = leaves_of(m, p->impl);
        const std::vector<double> v = cf::loss_function_change(m.impl, cf::shap_leaf_weights(m.impl, &leaves), leaves,
                                                               targets_of(m.impl, p->impl));
        std::memcpy(out, v.data(), v.size() * sizeof(double));
        break;
      }
      case cf::fstr_type::shap_values: {
        const cf::pool_leaves leaves = leaves_of(m, p->impl);
        cf::shap_values(m.impl, cf::shap_leaf_weights(m.impl, &leaves), leaves, p->impl.num_features(), out);
        break;
      }
      case cf::fstr_type::interaction:
        for (std::size_t i = 0; i < pairs.size(); ++i) {
          out[3 * i] = static_cast<double>(pairs[i].first);
          out[3 * i + 1] = static_cast<double>(pairs[i].second);
          out[3 * i + 2] = pairs[i].score;
        }
        break;
    }
  });
}

}  // extern "C"
