// SPDX-License-Identifier: Apache-2.0
// Byte slots: how the GPU evaluator tests binary features (the layout is explained in
// device_model.hpp). Per-element functions shared by the kernels and the host tests that check
// the encoding against the host evaluator.
#pragma once

#include <cstdint>

#include "cbg/config.hpp"

namespace cbg::apply {

inline constexpr std::uint32_t slot_capacity = 127;
inline constexpr std::uint32_t max_slots = 1u << 16;
// A threshold that no slot byte reaches (pads trees shallower than the deepest of a chunk).
inline constexpr std::uint32_t never_true_threshold = 128;

[[nodiscard]] constexpr std::uint32_t slots_for(std::uint32_t conditions) noexcept {
  return (conditions + slot_capacity - 1) / slot_capacity;
}
[[nodiscard]] constexpr std::uint32_t pack_split(std::uint32_t slot, std::uint32_t x, std::uint32_t t) noexcept {
  return slot | (x << 16) | (t << 24);
}

// Byte of slot g of a float or CTR feature whose value is greater than `count` of its borders.
CBG_HOST_DEVICE inline std::uint32_t counted_slot_byte(std::uint32_t count, std::uint32_t g) {
  const std::uint32_t base = g * slot_capacity;
  const std::uint32_t above = count <= base ? 0u : count - base;
  return above < slot_capacity ? above : slot_capacity;
}

// Byte of slot g of a one-hot feature whose matching value has position `k` (-1: none).
CBG_HOST_DEVICE inline std::uint32_t one_hot_slot_byte(std::int32_t k, std::uint32_t g) {
  if (k < 0 || static_cast<std::uint32_t>(k) / slot_capacity != g) return 0;
  return static_cast<std::uint32_t>(k) % slot_capacity + 1;
}

// A packed split, decoded: its slot, and the xor mask and threshold in every byte of a word.
struct decoded_split {
  std::uint32_t slot;
  std::uint32_t x4;
  std::uint32_t t4;
};
CBG_HOST_DEVICE inline decoded_split decode_split(std::uint32_t packed) {
  return {packed & 0xffffu, ((packed >> 16) & 0xffu) * 0x01010101u, (packed >> 24) * 0x01010101u};
}
CBG_HOST_DEVICE constexpr decoded_split never_true_split() { return {0, 0, never_true_threshold * 0x01010101u}; }

// The split's condition for the four rows whose slot bytes are the bytes of `word`: 1 in each
// byte whose row satisfies (byte ^ x) >= t. Every byte is <= 127 and x, t <= 127 (t <= 128), so
// (0x80 | v) - t never borrows from the next byte, and bit 7 of the difference is v >= t.
CBG_HOST_DEVICE inline std::uint32_t split_bits4(std::uint32_t word, std::uint32_t x4, std::uint32_t t4) {
  const std::uint32_t r = ((word ^ x4) | 0x80808080u) - t4;
  return (r >> 7) & 0x01010101u;
}

}  // namespace cbg::apply
