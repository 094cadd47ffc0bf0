/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cbgpu.h
 * @brief The stable C ABI of libcbgpu: CatBoost-compatible gradient boosting on NVIDIA GPUs.
 *
 * This header is the specification. Anything not declared here is not API.
 * It compiles as C99 and as C++, and depends only on <stddef.h> and <stdint.h>:
 * DLPack structs and CUDA streams are forward-declared, so callers need neither header to use it.
 *
 * Conventions that hold for every function below:
 *  - Every function that can fail returns a ::cbg_status; #CBG_OK (0) means success. On failure
 *    cbg_last_error() returns a message for the calling thread (see there).
 *  - No exception, abort or exit ever crosses this boundary; the library never prints unless a log
 *    callback is installed (cbg_set_log_callback()).
 *  - Handles are typed opaque pointers. `cbg_X_free(NULL)` is a no-op. A freed or foreign handle
 *    passed to any function returns #CBG_ERR_INVALID_HANDLE instead of crashing (handles are checked
 *    against a registry of live handles). Using one handle from several threads at once is allowed
 *    only where a function says "thread-safe". A handle freed while other threads are inside calls
 *    that use it does not crash them: those calls finish (the object is destroyed when the last of
 *    them returns) and every call that starts after the free returns #CBG_ERR_INVALID_HANDLE.
 *  - "Blocks" means the function returns after the work finished; "enqueues" means the work is
 *    ordered on the context's stream and may still be running when the function returns.
 *  - Descriptor structs start with `struct_size`; set it to sizeof(the struct) (the *_init helpers
 *    do). The library reads only the fields that fit in `struct_size`, so structs can grow.
 */
#ifndef CBGPU_CBGPU_H
#define CBGPU_CBGPU_H

#include <stddef.h>
#include <stdint.h>

#include "cbgpu/cbgpu_export.h"
#include "cbgpu/cbgpu_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------
 * Forward declarations of foreign types (no DLPack or CUDA header needed)
 * ---------------------------------------------------------------------------------------------- */

/** DLPack >= 1.0 managed tensor (dlpack.h). */
struct DLManagedTensorVersioned;
/** DLPack < 1.0 ("legacy") managed tensor (dlpack.h). */
struct DLManagedTensor;
/** A CUDA stream: the struct behind both `cudaStream_t` and `CUstream`. */
struct CUstream_st;
/** CUDA stream as seen by this API. NULL means "the context's own stream" where documented. */
typedef struct CUstream_st* cbg_stream_t;

/*
 * The Apache Arrow C data interface and C device data interface structs, declared as the Arrow
 * specification asks consumers to (https://arrow.apache.org/docs/format/CDeviceDataInterface.html):
 * verbatim layouts behind the ARROW_C_DATA_INTERFACE / ARROW_C_DEVICE_DATA_INTERFACE guards, so a
 * translation unit that also includes arrow/c/abi.h or nanoarrow sees each struct once.
 */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
/** Arrow C data interface: the type of an array (format string, children, dictionary). */
struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};
/** Arrow C data interface: the buffers of an array. */
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};
#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE
/** Arrow device types (the DLPack DLDeviceType values). */
typedef int32_t ArrowDeviceType;
#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2
#define ARROW_DEVICE_CUDA_HOST 3
#define ARROW_DEVICE_OPENCL 4
#define ARROW_DEVICE_VULKAN 7
#define ARROW_DEVICE_METAL 8
#define ARROW_DEVICE_VPI 9
#define ARROW_DEVICE_ROCM 10
#define ARROW_DEVICE_ROCM_HOST 11
#define ARROW_DEVICE_EXT_DEV 12
#define ARROW_DEVICE_CUDA_MANAGED 13
#define ARROW_DEVICE_ONEAPI 14
#define ARROW_DEVICE_WEBGPU 15
#define ARROW_DEVICE_HEXAGON 16
/** Arrow C device data interface: an array, the device its buffers live on, and the event that
 *  orders reads after the producer's writes (for CUDA a `cudaEvent_t*`, or NULL). */
struct ArrowDeviceArray {
  struct ArrowArray array;
  int64_t device_id;
  ArrowDeviceType device_type;
  void* sync_event;
  int64_t reserved[3];
};
#endif /* ARROW_C_DEVICE_DATA_INTERFACE */

/* ------------------------------------------------------------------------------------------------
 * Status codes. Values are frozen; new codes are only appended.
 * ---------------------------------------------------------------------------------------------- */

/** Result of every fallible function. Zero is success. */
typedef int32_t cbg_status;

#define CBG_OK 0                   /**< Success. */
#define CBG_ERR_INVALID_ARGUMENT 1 /**< A parameter value is out of range or inconsistent. */
#define CBG_ERR_NULL_POINTER 2     /**< A required pointer argument was NULL. */
#define CBG_ERR_INVALID_HANDLE 3   /**< A handle is freed, foreign, or of the wrong type. */
#define CBG_ERR_DTYPE 4            /**< A tensor's element type is not supported for its role. */
#define CBG_ERR_SHAPE 5            /**< A tensor's rank, shape or strides are unusable. */
#define CBG_ERR_DEVICE 6           /**< A tensor lives on a device this call cannot use. */
#define CBG_ERR_DLPACK_VERSION 7   /**< A DLPack tensor has an unsupported major version. */
#define CBG_ERR_READ_ONLY 8        /**< A read-only tensor was given where output is written. */
#define CBG_ERR_STRICT_D2H 9       /**< A device-to-host copy was refused by strict mode. */
#define CBG_ERR_OUT_OF_MEMORY 10   /**< A device or host allocation failed. */
#define CBG_ERR_CUDA 11            /**< A CUDA call failed; the context is still usable. */
#define CBG_ERR_CUDA_FATAL                                                                      \
  12                               /**< A sticky CUDA error: the process must recreate its CUDA \
                                        state (restart) before using the GPU again. */
#define CBG_ERR_NO_DEVICE 13       /**< No usable CUDA device (or driver) for the request. */
#define CBG_ERR_UNSUPPORTED 14     /**< A valid request this library does not support. */
#define CBG_ERR_NOT_IMPLEMENTED 15 /**< A planned feature that this build does not have yet. */
#define CBG_ERR_IO 16              /**< A file could not be read or written. */
#define CBG_ERR_FORMAT 17          /**< Input bytes (model file, data file) are malformed. */
#define CBG_ERR_BAD_DATA 18        /**< Values are invalid for their role (NaN label, ...). */
#define CBG_ERR_INTERNAL 19        /**< A bug in cbgpu; please report it with the message. */

/**
 * @brief Static English name and description of a status code ("CBG_ERR_SHAPE: ...").
 * @return Never NULL; unknown codes give "unknown status code". Thread-safe. @since 0.1
 */
CBG_API const char* cbg_status_string(cbg_status status);

/**
 * @brief The message of the last failed cbg_* call on the calling thread.
 *
 * Valid until the next cbg_* call on this thread (other than cbg_last_error() and
 * cbg_status_string()); never free it. Empty after a call that succeeded.
 * Thread-safe (thread-local). @since 0.1
 */
CBG_API const char* cbg_last_error(void);

/* ------------------------------------------------------------------------------------------------
 * Versions and build information
 * ---------------------------------------------------------------------------------------------- */

/** @brief CBG_VERSION_NUMBER of the loaded library, to compare with the header's. Thread-safe. @since 0.1 */
CBG_API uint32_t cbg_version_number(void);

/** @brief "MAJOR.MINOR.PATCH" of the loaded library (static storage). Thread-safe. @since 0.1 */
CBG_API const char* cbg_version_string(void);

/**
 * @brief Build and runtime facts as a JSON object.
 *
 * Keys: "version", "git_sha", "build_type", "cuda_runtime_version", "cuda_driver_version"
 * (0 when no driver is installed), "cuda_architectures", "cccl_version", "dlpack_version",
 * "compiler", "device_count", "strict_no_d2h_env".
 * @param[out] json  receives a NUL-terminated string with static storage duration; never free it.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER. Thread-safe; blocks (queries the driver once). @since 0.1
 */
CBG_API cbg_status cbg_build_info(const char** json);

/**
 * @brief Number of CUDA devices visible to this process (0 where there is no GPU or no driver).
 * @param[out] count receives the count; never fails for lack of a GPU.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER. Thread-safe; blocks. @since 0.1
 */
CBG_API cbg_status cbg_device_count(int32_t* count);

/* ------------------------------------------------------------------------------------------------
 * Logging. Silent by default.
 * ---------------------------------------------------------------------------------------------- */

#define CBG_LOG_TRACE 0
#define CBG_LOG_DEBUG 1
#define CBG_LOG_INFO 2
#define CBG_LOG_WARN 3
#define CBG_LOG_ERROR 4
#define CBG_LOG_CRITICAL 5
#define CBG_LOG_OFF 6

/**
 * @brief Receives one log record.
 * @param user_data  the pointer given to cbg_set_log_callback().
 * @param level      one of CBG_LOG_*.
 * @param category   the emitting component, e.g. "cbgpu.pool" (valid during the call only).
 * @param message    the text, without trailing newline (valid during the call only).
 * May be called from any thread that calls into the library, concurrently; it must not call back
 * into cbg_set_log_callback().
 */
typedef void (*cbg_log_fn)(void* user_data, int32_t level, const char* category, const char* message);

/**
 * @brief Installs (or, with fn == NULL, removes) the process-wide log callback.
 * @param fn         callback, or NULL to silence the library.
 * @param user_data  passed back to fn unchanged.
 * @param min_level  records below this level are dropped (CBG_LOG_TRACE..CBG_LOG_OFF).
 * @return #CBG_OK, #CBG_ERR_INVALID_ARGUMENT (level out of range). Thread-safe; blocks. @since 0.1
 */
CBG_API cbg_status cbg_set_log_callback(cbg_log_fn fn, void* user_data, int32_t min_level);

/* ------------------------------------------------------------------------------------------------
 * Context: device, stream, memory, seed, log level, copy accounting
 * ---------------------------------------------------------------------------------------------- */

/** Opaque context handle. */
typedef struct cbg_context_t cbg_context_t;

#define CBG_DEVICE_CPU (-1)  /**< Host reference path: no GPU is touched. */
#define CBG_DEVICE_AUTO (-2) /**< The current CUDA device if one is visible, else CBG_DEVICE_CPU. */

/** Context flag: refuse device-to-host copies above 64 KiB per call (also: env CBGPU_STRICT_NO_D2H=1). */
#define CBG_CONTEXT_STRICT_NO_D2H (1u << 0)

/** Caller-provided stream-ordered device allocator (both hooks or neither). */
typedef void* (*cbg_device_alloc_fn)(size_t bytes, cbg_stream_t stream, void* user_data);
/** Frees memory from the matching cbg_device_alloc_fn, ordered on `stream`. */
typedef void (*cbg_device_free_fn)(void* ptr, size_t bytes, cbg_stream_t stream, void* user_data);

