// SPDX-License-Identifier: Apache-2.0
// CatBoost's categorical hash and CTR projection hash (catboost-model-format.md §4, §5.1), as
// __host__ __device__ inline functions: the host evaluator and future kernels share them.
//
// The categorical hash is the low 32 bits of CityHash64 *version 1.0.x* (Pike & Alakuijala, 2011)
// over the UTF-8 bytes of the value; integers are hashed as their decimal text. This is our own
// implementation of the published v1.0 algorithm; it is checked against CatBoost's own hashes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cbg/config.hpp"

namespace cbg::model {

namespace city_detail {

inline constexpr std::uint64_t k0 = 0xc3a5c85c97cb3127ULL;
inline constexpr std::uint64_t k1 = 0xb492b66fbe98f273ULL;
inline constexpr std::uint64_t k2 = 0x9ae16a3b2f90404fULL;
inline constexpr std::uint64_t k3 = 0xc949d7c7509e6557ULL;
inline constexpr std::uint64_t kmul = 0x9ddfea08eb382d69ULL;

CBG_HOST_DEVICE inline std::uint64_t load64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];  // little-endian on every host
  return v;
}
CBG_HOST_DEVICE inline std::uint64_t load32(const unsigned char* p) {
  return std::uint64_t{p[0]} | (std::uint64_t{p[1]} << 8) | (std::uint64_t{p[2]} << 16) | (std::uint64_t{p[3]} << 24);
}
// Right rotation; shift 0 leaves the value.
CBG_HOST_DEVICE inline std::uint64_t rotr(std::uint64_t v, int s) { return s == 0 ? v : ((v >> s) | (v << (64 - s))); }
CBG_HOST_DEVICE inline std::uint64_t shift_mix(std::uint64_t v) { return v ^ (v >> 47); }
CBG_HOST_DEVICE inline std::uint64_t hash16(std::uint64_t u, std::uint64_t v) {
  std::uint64_t a = (u ^ v) * kmul;
  a ^= (a >> 47);
  std::uint64_t b = (v ^ a) * kmul;
  b ^= (b >> 47);
  return b * kmul;
}

struct pair64 {
  std::uint64_t first, second;
};
CBG_HOST_DEVICE inline pair64 weak32(std::uint64_t w, std::uint64_t x, std::uint64_t y, std::uint64_t z,
                                     std::uint64_t a, std::uint64_t b) {
  a += w;
  b = rotr(b + a + z, 21);
  const std::uint64_t c = a;
  a += x;
  a += y;
  b += rotr(a, 44);
  return {a + z, b + c};
}
CBG_HOST_DEVICE inline pair64 weak32(const unsigned char* s, std::uint64_t a, std::uint64_t b) {
  return weak32(load64(s), load64(s + 8), load64(s + 16), load64(s + 24), a, b);
}

CBG_HOST_DEVICE inline std::uint64_t len0to16(const unsigned char* s, std::size_t len) {
  if (len > 8) {
    const std::uint64_t a = load64(s);
    const std::uint64_t b = load64(s + len - 8);
    const int r = static_cast<int>(len);  // 9..16: never 0, so the rotation is well defined
    return hash16(a, rotr(b + len, r)) ^ b;
  }
  if (len >= 4) {
    const std::uint64_t a = load32(s);
    return hash16(len + (a << 3), load32(s + len - 4));
  }
  if (len > 0) {
    const std::uint32_t a = s[0], b = s[len >> 1], c = s[len - 1];
    const std::uint32_t y = a + (b << 8);
    const std::uint32_t z = static_cast<std::uint32_t>(len) + (c << 2);
    return shift_mix(y * k2 ^ z * k3) * k2;
  }
  return k2;
}

CBG_HOST_DEVICE inline std::uint64_t len17to32(const unsigned char* s, std::size_t len) {
  const std::uint64_t a = load64(s) * k1;
  const std::uint64_t b = load64(s + 8);
  const std::uint64_t c = load64(s + len - 8) * k2;
  const std::uint64_t d = load64(s + len - 16) * k0;
  return hash16(rotr(a - b, 43) + rotr(c, 30) + d, a + rotr(b ^ k3, 20) - c + len);
}

