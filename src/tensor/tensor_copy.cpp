// SPDX-License-Identifier: Apache-2.0
#include "cbg/tensor/tensor_copy.hpp"

#include <fmt/format.h>

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

}  // namespace

void copy_tensor(const context& ctx, const mutable_tensor_view& dst, const tensor_view& src) {
  CBG_EXPECTS(dst.type == src.type, status::dtype,
              fmt::format("tensor copy: source dtype {} differs from destination dtype {}",
                          name_of(src.type), name_of(dst.type)));
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

  if (src.is_row_major_compact() && dst.as_const().is_row_major_compact()) {
    copy_bytes(d, dst.memory, s, src.memory, static_cast<std::size_t>(n * isz), stream, ctx.copies(),
               ctx.rules(), site);
  } else {
    // Rows of a 2-D copy: the last dimension when both sides are contiguous in it (one pitched copy
    // per outer index), otherwise single elements at the last dimension's pitches.
    const int last = src.rank - 1;
    const bool rows_contiguous = src.rank >= 2 && (src.shape[last] == 1 ||
                                                   (src.strides[last] == 1 && dst.strides[last] == 1));
    const int outer_rank = rows_contiguous ? src.rank - 2 : src.rank - 1;
    const int pitched_dim = rows_contiguous ? src.rank - 2 : last;
    const std::size_t row_bytes =
        static_cast<std::size_t>(rows_contiguous ? src.shape[last] * isz : isz);
    // A single row has no pitch to speak of; CUDA still wants one of at least row_bytes.
    const auto pitch_of = [&](std::int64_t stride) {
      return src.shape[pitched_dim] == 1 ? row_bytes : static_cast<std::size_t>(stride * isz);
    };
    std::int64_t index[max_tensor_rank] = {};
    std::int64_t outer_count = 1;
    for (int i = 0; i < outer_rank; ++i) outer_count *= src.shape[i];
    for (std::int64_t k = 0; k < outer_count; ++k) {
      std::int64_t src_offset = 0, dst_offset = 0;
      for (int i = 0; i < outer_rank; ++i) {
        src_offset += index[i] * src.strides[i];
        dst_offset += index[i] * dst.strides[i];
      }
      copy_bytes_2d(d + dst_offset * isz, pitch_of(dst.strides[pitched_dim]), dst.memory,
                    s + src_offset * isz, pitch_of(src.strides[pitched_dim]), src.memory, row_bytes,
                    static_cast<std::size_t>(src.shape[pitched_dim]), stream, ctx.copies(),
                    ctx.rules(), site);
      for (int i = outer_rank - 1; i >= 0; --i) {  // next outer index, last dimension fastest
        if (++index[i] < src.shape[i]) break;
        index[i] = 0;
      }
    }
  }
  if (!ctx.is_cpu()) CBG_CUDA_TRY(cudaStreamSynchronize(stream));
}

}  // namespace cbg
