/* SPDX-License-Identifier: Apache-2.0 */
/* Every C entry point and every error path, from pure C99. With --gpu: the GPU part (exit 77 when no
 * CUDA device is visible, which CTest reports as skipped). Ends with "N passed, N failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbgpu/cbgpu.h"
#include "cbgpu/cbgpu_dlpack.h"

#ifdef CBG_TEST_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      ++passed;                                                                \
    } else {                                                                   \
      ++failed;                                                                \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* The call returns `expected`, and a failure leaves a non-empty message behind. */
#define CHECK_STATUS(call, expected)                                                                                \
  do {                                                                                                              \
    cbg_status s_ = (call);                                                                                         \
    if (s_ == (expected) && (s_ == CBG_OK || cbg_last_error()[0] != '\0')) {                                        \
      ++passed;                                                                                                     \
    } else {                                                                                                        \
      ++failed;                                                                                                     \
      fprintf(stderr, "%s:%d: %s returned %d, expected %d; last error: '%s'\n", __FILE__, __LINE__, #call, (int)s_, \
              (int)(expected), cbg_last_error());                                                                   \
    }                                                                                                               \
  } while (0)

/* ---- a managed tensor over caller memory that counts deleter calls ---------------------------- */
typedef struct {
  struct DLManagedTensorVersioned managed;
  struct DLManagedTensor legacy;
  int64_t shape[2];
  int64_t strides[2];
  int deleted;
} fake_tensor;

static void count_versioned(struct DLManagedTensorVersioned* self) { ++((fake_tensor*)self->manager_ctx)->deleted; }
static void count_legacy(struct DLManagedTensor* self) { ++((fake_tensor*)self->manager_ctx)->deleted; }

static void fake_init(fake_tensor* t, void* data, int device_type, uint8_t code, uint8_t bits, int ndim, int64_t rows,
                      int64_t cols) {
  memset(t, 0, sizeof(*t));
  t->shape[0] = rows;
  t->shape[1] = cols;
  t->managed.version.major = 1;
  t->managed.manager_ctx = t;
  t->managed.deleter = count_versioned;
  t->managed.dl_tensor.data = data;
  t->managed.dl_tensor.device.device_type = device_type;
  t->managed.dl_tensor.ndim = ndim;
  t->managed.dl_tensor.dtype.code = code;
  t->managed.dl_tensor.dtype.bits = bits;
  t->managed.dl_tensor.dtype.lanes = 1;
  t->managed.dl_tensor.shape = t->shape;
  t->legacy.dl_tensor = t->managed.dl_tensor;
  t->legacy.manager_ctx = t;
  t->legacy.deleter = count_legacy;
}

static cbg_tensor_ref_t consumed(fake_tensor* t) {
  cbg_tensor_ref_t r;
  r.kind = CBG_TENSOR_DLPACK_VERSIONED;
  r.ptr = &t->managed;
  return r;
}
static cbg_tensor_ref_t consumed_legacy(fake_tensor* t) {
  cbg_tensor_ref_t r;
  r.kind = CBG_TENSOR_DLPACK_LEGACY;
  r.ptr = &t->legacy;
  return r;
}
static cbg_tensor_ref_t borrowed(fake_tensor* t) {
  cbg_tensor_ref_t r;
  r.kind = CBG_TENSOR_DLTENSOR;
  r.ptr = &t->managed.dl_tensor;
  return r;
}

/* ---- log capture ------------------------------------------------------------------------------ */
static int log_records = 0;
static char log_category[64];
static void capture_log(void* user, int32_t level, const char* category, const char* message) {
  (void)message;
  *(int32_t*)user = level;
  ++log_records;
  strncpy(log_category, category, sizeof(log_category) - 1);
}

static cbg_context_t* cpu_context(void) {
  cbg_context_desc_t d;
  cbg_context_t* ctx = NULL;
  cbg_context_desc_init(&d);
  d.device = CBG_DEVICE_CPU;
  if (cbg_context_create(&d, &ctx) != CBG_OK) fprintf(stderr, "cpu context: %s\n", cbg_last_error());
  return ctx;
}

static void test_versions_and_status(void) {
  const char* json = NULL;
  int32_t count = -1;
  int code;
  CHECK(cbg_version_number() == CBG_VERSION_NUMBER);
  CHECK(strcmp(cbg_version_string(), CBG_VERSION_STRING) == 0);
  for (code = CBG_OK; code <= CBG_ERR_INTERNAL; ++code) {
    CHECK(strncmp(cbg_status_string(code), "CBG_", 4) == 0);
  }
  CHECK(strstr(cbg_status_string(CBG_ERR_SHAPE), "CBG_ERR_SHAPE") != NULL);
  CHECK(strcmp(cbg_status_string(-1), "unknown status code") == 0);
  CHECK(strcmp(cbg_status_string(4242), "unknown status code") == 0);
  CHECK_STATUS(cbg_build_info(NULL), CBG_ERR_NULL_POINTER);
  CHECK(strstr(cbg_last_error(), "json") != NULL);
  CHECK_STATUS(cbg_build_info(&json), CBG_OK);
  CHECK(cbg_last_error()[0] == '\0'); /* cleared by the successful call */
  CHECK(json != NULL && strstr(json, "\"version\":\"" CBG_VERSION_STRING "\"") != NULL);
  CHECK(json != NULL && strstr(json, "\"cuda_runtime_version\"") != NULL);
  CHECK(json != NULL && strstr(json, "\"git_sha\"") != NULL);
  CHECK_STATUS(cbg_device_count(NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_device_count(&count), CBG_OK);
  CHECK(count >= 0);
}

static void test_logging(void) {
  int32_t level = -1;
  cbg_context_desc_t d;
  cbg_context_t* ctx = NULL;
  CHECK_STATUS(cbg_set_log_callback(capture_log, &level, 7), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_set_log_callback(capture_log, &level, -1), CBG_ERR_INVALID_ARGUMENT);
  /* Silent by default: a debug-level context logs nothing without a callback. */
  cbg_context_desc_init(&d);
  d.device = CBG_DEVICE_CPU;
  d.log_level = CBG_LOG_DEBUG;
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_OK);
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK);
  CHECK(log_records == 0);
  CHECK_STATUS(cbg_set_log_callback(capture_log, &level, CBG_LOG_DEBUG), CBG_OK);
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_OK);
  CHECK(log_records == 1);
  CHECK(level == CBG_LOG_DEBUG);
  CHECK(strcmp(log_category, "cbgpu.context") == 0);
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK);
  CHECK_STATUS(cbg_set_log_callback(NULL, NULL, CBG_LOG_TRACE), CBG_OK);
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_OK);
  CHECK(log_records == 1);
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK);
}

static void* never_alloc(size_t bytes, cbg_stream_t stream, void* user) {
  (void)bytes;
  (void)stream;
  (void)user;
  return NULL;
}

