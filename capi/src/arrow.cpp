// SPDX-License-Identifier: Apache-2.0
// cbg_pool_from_arrow: the Arrow C (device) data interface into pool inputs. Each Arrow buffer is
// described as a borrowed DLTensor and handed to pool::build, which validates and (for strings)
// hashes as for DLPack input; the moved ArrowArray stays alive in the pool until it is freed.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "cbg/categorical/hashing.hpp"
#include "cbg/core/checked_math.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/tensor/dlpack.hpp"
#include "desc.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "pool_desc.hpp"
#include "tensor_ref.hpp"

namespace {

using namespace cbg::capi;
using cbg::status;

// Releases a schema exactly once when the call ends (the callback marks it released itself).
struct schema_release {
  ArrowSchema* schema;
  ~schema_release() {
    if (schema != nullptr && schema->release != nullptr) schema->release(schema);
  }
};

// Moves the caller's array into a shared owner (the caller's release becomes NULL): released once,
// when the last owner (the pool, or this call on error) lets go.
std::shared_ptr<ArrowArray> move_array(ArrowDeviceArray& a) {
  ArrowArray taken = a.array;
  a.array.release = nullptr;
  try {
    return std::shared_ptr<ArrowArray>(new ArrowArray(taken), [](ArrowArray* p) {
      if (p->release != nullptr) p->release(p);
      delete p;
    });
  } catch (...) {
    taken.release(&taken);
    throw;
  }
}

struct arrow_place {
  DLDevice device{};
  cbg::memory_kind memory = cbg::memory_kind::host;
};

arrow_place place_of(const ArrowDeviceArray& a) {
  arrow_place p;
  p.device.device_id = static_cast<int32_t>(a.device_id);
  switch (a.device_type) {
    case ARROW_DEVICE_CPU:
      p.device.device_type = kDLCPU;
      p.device.device_id = 0;
      p.memory = cbg::memory_kind::host;
      break;
    case ARROW_DEVICE_CUDA:
      p.device.device_type = kDLCUDA;
      p.memory = cbg::memory_kind::device;
      break;
    case ARROW_DEVICE_CUDA_HOST:
      p.device.device_type = kDLCUDAHost;
      p.memory = cbg::memory_kind::pinned_host;
      break;
    case ARROW_DEVICE_CUDA_MANAGED:
      p.device.device_type = kDLCUDAManaged;
      p.memory = cbg::memory_kind::managed;
      break;
    default:
      CBG_FAIL(status::device,
               fmt::format("arrow: device_type {} is not supported (ARROW_DEVICE_CPU 1, CUDA 2, CUDA_HOST 3, "
                           "CUDA_MANAGED 13)",
                           a.device_type));
  }
  return p;
}

// The DLPack dtype of an Arrow primitive format, or false.
bool dtype_of_format(std::string_view f, DLDataType& t) {
  if (f.size() != 1) return false;
  t.lanes = 1;
  switch (f[0]) {
    case 'c':
      t = {kDLInt, 8, 1};
      return true;
    case 'C':
      t = {kDLUInt, 8, 1};
      return true;
    case 's':
      t = {kDLInt, 16, 1};
      return true;
    case 'S':
      t = {kDLUInt, 16, 1};
      return true;
    case 'i':
      t = {kDLInt, 32, 1};
      return true;
    case 'I':
      t = {kDLUInt, 32, 1};
      return true;
    case 'l':
      t = {kDLInt, 64, 1};
      return true;
    case 'L':
      t = {kDLUInt, 64, 1};
      return true;
    case 'e':
      t = {kDLFloat, 16, 1};
      return true;
    case 'f':
      t = {kDLFloat, 32, 1};
      return true;
    case 'g':
      t = {kDLFloat, 64, 1};
      return true;
    default:
      return false;
  }
}

bool is_utf8(std::string_view f) { return f == "u" || f == "U"; }

// Describes Arrow buffers as borrowed 1-D DLTensors; the tensors live as long as this does.
class borrowed_tensors {
 public:
  explicit borrowed_tensors(const arrow_place& place) : place_(place) {}
  cbg::tensor_ref add(const void* data, DLDataType type, std::int64_t elements) {
    shapes_.push_back(elements);
    DLTensor& t = tensors_.emplace_back();
    t.data = const_cast<void*>(data);
    t.device = place_.device;
    t.ndim = 1;
    t.dtype = type;
    t.shape = &shapes_.back();
    t.strides = nullptr;
    t.byte_offset = 0;
    return cbg::tensor_ref{cbg::tensor_ref_kind::dltensor, &t};
  }

