// SPDX-License-Identifier: Apache-2.0
// GPU hashing of categorical columns (hashing.hpp): one thread per value, the per-element math of
// cat_hash.hpp. A string's bytes are read by its own thread (categorical strings are short next
// to a warp's width of rows, so divergence is bounded by the longest string of the warp). The first
// malformed row is found with an integer atomicMin, so the error names the same row as the host.
#include <algorithm>
#include <limits>
#include <string>

#include "cbg/categorical/hashing.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::categorical {

namespace {

constexpr int hash_block = 256;
using row_t = unsigned long long;
constexpr row_t no_row = std::numeric_limits<row_t>::max();

__global__ __launch_bounds__(hash_block) void hash_strings_kernel(string_column_view s, std::uint32_t* out,
                                                                  row_t* first_bad) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= s.rows) return;
  if (!string_in_bounds(s, i)) {
    atomicMin(first_bad, static_cast<row_t>(i));
    out[i] = 0;
    return;
  }
  out[i] = string_hash_at(s, i);
}

__global__ __launch_bounds__(hash_block) void map_codes_kernel(column_view codes, const std::uint32_t* dict,
                                                               std::int64_t dict_size, std::uint32_t* out,
                                                               row_t* first_bad) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= codes.size) return;
  const std::int64_t code = code_at(codes, i);
  if (!code_in_range(code, dict_size)) {
    atomicMin(first_bad, static_cast<row_t>(i));
    out[i] = 0;
    return;
  }
  out[i] = dict[code];
}

__global__ __launch_bounds__(hash_block) void hash_column_kernel(column_view c, std::uint32_t* out) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < c.size) out[i] = cat_hash_at(c, i);
}

__global__ __launch_bounds__(hash_block) void first_null_kernel(const unsigned char* bitmap, std::int64_t bit_offset,
                                                                std::int64_t rows, row_t* first) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < rows && !arrow_valid(bitmap, bit_offset, i)) atomicMin(first, static_cast<row_t>(i));
}

unsigned blocks_for(std::int64_t n) { return static_cast<unsigned>((n + hash_block - 1) / hash_block); }

void require_device(const context& ctx, memory_kind m, const char* fn) {
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, std::string(fn) + " needs a GPU context");
  CBG_EXPECTS(m != memory_kind::host, status::device,
              std::string(fn) + " cannot read pageable host memory; use the host form");
}

// Runs `launch(first_bad)` on the context's stream and returns the first row it flagged, or -1.
template <class Launch>
std::int64_t first_flagged_row(const context& ctx, Launch&& launch, const char* site) {
  const cudaStream_t stream = ctx.stream();
  device_buffer<row_t> first(1, stream, ctx.resource());
  CBG_CUDA_TRY(cudaMemsetAsync(first.data(), 0xff, first.size_bytes(), stream));
  launch(first.data());
  CBG_CHECK_CUDA(stream);
  row_t host = no_row;
  copy_bytes(&host, memory_kind::host, first.data(), memory_kind::device, sizeof(host), stream, ctx.copies(),
             ctx.rules(), CBG_COPY_SITE(site));
  CBG_CUDA_TRY(cudaStreamSynchronize(stream));
  return host == no_row ? -1 : static_cast<std::int64_t>(host);
}

}  // namespace

namespace detail {

std::int64_t hash_strings_device_first_bad(const context& ctx, const string_column_view& s, std::uint32_t* out) {
  require_device(ctx, s.memory, "hash_strings_device");
  scoped_device guard(ctx.device());
  return first_flagged_row(
      ctx,
      [&](row_t* first) {
        if (s.rows > 0) hash_strings_kernel<<<blocks_for(s.rows), hash_block, 0, ctx.stream()>>>(s, out, first);
      },
      "string column: first malformed row");
}

std::int64_t map_codes_device_first_bad(const context& ctx, const column_view& codes,
                                        const std::uint32_t* dictionary_hashes, std::int64_t dictionary_size,
                                        std::uint32_t* out) {
  require_device(ctx, codes.memory, "map_codes_device");
  scoped_device guard(ctx.device());
  return first_flagged_row(
      ctx,
      [&](row_t* first) {
        if (codes.size > 0) {
          map_codes_kernel<<<blocks_for(codes.size), hash_block, 0, ctx.stream()>>>(codes, dictionary_hashes,
                                                                                    dictionary_size, out, first);
        }
      },
      "dictionary column: first bad code");
}

}  // namespace detail

void hash_column_device(const context& ctx, const column_view& c, std::uint32_t* out) {
  require_device(ctx, c.memory, "hash_column_device");
  scoped_device guard(ctx.device());
  if (c.size > 0) {
    hash_column_kernel<<<blocks_for(c.size), hash_block, 0, ctx.stream()>>>(c, out);
    CBG_CHECK_CUDA(ctx.stream());
  }
}

std::int64_t first_null_device(const context& ctx, const unsigned char* bitmap, std::int64_t bit_offset,
                               std::int64_t rows) {
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "first_null_device needs a GPU context");
  if (bitmap == nullptr || rows == 0) return -1;
  scoped_device guard(ctx.device());
  return first_flagged_row(
      ctx,
      [&](row_t* first) {
        first_null_kernel<<<blocks_for(rows), hash_block, 0, ctx.stream()>>>(bitmap, bit_offset, rows, first);
      },
      "arrow validity: first null row");
}

}  // namespace cbg::categorical
