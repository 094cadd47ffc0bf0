// SPDX-License-Identifier: Apache-2.0
#include "managed_tensor.hpp"

#include <atomic>
#include <utility>

namespace cbgpu_bench {

namespace {

std::atomic<uint64_t> given{0};
std::atomic<uint64_t> released_by_library{0};

// What the deleter frees: the data's owner and the shape/strides arrays the DLTensor points to.
struct holder {
  std::shared_ptr<void> owner;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  bool given = false;
};

void delete_tensor(dl::DLManagedTensorVersioned* self) {
  auto* h = static_cast<holder*>(self->manager_ctx);
  if (h->given) released_by_library.fetch_add(1);
  delete h;  // drops the data (a host vector, or device memory through cudaFree)
  delete self;
}

}  // namespace

managed_tensor managed_tensor::wrap(std::shared_ptr<void> owner, void* data, dl::DLDevice device, dl::DLDataType dtype,
                                    std::vector<int64_t> shape, std::vector<int64_t> strides) {
  auto h = std::make_unique<holder>();
  h->owner = std::move(owner);
  h->shape = std::move(shape);
  h->strides = std::move(strides);
  auto t = std::make_unique<dl::DLManagedTensorVersioned>();
  t->version = {dl::version_major, dl::version_minor};
  t->flags = 0;
  t->dl_tensor.data = data;
  t->dl_tensor.device = device;
  t->dl_tensor.ndim = static_cast<int32_t>(h->shape.size());
  t->dl_tensor.dtype = dtype;
  t->dl_tensor.shape = h->shape.data();
  t->dl_tensor.strides = h->strides.empty() ? nullptr : h->strides.data();
  t->dl_tensor.byte_offset = 0;
  t->deleter = delete_tensor;
  t->manager_ctx = h.release();
  return managed_tensor(t.release());
}

managed_tensor::managed_tensor(managed_tensor&& other) noexcept : tensor_(std::exchange(other.tensor_, nullptr)) {}

managed_tensor& managed_tensor::operator=(managed_tensor&& other) noexcept {
  if (this != &other) {
    if (tensor_ != nullptr) tensor_->deleter(tensor_);
    tensor_ = std::exchange(other.tensor_, nullptr);
  }
  return *this;
}

managed_tensor::~managed_tensor() {
  if (tensor_ != nullptr) tensor_->deleter(tensor_);
}

cbg_tensor_ref_t managed_tensor::borrow() const noexcept {
  return cbg_tensor_ref_t{CBG_TENSOR_DLPACK_VERSIONED, tensor_};
}

cbg_tensor_ref_t managed_tensor::give() noexcept {
  if (tensor_ == nullptr) return cbg_tensor_ref_t{CBG_TENSOR_NONE, nullptr};
  static_cast<holder*>(tensor_->manager_ctx)->given = true;
  given.fetch_add(1);
  return cbg_tensor_ref_t{CBG_TENSOR_DLPACK_VERSIONED, std::exchange(tensor_, nullptr)};
}

uint64_t managed_tensor::given_count() noexcept { return given.load(); }
uint64_t managed_tensor::released_by_library_count() noexcept { return released_by_library.load(); }

}  // namespace cbgpu_bench
