// SPDX-License-Identifier: Apache-2.0
// What the host and the GPU extensions of feature combinations (combinations.cpp,
// combinations_device.cpp) keep besides their data: the projection cache, the last level's
// candidate columns and the committed features with their ids. Internal (not installed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/quantize/quantizer.hpp"

namespace cbg::ctr {

// Projections whose columns stay cached between levels (and so between iterations: a projection's
// columns do not depend on the iteration) beyond those of the current level, least recently wanted
// dropped first, and the bytes they may hold (at 2M learn rows a projection with four columns holds
// ~16 MB plus ~16 bytes per distinct key). Most candidates contain the float splits of their tree
// (new in most trees), so beyond ~128 the cache stops saving projections.
inline constexpr std::size_t max_cached_projections = 128;
inline constexpr std::size_t max_cached_bytes = std::size_t{2} << 30;

// Projection: holds `columns`, each with `desc`, `borders` and `bins` (whose data() the search
// reads); Committed: what a committed column keeps, with `borders`.
// Per float feature (of `float_count`): 1 when its quantized nan_mode (`modes`) puts NaN on the "1"
// side of its splits, as the model's NaN treatment does.
inline std::vector<std::uint8_t> nan_is_one_of(const std::vector<std::uint8_t>& modes, std::int64_t float_count) {
  std::vector<std::uint8_t> out;
  for (std::int64_t f = 0; f < float_count; ++f) {
    out.push_back(static_cast<std::size_t>(f) < modes.size() &&
                  modes[static_cast<std::size_t>(f)] == static_cast<std::uint8_t>(quantize::nan_mode::max));
  }
  return out;
}

template <class Projection, class Committed>
class combination_book {
 public:
  using column_data = typename decltype(Projection::columns)::value_type;

  explicit combination_book(prepared_data& prepared) : prepared_(prepared) {}

  // The columns (Column{bins pointer, border count}) of the level's candidate projections `wanted`
  // (ascending; make_many(projections) gives those not cached, all at once), leaving out those without
  // borders. Before the new ones are made, the projections least recently wanted are dropped until at
  // most the cache limit of others stay, whose bytes (bytes_of(projection)) are within the byte
  // limit. commit() picks from them.
  template <class Column, class MakeMany, class BytesOf>
  std::vector<Column> level(const std::vector<model::projection>& wanted, MakeMany&& make_many, BytesOf&& bytes_of) {
    last_.clear();
    ++clock_;
    evict(wanted, bytes_of);
    std::vector<model::projection> missing;
    for (const model::projection& proj : wanted) {
      if (cache_.find(proj) == cache_.end()) missing.push_back(proj);
    }
    if (!missing.empty()) {
      std::vector<std::unique_ptr<Projection>> made = make_many(missing);
      CBG_EXPECTS(made.size() == missing.size(), status::internal, "feature combinations: projections are missing");
      for (std::size_t k = 0; k < missing.size(); ++k) cache_.emplace(missing[k], entry{std::move(made[k]), 0});
    }
    std::vector<Column> out;
    for (const model::projection& proj : wanted) {
      entry& e = cache_.at(proj);
      e.used = clock_;
      for (const column_data& c : e.data->columns) {
        if (c.borders.empty()) continue;
        out.push_back({c.bins.data(), static_cast<std::int32_t>(c.borders.size())});
        last_.push_back(&c);
      }
    }
    return out;
  }

  // How many projections, and how many bytes of them, stay cached beyond the level's
  // (max_cached_projections and max_cached_bytes unless set; only speed and memory depend on them).
  void set_cache_limit(std::size_t n) { max_cached_ = n; }
  void set_cache_bytes(std::size_t bytes) { max_cached_bytes_ = bytes; }

  // The projection `proj` (made once).
  template <class Make>
  const Projection& get(const model::projection& proj, Make&& make) {
    auto it = cache_.find(proj);
    if (it == cache_.end()) it = cache_.emplace(proj, entry{make(proj), clock_}).first;
    return *it->second.data;
  }

  // Drops the least recently wanted projections beyond the cache's limits (as a level does).
  template <class BytesOf>
  void trim(BytesOf&& bytes_of) {
    evict({}, bytes_of);
  }

  // Drops the cached projections for which stale(projection) holds.
  template <class Stale>
  void drop_if(Stale&& stale) {
    for (auto it = cache_.begin(); it != cache_.end();) it = stale(*it->second.data) ? cache_.erase(it) : std::next(it);
  }

  // The projection `proj` when it is cached, else nullptr.
  [[nodiscard]] const Projection* find(const model::projection& proj) const {
    const auto it = cache_.find(proj);
    return it == cache_.end() ? nullptr : it->second.data.get();
  }

