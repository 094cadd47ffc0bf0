// SPDX-License-Identifier: Apache-2.0
// The search extension of feature combinations (combinations.hpp), written once over the primitives
// of a path: the host's (combinations.cpp) or the GPU's (combinations_device.cpp). The extension
// gives each level the candidate projections' columns (CatBoost's rule: combination_bases,
// combination_candidates), keeps the projections in the book's cache, and commits a won column
// (its table and eval values from the primitives). Internal (not installed).
//
// Primitives provide: projection_data and committed_column (as combination_book takes them),
// ctx(), set_nan_modes(modes), bytes_of(projection) (static: the memory a cached projection holds),
// make_projections(projections, cached) (per projection a std::unique_ptr<projection_data>: its keys
// and candidate columns; a level's new projections come in one call, so a path can make them in
// bulk; cached(projection) gives a projection made before, or nullptr, which a path may derive new
// ones from; cached may be nullptr), commit(projection, column) (the committed column, its table kept
// in prepared_data::tables) and eval_values(committed) (null without eval rows).
#pragma once

#include <algorithm>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "cbg/ctr/combinations.hpp"
#include "cbg/ctr/unique_values.hpp"
#include "cbg/core/error.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/runtime/profiler.hpp"
#include "cbg/train/search_extension.hpp"
#include "src/ctr/combination_book.hpp"

namespace cbg::ctr {

template <class Primitives>
class combination_search final : public train::search_extension {
 public:
  using projection_data = typename Primitives::projection_data;
  using committed_column = typename Primitives::committed_column;

  // `prepared` must outlive the extension; committed combinations are appended to it.
  // `leaf_count_limit`: ctr_leaf_count_limit (a combination is never a single feature).
  template <class... Args>
  combination_search(prepared_data& prepared, int max_complexity, std::uint64_t leaf_count_limit, Args&&... args)
      : primitives_(prepared, std::forward<Args>(args)...),
        prepared_(prepared),
        max_complexity_(max_complexity),
        leaf_count_limit_(leaf_count_limit),
        ctr_cats_(combination_cats(prepared)),
        cat_unique_(cat_unique_values(prepared)) {
    // The projections kept beyond the level's, and their bytes (the policy's A/B fields; only speed
    // and memory depend on them).
    const std::int64_t cache = primitives_.ctx().policy().combo_cache_projections;
    if (cache >= 0) book_.set_cache_limit(static_cast<std::size_t>(cache));
    const std::int64_t bytes = primitives_.ctx().policy().combo_cache_bytes;
    if (bytes >= 0) book_.set_cache_bytes(static_cast<std::size_t>(bytes));
  }

  void set_nan_modes(const std::vector<std::uint8_t>& modes) override { primitives_.set_nan_modes(modes); }

  std::vector<column> candidates(const std::vector<train::split>& chosen,
                                 const std::function<float(std::int32_t, std::int32_t)>& float_border) override {
    const stage_range range(primitives_.ctx(), "combinations.candidates");
    drop_stale();
    // Base projections: those of the CTR splits already in the tree, and one of its float and
    // one-hot splits (CatBoost's CPU rule).
    const std::vector<model::projection> bases = combination_bases(chosen, prepared_, float_border);
    return book_.template level<column>(
        combination_candidates(bases, ctr_cats_, max_complexity_),
        [this](const std::vector<model::projection>& projs) {
          return primitives_.make_projections(projs, [this](const model::projection& q) { return book_.find(q); });
        },
        [](const projection_data& p) { return Primitives::bytes_of(p); });
  }

  std::int32_t commit(std::size_t k) override {
    const stage_range range(primitives_.ctx(), "combinations.commit");
    const auto& c = book_.last(k);
    if (const auto id = book_.id_of(c.desc)) return *id;
    // Several permutations: the first commit's borders become the column's for every permutation.
    if (shared_) shared_->emplace(c.desc, c.borders);
    const projection_data& p = book_.get(c.desc.base.proj, maker());
    return book_.add(c.desc, primitives_.commit(p, c));
  }

  [[nodiscard]] std::uint64_t column_unique_values(std::size_t k) const override {
    // A table keeps at most ctr_leaf_count_limit values.
    return std::min(projection_unique_values(book_.last(k).desc.base.proj, cat_unique_, prepared_.learn->num_rows()),
                    leaf_count_limit_);
  }

  [[nodiscard]] const model::ctr_base* column_base(std::size_t k) const override { return &book_.last(k).desc.base; }

  [[nodiscard]] float border(std::int32_t feature, std::int32_t bin) const override {
    return book_.border(feature, bin);
  }

  [[nodiscard]] const float* eval_values(std::int32_t feature) const override {
    return primitives_.eval_values(book_.committed(feature));
  }

  std::vector<const std::uint8_t*> committed_bins(const std::vector<std::int32_t>& features) override {
    const stage_range range(primitives_.ctx(), "combinations.committed_bins");
    drop_stale();
    // Within the cache's limits (an extension that never searches has no levels that evict), before
    // any of the tree's projections is asked for: none of them is dropped while the tree needs it.
    book_.trim([](const projection_data& q) { return Primitives::bytes_of(q); });
    std::vector<const std::uint8_t*> out;
    for (const std::int32_t feature : features) out.push_back(bins_of(feature));
    return out;
  }

  // Shares the columns' borders with the extensions of other permutations (combination_borders).
  void share_borders(std::shared_ptr<combination_borders> shared) {
    shared_ = shared;
    primitives_.share_borders(std::move(shared));
  }

 private:
  // Drops the cached projections with a column binned with other borders than those another
  // permutation committed it with since (they are made again, binned with those).
  void drop_stale() {
    if (!shared_) return;
    book_.drop_if([this](const projection_data& p) {
      for (const auto& c : p.columns) {
        const auto it = shared_->find(c.desc);
        if (it != shared_->end() && it->second != c.borders) return true;
      }
      return false;
    });
  }

  // A committed feature's bins here (its projection made when not cached; committed here too when
  // another permutation committed it: this one's table and eval values, the same table).
  const std::uint8_t* bins_of(std::int32_t feature) {
    const model::ctr_description& desc = book_.description(feature);
    const projection_data& p = book_.get(desc.base.proj, maker());
    for (const auto& c : p.columns) {
      if (!(c.desc == desc)) continue;
      if (!book_.id_of(desc)) book_.add(desc, primitives_.commit(p, c));
      return c.bins.data();
    }
    CBG_FAIL(status::internal, "feature combinations: a committed column is not among its projection's");
  }

  auto maker() {
    return [this](const model::projection& proj) {
      auto made = primitives_.make_projections({proj}, nullptr);
      return std::move(made.front());
    };
  }

  Primitives primitives_;
  prepared_data& prepared_;
  int max_complexity_;
  std::uint64_t leaf_count_limit_;
  std::vector<std::int32_t> ctr_cats_;
  std::vector<std::uint64_t> cat_unique_;  // the model-size regularization's counts
  combination_book<projection_data, committed_column> book_{prepared_};
  std::shared_ptr<combination_borders> shared_;  // several permutations: the committed columns' borders
};

}  // namespace cbg::ctr
