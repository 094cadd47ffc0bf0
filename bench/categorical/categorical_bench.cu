// SPDX-License-Identifier: Apache-2.0
// cbgpu-categorical-bench: times CatBoost hashing of categorical columns on the GPU (integer columns
// as decimal text, Arrow string columns, dictionary columns) and perfect hashing, per column of
// `rows` values, for 8 cardinalities from 10 to 1M, against the bandwidth floor of each step: the
// bytes it must read and write at the device-to-device copy bandwidth measured in the same run
// (copy bandwidth = 2 x bytes / copy time: a copy reads and writes them once).
//   cbgpu-categorical-bench [rows] [reps]   (default: 10000000 5)
// Prints one line per (input, cardinality) and a JSON line per measurement (prefix "json ").
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cub/device/device_scan.cuh>

#include "kernels/common/cccl.cuh"

#include "cbg/categorical/hashing.hpp"
#include "cbg/categorical/perfect_hash.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "bench/common/bench_util.hpp"

namespace {

// The category of row i of a column with `card` values (skewed: low ids more frequent), and its
// integer value (an id spread over 1..~10^9, so decimal texts have up to 10 digits).
__host__ __device__ std::uint64_t category(std::int64_t i, std::uint64_t card, std::uint64_t seed) {
  const std::uint64_t h = cbg_bench::mix64(static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL + seed);
  const std::uint64_t a = h % card, b = (h >> 32) % card;
  return a < b ? a : b;
}
__host__ __device__ std::int64_t int_value(std::uint64_t id) { return static_cast<std::int64_t>(id * 977u + 13u); }

// String of category `id`: "category-" + hex digits of the id, padded to 8..24 bytes by the id.
__host__ __device__ int string_length(std::uint64_t id) { return 9 + 8 + static_cast<int>(id % 8); }
__device__ void write_string(std::uint64_t id, unsigned char* out) {
  const char prefix[] = "category-";
  for (int k = 0; k < 9; ++k) out[k] = static_cast<unsigned char>(prefix[k]);
  const int len = string_length(id);
  for (int k = 9; k < len; ++k)
    out[k] = static_cast<unsigned char>("0123456789abcdef"[(id >> (4 * ((k - 9) % 16))) & 15]);
}

__global__ void fill_ints(std::int64_t* x, std::int64_t rows, std::uint64_t card, std::uint64_t seed) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < rows) x[i] = int_value(category(i, card, seed));
}
__global__ void fill_codes(std::int32_t* x, std::int64_t rows, std::uint64_t card, std::uint64_t seed) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < rows) x[i] = static_cast<std::int32_t>(category(i, card, seed));
}
// lengths[i] for rows (by category) or for the dictionary (id = i when card == 0).
__global__ void fill_lengths(std::int32_t* len, std::int64_t n, std::uint64_t card, std::uint64_t seed) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) len[i] = string_length(card == 0 ? static_cast<std::uint64_t>(i) : category(i, card, seed));
}
__global__ void fill_bytes(const std::int32_t* offsets, unsigned char* bytes, std::int64_t n, std::uint64_t card,
                           std::uint64_t seed) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) write_string(card == 0 ? static_cast<std::uint64_t>(i) : category(i, card, seed), bytes + offsets[i]);
}

unsigned blocks(std::int64_t n) { return static_cast<unsigned>((n + 255) / 256); }

