// SPDX-License-Identifier: Apache-2.0
#include "cbg/tensor/dlpack_import.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "cbg/core/checked_math.hpp"
#include "cbg/core/error.hpp"
#include "cbg/tensor/dlpack.hpp"

namespace cbg {

namespace dlpack {
const char* header_version() noexcept {
#if defined(DLPACK_MAJOR_VERSION)
#define CBG_STR2(x) #x
#define CBG_STR(x) CBG_STR2(x)
  return CBG_STR(DLPACK_MAJOR_VERSION) "." CBG_STR(DLPACK_MINOR_VERSION);
#elif defined(CBG_DLPACK_DECLARED_HERE)
  return "declared-from-spec-1.x";
#else
  return DLPACK_VERSION == 60 ? "0.6" : "0.x";
#endif
}
}  // namespace dlpack

// ---- ownership --------------------------------------------------------------------------------

dlpack_owner::dlpack_owner(const tensor_ref& ref) noexcept {
  if (ref.ptr == nullptr) return;
  if (ref.kind == tensor_ref_kind::dlpack_versioned) {
    versioned_ = static_cast<DLManagedTensorVersioned*>(ref.ptr);
  } else if (ref.kind == tensor_ref_kind::dlpack_legacy) {
    legacy_ = static_cast<DLManagedTensor*>(ref.ptr);
  }
}

dlpack_owner::dlpack_owner(dlpack_owner&& other) noexcept
    : versioned_(std::exchange(other.versioned_, nullptr)), legacy_(std::exchange(other.legacy_, nullptr)) {}

dlpack_owner& dlpack_owner::operator=(dlpack_owner&& other) noexcept {
  if (this != &other) {
    reset();
    versioned_ = std::exchange(other.versioned_, nullptr);
    legacy_ = std::exchange(other.legacy_, nullptr);
  }
  return *this;
}

void dlpack_owner::reset() noexcept {
  // The deleter pointer sits at the same place in every DLPack 1.x minor and later majors keep it
  // there too (the spec's stability promise), so it is safe to call even for a refused version.
  if (auto* v = std::exchange(versioned_, nullptr); v != nullptr && v->deleter != nullptr) {
    v->deleter(v);
  }
  if (auto* l = std::exchange(legacy_, nullptr); l != nullptr && l->deleter != nullptr) {
    l->deleter(l);
  }
}

void dlpack_owner::release() noexcept {
  versioned_ = nullptr;
  legacy_ = nullptr;
}

// ---- validation -------------------------------------------------------------------------------

namespace {

dtype dtype_of(const DLDataType& t, std::string_view role) {
  CBG_EXPECTS(t.lanes == 1, status::dtype,
              fmt::format("{}: vector dtypes (lanes={}) are not supported", role, t.lanes));
  const auto bad = [&]() {
    return error(status::dtype, fmt::format("{}: dtype (code={}, bits={}) is not supported; use float16/32/64, "
                                            "int8..64, uint8..64 or bool",
                                            role, static_cast<int>(t.code), static_cast<int>(t.bits)));
  };
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 16) return dtype::float16;
      if (t.bits == 32) return dtype::float32;
      if (t.bits == 64) return dtype::float64;
      throw bad();
    case kDLInt:
      if (t.bits == 8) return dtype::int8;
      if (t.bits == 16) return dtype::int16;
      if (t.bits == 32) return dtype::int32;
      if (t.bits == 64) return dtype::int64;
      throw bad();
    case kDLUInt:
      if (t.bits == 8) return dtype::uint8;
      if (t.bits == 16) return dtype::uint16;
      if (t.bits == 32) return dtype::uint32;
      if (t.bits == 64) return dtype::uint64;
      // Older producers (DLPack < 0.8) export bool as uint1/uint8; uint1 never appears in memory.
      throw bad();
    default:
      if (t.code == dlpack::code_bool && t.bits == 8) return dtype::boolean;
      throw bad();
  }
}