/** Describes a context to create. Initialise with cbg_context_desc_init(). @since 0.1 */
typedef struct cbg_context_desc_t {
  size_t struct_size;           /**< sizeof(cbg_context_desc_t). */
  int32_t device;               /**< CUDA ordinal, CBG_DEVICE_CPU, or CBG_DEVICE_AUTO (default). */
  int32_t log_level;            /**< Records of this context below this level are dropped (default
                                     CBG_LOG_TRACE: the callback's own min_level decides). */
  uint64_t seed;                /**< Seed for everything random done with this context (default 0). */
  cbg_stream_t stream;          /**< Stream to work on, borrowed; NULL (default): the context creates and
                                     owns a non-blocking stream. Ignored for CBG_DEVICE_CPU. */
  uint32_t flags;               /**< CBG_CONTEXT_* bits (default 0). */
  cbg_device_alloc_fn alloc_fn; /**< NULL (default): a stream-ordered pool of the context's own
                                     (cudaMallocFromPoolAsync); it keeps the memory a call frees for
                                     that call's reuse, and cbg_train gives it back when it returns. */
  cbg_device_free_fn free_fn;   /**< Must be set exactly when alloc_fn is. */
  void* alloc_user_data;        /**< Passed to alloc_fn/free_fn. */
  size_t device_memory_limit;   /**< Budget for this context's device memory in bytes (default 0:
                                     none). An allocation that would exceed it fails with
                                     #CBG_ERR_OUT_OF_MEMORY naming the budget; the call that made
                                     it fails cleanly and the context stays usable. @since 0.1 */
  /* Training over several processes (one GPU each) with the caller's launcher (MPI, torchrun,
   * Dask, ...): the caller creates an NCCL communicator over all ranks (ncclCommInitRank, the
   * unique id exchanged by its launcher), with this context's device current, and passes it here.
   * cbg_train on a pool of this context then trains on every rank's rows together: each process
   * calls it with its own rows (the same parameters and seed everywhere) and gets the same model,
   * which is the single-GPU model of all rows in rank order when every rank but the last holds a
   * multiple of 4096 rows (else equal up to the last bits of metric sums; see README). An eval set
   * must be given on every rank or on none; a progress callback must answer alike on every rank.
   * The communicator is borrowed: it must outlive the context and not be used by others during a
   * cbg_train. NCCL is loaded at run time (libnccl.so.2); without it cbg_context_create returns
   * #CBG_ERR_UNSUPPORTED when nccl_comm is set. @since 0.1 */
  void* nccl_comm;   /**< ncclComm_t, or NULL (default): this process trains alone. */
  int32_t nccl_rank; /**< This process's rank in nccl_comm (default 0). */
  int32_t nccl_size; /**< The communicator's size (default 0: no communicator). */
  /** 1: time the library's stages on this context (read them with cbg_context_stage_times()). Each
   * stage then waits for the context's stream at its end, so profiled work runs slower; 0
   * (default): off. The stages are NVTX ranges either way (Nsight Systems shows them). @since 0.1 */
  int32_t profile;
  /* Training over several processes with a communicator the library makes (no NCCL code of the
   * caller's): rank 0 gets a unique id with cbg_nccl_unique_id() and the caller's launcher (Dask,
   * MPI, ...) gives those bytes to every rank; each rank then creates its context (one GPU each,
   * nccl_comm NULL) with the id, its rank and the size, all at about the same time:
   * cbg_context_create blocks until every rank has joined (ncclCommInitRank) or nccl_timeout_ms
   * passed (#CBG_ERR_CUDA naming the timeout). cbg_train then behaves as with nccl_comm above. The
   * communicator is the context's: destroyed with it, and aborted when a rank fails, when a
   * collective does not complete within nccl_timeout_ms (a rank that failed or stopped: the others
   * return #CBG_ERR_CUDA saying so instead of waiting forever) or by cbg_context_abort(). @since 0.1 */
  uint8_t nccl_id[128];    /**< The bytes of cbg_nccl_unique_id() (all ranks the same). */
  int32_t nccl_id_rank;    /**< This process's rank, 0 <= nccl_id_rank < nccl_id_size (default 0). */
  int32_t nccl_id_size;    /**< The number of ranks (default 0: no communicator from an id). */
  int32_t nccl_timeout_ms; /**< Longest wait for the ranks to join and for one collective to complete
                                (default 600000: 10 minutes; > 0). */
} cbg_context_desc_t;

/**
 * @brief Fills `desc` with struct_size and the defaults listed in cbg_context_desc_t.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER. Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_context_desc_init(cbg_context_desc_t* desc);

/**
 * @brief Creates a context.
 * @param[in]  desc  NULL for all defaults, or a descriptor (see cbg_context_desc_init()).
 * @param[out] out   receives the new handle; free it with cbg_context_free().
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_ARGUMENT (bad struct_size, level, hooks),
 *         #CBG_ERR_NO_DEVICE (ordinal not visible / no driver), #CBG_ERR_CUDA, #CBG_ERR_OUT_OF_MEMORY.
 * Thread-safe; blocks (creates a stream and memory pool). @since 0.1
 */
CBG_API cbg_status cbg_context_create(const cbg_context_desc_t* desc, cbg_context_t** out);

/**
 * @brief A new NCCL unique id (ncclGetUniqueId) for cbg_context_desc_t.nccl_id. Call it on the
 * process of rank 0 and keep that process alive while the ranks create their contexts (it serves
 * their first connection).
 * @param[out] out  128 bytes.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_UNSUPPORTED (NCCL is not installed; the message
 *         says why), #CBG_ERR_CUDA (NCCL failed). Thread-safe; blocks. @since 0.1
 */
CBG_API cbg_status cbg_nccl_unique_id(uint8_t out[128]);

/**
 * @brief Aborts the NCCL communicator the library made for this context (nccl_id_size > 0), so that
 * a cbg_train blocked in a collective on any thread returns (#CBG_ERR_CUDA, "aborted"); for example
 * when the caller learns that another rank failed. The context can no longer train over several
 * processes. A no-op for a context without such a communicator. @return #CBG_OK,
 * #CBG_ERR_INVALID_HANDLE. Thread-safe (may be called during a cbg_train on this context). @since 0.1
 */
CBG_API cbg_status cbg_context_abort(cbg_context_t* ctx);

/**
 * @brief Frees a context. Objects created with it (pools, ...) stay valid: they keep what they need.
 * Waits for work queued on the context's stream. NULL is a no-op. Not thread-safe for this handle.
 * @return #CBG_OK, #CBG_ERR_INVALID_HANDLE. @since 0.1
 */
CBG_API cbg_status cbg_context_free(cbg_context_t* ctx);

/**
 * @brief The device the context works on (CBG_DEVICE_CPU for the host path).
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE. Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_context_device(const cbg_context_t* ctx, int32_t* device);

/**
 * @brief Makes the context work on `stream` (borrowed; NULL restores the context's own stream).
 * Later work is ordered after work already queued on the previous stream (event, no host sync).
 * @return #CBG_OK, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_UNSUPPORTED (CPU context), #CBG_ERR_CUDA.
 * Not thread-safe for this handle; enqueues. @since 0.1
 */
CBG_API cbg_status cbg_context_set_stream(cbg_context_t* ctx, cbg_stream_t stream);

/**
 * @brief The stream the context currently works on (NULL for a CPU context).
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE. Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_context_get_stream(const cbg_context_t* ctx, cbg_stream_t* stream);

/**
 * @brief Waits until all work queued on the context's stream has finished.
 * @return #CBG_OK, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_CUDA. Thread-safe; blocks. @since 0.1
 */
CBG_API cbg_status cbg_context_sync(cbg_context_t* ctx);

/** Bytes and calls per copy direction, counted by the context since creation or the last reset. */
typedef struct cbg_copy_stats_t {
  size_t struct_size; /**< sizeof(cbg_copy_stats_t), set by the caller. */
  uint64_t h2d_bytes, h2d_calls;
  uint64_t d2h_bytes, d2h_calls;
  uint64_t d2d_bytes, d2d_calls;
  uint64_t h2h_bytes, h2h_calls;
} cbg_copy_stats_t;

/**
 * @brief Reads the copy counters of a context: every memcpy the library does goes through them.
 * @param[in,out] stats  caller-owned; set stats->struct_size first.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT
 *         (struct_size too small). Thread-safe (counters are atomic). @since 0.1
 */
CBG_API cbg_status cbg_copy_stats(const cbg_context_t* ctx, cbg_copy_stats_t* stats);

/** @brief Zeroes the copy counters of a context. Thread-safe. @since 0.1 */
CBG_API cbg_status cbg_copy_stats_reset(cbg_context_t* ctx);

/**
 * @brief The stage timings of a context created with cbg_context_desc_t.profile = 1, as a JSON
 *        object: per stage its wall time in milliseconds and how often it ran, since creation or
 *        the last cbg_context_stage_times_reset(). Empty ({}) when profiling is off.
 *
 * Stage names say where the time went: "boosting.weak_target", "boosting.search",
 * "boosting.estimate_leaves", ... (the GPU boosting loop's passes), "boosting.search (device): ..."
 * and "boosting.leaf_pass (device): ..." (device time between events inside a pass), "dist.*" (the
 * hand-offs of a training over several GPUs, and "rank N: ..." for each GPU's own stages). The
 * names are for people reading profiles; they may change between versions.
 * @code
 *   cbg_context_desc_t d;
 *   cbg_context_desc_init(&d);
 *   d.profile = 1;
 *   cbg_context_t* ctx;
 *   cbg_context_create(&d, &ctx);
 *   ... cbg_train(...) with pools of ctx ...
 *   const char* json;
 *   if (cbg_context_stage_times(ctx, &json) == CBG_OK) puts(json);
 *   // {"boosting.search": {"ms": 812.4, "calls": 1000}, "boosting.weak_target": {...}, ...}
 * @endcode
 * @param[out] json  receives a NUL-terminated string owned by the context, valid until the next
 *                   call of this function on the handle or cbg_context_free(). Never free it.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE.
 * Not thread-safe for this handle (the string); the timings themselves are. @since 0.1
 */
CBG_API cbg_status cbg_context_stage_times(cbg_context_t* ctx, const char** json);

/** @brief Clears the stage timings of a context. Thread-safe. @since 0.1 */
CBG_API cbg_status cbg_context_stage_times_reset(cbg_context_t* ctx);

/** Device memory of a context: what the library holds through it now, its peak and the budget. */
typedef struct cbg_memory_stats_t {
  size_t struct_size;          /**< sizeof(cbg_memory_stats_t), set by the caller. */
  uint64_t in_use_bytes;       /**< Allocated through this context and not yet freed. */
  uint64_t peak_bytes;         /**< Highest in_use_bytes since creation or the last peak reset. */
  uint64_t limit_bytes;        /**< cbg_context_desc_t.device_memory_limit (0: none). */
  uint64_t allocations;        /**< Successful allocations since creation. */
  uint64_t failed_allocations; /**< Refused by the budget, injected, or out of device memory. */
} cbg_memory_stats_t;

