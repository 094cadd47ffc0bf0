// SPDX-License-Identifier: Apache-2.0
// Device discovery and the scoped device guard.
#pragma once

namespace cbg {

// Number of CUDA devices this process can use; 0 when there is no GPU or no driver. Never throws.
int visible_device_count() noexcept;

// Makes `device` current for the scope and restores the caller's device afterwards, so library calls
// never leave the caller's thread on another device. A negative device (the CPU path) does nothing.
class scoped_device {
 public:
  explicit scoped_device(int device);
  ~scoped_device();
  scoped_device(const scoped_device&) = delete;
  scoped_device& operator=(const scoped_device&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace cbg
