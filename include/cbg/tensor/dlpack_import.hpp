// SPDX-License-Identifier: Apache-2.0
// Importing DLPack tensors: ownership (deleter exactly once) and validation into a tensor_view.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cbg/tensor/tensor_view.hpp"

struct DLManagedTensorVersioned;
struct DLManagedTensor;

namespace cbg {

// How a tensor crosses the ABI (mirrors CBG_TENSOR_*).
enum class tensor_ref_kind : std::int32_t { none = 0, dlpack_versioned = 1, dlpack_legacy = 2, dltensor = 3 };

struct tensor_ref {
  tensor_ref_kind kind = tensor_ref_kind::none;
  void* ptr = nullptr;
};

// Owns one consumed DLPack tensor and calls its deleter exactly once: on destruction, unless
// release() was called. Borrowed tensors (dltensor) and empty refs own nothing.
class dlpack_owner {
 public:
  dlpack_owner() = default;
  // Takes ownership when `ref` is a consumed kind (whatever its contents: even an unsupported version).
  explicit dlpack_owner(const tensor_ref& ref) noexcept;
  ~dlpack_owner() { reset(); }
  dlpack_owner(dlpack_owner&& other) noexcept;
  dlpack_owner& operator=(dlpack_owner&& other) noexcept;
  dlpack_owner(const dlpack_owner&) = delete;
  dlpack_owner& operator=(const dlpack_owner&) = delete;

  // Calls the deleter now (once).
  void reset() noexcept;
  // Gives ownership back without calling the deleter.
  void release() noexcept;
  [[nodiscard]] bool owns() const noexcept { return versioned_ != nullptr || legacy_ != nullptr; }

 private:
  DLManagedTensorVersioned* versioned_ = nullptr;
  DLManagedTensor* legacy_ = nullptr;
};

// What the importing call accepts.
struct import_rules {
  std::string_view role;  // "features", "label", ... (names the tensor in messages)
  int min_rank = 0;
  int max_rank = max_tensor_rank;
  bool writable = false;    // refuse read-only tensors (outputs)
  int context_device = -1;  // CUDA ordinal of the context, or -1: a CPU context (host memory only)
};

// Validates the tensor behind `ref` (version first, then device, dtype, rank, shape, strides,
// offset, alignment) and returns its view. Does not take ownership: pair it with a dlpack_owner made
// before the call, so the deleter also runs when this throws.
// Throws cbg::error with dlpack_version, device, dtype, shape, read_only, null_pointer or
// invalid_argument.
tensor_view import_tensor(const tensor_ref& ref, const import_rules& rules);

// The same, for a tensor the library writes into.
mutable_tensor_view import_mutable_tensor(const tensor_ref& ref, const import_rules& rules);

}  // namespace cbg
