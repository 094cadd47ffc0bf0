// SPDX-License-Identifier: Apache-2.0
// What the GPU paths of the CTR engine share (src/ctr/prepare_device.cpp: simple CTRs; combinations_device.cu:
// feature combinations): the categorical hashes of a column, the permutation and target classes of
// the ordered statistics, the per-category runs in permutation order and the ordered values over
// them, and the table statistics. Launchers only enqueue on the context's stream; the per-element
// math is ctr_math.hpp (shared with the host reference). Internal (not installed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cbg/core/cuda_check.hpp"
#include "cbg/data/column_view.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/model/apply_math.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/train/boosting.hpp"

namespace cbg::ctr::detail {

inline constexpr int ctr_block = 256;

inline unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, (n + ctr_block - 1) / ctr_block));
}

template <class T>
device_buffer<T> upload(const context& ctx, const std::vector<T>& v, const char* what) {
  device_buffer<T> d(v.size(), ctx.stream(), ctx.resource());
  if (!v.empty()) {
    copy_bytes(d.data(), memory_kind::device, v.data(), memory_kind::host, v.size() * sizeof(T), ctx.stream(),
               ctx.copies(), ctx.rules(), CBG_COPY_SITE(what));
  }
  return d;
}

// Category-sized results (one-hot values, CTR tables: what the model stores) in pieces of at most
// strict_d2h_metadata_limit bytes, as the trainer copies its trees: never dataset-sized.
template <class T>
std::vector<T> download(const context& ctx, const T* d, std::size_t n, const char* what) {
  std::vector<T> v(n);
  const std::size_t piece = std::max<std::size_t>(1, strict_d2h_metadata_limit / sizeof(T));
  for (std::size_t at = 0; at < n; at += piece) {
    copy_bytes(v.data() + at, memory_kind::host, d + at, memory_kind::device, std::min(piece, n - at) * sizeof(T),
               ctx.stream(), ctx.copies(), ctx.rules(), CBG_COPY_SITE(what));
  }
  CBG_CUDA_TRY(cudaStreamSynchronize(ctx.stream()));
  return v;
}

// The categorical hash of every row of column `flat` of `p` (device, managed or pinned memory).
device_buffer<std::uint32_t> column_hashes_device(const context& ctx, const pool& p, std::int64_t flat);

// The permutation and the target classes of the ordered statistics, made once (ensure_targets).
struct target_state {
  device_buffer<std::uint32_t> order;  // rows in permutation order
  device_buffer<std::uint8_t> cls;     // per row: its class
  device_buffer<float> targets;        // per row: the training target
  int classes = 2;
  double fixed_scale = 1.0;  // FloatTargetMeanValue sums
};
// Made by ensure_targets (src/ctr/targets_device.hpp) through these: the training target of every
// row's label under `rule` (bad labels are the trainer's to report); the largest of n > 0 values
// (of their absolute values), one float back; per row its class (class index, or how many target
// borders the target is above);
// the rows in permutation order (ascending (permutation_key, row)).
void training_targets(const context& ctx, const column_view& label, const train::target_rule& rule, std::int64_t n,
                      float* out);
float largest(const context& ctx, const float* v, std::int64_t n, const char* what);
float largest_abs(const context& ctx, const float* v, std::int64_t n, const char* what);
void target_classes(const context& ctx, const float* targets, const target_borders& borders, bool multiclass,
                    std::int64_t n, std::uint8_t* cls);
device_buffer<std::uint32_t> permutation(const context& ctx, const permutation_rule& rule, std::int64_t n);

// A categorical feature's runs: the permutation's positions sorted stably by category id (each
// category's rows form a run in permutation order) and the rows before each in its run.
struct category_runs {
  device_buffer<std::uint32_t> sorted_pos, sorted_ids, total;
  device_buffer<std::uint32_t> sorted_rows;  // per sorted position its row (order[sorted_pos]), read coalesced
  device_buffer<unsigned char> scan_temp;
  // ordered_target_columns' scratch: per sorted position its packed (terms, rows) prefix or its
  // fixed-point target prefix (FloatTargetMeanValue), per row its sorted position.
  device_buffer<std::uint64_t> packed_prefix;
  device_buffer<long long> fixed_prefix;
  device_buffer<std::uint32_t> position;
};
// Builds the runs of `ids` (per row, < unique) over the permutation of `t` (the first time only).
void ensure_runs(const context& ctx, const target_state& t, const std::uint32_t* ids, std::int64_t n,
                 std::size_t unique, category_runs& r);