 private:
  arrow_place place_;
  std::deque<DLTensor> tensors_;
  std::deque<std::int64_t> shapes_;
};

class arrow_importer {
 public:
  arrow_importer(const cbg::context& ctx, const arrow_place& place) : ctx_(ctx), place_(place), tensors_(place) {}

  // Adds child column j (schema cs, array ca) as feature j; `offset` is the parent's offset plus the
  // child's, `rows` the parent's length.
  void add(std::size_t j, const ArrowSchema& cs, const ArrowArray& ca, std::int64_t offset, std::int64_t rows,
           cbg::pool_inputs& in) {
    const std::string what = fmt::format("arrow column {} ('{}')", j, cs.name != nullptr ? cs.name : "");
    CBG_EXPECTS(cs.format != nullptr, status::invalid_argument, fmt::format("{}: format is NULL", what));
    const std::string_view format = cs.format;
    CBG_EXPECTS(
        ca.length >= 0 && ca.offset >= 0 && rows >= 0 && offset >= 0, status::shape,
        fmt::format("{}: negative length or offset (length {}, offset {}, rows {})", what, ca.length, ca.offset, rows));
    CBG_EXPECTS(offset >= ca.offset && cbg::checked_add(offset - ca.offset, rows, what) <= ca.length, status::shape,
                fmt::format("{}: length {} is shorter than the struct's {} rows (from row {})", what, ca.length, rows,
                            offset - ca.offset));
    CBG_EXPECTS(ca.n_buffers >= 2 && ca.buffers != nullptr, status::invalid_argument,
                fmt::format("{}: {} buffers; a primitive, utf8 or dictionary column has 2 or 3", what, ca.n_buffers));
    refuse_nulls(what, ca, offset, rows);
    DLDataType type{};
    if (cs.dictionary != nullptr) {
      add_dictionary(what, j, cs, ca, offset, rows, in);
    } else if (is_utf8(format)) {
      CBG_EXPECTS(ca.n_buffers == 3, status::invalid_argument,
                  fmt::format("{}: a utf8 column has 3 buffers, not {}", what, ca.n_buffers));
      in.columns.emplace_back();  // a string column's slot
      in.string_columns.push_back(strings(format == "U", ca, offset, rows, static_cast<std::int64_t>(j)));
    } else if (dtype_of_format(format, type)) {
      const std::size_t width = type.bits / 8;
      const auto* base = static_cast<const unsigned char*>(ca.buffers[1]);
      const std::int64_t skip = cbg::checked_mul(offset, static_cast<std::int64_t>(width), what);
      in.columns.push_back(tensors_.add(base == nullptr ? nullptr : base + skip, type, rows));
    } else {
      CBG_FAIL(status::dtype,
               fmt::format("{}: Arrow format '{}' is not supported; features are int8..int64, uint8..uint64, "
                           "float16/32/64, utf8, large_utf8 or dictionary<int, utf8> (cast booleans to int8)",
                           what, format));
    }
  }

 private:
  // Refuses a column with nulls, naming its first null row (CatBoost has no missing categories;
  // missing floats are NaN).
  void refuse_nulls(const std::string& what, const ArrowArray& ca, std::int64_t offset, std::int64_t rows) {
    if (ca.null_count == 0 || ca.buffers[0] == nullptr) return;
    const auto* bitmap = static_cast<const unsigned char*>(ca.buffers[0]);
    const std::int64_t row =
        place_.memory == cbg::memory_kind::host || ctx_.is_cpu() || place_.memory == cbg::memory_kind::pinned_host
            ? cbg::categorical::first_null_host(bitmap, offset, rows)
            : cbg::categorical::first_null_device(ctx_, bitmap, offset, rows);
    CBG_EXPECTS(row < 0, status::bad_data,
                fmt::format("{} is null at row {}; CatBoost refuses missing categorical values (give them a "
                            "value of their own, e.g. \"None\") and takes missing float values as NaN",
                            what, row));
  }