struct timer {
  cudaStream_t stream;
  cudaEvent_t a{}, b{};
  explicit timer(cudaStream_t s) : stream(s) {
    BENCH_CHECK(cudaEventCreate(&a));
    BENCH_CHECK(cudaEventCreate(&b));
  }
  ~timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  // Median over reps (after one warm-up) of f's time in ms.
  template <class F>
  double median_ms(int reps, F&& f) {
    f();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      BENCH_CHECK(cudaEventRecord(a, stream));
      f();
      BENCH_CHECK(cudaEventRecord(b, stream));
      BENCH_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      BENCH_CHECK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

// Device string column: offsets [n + 1] (int32) and bytes: the strings of n rows of a column of
// `card` categories, or with card == 0 the dictionary of ids 0..n-1.
struct device_strings {
  cbg::device_buffer<std::int32_t> offsets;
  cbg::device_buffer<unsigned char> bytes;
  std::int64_t total = 0;
};

device_strings make_strings(const cbg::context& ctx, std::int64_t n, std::uint64_t card, std::uint64_t seed) {
  const cudaStream_t s = ctx.stream();
  device_strings d;
  d.offsets = cbg::device_buffer<std::int32_t>(static_cast<std::size_t>(n + 1), s, ctx.resource());
  BENCH_CHECK(cudaMemsetAsync(d.offsets.data(), 0, sizeof(std::int32_t), s));
  fill_lengths<<<blocks(n), 256, 0, s>>>(d.offsets.data() + 1, n, card, seed);
  std::size_t temp_bytes = 0;
  BENCH_CHECK(cbg::cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, d.offsets.data() + 1, d.offsets.data() + 1,
                                                 static_cast<int>(n), s));
  cbg::device_buffer<unsigned char> temp(temp_bytes, s, ctx.resource());
  BENCH_CHECK(cbg::cub::DeviceScan::InclusiveSum(temp.data(), temp_bytes, d.offsets.data() + 1, d.offsets.data() + 1,
                                                 static_cast<int>(n), s));
  std::int32_t total = 0;
  BENCH_CHECK(cudaMemcpyAsync(&total, d.offsets.data() + n, sizeof(total), cudaMemcpyDeviceToHost, s));
  BENCH_CHECK(cudaStreamSynchronize(s));
  d.total = total;
  d.bytes = cbg::device_buffer<unsigned char>(static_cast<std::size_t>(total), s, ctx.resource());
  fill_bytes<<<blocks(n), 256, 0, s>>>(d.offsets.data(), d.bytes.data(), n, card, seed);
  BENCH_CHECK(cudaStreamSynchronize(s));
  return d;
}

cbg::categorical::string_column_view view_of(const device_strings& d, std::int64_t n) {
  cbg::categorical::string_column_view v;
  v.offsets = d.offsets.data();
  v.bytes = d.bytes.data();
  v.byte_count = d.total;
  v.rows = n;
  v.memory = cbg::memory_kind::device;
  v.device_id = 0;
  return v;
}

void report(const char* input, std::uint64_t card, const char* step, double ms, double bytes, double gbps,
            std::int64_t rows, const char* device) {
  const double floor_ms = bytes / (gbps * 1e9) * 1e3;
  std::printf("  %-10s card %8llu  %-13s %8.3f ms  floor %7.3f ms  x%5.1f  (%.0f Mrows/s)\n", input,
              static_cast<unsigned long long>(card), step, ms, floor_ms, ms / floor_ms, rows / ms / 1e3);
  std::printf(
      "json {\"bench\":\"categorical\",\"device\":\"%s\",\"rows\":%lld,\"input\":\"%s\",\"cardinality\":%llu,"
      "\"step\":\"%s\",\"ms\":%.4f,\"floor_ms\":%.4f,\"bytes\":%.0f}\n",
      device, static_cast<long long>(rows), input, static_cast<unsigned long long>(card), step, ms, floor_ms, bytes);
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 10000000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("cbgpu-categorical-bench: no CUDA device visible; nothing to time\n");
    return 0;
  }
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  cbg::context_options o;
  o.device = 0;
  const auto ctx = cbg::context::create(o);
  const cudaStream_t s = ctx->stream();
  timer t(s);

  // Copy bandwidth: a 1 GiB device-to-device copy reads and writes each byte once.
  const std::size_t copy_bytes = std::size_t{1} << 30;
  cbg::device_buffer<unsigned char> c0(copy_bytes, s, ctx->resource()), c1(copy_bytes, s, ctx->resource());
  BENCH_CHECK(cudaMemsetAsync(c0.data(), 1, copy_bytes, s));
  const double copy_ms = t.median_ms(
      reps, [&] { BENCH_CHECK(cudaMemcpyAsync(c1.data(), c0.data(), copy_bytes, cudaMemcpyDeviceToDevice, s)); });
  const double gbps = 2.0 * static_cast<double>(copy_bytes) / (copy_ms * 1e-3) / 1e9;
  std::printf(
      "cbgpu-categorical-bench on %s: %lld rows per column, median of %d; copy bandwidth %.0f GB/s "
      "(read + write)\n",
      prop.name, static_cast<long long>(rows), reps, gbps);
  c0 = {};
  c1 = {};

