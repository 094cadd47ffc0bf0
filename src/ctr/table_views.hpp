// SPDX-License-Identifier: Apache-2.0
// A CTR table as the evaluator reads it and what a CTR feature computes from it (model/apply_math.hpp),
// for the host reference paths that compute eval values from the final tables (prepare_host.cpp,
// combinations.cpp). Internal (not installed).
#pragma once

#include "cbg/model/apply_math.hpp"
#include "cbg/model/model.hpp"

namespace cbg::ctr {

inline model::ctr_table_view table_view_of(const model::ctr_table& t) {
  model::ctr_table_view v;
  v.hashes = t.bucket_hashes.data();
  v.indices = t.bucket_indices.data();
  v.n_buckets = t.bucket_hashes.size();
  v.means = t.means.data();
  v.counts = t.counts.data();
  v.counter_denominator = t.counter_denominator;
  v.target_classes_count = t.target_classes_count;
  return v;
}

inline model::ctr_calc ctr_calc_of(const model::ctr_description& d) {
  model::ctr_calc c;
  c.type = d.base.type;
  c.target_border_idx = d.target_border_idx;
  c.prior_num = d.prior_num;
  c.prior_denom = d.prior_denom;
  c.shift = d.shift;
  c.scale = d.scale;
  return c;
}

}  // namespace cbg::ctr