  // Offset `i` of an offsets buffer (int32 or int64), read where it lives (8 bytes at most).
  std::int64_t read_offset(const void* offsets, bool wide, std::int64_t i) {
    const std::size_t width = wide ? 8 : 4;
    const auto* p = static_cast<const unsigned char*>(offsets) +
                    cbg::checked_mul(i, static_cast<std::int64_t>(width), "arrow: string offsets");
    unsigned char raw[8] = {};
    if (place_.memory == cbg::memory_kind::host || place_.memory == cbg::memory_kind::pinned_host) {
      std::memcpy(raw, p, width);
    } else {
      CBG_EXPECTS(!ctx_.is_cpu(), status::device, "arrow: GPU memory given to a CPU context");
      cbg::scoped_device guard(ctx_.device());
      cbg::copy_bytes(raw, cbg::memory_kind::host, p, place_.memory, width, ctx_.stream(), ctx_.copies(), ctx_.rules(),
                      CBG_COPY_SITE("arrow: string column byte count"));
      CBG_CUDA_TRY(cudaStreamSynchronize(ctx_.stream()));
    }
    if (wide) {
      std::int64_t v;
      std::memcpy(&v, raw, 8);
      return v;
    }
    std::int32_t v;
    std::memcpy(&v, raw, 4);
    return v;
  }

  // A utf8/large_utf8 array's rows [offset, offset + rows) as a string column input.
  cbg::string_column_input strings(bool wide, const ArrowArray& a, std::int64_t offset, std::int64_t rows,
                                   std::int64_t feature) {
    const DLDataType offset_type{kDLInt, static_cast<uint8_t>(wide ? 64 : 32), 1};
    const auto* offsets = static_cast<const unsigned char*>(a.buffers[1]);
    cbg::string_column_input s;
    s.feature = feature;
    const std::string what = fmt::format("arrow column {} offsets", feature);
    const std::int64_t skip = cbg::checked_mul(offset, std::int64_t{wide ? 8 : 4}, what);
    const unsigned char* first = offsets == nullptr ? nullptr : offsets + skip;
    s.offsets = tensors_.add(first, offset_type, cbg::checked_add(rows, std::int64_t{1}, what));
    // Offsets index the data buffer from its start; its size is the largest offset (Arrow's rule).
    const std::int64_t bytes = first == nullptr ? 0 : std::max<std::int64_t>(read_offset(first, wide, rows), 0);
    s.bytes = tensors_.add(a.buffers[2], DLDataType{kDLUInt, 8, 1}, bytes);
    return s;
  }

  void add_dictionary(const std::string& what, std::size_t j, const ArrowSchema& cs, const ArrowArray& ca,
                      std::int64_t offset, std::int64_t rows, cbg::pool_inputs& in) {
    DLDataType code_type{};
    CBG_EXPECTS(dtype_of_format(cs.format, code_type) && code_type.code != kDLFloat, status::dtype,
                fmt::format("{}: dictionary index format '{}' is not an integer type", what, cs.format));
    const ArrowSchema& ds = *cs.dictionary;
    CBG_EXPECTS(ds.format != nullptr && is_utf8(ds.format), status::dtype,
                fmt::format("{}: the dictionary's format is '{}'; dictionary columns must hold utf8 or "
                            "large_utf8 strings",
                            what, ds.format != nullptr ? ds.format : "(null)"));
    CBG_EXPECTS(ca.dictionary != nullptr && ca.dictionary->n_buffers == 3 && ca.dictionary->buffers != nullptr,
                status::invalid_argument, fmt::format("{}: the array has no utf8 dictionary", what));
    const ArrowArray& da = *ca.dictionary;
    CBG_EXPECTS(da.null_count == 0 || da.buffers[0] == nullptr, status::bad_data,
                fmt::format("{}: the dictionary has {} null entries; CatBoost refuses missing categorical values", what,
                            da.null_count));
    CBG_EXPECTS(da.offset >= 0 && da.length >= 0, status::shape,
                fmt::format("{}: the dictionary has a negative length or offset (length {}, offset {})", what,
                            da.length, da.offset));
    cbg::string_column_input s =
        strings(std::string_view(ds.format) == "U", da, da.offset, da.length, static_cast<std::int64_t>(j));
    const auto* codes = static_cast<const unsigned char*>(ca.buffers[1]);
    const std::int64_t skip = cbg::checked_mul(offset, std::int64_t{code_type.bits / 8}, what);
    s.codes = tensors_.add(codes == nullptr ? nullptr : codes + skip, code_type, rows);
    in.columns.emplace_back();
    in.string_columns.push_back(s);
  }