/**
 * @brief Reads the device memory accounting of a context. Every device allocation the library makes
 *        for work on this context (pools' device copies, quantized data, training state, prediction
 *        scratch) is counted; a model's device image, shared by all contexts, is not. A CPU context
 *        reports zeros. in_use_bytes back at its old value after the objects are freed means nothing
 *        leaked.
 * @param[in,out] stats  caller-owned; set stats->struct_size first.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT
 *         (struct_size too small). Thread-safe (atomic counters). @since 0.1
 */
CBG_API cbg_status cbg_context_memory_stats(const cbg_context_t* ctx, cbg_memory_stats_t* stats);

/** @brief Sets peak_bytes to the current in_use_bytes. Thread-safe. @since 0.1 */
CBG_API cbg_status cbg_context_reset_memory_peak(cbg_context_t* ctx);

/**
 * @brief Fault injection for tests of your own error handling (and ours): the n-th device
 *        allocation through this context from now on fails, once, with #CBG_ERR_OUT_OF_MEMORY
 *        ("injected allocation failure"), exactly as a real out-of-memory would. n = 0 disarms.
 * @return #CBG_OK, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_UNSUPPORTED (a CPU context: host allocations
 *         are not injected). Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_context_fail_allocation(cbg_context_t* ctx, uint64_t n);

/* ------------------------------------------------------------------------------------------------
 * Tensors crossing the ABI
 * ---------------------------------------------------------------------------------------------- */

#define CBG_TENSOR_NONE 0             /**< No tensor (optional slot left empty). */
#define CBG_TENSOR_DLPACK_VERSIONED 1 /**< ptr is a DLManagedTensorVersioned* (DLPack >= 1.0): consumed. */
#define CBG_TENSOR_DLPACK_LEGACY 2    /**< ptr is a DLManagedTensor* (DLPack < 1.0): consumed. */
#define CBG_TENSOR_DLTENSOR 3         /**< ptr is a const DLTensor*: borrowed. */

/**
 * @brief A reference to one tensor and how ownership passes.
 *
 * Consumed kinds (DLPACK_VERSIONED, DLPACK_LEGACY): the library owns the tensor from the moment the
 * call starts. Its deleter (if non-NULL) is called exactly once: when the object that keeps it
 * (e.g. the pool) is freed, or before the call returns if the call fails for any reason.
 * Borrowed kind (DLTENSOR): the caller keeps the memory valid until the object using it is freed.
 * For a versioned tensor the major version is checked before any other field is read.
 */
typedef struct cbg_tensor_ref_t {
  int32_t kind; /**< CBG_TENSOR_*. */
  void* ptr;    /**< The tensor, per kind. */
} cbg_tensor_ref_t;

/* ------------------------------------------------------------------------------------------------
 * Pool: a dataset as column views (no copy of device data)
 * ---------------------------------------------------------------------------------------------- */

/** Opaque pool handle. */
typedef struct cbg_pool_t cbg_pool_t;

/**
 * @brief A categorical feature given as UTF-8 strings in Apache Arrow's layout (utf8/large_utf8):
 *        string i is bytes[offsets[i] .. offsets[i+1]). cuDF string columns and Arrow arrays export
 *        these two buffers; wrap each as a 1-D DLPack tensor.
 *
 * The pool hashes the strings once with CatBoost's hash (the low 32 bits of CityHash64 of the
 * bytes, the same as cbg_cat_hash_string()), on the GPU when the context has one and the buffers are
 * in device, managed or pinned memory, else on the host; it keeps only the hashes (4 bytes per row).
 * Missing values (Arrow nulls) cannot be given: CatBoost refuses them too ("NaN values should be
 * converted to string"); give them a value of their own ("" or "None"). Malformed offsets (out of
 * order, or past the bytes) fail with #CBG_ERR_BAD_DATA naming the feature and the first bad row.
 * @since 0.1
 */
typedef struct cbg_string_column_t {
  int64_t feature;          /**< The pool feature index this column becomes (categorical). */
  cbg_tensor_ref_t offsets; /**< 1-D int32 or int64 [n + 1], contiguous, non-decreasing. */
  cbg_tensor_ref_t bytes;   /**< 1-D uint8 (or int8) [offsets[n]] at least, contiguous. */
  cbg_tensor_ref_t codes;   /**< Empty (kind CBG_TENSOR_NONE): offsets/bytes hold one string per row
                                 (n = rows). Else a dictionary column (Arrow dictionary<int, utf8>,
                                 pandas/cuDF categories): codes is 1-D [rows] of any integer dtype,
                                 offsets/bytes hold the n dictionary strings, row i is string
                                 codes[i]. The dictionary is hashed once. A code outside 0..n-1 (a
                                 negative code is how pandas marks a null) fails with
                                 #CBG_ERR_BAD_DATA naming the feature and the row. Codes live where
                                 the dictionary does (both GPU-readable, or both host). */
} cbg_string_column_t;

/**
 * @brief Describes the data of a pool. Initialise with cbg_pool_desc_init().
 *
 * Features come either as one matrix `features` of shape [rows, n_features] (any strides, row- or
 * column-major), or as `n_columns` one-dimensional tensors in `columns` (one per feature, each of
 * its own dtype). Accepted dtypes: float16/32/64, int8..64, uint8..64, bool. Accepted devices:
 * kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged; kDLCUDA tensors must be on the context's device.
 * Negative strides are refused. Categorical columns must have an integer (or bool) dtype.
 * @since 0.1
 */
typedef struct cbg_pool_desc_t {
  size_t struct_size;              /**< sizeof(cbg_pool_desc_t). */
  cbg_tensor_ref_t features;       /**< 2-D [rows, n_features], or NONE when `columns` is used. */
  const cbg_tensor_ref_t* columns; /**< n_columns 1-D tensors [rows], or NULL. */
  size_t n_columns;
  cbg_tensor_ref_t label;      /**< Optional: [rows] or [rows, label_dims]; finite values. */
  cbg_tensor_ref_t weight;     /**< Optional: [rows]; finite, >= 0. */
  cbg_tensor_ref_t baseline;   /**< Optional: [rows] or [rows, approx_dims]; finite. */
  const int32_t* cat_features; /**< Indices of categorical features (unique, in range), or NULL. */
  size_t n_cat_features;
  const char* const* feature_names;          /**< NULL, or n_feature_names non-NULL UTF-8 names (copied). */
  size_t n_feature_names;                    /**< Must equal the number of features when names are given. */
  cbg_stream_t producer_stream;              /**< Stream the data was written on, or NULL: the context's stream
                                                  waits for it with an event (no host sync). */
  const cbg_string_column_t* string_columns; /**< n_string_columns string features, or NULL. Feature
                                     indices run 0..N-1 with N = max(matrix columns or n_columns,
                                     largest string feature + 1); each index comes from exactly one
                                     of the matrix, a `columns` entry (kind NONE leaves a string
                                     column's slot free) or a string column. String features are
                                     categorical whether or not cat_features lists them. */
  size_t n_string_columns;
} cbg_pool_desc_t;

/** @brief Fills `desc` with struct_size and empty slots. Thread-safe. @since 0.1 */
CBG_API cbg_status cbg_pool_desc_init(cbg_pool_desc_t* desc);

/**
 * @brief Builds a pool of column views over the given tensors, without copying their data.
 *
 * Ownership: every consumed tensor in `desc` belongs to the library from the call on (see
 * cbg_tensor_ref_t); on failure all of them have been deleted before the call returns. Only when
 * `desc` is NULL or its struct_size is not valid (#CBG_ERR_INVALID_ARGUMENT) is nothing consumed,
 * since the library cannot know what the struct holds: the caller keeps every tensor then.
 * Labels, weights and baselines are checked where they live (a kernel on the GPU, a loop on the
 * host): only a 24-byte count per column comes back to the host, counted as a device-to-host copy.
 * String and dictionary columns (string_columns) are hashed once at this call, on the GPU when the
 * context has one and their buffers are GPU-readable (device, managed, pinned), else on the host;
 * 8 bytes (the first malformed row) come back per column. The struct_size of `desc` must be
 * sizeof(cbg_pool_desc_t) or offsetof(cbg_pool_desc_t, string_columns) (the layout before those
 * fields); other sizes are invalid.
 * @param ctx   the context; its device must match CUDA tensors (a CPU context takes host memory only).
 * @param desc  the data.
 * @param[out] out  the new pool; free with cbg_pool_free().
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT,
 *         #CBG_ERR_DLPACK_VERSION, #CBG_ERR_DTYPE, #CBG_ERR_SHAPE, #CBG_ERR_DEVICE,
 *         #CBG_ERR_BAD_DATA (NaN/inf label, negative weight, ...), #CBG_ERR_CUDA,
 *         #CBG_ERR_OUT_OF_MEMORY.
 * Safe on distinct contexts; blocks until validation is done. @since 0.1
 */
CBG_API cbg_status cbg_pool_from_dlpack(cbg_context_t* ctx, const cbg_pool_desc_t* desc, cbg_pool_t** out);

/**
 * @brief Frees a pool and calls the deleters of the tensors it consumed. NULL is a no-op.
 * Blocks until work queued on the context's stream (which may read the pool's data) has finished,
 * so borrowed memory may be freed once this returns.
 * @return #CBG_OK, #CBG_ERR_INVALID_HANDLE. Not thread-safe for this handle. @since 0.1
 */
CBG_API cbg_status cbg_pool_free(cbg_pool_t* pool);

/** Facts about a pool. */
typedef struct cbg_pool_info_t {
  size_t struct_size; /**< sizeof(cbg_pool_info_t), set by the caller. */
  int64_t n_rows;
  int64_t n_features;
  int64_t n_cat_features;
  int64_t label_dims;    /**< 0 without label. */
  int64_t baseline_dims; /**< 0 without baseline. */
  int32_t has_weight;
  int32_t device; /**< CUDA ordinal of device-resident columns, or CBG_DEVICE_CPU. */
} cbg_pool_info_t;

/**
 * @brief Reads the shape and roles of a pool.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT
 *         (struct_size too small). Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_pool_info(const cbg_pool_t* pool, cbg_pool_info_t* info);

/**
 * @brief Name of feature `index` ("" when the pool has no names).
 * @param[out] name  valid until the pool is freed.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT
 *         (index out of range). Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_pool_feature_name(const cbg_pool_t* pool, int64_t index, const char** name);

/**
 * @brief Whether feature `index` is categorical (1) or numeric (0).
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT.
 * Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_pool_is_categorical(const cbg_pool_t* pool, int64_t index, int32_t* is_cat);

/**
 * @brief CatBoost hashes of categorical feature `feature`, one per row, copied into host memory:
 *        the pool's hashes of a string column, or the hashes of an integer column's decimal text
 *        (computed on the GPU for device data). For inspection and tests; training and prediction
 *        never copy them to the host.
 * @param out       caller-owned host array of `capacity` >= rows elements.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT (index
 *         out of range, or the feature is not categorical), #CBG_ERR_SHAPE (capacity too small),
 *         #CBG_ERR_STRICT_D2H (strict mode and more than 64 KiB to copy), #CBG_ERR_CUDA.
 * Blocks. Thread-safe for distinct pools. @since 0.1
 */
