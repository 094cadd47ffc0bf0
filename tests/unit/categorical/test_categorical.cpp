// SPDX-License-Identifier: Apache-2.0
// Categorical input: CatBoost's hash of integer, string (Arrow layout) and dictionary columns, the
// perfect hash (first-appearance ids, counts) and the one-hot rule; host reference against values
// CatBoost itself produced, and (tagged [gpu]) the GPU equal to the host. Parity with the catboost
// package over the C ABI and pyarrow is in tests/python/test_categorical.py.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cbg/categorical/hashing.hpp"
#include "cbg/categorical/perfect_hash.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "support/catch.hpp"
#include "support/test_context.hpp"
#include "support/dlpack_fixtures.hpp"
#include "support/shrink.hpp"

namespace cat = cbg::categorical;
using cbg::status;
using cbg::test::dl_int;
using cbg::test::dl_uint;
using cbg::test::fake_tensor;

namespace {

using cbg::test::make_context;

// Strings and the hashes CatBoost 1.2 gave them (one-hot values of a model trained by the catboost
// package on exactly these strings; uint32 of the int32 values in its JSON model).
struct known {
  std::string text;
  std::uint32_t hash;
};
const std::vector<known>& catboost_hashes() {
  static const std::vector<known> k = {
      {"a", 3489901818u},  {"b", 1982436109u},  {"", 797982799u},
      {"17", 3854130209u}, {"-5", 2572957386u}, {std::string(70, 'x'), 4152689225u},
  };
  return k;
}

// Arrow layout of `strings`: offsets (int32 or int64) and bytes.
struct arrow_strings {
  std::vector<std::int32_t> off32;
  std::vector<std::int64_t> off64;
  std::vector<unsigned char> bytes;
  explicit arrow_strings(const std::vector<std::string>& strings) {
    off32.push_back(0);
    off64.push_back(0);
    for (const std::string& s : strings) {
      bytes.insert(bytes.end(), s.begin(), s.end());
      off32.push_back(static_cast<std::int32_t>(bytes.size()));
      off64.push_back(static_cast<std::int64_t>(bytes.size()));
    }
  }
  cat::string_column_view view(bool wide) const {
    cat::string_column_view s;
    s.offsets = wide ? static_cast<const void*>(off64.data()) : static_cast<const void*>(off32.data());
    s.offsets64 = wide;
    s.bytes = bytes.data();
    s.byte_count = static_cast<std::int64_t>(bytes.size());
    s.rows = static_cast<std::int64_t>(off32.size()) - 1;
    return s;
  }
};

cbg::column_view host_column(const void* data, cbg::dtype t, std::int64_t n) {
  cbg::column_view c;
  c.data = data;
  c.type = t;
  c.size = n;
  return c;
}

std::string random_string(std::mt19937_64& rng) {
  // Lengths over every CityHash class (0-16, 17-32, 33-64, longer) and non-ASCII bytes.
  static const std::vector<std::string> pieces = {"a", "Z", "7", "\xC3\xA9", "\xE6\x97\xA5", "-", " "};
  const std::size_t len = std::uniform_int_distribution<std::size_t>(0, 3)(rng) == 0
                              ? std::uniform_int_distribution<std::size_t>(17, 200)(rng)
                              : std::uniform_int_distribution<std::size_t>(0, 16)(rng);
  std::string s;
  while (s.size() < len) s += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
  return s;
}

template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const cbg::error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("string columns hash as CatBoost does, with int32 and int64 offsets", "[categorical]") {
  std::vector<std::string> strings;
  for (const known& k : catboost_hashes()) strings.push_back(k.text);
  const arrow_strings a(strings);
  for (const bool wide : {false, true}) {
    std::vector<std::uint32_t> out(strings.size());
    cat::hash_strings_host(a.view(wide), out.data());
    for (std::size_t i = 0; i < strings.size(); ++i) CHECK(out[i] == catboost_hashes()[i].hash);
  }
}

TEST_CASE("integer columns hash as their decimal text", "[categorical]") {
  const std::vector<std::int64_t> v = {17, -5};
  std::vector<std::uint32_t> out(2);
  cat::hash_column_host(host_column(v.data(), cbg::dtype::int64, 2), out.data());
  CHECK(out[0] == 3854130209u);  // "17"
  CHECK(out[1] == 2572957386u);  // "-5"
  const std::vector<std::uint8_t> u = {17};
  cat::hash_column_host(host_column(u.data(), cbg::dtype::uint8, 1), out.data());
  CHECK(out[0] == 3854130209u);
}

TEST_CASE("dictionary columns map codes to the dictionary's hashes; bad codes name the row", "[categorical]") {
  const arrow_strings dict({"a", "b", "17"});
  std::vector<std::uint32_t> dh(3);
  cat::hash_strings_host(dict.view(false), dh.data());
  const std::vector<std::int16_t> codes = {2, 0, 0, 1, 2};
  std::vector<std::uint32_t> out(codes.size());
  cat::map_codes_host(host_column(codes.data(), cbg::dtype::int16, 5), dh.data(), 3, out.data(), "feature 4");
  CHECK(out == std::vector<std::uint32_t>{3854130209u, 3489901818u, 3489901818u, 1982436109u, 3854130209u});

  const std::vector<std::int16_t> bad = {0, 1, -1, 3};
  const std::string msg = error_message([&] {
    cat::map_codes_host(host_column(bad.data(), cbg::dtype::int16, 4), dh.data(), 3, out.data(), "feature 4");
  });
  CHECK(msg.find("feature 4") != std::string::npos);
  CHECK(msg.find("row 2") != std::string::npos);
}

TEST_CASE("malformed offsets are refused naming the row", "[categorical]") {
  arrow_strings a({"ab", "c", "def"});
  a.off32[2] = 1;  // row 1 ends before it starts
  std::vector<std::uint32_t> out(3);
  const std::string msg = error_message([&] { cat::hash_strings_host(a.view(false), out.data(), "feature 9"); });
  CHECK(msg.find("feature 9: row 1") != std::string::npos);
  a.off32[2] = 3;
  a.off32[3] = 99;  // past the bytes
  CHECK(error_message([&] { cat::hash_strings_host(a.view(false), out.data()); }).find("row 2") != std::string::npos);
}

TEST_CASE("Arrow validity bitmaps: the first null row", "[categorical]") {
  const unsigned char bits[2] = {0xff, 0xf7};  // row 11 is null
  CHECK(cat::first_null_host(bits, 0, 16) == 11);
  CHECK(cat::first_null_host(bits, 3, 9) == 8);
  CHECK(cat::first_null_host(bits, 0, 11) == -1);
  CHECK(cat::first_null_host(nullptr, 0, 5) == -1);
}

TEST_CASE("a pool hashes string and dictionary columns once and marks them categorical", "[categorical][data]") {
  std::vector<std::string> strings;
  for (const known& k : catboost_hashes()) strings.push_back(k.text);
  arrow_strings a(strings);
  const std::int64_t n = static_cast<std::int64_t>(strings.size());
  std::vector<float> f(static_cast<std::size_t>(n), 1.5f);
  std::vector<std::int32_t> codes = {5, 4, 3, 2, 1, 0};
  fake_tensor ff(f.data(), cbg::test::dl_float(32), {n});
  fake_tensor off(a.off64.data(), dl_int(64), {n + 1});
  fake_tensor bytes(a.bytes.data(), dl_uint(8), {static_cast<std::int64_t>(a.bytes.size())});
  fake_tensor doff(a.off32.data(), dl_int(32), {n + 1});
  fake_tensor dbytes(a.bytes.data(), dl_uint(8), {static_cast<std::int64_t>(a.bytes.size())});
  fake_tensor dcodes(codes.data(), dl_int(32), {n});
  {
    cbg::pool_inputs in;
    in.columns = {ff.as_versioned(), cbg::tensor_ref{}, cbg::tensor_ref{}};
    cbg::string_column_input s1;
    s1.feature = 1;
    s1.offsets = off.as_versioned();
    s1.bytes = bytes.as_versioned();
    cbg::string_column_input s2;
    s2.feature = 3;  // beyond the columns: the pool grows to 4 features
    s2.offsets = doff.as_versioned();
    s2.bytes = dbytes.as_legacy();
    s2.codes = dcodes.as_versioned();
    in.string_columns = {s1, s2};
    std::vector<std::int64_t> two = {7, 8, 9, 10, 11, 12};
    fake_tensor ints(two.data(), dl_int(64), {n});
    in.columns[2] = ints.as_borrowed();
    in.cat_features = {2};
    const cbg::pool p = cbg::pool::build(make_context(cbg::cpu_device), std::move(in));
    REQUIRE(p.num_features() == 4);
    CHECK(!p.is_categorical(0));
    CHECK(p.is_categorical(1));
    CHECK(p.is_categorical(2));
    CHECK(p.is_categorical(3));
    for (std::int64_t i = 0; i < n; ++i) {
      CHECK(cat::cat_hash_at(p.features()[1], i) == catboost_hashes()[static_cast<std::size_t>(i)].hash);
      CHECK(cat::cat_hash_at(p.features()[3], i) ==
            catboost_hashes()[static_cast<std::size_t>(codes[static_cast<std::size_t>(i)])].hash);
    }
  }
  // Consumed tensors are deleted once, with the pool.
  CHECK(off.deleter_calls == 1);
  CHECK(bytes.deleter_calls == 1);
  CHECK(dbytes.deleter_calls == 1);
  CHECK(dcodes.deleter_calls == 1);
}

TEST_CASE("a pool refuses a feature given twice and a bad dictionary code, deleting tensors once",
          "[categorical][data]") {
  arrow_strings a({"x", "y"});
  std::vector<float> f = {1, 2};
  std::vector<std::int8_t> codes = {0, 5};
  fake_tensor ff(f.data(), cbg::test::dl_float(32), {2});
  fake_tensor off(a.off32.data(), dl_int(32), {3});
  fake_tensor bytes(a.bytes.data(), dl_uint(8), {2});
  fake_tensor c(codes.data(), dl_int(8), {2});
  cbg::pool_inputs in;
  in.columns = {ff.as_borrowed()};
  cbg::string_column_input s;
  s.feature = 0;
  s.offsets = off.as_versioned();
  s.bytes = bytes.as_versioned();
  in.string_columns = {s};
  CHECK(error_message([&] { (void)cbg::pool::build(make_context(cbg::cpu_device), in); }).find("given twice") !=
        std::string::npos);
  CHECK(off.deleter_calls == 1);
  s.feature = 1;
  s.offsets = off.as_borrowed();
  s.bytes = bytes.as_borrowed();
  s.codes = c.as_versioned();
  in.string_columns = {s};
  const std::string msg = error_message([&] { (void)cbg::pool::build(make_context(cbg::cpu_device), in); });
  CHECK(msg.find("feature 1") != std::string::npos);
  CHECK(msg.find("row 1") != std::string::npos);
  CHECK(c.deleter_calls == 1);
}

TEST_CASE("perfect hash: ids in order of first appearance, with counts", "[categorical]") {
  const std::vector<std::uint32_t> h = {50, 7, 50, 9, 7, 7, 1};
  const cat::host_perfect_hash p = cat::perfect_hash_host(h.data(), static_cast<std::int64_t>(h.size()));
  CHECK(p.ids == std::vector<std::uint32_t>{0, 1, 0, 2, 1, 1, 3});
  CHECK(p.keys == std::vector<std::uint32_t>{50, 7, 9, 1});
  CHECK(p.counts == std::vector<std::uint32_t>{2, 3, 1, 1});
  CHECK(cat::perfect_hash_host(h.data(), 0).keys.empty());
}

TEST_CASE("perfect hash equals a naive first-appearance reference on random data", "[categorical]") {
  std::mt19937_64 rng(21);
  for (const std::uint64_t card : {std::uint64_t{2}, std::uint64_t{50}, std::uint64_t{5000}}) {
    std::vector<std::uint32_t> h(20000);
    for (auto& v : h) v = static_cast<std::uint32_t>(rng() % card * 40503u);
    const cat::host_perfect_hash p = cat::perfect_hash_host(h.data(), static_cast<std::int64_t>(h.size()));
    std::vector<std::uint32_t> keys;  // distinct values by first row, found by linear search
    for (const std::uint32_t v : h) {
      if (std::find(keys.begin(), keys.end(), v) == keys.end()) keys.push_back(v);
    }
    REQUIRE(p.keys == keys);
    for (std::size_t i = 0; i < h.size(); ++i) {
      REQUIRE(keys[p.ids[i]] == h[i]);
    }
    for (std::size_t k = 0; k < keys.size(); ++k) {
      CHECK(p.counts[k] == static_cast<std::uint32_t>(std::count(h.begin(), h.end(), keys[k])));
    }
  }
}

TEST_CASE("one-hot or CTR: CatBoost's rule and defaults", "[categorical]") {
  CHECK(cat::choose_encoding(1, 2) == cat::cat_encoding::unused);
  CHECK(cat::choose_encoding(2, 2) == cat::cat_encoding::one_hot);
  CHECK(cat::choose_encoding(3, 2) == cat::cat_encoding::ctr);
  CHECK(cat::choose_encoding(255, 255) == cat::cat_encoding::one_hot);
  CHECK(cat::default_one_hot_max_size(true, false) == 2);
  CHECK(cat::default_one_hot_max_size(false, false) == 255);
  CHECK(cat::default_one_hot_max_size(true, true) == 10);
}

// ---- GPU == host -------------------------------------------------------------------------------

namespace {

template <class T>
cbg::device_buffer<T> upload(const std::vector<T>& v, const cbg::context& ctx) {
  cbg::device_buffer<T> d(std::max<std::size_t>(v.size(), 1), ctx.stream(), ctx.resource());
  if (!v.empty())
    CBG_CUDA_TRY(cudaMemcpyAsync(d.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, ctx.stream()));
  return d;
}

template <class T>
std::vector<T> download(const T* d, std::size_t n, const cbg::context& ctx) {
  std::vector<T> v(n);
  if (n > 0) CBG_CUDA_TRY(cudaMemcpyAsync(v.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, ctx.stream()));
  CBG_CUDA_TRY(cudaStreamSynchronize(ctx.stream()));
  return v;
}

}  // namespace

TEST_CASE("GPU string, integer and dictionary hashing equal the host", "[gpu][categorical]") {
  CBG_REQUIRE_GPU();
  const auto ctx = make_context(0);
  std::mt19937_64 rng(11);
  std::vector<std::string> strings;
  for (int i = 0; i < 20000; ++i) strings.push_back(random_string(rng));
  for (const known& k : catboost_hashes()) strings.push_back(k.text);
  const arrow_strings a(strings);
  const auto n = static_cast<std::int64_t>(strings.size());
  const auto d_off32 = upload(a.off32, *ctx);
  const auto d_off64 = upload(a.off64, *ctx);
  const auto d_bytes = upload(a.bytes, *ctx);
  cbg::device_buffer<std::uint32_t> out(static_cast<std::size_t>(n), ctx->stream(), ctx->resource());
  std::vector<std::uint32_t> host(static_cast<std::size_t>(n));
  cat::hash_strings_host(a.view(false), host.data());
  for (const bool wide : {false, true}) {
    cat::string_column_view s = a.view(wide);
    s.offsets = wide ? static_cast<const void*>(d_off64.data()) : static_cast<const void*>(d_off32.data());
    s.bytes = d_bytes.data();
    s.memory = cbg::memory_kind::device;
    s.device_id = 0;
    cat::hash_strings_device(*ctx, s, out.data());
    CHECK(download(out.data(), static_cast<std::size_t>(n), *ctx) == host);
  }

  // Integers of every width, strided.
  std::vector<std::int64_t> ints(4096);
  for (auto& v : ints) v = static_cast<std::int64_t>(rng()) >> (rng() % 60);
  const auto d_ints = upload(ints, *ctx);
  cbg::column_view c = host_column(ints.data(), cbg::dtype::int64, 2048);
  c.stride = 2;
  std::vector<std::uint32_t> ih(2048);
  cat::hash_column_host(c, ih.data());
  c.data = d_ints.data();
  c.memory = cbg::memory_kind::device;
  c.device_id = 0;
  cat::hash_column_device(*ctx, c, out.data());
  CHECK(download(out.data(), 2048, *ctx) == ih);

  // Dictionary codes, and the first bad code named as on the host.
  std::vector<std::int32_t> codes(50000);
  for (auto& v : codes) v = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(n));
  const auto d_dict = [&] {
    cbg::device_buffer<std::uint32_t> d(static_cast<std::size_t>(n), ctx->stream(), ctx->resource());
    cat::string_column_view s = a.view(false);
    s.offsets = d_off32.data();
    s.bytes = d_bytes.data();
    s.memory = cbg::memory_kind::device;
    cat::hash_strings_device(*ctx, s, d.data());
    return d;
  }();
  std::vector<std::uint32_t> mh(codes.size());
  cat::map_codes_host(host_column(codes.data(), cbg::dtype::int32, 50000), host.data(), n, mh.data());
  const auto d_codes = upload(codes, *ctx);
  cbg::column_view cc = host_column(d_codes.data(), cbg::dtype::int32, 50000);
  cc.memory = cbg::memory_kind::device;
  cc.device_id = 0;
  cbg::device_buffer<std::uint32_t> mout(codes.size(), ctx->stream(), ctx->resource());
  cat::map_codes_device(*ctx, cc, d_dict.data(), n, mout.data());
  CHECK(download(mout.data(), codes.size(), *ctx) == mh);
  codes[40000] = -1;
  codes[45000] = static_cast<std::int32_t>(n);
  const auto d_bad = upload(codes, *ctx);
  cc.data = d_bad.data();
  const std::string msg =
      error_message([&] { cat::map_codes_device(*ctx, cc, d_dict.data(), n, mout.data(), "feature 2"); });
  CHECK(msg.find("feature 2: row 40000") != std::string::npos);
}

