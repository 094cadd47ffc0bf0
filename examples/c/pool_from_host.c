/* SPDX-License-Identifier: Apache-2.0 */
/* pool_from_host.c: build a cbgpu pool from host arrays through the C ABI.
 *
 * It wraps a small float32 matrix and its label as DLPack 1.x managed tensors (each with a deleter),
 * creates a context (a GPU if one is visible, else the host reference path), builds a pool, prints
 * what the library reports, frees everything, and exits 0 only if every call succeeded and each
 * deleter ran exactly once (the ownership rule of cbg_tensor_ref_t). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <cbgpu/cbgpu.h>

/* The DLPack structs: cbgpu's helper header includes the system's dlpack.h where there is one and
 * declares what DLPack 1.x adds (DLManagedTensorVersioned) where it is older or missing. */
#include <cbgpu/cbgpu_dlpack.h>

/* ---- a host tensor that owns its data ---------------------------------------------------------- */

/* What the deleter frees, and where it records that it ran. */
typedef struct {
  float* data;
  int64_t shape[2];
  int* deleter_calls;
} host_tensor_owner;

static void delete_host_tensor(DLManagedTensorVersioned* self) {
  host_tensor_owner* owner = (host_tensor_owner*)self->manager_ctx;
  ++*owner->deleter_calls;
  free(owner->data);
  free(owner);
  free(self);
}

/* Wraps `data` (malloc'ed; taken in every case) as a float32 tensor of shape [d0] or [d0, d1].
 * Returns NULL when out of memory. */
static DLManagedTensorVersioned* wrap_host_float32(float* data, int32_t ndim, int64_t d0, int64_t d1,
                                                   int* deleter_calls) {
  DLManagedTensorVersioned* t = (DLManagedTensorVersioned*)calloc(1, sizeof(*t));
  host_tensor_owner* owner = (host_tensor_owner*)calloc(1, sizeof(*owner));
  if (t == NULL || owner == NULL) {
    free(t);
    free(owner);
    free(data);
    return NULL;
  }
  owner->data = data;
  owner->shape[0] = d0;
  owner->shape[1] = d1;
  owner->deleter_calls = deleter_calls;
  t->version.major = 1;
  t->version.minor = 1;
  t->manager_ctx = owner;
  t->deleter = delete_host_tensor;
  t->flags = 0;
  t->dl_tensor.data = data;
  t->dl_tensor.device.device_type = kDLCPU;
  t->dl_tensor.device.device_id = 0;
  t->dl_tensor.ndim = ndim;
  t->dl_tensor.dtype.code = (uint8_t)kDLFloat;
  t->dl_tensor.dtype.bits = 32;
  t->dl_tensor.dtype.lanes = 1;
  t->dl_tensor.shape = owner->shape;
  t->dl_tensor.strides = NULL; /* compact row-major */
  t->dl_tensor.byte_offset = 0;
  return t;
}

/* ---- status checks ----------------------------------------------------------------------------- */

/* Returns 1 on CBG_OK; otherwise prints the status and the library's message and returns 0. */
static int ok(cbg_status status, const char* what) {
  if (status == CBG_OK) return 1;
  fprintf(stderr, "%s failed: %s: %s\n", what, cbg_status_string(status), cbg_last_error());
  return 0;
}

enum { ROWS = 6, COLS = 3 };