  // Column k of the last level.
  [[nodiscard]] const column_data& last(std::size_t k) const {
    CBG_EXPECTS(k < last_.size(), status::internal, "feature combinations: no such candidate column");
    return *last_[k];
  }

  // The feature id of a committed column.
  [[nodiscard]] std::optional<std::int32_t> id_of(const model::ctr_description& d) const {
    const auto it = id_of_.find(d);
    return it == id_of_.end() ? std::nullopt : std::optional<std::int32_t>(it->second);
  }

  // Records a committed column: appended to prepared_data::derived, so its feature id is the float
  // count plus its index there. The books of several permutations share the prepared data: a
  // description another book appended keeps its id.
  std::int32_t add(const model::ctr_description& desc, Committed c) {
    const std::optional<std::int32_t> known = shared_id_of(desc);
    std::int32_t id = 0;
    if (known) {
      id = *known;
    } else {
      derived_feature d;
      d.kind = derived_kind::ctr;
      d.cat_index = desc.base.proj.cat_features.front();
      d.ctr = desc;
      prepared_.derived.push_back(d);
      id = static_cast<std::int32_t>(prepared_.float_count + static_cast<std::int64_t>(prepared_.derived.size()) - 1);
    }
    committed_.emplace(id, std::move(c));
    id_of_[desc] = id;
    return id;
  }

  // The description of committed feature `feature` (by this book or another sharing the prepared data).
  [[nodiscard]] const model::ctr_description& description(std::int32_t feature) const {
    const std::int64_t k = static_cast<std::int64_t>(feature) - prepared_.float_count;
    CBG_EXPECTS(k >= 0 && k < static_cast<std::int64_t>(prepared_.derived.size()), status::internal,
                fmt::format("feature combinations: feature {} was not committed", feature));
    return prepared_.derived[static_cast<std::size_t>(k)].ctr;
  }

  [[nodiscard]] const Committed& committed(std::int32_t feature) const {
    const auto it = committed_.find(feature);
    CBG_EXPECTS(it != committed_.end(), status::internal,
                fmt::format("feature combinations: feature {} was not committed", feature));
    return it->second;
  }

  [[nodiscard]] float border(std::int32_t feature, std::int32_t bin) const {
    const Committed& c = committed(feature);
    CBG_EXPECTS(bin >= 0 && static_cast<std::size_t>(bin) < c.borders.size(), status::internal,
                fmt::format("feature combinations: feature {} has no border {}", feature, bin));
    return c.borders[static_cast<std::size_t>(bin)];
  }

 private:
  struct entry {
    std::unique_ptr<Projection> data;
    std::uint64_t used = 0;  // the last level that wanted it
  };

  // Drops the projections that `wanted` does not name, least recently wanted first, until at most
  // max_cached_ of them holding at most max_cached_bytes_ stay.
  template <class BytesOf>
  void evict(const std::vector<model::projection>& wanted, BytesOf&& bytes_of) {
    std::vector<std::pair<std::uint64_t, typename std::map<model::projection, entry>::iterator>> others;
    std::size_t bytes = 0;
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      if (std::binary_search(wanted.begin(), wanted.end(), it->first)) continue;
      others.emplace_back(it->second.used, it);
      bytes += bytes_of(*it->second.data);
    }
    // Oldest first; ties in the projections' order (the map's), so the choice is deterministic.
    std::stable_sort(others.begin(), others.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t kept = others.size();
    for (auto& other : others) {
      if (kept <= max_cached_ && bytes <= max_cached_bytes_) break;
      bytes -= bytes_of(*other.second->second.data);
      cache_.erase(other.second);
      --kept;
    }
  }

  // The id of `desc` in prepared_data::derived (appended by another book), if any.
  [[nodiscard]] std::optional<std::int32_t> shared_id_of(const model::ctr_description& desc) const {
    for (std::size_t k = 0; k < prepared_.derived.size(); ++k) {
      if (prepared_.derived[k].kind == derived_kind::ctr && prepared_.derived[k].ctr == desc) {
        return static_cast<std::int32_t>(prepared_.float_count + static_cast<std::int64_t>(k));
      }
    }
    return std::nullopt;
  }

  prepared_data& prepared_;
  std::size_t max_cached_ = max_cached_projections;
  std::size_t max_cached_bytes_ = max_cached_bytes;
  std::uint64_t clock_ = 0;
  std::map<model::projection, entry> cache_;
  std::vector<const column_data*> last_;
  std::map<std::int32_t, Committed> committed_;
  std::map<model::ctr_description, std::int32_t> id_of_;
};

}  // namespace cbg::ctr