// The ordered values over the runs are ordered_target_columns' (ordered_columns.hpp), several priors
// of one target feature (type, j) at once: prior (num[k], denom[k]) into out[k][rows], k < count.
inline constexpr int max_priors_at_once = 8;
struct prior_outputs {
  int count = 0;
  float num[max_priors_at_once] = {};
  float denom[max_priors_at_once] = {};
  float* out[max_priors_at_once] = {};
};

// Table statistics per id: class counts [id][classes] (zeroed here), class sums and rows (mean
// type), fixed-point target sums (FloatTargetMeanValue), rows per id.
void class_counts(const context& ctx, const std::uint32_t* ids, const std::uint8_t* cls, std::int64_t n, int classes,
                  std::size_t unique, std::int32_t* counts);
void class_sums(const context& ctx, const std::uint32_t* ids, const std::uint8_t* cls, std::int64_t n,
                std::size_t unique, std::uint32_t* sums, std::uint32_t* rows);
void fixed_sums(const context& ctx, const std::uint32_t* ids, const float* targets, std::int64_t n, double scale,
                std::size_t unique, unsigned long long* sums);
void id_counts(const context& ctx, const std::uint32_t* ids, std::int64_t n, std::size_t unique, std::int32_t* counts);
// Counter values of every row from the counts of its id.
void counter_values(const context& ctx, const std::uint32_t* ids, const std::int32_t* counts, std::uint32_t denom,
                    std::int64_t n, float prior_num, float prior_denom, float* out);
// The largest of n > 0 counts.
std::int32_t max_count(const context& ctx, const std::int32_t* counts, std::size_t n);

// One categorical feature's derived columns (src/ctr/prepare_device.cpp), per row of hashes h[n]:
// the one-hot column of value v; counter_calc Full's counts of the rows whose category the table
// (hashes, indices: its buckets) knows; a CTR feature's model value.
void one_hot_values(const context& ctx, const std::uint32_t* h, std::int64_t n, std::int32_t v, float* out);
// marked (optional): per row its key where the table lacks it, else model::ctr_empty_hash (unseen_keys).
void count_known_categories(const context& ctx, const std::uint32_t* h, std::int64_t n, const std::uint64_t* hashes,
                            const std::uint32_t* indices, std::uint64_t n_buckets, std::int32_t* counts,
                            std::uint64_t* marked = nullptr);
void ctr_values_of_categories(const context& ctx, const std::uint32_t* h, std::int64_t n,
                              const model::ctr_table_view& t, const model::ctr_calc& c, float* out);

// Feature combinations (combinations_device.cu).
// The parts of a projection key a kernel reads (a projection of at most max_key_parts features).
inline constexpr int max_key_parts = 16;
struct key_plan {
  int cats = 0;
  const std::uint32_t* cat[max_key_parts] = {};  // categorical hashes [rows]
  int floats = 0;
  column_view fcol[max_key_parts] = {};
  train::value_split fsplit[max_key_parts] = {};
  int one_hots = 0;
  const std::uint32_t* oh[max_key_parts] = {};  // categorical hashes [rows]
  std::int32_t ohv[max_key_parts] = {};
};
// Every row's projection key as the model computes it (combination_key, then the split bits).
void projection_keys(const context& ctx, const key_plan& plan, std::int64_t n, std::uint64_t* keys);
// Dense ids of n keys: ids[row] = the rank of its key among the distinct keys (ascending); per id
// its key and first row into keys_out and first_out (n entries of room). Returns the distinct count
// (one 4-byte copy back).
std::size_t dense_ids(const context& ctx, const std::uint64_t* keys, std::int64_t n, std::uint32_t* ids,
                      std::uint64_t* keys_out, std::uint32_t* first_out);
// The ids of a projection in order of first appearance (the host extension's and the model table's
// order): `first` (per id its first row, < n) sorted ascending, into by_first[unique].
void ids_by_first_row(const context& ctx, const std::uint32_t* first, std::size_t unique, std::int64_t n,
                      std::uint32_t* by_first);
// out[r * width + c] = in[order[r] * width + c] for r < rows, c < width (a table's per-id values in
// the order `order` gives).
void gather_rows(const context& ctx, const std::uint32_t* order, std::size_t rows, int width, const std::uint64_t* in,
                 std::uint64_t* out);
void gather_rows(const context& ctx, const std::uint32_t* order, std::size_t rows, int width, const std::uint32_t* in,
                 std::uint32_t* out);