CBG_API cbg_status cbg_pool_cat_hashes(const cbg_pool_t* pool, int64_t feature, uint32_t* out, size_t capacity);

/**
 * @brief Builds a pool whose features are the columns of an Arrow array (Arrow C device data
 *        interface): cuDF tables and columns, pyarrow arrays, record batches, anything exporting
 *        `ArrowDeviceArray` (or a plain `ArrowArray` wrapped with device_type ARROW_DEVICE_CPU).
 *
 * `schema`/`array` describe either a struct (format "+s": one feature per child, in order; a
 * RecordBatch or a table) or one column (one feature). Column types:
 *  - numeric: int8..int64, uint8..uint64 ("c C s S i I l L"), float16/32/64 ("e f g"): float
 *    features, or categorical when `desc->cat_features` lists them (integers only, hashed as their
 *    decimal text as CatBoost does);
 *  - utf8 "u" / large_utf8 "U": categorical, hashed once with CatBoost's hash (as cbg_string_column_t);
 *  - dictionary<int, utf8|large_utf8> (an integer index format with a utf8 dictionary; pandas/cuDF
 *    categories): categorical; the dictionary is hashed once and the codes are mapped.
 * Nulls are refused (#CBG_ERR_BAD_DATA naming the feature and the first null row): CatBoost refuses
 * missing categorical values, and a float column's missing values are to be given as NaN. Boolean
 * (bit-packed "b") and other types fail with #CBG_ERR_DTYPE naming the column.
 *
 * `desc` (may be NULL) supplies everything else, as for cbg_pool_from_dlpack(): label, weight,
 * baseline (DLPack, consumed), cat_features, feature_names (default: the children's names) and
 * producer_stream. Its features, columns and string_columns must be empty.
 *
 * Ownership (consumes both, on success and on every error): the library *moves* `*array` (it takes
 * the struct and sets `array->array.release` to NULL, as the Arrow spec defines a move) and calls the
 * moved array's release callback exactly once, when the pool is freed, after the work queued on the
 * pool's context has finished; until then the buffers must stay valid, which the release callback
 * guarantees for every conforming producer. `*schema` is released (its callback called and set to
 * NULL) before this returns. Structs already released (release == NULL) are refused with
 * #CBG_ERR_INVALID_ARGUMENT. DLPack tensors in `desc` follow cbg_pool_from_dlpack().
 *
 * Devices: ARROW_DEVICE_CUDA and ARROW_DEVICE_CUDA_MANAGED (device_id must be the context's
 * device), ARROW_DEVICE_CUDA_HOST and ARROW_DEVICE_CPU; a CPU context takes only host memory. With
 * a CUDA array whose `sync_event` is not NULL (a `cudaEvent_t*`), the context's stream waits for
 * that event before reading (no host sync). No column data is copied; string columns are hashed
 * where they live (4 bytes per row kept).
 *
 * @param[in]  ctx     context.
 * @param[in]  desc    roles and options, or NULL.
 * @param[in,out] schema the array's type (consumed: released before return).
 * @param[in,out] array  the array (consumed: moved into the pool).
 * @param[out] out     the new pool; NULL on error.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT,
 *         #CBG_ERR_DTYPE, #CBG_ERR_SHAPE, #CBG_ERR_DEVICE, #CBG_ERR_BAD_DATA, #CBG_ERR_OUT_OF_MEMORY,
 *         #CBG_ERR_CUDA, #CBG_ERR_STRICT_D2H (never for column data: only 8-byte counts come back).
 * Blocks until string columns are hashed (a few bytes come back per column); safe for distinct
 * contexts, unsafe on one context from several threads. Determinism: gpu_to_gpu. @since 0.1
 */
CBG_API cbg_status cbg_pool_from_arrow(cbg_context_t* ctx, const cbg_pool_desc_t* desc, struct ArrowSchema* schema,
                                       struct ArrowDeviceArray* array, cbg_pool_t** out);

/* ------------------------------------------------------------------------------------------------
 * Copies between tensors (the accounted copy path, usable by callers for staging results)
 * ---------------------------------------------------------------------------------------------- */

/**
 * @brief Copies the elements of `src` into `dst` (same dtype and shape; any strides, any devices
 *        the context can reach), through the context's copy accounting.
 *
 * Both tensors are borrowed even for the DLPACK kinds (their deleters are not called).
 * A device-to-host copy above 64 KiB fails with #CBG_ERR_STRICT_D2H in strict mode.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_DLPACK_VERSION,
 *         #CBG_ERR_DTYPE (dtypes differ), #CBG_ERR_SHAPE, #CBG_ERR_DEVICE, #CBG_ERR_READ_ONLY (dst
 *         is read-only), #CBG_ERR_INVALID_ARGUMENT (dst has a zero stride: overlapping writes),
 *         #CBG_ERR_UNSUPPORTED (a zero-stride, i.e. broadcast, src is copied between host memory
 *         only), #CBG_ERR_STRICT_D2H, #CBG_ERR_CUDA.
 * Safe on distinct contexts; blocks until the copy is done. @since 0.1
 */
CBG_API cbg_status cbg_tensor_copy(cbg_context_t* ctx, const cbg_tensor_ref_t* dst, const cbg_tensor_ref_t* src);

/* ------------------------------------------------------------------------------------------------
 * Quantization: CatBoost-identical float feature borders and the packed bin index
 * ---------------------------------------------------------------------------------------------- */

#define CBG_NAN_MODE_FORBIDDEN 0 /**< A NaN in the border subset is an error (CBG_ERR_BAD_DATA). */
#define CBG_NAN_MODE_MIN 1       /**< NaN is below every value: bin 0 (CatBoost's default). */
#define CBG_NAN_MODE_MAX 2       /**< NaN is above every value: the last bin. */

/* Border types (CatBoost's feature_border_type), all bit-identical to CatBoost's borders. */
#define CBG_BORDER_GREEDY_LOG_SUM 0        /**< GreedyLogSum, CatBoost's default. */
#define CBG_BORDER_GREEDY_MIN_ENTROPY 1    /**< GreedyMinEntropy. */
#define CBG_BORDER_MEDIAN 2                /**< Median. */
#define CBG_BORDER_UNIFORM 3               /**< Uniform. */
#define CBG_BORDER_UNIFORM_AND_QUANTILES 4 /**< UniformAndQuantiles. */
#define CBG_BORDER_MIN_ENTROPY 5           /**< MinEntropy (exact dynamic programme). */
#define CBG_BORDER_MAX_LOG_SUM 6           /**< MaxLogSum (exact dynamic programme). */

/* Which objects the borders are built from when the pool has more than max_subset_size rows. */
#define CBG_SUBSET_SAMPLED 0 /**< CatBoost's seeded draw for data it has not shuffled (default). */
#define CBG_SUBSET_FIRST_ROWS                                        \
  1 /**< The first max_subset_size rows (CatBoost's rule for a learn \
         set it has shuffled: categorical features, Ordered boosting). */

/** Opaque handle of a quantized pool: borders per feature and the bin index. */
typedef struct cbg_quantized_t cbg_quantized_t;

/**
 * @brief How to quantize. Initialise with cbg_quantize_desc_init(), which sets CatBoost's GPU
 *        defaults: 128 borders, GreedyLogSum, nan_mode Min, borders from at most 200 000 objects.
 *
 * By default the border subset is drawn as CatBoost draws it for data it has not shuffled, with
 * the context's seed as CatBoost's random_seed (`subset_rule`). Overrides (`n_overrides` entries
 * of the arrays) set one feature's border count (0 keeps the common one), nan mode (-1 keeps the
 * common one) and border type (-1 keeps the common one; the array may be NULL).
 * MinEntropy and MaxLogSum run CatBoost's exact dynamic programme, O(border_count x distinct
 * values) sequential steps per feature (seconds for 254 borders over 200 000 distinct values, on
 * the host as in CatBoost, and on the GPU with one thread per feature); they take at most 2^24
 * border objects.
 * @since 0.1
 */
typedef struct cbg_quantize_desc_t {
  size_t struct_size;                    /**< sizeof(cbg_quantize_desc_t). */
  int32_t border_count;                  /**< 1..255; default 128. */
  int32_t nan_mode;                      /**< CBG_NAN_MODE_*; default Min. */
  int32_t border_type;                   /**< CBG_BORDER_*; default GreedyLogSum. */
  uint32_t max_subset_size;              /**< Objects the borders are built from; default 200000. */
  size_t n_overrides;                    /**< Entries in the three arrays below (0: none). */
  const int64_t* override_features;      /**< Feature indices. */
  const int32_t* override_border_counts; /**< 0 or 1..255. */
  const int32_t* override_nan_modes;     /**< -1 or CBG_NAN_MODE_*. */
  const int32_t* override_border_types;  /**< NULL (none), or -1 or CBG_BORDER_* per override. */
  int32_t subset_rule;                   /**< CBG_SUBSET_*; default CBG_SUBSET_SAMPLED. */
} cbg_quantize_desc_t;

/**
 * @brief Fills `desc` with the defaults (see cbg_quantize_desc_t).
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER. Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_quantize_desc_init(cbg_quantize_desc_t* desc);

/**
 * @brief Computes the borders of every numeric feature of `pool` and binarizes every value.
 *
 * On a GPU context the work runs on the device and no feature data is copied to the host: only a
 * 4-byte status comes back. Device, managed and pinned columns are read where they are; pageable
 * host columns are staged to the device through two pinned buffers, chunk by chunk of features,
 * each chunk quantized while the next one is copied.
 * On a CPU context the host reference runs (host memory). Both give the same bits. Categorical
 * features get no borders (every value in bin 0).
 * @param pool  borrowed; must outlive nothing (the result keeps no reference to its data).
 * @param[out] out  the new handle; free with cbg_quantized_free().
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT
 *         (bad struct_size, border count, nan mode, border type, subset rule or override),
 *         #CBG_ERR_BAD_DATA (NaN in a Forbidden feature), #CBG_ERR_UNSUPPORTED (more than 2^32
 *         rows drawn from, more than 2^31 subset values in all, or more than 2^24 border objects
 *         for MinEntropy/MaxLogSum), #CBG_ERR_CUDA, #CBG_ERR_OUT_OF_MEMORY.
 * Safe on distinct pools; blocks until done. @since 0.1
 */
CBG_API cbg_status cbg_quantize_pool(cbg_pool_t* pool, const cbg_quantize_desc_t* desc, cbg_quantized_t** out);

/**
 * @brief Frees a quantized pool. NULL is a no-op.
 * @return #CBG_OK, #CBG_ERR_INVALID_HANDLE. Not thread-safe for this handle. @since 0.1
 */