TEST_CASE("GPU malformed offsets and nulls name the same row as the host", "[gpu][categorical]") {
  CBG_REQUIRE_GPU();
  const auto ctx = make_context(0);
  arrow_strings a({"ab", "c", "def", "g", "hi"});
  a.off32[4] = 2;  // row 3 is [6, 2): ends before it starts
  const auto d_off = upload(a.off32, *ctx);
  const auto d_bytes = upload(a.bytes, *ctx);
  cat::string_column_view s = a.view(false);
  std::vector<std::uint32_t> host(5);
  const std::string hm = error_message([&] { cat::hash_strings_host(s, host.data(), "f"); });
  s.offsets = d_off.data();
  s.bytes = d_bytes.data();
  s.memory = cbg::memory_kind::device;
  cbg::device_buffer<std::uint32_t> out(5, ctx->stream(), ctx->resource());
  const std::string dm = error_message([&] { cat::hash_strings_device(*ctx, s, out.data(), "f"); });
  CHECK(hm.find("f: row 3") != std::string::npos);
  CHECK(dm.find("f: row 3") != std::string::npos);

  std::vector<unsigned char> bits(1000, 0xff);
  bits[700] = 0xdf;  // bit 5 of byte 700: row 5605 from offset 0
  const auto d_bits = upload(bits, *ctx);
  CHECK(cat::first_null_device(*ctx, d_bits.data(), 0, 8000) == cat::first_null_host(bits.data(), 0, 8000));
  CHECK(cat::first_null_device(*ctx, d_bits.data(), 3, 7000) == 5602);
  CHECK(cat::first_null_device(*ctx, d_bits.data(), 0, 5605) == -1);
}

