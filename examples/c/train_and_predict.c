/* SPDX-License-Identifier: Apache-2.0 */
/* train_and_predict.c: train a model and predict with it through the C ABI, end to end.
 *
 * Two parts, the same steps each:
 *  - host: a context on the CPU (the host reference path), pools over malloc'ed arrays, cbg_train,
 *    predictions into a host buffer (cbg_predict_to_host);
 *  - device (when a GPU is visible and the example was built with the CUDA toolkit): a context on
 *    GPU 0, the arrays copied once into cudaMalloc buffers and handed over as DLPack tensors whose
 *    deleter calls cudaFree, cbg_train on the GPU, predictions into a caller-allocated device buffer
 *    (cbg_predict_output_shape, then cbg_predict_to_device on the context's stream, no host copy by
 *    the library), copied back here only to print them.
 * Both parts check their predictions against the host evaluator over the same rows
 * (cbg_model_predict_host: RawFormulaVal bit for bit) and that every deleter ran exactly once.
 *
 * Usage: train_and_predict [--gpu]   (--gpu: the device part is required; exit 77 without a GPU)
 * Exit codes: 0 success, 1 failure, 77 "--gpu" but no usable GPU. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cbgpu/cbgpu.h>
#include <cbgpu/cbgpu_dlpack.h>

#ifdef CBG_EXAMPLE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

enum { ROWS = 2000, COLS = 4, SHOWN = 3 };

static const char* const params =
    "{\"loss_function\": \"Logloss\", \"iterations\": 40, \"depth\": 4, \"learning_rate\": 0.2}";

/* Returns 1 on CBG_OK; otherwise prints the status and the library's message and returns 0. */
static int ok(cbg_status status, const char* what) {
  if (status == CBG_OK) return 1;
  fprintf(stderr, "%s failed: %s: %s\n", what, cbg_status_string(status), cbg_last_error());
  return 0;
}

/* ---- tensors the library consumes: host (malloc) or device (cudaMalloc) memory ------------------ */

typedef struct {
  void* data;
  int on_device;
  int64_t shape[2];
  int* deleter_calls;
} owner_t;

static void delete_tensor(DLManagedTensorVersioned* self) {
  owner_t* owner = (owner_t*)self->manager_ctx;
  ++*owner->deleter_calls;
#ifdef CBG_EXAMPLE_HAVE_CUDA
  if (owner->on_device) {
    (void)cudaFree(owner->data);
  } else {
    free(owner->data);
  }
#else
  free(owner->data);
#endif
  free(owner);
  free(self);
}

/* A float32 tensor [d0] (d1 == 0) or [d0, d1] holding a copy of `values`, on the host (device < 0)
 * or in device memory of `device`. NULL when an allocation or the copy fails. */