CBG_API cbg_status cbg_quantized_free(cbg_quantized_t* q);

/**
 * @brief Copies the borders of feature `feature` (ascending; at most 255) into `borders`.
 * @param borders   host memory for `capacity` floats; may be NULL when capacity is 0.
 * @param[out] count     the number of borders (also when capacity is too small: then nothing is
 *                       written and #CBG_ERR_INVALID_ARGUMENT is returned).
 * @param[out] nan_mode  optional (NULL): the mode binarization used, CBG_NAN_MODE_*; Forbidden when
 *                       the border subset had no NaN (a later NaN then goes to bin 0).
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT,
 *         #CBG_ERR_CUDA. Copies at most 1 KiB from the device (accounted). Thread-safe; blocks.
 * @since 0.1
 */
CBG_API cbg_status cbg_quantized_borders(const cbg_quantized_t* q, int64_t feature, float* borders, int32_t capacity,
                                         int32_t* count, int32_t* nan_mode);

/**
 * @brief Copies the bins of feature `feature` for every row, in row order, to host memory.
 *
 * For tests and inspection: this is a device-to-host copy of `n_rows` bytes of data, refused with
 * #CBG_ERR_STRICT_D2H in strict mode when above 64 KiB.
 * @param bins      host memory for `capacity` bytes (at least the pool's row count).
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT,
 *         #CBG_ERR_STRICT_D2H, #CBG_ERR_CUDA. Thread-safe; blocks. @since 0.1
 */
CBG_API cbg_status cbg_quantized_feature_bins(const cbg_quantized_t* q, int64_t feature, uint8_t* bins,
                                              size_t capacity);

/* ------------------------------------------------------------------------------------------------
 * Models: CatBoost oblivious-tree models, read and written as CatBoost's .cbm and JSON files, and
 * evaluated on the host (the reference path). Models with non-symmetric trees, text, embedding or
 * estimated features are refused with #CBG_ERR_UNSUPPORTED naming the part.
 * ---------------------------------------------------------------------------------------------- */

/** Opaque model handle. */
typedef struct cbg_model_t cbg_model_t;

#define CBG_MODEL_FORMAT_CBM 0  /**< CatBoost's binary model (`save_model(..., format='cbm')`). */
#define CBG_MODEL_FORMAT_JSON 1 /**< CatBoost's JSON model (`save_model(..., format='json')`). */

/**
 * @brief Reads a model file.
 * @param path    NUL-terminated file name.
 * @param format  CBG_MODEL_FORMAT_CBM or CBG_MODEL_FORMAT_JSON.
 * @param[out] out  the new model; free with cbg_model_free().
 * Only regular files are read (a folder, a FIFO or a device is refused at once), of at most 16 GiB;
 * the environment variable `CBGPU_MAX_INPUT_BYTES` (a byte count, read on each call) changes that cap.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_ARGUMENT (format), #CBG_ERR_IO (cannot
 *         open or read, not a regular file, above the cap: the message names the path and the
 *         reason), #CBG_ERR_FORMAT (malformed or inconsistent bytes), #CBG_ERR_UNSUPPORTED
 *         (non-symmetric trees, text/embedding/estimated features), #CBG_ERR_OUT_OF_MEMORY.
 * Thread-safe; blocks. @since 0.1
 */
CBG_API cbg_status cbg_model_load_file(const char* path, int32_t format, cbg_model_t** out);

/**
 * @brief Reads a model from memory (the bytes of a .cbm or JSON file).
 * @param data  the bytes (borrowed for the call only; the model keeps its own copy of what it needs).
 * @param size  their count.
 * @return as cbg_model_load_file(), without #CBG_ERR_IO. Thread-safe; blocks. @since 0.1
 */
CBG_API cbg_status cbg_model_load_buffer(const void* data, size_t size, int32_t format, cbg_model_t** out);

/**
 * @brief Writes the model to a file that CatBoost loads (`CatBoost.load_model(path, format=...)`).
 * The bytes go to a temporary file in the same folder, synced, then renamed over `path`: on any
 * failure an existing file at `path` is left as it was and the temporary removed. (A terminal,
 * /dev/null or a FIFO at `path` is written in place.)
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT
 *         (format), #CBG_ERR_IO (with the path and the system's reason: "No space left on
 *         device", "File too large", "Permission denied", "Is a directory"), #CBG_ERR_UNSUPPORTED
 *         (a model JSON cannot hold).
 * Thread-safe (the model is only read); blocks. @since 0.1
 */
CBG_API cbg_status cbg_model_save_file(const cbg_model_t* model, const char* path, int32_t format);

/**
 * @brief Serialises the model into library-owned memory.
 * @param[out] data  receives the bytes; owned by the model, valid until the next call on this
 *                   handle that takes it non-const, or until cbg_model_free(). Never free it.
 * @param[out] size  receives their count.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT,
 *         #CBG_ERR_UNSUPPORTED, #CBG_ERR_OUT_OF_MEMORY.
 * Not thread-safe for this handle; blocks. @since 0.1
 */
CBG_API cbg_status cbg_model_save_buffer(cbg_model_t* model, int32_t format, const void** data, size_t* size);

/**
 * @brief Frees a model. NULL is a no-op.
 * @return #CBG_OK, #CBG_ERR_INVALID_HANDLE. Not thread-safe for this handle. @since 0.1
 */
CBG_API cbg_status cbg_model_free(cbg_model_t* model);

/** Facts about a model. */
typedef struct cbg_model_info_t {
  size_t struct_size; /**< sizeof(cbg_model_info_t), set by the caller. */
  int64_t n_trees;
  int32_t approx_dimension; /**< Outputs of RawFormulaVal per row (1: regression, binary). */
  int32_t reserved;         /**< Zero. */
  int64_t n_flat_features;  /**< Columns of the full input (float and categorical). */
  int64_t n_float_features;
  int64_t n_cat_features;
  int64_t n_class_names; /**< 0 unless a classifier stored its class names. */
  double scale;          /**< Raw = scale * sum of leaves + bias. */
} cbg_model_info_t;

/**
 * @brief Reads the counts of a model.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT
 *         (struct_size too small). Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_model_info(const cbg_model_t* model, cbg_model_info_t* info);

/**
 * @brief Name of flat feature `flat_index` ("" when unnamed); valid until the model is freed.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT
 *         (index out of range). Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_model_feature_name(const cbg_model_t* model, int64_t flat_index, const char** name);

/**
 * @brief Flat (input column) index of the `cat_index`-th categorical feature; the categorical
 *        features of a model are these columns, in this order.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT.
 * Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_model_cat_feature_index(const cbg_model_t* model, int64_t cat_index, int64_t* flat_index);

/** @brief Flat index of the `float_index`-th float feature (as cbg_model_cat_feature_index()). @since 0.1 */
CBG_API cbg_status cbg_model_float_feature_index(const cbg_model_t* model, int64_t float_index, int64_t* flat_index);

/**
 * @brief Name of class `index` as the model stores it (class_params.class_names; integers in
 *        decimal); valid until the model is freed.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT.
 * Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_model_class_name(const cbg_model_t* model, int64_t index, const char** name);

/**
 * @brief Value of metadata key `key` (CatBoost's model_info, e.g. "params"), or NULL when absent;
 *        valid until the model is freed.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE. Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_model_info_value(const cbg_model_t* model, const char* key, const char** value);

/**
 * @brief CatBoost's hash of a categorical value given as UTF-8 bytes (low 32 bits of CityHash64
 *        v1.0). Python ints are hashed as their decimal text: use cbg_cat_hash_int64().
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER (data NULL with size > 0, or hash NULL). Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_cat_hash_string(const char* data, size_t size, uint32_t* hash);

/** @brief CatBoost's hash of an integer categorical value (its decimal text). Thread-safe. @since 0.1 */
CBG_API cbg_status cbg_cat_hash_int64(int64_t value, uint32_t* hash);

#define CBG_PREDICTION_RAW_FORMULA_VAL 0 /**< Scale * sum of leaves + bias. */
#define CBG_PREDICTION_PROBABILITY                                                         \
  1                                      /**< Sigmoid (dimension 1: 2 columns [1-p, p]) or \
                                              softmax; per-dimension sigmoid for           \
                                              MultiClassOneVsAll/MultiLogloss/MultiCrossEntropy. */
#define CBG_PREDICTION_LOG_PROBABILITY 2 /**< The logarithm of PROBABILITY. */
#define CBG_PREDICTION_CLASS                                                                   \
  3                                            /**< Class index (argmax, or raw > logit of the \
                                                    binclass threshold); per dimension 0/1 for \
                                                    multi-label losses. */
#define CBG_PREDICTION_EXPONENT 4              /**< exp(raw). */
#define CBG_PREDICTION_RMSE_WITH_UNCERTAINTY 5 /**< [raw0, exp(2 * raw1)]; dimension 2 only. */
#define CBG_PREDICTION_MULTI_PROBABILITY 6     /**< Per-dimension sigmoid. */

/**
 * @brief Columns per row that cbg_model_predict_host() writes for `prediction_type`.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT
 *         (unknown type), #CBG_ERR_UNSUPPORTED (type does not fit the model). Thread-safe. @since 0.1
 */
CBG_API cbg_status cbg_model_prediction_columns(const cbg_model_t* model, int32_t prediction_type, int64_t* columns);

/**
 * @brief Host rows to evaluate. Initialise with cbg_model_predict_host_desc_init().
 *
 * As CatBoost's own C API: float features by their per-type index (column j of `float_features`
 * is float feature j, whose input column is cbg_model_float_feature_index()), categorical features
 * as CatBoost hashes (cbg_cat_hash_string() / cbg_cat_hash_int64()) by their per-type index.
 * @since 0.1
 */
typedef struct cbg_model_predict_host_desc_t {
  size_t struct_size; /**< sizeof(cbg_model_predict_host_desc_t). */
  int64_t n_rows;
  const float* float_features; /**< [n_rows, float_row_stride] row-major, or NULL without float features. */
  int64_t float_row_stride;    /**< Elements between rows; >= n_float_features. */
  const uint32_t* cat_hashes;  /**< [n_rows, cat_row_stride] row-major, or NULL without categorical features. */
  int64_t cat_row_stride;      /**< Elements between rows; >= n_cat_features. */
  int32_t prediction_type;     /**< CBG_PREDICTION_* (default RAW_FORMULA_VAL). */
  int32_t reserved;            /**< Zero. */
  int64_t tree_begin;          /**< First tree (default 0). The bias is added only from tree 0. */
  int64_t tree_end;            /**< One past the last tree; 0 (default): all trees. */
} cbg_model_predict_host_desc_t;

/** @brief Fills `desc` with struct_size and the defaults. Thread-safe. @since 0.1 */
CBG_API cbg_status cbg_model_predict_host_desc_init(cbg_model_predict_host_desc_t* desc);

