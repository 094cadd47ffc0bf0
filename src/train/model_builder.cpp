// SPDX-License-Identifier: Apache-2.0
#include "cbg/train/model_builder.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/quantize/quantize_math.hpp"
#include "cbg/train/params.hpp"

namespace cbg::train {

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
  for (std::size_t f = 0; f < nf; ++f) {
    auto& u = used[f];
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    model::float_feature ff;
    ff.index = static_cast<std::int32_t>(f);
    ff.flat_index = static_cast<std::int32_t>(f);
    ff.name = f < in.feature_names.size() ? in.feature_names[f] : std::string();
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

  for (const built_tree& t : trees) {
    m.tree_start_offsets.push_back(static_cast<std::int32_t>(m.tree_splits.size()));
    m.tree_sizes.push_back(static_cast<std::int32_t>(t.splits.size()));
    for (const split& s : t.splits) m.tree_splits.push_back(binary.at({s.feature, s.bin}));
    const std::size_t leaves = std::size_t{1} << t.splits.size();
    for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
      for (int k = 0; k < dims; ++k) {
        m.leaf_values.push_back(k < trained ? t.values[leaf * static_cast<std::size_t>(trained) +
                                                       static_cast<std::size_t>(k)]
                                            : 0.0);
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
  if (!in.class_names.empty()) {
    nlohmann::json names = nlohmann::json::array(), to_label = nlohmann::json::array();
    for (std::size_t c = 0; c < in.class_names.size(); ++c) {
      names.push_back(std::stoll(in.class_names[c]));
      to_label.push_back(static_cast<double>(c));
    }
    const nlohmann::json cp{{"class_label_type", "Integer"},
                            {"class_to_label", to_label},
                            {"class_names", names},
                            {"classes_count", 0}};
    m.info.emplace_back("class_params", cp.dump());
  }
  if (!in.training_json.empty()) m.info.emplace_back("training", in.training_json);
  // No time stamp or guid: the same training gives the same bytes (determinism tests).
  m.info.emplace_back("catboost_version_info", "cbgpu");
  model::validate(m);
  return m;
}

}  // namespace cbg::train
