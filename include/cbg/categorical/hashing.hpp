// SPDX-License-Identifier: Apache-2.0
// Hashing whole categorical columns with CatBoost's hash (cat_hash.hpp): the host reference and
// the GPU, value for value the same. Each column kind has a host function (host-readable memory)
// and a device function (memory the context's GPU can read: device, managed or pinned).
//  - integer/bool columns: the decimal text of each value;
//  - string columns (Arrow utf8/large_utf8 layout): the bytes of each string;
//  - dictionary columns (codes + a string dictionary, Arrow dictionary<int, utf8>): the dictionary
//    is hashed once, then each code is mapped to its string's hash.
// Malformed input (offsets out of order or outside the bytes, codes outside the dictionary, nulls)
// is refused with bad_data naming `what` (the feature) and the first bad row. CatBoost itself
// refuses missing categorical values ("NaN values should be converted to string"), so do we.
#pragma once

#include <cstdint>
#include <string_view>

#include "cbg/categorical/cat_hash.hpp"
#include "cbg/runtime/context.hpp"

namespace cbg::categorical {

// out[rows] in host memory. Throws bad_data naming the first malformed row.
void hash_strings_host(const string_column_view& s, std::uint32_t* out, std::string_view what = "string column");

// out is device memory [rows]. Enqueued on ctx.stream(); only the first malformed row (8 bytes)
// comes back, on which this blocks; throws bad_data as the host does.
void hash_strings_device(const context& ctx, const string_column_view& s, std::uint32_t* out,
                         std::string_view what = "string column");

// Dictionary columns: out[i] = dictionary_hashes[codes[i]] for codes.size rows; codes of any
// integer dtype. Throws bad_data naming the first row whose code is negative (a null) or not below
// dictionary_size. Host: all in host memory. Device: all device-readable; blocks on 8 bytes.
void map_codes_host(const column_view& codes, const std::uint32_t* dictionary_hashes, std::int64_t dictionary_size,
                    std::uint32_t* out, std::string_view what = "dictionary column");
void map_codes_device(const context& ctx, const column_view& codes, const std::uint32_t* dictionary_hashes,
                      std::int64_t dictionary_size, std::uint32_t* out, std::string_view what = "dictionary column");

// Integer/bool (or already hashed) categorical columns into out[c.size] (host / device memory).
// The device form only enqueues.
void hash_column_host(const column_view& c, std::uint32_t* out);
void hash_column_device(const context& ctx, const column_view& c, std::uint32_t* out);

// The first row i in [0, rows) whose Arrow validity bit (bitmap, from bit bit_offset) is 0, or -1.
// Host: bitmap in host memory. Device: device-readable; blocks on 8 bytes.
std::int64_t first_null_host(const unsigned char* bitmap, std::int64_t bit_offset, std::int64_t rows);
std::int64_t first_null_device(const context& ctx, const unsigned char* bitmap, std::int64_t bit_offset,
                               std::int64_t rows);

namespace detail {
// The kernels behind hash_strings_device / map_codes_device: the first bad row, or -1 (the
// messages are formatted on the host side, in src/categorical/hashing.cpp).
std::int64_t hash_strings_device_first_bad(const context& ctx, const string_column_view& s, std::uint32_t* out);
std::int64_t map_codes_device_first_bad(const context& ctx, const column_view& codes,
                                        const std::uint32_t* dictionary_hashes, std::int64_t dictionary_size,
                                        std::uint32_t* out);
}  // namespace detail

}  // namespace cbg::categorical