/**
 * @brief Evaluates the model on host rows, exactly as CatBoost's CPU predict does (RawFormulaVal bit
 *        for bit; see the format notes for the exponentials).
 * @param[out] out   caller-owned [n_rows, columns] row-major (columns: cbg_model_prediction_columns()).
 * @param out_size   elements available at `out`.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT (bad
 *         struct_size, strides, tree range, type), #CBG_ERR_SHAPE (out too small),
 *         #CBG_ERR_UNSUPPORTED (type does not fit the model).
 * Thread-safe (the model is only read); blocks; touches no GPU. @since 0.1
 */
CBG_API cbg_status cbg_model_predict_host(const cbg_model_t* model, const cbg_model_predict_host_desc_t* desc,
                                          double* out, size_t out_size);

/**
 * @brief Leaf index of each row in each tree of [tree_begin, tree_end): out[row * n_trees + t].
 *        `desc->prediction_type` is ignored.
 * @return as cbg_model_predict_host(). Thread-safe; blocks. @since 0.1
 */
CBG_API cbg_status cbg_model_leaf_indexes_host(const cbg_model_t* model, const cbg_model_predict_host_desc_t* desc,
                                               uint32_t* out, size_t out_size);

/* ------------------------------------------------------------------------------------------------
 * Feature importance, as CatBoost's `get_feature_importance` and `catboost fstr` compute it
 * ---------------------------------------------------------------------------------------------- */

#define CBG_FSTR_PREDICTION_VALUES_CHANGE                  \
  0 /**< Per feature, how much the predictions change when \
         it does (percent of the total); from the leaf     \
         weights stored in the model, or counted on `pool`. */
#define CBG_FSTR_LOSS_FUNCTION_CHANGE                       \
  1 /**< Per feature, how much the model's objective metric \
         on `pool` worsens without it (needs a pool with    \
         labels, and a model that stores its params). */
#define CBG_FSTR_SHAP_VALUES                                \
  2 /**< SHAP values of every row of `pool`: [rows,         \
         features + 1], or [rows, dimensions, features + 1] \
         for a model of several dimensions (multiclass; for \
         RMSEWithUncertainty [rows, 1, features + 1]: the   \
         mean only); the last column is the expected value; \
         features: the pool's. */
#define CBG_FSTR_INTERACTION                           \
  3 /**< Interacting feature pairs: [pairs, 3] rows of \
         (first feature, second feature, score), by    \
         descending score. */

/**
 * @brief Feature importances of a model, CatBoost's values (within rounding): per original (flat)
 *        feature, splits on one-hot, CTR and feature-combination columns credited back to the
 *        features they read, as CatBoost credits them.
 *
 * Call it first with out = NULL and capacity = 0 to learn the shape (for Interaction this computes
 * the pairs, which is cheap), then with a buffer of shape[0] * ... * shape[ndim - 1] doubles.
 * The pool's rows are evaluated where its context runs (the GPU evaluator on a GPU context, whose
 * leaf indexes, rows * trees * 4 bytes, are copied back to the host; the host evaluator on a CPU
 * context); the rest is computed on the host.
 *
 * @code
 *   int64_t shape[3]; int32_t ndim;
 *   cbg_model_feature_importance(model, CBG_FSTR_SHAP_VALUES, pool, NULL, 0, shape, &ndim);
 *   size_t n = 1; for (int i = 0; i < ndim; ++i) n *= (size_t)shape[i];
 *   double* shap = malloc(n * sizeof(double));
 *   cbg_model_feature_importance(model, CBG_FSTR_SHAP_VALUES, pool, shap, n, shape, &ndim);
 * @endcode
 * @param model     the model (only read).
 * @param type      CBG_FSTR_*.
 * @param pool      NULL, or rows with the model's features (borrowed for the call): required for
 *                  LOSS_FUNCTION_CHANGE (with labels; its weights and baseline are used) and
 *                  SHAP_VALUES; for PREDICTION_VALUES_CHANGE it replaces the model's leaf weights
 *                  by its own (weighted) leaf counts; ignored by INTERACTION.
 * @param out       caller-owned host array of `capacity` doubles, row-major; NULL with capacity 0
 *                  for the size query.
 * @param[out] shape  three values; the first `ndim` are set (also when out is too small).
 * @param[out] ndim   1 (PREDICTION_VALUES_CHANGE, LOSS_FUNCTION_CHANGE: [features]), 2 or 3.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER (a pool is needed and NULL), #CBG_ERR_INVALID_HANDLE,
 *         #CBG_ERR_INVALID_ARGUMENT (unknown type, a model without trees, a feature whose role
 *         differs between model and pool), #CBG_ERR_SHAPE (capacity too small, too few pool
 *         features), #CBG_ERR_BAD_DATA (no leaf weights in the model and no pool; labels that are
 *         none of the model's classes; no label), #CBG_ERR_UNSUPPORTED (a model of scale other
 *         than 1 for all but PREDICTION_VALUES_CHANGE, a model without params or with a
 *         non-additive objective for LOSS_FUNCTION_CHANGE), #CBG_ERR_STRICT_D2H, #CBG_ERR_CUDA.
 *         Differs from CatBoost in one respect: CatBoost evaluates LOSS_FUNCTION_CHANGE on its
 *         first fold of rows when the pool has more than max(200000, 2e9 / features) rows; this
 *         uses them all.
 * Thread-safe (the model and pool are only read); blocks. @since 0.1
 */
CBG_API cbg_status cbg_model_feature_importance(const cbg_model_t* model, int32_t type, const cbg_pool_t* pool,
                                                double* out, size_t capacity, int64_t* shape, int32_t* ndim);

/* ------------------------------------------------------------------------------------------------
 * Training: CatBoost-compatible gradient boosting of oblivious trees
 * ---------------------------------------------------------------------------------------------- */

/**
 * @brief What the per-iteration callback receives (valid during the call only).
 *
 * The library fills struct_size with sizeof(cbg_train_progress_t) of its own version; a caller
 * built against an older header reads only the fields it knows (they never move). @since 0.1
 */
typedef struct cbg_train_progress_t {
  size_t struct_size;       /**< sizeof(cbg_train_progress_t) as the library knows it. */
  int64_t iteration;        /**< 0-based index of the iteration (tree) just finished. */
  int64_t iterations;       /**< Planned iterations (the `iterations` parameter). */
  const char* metric;       /**< The eval metric's name, CatBoost's text (e.g. "Logloss"). */
  int32_t has_learn_metric; /**< 1 when learn_metric was computed this iteration. */
  int32_t has_eval_metric;  /**< 1 when an eval pool is given (eval_metric is then set). */
  double learn_metric;      /**< The eval metric on the learn pool. */
  double eval_metric;       /**< The eval metric on the eval pool. */
  double best_eval_metric;  /**< Best eval metric so far (0 without an eval pool). */
  int64_t best_iteration;   /**< Its iteration (-1 without an eval pool). */
  double elapsed_seconds;   /**< Wall time since cbg_train() started. */
  double remaining_seconds; /**< Estimate for the remaining planned iterations. */
} cbg_train_progress_t;

/**
 * @brief Called once per iteration, on the thread that called cbg_train(), after the tree was
 *        added and the metrics were computed.
 * @return 0 to continue; any other value stops training after this iteration (the model keeps
 *         the trees built so far; use_best_model still applies).
 * It may call cbg_* functions that do not use the pools or contexts being trained on.
 */
typedef int32_t (*cbg_train_iteration_fn)(void* user_data, const cbg_train_progress_t* progress);

/** Callbacks of cbg_train(). Initialise with cbg_train_callbacks_init(). @since 0.1 */
typedef struct cbg_train_callbacks_t {
  size_t struct_size;                  /**< sizeof(cbg_train_callbacks_t). */
  cbg_train_iteration_fn on_iteration; /**< Optional (NULL: none). */
  void* user_data;                     /**< Passed back unchanged. */
} cbg_train_callbacks_t;

/** @brief Fills `callbacks` with struct_size and NULLs. Thread-safe. @since 0.1 */
CBG_API cbg_status cbg_train_callbacks_init(cbg_train_callbacks_t* callbacks);