static void test_context(void) {
  cbg_context_desc_t d;
  cbg_context_t* ctx = NULL;
  cbg_context_t* dead = NULL;
  int32_t device = 0, count = 0;
  cbg_stream_t stream = (cbg_stream_t)&device;
  cbg_copy_stats_t stats;
  CHECK_STATUS(cbg_context_desc_init(NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_context_desc_init(&d), CBG_OK);
  CHECK(d.struct_size == sizeof(d) && d.device == CBG_DEVICE_AUTO);
  CHECK_STATUS(cbg_context_create(&d, NULL), CBG_ERR_NULL_POINTER);

  d.struct_size = 0;
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cbg_last_error(), "struct_size") != NULL);
  d.struct_size = sizeof(d) + 64;
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_ERR_INVALID_ARGUMENT);
  cbg_context_desc_init(&d);
  d.log_level = 99;
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_ERR_INVALID_ARGUMENT);
  cbg_context_desc_init(&d);
  d.alloc_fn = never_alloc;
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_ERR_INVALID_ARGUMENT);
  cbg_context_desc_init(&d);
  d.flags = 0x80;
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_ERR_INVALID_ARGUMENT);
  cbg_context_desc_init(&d);
  d.device = 1000;
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_ERR_NO_DEVICE);
  CHECK(strstr(cbg_last_error(), "1000") != NULL);
  d.device = -5;
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_ERR_INVALID_ARGUMENT);
  CHECK(ctx == NULL);

  /* AUTO falls back to the CPU where no GPU is visible. */
  CHECK_STATUS(cbg_context_create(NULL, &ctx), CBG_OK);
  CHECK_STATUS(cbg_context_device(ctx, &device), CBG_OK);
  cbg_device_count(&count);
  CHECK(count > 0 ? device >= 0 : device == CBG_DEVICE_CPU);
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK);

  ctx = cpu_context();
  CHECK(ctx != NULL);
  CHECK_STATUS(cbg_context_device(ctx, NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_context_device(NULL, &device), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_context_device(ctx, &device), CBG_OK);
  CHECK(device == CBG_DEVICE_CPU);
  CHECK_STATUS(cbg_context_set_stream(ctx, NULL), CBG_ERR_UNSUPPORTED);
  CHECK_STATUS(cbg_context_get_stream(ctx, &stream), CBG_OK);
  CHECK(stream == NULL);
  CHECK_STATUS(cbg_context_sync(ctx), CBG_OK);
  stats.struct_size = 8;
  CHECK_STATUS(cbg_copy_stats(ctx, &stats), CBG_ERR_INVALID_ARGUMENT);
  stats.struct_size = sizeof(stats);
  CHECK_STATUS(cbg_copy_stats(ctx, NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_copy_stats(ctx, &stats), CBG_OK);
  CHECK(stats.h2h_calls == 0 && stats.d2h_bytes == 0);
  CHECK_STATUS(cbg_copy_stats_reset(ctx), CBG_OK);

  /* Freed, foreign and wrong-type handles are errors, not crashes. */
  dead = cpu_context();
  CHECK_STATUS(cbg_context_free(dead), CBG_OK);
  CHECK_STATUS(cbg_context_device(dead, &device), CBG_ERR_INVALID_HANDLE);
  CHECK(strstr(cbg_last_error(), "cbg_context_t") != NULL);
  CHECK_STATUS(cbg_context_free(dead), CBG_ERR_INVALID_HANDLE);
  CHECK_STATUS(cbg_context_sync((cbg_context_t*)&stats), CBG_ERR_INVALID_HANDLE);
  CHECK_STATUS(cbg_context_free(NULL), CBG_OK);
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK);
}

static void test_pool(void) {
  float x[4 * 3] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  double y[4] = {0, 1, 1, 0};
  int64_t codes[4] = {7, 7, 3, 1};
  float complex_data[8];
  fake_tensor features, label, bad, column0, column1;
  cbg_pool_desc_t desc;
  cbg_pool_t* pool = NULL;
  cbg_pool_info_t info;
  cbg_context_t* ctx = cpu_context();
  const char* names[3] = {"age", "height", "city"};
  const char* bad_names[3] = {"age", NULL, "city"};
  const char* name = NULL;
  int32_t cats[1] = {1};
  int32_t is_cat = -1;
  cbg_tensor_ref_t columns[2];

  CHECK_STATUS(cbg_pool_desc_init(NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_pool_desc_init(&desc), CBG_OK);
  CHECK(desc.struct_size == sizeof(desc) && desc.features.kind == CBG_TENSOR_NONE);

  /* Failures before the pool exists delete every consumed tensor exactly once. */
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  desc.features = consumed(&features);
  CHECK_STATUS(cbg_pool_from_dlpack(NULL, &desc, &pool), CBG_ERR_NULL_POINTER);
  CHECK(features.deleted == 1);
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, NULL), CBG_ERR_NULL_POINTER);
  CHECK(features.deleted == 1);
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  CHECK_STATUS(cbg_pool_from_dlpack((cbg_context_t*)&desc, &desc, &pool), CBG_ERR_INVALID_HANDLE);
  CHECK(features.deleted == 1);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, NULL, &pool), CBG_ERR_NULL_POINTER);
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  desc.struct_size = sizeof(desc) - 8; /* invalid: nothing is consumed, the caller keeps it */
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_INVALID_ARGUMENT);
  CHECK(features.deleted == 0);
  cbg_pool_desc_init(&desc);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_INVALID_ARGUMENT); /* no features */
  CHECK(pool == NULL);

  fake_init(&bad, complex_data, kDLCPU, kDLComplex, 64, 1, 4, 0);
  desc.features = consumed(&bad);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_DTYPE);
  CHECK(bad.deleted == 1);
  fake_init(&bad, x, kDLCUDA, kDLFloat, 32, 2, 4, 3);
  desc.features = consumed(&bad);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_DEVICE);
  CHECK(strstr(cbg_last_error(), "CPU") != NULL);
  CHECK(bad.deleted == 1);
  fake_init(&bad, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  bad.managed.version.major = 2;
  desc.features = consumed(&bad);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_DLPACK_VERSION);
  CHECK(bad.deleted == 1);
  fake_init(&bad, NULL, kDLCPU, kDLFloat, 32, 2, 4, 3);
  desc.features = consumed(&bad);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_NULL_POINTER);
  CHECK(bad.deleted == 1);
  fake_init(&bad, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  bad.strides[0] = -3;
  bad.strides[1] = 1;
  bad.managed.dl_tensor.strides = bad.strides;
  desc.features = consumed(&bad);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_SHAPE);
  CHECK(bad.deleted == 1);
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  fake_init(&label, y, kDLCPU, kDLFloat, 64, 1, 3, 0); /* 3 rows vs 4 */
  desc.features = consumed(&features);
  desc.label = consumed_legacy(&label);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_SHAPE);
  CHECK(strstr(cbg_last_error(), "label") != NULL);
  CHECK(features.deleted == 1 && label.deleted == 1);
  cbg_pool_desc_init(&desc);
  desc.n_columns = 2;
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_NULL_POINTER);
  CHECK(pool == NULL);

  /* A good pool: matrix + legacy label + names. */
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  fake_init(&label, y, kDLCPU, kDLFloat, 64, 1, 4, 0);
  cbg_pool_desc_init(&desc);
  desc.features = consumed(&features);
  desc.label = consumed_legacy(&label);
  desc.feature_names = bad_names;
  desc.n_feature_names = 3;
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_NULL_POINTER);
  CHECK(features.deleted == 1 && label.deleted == 1);
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  fake_init(&label, y, kDLCPU, kDLFloat, 64, 1, 4, 0);
  desc.feature_names = names;
  desc.n_feature_names = 2;
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cbg_last_error(), "2 feature names given for 3 features") != NULL);
  CHECK(features.deleted == 1 && label.deleted == 1);
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  fake_init(&label, y, kDLCPU, kDLFloat, 64, 1, 4, 0);
  y[2] = 0.0 / 0.0; /* a NaN label */
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_BAD_DATA);
  CHECK(strstr(cbg_last_error(), "1 NaN") != NULL);
  CHECK(features.deleted == 1 && label.deleted == 1);
  y[2] = 1.0;
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, 4, 3);
  fake_init(&label, y, kDLCPU, kDLFloat, 64, 1, 4, 0);
  desc.n_feature_names = 3;
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_OK);
  CHECK(features.deleted == 0 && label.deleted == 0);
  info.struct_size = sizeof(info);
  CHECK_STATUS(cbg_pool_info(pool, &info), CBG_OK);
  CHECK(info.n_rows == 4 && info.n_features == 3 && info.n_cat_features == 0);
  CHECK(info.label_dims == 1 && info.baseline_dims == 0 && info.has_weight == 0);
  CHECK(info.device == CBG_DEVICE_CPU);
  info.struct_size = 4;
  CHECK_STATUS(cbg_pool_info(pool, &info), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_pool_feature_name(pool, 2, &name), CBG_OK);
  CHECK(name != NULL && strcmp(name, "city") == 0);
  CHECK_STATUS(cbg_pool_feature_name(pool, 3, &name), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_pool_feature_name(pool, 0, NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_pool_is_categorical(pool, 1, &is_cat), CBG_OK);
  CHECK(is_cat == 0);
  CHECK_STATUS(cbg_pool_is_categorical(pool, -1, &is_cat), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_pool_info((cbg_pool_t*)ctx, &info), CBG_ERR_INVALID_HANDLE);
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK); /* the pool keeps what it needs */
  info.struct_size = sizeof(info);
  CHECK_STATUS(cbg_pool_info(pool, &info), CBG_OK);
  CHECK_STATUS(cbg_pool_free(pool), CBG_OK);
  CHECK(features.deleted == 1 && label.deleted == 1);
  CHECK_STATUS(cbg_pool_free(pool), CBG_ERR_INVALID_HANDLE);
  CHECK_STATUS(cbg_pool_info(pool, &info), CBG_ERR_INVALID_HANDLE);
  CHECK_STATUS(cbg_pool_free(NULL), CBG_OK);

  /* Per-column tensors, one of them categorical codes, one borrowed. */
  ctx = cpu_context();
  fake_init(&column0, x, kDLCPU, kDLFloat, 32, 1, 4, 0);
  fake_init(&column1, codes, kDLCPU, kDLInt, 64, 1, 4, 0);
  columns[0] = consumed(&column0);
  columns[1] = borrowed(&column1);
  cbg_pool_desc_init(&desc);
  desc.columns = columns;
  desc.n_columns = 2;
  desc.cat_features = cats;
  desc.n_cat_features = 1;
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_OK);
  CHECK_STATUS(cbg_pool_is_categorical(pool, 1, &is_cat), CBG_OK);
  CHECK(is_cat == 1);
  CHECK_STATUS(cbg_pool_info(pool, &info), CBG_OK);
  CHECK(info.n_features == 2 && info.n_cat_features == 1);
  CHECK_STATUS(cbg_pool_feature_name(pool, 0, &name), CBG_OK);
  CHECK(name != NULL && name[0] == '\0');
  CHECK_STATUS(cbg_pool_free(pool), CBG_OK);
  CHECK(column0.deleted == 1 && column1.deleted == 0);
  cats[0] = 0; /* a float column cannot be categorical */
  fake_init(&column0, x, kDLCPU, kDLFloat, 32, 1, 4, 0);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_DTYPE);
  CHECK(column0.deleted == 1);
  cbg_context_free(ctx);
}

