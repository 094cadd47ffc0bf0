/* SPDX-License-Identifier: Apache-2.0
 * Training over several processes with the caller's own launcher (issue 9): every process owns one
 * GPU and its block of rows, creates an NCCL communicator over all ranks (the unique id goes from
 * rank 0 to the others through a file here; MPI_Bcast, torch.distributed or Dask do the same job)
 * and hands it to cbgpu through the context descriptor. Each rank gets the same model: the model
 * one GPU trains on all rows. run.sh starts two ranks on one machine and compares the files.
 *
 *   two_ranks <rank> <size> <id_file> <out_prefix> [rows]
 *
 * Writes <out_prefix>.<rank>.cbm; rank 0 also trains alone on all rows into <out_prefix>.single.cbm.
 * Each prints the peak device memory the library took on its context (the border computation over
 * all ranks' rows, then training): O(rows per rank) with the border sample.
 * NCCL is loaded with dlopen (no link-time dependency); the data are generated from the global row
 * index, so every rank can make its block and rank 0 the whole set. */
#define _DEFAULT_SOURCE 1
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <cbgpu/cbgpu.h>
#include <cbgpu/cbgpu_dlpack.h>

typedef struct {
  char internal[128];
} nccl_id;
typedef int (*get_id_fn)(nccl_id*);
typedef int (*init_rank_fn)(void**, int, nccl_id, int);
typedef int (*destroy_fn)(void*);

enum { FEATURES = 8 };

static void fail(const char* what) {
  fprintf(stderr, "two_ranks: %s\n", what);
  exit(1);
}
static void check(cbg_status s, const char* what) {
  if (s != CBG_OK) {
    fprintf(stderr, "two_ranks: %s: %s\n", what, cbg_last_error());
    exit(1);
  }
}

/* Feature f of global row r, and the row's label: a pure function of the row. */
static float value_at(int64_t r, int f) {
  uint64_t z = (uint64_t)r * 0x9e3779b97f4a7c15ull + (uint64_t)f * 0xbf58476d1ce4e5b9ull + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (float)((double)(z >> 11) / 9007199254740992.0 * 4.0 - 2.0);
}
static float label_at(int64_t r) {
  const float s = value_at(r, 0) + 0.5f * value_at(r, 1) * value_at(r, 1) - (value_at(r, 3) > 0.3f ? 1.0f : 0.0f);
  return s + 0.1f * value_at(r, FEATURES);
}

/* Trains on global rows [first, first + rows) of the generated set with `ctx`. */
static cbg_model_t* train_rows(cbg_context_t* ctx, int device, int64_t first, int64_t rows, const char* params) {
  float* host = (float*)malloc((size_t)rows * (FEATURES + 1) * sizeof(float));
  if (host == NULL) fail("out of host memory");
  for (int64_t r = 0; r < rows; ++r) {
    for (int f = 0; f < FEATURES; ++f) host[(size_t)f * (size_t)rows + (size_t)r] = value_at(first + r, f);
    host[(size_t)FEATURES * (size_t)rows + (size_t)r] = label_at(first + r);
  }
  float* dev = NULL;
  if (cudaMalloc((void**)&dev, (size_t)rows * (FEATURES + 1) * sizeof(float)) != cudaSuccess) fail("cudaMalloc");
  cudaMemcpy(dev, host, (size_t)rows * (FEATURES + 1) * sizeof(float), cudaMemcpyHostToDevice);
  free(host);
  int64_t x_shape[2] = {rows, FEATURES}, x_strides[2] = {1, rows}, y_shape[1] = {rows};
  DLTensor x, y;
  memset(&x, 0, sizeof(x));
  memset(&y, 0, sizeof(y));
  x.data = dev;
  x.device.device_type = kDLCUDA;
  x.device.device_id = device;
  x.ndim = 2;
  x.dtype.code = kDLFloat;
  x.dtype.bits = 32;
  x.dtype.lanes = 1;
  x.shape = x_shape;
  x.strides = x_strides;
  y = x;
  y.data = dev + (size_t)FEATURES * (size_t)rows;
  y.ndim = 1;
  y.shape = y_shape;
  y.strides = NULL;
  cbg_pool_desc_t pd;
  cbg_pool_desc_init(&pd);
  pd.features.kind = CBG_TENSOR_DLTENSOR;
  pd.features.ptr = &x;
  pd.label.kind = CBG_TENSOR_DLTENSOR;
  pd.label.ptr = &y;
  cbg_pool_t* pool = NULL;
  check(cbg_pool_from_dlpack(ctx, &pd, &pool), "cbg_pool_from_dlpack");
  cbg_model_t* model = NULL;
  check(cbg_train(pool, params, NULL, NULL, &model), "cbg_train");
  cbg_pool_free(pool);
  cudaFree(dev);
  return model;
}