int main(void) {
  static const char* const names[COLS] = {"momentum", "angle", "mass"};
  int features_deleted = 0, label_deleted = 0;
  int failed = 1;
  int32_t device = CBG_DEVICE_CPU;
  int64_t j;
  int i;
  float* x = (float*)malloc(sizeof(float) * ROWS * COLS);
  float* y = (float*)malloc(sizeof(float) * ROWS);
  DLManagedTensorVersioned* features = NULL;
  DLManagedTensorVersioned* label = NULL;
  cbg_context_t* ctx = NULL;
  cbg_pool_t* pool = NULL;
  cbg_context_desc_t context_desc;
  cbg_pool_desc_t pool_desc;
  cbg_pool_info_t info = {0};
  cbg_copy_stats_t stats = {0};

  if (x == NULL || y == NULL) {
    free(x);
    free(y);
    fprintf(stderr, "out of host memory\n");
    return 1;
  }
  for (i = 0; i < ROWS; ++i) {
    x[i * COLS + 0] = 1.0f + 0.5f * (float)i;
    x[i * COLS + 1] = -1.5f + 0.6f * (float)i;
    x[i * COLS + 2] = (float)(i % 3);
    y[i] = (float)(i % 2);
  }
  features = wrap_host_float32(x, 2, ROWS, COLS, &features_deleted);
  label = wrap_host_float32(y, 1, ROWS, 0, &label_deleted);
  if (features == NULL || label == NULL) {
    fprintf(stderr, "out of host memory\n");
    goto done;
  }

  printf("libcbgpu %s (headers %s)\n", cbg_version_string(), CBG_VERSION_STRING);
  if (!ok(cbg_context_desc_init(&context_desc), "cbg_context_desc_init")) goto done;
  context_desc.device = CBG_DEVICE_AUTO; /* a GPU if one is visible, else the host */
  if (!ok(cbg_context_create(&context_desc, &ctx), "cbg_context_create")) goto done;
  if (!ok(cbg_context_device(ctx, &device), "cbg_context_device")) goto done;
  if (device >= 0) {
    printf("context: CUDA device %d\n", (int)device);
  } else {
    printf("context: host reference path\n");
  }

  if (!ok(cbg_pool_desc_init(&pool_desc), "cbg_pool_desc_init")) goto done;
  pool_desc.features.kind = CBG_TENSOR_DLPACK_VERSIONED;
  pool_desc.features.ptr = features;
  pool_desc.label.kind = CBG_TENSOR_DLPACK_VERSIONED;
  pool_desc.label.ptr = label;
  pool_desc.feature_names = names;
  pool_desc.n_feature_names = COLS;
  /* From this call on the library owns both tensors, whether it succeeds or fails. */
  features = NULL;
  label = NULL;
  if (!ok(cbg_pool_from_dlpack(ctx, &pool_desc, &pool), "cbg_pool_from_dlpack")) goto done;
  if (features_deleted != 0 || label_deleted != 0) {
    fprintf(stderr, "a deleter ran while the pool still holds its tensor\n");
    goto done;
  }

  info.struct_size = sizeof(info);
  if (!ok(cbg_pool_info(pool, &info), "cbg_pool_info")) goto done;
  printf("pool: %" PRId64 " rows x %" PRId64 " features (%" PRId64 " categorical), label dims %" PRId64
         ", weights %s, data %s\n",
         info.n_rows, info.n_features, info.n_cat_features, info.label_dims, info.has_weight ? "yes" : "no",
         info.device >= 0 ? "on a GPU" : "on the host");
  for (j = 0; j < info.n_features; ++j) {
    const char* name = NULL;
    if (!ok(cbg_pool_feature_name(pool, j, &name), "cbg_pool_feature_name")) goto done;
    printf("  feature %" PRId64 ": %s\n", j, name);
  }

  stats.struct_size = sizeof(stats);
  if (!ok(cbg_copy_stats(ctx, &stats), "cbg_copy_stats")) goto done;
  printf("copies: h2d %" PRIu64 " B in %" PRIu64 " calls, d2h %" PRIu64 " B in %" PRIu64 " calls, d2d %" PRIu64
         " B in %" PRIu64 " calls, h2h %" PRIu64 " B in %" PRIu64 " calls\n",
         stats.h2d_bytes, stats.h2d_calls, stats.d2h_bytes, stats.d2h_calls, stats.d2d_bytes, stats.d2d_calls,
         stats.h2h_bytes, stats.h2h_calls);
  failed = 0;

done:
  /* Tensors never handed to the library are ours to delete. */
  if (features != NULL) features->deleter(features);
  if (label != NULL) label->deleter(label);
  if (!ok(cbg_pool_free(pool), "cbg_pool_free")) failed = 1; /* runs the deleters */
  if (!ok(cbg_context_free(ctx), "cbg_context_free")) failed = 1;
  printf("deleters: features %d, label %d (each must run exactly once)\n", features_deleted, label_deleted);
  if (features_deleted != 1 || label_deleted != 1) failed = 1;
  printf("%s\n", failed ? "FAILED" : "OK");
  return failed ? 1 : 0;
}