TEST_CASE("GPU perfect hash equals the host: ids, keys, counts", "[gpu][categorical]") {
  CBG_REQUIRE_GPU();
  const auto ctx = make_context(0);
  std::mt19937_64 rng(5);
  // Up to 2.5M rows, 2.5M distinct values (2^32 values drawn).
  // CBGPU_TEST_SHRINK (support/shrink.hpp) drops 2.5M rows.
  const bool shrink = cbg::test::test_shrink();
  for (const std::int64_t rows : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{300000}, std::int64_t{2500000}}) {
    if (shrink && rows > 300000) continue;
    for (const std::uint64_t card : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{1000}, std::uint64_t{1} << 32}) {
      std::vector<std::uint32_t> h(static_cast<std::size_t>(rows));
      for (auto& v : h) v = static_cast<std::uint32_t>(rng() % card * 2654435761u);
      const cat::host_perfect_hash ref = cat::perfect_hash_host(h.data(), rows);
      const auto d = upload(h, *ctx);
      const cat::device_perfect_hash got = cat::perfect_hash_device(*ctx, d.data(), rows);
      INFO("rows " << rows << " cardinality " << card);
      REQUIRE(got.unique == static_cast<std::int64_t>(ref.keys.size()));
      CHECK(download(got.ids.data(), ref.ids.size(), *ctx) == ref.ids);
      CHECK(download(got.keys.data(), ref.keys.size(), *ctx) == ref.keys);
      CHECK(download(got.counts.data(), ref.counts.size(), *ctx) == ref.counts);
    }
  }
}

