// SPDX-License-Identifier: Apache-2.0
// The tree search's level loop (tree_search_levels.hpp).
#include "src/train/tree_search_levels.hpp"

namespace cbg::train::detail {

tree_structure search_levels(search_primitives& p, search_extension* extension, int depth) {
  p.begin();
  for (int d = 0; d < depth; ++d) {
    const bool last = d + 1 == depth;
    p.pool_level(d, last);
    // Feature combinations: the extension's columns of the level; a won one is recorded under the
    // id the extension commits it as.
    if (extension != nullptr) {
      if (const std::optional<std::vector<split>> chosen = p.splits_before(d)) {
        const std::vector<search_extension::column> columns =
            extension->candidates(*chosen, [&](std::int32_t f, std::int32_t bin) { return p.float_border(f, bin); });
        if (!columns.empty()) {
          std::vector<double> noise;
          if (extension->column_noise) {
            for (std::size_t k = 0; k < columns.size(); ++k) noise.push_back(extension->column_noise(d, k));
          }
          std::vector<float> weight;
          if (extension->column_weights) weight = extension->column_weights(*chosen, columns.size());
          const column_choice won = p.score_columns(d, last, columns, noise, weight);
          if (won.column >= 0) {
            const split s{extension->commit(static_cast<std::size_t>(won.column)), won.bin};
            if (!p.take_column(d, last, columns[static_cast<std::size_t>(won.column)], s)) break;
            continue;
          }
        }
      }
    }
    if (!p.take_pool_split(d, last)) break;
  }
  return p.finish();
}

}  // namespace cbg::train::detail