/**
 * @brief Trains a model on `pool` with CatBoost's parameters and GPU defaults.
 *
 * Runs where the pool's context runs: on its GPU (the pool's columns in device, managed or pinned
 * memory; the whole loop stays on the device and only per-iteration scalars and the finished
 * trees, a few KiB, come back, so it works in strict mode, CBGPU_STRICT_NO_D2H=1), or with the
 * host reference trainer on a CBG_DEVICE_CPU context (host memory). On the same data, parameters
 * and seed both give the same trees, and two runs give byte-identical model files.
 *
 * Data: float features and categorical features (integer or bool columns the pool lists as
 * categorical: one-hot for at most one_hot_max_size values, else ordered CTRs; see the CTR
 * parameters below); one label
 * column: Logloss takes 0/1 (or any value with `target_border`), CrossEntropy values in [0, 1],
 * MultiClass / MultiClassOneVsAll class indices 0..K-1 (K = max + 1), regression any finite
 * value; optional weights; an optional baseline (one column per approx dimension: K for MultiClass)
 * starts the approxes and is not part of the model.
 *
 * @param pool         the learn pool (borrowed for the call).
 * @param params_json  NULL, "" or a JSON object of CatBoost parameters by CatBoost's names.
 *   Values are JSON numbers/booleans/strings or the same written as strings ("6", "true"); an
 *   unknown name is refused (CBG_ERR_INVALID_ARGUMENT naming it; CatBoost's parameters this
 *   library lacks, and CatBoost's losses and metrics it lacks, are CBG_ERR_NOT_IMPLEMENTED). The
 *   accepted names
 *   (docs/parameters.md lists them with their types, bounds and defaults):
 *   - Loss and metrics: loss_function (RMSE, Logloss, CrossEntropy, MultiClass,
 *     MultiClassOneVsAll, MAE, Quantile:alpha=A, Poisson, Tweedie:variance_power=P,
 *     RMSEWithUncertainty), eval_metric and custom_metric (the losses, R2, Accuracy, AUC
 *     (multiclass: type Mu, CatBoost's default), TotalF1 (average Weighted, Macro, Micro), MCC,
 *     Kappa, WKappa, and for binary classification only Precision, Recall, F1, BalancedAccuracy,
 *     PRAUC, NormalizedGini, BrierScore, LogLikelihoodOfPrediction; every metric takes CatBoost's
 *     use_weights (default true, false for AUC) and hints=skip_train~false (AUC and
 *     NormalizedGini are skipped on the learn set unless told); AUC type OneVsAll is
 *     CBG_ERR_NOT_IMPLEMENTED, the confusion-table and ranked metrics also on several GPUs),
 *     target_border (Logloss on any labels), classes_count and class_names (as CatBoost: the
 *     classes of a classifier).
 *   - Boosting: iterations (1000), learning_rate (CatBoost's automatic rule when it, l2_leaf_reg
 *     and the leaf estimation options are unset, else 0.03), boost_from_average, boosting_type
 *     (Plain; Ordered is CBG_ERR_NOT_IMPLEMENTED), use_best_model (true with an eval pool),
 *     od_type (Iter, IncToDec), od_wait (20), od_pval, early_stopping_rounds, random_seed (0).
 *   - Trees: depth (6, 1..16), grow_policy (SymmetricTree; Depthwise and Lossguide are
 *     CBG_ERR_NOT_IMPLEMENTED), l2_leaf_reg (3), random_strength (1), model_size_reg (0.5:
 *     CatBoost's penalty on the split scores of CTRs not yet in the model, the stronger the more
 *     distinct values they have; larger values give fewer CTR tables), score_function (Cosine, L2, NewtonCosine,
 * NewtonL2; the Newton ones for one-dimensional losses), leaf_estimation_method (Newton, Gradient, Exact for MAE and
 *     Quantile), leaf_estimation_iterations and leaf_estimation_backtracking (No,
 *     AnyImprovement, Armijo) with CatBoost's per-loss defaults.
 *   - Sampling: bootstrap_type (Bayesian, the default as on CatBoost's GPU, Bernoulli, MVS, Poisson, No),
 *     bagging_temperature (1, Bayesian), subsample (Bernoulli, MVS, Poisson), mvs_reg (MVS),
 *     sampling_unit (Object).
 *   - Quantization: border_count (128), feature_border_type (GreedyLogSum, GreedyMinEntropy,
 *     Median, Uniform, UniformAndQuantiles, MinEntropy, MaxLogSum), nan_mode (Min, Max,
 *     Forbidden), per_float_feature_quantization ("FeatureId:border_count=N,nan_mode=M,
 *     border_type=T", FeatureId an index or a feature name; a string or a list).
 *   - Categorical features: one_hot_max_size (2), simple_ctr, combinations_ctr and
 *     per_feature_ctr ("FeatureIndex:Description") in CatBoost's syntax
 *     "Type[:CtrBorderCount=N][:CtrBorderType=T][:TargetBorderType=T][:Prior=n/d]..." with types
 *     Borders, Buckets, BinarizedTargetMeanValue, FloatTargetMeanValue, Counter, FeatureFreq
 *     (default: CatBoost's GPU set, Borders with priors 0, 0.5, 1 and FeatureFreq);
 *     ":PriorEstimation=BetaPrior" on a Borders description of simple_ctr or per_feature_ctr
 *     replaces its priors by each feature's estimated one, as CatBoost's GPU trainer does
 *     (elsewhere CBG_ERR_INVALID_ARGUMENT, as CatBoost refuses it),
 *     counter_calc_method (SkipTest, Full), max_ctr_complexity (feature combinations of up to 4
 *     categorical features, CatBoost's default 4, 1 below 200 iterations, on the host, on one
 *     GPU and on several GPUs of one process (devices; the single-GPU model byte for byte),
 *     whatever memory the columns are in: on a GPU pageable columns and labels are staged to
 *     the device; over several processes (a communicator) every rank computes the CTRs and the
 *     combinations over all ranks' rows, so the model is the single-GPU one there too),
 *     ctr_target_border_count (1; above 1 for RMSE, MAE, Quantile and Poisson: the regression
 *     target is split by that many borders, as CatBoost's GPU trainer does), has_time (false: the
 *     ordered CTRs visit the learn rows in one seeded permutation; true: in the data's order, and
 *     permutation_count is then 1 as in CatBoost), fold_permutation_block (64: the permutation
 *     shuffles blocks of consecutive rows, with CatBoost's GPU rule: 0 means 64, below 50 000
 *     learn rows 1, otherwise rounded up to a power of two and halved while 128 blocks exceed the
 *     rows), permutation_count (1; CatBoost's default is 4: several are CatBoost's GPU scheme,
 *     each permutation with its own ordered CTR columns and approx, the last one's leaves in the
 *     model, each tree searched on one of the others; feature combinations too: each permutation
 *     its own combination values, binned with the borders of the first permutation that made the
 *     column; CBG_ERR_NOT_IMPLEMENTED over several GPUs or processes; one without CTR features or
 *     with has_time, as in CatBoost), ctr_leaf_count_limit and store_all_simple_ctr (CatBoost's
 *     CPU-only bounds on the CTR tables, with its CPU trainer's rule, on a CPU context only: a
 *     projection with more distinct learn values than the limit keeps that many of the most
 *     frequent, the rows of the others count in one kept value and the model sees them as unseen;
 *     store_all_simple_ctr exempts single categorical features. At equal counts the value seen
 *     first is kept; the others join the least frequent kept value (CatBoost's choice there
 *     follows its hash table's order, so tables can differ from its own at ties). With
 *     counter_calc_method Full and an eval set a bounded Counter CTR is CBG_ERR_NOT_IMPLEMENTED).
 *   - Output: metric_period (1), verbose / silent / logging_level (progress lines every
 *     metric_period iterations at CBG_LOG_INFO through the log callback, category
 *     "cbgpu.train"), train_dir (CatBoost's learn_error.tsv, test_error.tsv, time_left.tsv and
 *     catboost_training.json), allow_writing_files, name.
 *   - Recorded in the model, no other effect here: task_type, devices (several GPUs: see
 *     cbg_context_desc_t), thread_count.
 *   - CatBoost's Python aliases: objective and loss (loss_function), custom_loss
 *     (custom_metric), num_boost_round, n_estimators and num_trees (iterations), eta
 *     (learning_rate), max_depth (depth), reg_lambda (l2_leaf_reg), random_state (random_seed),
 *     max_bin (border_count), verbose_eval (verbose).
 *   The border subset of quantization is drawn with the context's seed; random_seed drives the
 *   bootstrap and the score noise. Not implemented (CBG_ERR_NOT_IMPLEMENTED, naming the
 *   parameter): Ordered boosting, Depthwise/Lossguide trees, leaf_estimation_method Simple, the
 *   Newton score functions and the binary-only metrics above for multi-dimensional losses,
 *   score_function SolarL2 and LOOL2, sampling_unit Group, TargetBorderCount > 1 in a CTR
 *   description (CatBoost's GPU trainer refuses it too),
 *   ctr_target_border_count > 1 with MultiClass, ctr_leaf_count_limit and store_all_simple_ctr
 *   other than their defaults on a GPU context (CatBoost's GPU trainer refuses them too; a CPU
 *   context takes them).
 * @param eval_pool    optional (NULL) eval set with the same features, on the same device: eval
 *   metric per iteration, early stopping, use_best_model.
 * @param callbacks    optional (NULL); see cbg_train_callbacks_t.
 * @param[out] out     the trained model; free with cbg_model_free(). Its info holds "params"
 *   (the effective parameters, laid out as CatBoost does, numbers and booleans as JSON numbers and
 *   booleans also where they were given as text), "output_options" (use_best_model, metric_period,
 *   train_dir, ... as CatBoost keeps them), "class_params" for classifiers, and "training" (the
 *   metric history), so CatBoost loads the saved file without a warning, its get_all_params()
 *   reads the parameters, and it predicts the same.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT (an
 *   unknown parameter, an invalid value or combination: the message names the parameter; eval
 *   pool of another shape or device; bad struct_size), #CBG_ERR_NOT_IMPLEMENTED (a recognised
 *   choice not implemented yet: see params_json), #CBG_ERR_UNSUPPORTED (more classes than the
 *   trainer supports; on several GPUs: Exact leaves, MVS with a caller's communicator and uneven
 *   rows), #CBG_ERR_BAD_DATA (no rows, missing or invalid labels for the loss, non-finite
 *   derivatives), #CBG_ERR_DEVICE (host columns on a GPU context or the reverse),
 *   #CBG_ERR_STRICT_D2H, #CBG_ERR_IO (train_dir), #CBG_ERR_CUDA, #CBG_ERR_OUT_OF_MEMORY.
 * Safe on distinct pools and contexts; blocks until training is done. @since 0.1
 */
CBG_API cbg_status cbg_train(cbg_pool_t* pool, const char* params_json, cbg_pool_t* eval_pool,
                             const cbg_train_callbacks_t* callbacks, cbg_model_t** out);

/* ------------------------------------------------------------------------------------------------
 * Prediction from pools: the GPU evaluator (device data in, device results out, on the caller's
 * stream), and host outputs when asked for
 * ---------------------------------------------------------------------------------------------- */

#define CBG_PREDICT_VALUES 0       /**< Predictions of `prediction_type`: [rows, columns]. */
#define CBG_PREDICT_LEAF_INDEXES 1 /**< The leaf index of every row in every tree of the range: [rows, trees]. */

/**
 * @brief What to predict. Initialise with cbg_predict_desc_init(); NULL means all defaults.
 *
 * The pool's columns are the model's flat features (cbg_model_float_feature_index(),
 * cbg_model_cat_feature_index()): numeric features in any numeric dtype (converted to float32, as
 * CatBoost does), categorical features as integer or bool columns that the pool lists as
 * categorical (hashed on the device as CatBoost hashes the decimal text of an integer).
 * @since 0.1
 */
typedef struct cbg_predict_desc_t {
  size_t struct_size;      /**< sizeof(cbg_predict_desc_t). */
  int32_t prediction_type; /**< CBG_PREDICTION_* (default RAW_FORMULA_VAL); ignored for leaf indexes. */
  int32_t output;          /**< CBG_PREDICT_VALUES (default) or CBG_PREDICT_LEAF_INDEXES. */
  int64_t tree_begin;      /**< First tree (default 0). The bias is added only from tree 0. */
  int64_t tree_end;        /**< One past the last tree; 0 (default): all trees. */
  /** GPUs to spread the rows over, CatBoost's syntax ("0", "0:1", "0-3", "-1" for all); NULL or ""
   *  (default): the pool's device only. cbg_predict_to_device splits the rows into one contiguous
   *  block per device, copies each block's columns device to device, evaluates there and copies the
   *  results device to device into `out` (which must be row-major and compact); the results are the
   *  single-device results bit for bit. With several devices the call blocks until they are written;
   *  cbg_predict_to_host refuses devices other than the pool's (#CBG_ERR_UNSUPPORTED). @since 0.1 */
  const char* devices;
} cbg_predict_desc_t;

/** @brief Fills `desc` with struct_size and the defaults. Thread-safe. @since 0.1 */
CBG_API cbg_status cbg_predict_desc_init(cbg_predict_desc_t* desc);

/**
 * @brief The shape of the output of a prediction over `n_rows` rows, so that callers can allocate
 *        it first: shape[0] = n_rows, shape[1] = columns (CBG_PREDICT_VALUES:
 *        cbg_model_prediction_columns(); CBG_PREDICT_LEAF_INDEXES: trees in the range).
 * @param desc   NULL for the defaults.
 * @param[out] shape  two values.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT (bad
 *         struct_size, type, output kind, tree range, negative n_rows), #CBG_ERR_UNSUPPORTED (type
 *         does not fit the model). Thread-safe; touches no GPU. @since 0.1
 */