static void test_tensor_copy(void) {
  float src[6] = {1, 2, 3, 4, 5, 6};
  float dst[6] = {0};
  double wrong[6];
  fake_tensor s, d;
  cbg_tensor_ref_t rs, rd;
  cbg_copy_stats_t stats;
  cbg_context_t* ctx = cpu_context();
  fake_init(&s, src, kDLCPU, kDLFloat, 32, 2, 2, 3);
  fake_init(&d, dst, kDLCPU, kDLFloat, 32, 2, 3, 2);
  d.strides[0] = 1; /* dst is the column-major [2, 3]: a transpose by strides */
  d.strides[1] = 2;
  d.shape[0] = 2;
  d.shape[1] = 3;
  d.managed.dl_tensor.strides = d.strides;
  rs = consumed(&s); /* borrowed by cbg_tensor_copy even for managed kinds */
  rd = consumed(&d);
  CHECK_STATUS(cbg_tensor_copy(ctx, &rd, NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_tensor_copy(ctx, &rd, &rs), CBG_OK);
  CHECK(dst[0] == 1 && dst[1] == 4 && dst[2] == 2 && dst[5] == 6);
  CHECK(s.deleted == 0 && d.deleted == 0);
  stats.struct_size = sizeof(stats);
  CHECK_STATUS(cbg_copy_stats(ctx, &stats), CBG_OK);
  CHECK(stats.h2h_bytes == 6 * sizeof(float) && stats.d2h_bytes == 0 && stats.h2d_bytes == 0);

  d.managed.flags = CBG_DLPACK_FLAG_READ_ONLY;
  CHECK_STATUS(cbg_tensor_copy(ctx, &rd, &rs), CBG_ERR_READ_ONLY);
  d.managed.flags = 0;
  fake_init(&d, wrong, kDLCPU, kDLFloat, 64, 2, 2, 3);
  rd = consumed(&d);
  CHECK_STATUS(cbg_tensor_copy(ctx, &rd, &rs), CBG_ERR_DTYPE);
  fake_init(&d, dst, kDLCPU, kDLFloat, 32, 2, 3, 2);
  rd = consumed(&d);
  CHECK_STATUS(cbg_tensor_copy(ctx, &rd, &rs), CBG_ERR_SHAPE);
  cbg_context_free(ctx);
}

#ifdef CBG_TEST_WITH_CUDA
static int test_gpu(void) {
  int32_t count = 0;
  cbg_context_desc_t cd;
  cbg_context_t* ctx = NULL;
  cbg_pool_desc_t desc;
  cbg_pool_t* pool = NULL;
  cbg_copy_stats_t stats;
  fake_tensor features, wrong_device, big_src, host_dst;
  cbg_tensor_ref_t rs, rd;
  static float host[1 << 16];
  float* device_x = NULL;
  const int64_t rows = 1 << 14, cols = 4; /* 256 KiB */
  cbg_device_count(&count);
  if (count == 0) {
    printf("SKIPPED: the GPU part of the C ABI tests needs a CUDA device and none is visible\n");
    return 77;
  }
  if (cudaMalloc((void**)&device_x, (size_t)(rows * cols) * sizeof(float)) != cudaSuccess) return 1;
  cudaMemset(device_x, 0, (size_t)(rows * cols) * sizeof(float));
  cbg_context_desc_init(&cd);
  cd.device = 0;
  cd.flags = CBG_CONTEXT_STRICT_NO_D2H;
  CHECK_STATUS(cbg_context_create(&cd, &ctx), CBG_OK);

  /* Device data → pool: no bytes to the host (strict mode is on and nothing complains). */
  fake_init(&features, device_x, kDLCUDA, kDLFloat, 32, 2, rows, cols);
  cbg_pool_desc_init(&desc);
  desc.features = consumed(&features);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_OK);
  stats.struct_size = sizeof(stats);
  CHECK_STATUS(cbg_copy_stats(ctx, &stats), CBG_OK);
  CHECK(stats.d2h_bytes == 0 && stats.d2h_calls == 0 && stats.h2d_bytes == 0);
  CHECK_STATUS(cbg_pool_free(pool), CBG_OK);
  CHECK(features.deleted == 1);

  /* A tensor on another device ordinal than the context's. */
  fake_init(&wrong_device, device_x, kDLCUDA, kDLFloat, 32, 2, rows, cols);
  wrong_device.managed.dl_tensor.device.device_id = count; /* never the context's device 0 */
  desc.features = consumed(&wrong_device);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_ERR_DEVICE);
  CHECK(wrong_device.deleted == 1);

  /* Strict mode: 256 KiB device → host is refused and names the call; 16 KiB passes. */
  fake_init(&big_src, device_x, kDLCUDA, kDLFloat, 32, 2, rows, cols);
  fake_init(&host_dst, host, kDLCPU, kDLFloat, 32, 2, rows, cols);
  rs = borrowed(&big_src);
  rd = borrowed(&host_dst);
  CHECK_STATUS(cbg_tensor_copy(ctx, &rd, &rs), CBG_ERR_STRICT_D2H);
  CHECK(strstr(cbg_last_error(), "cbg_tensor_copy") != NULL);
  big_src.shape[0] = 1024;
  host_dst.shape[0] = 1024;
  CHECK_STATUS(cbg_tensor_copy(ctx, &rd, &rs), CBG_OK);
  CHECK_STATUS(cbg_copy_stats(ctx, &stats), CBG_OK);
  CHECK(stats.d2h_bytes == 1024 * 4 * sizeof(float) && stats.d2h_calls == 1);
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK);
  cudaFree(device_x);
  return 0;
}
#endif

