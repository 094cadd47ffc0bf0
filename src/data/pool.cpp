// SPDX-License-Identifier: Apache-2.0
#include "cbg/data/pool.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "cbg/categorical/hashing.hpp"
#include "cbg/core/checked_math.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/value_checks.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/stream.hpp"

namespace cbg {

namespace {

// Takes ownership of every consumed tensor first, so that a failure anywhere deletes all of them.
std::vector<dlpack_owner> take_ownership(const pool_inputs& in) {
  std::vector<dlpack_owner> owners;
  try {
    owners.reserve(in.columns.size() + 3 * in.string_columns.size() + 4);
  } catch (...) {
    // Out of host memory before anything was owned: still delete every consumed tensor once.
    dlpack_owner(in.features).reset();
    for (const tensor_ref& c : in.columns) dlpack_owner(c).reset();
    for (const string_column_input& s : in.string_columns) {
      dlpack_owner(s.offsets).reset();
      dlpack_owner(s.bytes).reset();
      dlpack_owner(s.codes).reset();
    }
    for (const tensor_ref* r : {&in.label, &in.weight, &in.baseline}) dlpack_owner(*r).reset();
    throw;
  }
  owners.emplace_back(in.features);
  for (const tensor_ref& c : in.columns) owners.emplace_back(c);
  for (const string_column_input& s : in.string_columns) {
    owners.emplace_back(s.offsets);
    owners.emplace_back(s.bytes);
    owners.emplace_back(s.codes);
  }
  owners.emplace_back(in.label);
  owners.emplace_back(in.weight);
  owners.emplace_back(in.baseline);
  std::erase_if(owners, [](const dlpack_owner& o) { return !o.owns(); });
  return owners;
}

bool present(const tensor_ref& r) { return r.kind != tensor_ref_kind::none; }

// A [rows] or [rows, k] tensor of role `role`; checks the row count against `rows` (-1: unknown yet).
tensor_view import_rows_tensor(const tensor_ref& ref, std::string_view role, int device, std::int64_t& rows) {
  const tensor_view v = import_tensor(ref, import_rules{role, 1, 2, false, device});
  if (rows < 0) {
    rows = v.shape[0];
  } else {
    CBG_EXPECTS(v.shape[0] == rows, status::shape,
                fmt::format("{} has {} rows but the features have {}", role, v.shape[0], rows));
  }
  return v;
}

// Refuses NaN/inf values (and negative or only zero ones for weights) in each column of `t`, counting where the
// data lives: a kernel for device memory, a loop for host memory.
void check_values(const tensor_view& t, std::string_view role, bool allow_negative, const context& ctx) {
  const std::int64_t columns = t.rank == 2 ? t.shape[1] : 1;
  for (std::int64_t j = 0; j < columns; ++j) {
    const column_view c = column_of(t, j);
    if (is_integral(c.type) && allow_negative) continue;  // integers are always finite
    const value_counts n = is_device_side(c.memory) ? count_values_device(c, ctx) : count_values_host(c);
    const std::string where = columns > 1 ? fmt::format("{} column {}", role, j) : std::string(role);
    CBG_EXPECTS(n.nan == 0 && n.infinite == 0, status::bad_data,
                fmt::format("{} has {} NaN and {} infinite values out of {}; {} values must be "
                            "finite",
                            where, n.nan, n.infinite, c.size, role));
    CBG_EXPECTS(
        allow_negative || n.negative == 0, status::bad_data,
        fmt::format("{} has {} negative values out of {}; {} values must be >= 0", where, n.negative, c.size, role));
    // CatBoost refuses such a pool too ("All data in Weights is 0"): nothing would be learned.
    CBG_EXPECTS(allow_negative || c.size == 0 || n.positive > 0, status::bad_data,
                fmt::format("{} is 0 for all {} objects; CatBoost refuses all-zero {}s: give some objects a "
                            "positive {}",
                            where, c.size, role, role));
  }
}

}  // namespace

pool pool::build(std::shared_ptr<context> ctx, pool_inputs in) {
  std::vector<dlpack_owner> owners = take_ownership(in);
  CBG_EXPECTS(ctx != nullptr, status::null_pointer, "pool: the context is NULL");
  const int device = ctx->device();

  pool p;
  p.ctx_ = std::move(ctx);
  std::int64_t rows = -1;

  // Order our stream after the producer's writes (no host sync): before anything reads the data.
  if (in.producer_stream != nullptr) {
    CBG_EXPECTS(device >= 0, status::invalid_argument,
                "pool: a producer stream was given but the context runs on the CPU");
    scoped_device guard(device);
    stream_wait_for(p.ctx_->stream(), in.producer_stream);
  }

  // Features: one matrix, or one tensor per column (never both), plus string columns.
  const bool has_matrix = present(in.features);
  CBG_EXPECTS(!(has_matrix && !in.columns.empty()), status::invalid_argument,
              "pool: give either a feature matrix or per-column tensors, not both");
  CBG_EXPECTS(has_matrix || !in.columns.empty() || !in.string_columns.empty(), status::invalid_argument,
              "pool: no features given (set the feature matrix, the columns or string columns)");
  std::vector<std::optional<column_view>> slots;
  if (has_matrix) {
    const tensor_view m = import_tensor(in.features, import_rules{"features", 2, 2, false, device});
    rows = m.shape[0];
    // Feature indexes are 32-bit in the model files (and CatBoost).
    CBG_EXPECTS(m.shape[1] <= std::numeric_limits<std::int32_t>::max(), status::shape,
                fmt::format("features: {} columns; at most {}", m.shape[1], std::numeric_limits<std::int32_t>::max()));
    for (std::int64_t j = 0; j < m.shape[1]; ++j) slots.emplace_back(column_of(m, j));
  } else {
    for (std::size_t j = 0; j < in.columns.size(); ++j) {
      if (!present(in.columns[j])) {
        slots.emplace_back();  // a string column's slot (checked below)
        continue;
      }
      const std::string role = fmt::format("column {}", j);
      const tensor_view c = import_tensor(in.columns[j], import_rules{role, 1, 1, false, device});
      if (rows < 0) rows = c.shape[0];
      CBG_EXPECTS(c.shape[0] == rows, status::shape,
                  fmt::format("pool: column {} has {} rows but column 0 has {}", j, c.shape[0], rows));
      slots.emplace_back(column_of(c, 0));
    }
  }
  std::vector<std::int64_t> string_features;
  for (std::size_t k = 0; k < in.string_columns.size(); ++k) {
    const string_column_input& sc = in.string_columns[k];
    CBG_EXPECTS(sc.feature >= 0 && sc.feature < (std::int64_t{1} << 31), status::invalid_argument,
                fmt::format("pool: string column {} has feature index {}", k, sc.feature));
    if (static_cast<std::size_t>(sc.feature) >= slots.size()) slots.resize(static_cast<std::size_t>(sc.feature) + 1);
    CBG_EXPECTS(!slots[static_cast<std::size_t>(sc.feature)], status::invalid_argument,
                fmt::format("pool: feature {} is given twice (string column {} and {})", sc.feature, k,
                            has_matrix ? "the feature matrix" : "a column tensor"));
    slots[static_cast<std::size_t>(sc.feature)] = p.import_string_column(sc, k, device, rows);
    string_features.push_back(sc.feature);
  }
  for (std::size_t j = 0; j < slots.size(); ++j) {
    CBG_EXPECTS(slots[j].has_value(), status::invalid_argument,
                fmt::format("pool: feature {} has no data (its column tensor is empty and no string "
                            "column names it)",
                            j));
    p.features_.push_back(*slots[j]);
  }
  const auto n_features = static_cast<std::int64_t>(p.features_.size());
  CBG_EXPECTS(n_features > 0, status::shape, "pool: the feature matrix has no columns");
  // Zero strides let a tensor declare more rows than its memory holds; what the library derives from
  // the pool (bins, hashes, gradients: at most 8 bytes per row and feature) must still be sizeable.
  (void)checked_mul(checked_mul(std::max<std::int64_t>(rows, 0), n_features, "pool: rows x features"), std::int64_t{8},
                    "pool: bytes of rows x features");

  if (present(in.label)) p.label_ = import_rows_tensor(in.label, "label", device, rows);
  if (present(in.weight)) {
    p.weight_ = import_rows_tensor(in.weight, "weight", device, rows);
    CBG_EXPECTS(p.weight_->rank == 1, status::shape,
                fmt::format("weight must be one-dimensional [rows]; got rank {}", p.weight_->rank));
  }
  if (present(in.baseline)) p.baseline_ = import_rows_tensor(in.baseline, "baseline", device, rows);

  // Categorical features: in range and unique first, then integer-typed.
  p.categorical_.assign(static_cast<std::size_t>(n_features), false);
  for (const std::int32_t idx : in.cat_features) {
    CBG_EXPECTS(idx >= 0 && idx < n_features, status::invalid_argument,
                fmt::format("pool: categorical feature index {} is outside 0..{}", idx, n_features - 1));
    CBG_EXPECTS(!p.categorical_[idx], status::invalid_argument,
                fmt::format("pool: categorical feature index {} is listed twice", idx));
    p.categorical_[idx] = true;
  }
  for (const std::int64_t idx : string_features) p.categorical_[static_cast<std::size_t>(idx)] = true;
  for (const std::int32_t idx : in.cat_features) {
    CBG_EXPECTS(
        p.features_[idx].hashed || is_integral(p.features_[idx].type) || p.features_[idx].type == dtype::boolean,
        status::dtype,
        fmt::format("pool: categorical feature {} has dtype {}; categorical values must be "
                    "integers (hash strings to integers, or pass codes)",
                    idx, name_of(p.features_[idx].type)));
  }

  if (!in.feature_names.empty()) p.set_feature_names(std::move(in.feature_names));

  // Device placement: device-side columns all live on the context's device (checked on import).
  p.device_ = -1;
  auto note_device = [&](memory_kind k) {
    if (k != memory_kind::host) p.device_ = device;
  };
  for (const column_view& c : p.features_) note_device(c.memory);
  for (const auto* t : {&p.label_, &p.weight_, &p.baseline_}) {
    if (t->has_value()) note_device((*t)->memory);
  }

  // Values (the stream is ordered after the producer's writes).
  if (p.label_) check_values(*p.label_, "label", true, *p.ctx_);
  if (p.weight_) check_values(*p.weight_, "weight", false, *p.ctx_);
  if (p.baseline_) check_values(*p.baseline_, "baseline", true, *p.ctx_);

  p.rows_ = rows;
  p.owners_ = std::move(owners);
  p.keep_alive_ = std::move(in.keep_alive);
  if (p.ctx_->log_enabled(log::level::debug)) {
    p.ctx_->log(log::level::debug, "cbgpu.pool",
                fmt::format("pool: {} rows x {} features ({} categorical){}{}{}, data on {}", rows, n_features,
                            p.num_categorical(), p.label_ ? ", label" : "", p.weight_ ? ", weight" : "",
                            p.baseline_ ? ", baseline" : "",
                            p.device_ >= 0 ? fmt::format("CUDA device {}", p.device_) : "the host"));
  }
  return p;
}

column_view pool::import_string_column(const string_column_input& sc, std::size_t k, int device, std::int64_t& rows) {
  const std::string what = fmt::format("feature {} (string column {})", sc.feature, k);
  const std::string offsets_role = fmt::format("{} offsets", what);
  const std::string bytes_role = fmt::format("{} bytes", what);
  const tensor_view off = import_tensor(sc.offsets, import_rules{offsets_role, 1, 1, false, device});
  const tensor_view bytes = import_tensor(sc.bytes, import_rules{bytes_role, 1, 1, false, device});
  CBG_EXPECTS(off.type == dtype::int32 || off.type == dtype::int64, status::dtype,
              fmt::format("pool: {} have dtype {}; Arrow offsets are int32 (utf8) or int64 (large_utf8)", offsets_role,
                          name_of(off.type)));
  CBG_EXPECTS(bytes.type == dtype::uint8 || bytes.type == dtype::int8, status::dtype,
              fmt::format("pool: {} have dtype {}; expected uint8 (UTF-8 bytes)", bytes_role, name_of(bytes.type)));
  CBG_EXPECTS(off.strides[0] == 1 && (bytes.shape[0] <= 1 || bytes.strides[0] == 1), status::shape,
              fmt::format("pool: {} must be contiguous (offsets stride {}, bytes stride {})", what, off.strides[0],
                          bytes.strides[0]));
  CBG_EXPECTS(off.shape[0] >= 1, status::shape,
              fmt::format("pool: {} are empty; a column of n strings has n + 1 offsets", offsets_role));
  // The GPU reads device, managed and pinned memory; the host reads host and pinned memory.
  const bool gpu_readable = off.memory != memory_kind::host;
  CBG_EXPECTS(gpu_readable == (bytes.memory != memory_kind::host), status::device,
              fmt::format("pool: {} has offsets and bytes in different memory (one on the host, one on "
                          "the GPU)",
                          what));
  categorical::string_column_view s;
  s.offsets = off.data;
  s.offsets64 = off.type == dtype::int64;
  s.bytes = static_cast<const unsigned char*>(bytes.data);
  s.byte_count = bytes.shape[0];
  s.rows = off.shape[0] - 1;
  s.memory = off.memory;
  s.device_id = off.device_id;

  std::optional<column_view> codes;
  if (present(sc.codes)) {
    const std::string codes_role = fmt::format("{} codes", what);
    const tensor_view cv = import_tensor(sc.codes, import_rules{codes_role, 1, 1, false, device});
    CBG_EXPECTS(is_integral(cv.type), status::dtype,
                fmt::format("pool: {} have dtype {}; dictionary codes are integers", codes_role, name_of(cv.type)));
    CBG_EXPECTS((cv.memory != memory_kind::host) == gpu_readable, status::device,
                fmt::format("pool: {} has its codes and its dictionary in different memory (one on the "
                            "host, one on the GPU)",
                            what));
    codes = column_of(cv, 0);
  }
  const std::int64_t n = codes ? codes->size : s.rows;
  if (rows < 0) rows = n;
  CBG_EXPECTS(n == rows, status::shape,
              fmt::format("pool: {} has {} rows but the other features have {}", what, n, rows));

  column_view c;
  c.type = dtype::uint32;
  (void)checked_mul(n, std::int64_t{sizeof(std::uint32_t)}, what + ": hashes");
  c.size = n;
  c.stride = 1;
  c.hashed = true;
  // The GPU hashes what it can read (device, managed, pinned); pageable host memory is hashed here.
  if (!ctx_->is_cpu() && gpu_readable) {
    scoped_device guard(ctx_->device());
    const cudaStream_t stream = ctx_->stream();
    device_buffer<std::uint32_t> hashes(static_cast<std::size_t>(n), stream, ctx_->resource());
    if (codes) {
      device_buffer<std::uint32_t> dict(static_cast<std::size_t>(s.rows), stream, ctx_->resource());
      categorical::hash_strings_device(*ctx_, s, dict.data(), what + " dictionary");
      categorical::map_codes_device(*ctx_, *codes, dict.data(), s.rows, hashes.data(), what);
    } else {
      categorical::hash_strings_device(*ctx_, s, hashes.data(), what);
    }
    c.data = hashes.data();
    c.memory = memory_kind::device;
    c.device_id = ctx_->device();
    device_hashes_.push_back(std::move(hashes));
  } else {
    std::vector<std::uint32_t> hashes(static_cast<std::size_t>(n));
    if (codes) {
      std::vector<std::uint32_t> dict(static_cast<std::size_t>(s.rows));
      categorical::hash_strings_host(s, dict.data(), what + " dictionary");
      categorical::map_codes_host(*codes, dict.data(), s.rows, hashes.data(), what);
    } else {
      categorical::hash_strings_host(s, hashes.data(), what);
    }
    c.data = hashes.data();
    c.memory = memory_kind::host;
    c.device_id = -1;
    host_hashes_.push_back(std::move(hashes));
  }
  return c;
}

pool pool::borrow(std::shared_ptr<context> ctx, pool_parts parts) {
  CBG_EXPECTS(ctx != nullptr, status::null_pointer, "pool: the context is NULL");
  CBG_EXPECTS(!parts.features.empty(), status::internal, "pool: a derived table without features");
  pool p;
  p.ctx_ = std::move(ctx);
  p.rows_ = parts.features.front().size;
  p.features_ = std::move(parts.features);
  p.categorical_ = std::move(parts.categorical);
  p.categorical_.resize(p.features_.size(), false);
  if (!parts.names.empty()) p.set_feature_names(std::move(parts.names));
  p.label_ = std::move(parts.label);
  p.weight_ = std::move(parts.weight);
  p.baseline_ = std::move(parts.baseline);
  p.device_ = -1;
  for (const column_view& c : p.features_) {
    if (c.memory != memory_kind::host) p.device_ = p.ctx_->device();
  }
  for (const auto* t : {&p.label_, &p.weight_, &p.baseline_}) {
    if (t->has_value() && (*t)->memory != memory_kind::host) p.device_ = p.ctx_->device();
  }
  return p;
}

pool::~pool() {
  if (ctx_ && !ctx_->is_cpu()) {
    // Work queued on our stream may still read the data (consumed or borrowed): let it finish before
    // the deleters run and before the caller may free borrowed memory.
    try {
      ctx_->sync();
    } catch (...) {
      // A destructor cannot report; the deleters still run below.
    }
  }
  owners_.clear();
  keep_alive_.reset();
}

std::int64_t pool::num_categorical() const noexcept {
  return std::count(categorical_.begin(), categorical_.end(), true);
}

const std::string& pool::feature_name(std::int64_t j) const {
  static const std::string empty;
  CBG_EXPECTS(j >= 0 && j < num_features(), status::invalid_argument,
              fmt::format("feature index {} is outside 0..{}", j, num_features() - 1));
  return names_.empty() ? empty : names_[static_cast<std::size_t>(j)];
}

void pool::set_feature_names(std::vector<std::string> names) {
  CBG_EXPECTS(static_cast<std::int64_t>(names.size()) == num_features(), status::invalid_argument,
              fmt::format("pool: {} feature names given for {} features", names.size(), num_features()));
  names_ = std::move(names);
}

std::int64_t pool::dims_of(const std::optional<tensor_view>& t) noexcept {
  if (!t) return 0;
  return t->rank == 2 ? t->shape[1] : 1;
}

}  // namespace cbg