CBG_API cbg_status cbg_predict_output_shape(const cbg_model_t* model, const cbg_predict_desc_t* desc, int64_t n_rows,
                                            int64_t* shape);

/**
 * @brief Evaluates the model on the rows of a pool on the GPU, into a caller-allocated device tensor.
 *
 * Everything happens on the device: the model is uploaded to the pool's device once (the first call
 * for a device uploads it and waits for that copy; later calls reuse it), categorical values are
 * hashed, rows are binarized and the trees evaluated there; no feature or result is copied to the
 * host (strict mode, #CBG_CONTEXT_STRICT_NO_D2H, holds). Results equal cbg_model_predict_host():
 * RawFormulaVal bit for bit (leaf values summed in tree order in double), the other types to
 * about 1e-15 (the GPU's exp and log).
 * @param model  the model; its device copies are cached in it (thread-safe).
 * @param pool   a pool on a GPU context; columns in device, managed or pinned host memory.
 * @param desc   NULL for the defaults.
 * @param out    borrowed (also for the DLPACK kinds: the deleter is not called): a writable tensor
 *               in device or managed memory of the context's device, of shape [rows, columns] or,
 *               for one column, [rows] (cbg_predict_output_shape()); float32 or float64 (leaf
 *               indexes also int32, uint32, int64, uint64); any non-overlapping strides. A raw
 *               device pointer is passed as a CBG_TENSOR_DLTENSOR describing it.
 * @param stream the stream to work on, or NULL for the pool's context stream. The pool's data must
 *               be ready for it: work on other streams is not waited for.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_INVALID_HANDLE, #CBG_ERR_INVALID_ARGUMENT (bad
 *         struct_size, type, output kind, tree range, overlapping output strides, a feature whose
 *         role differs between model and pool), #CBG_ERR_UNSUPPORTED (type does not fit the model,
 *         a model beyond the evaluator's limits), #CBG_ERR_NO_DEVICE (a CPU context), #CBG_ERR_DEVICE
 *         (host output or pageable host columns), #CBG_ERR_DTYPE, #CBG_ERR_SHAPE,
 *         #CBG_ERR_DLPACK_VERSION, #CBG_ERR_READ_ONLY, #CBG_ERR_CUDA, #CBG_ERR_OUT_OF_MEMORY.
 * Thread-safe (many threads may predict with one model and one pool, each on its own stream);
 * enqueues on `stream` (the calls contain no host synchronisation and can be captured into a CUDA
 * graph once the model has been uploaded to the device). @since 0.1
 */
CBG_API cbg_status cbg_predict_to_device(const cbg_model_t* model, const cbg_pool_t* pool,
                                         const cbg_predict_desc_t* desc, const cbg_tensor_ref_t* out,
                                         cbg_stream_t stream);

/**
 * @brief The same into a host tensor (kDLCPU or kDLCUDAHost), when the caller wants the results on
 *        the host: on a GPU context they are computed on the device and copied back once (an
 *        accounted device-to-host copy, refused above 64 KiB in strict mode); on a CPU context the
 *        host evaluator reads the pool's columns.
 * @return as cbg_predict_to_device(), plus #CBG_ERR_STRICT_D2H; #CBG_ERR_DEVICE for a device output.
 * Thread-safe; blocks until `out` is written. @since 0.1
 */
CBG_API cbg_status cbg_predict_to_host(const cbg_model_t* model, const cbg_pool_t* pool, const cbg_predict_desc_t* desc,
                                       const cbg_tensor_ref_t* out, cbg_stream_t stream);

/* ------------------------------------------------------------------------------------------------
 * The function table, for dlopen users
 * ---------------------------------------------------------------------------------------------- */

/** Version of the table that cbg_get_api() fills (see cbg_api_v1_t). @since 0.1 */
#define CBG_API_VERSION_1 1u

/**
 * @brief Every function of the C ABI as a pointer, so that a program that loads libcbgpu.so with
 *        `dlopen` needs a single `dlsym("cbg_get_api")`. Member `x` is the function `cbg_x`,
 *        documented above; the table holds no other state.
 *
 * Growth rule: later library versions only ever append members. A caller built against a newer
 * header checks `struct_size` before using a member that an older library may lack:
 * `t->struct_size >= offsetof(cbg_api_v1_t, member) + sizeof(t->member)`.
 * @since 0.1
 */
typedef struct cbg_api_v1_t {
  size_t struct_size;       /**< sizeof the library's table (>= what this header declares if as new). */
  uint32_t api_version;     /**< CBG_API_VERSION_1. */
  uint32_t library_version; /**< cbg_version_number() of the library that filled the table. */
  const char* (*status_string)(cbg_status);
  const char* (*last_error)(void);
  uint32_t (*version_number)(void);
  const char* (*version_string)(void);
  cbg_status (*build_info)(const char**);
  cbg_status (*device_count)(int32_t*);
  cbg_status (*set_log_callback)(cbg_log_fn, void*, int32_t);
  cbg_status (*context_desc_init)(cbg_context_desc_t*);
  cbg_status (*context_create)(const cbg_context_desc_t*, cbg_context_t**);
  cbg_status (*context_free)(cbg_context_t*);
  cbg_status (*context_device)(const cbg_context_t*, int32_t*);
  cbg_status (*context_set_stream)(cbg_context_t*, cbg_stream_t);
  cbg_status (*context_get_stream)(const cbg_context_t*, cbg_stream_t*);
  cbg_status (*context_sync)(cbg_context_t*);
  cbg_status (*copy_stats)(const cbg_context_t*, cbg_copy_stats_t*);
  cbg_status (*copy_stats_reset)(cbg_context_t*);
  cbg_status (*pool_desc_init)(cbg_pool_desc_t*);
  cbg_status (*pool_from_dlpack)(cbg_context_t*, const cbg_pool_desc_t*, cbg_pool_t**);
  cbg_status (*pool_free)(cbg_pool_t*);
  cbg_status (*pool_info)(const cbg_pool_t*, cbg_pool_info_t*);
  cbg_status (*pool_feature_name)(const cbg_pool_t*, int64_t, const char**);
  cbg_status (*pool_is_categorical)(const cbg_pool_t*, int64_t, int32_t*);
  cbg_status (*tensor_copy)(cbg_context_t*, const cbg_tensor_ref_t*, const cbg_tensor_ref_t*);
  cbg_status (*quantize_desc_init)(cbg_quantize_desc_t*);
  cbg_status (*quantize_pool)(cbg_pool_t*, const cbg_quantize_desc_t*, cbg_quantized_t**);
  cbg_status (*quantized_free)(cbg_quantized_t*);
  cbg_status (*quantized_borders)(const cbg_quantized_t*, int64_t, float*, int32_t, int32_t*, int32_t*);
  cbg_status (*quantized_feature_bins)(const cbg_quantized_t*, int64_t, uint8_t*, size_t);
  cbg_status (*model_load_file)(const char*, int32_t, cbg_model_t**);
  cbg_status (*model_load_buffer)(const void*, size_t, int32_t, cbg_model_t**);
  cbg_status (*model_save_file)(const cbg_model_t*, const char*, int32_t);
  cbg_status (*model_save_buffer)(cbg_model_t*, int32_t, const void**, size_t*);
  cbg_status (*model_free)(cbg_model_t*);
  cbg_status (*model_info)(const cbg_model_t*, cbg_model_info_t*);
  cbg_status (*model_feature_name)(const cbg_model_t*, int64_t, const char**);
  cbg_status (*model_cat_feature_index)(const cbg_model_t*, int64_t, int64_t*);
  cbg_status (*model_float_feature_index)(const cbg_model_t*, int64_t, int64_t*);
  cbg_status (*model_class_name)(const cbg_model_t*, int64_t, const char**);
  cbg_status (*model_info_value)(const cbg_model_t*, const char*, const char**);
  cbg_status (*cat_hash_string)(const char*, size_t, uint32_t*);
  cbg_status (*cat_hash_int64)(int64_t, uint32_t*);
  cbg_status (*model_prediction_columns)(const cbg_model_t*, int32_t, int64_t*);
  cbg_status (*model_predict_host_desc_init)(cbg_model_predict_host_desc_t*);
  cbg_status (*model_predict_host)(const cbg_model_t*, const cbg_model_predict_host_desc_t*, double*, size_t);
  cbg_status (*model_leaf_indexes_host)(const cbg_model_t*, const cbg_model_predict_host_desc_t*, uint32_t*, size_t);
  cbg_status (*train_callbacks_init)(cbg_train_callbacks_t*);
  cbg_status (*train)(cbg_pool_t*, const char*, cbg_pool_t*, const cbg_train_callbacks_t*, cbg_model_t**);
  cbg_status (*predict_desc_init)(cbg_predict_desc_t*);
  cbg_status (*predict_output_shape)(const cbg_model_t*, const cbg_predict_desc_t*, int64_t, int64_t*);
  cbg_status (*predict_to_device)(const cbg_model_t*, const cbg_pool_t*, const cbg_predict_desc_t*,
                                  const cbg_tensor_ref_t*, cbg_stream_t);
  cbg_status (*predict_to_host)(const cbg_model_t*, const cbg_pool_t*, const cbg_predict_desc_t*,
                                const cbg_tensor_ref_t*, cbg_stream_t);
  cbg_status (*context_memory_stats)(const cbg_context_t*, cbg_memory_stats_t*);
  cbg_status (*context_reset_memory_peak)(cbg_context_t*);
  cbg_status (*context_fail_allocation)(cbg_context_t*, uint64_t);
  cbg_status (*pool_cat_hashes)(const cbg_pool_t*, int64_t, uint32_t*, size_t);
  cbg_status (*pool_from_arrow)(cbg_context_t*, const cbg_pool_desc_t*, struct ArrowSchema*, struct ArrowDeviceArray*,
                                cbg_pool_t**);
  cbg_status (*model_feature_importance)(const cbg_model_t*, int32_t, const cbg_pool_t*, double*, size_t, int64_t*,
                                         int32_t*);
  cbg_status (*context_stage_times)(cbg_context_t*, const char**);
  cbg_status (*context_stage_times_reset)(cbg_context_t*);
  cbg_status (*nccl_unique_id)(uint8_t*);
  cbg_status (*context_abort)(cbg_context_t*);
} cbg_api_v1_t;

/**
 * @brief The library's function table of version `version`.
 * @param version  #CBG_API_VERSION_1 (the only version so far).
 * @param[out] table  receives a pointer to a static, immutable table (a `const cbg_api_v1_t*` for
 *                    version 1); valid while the library stays loaded. Never free it.
 * @return #CBG_OK, #CBG_ERR_NULL_POINTER, #CBG_ERR_UNSUPPORTED (unknown version: the library is
 *         older or newer than the caller expects).
 * Thread-safe; touches no GPU. @since 0.1
 */
CBG_API cbg_status cbg_get_api(uint32_t version, const void** table);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CBGPU_CBGPU_H */