TEST_CASE("GPU pool over device string and dictionary columns equals a host pool", "[gpu][categorical][data]") {
  CBG_REQUIRE_GPU();
  const auto ctx = make_context(0);
  std::mt19937_64 rng(8);
  std::vector<std::string> strings;
  for (int i = 0; i < 3000; ++i) strings.push_back(random_string(rng));
  const arrow_strings a(strings);
  const auto n = static_cast<std::int64_t>(strings.size());
  std::vector<std::uint16_t> codes(static_cast<std::size_t>(n));
  for (auto& v : codes) v = static_cast<std::uint16_t>(rng() % static_cast<std::uint64_t>(n));
  const auto d_off = upload(a.off64, *ctx);
  const auto d_bytes = upload(a.bytes, *ctx);
  const auto d_codes = upload(codes, *ctx);
  CBG_CUDA_TRY(cudaStreamSynchronize(ctx->stream()));
  const DLDevice gpu{kDLCUDA, 0};
  fake_tensor off(const_cast<std::int64_t*>(d_off.data()), dl_int(64), {n + 1}, {}, gpu);
  fake_tensor bytes(const_cast<unsigned char*>(d_bytes.data()), dl_uint(8), {static_cast<std::int64_t>(a.bytes.size())},
                    {}, gpu);
  fake_tensor dc(const_cast<std::uint16_t*>(d_codes.data()), dl_uint(16), {n}, {}, gpu);
  cbg::pool_inputs in;
  cbg::string_column_input s0;
  s0.feature = 0;
  s0.offsets = off.as_borrowed();
  s0.bytes = bytes.as_borrowed();
  cbg::string_column_input s1 = s0;
  s1.feature = 1;
  s1.codes = dc.as_borrowed();
  in.string_columns = {s0, s1};
  ctx->copies().reset();
  const cbg::pool p = cbg::pool::build(ctx, std::move(in));
  // No column data comes back to the host: 8 bytes (the first bad row) per hashing kernel.
  CHECK(ctx->copies().totals().bytes_in(cbg::copy_direction::d2h) <= 3 * 8);
  REQUIRE(p.features()[0].memory == cbg::memory_kind::device);
  std::vector<std::uint32_t> host(static_cast<std::size_t>(n));
  cat::hash_strings_host(a.view(true), host.data());
  CHECK(download(static_cast<const std::uint32_t*>(p.features()[0].data), host.size(), *ctx) == host);
  std::vector<std::uint32_t> mapped(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < mapped.size(); ++i) mapped[i] = host[codes[i]];
  CHECK(download(static_cast<const std::uint32_t*>(p.features()[1].data), mapped.size(), *ctx) == mapped);
}