static DLManagedTensorVersioned* make_tensor(const float* values, int64_t d0, int64_t d1, int32_t device,
                                             int* deleter_calls) {
  const size_t bytes = sizeof(float) * (size_t)d0 * (size_t)(d1 > 0 ? d1 : 1);
  DLManagedTensorVersioned* t = (DLManagedTensorVersioned*)calloc(1, sizeof(*t));
  owner_t* owner = (owner_t*)calloc(1, sizeof(*owner));
  void* data = NULL;
  if (t == NULL || owner == NULL) goto fail;
  if (device < 0) {
    data = malloc(bytes);
    if (data == NULL) goto fail;
    memcpy(data, values, bytes);
  } else {
#ifdef CBG_EXAMPLE_HAVE_CUDA
    if (cudaSetDevice(device) != cudaSuccess || cudaMalloc(&data, bytes) != cudaSuccess) goto fail;
    if (cudaMemcpy(data, values, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
      (void)cudaFree(data);
      goto fail;
    }
#else
    goto fail;
#endif
  }
  owner->data = data;
  owner->on_device = device >= 0;
  owner->shape[0] = d0;
  owner->shape[1] = d1;
  owner->deleter_calls = deleter_calls;
  t->version.major = 1;
  t->version.minor = 1;
  t->manager_ctx = owner;
  t->deleter = delete_tensor;
  t->dl_tensor.data = data;
  t->dl_tensor.device.device_type = device < 0 ? kDLCPU : kDLCUDA;
  t->dl_tensor.device.device_id = device < 0 ? 0 : device;
  t->dl_tensor.ndim = d1 > 0 ? 2 : 1;
  t->dl_tensor.dtype.code = (uint8_t)kDLFloat;
  t->dl_tensor.dtype.bits = 32;
  t->dl_tensor.dtype.lanes = 1;
  t->dl_tensor.shape = owner->shape;
  return t;
fail:
  free(t);
  free(owner);
  if (device < 0) free(data);
  return NULL;
}

/* ---- one part: pool, train, predict, compare ------------------------------------------------------ */

/* Runs the steps on `device` (CBG_DEVICE_CPU or a CUDA ordinal); returns 1 on success. */
static int run_part(int32_t device, const float* x, const float* y) {
  int features_deleted = 0, label_deleted = 0;
  int success = 0;
  int64_t i, shape[2] = {0, 0};
  double* predictions = NULL;
  double* reference = NULL;
  void* device_out = NULL;
  const void* bytes = NULL;
  size_t size = 0;
  DLManagedTensorVersioned* features = make_tensor(x, ROWS, COLS, device, &features_deleted);
  DLManagedTensorVersioned* label = make_tensor(y, ROWS, 0, device, &label_deleted);
  cbg_context_t* ctx = NULL;
  cbg_pool_t* pool = NULL;
  cbg_model_t* model = NULL;
  cbg_context_desc_t cd;
  cbg_pool_desc_t pd;
  cbg_predict_desc_t desc;
  cbg_model_predict_host_desc_t hd;
  DLTensor out;
  cbg_tensor_ref_t out_ref;
  const char* where = device < 0 ? "host" : "device";

  if (features == NULL || label == NULL) {
    fprintf(stderr, "%s: could not allocate or fill the input tensors\n", where);
    goto done;
  }
  if (!ok(cbg_context_desc_init(&cd), "cbg_context_desc_init")) goto done;
  cd.device = device;
  if (!ok(cbg_context_create(&cd, &ctx), "cbg_context_create")) goto done;

  if (!ok(cbg_pool_desc_init(&pd), "cbg_pool_desc_init")) goto done;
  pd.features.kind = CBG_TENSOR_DLPACK_VERSIONED;
  pd.features.ptr = features;
  pd.label.kind = CBG_TENSOR_DLPACK_VERSIONED;
  pd.label.ptr = label;
  features = NULL; /* the library owns both tensors from here on, success or not */
  label = NULL;
  if (!ok(cbg_pool_from_dlpack(ctx, &pd, &pool), "cbg_pool_from_dlpack")) goto done;
  if (!ok(cbg_train(pool, params, NULL, NULL, &model), "cbg_train")) goto done;

  /* Ask for the output's shape, allocate it, predict into it. */
  if (!ok(cbg_predict_desc_init(&desc), "cbg_predict_desc_init")) goto done;
  desc.prediction_type = CBG_PREDICTION_RAW_FORMULA_VAL;
  if (!ok(cbg_predict_output_shape(model, &desc, ROWS, shape), "cbg_predict_output_shape")) goto done;
  predictions = (double*)malloc(sizeof(double) * (size_t)(shape[0] * shape[1]));
  reference = (double*)malloc(sizeof(double) * (size_t)(shape[0] * shape[1]));
  if (predictions == NULL || reference == NULL) goto done;
  memset(&out, 0, sizeof(out));
  out.ndim = 2;
  out.shape = shape;
  out.dtype.code = (uint8_t)kDLFloat;
  out.dtype.bits = 64;
  out.dtype.lanes = 1;
  out_ref.kind = CBG_TENSOR_DLTENSOR; /* borrowed: we keep the buffer */
  out_ref.ptr = &out;
  if (device < 0) {
    out.data = predictions;
    out.device.device_type = kDLCPU;
    if (!ok(cbg_predict_to_host(model, pool, &desc, &out_ref, NULL), "cbg_predict_to_host")) goto done;
  } else {
#ifdef CBG_EXAMPLE_HAVE_CUDA
    if (cudaMalloc(&device_out, sizeof(double) * (size_t)(shape[0] * shape[1])) != cudaSuccess) goto done;
    out.data = device_out;
    out.device.device_type = kDLCUDA;
    out.device.device_id = device;
    /* Enqueued on the context's stream (NULL); wait for it before reading the buffer. */
    if (!ok(cbg_predict_to_device(model, pool, &desc, &out_ref, NULL), "cbg_predict_to_device")) goto done;
    if (!ok(cbg_context_sync(ctx), "cbg_context_sync")) goto done;
    if (cudaMemcpy(predictions, device_out, sizeof(double) * (size_t)(shape[0] * shape[1]), cudaMemcpyDeviceToHost) !=
        cudaSuccess) {
      goto done;
    }
#endif
  }

  /* The host evaluator over the same rows is the reference. */
  if (!ok(cbg_model_predict_host_desc_init(&hd), "cbg_model_predict_host_desc_init")) goto done;
  hd.n_rows = ROWS;
  hd.float_features = x;
  hd.float_row_stride = COLS;
  hd.prediction_type = CBG_PREDICTION_RAW_FORMULA_VAL;
  if (!ok(cbg_model_predict_host(model, &hd, reference, (size_t)(shape[0] * shape[1])), "cbg_model_predict_host")) {
    goto done;
  }
  for (i = 0; i < shape[0] * shape[1]; ++i) {
    if (memcmp(&predictions[i], &reference[i], sizeof(double)) != 0) {
      fprintf(stderr, "%s: row %" PRId64 ": %.17g, but the host evaluator gives %.17g\n", where, i, predictions[i],
              reference[i]);
      goto done;
    }
  }
  if (!ok(cbg_model_save_buffer(model, CBG_MODEL_FORMAT_CBM, &bytes, &size), "cbg_model_save_buffer")) goto done;
  printf("%s: trained on %d rows x %d features, model %zu bytes (.cbm); predictions [%" PRId64 ", %" PRId64
         "] equal the host evaluator's:",
         where, ROWS, COLS, size, shape[0], shape[1]);
  for (i = 0; i < SHOWN; ++i) printf(" %.6f", predictions[i]);
  printf(" ...\n");
  success = 1;

done:
  if (features != NULL) features->deleter(features);
  if (label != NULL) label->deleter(label);
#ifdef CBG_EXAMPLE_HAVE_CUDA
  if (device_out != NULL) (void)cudaFree(device_out);
#endif
  free(predictions);
  free(reference);
  if (!ok(cbg_model_free(model), "cbg_model_free")) success = 0;
  if (!ok(cbg_pool_free(pool), "cbg_pool_free")) success = 0; /* runs the deleters */
  if (!ok(cbg_context_free(ctx), "cbg_context_free")) success = 0;
  if (features_deleted != 1 || label_deleted != 1) {
    fprintf(stderr, "%s: deleters ran %d and %d times (once each expected)\n", where, features_deleted, label_deleted);
    success = 0;
  }
  printf("%s part: %s\n", where, success ? "ok" : "FAILED");
  return success;
}

int main(int argc, char** argv) {
  const int require_gpu = argc > 1 && strcmp(argv[1], "--gpu") == 0;
  float* x = (float*)malloc(sizeof(float) * ROWS * COLS);
  float* y = (float*)malloc(sizeof(float) * ROWS);
  int32_t gpus = 0;
  int success;
  int i, j;
  unsigned state = 12345u;
  if (x == NULL || y == NULL) {
    free(x);
    free(y);
    return 1;
  }
  /* A reproducible synthetic binary task: the label depends on two of the four features. */
  for (i = 0; i < ROWS; ++i) {
    for (j = 0; j < COLS; ++j) {
      state = state * 1664525u + 1013904223u;
      x[i * COLS + j] = (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
    y[i] = x[i * COLS] + 0.5f * x[i * COLS + 1] > 0.0f ? 1.0f : 0.0f;
  }
  printf("libcbgpu %s (headers %s)\n", cbg_version_string(), CBG_VERSION_STRING);
  success = run_part(CBG_DEVICE_CPU, x, y);

  if (!ok(cbg_device_count(&gpus), "cbg_device_count")) gpus = 0;
#ifndef CBG_EXAMPLE_HAVE_CUDA
  gpus = 0; /* built without the CUDA toolkit: no device buffers to make */
#endif
  if (gpus > 0) {
    success = run_part(0, x, y) && success;
  } else {
    printf("device part: skipped (no GPU visible, or built without the CUDA toolkit)\n");
    if (require_gpu) {
      free(x);
      free(y);
      return success ? 77 : 1;
    }
  }
  free(x);
  free(y);
  printf("%s\n", success ? "OK" : "FAILED");
  return success ? 0 : 1;
}
