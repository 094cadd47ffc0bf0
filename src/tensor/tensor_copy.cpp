// SPDX-License-Identifier: Apache-2.0
#include "cbg/tensor/tensor_copy.hpp"

#include <utility>

#include <fmt/format.h>

#include "cbg/core/checked_math.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg {

namespace {

std::string shape_text(const std::int64_t* shape, int rank) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) s += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return s + "]";
}

// True when both views store their elements as one dense block (some order of the dimensions, no
// gaps) with the same strides, so one flat copy moves everything.
bool same_dense_layout(const tensor_view& a, const tensor_view& b) {
  std::int64_t order[max_tensor_rank];
  int m = 0;
  for (int i = 0; i < a.rank; ++i) {
    if (a.shape[i] == 1) continue;
    if (a.strides[i] != b.strides[i]) return false;
    order[m++] = i;
  }
  for (int k = 1; k < m; ++k) {  // insertion sort by stride: at most four dimensions
    for (int j = k; j > 0 && a.strides[order[j]] < a.strides[order[j - 1]]; --j) {
      std::swap(order[j], order[j - 1]);
    }
  }
  std::int64_t expected = 1;
  for (int k = 0; k < m; ++k) {
    if (a.strides[order[k]] != expected) return false;
    expected *= a.shape[order[k]];
  }
  return true;
}

}  // namespace

void copy_tensor(const context& ctx, const mutable_tensor_view& dst, const tensor_view& src) {
  CBG_EXPECTS(dst.type == src.type, status::dtype,
              fmt::format("tensor copy: source dtype {} differs from destination dtype {}", name_of(src.type),
                          name_of(dst.type)));
  bool same_shape = dst.rank == src.rank;
  for (int i = 0; same_shape && i < src.rank; ++i) same_shape = dst.shape[i] == src.shape[i];
  CBG_EXPECTS(same_shape, status::shape,
              fmt::format("tensor copy: source shape {} differs from destination shape {}",
                          shape_text(src.shape, src.rank), shape_text(dst.shape, dst.rank)));
  const std::int64_t n = src.size();
  if (n == 0) return;
  const bool host_only = !is_device_side(src.memory) && !is_device_side(dst.memory);
  for (int i = 0; i < src.rank; ++i) {
    if (src.shape[i] == 1) continue;
    CBG_EXPECTS(dst.strides[i] > 0, status::invalid_argument,
                fmt::format("tensor copy: the destination has a zero stride in dimension {}, so "
                            "several elements would be written to one place",
                            i));
    // CUDA's pitched copies need a pitch of at least one row; host loops do not.
    CBG_EXPECTS(src.strides[i] > 0 || host_only, status::unsupported,
                fmt::format("tensor copy: a zero-stride (broadcast) source in dimension {} is "
                            "copied between host memory only; materialise it first",
                            i));
  }

  scoped_device guard(ctx.device());
  const cudaStream_t stream = ctx.stream();
  const auto isz = static_cast<std::int64_t>(size_of(src.type));
  const auto* s = static_cast<const unsigned char*>(src.data);
  auto* d = static_cast<unsigned char*>(dst.data);
  const copy_site site = CBG_COPY_SITE("cbg_tensor_copy");

  if (same_dense_layout(src, dst.as_const())) {
    // Both sides hold the elements in one dense block in the same order: one copy.
    copy_bytes(d, dst.memory, s, src.memory, static_cast<std::size_t>(checked_mul(n, isz, "tensor copy: bytes")),
               stream, ctx.copies(), ctx.rules(), site);
  } else {
    // A 2-D copy per outer index: rows along `inner` (a dimension contiguous on both sides, else
    // single elements), repeated along `pitched` (the longest remaining dimension), so the number
    // of copy calls is the product of the remaining (outer) extents.
    int inner = -1;
    for (int i = src.rank - 1; i >= 0 && inner < 0; --i) {
      if (src.shape[i] > 1 && src.strides[i] == 1 && dst.strides[i] == 1) inner = i;
    }
    int pitched = -1;
    for (int i = 0; i < src.rank; ++i) {
      if (i != inner && src.shape[i] > 1 && (pitched < 0 || src.shape[i] > src.shape[pitched])) {
        pitched = i;
      }
    }
    const std::size_t row_bytes = static_cast<std::size_t>((inner >= 0 ? src.shape[inner] : 1) * isz);
    const std::size_t rows = pitched >= 0 ? static_cast<std::size_t>(src.shape[pitched]) : 1;
    // A single row has no pitch to speak of; CUDA still wants one of at least row_bytes.
    const auto pitch_of = [&](const std::int64_t* strides) {
      return pitched < 0 ? row_bytes : static_cast<std::size_t>(strides[pitched] * isz);
    };
    std::int64_t index[max_tensor_rank] = {};
    bool done = false;
    while (!done) {
      std::int64_t src_offset = 0, dst_offset = 0;
      for (int i = 0; i < src.rank; ++i) {
        src_offset += index[i] * src.strides[i];
        dst_offset += index[i] * dst.strides[i];
      }
      copy_bytes_2d(d + dst_offset * isz, pitch_of(dst.strides), dst.memory, s + src_offset * isz,
                    pitch_of(src.strides), src.memory, row_bytes, rows, stream, ctx.copies(), ctx.rules(), site);
      // Next index over the outer dimensions (all but inner and pitched), last one fastest.
      done = true;
      for (int i = src.rank - 1; i >= 0; --i) {
        if (i == inner || i == pitched) continue;
        if (++index[i] < src.shape[i]) {
          done = false;
          break;
        }
        index[i] = 0;
      }
    }
  }
  if (!ctx.is_cpu()) CBG_CUDA_TRY(cudaStreamSynchronize(stream));
}

}  // namespace cbg
