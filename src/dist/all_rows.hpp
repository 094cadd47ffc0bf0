// SPDX-License-Identifier: Apache-2.0
// Categorical features over several processes (a context with a communicator): each process holds
// only its rank's rows, but ordered CTR values, the model's CTR tables and feature combinations
// depend on every learn row in permutation order. So every rank gathers what the CTR preparation
// and the combinations read (the categorical columns as the pool holds them - integers or hashes -,
// the label, and the float columns only for combinations) from every rank in rank order, runs the
// single-GPU preparation over all rows (each rank the same, deterministically) and keeps its rows
// of the derived columns (rank_part) and of the combinations' columns and eval values
// (rank_rows_extension). The eval set likewise: every rank's eval rows in rank order. The model is
// then the single-GPU model of all rows in rank order wherever the float features' is (every rank
// but the last holds a multiple of 4096 rows). Memory: each rank holds every rank's rows of those
// columns and the CTR state of all rows (what one GPU holds for them). Internal.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/train/search_extension.hpp"

namespace cbg::dist {

// Every rank's learn and eval row counts (an eval count of -1: that rank has no eval set), in rank
// order; every rank must have learn rows, and every rank or none an eval set. Blocks.
struct rank_row_counts {
  row_split learn, eval;  // eval: zeros without an eval set
};
rank_row_counts exchange_row_counts(reducer& red, const context& ctx, std::int64_t learn_rows, std::int64_t eval_rows);

// Every rank's rows of a learn pool and of an eval pool, in rank order, on this rank's device: the
// features with their categorical flags, names and hashed flags, and the label (no weight or
// baseline: the CTRs do not read them). Float columns are gathered with `floats`; without, each is
// a stand-in (one zero repeated) that only keeps the pool's shape: the CTR preparation passes the
// float columns through, and rank_part takes them from the rank's own pool.
struct all_rows {
  rank_row_counts counts;
  std::vector<device_buffer<unsigned char>> buffers;
  std::optional<pool> learn, eval;
  [[nodiscard]] std::int64_t first(bool eval_rows, int rank) const {
    return (eval_rows ? counts.eval : counts.learn).first(rank);
  }
};
// The pools' columns must be device-readable (device, managed or pinned memory). Blocks.
std::unique_ptr<all_rows> gather_all_rows(const pool& learn, const pool* eval, const communicator& c, bool floats);

// A rank's part of a pool prepared over every rank's rows (ctr::prepared_data's derived pools):
// `own`'s float features `float_flat` (the prepared pool's first columns), then rows [first, first +
// own's rows) of the prepared pool's other columns, with `own`'s label, weight and baseline.
std::unique_ptr<pool> rank_part(const pool& all, const pool& own, const std::vector<std::int32_t>& float_flat,
                                std::int64_t first);

// The search extension `all` (columns and eval values over every rank's rows) as one rank's: its
// learn rows from `learn_first`, its eval rows from `eval_first`; every other call is `all`'s. The
// trainer's score noise and model-size weights are set on this one (the search reads them here).
std::unique_ptr<train::search_extension> rank_rows_extension(std::unique_ptr<train::search_extension> all,
                                                             std::int64_t learn_first, std::int64_t eval_first);

}  // namespace cbg::dist