memory_kind memory_of(const DLDevice& d, const import_rules& rules) {
  switch (d.device_type) {
    case kDLCPU:
      return memory_kind::host;
    case kDLCUDAHost:
      return memory_kind::pinned_host;
    case kDLCUDA:
    case kDLCUDAManaged: {
      const char* what = d.device_type == kDLCUDA ? "kDLCUDA" : "kDLCUDAManaged";
      CBG_EXPECTS(rules.context_device >= 0, status::device,
                  fmt::format("{}: the tensor is in GPU memory ({} device {}) but the context runs "
                              "on the CPU (no GPU visible or CBG_DEVICE_CPU); pass host memory or "
                              "create the context on a GPU",
                              rules.role, what, d.device_id));
      CBG_EXPECTS(d.device_id == rules.context_device, status::device,
                  fmt::format("{}: the tensor is on CUDA device {} but the context uses device {}; "
                              "create the context on device {} or move the tensor",
                              rules.role, d.device_id, rules.context_device, d.device_id));
      return d.device_type == kDLCUDA ? memory_kind::device : memory_kind::managed;
    }
    default:
      throw error(status::device, fmt::format("{}: DLPack device type {} is not supported; use kDLCPU (1), kDLCUDA "
                                              "(2), kDLCUDAHost (3) or kDLCUDAManaged (13)",
                                              rules.role, static_cast<int>(d.device_type)));
  }
}

struct raw_tensor {
  const DLTensor* tensor = nullptr;
  bool read_only = false;
};

raw_tensor unwrap(const tensor_ref& ref, std::string_view role) {
  CBG_EXPECTS(ref.ptr != nullptr, status::null_pointer, fmt::format("{}: the tensor pointer is NULL", role));
  switch (ref.kind) {
    case tensor_ref_kind::dlpack_versioned: {
      const auto* m = static_cast<const DLManagedTensorVersioned*>(ref.ptr);
      // The version is the first thing read (DLPack's rule): other fields may differ in layout.
      CBG_EXPECTS(m->version.major == dlpack::supported_major, status::dlpack_version,
                  fmt::format("{}: DLPack version {}.{} is not supported (this library reads "
                              "major version {}); the tensor was released",
                              role, m->version.major, m->version.minor, dlpack::supported_major));
      return {&m->dl_tensor, (m->flags & dlpack::flag_read_only) != 0};
    }
    case tensor_ref_kind::dlpack_legacy:
      return {&static_cast<const DLManagedTensor*>(ref.ptr)->dl_tensor, false};
    case tensor_ref_kind::dltensor:
      return {static_cast<const DLTensor*>(ref.ptr), false};
    case tensor_ref_kind::none:
      break;
  }
  throw error(status::invalid_argument, fmt::format("{}: tensor kind {} is not one of CBG_TENSOR_DLPACK_VERSIONED (1), "
                                                    "CBG_TENSOR_DLPACK_LEGACY (2), CBG_TENSOR_DLTENSOR (3)",
                                                    role, static_cast<int>(ref.kind)));
}

}  // namespace