/* A minimal CatBoost JSON model: float feature "x" (border 0.5, NaN as true), categorical "c"
 * one-hot on "a"; tree 0 splits on both, tree 1 on x; bias 0.25. */
static const char* k_model_json =
    "{\"features_info\": {\"float_features\": [{\"borders\": [0.5], \"feature_id\": \"x\", \"feature_index\": 0,"
    " \"flat_feature_index\": 0, \"has_nans\": true, \"nan_value_treatment\": \"AsTrue\"}],"
    " \"categorical_features\": [{\"feature_id\": \"c\", \"feature_index\": 0, \"flat_feature_index\": 1,"
    " \"values\": [-805065478]}]},"
    " \"model_info\": {\"params\": {\"loss_function\": {\"type\": \"Logloss\"}}, \"class_params\": {\"class_names\": "
    "[\"no\", \"yes\"]}},"
    " \"oblivious_trees\": [{\"splits\": [{\"split_index\": 0}, {\"split_index\": 1}], \"leaf_values\": [1, 2, 3, 4]},"
    " {\"splits\": [{\"split_index\": 0}], \"leaf_values\": [10, 20]}],"
    " \"scale_and_bias\": [1, [0.25]]}";

static void test_models(void) {
  cbg_model_t* m = NULL;
  cbg_model_t* m2 = NULL;
  cbg_model_info_t info;
  const char* name = NULL;
  const void* bytes = NULL;
  size_t size = 0;
  int64_t flat = -1, cols = 0;
  uint32_t hash = 0, a_hash = 0;
  float floats[3] = {0.0f, 1.0f, 0.0f};
  uint32_t cats[3];
  double out[6];
  uint32_t leaves[6];
  cbg_model_predict_host_desc_t d;
  char* copy;
  const char* path = "cbgpu_test_capi_model.cbm";

  /* hashes */
  CHECK_STATUS(cbg_cat_hash_string("a", 1, &hash), CBG_OK);
  CHECK(hash == 3489901818u);
  a_hash = hash;
  CHECK_STATUS(cbg_cat_hash_string("Female", 6, &hash), CBG_OK);
  CHECK(hash == 2180403013u);
  CHECK_STATUS(cbg_cat_hash_int64(777, &hash), CBG_OK);
  CHECK((int32_t)hash == -571044564);
  CHECK_STATUS(cbg_cat_hash_string(NULL, 0, &hash), CBG_OK);
  CHECK(hash == 797982799u);
  CHECK_STATUS(cbg_cat_hash_string(NULL, 3, &hash), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_cat_hash_string("a", 1, NULL), CBG_ERR_NULL_POINTER);

  /* load errors */
  CHECK_STATUS(cbg_model_load_buffer(k_model_json, strlen(k_model_json), 7, &m), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_model_load_buffer(k_model_json, strlen(k_model_json), CBG_MODEL_FORMAT_JSON, NULL),
               CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_model_load_buffer(NULL, 5, CBG_MODEL_FORMAT_JSON, &m), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_model_load_buffer("CBM1", 4, CBG_MODEL_FORMAT_CBM, &m), CBG_ERR_FORMAT);
  CHECK(m == NULL);
  CHECK_STATUS(cbg_model_load_buffer(k_model_json, strlen(k_model_json), CBG_MODEL_FORMAT_CBM, &m), CBG_ERR_FORMAT);
  CHECK_STATUS(cbg_model_load_buffer("{}", 2, CBG_MODEL_FORMAT_JSON, &m), CBG_ERR_FORMAT);
  CHECK_STATUS(cbg_model_load_buffer("{\"features_info\": {}, \"trees\": []}", 34, CBG_MODEL_FORMAT_JSON, &m),
               CBG_ERR_UNSUPPORTED);
  CHECK_STATUS(cbg_model_load_file("/nonexistent/model.cbm", CBG_MODEL_FORMAT_CBM, &m), CBG_ERR_IO);
  CHECK_STATUS(cbg_model_load_file(NULL, CBG_MODEL_FORMAT_CBM, &m), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_model_free(NULL), CBG_OK);

  CHECK_STATUS(cbg_model_load_buffer(k_model_json, strlen(k_model_json), CBG_MODEL_FORMAT_JSON, &m), CBG_OK);
  memset(&info, 0, sizeof(info));
  CHECK_STATUS(cbg_model_info(m, &info), CBG_ERR_INVALID_ARGUMENT);
  info.struct_size = sizeof(info);
  CHECK_STATUS(cbg_model_info(m, &info), CBG_OK);
  CHECK(info.n_trees == 2 && info.approx_dimension == 1 && info.n_flat_features == 2);
  CHECK(info.n_float_features == 1 && info.n_cat_features == 1 && info.n_class_names == 2);
  CHECK_STATUS(cbg_model_feature_name(m, 1, &name), CBG_OK);
  CHECK(strcmp(name, "c") == 0);
  CHECK_STATUS(cbg_model_feature_name(m, 2, &name), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_model_cat_feature_index(m, 0, &flat), CBG_OK);
  CHECK(flat == 1);
  CHECK_STATUS(cbg_model_float_feature_index(m, 0, &flat), CBG_OK);
  CHECK(flat == 0);
  CHECK_STATUS(cbg_model_cat_feature_index(m, 1, &flat), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_model_class_name(m, 1, &name), CBG_OK);
  CHECK(strcmp(name, "yes") == 0);
  CHECK_STATUS(cbg_model_info_value(m, "params", &name), CBG_OK);
  CHECK(name != NULL && strstr(name, "Logloss") != NULL);
  CHECK_STATUS(cbg_model_info_value(m, "absent", &name), CBG_OK);
  CHECK(name == NULL);
  CHECK_STATUS(cbg_model_prediction_columns(m, CBG_PREDICTION_PROBABILITY, &cols), CBG_OK);
  CHECK(cols == 2);
  CHECK_STATUS(cbg_model_prediction_columns(m, 99, &cols), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_model_prediction_columns(m, CBG_PREDICTION_RMSE_WITH_UNCERTAINTY, &cols), CBG_ERR_UNSUPPORTED);

  /* predict: rows (x=0, "a"), (x=1, "zz"), (x=NaN -> +inf, "a") */
  floats[2] = NAN;
  cats[0] = a_hash;
  CHECK_STATUS(cbg_cat_hash_string("zz", 2, &cats[1]), CBG_OK);
  cats[2] = a_hash;
  CHECK_STATUS(cbg_model_predict_host_desc_init(&d), CBG_OK);
  d.n_rows = 3;
  d.float_features = floats;
  d.float_row_stride = 1;
  d.cat_hashes = cats;
  d.cat_row_stride = 1;
  CHECK_STATUS(cbg_model_predict_host(m, &d, out, 3), CBG_OK);
  CHECK(out[0] == 3 + 10 + 0.25 && out[1] == 2 + 20 + 0.25 && out[2] == 4 + 20 + 0.25);
  CHECK_STATUS(cbg_model_predict_host(m, &d, out, 2), CBG_ERR_SHAPE);
  CHECK_STATUS(cbg_model_predict_host(m, &d, NULL, 3), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_model_predict_host(m, NULL, out, 3), CBG_ERR_NULL_POINTER);
  d.tree_begin = 1;
  CHECK_STATUS(cbg_model_predict_host(m, &d, out, 3), CBG_OK);
  CHECK(out[0] == 10 && out[1] == 20);
  d.tree_end = 5;
  CHECK_STATUS(cbg_model_predict_host(m, &d, out, 3), CBG_ERR_INVALID_ARGUMENT);
  d.tree_begin = 0;
  d.tree_end = 0;
  CHECK_STATUS(cbg_model_leaf_indexes_host(m, &d, leaves, 6), CBG_OK);
  CHECK(leaves[0] == 2 && leaves[1] == 0 && leaves[2] == 1 && leaves[3] == 1 && leaves[4] == 3);
  d.prediction_type = CBG_PREDICTION_CLASS;
  CHECK_STATUS(cbg_model_predict_host(m, &d, out, 3), CBG_OK);
  CHECK(out[0] == 1.0);
  d.prediction_type = 42;
  CHECK_STATUS(cbg_model_predict_host(m, &d, out, 3), CBG_ERR_INVALID_ARGUMENT);
  d.prediction_type = CBG_PREDICTION_RAW_FORMULA_VAL;
  d.float_row_stride = 0;
  CHECK_STATUS(cbg_model_predict_host(m, &d, out, 3), CBG_ERR_INVALID_ARGUMENT);
  d.float_row_stride = 1;
  d.struct_size = 3;
  CHECK_STATUS(cbg_model_predict_host(m, &d, out, 3), CBG_ERR_INVALID_ARGUMENT);
  d.struct_size = sizeof(d);

  /* save and reload: cbm and json, buffer and file */
  CHECK_STATUS(cbg_model_save_buffer(m, 5, &bytes, &size), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_model_save_buffer(m, CBG_MODEL_FORMAT_CBM, NULL, &size), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_model_save_buffer(m, CBG_MODEL_FORMAT_CBM, &bytes, &size), CBG_OK);
  CHECK(size > 8 && memcmp(bytes, "CBM1", 4) == 0);
  copy = (char*)malloc(size);
  memcpy(copy, bytes, size);
  CHECK_STATUS(cbg_model_load_buffer(copy, size, CBG_MODEL_FORMAT_CBM, &m2), CBG_OK);
  free(copy);
  CHECK_STATUS(cbg_model_predict_host(m2, &d, out + 3, 3), CBG_OK);
  CHECK(out[3] == 3 + 10 + 0.25 && out[5] == 4 + 20 + 0.25);
  CHECK_STATUS(cbg_model_free(m2), CBG_OK);
  CHECK_STATUS(cbg_model_save_buffer(m, CBG_MODEL_FORMAT_JSON, &bytes, &size), CBG_OK);
  CHECK(size > 0 && ((const char*)bytes)[0] == '{');
  CHECK_STATUS(cbg_model_save_file(m, path, CBG_MODEL_FORMAT_CBM), CBG_OK);
  CHECK_STATUS(cbg_model_save_file(m, "/nonexistent/dir/m.cbm", CBG_MODEL_FORMAT_CBM), CBG_ERR_IO);
  CHECK_STATUS(cbg_model_load_file(path, CBG_MODEL_FORMAT_CBM, &m2), CBG_OK);
  remove(path);
  CHECK_STATUS(cbg_model_free(m2), CBG_OK);

  /* freed and foreign handles */
  CHECK_STATUS(cbg_model_free(m), CBG_OK);
  CHECK_STATUS(cbg_model_free(m), CBG_ERR_INVALID_HANDLE);
  CHECK_STATUS(cbg_model_info(m, &info), CBG_ERR_INVALID_HANDLE);
  CHECK_STATUS(cbg_model_predict_host(m, &d, out, 3), CBG_ERR_INVALID_HANDLE);
  CHECK_STATUS(cbg_model_info((const cbg_model_t*)&info, &info), CBG_ERR_INVALID_HANDLE);
}

