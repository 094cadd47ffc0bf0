// SPDX-License-Identifier: Apache-2.0
// The TensorBoard event files CatBoost writes into its train dir (learn/events.out.tfevents,
// test/events.out.tfevents): TFRecord framing (length, masked CRC-32C) around serialized Event
// protocol buffers, one per logged iteration with a scalar summary per metric. TensorBoard and
// CatBoost's own tools read them.
#pragma once

#include <string>
#include <vector>

namespace cbg::train {

struct tensorboard_scalars {
  std::vector<std::string> tags;            // metric names
  std::vector<int> steps;                   // logged iterations
  std::vector<std::vector<double>> values;  // [step][tag]
  std::vector<double> wall_times;           // seconds since the epoch, per step
};

// The bytes of an events file holding `scalars`.
std::string tensorboard_events(const tensorboard_scalars& scalars);

// CRC-32C (Castagnoli) of `data`, as TFRecord uses it before masking.
unsigned crc32c(const std::string& data) noexcept;

}  // namespace cbg::train