tensor_view import_tensor(const tensor_ref& ref, const import_rules& rules) {
  const raw_tensor raw = unwrap(ref, rules.role);
  const DLTensor& t = *raw.tensor;
  tensor_view v;
  v.read_only = raw.read_only;
  CBG_EXPECTS(!(rules.writable && raw.read_only), status::read_only,
              fmt::format("{}: the tensor is marked read-only (DLPACK_FLAG_BITMASK_READ_ONLY) but "
                          "this call writes into it; pass a writable tensor",
                          rules.role));
  v.memory = memory_of(t.device, rules);
  v.device_id = v.memory == memory_kind::host ? -1 : t.device.device_id;
  v.type = dtype_of(t.dtype, rules.role);
  CBG_EXPECTS(t.ndim >= rules.min_rank && t.ndim <= rules.max_rank, status::shape,
              fmt::format("{}: rank {} is not allowed here (expected {}..{})", rules.role, t.ndim, rules.min_rank,
                          rules.max_rank));
  CBG_EXPECTS(t.ndim == 0 || t.shape != nullptr, status::shape,
              fmt::format("{}: shape is NULL for a rank-{} tensor", rules.role, t.ndim));
  v.rank = t.ndim;
  // Every size below is checked: a shape, stride or offset whose product or sum overflows is refused
  // before any loop or allocation uses it.
  std::int64_t expected_stride = 1;
  std::int64_t numel = 1;
  for (int i = v.rank - 1; i >= 0; --i) {
    CBG_EXPECTS(t.shape[i] >= 0, status::shape,
                fmt::format("{}: dimension {} has negative extent {}", rules.role, i, t.shape[i]));
    v.shape[i] = t.shape[i];
    if (t.strides == nullptr) {
      v.strides[i] = expected_stride;  // NULL strides: compact row-major
    } else {
      CBG_EXPECTS(t.strides[i] >= 0, status::shape,
                  fmt::format("{}: negative stride {} in dimension {} is not supported; pass a "
                              "copy with non-negative strides",
                              rules.role, t.strides[i], i));
      v.strides[i] = t.strides[i];
    }
    numel = checked_mul(numel, t.shape[i], fmt::format("{}: element count", rules.role));
    if (i > 0)
      expected_stride = checked_mul(expected_stride, std::max<std::int64_t>(t.shape[i], 1),
                                    fmt::format("{}: row-major stride", rules.role));
  }
  CBG_EXPECTS(t.data != nullptr || numel == 0, status::null_pointer,
              fmt::format("{}: the data pointer is NULL for a tensor of {} elements", rules.role, numel));
  // The bytes the elements span: (the last element's offset + 1) x the item size, from data +
  // byte_offset; it must fit in the address space.
  std::uint64_t span = 0;
  if (numel > 0) {
    const std::string what = fmt::format("{}: byte extent", rules.role);
    std::int64_t last = 0;
    for (int i = 0; i < v.rank; ++i) {
      last = checked_add(last, checked_mul(v.shape[i] - 1, v.strides[i], what), what);
    }
    span = static_cast<std::uint64_t>(
        checked_mul(checked_add(last, std::int64_t{1}, what), static_cast<std::int64_t>(size_of(v.type)), what));
    std::uintptr_t end = 0;
    CBG_EXPECTS(!__builtin_add_overflow(reinterpret_cast<std::uintptr_t>(t.data), t.byte_offset, &end) &&
                    !__builtin_add_overflow(end, span, &end),
                status::shape,
                fmt::format("{}: data pointer + byte_offset ({}) + the {} bytes the elements span wrap around "
                            "the address space",
                            rules.role, t.byte_offset, span));
  }
  v.data = static_cast<const unsigned char*>(t.data) + t.byte_offset;
  const auto address = reinterpret_cast<std::uintptr_t>(v.data);
  CBG_EXPECTS(numel == 0 || address % size_of(v.type) == 0, status::shape,
              fmt::format("{}: data pointer + byte_offset ({:#x}) is not aligned to the {}-byte "
                          "element size",
                          rules.role, address, size_of(v.type)));
  return v;
}

mutable_tensor_view import_mutable_tensor(const tensor_ref& ref, const import_rules& rules) {
  import_rules writable = rules;
  writable.writable = true;
  const tensor_view v = import_tensor(ref, writable);
  mutable_tensor_view m;
  m.data = const_cast<void*>(v.data);
  m.type = v.type;
  m.memory = v.memory;
  m.device_id = v.device_id;
  m.rank = v.rank;
  for (int i = 0; i < max_tensor_rank; ++i) {
    m.shape[i] = v.shape[i];
    m.strides[i] = v.strides[i];
  }
  return m;
}

}  // namespace cbg
