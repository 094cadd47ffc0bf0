// SPDX-License-Identifier: Apache-2.0
#include "cbg/train/model_builder.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/quantize/quantize_math.hpp"
#include "cbg/train/params.hpp"

namespace cbg::train {

namespace {

// The model's one-hot and CTR features from the splits on derived columns (features.hpp), numbered
// after the float features in the model's binary-feature order (one-hot features by categorical
// feature, values ascending; CTR features in TModelCtr order, borders ascending), and the CTR
// tables of the CTR bases used.
void add_categorical_features(const ctr::prepared_data& cat, const std::vector<std::vector<std::int32_t>>& used,
                              const std::vector<std::map<std::int32_t, float>>& borders,
                              const std::vector<std::string>& names, std::int32_t& next,
                              std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t>& binary, model::model& m) {
  const auto nfloat = static_cast<std::size_t>(cat.float_count);
  std::vector<bool> cat_used(cat.cat_flat.size(), false);
  // one-hot: (cat index, value) -> derived column
  std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> one_hot;
  std::vector<std::pair<model::ctr_description, std::int32_t>> ctrs;
  for (std::size_t k = 0; k < cat.derived.size(); ++k) {
    const auto f = static_cast<std::int32_t>(nfloat + k);
    if (used[static_cast<std::size_t>(f)].empty()) continue;
    const ctr::derived_feature& d = cat.derived[k];
    cat_used[static_cast<std::size_t>(d.cat_index)] = true;
    for (std::int32_t c : d.ctr.base.proj.cat_features) cat_used[static_cast<std::size_t>(c)] = true;  // combinations
    for (const auto& s : d.ctr.base.proj.one_hot_splits) cat_used[static_cast<std::size_t>(s.cat_index)] = true;
    if (d.kind == ctr::derived_kind::one_hot)
      one_hot[{d.cat_index, d.value}] = f;
    else
      ctrs.emplace_back(d.ctr, f);
  }
  for (std::size_t c = 0; c < cat.cat_flat.size(); ++c) {
    model::cat_feature cf;
    cf.index = static_cast<std::int32_t>(c);
    cf.flat_index = cat.cat_flat[c];
    const auto flat = static_cast<std::size_t>(cf.flat_index);
    cf.name = flat < names.size() ? names[flat] : std::string();
    cf.used_in_model = cat_used[c];
    m.cat_features.push_back(std::move(cf));
  }
  for (const auto& [key, f] : one_hot) {
    if (m.one_hot_features.empty() || m.one_hot_features.back().cat_index != key.first) {
      model::one_hot_feature oh;
      oh.cat_index = key.first;
      m.one_hot_features.push_back(std::move(oh));
    }
    m.one_hot_features.back().values.push_back(key.second);
    for (std::int32_t bin : used[static_cast<std::size_t>(f)]) binary[{f, bin}] = next;  // one border
    ++next;
  }
  std::sort(ctrs.begin(), ctrs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [desc, f] : ctrs) {
    model::ctr_feature cf;
    cf.ctr = desc;
    for (std::int32_t bin : used[static_cast<std::size_t>(f)]) {
      const auto b = borders[static_cast<std::size_t>(f)].find(bin);
      CBG_EXPECTS(b != borders[static_cast<std::size_t>(f)].end(), status::internal,
                  fmt::format("no border value for the split on CTR column {} bin {}", f, bin));
      cf.borders.push_back(b->second);
      binary[{f, bin}] = next++;
    }
    m.ctr_features.push_back(std::move(cf));
    const bool have = std::any_of(m.ctr_tables.begin(), m.ctr_tables.end(),
                                  [&](const model::ctr_table& t) { return t.base == desc.base; });
    if (!have) {
      const auto t = std::find_if(cat.tables.begin(), cat.tables.end(),
                                  [&](const model::ctr_table& x) { return x.base == desc.base; });
      CBG_EXPECTS(t != cat.tables.end(), status::internal, "no CTR table for a used CTR");
      m.ctr_tables.push_back(*t);
    }
  }
}

}  // namespace

model::model build_model(const model_inputs& in) {
  const auto& trees = *in.trees;
  const auto& borders = *in.borders;
  const auto& modes = *in.nan_modes;
  const std::size_t nf = borders.size();
  model::model m;
  const int trained = in.loss.dims;
  const int dims = trained;
  m.approx_dimension = dims;

  // Used borders per feature (ascending with the bin), and the binary feature index of each
  // (feature, bin).
  std::vector<std::vector<std::int32_t>> used(nf);
  for (const built_tree& t : trees) {
    for (const split& s : t.splits) used[static_cast<std::size_t>(s.feature)].push_back(s.bin);
  }
  std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> binary;
  std::int32_t next = 0;
  const ctr::prepared_data* cat = in.categorical;
  const std::size_t n_float = cat != nullptr ? static_cast<std::size_t>(cat->float_count) : nf;
  for (auto& u : used) {
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
  }
  for (std::size_t f = 0; f < n_float; ++f) {
    const auto& u = used[f];
    model::float_feature ff;
    ff.index = static_cast<std::int32_t>(f);
    ff.flat_index = cat != nullptr ? cat->float_flat[f] : static_cast<std::int32_t>(f);
    const auto flat = static_cast<std::size_t>(ff.flat_index);
    ff.name = flat < in.feature_names.size() ? in.feature_names[flat] : std::string();
    const auto mode = static_cast<quantize::nan_mode>(modes[f]);
    ff.has_nans = mode != quantize::nan_mode::forbidden;
    ff.nan_value_treatment = mode == quantize::nan_mode::min   ? model::nan_treatment::as_false
                             : mode == quantize::nan_mode::max ? model::nan_treatment::as_true
                                                               : model::nan_treatment::as_is;
    for (std::int32_t bin : u) {
      const auto b = borders[f].find(bin);
      CBG_EXPECTS(b != borders[f].end(), status::internal,
                  fmt::format("no border value for the split on feature {} bin {}", f, bin));
      ff.borders.push_back(b->second);
      binary[{static_cast<std::int32_t>(f), bin}] = next++;
    }
    m.float_features.push_back(std::move(ff));
  }
  if (cat != nullptr) add_categorical_features(*cat, used, *in.borders, in.feature_names, next, binary, m);

  for (const built_tree& t : trees) {
    m.tree_start_offsets.push_back(static_cast<std::int32_t>(m.tree_splits.size()));
    m.tree_sizes.push_back(static_cast<std::int32_t>(t.splits.size()));
    for (const split& s : t.splits) m.tree_splits.push_back(binary.at({s.feature, s.bin}));
    const std::size_t leaves = std::size_t{1} << t.splits.size();
    for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
      for (int k = 0; k < dims; ++k) {
        m.leaf_values.push_back(
            k < trained ? t.values[leaf * static_cast<std::size_t>(trained) + static_cast<std::size_t>(k)] : 0.0);
      }
      m.leaf_weights.push_back(leaf < t.leaf_weights.size() ? t.leaf_weights[leaf] : 0.0);
    }
  }
  m.scale = 1.0;
  m.bias.assign(static_cast<std::size_t>(dims), 0.0);
  for (int k = 0; k < trained && static_cast<std::size_t>(k) < in.bias.size(); ++k) {
    m.bias[static_cast<std::size_t>(k)] = in.bias[static_cast<std::size_t>(k)];
  }

