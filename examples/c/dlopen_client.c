/* SPDX-License-Identifier: Apache-2.0 */
/* dlopen_client.c: use libcbgpu.so without linking it, as a runtime with an FFI would (Python
 * ctypes, Rust, Go): one dlopen, one dlsym("cbg_get_api"), and every call through the table.
 *
 * It builds a pool over a host matrix (a borrowed DLTensor: the caller keeps ownership), quantizes
 * it with CatBoost's defaults and prints the borders of each feature.
 *   dlopen_client [path/to/libcbgpu.so]      (default: "libcbgpu.so", found by the loader) */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>

#include <cbgpu/cbgpu.h>
#include <cbgpu/cbgpu_dlpack.h>

enum { ROWS = 8, COLS = 2, MAX_BORDERS = 16 };

static const cbg_api_v1_t* api = NULL;

/* Returns 1 on CBG_OK; otherwise prints the status and the library's message and returns 0. */
static int ok(cbg_status status, const char* what) {
  if (status == CBG_OK) return 1;
  fprintf(stderr, "%s failed: %s: %s\n", what, api->status_string(status), api->last_error());
  return 0;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "libcbgpu.so";
  float x[ROWS * COLS];
  int64_t shape[2] = {ROWS, COLS};
  DLTensor features;
  cbg_context_desc_t cd;
  cbg_pool_desc_t pd;
  cbg_quantize_desc_t qd;
  cbg_context_t* ctx = NULL;
  cbg_pool_t* pool = NULL;
  cbg_quantized_t* quantized = NULL;
  cbg_status (*get_api)(uint32_t, const void**);
  const void* table = NULL;
  int failed = 1;
  int i;
  int64_t f;

  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen(%s): %s\n", path, dlerror());
    return 1;
  }
  /* POSIX's sanctioned way to turn a data pointer from dlsym into a function pointer. */
  *(void**)(&get_api) = dlsym(lib, "cbg_get_api");
  if (get_api == NULL || get_api(CBG_API_VERSION_1, &table) != CBG_OK) {
    fprintf(stderr, "%s has no function table of version %u\n", path, CBG_API_VERSION_1);
    dlclose(lib);
    return 1;
  }
  api = (const cbg_api_v1_t*)table;
  printf("libcbgpu %s through its function table (%zu bytes)\n", api->version_string(), api->struct_size);

  for (i = 0; i < ROWS; ++i) {
    x[i * COLS + 0] = (float)i;              /* 0..7 */
    x[i * COLS + 1] = (float)(i % 3) * 0.5f; /* three values */
  }
  features.data = x;
  features.device.device_type = kDLCPU;
  features.device.device_id = 0;
  features.ndim = 2;
  features.dtype.code = (uint8_t)kDLFloat;
  features.dtype.bits = 32;
  features.dtype.lanes = 1;
  features.shape = shape;
  features.strides = NULL;
  features.byte_offset = 0;

  if (!ok(api->context_desc_init(&cd), "context_desc_init")) goto done;
  cd.device = CBG_DEVICE_CPU; /* host memory in, host reference path */
  if (!ok(api->context_create(&cd, &ctx), "context_create")) goto done;
  if (!ok(api->pool_desc_init(&pd), "pool_desc_init")) goto done;
  pd.features.kind = CBG_TENSOR_DLTENSOR; /* borrowed: x must outlive the pool */
  pd.features.ptr = &features;
  if (!ok(api->pool_from_dlpack(ctx, &pd, &pool), "pool_from_dlpack")) goto done;
  if (!ok(api->quantize_desc_init(&qd), "quantize_desc_init")) goto done;
  qd.border_count = MAX_BORDERS;
  if (!ok(api->quantize_pool(pool, &qd, &quantized), "quantize_pool")) goto done;
  for (f = 0; f < COLS; ++f) {
    float borders[MAX_BORDERS];
    int32_t count = 0, nan_mode = 0, b;
    if (!ok(api->quantized_borders(quantized, f, borders, MAX_BORDERS, &count, &nan_mode), "quantized_borders")) {
      goto done;
    }
    printf("feature %" PRId64 ": %d borders:", f, (int)count);
    for (b = 0; b < count; ++b) printf(" %g", (double)borders[b]);
    printf("\n");
  }
  failed = 0;

done:
  if (!ok(api->quantized_free(quantized), "quantized_free")) failed = 1;
  if (!ok(api->pool_free(pool), "pool_free")) failed = 1;
  if (!ok(api->context_free(ctx), "context_free")) failed = 1;
  dlclose(lib);
  printf("%s\n", failed ? "FAILED" : "OK");
  return failed;
}
