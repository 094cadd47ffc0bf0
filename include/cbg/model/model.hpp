// SPDX-License-Identifier: Apache-2.0
// The in-memory model: what a CatBoost oblivious-tree model holds (catboost-model-format.md §2-§3).
// Plain host structs; the readers (cbm, json) fill them, validate() checks every invariant the
// evaluator relies on, and the writers serialise them back. Model IO never includes kernels.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cbg/config.hpp"
#include "cbg/model/apply_math.hpp"

namespace cbg::model {

// Values are those of CatBoost's ENanValueTreatment (features.fbs).
enum class nan_treatment : std::uint8_t { as_is = 0, as_false = 1, as_true = 2 };

// ctr_type (CatBoost's ECtrType) and ctr_mean_history live in apply_math.hpp: the per-row CTR
// math shared with the GPU evaluator reads them.
inline constexpr int ctr_type_count = 6;

// CatBoost's name of a CTR type ("Borders", ...); the inverse returns false for unknown names.
const char* ctr_type_name(ctr_type t) noexcept;
bool ctr_type_from_name(const std::string& name, ctr_type& out) noexcept;
const char* nan_treatment_name(nan_treatment t) noexcept;

struct float_feature {
  bool has_nans = false;
  std::int32_t index = -1;       // position among float features
  std::int32_t flat_index = -1;  // column in the full input vector
  std::vector<float> borders;    // strictly ascending; empty = unused
  std::string name;
  nan_treatment nan_value_treatment = nan_treatment::as_is;
};

struct cat_feature {
  std::int32_t index = -1;
  std::int32_t flat_index = -1;
  std::string name;
  bool used_in_model = true;
};

// One-hot binary features of one categorical feature: `values` are int32 bit patterns of hashes.
struct one_hot_feature {
  std::int32_t cat_index = -1;  // per-type index of the categorical feature
  std::vector<std::int32_t> values;
  std::vector<std::string> string_values;  // optional, same length as values when present
};

struct float_split {
  std::int32_t float_index = 0;
  float border = 0.f;
  friend bool operator==(const float_split&, const float_split&) = default;
  friend auto operator<=>(const float_split&, const float_split&) = default;
};

struct one_hot_split {
  std::int32_t cat_index = 0;
  std::int32_t value = 0;
  friend bool operator==(const one_hot_split&, const one_hot_split&) = default;
  friend auto operator<=>(const one_hot_split&, const one_hot_split&) = default;
};

// A CTR projection (TFeatureCombination): hashed in this order (cats, float splits, one-hot splits).
struct projection {
  std::vector<std::int32_t> cat_features;
  std::vector<float_split> float_splits;
  std::vector<one_hot_split> one_hot_splits;
  friend bool operator==(const projection&, const projection&) = default;
  friend auto operator<=>(const projection&, const projection&) = default;
};

struct ctr_base {
  projection proj;
  ctr_type type = ctr_type::borders;
  std::int32_t target_border_classifier_idx = 0;
  friend bool operator==(const ctr_base&, const ctr_base&) = default;
  friend auto operator<=>(const ctr_base&, const ctr_base&) = default;
};

struct ctr_description {
  ctr_base base;
  std::int32_t target_border_idx = 0;
  float prior_num = 0.f;
  float prior_denom = 1.f;
  float shift = 0.f;
  float scale = 1.f;
  friend bool operator==(const ctr_description&, const ctr_description&) = default;
  friend auto operator<=>(const ctr_description&, const ctr_description&) = default;
};

struct ctr_feature {
  ctr_description ctr;
  std::vector<float> borders;  // strictly ascending
};

inline constexpr std::uint64_t ctr_empty_hash = ~std::uint64_t{0};

// The learned statistics of one ctr_base (TCtrValueTable), decoded from the raw bytes.
struct ctr_table {
  ctr_base base;
  // The open-addressing hash (12-byte buckets {ui64 hash, ui32 index} in the file), as parallel
  // arrays: a power-of-two count, linear probing, hash ctr_empty_hash marks an empty bucket.
  std::vector<std::uint64_t> bucket_hashes;
  std::vector<std::uint32_t> bucket_indices;
  std::vector<ctr_mean_history> means;  // mean types: one per key
  std::vector<std::int32_t> counts;     // counter types: one per key; class types: [key][class]
  std::int32_t counter_denominator = 0;
  std::int32_t target_classes_count = 0;
  // Number of keys (entries of `means`, of `counts`, or of `counts / target_classes_count`).
  [[nodiscard]] std::size_t key_count() const noexcept;
};

// Builds the bucket array for `keys` (key i gets index i) the way CatBoost's builder sizes it:
// the smallest power of two >= 2 * keys (2 when empty). Duplicate keys or the empty marker are
// refused (CBG_ERR_FORMAT).
void build_ctr_buckets(const std::vector<std::uint64_t>& keys, ctr_table& table);

// A node of the model's metadata (ModelInfo): key/value strings, in file order.
using info_entry = std::pair<std::string, std::string>;

struct model {
  std::int32_t approx_dimension = 1;
  std::vector<float_feature> float_features;
  std::vector<cat_feature> cat_features;
  std::vector<one_hot_feature> one_hot_features;
  std::vector<ctr_feature> ctr_features;
  std::vector<ctr_table> ctr_tables;

  // Oblivious trees: tree t uses tree_splits[tree_start_offsets[t] .. + tree_sizes[t]] (binary
  // feature indices; split d sets bit d of the leaf index).
  std::vector<std::int32_t> tree_splits;
  std::vector<std::int32_t> tree_sizes;
  std::vector<std::int32_t> tree_start_offsets;
  std::vector<double> leaf_values;   // [tree][leaf][dim]
  std::vector<double> leaf_weights;  // [tree][leaf], or empty
  double scale = 1.0;
  std::vector<double> bias;  // approx_dimension values

  std::vector<info_entry> info;

  [[nodiscard]] std::size_t tree_count() const noexcept { return tree_sizes.size(); }
  [[nodiscard]] std::size_t flat_feature_count() const noexcept;
  // Value of info key `key`, or nullptr.
  [[nodiscard]] const std::string* info_value(const std::string& key) const noexcept;
};

// What binary feature i (the value stored in tree_splits) tests (§3.1 order).
enum class split_kind : std::uint8_t { float_feature, one_hot, ctr };
struct binary_feature {
  split_kind kind = split_kind::float_feature;
  std::int32_t feature = 0;  // index into float_features / one_hot_features / ctr_features
  std::int32_t item = 0;     // border or value index within that feature
};
std::vector<binary_feature> binary_features(const model& m);

// Checks every invariant a reader must guarantee before the model is evaluated or written:
// sizes, indices, ascending borders, leaf counts, finite scale/bias, one CTR table per used base,
// bucket arrays. Throws cbg::error(CBG_ERR_FORMAT) naming the first violation.
void validate(const model& m);

// Post-processing facts derived from the info map.
struct model_semantics {
  std::string loss;  // params.loss_function.type, or "" when unknown
  double binclass_probability_threshold = 0.5;
  std::vector<std::string> class_names;  // class_params.class_names as text, or empty
};
model_semantics semantics(const model& m);

}  // namespace cbg::model
