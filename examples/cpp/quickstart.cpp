// SPDX-License-Identifier: Apache-2.0
// quickstart.cpp: cbgpu from C++, through the stable C ABI with small RAII wrappers.
//
// Why the C ABI and not the header-first core (include/cbg/): the installed package ships only the
// C headers and libcbgpu.so. The core's C++ headers promise no ABI stability and need the CUDA
// toolkit, CCCL, fmt and spdlog at the versions the library was built with; they are for code built
// inside this repository. A C++ program that links an installed libcbgpu uses cbgpu.h, as here:
// unique_ptr owners for the handles, an exception that carries the status and cbg_last_error(),
// and a lambda as the training progress callback.
//
// Steps: a context on the host reference path, a pool over std::vector data handed
// over as DLPack tensors, training with a progress callback that stops early once the learn loss is
// low enough, predictions into a std::vector (cbg_predict_to_host), the model saved to a buffer and
// loaded back, and one refused parameter reported with the library's message.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cbgpu/cbgpu.h>
#include <cbgpu/cbgpu_dlpack.h>

namespace {

// ---- errors and handles ---------------------------------------------------------------------------

struct cbg_exception : std::runtime_error {
  cbg_status status;
  cbg_exception(cbg_status s, const std::string& what)
      : std::runtime_error(what + ": " + cbg_status_string(s) + ": " + cbg_last_error()), status(s) {}
};

void check(cbg_status s, const char* what) {
  if (s != CBG_OK) throw cbg_exception(s, what);
}

struct free_context {
  void operator()(cbg_context_t* p) const { (void)cbg_context_free(p); }
};
struct free_pool {
  void operator()(cbg_pool_t* p) const { (void)cbg_pool_free(p); }
};
struct free_model {
  void operator()(cbg_model_t* p) const { (void)cbg_model_free(p); }
};
using context = std::unique_ptr<cbg_context_t, free_context>;
using pool = std::unique_ptr<cbg_pool_t, free_pool>;
using model = std::unique_ptr<cbg_model_t, free_model>;

// ---- a DLPack tensor over a std::vector the tensor takes (the library calls the deleter) -------------

struct owned_vector {
  std::vector<float> values;
  std::vector<int64_t> shape;
};

DLManagedTensorVersioned* to_dlpack(std::vector<float> values, std::vector<int64_t> shape) {
  auto* t = new DLManagedTensorVersioned{};
  auto* owner = new owned_vector{std::move(values), std::move(shape)};
  t->version = {1, 1};
  t->manager_ctx = owner;
  t->deleter = [](DLManagedTensorVersioned* self) {
    delete static_cast<owned_vector*>(self->manager_ctx);
    delete self;
  };
  t->dl_tensor.data = owner->values.data();
  t->dl_tensor.device = {kDLCPU, 0};
  t->dl_tensor.ndim = static_cast<int32_t>(owner->shape.size());
  t->dl_tensor.dtype = {static_cast<uint8_t>(kDLFloat), 32, 1};
  t->dl_tensor.shape = owner->shape.data();
  return t;
}

pool make_pool(cbg_context_t* ctx, std::vector<float> x, std::vector<float> y, int64_t rows, int64_t cols) {
  cbg_pool_desc_t d;
  check(cbg_pool_desc_init(&d), "cbg_pool_desc_init");
  d.features = {CBG_TENSOR_DLPACK_VERSIONED, to_dlpack(std::move(x), {rows, cols})};
  d.label = {CBG_TENSOR_DLPACK_VERSIONED, to_dlpack(std::move(y), {rows})};
  cbg_pool_t* p = nullptr;
  check(cbg_pool_from_dlpack(ctx, &d, &p), "cbg_pool_from_dlpack");  // consumes both, even on failure
  return pool(p);
}

// ---- training with a C++ callback ------------------------------------------------------------------

using progress_fn = std::function<bool(const cbg_train_progress_t&)>;  // false: stop

model train(cbg_pool_t* learn, const std::string& params, progress_fn on_progress) {
  cbg_train_callbacks_t cb;
  check(cbg_train_callbacks_init(&cb), "cbg_train_callbacks_init");
  cb.user_data = &on_progress;
  cb.on_iteration = [](void* user, const cbg_train_progress_t* p) -> int32_t {
    return (*static_cast<progress_fn*>(user))(*p) ? 0 : 1;  // no exception may cross the C ABI
  };
  cbg_model_t* m = nullptr;
  check(cbg_train(learn, params.c_str(), nullptr, &cb, &m), "cbg_train");
  return model(m);
}

}  // namespace