  const cbg::context& ctx_;
  arrow_place place_;
  borrowed_tensors tensors_;
};

// Orders the context's stream after the producer's event (CUDA arrays), without a host sync.
void wait_for_producer(const cbg::context& ctx, const ArrowDeviceArray& a) {
  if (a.sync_event == nullptr || a.device_type == ARROW_DEVICE_CPU) return;
  CBG_EXPECTS(!ctx.is_cpu(), status::device, "arrow: a CUDA sync_event was given to a CPU context");
  cbg::scoped_device guard(ctx.device());
  CBG_CUDA_TRY(cudaStreamWaitEvent(ctx.stream(), *static_cast<cudaEvent_t*>(a.sync_event), 0));
}

}  // namespace

extern "C" {

CBG_API cbg_status cbg_pool_from_arrow(cbg_context_t* ctx, const cbg_pool_desc_t* desc, struct ArrowSchema* schema,
                                       struct ArrowDeviceArray* array, cbg_pool_t** out) {
  return guarded(__func__, [&] {
    // Take both structs over first, so every error path below releases them exactly once.
    schema_release schema_guard{schema};
    std::shared_ptr<ArrowArray> moved;
    if (array != nullptr && array->array.release != nullptr) moved = move_array(*array);
    require(schema, "schema");
    require(array, "array");
    CBG_EXPECTS(moved != nullptr, status::invalid_argument, "array: already released (its release callback is NULL)");
    CBG_EXPECTS(schema->release != nullptr, status::invalid_argument,
                "schema: already released (its release callback is NULL)");
    cbg_pool_desc_t d{};
    cbg::pool_inputs in;
    try {
      if (desc != nullptr) {
        read_pool_desc(*desc, d);
      } else {
        init_desc(d);
      }
      require(out, "out");
      *out = nullptr;
      CBG_EXPECTS(d.features.kind == CBG_TENSOR_NONE && d.n_columns == 0 && d.n_string_columns == 0,
                  status::invalid_argument,
                  "cbg_pool_from_arrow: the features come from the Arrow array; desc.features, desc.columns "
                  "and desc.string_columns must be empty");
      in = to_inputs(d);
      checked(ctx, "ctx");
    } catch (...) {
      if (desc == nullptr || d.struct_size == sizeof(cbg_pool_desc_t)) release_consumed(d);
      throw;
    }
    const cbg::context& c = *ctx->impl;
    std::vector<std::string> names;
    bool handed = false;  // whether pool::build owns desc's DLPack tensors yet
    try {
      const arrow_place place = place_of(*array);
      CBG_EXPECTS(!(c.is_cpu() && place.memory != cbg::memory_kind::host), status::device,
                  "arrow: the array is in GPU-side memory but the context runs on the CPU");
      wait_for_producer(c, *array);
      const ArrowArray& a = *moved;
      CBG_EXPECTS(schema->format != nullptr, status::invalid_argument, "schema: format is NULL");
      arrow_importer importer(c, place);  // its borrowed DLTensors live until build returns
      if (std::string_view(schema->format) == "+s") {
        CBG_EXPECTS(schema->n_children == a.n_children && a.n_children > 0, status::invalid_argument,
                    fmt::format("arrow: the struct has {} child schemas and {} child arrays (at least one "
                                "column is needed)",
                                schema->n_children, a.n_children));
        CBG_EXPECTS(a.null_count == 0 || a.n_buffers < 1 || a.buffers == nullptr || a.buffers[0] == nullptr,
                    status::bad_data, fmt::format("arrow: the struct has {} null rows", a.null_count));
        for (std::int64_t k = 0; k < a.n_children; ++k) {
          const ArrowArray& ca = *a.children[k];
          importer.add(static_cast<std::size_t>(k), *schema->children[k], ca,
                       cbg::checked_add(a.offset, ca.offset, fmt::format("arrow column {}: offset", k)), a.length, in);
          const char* nm = schema->children[k]->name;
          names.emplace_back(nm != nullptr ? nm : "");
        }
      } else {
        importer.add(0, *schema, a, a.offset, a.length, in);
        names.emplace_back(schema->name != nullptr ? schema->name : "");
      }
      in.keep_alive = moved;
      handed = true;
      cbg::pool p = cbg::pool::build(ctx->impl, std::move(in));
      if (d.feature_names != nullptr || d.n_feature_names != 0) {
        name_features(p, d);
      } else {
        p.set_feature_names(std::move(names));
      }
      publish(out, std::move(p));
    } catch (...) {
      if (!handed) release_consumed(d);
      throw;
    }
  });
}

}  // extern "C"
