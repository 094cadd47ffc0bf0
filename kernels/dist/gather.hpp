// SPDX-License-Identifier: Apache-2.0
// The kernel of sharding's row copies (src/dist/shard.cpp): a strided column made contiguous.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace cbg::dist {

// n values of `elem` bytes (1, 2, 4 or 8), `stride` elements apart from `src`, made contiguous at
// `dst` (same device); enqueued on `stream`.
void gather(const void* src, std::int64_t stride, std::size_t elem, std::int64_t n, void* dst, cudaStream_t stream);

// The values of `elem` bytes (1, 2, 4 or 8) at rows rows[0..n) of the column `src` (values `stride`
// elements apart), made contiguous at `dst` (`rows` in device memory); enqueued on `stream`.
void gather_rows(const void* src, std::int64_t stride, const std::int64_t* rows, std::size_t elem, std::int64_t n,
                 void* dst, cudaStream_t stream);

}  // namespace cbg::dist