  m.info.emplace_back("params", in.params_json);
  if (!in.output_options_json.empty()) m.info.emplace_back("output_options", in.output_options_json);
  if (!in.class_names.empty()) {
    nlohmann::json names = nlohmann::json::array(), to_label = nlohmann::json::array();
    bool integer = !in.class_names_are_text;
    for (std::size_t c = 0; c < in.class_names.size(); ++c) {
      if (!in.class_names_are_text) {
        const double d = std::stod(in.class_names[c]);
        integer = integer && d == std::floor(d) && std::fabs(d) < 9e15;
      }
      to_label.push_back(static_cast<double>(c));
    }
    for (const std::string& c : in.class_names) {
      if (in.class_names_are_text) {
        names.push_back(c);
        continue;
      }
      const double d = std::stod(c);
      if (integer)
        names.push_back(static_cast<std::int64_t>(d));
      else
        names.push_back(d);
    }
    const char* label_type = in.class_names_are_text ? "String" : integer ? "Integer" : "Float";
    const nlohmann::json cp{{"class_label_type", label_type},
                            {"class_to_label", to_label},
                            {"class_names", names},
                            {"classes_count", in.classes_count}};
    m.info.emplace_back("class_params", cp.dump());
  }
  if (!in.training_json.empty()) m.info.emplace_back("training", in.training_json);
  // No time stamp or guid: the same training gives the same bytes (determinism tests).
  m.info.emplace_back("catboost_version_info", "cbgpu");
  model::validate(m);
  return m;
}

}  // namespace cbg::train