  const std::vector<std::uint64_t> cards = {10, 100, 1000, 10000, 30000, 100000, 300000, 1000000};
  cbg::device_buffer<std::uint32_t> hashes(static_cast<std::size_t>(rows), s, ctx->resource());
  cbg::device_buffer<std::int64_t> ints(static_cast<std::size_t>(rows), s, ctx->resource());
  cbg::device_buffer<std::int32_t> codes(static_cast<std::size_t>(rows), s, ctx->resource());
  const double r = static_cast<double>(rows);
  double total_int = 0, total_str = 0, total_dict = 0, total_ph = 0;
  for (std::size_t k = 0; k < cards.size(); ++k) {
    const std::uint64_t card = cards[k];
    const std::uint64_t seed = 1000 + k;
    // Integers (int64, decimal text hashed): read 8, write 4 bytes per row.
    fill_ints<<<blocks(rows), 256, 0, s>>>(ints.data(), rows, card, seed);
    cbg::column_view c;
    c.data = ints.data();
    c.type = cbg::dtype::int64;
    c.memory = cbg::memory_kind::device;
    c.device_id = 0;
    c.size = rows;
    const double int_ms = t.median_ms(reps, [&] { cbg::categorical::hash_column_device(*ctx, c, hashes.data()); });
    report("int64", card, "hash", int_ms, 12.0 * r, gbps, rows, prop.name);

    // Strings (Arrow utf8): read the offsets and the bytes, write 4 bytes per row.
    {
      const device_strings str = make_strings(*ctx, rows, card, seed);
      const auto v = view_of(str, rows);
      const double ms = t.median_ms(reps, [&] { cbg::categorical::hash_strings_device(*ctx, v, hashes.data()); });
      report("utf8", card, "hash", ms, 4.0 * (r + 1) + static_cast<double>(str.total) + 4.0 * r, gbps, rows, prop.name);
      total_str += ms;
    }
    // Dictionary (int32 codes + card strings): hash the dictionary, then map: read 4 + write 4 per row
    // (plus the dictionary's strings and hashes once).
    {
      fill_codes<<<blocks(rows), 256, 0, s>>>(codes.data(), rows, card, seed);
      const auto n = static_cast<std::int64_t>(card);
      const device_strings dict = make_strings(*ctx, n, 0, 0);  // the strings of ids 0..card-1
      cbg::device_buffer<std::uint32_t> dict_hashes(static_cast<std::size_t>(n), s, ctx->resource());
      cbg::column_view cc;
      cc.data = codes.data();
      cc.type = cbg::dtype::int32;
      cc.memory = cbg::memory_kind::device;
      cc.device_id = 0;
      cc.size = rows;
      const auto dv = view_of(dict, n);
      const double ms = t.median_ms(reps, [&] {
        cbg::categorical::hash_strings_device(*ctx, dv, dict_hashes.data());
        cbg::categorical::map_codes_device(*ctx, cc, dict_hashes.data(), n, hashes.data());
      });
      report("dictionary", card, "hash", ms, 8.0 * r + 8.0 * static_cast<double>(n) + static_cast<double>(dict.total),
             gbps, rows, prop.name);
      total_dict += ms;
    }
    // Perfect hash of the int column's hashes: read 4, write the ids 4 per row (keys, counts: per value).
    cbg::categorical::hash_column_device(*ctx, c, hashes.data());
    std::int64_t unique = 0;
    const double ph_ms = t.median_ms(reps, [&] {
      const auto ph = cbg::categorical::perfect_hash_device(*ctx, hashes.data(), rows);
      unique = ph.unique;
    });
    report("int64", card, "perfect_hash", ph_ms, 8.0 * r + 8.0 * static_cast<double>(unique), gbps, rows, prop.name);
    if (unique > static_cast<std::int64_t>(card) || unique < static_cast<std::int64_t>(card) * 9 / 10) {
      std::printf("  (note: %lld distinct values drawn of %llu)\n", static_cast<long long>(unique),
                  static_cast<unsigned long long>(card));
    }
    total_int += int_ms;
    total_ph += ph_ms;
  }
  std::printf(
      "8 columns x %lld rows: int64 hash %.2f ms, utf8 hash %.2f ms, dictionary %.2f ms, perfect hash "
      "%.2f ms\n",
      static_cast<long long>(rows), total_int, total_str, total_dict, total_ph);
  return 0;
}
