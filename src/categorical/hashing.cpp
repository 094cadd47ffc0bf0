// SPDX-License-Identifier: Apache-2.0
// The host reference of column hashing (hashing.hpp); the GPU forms are in kernels/categorical.
#include "cbg/categorical/hashing.hpp"

#include <fmt/format.h>

#include "cbg/core/error.hpp"

namespace cbg::categorical {

void hash_strings_host(const string_column_view& s, std::uint32_t* out, std::string_view what) {
  for (std::int64_t i = 0; i < s.rows; ++i) {
    CBG_EXPECTS(string_in_bounds(s, i), status::bad_data,
                fmt::format("{}: row {} has offsets [{}, {}) outside the {} bytes (Arrow offsets must be "
                            "non-decreasing and end within the bytes)",
                            what, i, string_offset(s, i), string_offset(s, i + 1), s.byte_count));
    out[i] = string_hash_at(s, i);
  }
}

void map_codes_host(const column_view& codes, const std::uint32_t* dictionary_hashes, std::int64_t dictionary_size,
                    std::uint32_t* out, std::string_view what) {
  for (std::int64_t i = 0; i < codes.size; ++i) {
    const std::int64_t code = code_at(codes, i);
    CBG_EXPECTS(code_in_range(code, dictionary_size), status::bad_data,
                fmt::format("{}: row {} has code {}, outside the dictionary of {} strings (a negative "
                            "code is a null; CatBoost refuses missing categorical values)",
                            what, i, code, dictionary_size));
    out[i] = dictionary_hashes[code];
  }
}

void hash_strings_device(const context& ctx, const string_column_view& s, std::uint32_t* out, std::string_view what) {
  const std::int64_t bad = detail::hash_strings_device_first_bad(ctx, s, out);
  CBG_EXPECTS(bad < 0, status::bad_data,
              fmt::format("{}: row {} has offsets outside the {} bytes (Arrow offsets must be non-decreasing "
                          "and end within the bytes)",
                          what, bad, s.byte_count));
}

void map_codes_device(const context& ctx, const column_view& codes, const std::uint32_t* dictionary_hashes,
                      std::int64_t dictionary_size, std::uint32_t* out, std::string_view what) {
  const std::int64_t bad = detail::map_codes_device_first_bad(ctx, codes, dictionary_hashes, dictionary_size, out);
  CBG_EXPECTS(bad < 0, status::bad_data,
              fmt::format("{}: row {} has a code outside the dictionary of {} strings (a negative code is a "
                          "null; CatBoost refuses missing categorical values)",
                          what, bad, dictionary_size));
}

void hash_column_host(const column_view& c, std::uint32_t* out) {
  for (std::int64_t i = 0; i < c.size; ++i) out[i] = cat_hash_at(c, i);
}

std::int64_t first_null_host(const unsigned char* bitmap, std::int64_t bit_offset, std::int64_t rows) {
  for (std::int64_t i = 0; i < rows; ++i) {
    if (!arrow_valid(bitmap, bit_offset, i)) return i;
  }
  return -1;
}

}  // namespace cbg::categorical
