// SPDX-License-Identifier: Apache-2.0
// The TensorBoard events file of the train dir: CRC-32C as TFRecord needs it, and the record framing.
#include "support/catch.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "cbg/train/tensorboard_log.hpp"

using cbg::train::crc32c;
using cbg::train::tensorboard_events;
using cbg::train::tensorboard_scalars;

TEST_CASE("crc32c is CRC-32C (Castagnoli)", "[train][tensorboard]") {
  CHECK(crc32c("123456789") == 0xE3069283u);  // the standard check value
  CHECK(crc32c("") == 0u);
}

TEST_CASE("tensorboard_events frames one record per step after the version record", "[train][tensorboard]") {
  tensorboard_scalars s;
  s.tags = {"Logloss", "AUC"};
  s.steps = {0, 1, 2};
  s.values = {{0.7, 0.5}, {0.6, 0.6}, {0.5, 0.7}};
  s.wall_times = {1.0, 2.0, 3.0};
  const std::string bytes = tensorboard_events(s);
  const auto masked = [](std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; };
  std::size_t pos = 0;
  int records = 0;
  while (pos < bytes.size()) {
    std::uint64_t n = 0;
    std::uint32_t length_crc = 0, data_crc = 0;
    std::memcpy(&n, bytes.data() + pos, 8);
    std::memcpy(&length_crc, bytes.data() + pos + 8, 4);
    CHECK(length_crc == masked(crc32c(bytes.substr(pos, 8))));
    const std::string data = bytes.substr(pos + 12, n);
    std::memcpy(&data_crc, bytes.data() + pos + 12 + n, 4);
    CHECK(data_crc == masked(crc32c(data)));
    if (records == 0) CHECK(data.find("brain.Event:2") != std::string::npos);
    if (records > 0) CHECK((data.find("Logloss") != std::string::npos && data.find("AUC") != std::string::npos));
    pos += 16 + n;
    ++records;
  }
  CHECK(pos == bytes.size());
  CHECK(records == 4);
}