/* cbg_predict_*: k_pool_model_json is k_model_json with the one-hot value of the integer 7
 * (CatBoost hashes integers as decimal text: "7" -> -17943309). On a CPU context the host
 * evaluator reads the pool's columns; the argument checks hold without a GPU. */
static const char* k_pool_model_json =
    "{\"features_info\": {\"float_features\": [{\"borders\": [0.5], \"feature_id\": \"x\", \"feature_index\": 0,"
    " \"flat_feature_index\": 0, \"has_nans\": true, \"nan_value_treatment\": \"AsTrue\"}],"
    " \"categorical_features\": [{\"feature_id\": \"c\", \"feature_index\": 0, \"flat_feature_index\": 1,"
    " \"values\": [-17943309]}]},"
    " \"model_info\": {\"params\": {\"loss_function\": {\"type\": \"Logloss\"}}},"
    " \"oblivious_trees\": [{\"splits\": [{\"split_index\": 0}, {\"split_index\": 1}], \"leaf_values\": [1, 2, 3, 4]},"
    " {\"splits\": [{\"split_index\": 0}], \"leaf_values\": [10, 20]}],"
    " \"scale_and_bias\": [1, [0.25]]}";

static void test_predict_from_pools(void) {
  float x[3] = {0.0f, 1.0f, NAN};
  int64_t c[3] = {7, 8, 7};
  double out[6];
  int64_t shape[2] = {0, 0};
  fake_tensor fx, fc, fout;
  cbg_tensor_ref_t columns[2];
  int32_t cat[1] = {1};
  cbg_pool_desc_t pd;
  cbg_pool_t* pool = NULL;
  cbg_model_t* m = NULL;
  cbg_predict_desc_t d;
  cbg_tensor_ref_t ref;
  cbg_context_t* ctx = cpu_context();

  CHECK_STATUS(cbg_model_load_buffer(k_pool_model_json, strlen(k_pool_model_json), CBG_MODEL_FORMAT_JSON, &m), CBG_OK);
  CHECK_STATUS(cbg_predict_desc_init(NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_predict_desc_init(&d), CBG_OK);
  CHECK(d.struct_size == sizeof(d) && d.prediction_type == CBG_PREDICTION_RAW_FORMULA_VAL &&
        d.output == CBG_PREDICT_VALUES && d.tree_begin == 0 && d.tree_end == 0);
  CHECK_STATUS(cbg_predict_output_shape(m, NULL, 3, shape), CBG_OK);
  CHECK(shape[0] == 3 && shape[1] == 1);
  d.prediction_type = CBG_PREDICTION_PROBABILITY;
  CHECK_STATUS(cbg_predict_output_shape(m, &d, 3, shape), CBG_OK);
  CHECK(shape[1] == 2);
  d.output = CBG_PREDICT_LEAF_INDEXES;
  d.tree_begin = 1;
  CHECK_STATUS(cbg_predict_output_shape(m, &d, 3, shape), CBG_OK);
  CHECK(shape[0] == 3 && shape[1] == 1);
  CHECK_STATUS(cbg_predict_output_shape(m, &d, -1, shape), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_predict_output_shape(m, &d, 3, NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_predict_output_shape(NULL, &d, 3, shape), CBG_ERR_NULL_POINTER);
  d.struct_size = 4;
  CHECK_STATUS(cbg_predict_output_shape(m, &d, 3, shape), CBG_ERR_INVALID_ARGUMENT);
  cbg_predict_desc_init(&d);
  d.prediction_type = 42;
  CHECK_STATUS(cbg_predict_output_shape(m, &d, 3, shape), CBG_ERR_INVALID_ARGUMENT);
  d.prediction_type = CBG_PREDICTION_RMSE_WITH_UNCERTAINTY;
  CHECK_STATUS(cbg_predict_output_shape(m, &d, 3, shape), CBG_ERR_UNSUPPORTED);
  cbg_predict_desc_init(&d);
  d.tree_end = 3;
  CHECK_STATUS(cbg_predict_output_shape(m, &d, 3, shape), CBG_ERR_INVALID_ARGUMENT);

  /* A CPU pool: x (float32) and c (int64, categorical). */
  fake_init(&fx, x, kDLCPU, kDLFloat, 32, 1, 3, 0);
  fake_init(&fc, c, kDLCPU, kDLInt, 64, 1, 3, 0);
  columns[0] = borrowed(&fx);
  columns[1] = borrowed(&fc);
  cbg_pool_desc_init(&pd);
  pd.columns = columns;
  pd.n_columns = 2;
  pd.cat_features = cat;
  pd.n_cat_features = 1;
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &pd, &pool), CBG_OK);

  /* rows (0, 7), (1, 8), (NaN -> +inf, 7): 3 + 10, 2 + 20, 4 + 20, plus the bias */
  fake_init(&fout, out, kDLCPU, kDLFloat, 64, 2, 3, 1);
  ref = borrowed(&fout);
  CHECK_STATUS(cbg_predict_to_host(m, pool, NULL, &ref, NULL), CBG_OK);
  CHECK(out[0] == 13.25 && out[1] == 22.25 && out[2] == 24.25);
  cbg_predict_desc_init(&d);
  d.tree_begin = 1;
  CHECK_STATUS(cbg_predict_to_host(m, pool, &d, &ref, NULL), CBG_OK);
  CHECK(out[0] == 10 && out[1] == 20 && out[2] == 20);
  d.output = CBG_PREDICT_LEAF_INDEXES;
  d.tree_begin = 0;
  fout.shape[1] = 2;
  CHECK_STATUS(cbg_predict_to_host(m, pool, &d, &ref, NULL), CBG_OK);
  CHECK(out[0] == 2 && out[1] == 0 && out[2] == 1 && out[3] == 1 && out[4] == 3 && out[5] == 1);
  /* Errors: shape, NULLs, a CPU pool into the device entry point, a read-only output. */
  CHECK_STATUS(cbg_predict_to_host(m, pool, NULL, &ref, NULL), CBG_ERR_SHAPE);
  CHECK(strstr(cbg_last_error(), "cbg_predict_output_shape") != NULL);
  fout.shape[1] = 1;
  CHECK_STATUS(cbg_predict_to_host(m, pool, NULL, NULL, NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_predict_to_host(m, NULL, NULL, &ref, NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_predict_to_host((cbg_model_t*)pool, pool, NULL, &ref, NULL), CBG_ERR_INVALID_HANDLE);
  CHECK_STATUS(cbg_predict_to_device(m, pool, NULL, &ref, NULL), CBG_ERR_NO_DEVICE);
  fout.managed.flags = 1; /* DLPACK_FLAG_BITMASK_READ_ONLY */
  ref.kind = CBG_TENSOR_DLPACK_VERSIONED;
  ref.ptr = &fout.managed;
  CHECK_STATUS(cbg_predict_to_host(m, pool, NULL, &ref, NULL), CBG_ERR_READ_ONLY);
  CHECK(fout.deleted == 0); /* outputs are borrowed */

  CHECK_STATUS(cbg_pool_free(pool), CBG_OK);
  CHECK_STATUS(cbg_model_free(m), CBG_OK);
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK);
}

/* cbg_get_api: the table holds the very functions the library exports. */
static void test_api_table(void) {
  const void* raw = NULL;
  const cbg_api_v1_t* t;
  cbg_context_t* ctx = NULL;
  int32_t device = 0;
  CHECK_STATUS(cbg_get_api(CBG_API_VERSION_1, NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_get_api(CBG_API_VERSION_1 + 1u, &raw), CBG_ERR_UNSUPPORTED);
  CHECK(raw == NULL);
  CHECK(strstr(cbg_last_error(), "version") != NULL);
  CHECK_STATUS(cbg_get_api(0u, &raw), CBG_ERR_UNSUPPORTED);
  CHECK_STATUS(cbg_get_api(CBG_API_VERSION_1, &raw), CBG_OK);
  t = (const cbg_api_v1_t*)raw;
  CHECK(t != NULL);
  if (t == NULL) return;
  CHECK(t->struct_size == sizeof(cbg_api_v1_t));
  CHECK(t->api_version == CBG_API_VERSION_1);
  CHECK(t->library_version == cbg_version_number());
  CHECK(t->status_string == cbg_status_string);
  CHECK(t->context_create == cbg_context_create);
  CHECK(t->model_leaf_indexes_host == cbg_model_leaf_indexes_host);
  /* The same table every time, and usable. */
  {
    const void* again = NULL;
    CHECK_STATUS(cbg_get_api(CBG_API_VERSION_1, &again), CBG_OK);
    CHECK(again == raw);
  }
  {
    cbg_context_desc_t cd;
    CHECK_STATUS(t->context_desc_init(&cd), CBG_OK);
    cd.device = CBG_DEVICE_CPU;
    CHECK_STATUS(t->context_create(&cd, &ctx), CBG_OK);
    CHECK_STATUS(t->context_device(ctx, &device), CBG_OK);
    CHECK(device == CBG_DEVICE_CPU);
    CHECK_STATUS(t->context_free(ctx), CBG_OK);
  }
}

/* ---- training --------------------------------------------------------------------------------- */
static int progress_calls = 0;
static int32_t stop_after_three(void* user, const cbg_train_progress_t* p) {
  ++*(int*)user;
  ++progress_calls;
  CHECK(p->struct_size == sizeof(cbg_train_progress_t));
  CHECK(p->iteration == progress_calls - 1 && p->iterations == 50);
  CHECK(p->metric != NULL && strcmp(p->metric, "RMSE") == 0);
  CHECK(p->has_learn_metric == 1 && p->has_eval_metric == 1 && p->learn_metric > 0);
  return p->iteration >= 2;
}

static void test_train(void) {
  enum { rows = 200 };
  static float x[rows * 2];
  static float y[rows];
  fake_tensor features, label, eval_features, eval_label;
  cbg_pool_desc_t desc;
  cbg_pool_t* pool = NULL;
  cbg_pool_t* eval = NULL;
  cbg_model_t* model = NULL;
  cbg_model_info_t info;
  cbg_train_callbacks_t callbacks;
  cbg_context_t* ctx = cpu_context();
  const char* value = NULL;
  int calls = 0;
  int i;
  for (i = 0; i < rows; ++i) {
    x[i] = (float)(i % 17);
    x[rows + i] = (float)((i * 7) % 13);
    y[i] = x[i] * 0.5f - (x[rows + i] > 6.0f ? 2.0f : 0.0f);
  }
  cbg_pool_desc_init(&desc);
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, rows, 2);
  features.strides[0] = 1;
  features.strides[1] = rows;
  features.managed.dl_tensor.strides = features.strides;
  fake_init(&label, y, kDLCPU, kDLFloat, 32, 1, rows, 0);
  desc.features = consumed(&features);
  desc.label = consumed(&label);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_OK);
  fake_init(&eval_features, x, kDLCPU, kDLFloat, 32, 2, rows, 2);
  eval_features.strides[0] = 1;
  eval_features.strides[1] = rows;
  eval_features.managed.dl_tensor.strides = eval_features.strides;
  fake_init(&eval_label, y, kDLCPU, kDLFloat, 32, 1, rows, 0);
  desc.features = consumed(&eval_features);
  desc.label = consumed(&eval_label);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &eval), CBG_OK);

  CHECK_STATUS(cbg_train_callbacks_init(NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_train_callbacks_init(&callbacks), CBG_OK);
  CHECK(callbacks.struct_size == sizeof(callbacks) && callbacks.on_iteration == NULL);

  /* Error paths: null pointers, dead handles, parameters named in the message. */
  CHECK_STATUS(cbg_train(pool, "{}", NULL, NULL, NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_train(NULL, "{}", NULL, NULL, &model), CBG_ERR_NULL_POINTER);
  CHECK(model == NULL);
  CHECK_STATUS(cbg_train((cbg_pool_t*)&info, "{}", NULL, NULL, &model), CBG_ERR_INVALID_HANDLE);
  CHECK_STATUS(cbg_train(pool, "{\"depth\": 99}", NULL, NULL, &model), CBG_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cbg_last_error(), "'depth'") != NULL);
  CHECK_STATUS(cbg_train(pool, "{\"no_such_parameter\": 1}", NULL, NULL, &model), CBG_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cbg_last_error(), "no_such_parameter") != NULL);
  CHECK_STATUS(cbg_train(pool, "not json", NULL, NULL, &model), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_train(pool, "{\"boosting_type\": \"Ordered\"}", NULL, NULL, &model), CBG_ERR_NOT_IMPLEMENTED);
  CHECK_STATUS(cbg_train(pool, "{\"loss_function\": \"Logloss\"}", NULL, NULL, &model), CBG_ERR_BAD_DATA);
  callbacks.struct_size = 3;
  CHECK_STATUS(cbg_train(pool, NULL, NULL, &callbacks, &model), CBG_ERR_INVALID_ARGUMENT);
  CHECK(model == NULL);

  /* Defaults (NULL params) train 1000 trees; a callback that stops after three iterations. */
  CHECK_STATUS(cbg_train_callbacks_init(&callbacks), CBG_OK);
  callbacks.on_iteration = stop_after_three;
  callbacks.user_data = &calls;
  CHECK_STATUS(
      cbg_train(pool, "{\"iterations\": 50, \"depth\": 3, \"use_best_model\": false}", eval, &callbacks, &model),
      CBG_OK);
  CHECK(calls == 3);
  info.struct_size = sizeof(info);
  CHECK_STATUS(cbg_model_info(model, &info), CBG_OK);
  CHECK(info.n_trees == 3 && info.approx_dimension == 1 && info.n_float_features == 2);
  CHECK_STATUS(cbg_model_info_value(model, "params", &value), CBG_OK);
  CHECK(value != NULL && strstr(value, "\"depth\":3") != NULL);
  CHECK_STATUS(cbg_model_free(model), CBG_OK);
  model = NULL;
  CHECK_STATUS(cbg_train(pool, NULL, NULL, NULL, &model), CBG_OK);
  CHECK_STATUS(cbg_model_info(model, &info), CBG_OK);
  CHECK(info.n_trees == 1000);
  CHECK_STATUS(cbg_model_free(model), CBG_OK);

  CHECK_STATUS(cbg_pool_free(eval), CBG_OK);
  CHECK_STATUS(cbg_pool_free(pool), CBG_OK);
  CHECK(features.deleted == 1 && label.deleted == 1);
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK);
}

