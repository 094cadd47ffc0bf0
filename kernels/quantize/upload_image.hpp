// SPDX-License-Identifier: Apache-2.0
// A byte image built on the host and uploaded in one copy (the quantizers' settings, column views
// and tables): parts at 256-byte aligned offsets, found again on the device with at<T>.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

namespace cbg::quantize::detail {

class upload_image {
 public:
  explicit upload_image(std::size_t capacity) { bytes_.reserve(capacity); }
  template <class T>
  std::size_t add(const T* data, std::size_t count) {
    const std::size_t at = (bytes_.size() + 255) / 256 * 256;
    bytes_.resize(at + count * sizeof(T));
    if (count != 0) std::memcpy(bytes_.data() + at, data, count * sizeof(T));
    return at;
  }
  template <class T>
  std::size_t add(const std::vector<T>& v) {
    return add(v.data(), v.size());
  }
  [[nodiscard]] const std::vector<unsigned char>& bytes() const noexcept { return bytes_; }

 private:
  std::vector<unsigned char> bytes_;
};

template <class T>
T* at(unsigned char* base, std::size_t offset) {
  return reinterpret_cast<T*>(base + offset);
}

}  // namespace cbg::quantize::detail