CBG_HOST_DEVICE inline std::uint64_t len33to64(const unsigned char* s, std::size_t len) {
  std::uint64_t z = load64(s + 24);
  std::uint64_t a = load64(s) + (len + load64(s + len - 16)) * k0;
  std::uint64_t b = rotr(a + z, 52);
  std::uint64_t c = rotr(a, 37);
  a += load64(s + 8);
  c += rotr(a, 7);
  a += load64(s + 16);
  const std::uint64_t vf = a + z;
  const std::uint64_t vs = b + rotr(a, 31) + c;
  a = load64(s + 16) + load64(s + len - 32);
  z = load64(s + len - 8);
  b = rotr(a + z, 52);
  c = rotr(a, 37);
  a += load64(s + len - 24);
  c += rotr(a, 7);
  a += load64(s + len - 16);
  const std::uint64_t wf = a + z;
  const std::uint64_t ws = b + rotr(a, 31) + c;
  const std::uint64_t r = shift_mix((vf + ws) * k2 + (wf + vs) * k0);
  return shift_mix(r * k0 + vs) * k2;
}

}  // namespace city_detail

// CityHash64 v1.0.x of `len` bytes.
CBG_HOST_DEVICE inline std::uint64_t city_hash64(const void* data, std::size_t len) {
  using namespace city_detail;
  const auto* s = static_cast<const unsigned char*>(data);
  if (len <= 32) return len <= 16 ? len0to16(s, len) : len17to32(s, len);
  if (len <= 64) return len33to64(s, len);
  std::uint64_t x = load64(s);
  std::uint64_t y = load64(s + len - 16) ^ k1;
  std::uint64_t z = load64(s + len - 56) ^ k0;
  pair64 v = weak32(s + len - 64, len, y);
  pair64 w = weak32(s + len - 32, len * k1, k0);
  z += shift_mix(v.second) * k1;
  x = rotr(z + x, 39) * k1;
  y = rotr(y, 33) * k1;
  std::size_t left = (len - 1) & ~static_cast<std::size_t>(63);
  do {
    x = rotr(x + y + v.first + load64(s + 16), 37) * k1;
    y = rotr(y + v.second + load64(s + 48), 42) * k1;
    x ^= w.second;
    y ^= v.first;
    z = rotr(z ^ w.first, 33);
    v = weak32(s, v.second * k1, x + w.first);
    w = weak32(s + 32, z + w.second, y);
    const std::uint64_t t = z;
    z = x;
    x = t;
    s += 64;
    left -= 64;
  } while (left != 0);
  return hash16(hash16(v.first, w.first) + shift_mix(y) * k1 + z, hash16(v.second, w.second) + x);
}

// CatBoost's categorical value hash: the low 32 bits of CityHash64 of the UTF-8 bytes.
CBG_HOST_DEVICE inline std::uint32_t cat_hash(const void* utf8, std::size_t len) {
  return static_cast<std::uint32_t>(city_hash64(utf8, len) & 0xFFFFFFFFULL);
}

// The hash of the decimal text of `magnitude`, with a leading '-' when `negative`.
CBG_HOST_DEVICE inline std::uint32_t cat_hash_decimal(std::uint64_t magnitude, bool negative) {
  char buf[24];
  int n = 0;
  char rev[24];
  int r = 0;
  do {
    rev[r++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  if (negative) buf[n++] = '-';
  while (r > 0) buf[n++] = rev[--r];
  return cat_hash(buf, static_cast<std::size_t>(n));
}

// The hash of an integer categorical value: its decimal text ("-5", "17"), as CatBoost's Python
// package hashes ints.
CBG_HOST_DEVICE inline std::uint32_t cat_hash_int(std::int64_t value) {
  // magnitude as unsigned so INT64_MIN works
  const std::uint64_t mag = value < 0 ? ~static_cast<std::uint64_t>(value) + 1 : static_cast<std::uint64_t>(value);
  return cat_hash_decimal(mag, value < 0);
}

// The hash of an unsigned integer categorical value (numpy's uint64 is hashed as its decimal text too).
CBG_HOST_DEVICE inline std::uint32_t cat_hash_uint(std::uint64_t value) { return cat_hash_decimal(value, false); }

// CTR projection hashing (ctr_provider.h CalcHash): h = M * (h + M * v) mod 2^64.
inline constexpr std::uint64_t projection_magic = 0x4906ba494954cb65ULL;
CBG_HOST_DEVICE inline std::uint64_t projection_step(std::uint64_t h, std::uint64_t v) {
  return projection_magic * (h + projection_magic * v);
}
// Folds one categorical hash: the 32-bit hash is sign-extended to 64 bits.
CBG_HOST_DEVICE inline std::uint64_t projection_add_cat(std::uint64_t h, std::uint32_t cat) {
  const auto widened = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(cat)));
  return projection_step(h, widened);
}
// Folds one binary condition (float split or one-hot split of the projection).
CBG_HOST_DEVICE inline std::uint64_t projection_add_bit(std::uint64_t h, bool cond) {
  return projection_step(h, cond ? 1u : 0u);
}

}  // namespace cbg::model