/* ---- categorical input: string columns, Arrow import (issue 5) ------------------------------ */
static int schema_releases = 0;
static int array_releases = 0;
static void release_schema(struct ArrowSchema* s) {
  ++schema_releases;
  s->release = NULL;
}
static void release_array(struct ArrowArray* a) {
  ++array_releases;
  a->release = NULL;
}
static void release_child_schema(struct ArrowSchema* s) { s->release = NULL; }
static void release_child_array(struct ArrowArray* a) { a->release = NULL; }

/* Stage timings: off by default (an empty object), on with cbg_context_desc_t.profile; a host training
 * times its boosting stages, once per iteration for the weak target; reset clears them. */
static void test_stage_times(void) {
  enum { rows = 100 };
  static float x[rows];
  static float y[rows];
  fake_tensor features, label;
  cbg_pool_desc_t desc;
  cbg_pool_t* pool = NULL;
  cbg_model_t* model = NULL;
  cbg_context_desc_t d;
  cbg_context_t* ctx = NULL;
  cbg_context_t* quiet = cpu_context();
  const char* json = NULL;
  const char* at = NULL;
  int i;
  for (i = 0; i < rows; ++i) {
    x[i] = (float)(i % 11);
    y[i] = x[i] * 0.25f;
  }
  CHECK_STATUS(cbg_context_stage_times(quiet, &json), CBG_OK);
  CHECK(json != NULL && strcmp(json, "{}") == 0);
  CHECK_STATUS(cbg_context_stage_times(quiet, NULL), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_context_stage_times(NULL, &json), CBG_ERR_NULL_POINTER);
  CHECK_STATUS(cbg_context_free(quiet), CBG_OK);

  cbg_context_desc_init(&d);
  CHECK(d.profile == 0);
  d.device = CBG_DEVICE_CPU;
  d.profile = 2;
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cbg_last_error(), "profile") != NULL);
  d.profile = 1;
  CHECK_STATUS(cbg_context_create(&d, &ctx), CBG_OK);
  /* A caller built against the header before `profile` existed: profiling stays off. */
  d.struct_size = offsetof(cbg_context_desc_t, profile);
  d.profile = 1;
  CHECK_STATUS(cbg_context_create(&d, &quiet), CBG_OK);

  cbg_pool_desc_init(&desc);
  fake_init(&features, x, kDLCPU, kDLFloat, 32, 2, rows, 1);
  fake_init(&label, y, kDLCPU, kDLFloat, 32, 1, rows, 0);
  desc.features = consumed(&features);
  desc.label = consumed(&label);
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &desc, &pool), CBG_OK);
  CHECK_STATUS(cbg_train(pool, "{\"iterations\": 7, \"depth\": 2}", NULL, NULL, &model), CBG_OK);
  CHECK_STATUS(cbg_context_stage_times(ctx, &json), CBG_OK);
  at = json != NULL ? strstr(json, "\"boosting.weak_target\":{\"calls\":7,") : NULL;
  CHECK(at != NULL);
  CHECK(json != NULL && strstr(json, "\"boosting.search\"") != NULL);
  CHECK_STATUS(cbg_context_stage_times_reset(ctx), CBG_OK);
  CHECK_STATUS(cbg_context_stage_times(ctx, &json), CBG_OK);
  CHECK(json != NULL && strcmp(json, "{}") == 0);
  CHECK_STATUS(cbg_context_stage_times(quiet, &json), CBG_OK);
  CHECK(json != NULL && strcmp(json, "{}") == 0);
  cbg_model_free(model);
  cbg_pool_free(pool);
  CHECK_STATUS(cbg_context_free(quiet), CBG_OK);
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK);
}