static double peak_mb(const cbg_context_t* ctx) {
  cbg_memory_stats_t m;
  memset(&m, 0, sizeof(m));
  m.struct_size = sizeof(m);
  check(cbg_context_memory_stats(ctx, &m), "cbg_context_memory_stats");
  return (double)m.peak_bytes / 1e6;
}

static void save(cbg_model_t* model, const char* prefix, const char* name) {
  char path[4096];
  snprintf(path, sizeof(path), "%s.%s.cbm", prefix, name);
  check(cbg_model_save_file(model, path, CBG_MODEL_FORMAT_CBM), "cbg_model_save_file");
}

int main(int argc, char** argv) {
  if (argc < 5) fail("usage: two_ranks <rank> <size> <id_file> <out_prefix> [rows]");
  const int rank = atoi(argv[1]), size = atoi(argv[2]);
  const char* id_file = argv[3];
  const char* prefix = argv[4];
  const int64_t total = argc > 5 ? atoll(argv[5]) : 100000;
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess || visible == 0) {
    printf("two_ranks: no CUDA device visible: skipped\n");
    return 77;
  }
  if (visible < size) {
    printf("two_ranks: %d ranks need %d GPUs (one each), %d visible: skipped\n", size, size, visible);
    return 77;
  }
  const int device = rank;
  cudaSetDevice(device);

  void* nccl = dlopen("libnccl.so.2", RTLD_NOW);
  if (nccl == NULL) {
    printf("two_ranks: NCCL is not available (%s): skipped\n", dlerror());
    return 77;
  }
  get_id_fn get_id = NULL;
  init_rank_fn init_rank = NULL;
  destroy_fn destroy = NULL;
  /* POSIX's way to turn dlsym's object pointer into a function pointer. */
  *(void**)(&get_id) = dlsym(nccl, "ncclGetUniqueId");
  *(void**)(&init_rank) = dlsym(nccl, "ncclCommInitRank");
  *(void**)(&destroy) = dlsym(nccl, "ncclCommDestroy");
  if (get_id == NULL || init_rank == NULL || destroy == NULL) fail("NCCL symbols missing");

  /* The launcher's job: rank 0 makes the unique id, the others receive it. */
  nccl_id id;
  if (rank == 0) {
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", id_file);
    if (get_id(&id) != 0) fail("ncclGetUniqueId");
    FILE* f = fopen(tmp, "wb");
    if (f == NULL || fwrite(&id, sizeof(id), 1, f) != 1) fail("cannot write the id file");
    fclose(f);
    rename(tmp, id_file);
  } else {
    FILE* f = NULL;
    for (int i = 0; i < 6000 && (f = fopen(id_file, "rb")) == NULL; ++i) usleep(10000);
    if (f == NULL || fread(&id, sizeof(id), 1, f) != 1) fail("cannot read the id file");
    fclose(f);
  }
  void* comm = NULL;
  if (init_rank(&comm, size, id, rank) != 0) fail("ncclCommInitRank");

  /* Blocks of a multiple of 4096 rows (the last takes the rest): the single-GPU model exactly. */
  int64_t block = (total + size - 1) / size;
  block = (block + 4095) / 4096 * 4096;
  const int64_t first = block * rank;
  const int64_t rows = rank + 1 == size ? total - first : block;
  if (rows <= 0) fail("too few rows for the ranks");

  const char* params = "{\"loss_function\": \"RMSE\", \"iterations\": 30, \"depth\": 6, \"custom_metric\": [\"MAE\"]}";
  cbg_context_desc_t cd;
  cbg_context_desc_init(&cd);
  cd.device = device;
  cd.nccl_comm = comm;
  cd.nccl_rank = rank;
  cd.nccl_size = size;
  cbg_context_t* ctx = NULL;
  check(cbg_context_create(&cd, &ctx), "cbg_context_create");
  cbg_model_t* model = train_rows(ctx, device, first, rows, params);
  char name[32];
  snprintf(name, sizeof(name), "%d", rank);
  save(model, prefix, name);
  printf("rank %d of %d: rows %lld..%lld trained on device %d, peak device memory %.1f MB\n", rank, size,
         (long long)first, (long long)(first + rows), device, peak_mb(ctx));
  cbg_model_free(model);
  cbg_context_free(ctx);
  destroy(comm);

  if (rank == 0) {
    /* The reference: one GPU, every row. */
    cbg_context_desc_init(&cd);
    cd.device = device;
    check(cbg_context_create(&cd, &ctx), "cbg_context_create");
    model = train_rows(ctx, device, 0, total, params);
    printf("one GPU, all %lld rows: peak device memory %.1f MB\n", (long long)total, peak_mb(ctx));
    save(model, prefix, "single");
    cbg_model_free(model);
    cbg_context_free(ctx);
  }
  return 0;
}