int main() try {
  constexpr int64_t rows = 1000, cols = 3;
  std::vector<float> x(rows * cols), y(rows);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) x[i * cols + j] = static_cast<float>((i * (j + 3) * 37) % 101) / 50.0f - 1.0f;
    y[i] = 2.0f * x[i * cols] - x[i * cols + 2];
  }
  const std::vector<float> host_x = x;  // kept for the host evaluator below

  cbg_context_desc_t cd;
  check(cbg_context_desc_init(&cd), "cbg_context_desc_init");
  // The host reference path (the GPU trainer also takes this pageable std::vector data, staging it to
  // the device; examples/c/train_and_predict.c shows the zero-copy GPU path with cudaMalloc'ed buffers).
  cd.device = CBG_DEVICE_CPU;
  cbg_context_t* raw_ctx = nullptr;
  check(cbg_context_create(&cd, &raw_ctx), "cbg_context_create");
  const context ctx(raw_ctx);
  int32_t device = 0;
  check(cbg_context_device(ctx.get(), &device), "cbg_context_device");
  std::printf("libcbgpu %s on %s\n", cbg_version_string(), device >= 0 ? "a GPU" : "the host");

  const pool learn = make_pool(ctx.get(), std::move(x), std::move(y), rows, cols);
  int iterations = 0;
  const model m = train(learn.get(), R"({"loss_function": "RMSE", "iterations": 200, "depth": 4})",
                        [&](const cbg_train_progress_t& p) {
                          iterations = static_cast<int>(p.iteration) + 1;
                          return !(p.has_learn_metric && p.learn_metric < 0.05);  // good enough: stop
                        });
  cbg_model_info_t info{};
  info.struct_size = sizeof(info);
  check(cbg_model_info(m.get(), &info), "cbg_model_info");
  std::printf("trained %d iterations, %lld trees\n", iterations, static_cast<long long>(info.n_trees));

  // Predictions into host memory (on a GPU context they would be computed there and copied back once).
  cbg_predict_desc_t pd;
  check(cbg_predict_desc_init(&pd), "cbg_predict_desc_init");
  int64_t shape[2] = {0, 0};
  check(cbg_predict_output_shape(m.get(), &pd, rows, shape), "cbg_predict_output_shape");
  std::vector<double> predictions(static_cast<std::size_t>(shape[0] * shape[1]));
  DLTensor out{};
  out.data = predictions.data();
  out.device = {kDLCPU, 0};
  out.ndim = 2;
  out.dtype = {static_cast<uint8_t>(kDLFloat), 64, 1};
  out.shape = shape;
  const cbg_tensor_ref_t out_ref{CBG_TENSOR_DLTENSOR, &out};
  check(cbg_predict_to_host(m.get(), learn.get(), &pd, &out_ref, nullptr), "cbg_predict_to_host");

  // The model through a .cbm buffer and back gives the same predictions (host evaluator).
  const void* bytes = nullptr;
  size_t size = 0;
  check(cbg_model_save_buffer(m.get(), CBG_MODEL_FORMAT_CBM, &bytes, &size), "cbg_model_save_buffer");
  const std::vector<unsigned char> file(static_cast<const unsigned char*>(bytes),
                                        static_cast<const unsigned char*>(bytes) + size);
  cbg_model_t* raw_loaded = nullptr;
  check(cbg_model_load_buffer(file.data(), file.size(), CBG_MODEL_FORMAT_CBM, &raw_loaded), "cbg_model_load_buffer");
  const model loaded(raw_loaded);
  cbg_model_predict_host_desc_t hd;
  check(cbg_model_predict_host_desc_init(&hd), "cbg_model_predict_host_desc_init");
  hd.n_rows = rows;
  hd.float_features = host_x.data();
  hd.float_row_stride = cols;
  std::vector<double> again(predictions.size());
  check(cbg_model_predict_host(loaded.get(), &hd, again.data(), again.size()), "cbg_model_predict_host");
  if (std::memcmp(again.data(), predictions.data(), again.size() * sizeof(double)) != 0) {
    std::fprintf(stderr, "the reloaded model predicts differently\n");
    return 1;
  }
  std::printf("model: %zu bytes; predictions %.4f %.4f %.4f ... (targets %.4f %.4f %.4f)\n", size, predictions[0],
              predictions[1], predictions[2], 2.0 * host_x[0] - host_x[2], 2.0 * host_x[3] - host_x[5],
              2.0 * host_x[6] - host_x[8]);

  // Errors are values with a message: an unknown parameter is refused by name.
  try {
    (void)train(learn.get(), R"({"no_such_parameter": 1})", [](const cbg_train_progress_t&) { return true; });
    std::fprintf(stderr, "an unknown parameter was accepted\n");
    return 1;
  } catch (const cbg_exception& e) {
    std::printf("refused as expected: %s\n", e.what());
  }
  std::printf("OK\n");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