// The scratch of dense_ids_and_runs and derived_ids_and_runs, kept between calls (a level's
// projections reuse it).
struct ids_scratch {
  device_buffer<unsigned long long> table;
  device_buffer<std::uint32_t> slots, sorted_slots, rank;
  device_buffer<std::uint32_t> ones;  // n + 1
  device_buffer<int> empty_seen;
};
// dense_ids and ensure_runs together, without sorting 64-bit keys: each row's key (`plan`) gets a
// slot in an open-addressing table of at least twice `bound` (at most how many distinct keys there
// are: the table's size and the sort's bits follow it), taken in the permutation order of `t`, and
// the rows are sorted stably by slot (a 32-bit sort of log2 of the table's size bits), so each key's
// rows form a run in permutation order. The ids are the ranks of the slots (not of the keys: only
// their labels differ from dense_ids'; what is computed from them does not depend on the labels),
// each id's key and first row go to keys_out and first_out (n entries of room), and the runs to `r`
// (whose buffers are reused when they have n rows). The ids ascend along the sorted order:
// start_out[id] (n entries of room) is the first sorted position of the id's run. The distinct count
// goes to *unique (device memory): nothing is copied back, so a level's projections queue without
// waiting for each other.
void dense_ids_and_runs(const context& ctx, const target_state& t, const key_plan& plan, std::size_t bound,
                        std::int64_t n, std::uint32_t* ids, std::uint64_t* keys_out, std::uint32_t* first_out,
                        std::uint32_t* start_out, category_runs& r, ids_scratch& s, std::uint32_t* unique);
// One binary condition of a projection (a float split, or a one-hot split when oh is set).
struct bit_plan {
  column_view fcol = {};
  train::value_split fsplit = {};
  const std::uint32_t* oh = nullptr;  // categorical hashes [rows]
  std::int32_t ohv = 0;
};
// A projection's parent (the projection less one binary condition) as dense_ids_and_runs left it:
// its rows in sorted order, ids per row and per id its first sorted position.
struct parent_runs {
  const std::uint32_t* sorted_rows = nullptr;
  const std::uint32_t* ids = nullptr;
  const std::uint32_t* start = nullptr;
  std::uint32_t unique = 0;
};
// dense_ids_and_runs for the parent's projection plus the condition `bit`, without keys or a sort:
// each parent run split stably into its rows with the bit 0 and those with 1 (one scan). The same
// outputs and the same partition of the rows as dense_ids_and_runs over the keys of `plan` (the
// whole projection) when no two distinct keys collide; the key of each id is computed from one of
// its rows. *mismatch (device) is set to 1 when the partition differs from the keys' (some row's key
// differs from its id's, or two ids have one key): the caller then makes the projection from its keys.
void derived_ids_and_runs(const context& ctx, const parent_runs& parent, const bit_plan& bit, const key_plan& plan,
                          std::int64_t n, std::uint32_t* ids, std::uint64_t* keys_out, std::uint32_t* first_out,
                          std::uint32_t* start_out, category_runs& r, ids_scratch& s, std::uint32_t* unique,
                          int* mismatch);
// model::build_ctr_buckets on the device: the buckets (hashes, indices: `slots` each, a power of two
// >= 2 * unique) of `unique` distinct keys inserted in order (linear probing). *bad (device) becomes
// 1 when a key equals the empty-bucket marker.
void ctr_buckets(const context& ctx, const std::uint64_t* keys, std::size_t unique, std::size_t slots,
                 std::uint64_t* hashes, std::uint32_t* indices, int* bad);
// counts[id] += 1 for each of n keys found among the `unique` sorted keys; marked (optional): per
// row its key where they lack it, else model::ctr_empty_hash (unseen_keys).
void count_known_keys(const context& ctx, const std::uint64_t* keys, std::int64_t n, const std::uint64_t* sorted,
                      std::size_t unique, std::int32_t* counts, std::uint64_t* marked = nullptr);

// counter_calc Full's new keys: the distinct keys of the n marked rows (model::ctr_empty_hash: not
// marked), each with its first row and its row count, in ascending key order (category-sized).
// The marks are sorted in place: `marked` holds no row's mark afterwards.
struct unseen_key_counts {
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> first_rows;
  std::vector<std::int32_t> counts;
};
unseen_key_counts unseen_keys(const context& ctx, std::uint64_t* marked, std::int64_t n);
// The bins of feature f of a quantized pool (index layout of quantizer.hpp).
void feature_bins(const context& ctx, const std::uint32_t* index, std::int64_t padded_rows, std::int64_t f,
                  std::int64_t n, std::uint8_t* bins);
// A CTR feature's model value for each of n keys.
void ctr_values_of_keys(const context& ctx, const std::uint64_t* keys, std::int64_t n, const model::ctr_table_view& t,
                        const model::ctr_calc& c, float* out);

}  // namespace cbg::ctr::detail