static void test_categorical_input(void) {
  cbg_context_t* ctx = cpu_context();
  /* "a", "", "bb" in Arrow's utf8 layout */
  int32_t offsets[4] = {0, 1, 1, 3};
  uint8_t bytes[3] = {'a', 'b', 'b'};
  int8_t codes[4] = {2, 0, 1, 2};
  uint32_t want[3], got[4];
  fake_tensor off, data, code_t;
  cbg_string_column_t col;
  cbg_pool_desc_t pd;
  cbg_pool_t* pool = NULL;
  CHECK_STATUS(cbg_cat_hash_string("a", 1, &want[0]), CBG_OK);
  CHECK_STATUS(cbg_cat_hash_string("", 0, &want[1]), CBG_OK);
  CHECK_STATUS(cbg_cat_hash_string("bb", 2, &want[2]), CBG_OK);
  fake_init(&off, offsets, 1 /* kDLCPU */, 0 /* int */, 32, 1, 4, 0);
  fake_init(&data, bytes, 1, 1 /* uint */, 8, 1, 3, 0);
  fake_init(&code_t, codes, 1, 0, 8, 1, 4, 0);
  memset(&col, 0, sizeof(col));
  col.feature = 0;
  col.offsets = consumed(&off);
  col.bytes = borrowed(&data);
  col.codes = consumed(&code_t);
  CHECK_STATUS(cbg_pool_desc_init(&pd), CBG_OK);
  pd.string_columns = &col;
  pd.n_string_columns = 1;
  CHECK_STATUS(cbg_pool_from_dlpack(ctx, &pd, &pool), CBG_OK);
  CHECK_STATUS(cbg_pool_cat_hashes(pool, 0, got, 4), CBG_OK);
  CHECK(got[0] == want[2] && got[1] == want[0] && got[2] == want[1] && got[3] == want[2]);
  CHECK_STATUS(cbg_pool_cat_hashes(pool, 0, got, 3), CBG_ERR_SHAPE);
  CHECK_STATUS(cbg_pool_cat_hashes(pool, 1, got, 4), CBG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(cbg_pool_free(pool), CBG_OK);
  CHECK(off.deleted == 1 && code_t.deleted == 1 && data.deleted == 0);

  /* The same strings as an Arrow struct<s: utf8>: the schema is released, the array moved in. */
  {
    struct ArrowSchema child_schema, schema;
    struct ArrowSchema* child_schemas[1];
    struct ArrowArray child_array;
    struct ArrowArray* child_arrays[1];
    struct ArrowDeviceArray array;
    const void* child_buffers[3];
    const void* parent_buffers[1] = {NULL};
    memset(&child_schema, 0, sizeof(child_schema));
    memset(&schema, 0, sizeof(schema));
    memset(&child_array, 0, sizeof(child_array));
    memset(&array, 0, sizeof(array));
    child_schema.format = "u";
    child_schema.name = "s";
    child_schema.release = release_child_schema;
    child_schemas[0] = &child_schema;
    schema.format = "+s";
    schema.n_children = 1;
    schema.children = child_schemas;
    schema.release = release_schema;
    child_buffers[0] = NULL;
    child_buffers[1] = offsets;
    child_buffers[2] = bytes;
    child_array.length = 3;
    child_array.n_buffers = 3;
    child_array.buffers = child_buffers;
    child_array.release = release_child_array;
    child_arrays[0] = &child_array;
    array.array.length = 3;
    array.array.n_buffers = 1;
    array.array.buffers = parent_buffers;
    array.array.n_children = 1;
    array.array.children = child_arrays;
    array.array.release = release_array;
    array.device_type = ARROW_DEVICE_CPU;
    pool = NULL;
    CHECK_STATUS(cbg_pool_from_arrow(ctx, NULL, &schema, &array, &pool), CBG_OK);
    CHECK(schema_releases == 1 && array_releases == 0 && schema.release == NULL && array.array.release == NULL);
    CHECK_STATUS(cbg_pool_cat_hashes(pool, 0, got, 4), CBG_OK);
    CHECK(got[0] == want[0] && got[1] == want[1] && got[2] == want[2]);
    CHECK_STATUS(cbg_pool_free(pool), CBG_OK);
    CHECK(array_releases == 1);
    /* Released structs are refused; a NULL schema still releases the array. */
    CHECK_STATUS(cbg_pool_from_arrow(ctx, NULL, &schema, &array, &pool), CBG_ERR_INVALID_ARGUMENT);
    array.array.release = release_array;
    CHECK_STATUS(cbg_pool_from_arrow(ctx, NULL, NULL, &array, &pool), CBG_ERR_NULL_POINTER);
    CHECK(array_releases == 2 && schema_releases == 1);
  }
  CHECK_STATUS(cbg_context_free(ctx), CBG_OK);
}

int main(int argc, char** argv) {
  int gpu = argc > 1 && strcmp(argv[1], "--gpu") == 0;
  if (gpu) {
#ifdef CBG_TEST_WITH_CUDA
    int rc = test_gpu();
    if (rc != 0) return rc;
#else
    printf("SKIPPED: built without CUDA runtime access\n");
    return 77;
#endif
  } else {
    test_versions_and_status();
    test_logging();
    test_context();
    test_pool();
    test_tensor_copy();
    test_models();
    test_api_table();
    test_train();
    test_predict_from_pools();
    test_categorical_input();
    test_stage_times();
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
