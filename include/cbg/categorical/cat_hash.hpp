// SPDX-License-Identifier: Apache-2.0
// CatBoost's hash of one categorical value of a pool column, once for the host and the kernels
// (catboost-training.md §2.1): integers hash as their decimal text ("-5", "17"; bool as "0"/"1"),
// strings as their UTF-8 bytes; a column the pool has hashed already (column_view::hashed) holds
// the uint32 hashes themselves. The hash is the low 32 bits of CityHash64 v1.0 (model/hash.hpp).
#pragma once

#include <cstdint>

#include "cbg/data/column_view.hpp"
#include "cbg/model/hash.hpp"

namespace cbg::categorical {

// Hash of value `i` of an integer, bool or pre-hashed column. Float columns never reach here (the
// pool refuses them as categorical); they hash as 0.
CBG_HOST_DEVICE inline std::uint32_t cat_hash_at(const column_view& c, std::int64_t i) noexcept {
  const unsigned char* p =
      static_cast<const unsigned char*>(c.data) + i * c.stride * static_cast<std::int64_t>(size_of(c.type));
  if (c.hashed) return *reinterpret_cast<const std::uint32_t*>(p);
  switch (c.type) {
    case dtype::int8:
      return model::cat_hash_int(*reinterpret_cast<const std::int8_t*>(p));
    case dtype::int16:
      return model::cat_hash_int(*reinterpret_cast<const std::int16_t*>(p));
    case dtype::int32:
      return model::cat_hash_int(*reinterpret_cast<const std::int32_t*>(p));
    case dtype::int64:
      return model::cat_hash_int(*reinterpret_cast<const std::int64_t*>(p));
    case dtype::uint8:
      return model::cat_hash_uint(*p);
    case dtype::uint16:
      return model::cat_hash_uint(*reinterpret_cast<const std::uint16_t*>(p));
    case dtype::uint32:
      return model::cat_hash_uint(*reinterpret_cast<const std::uint32_t*>(p));
    case dtype::uint64:
      return model::cat_hash_uint(*reinterpret_cast<const std::uint64_t*>(p));
    case dtype::boolean:
      return model::cat_hash_uint(*p != 0 ? 1u : 0u);
    default:
      return 0;
  }
}

// A column of UTF-8 strings in Arrow's layout: value i is bytes[offsets[i] .. offsets[i+1]).
// Offsets are int32 or int64, contiguous, rows + 1 of them; both arrays live in the same memory.
struct string_column_view {
  const void* offsets = nullptr;
  bool offsets64 = false;
  const unsigned char* bytes = nullptr;
  std::int64_t byte_count = 0;  // elements of the bytes tensor
  std::int64_t rows = 0;
  memory_kind memory = memory_kind::host;
  std::int32_t device_id = -1;
};

CBG_HOST_DEVICE inline std::int64_t string_offset(const string_column_view& s, std::int64_t i) {
  return s.offsets64 ? static_cast<const std::int64_t*>(s.offsets)[i]
                     : static_cast<std::int64_t>(static_cast<const std::int32_t*>(s.offsets)[i]);
}

// Whether value i's byte range is well formed: 0 <= begin <= end <= byte_count.
CBG_HOST_DEVICE inline bool string_in_bounds(const string_column_view& s, std::int64_t i) {
  const std::int64_t begin = string_offset(s, i);
  const std::int64_t end = string_offset(s, i + 1);
  return begin >= 0 && begin <= end && end <= s.byte_count;
}

// Hash of string i; the caller has checked string_in_bounds. Strings of any length (CityHash's
// length classes 0-16, 17-32, 33-64 and longer) and any bytes (UTF-8 is hashed as bytes).
CBG_HOST_DEVICE inline std::uint32_t string_hash_at(const string_column_view& s, std::int64_t i) {
  const std::int64_t begin = string_offset(s, i);
  const std::int64_t end = string_offset(s, i + 1);
  return model::cat_hash(s.bytes + begin, static_cast<std::size_t>(end - begin));
}

// Code `i` of a dictionary-encoded column (integer dtypes; the dictionary holds the strings), as
// int64. Unsigned codes above INT64_MAX read as negative and are refused like nulls.
CBG_HOST_DEVICE inline std::int64_t code_at(const column_view& c, std::int64_t i) noexcept {
  const unsigned char* p =
      static_cast<const unsigned char*>(c.data) + i * c.stride * static_cast<std::int64_t>(size_of(c.type));
  switch (c.type) {
    case dtype::int8:
      return *reinterpret_cast<const std::int8_t*>(p);
    case dtype::int16:
      return *reinterpret_cast<const std::int16_t*>(p);
    case dtype::int32:
      return *reinterpret_cast<const std::int32_t*>(p);
    case dtype::int64:
      return *reinterpret_cast<const std::int64_t*>(p);
    case dtype::uint8:
      return *p;
    case dtype::uint16:
      return *reinterpret_cast<const std::uint16_t*>(p);
    case dtype::uint32:
      return *reinterpret_cast<const std::uint32_t*>(p);
    case dtype::uint64:
      return static_cast<std::int64_t>(*reinterpret_cast<const std::uint64_t*>(p));
    default:
      return -1;
  }
}

// Whether code `code` names an entry of a dictionary of `dictionary_size` strings.
CBG_HOST_DEVICE inline bool code_in_range(std::int64_t code, std::int64_t dictionary_size) noexcept {
  return code >= 0 && code < dictionary_size;
}

// Arrow validity bitmaps (LSB first): whether value i (counted from bit `bit_offset`) is valid.
CBG_HOST_DEVICE inline bool arrow_valid(const unsigned char* bitmap, std::int64_t bit_offset, std::int64_t i) noexcept {
  const std::int64_t b = bit_offset + i;
  return bitmap == nullptr || ((bitmap[b >> 3] >> (b & 7)) & 1) != 0;
}

}  // namespace cbg::categorical
