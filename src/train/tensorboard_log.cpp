// SPDX-License-Identifier: Apache-2.0
#include "cbg/train/tensorboard_log.hpp"

#include <array>
#include <cstdint>
#include <cstring>

namespace cbg::train {

namespace {

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

template <class T>
void put_fixed(std::string& out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));  // little-endian hosts only, as the rest of the library
  out.append(bytes, sizeof(T));
}

void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_varint(out, static_cast<std::uint64_t>(field) << 3 | 2);
  put_varint(out, bytes.size());
  out += bytes;
}

// Event { wall_time = 1 (double); step = 2 (int64); file_version = 3 (string); summary = 5 }.
std::string event(double wall_time, std::int64_t step, const std::string* file_version, const std::string* summary) {
  std::string e;
  e += static_cast<char>(1 << 3 | 1);
  put_fixed(e, wall_time);
  e += static_cast<char>(2 << 3 | 0);
  put_varint(e, static_cast<std::uint64_t>(step));
  if (file_version != nullptr) put_bytes(e, 3, *file_version);
  if (summary != nullptr) put_bytes(e, 5, *summary);
  return e;
}

std::uint32_t masked(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

void put_record(std::string& out, const std::string& data) {
  std::string length;
  put_fixed(length, static_cast<std::uint64_t>(data.size()));
  out += length;
  put_fixed(out, masked(crc32c(length)));
  out += data;
  put_fixed(out, masked(crc32c(data)));
}

}  // namespace

unsigned crc32c(const std::string& data) noexcept {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? 0x82f63b78u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xffffffffu;
  for (const char ch : data) crc = table[(crc ^ static_cast<unsigned char>(ch)) & 0xffu] ^ (crc >> 8);
  return ~crc;
}

std::string tensorboard_events(const tensorboard_scalars& s) {
  std::string out;
  const std::string version = "brain.Event:2";
  put_record(out, event(s.wall_times.empty() ? 0.0 : s.wall_times.front(), 0, &version, nullptr));
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    std::string summary;
    for (std::size_t t = 0; t < s.tags.size(); ++t) {
      // Summary.Value { tag = 1 (string); simple_value = 2 (float) }
      std::string value;
      put_bytes(value, 1, s.tags[t]);
      value += static_cast<char>(2 << 3 | 5);
      put_fixed(value, static_cast<float>(s.values[k][t]));
      put_bytes(summary, 1, value);
    }
    put_record(out, event(k < s.wall_times.size() ? s.wall_times[k] : 0.0, s.steps[k], nullptr, &summary));
  }
  return out;
}

}  // namespace cbg::train
