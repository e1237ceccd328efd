/*
 * gpufmm.h - the C interface of gpufmm (valid C99, usable from C++).
 *
 * Conventions
 *  - Every function returns a gpufmm_status_t; GPUFMM_SUCCESS (0) means it
 *    worked. Outputs come back through pointer arguments, which are left
 *    untouched when the call fails.
 *  - After a failure, gpufmm_last_error_message() (thread-local) says what
 *    went wrong and names the offending argument.
 *  - Handles are opaque. A handle that was never created, or was destroyed,
 *    is reported as GPUFMM_ERROR_INVALID_HANDLE; destroying NULL is a no-op.
 *  - Sizes and counts are int64_t. Multi-dimensional arrays are column-major
 *    (Fortran order): dims[0] varies fastest.
 *  - The library never calls exit() or abort() on bad input.
 */
#ifndef GPUFMM_H
#define GPUFMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum gpufmm_status_e {
  GPUFMM_SUCCESS = 0,
  GPUFMM_ERROR_INVALID_ARGUMENT = 1, /* a value is out of its allowed range    */
  GPUFMM_ERROR_INVALID_HANDLE = 2,   /* NULL, never created, or destroyed      */
  GPUFMM_ERROR_OUT_OF_MEMORY = 3,    /* host or device allocation failed       */
  GPUFMM_ERROR_NO_DEVICE = 4,        /* the requested GPU does not exist       */
  GPUFMM_ERROR_DEVICE = 5,           /* a CUDA / cuBLAS / cuFFT call failed    */
  GPUFMM_ERROR_NOT_SUPPORTED = 6,    /* e.g. CUDA not built in, or an op that
                                        the dtype does not have                */
  GPUFMM_ERROR_SIZE_MISMATCH = 7,    /* shapes or element counts disagree      */
  GPUFMM_ERROR_TYPE_MISMATCH = 8,    /* dtypes disagree or are not allowed     */
  GPUFMM_ERROR_INTERNAL = 9          /* a bug in gpufmm: please report it      */
} gpufmm_status_t;

/* A static, human-readable name for a status ("GPUFMM_ERROR_SIZE_MISMATCH: ..."). */
const char* gpufmm_status_string(gpufmm_status_t s);

/* The message of the last failed call on this thread ("" if none yet). The
 * pointer stays valid until the next gpufmm call on the same thread. */
const char* gpufmm_last_error_message(void);

/* Library version: "MAJOR.MINOR.PATCH" and its parts (any pointer may be NULL). */
const char* gpufmm_version(int* major, int* minor, int* patch);

/* 1 if the library was built with CUDA, else 0. */
int gpufmm_cuda_built(void);

/* Number of CUDA devices visible (0 without CUDA or without a driver). */
gpufmm_status_t gpufmm_device_count(int* count);

/* ------------------------------------------------------------------------ */
/* Context: one backend (CPU or one GPU), its stream and library handles      */
/* ------------------------------------------------------------------------ */

typedef struct gpufmm_context_s* gpufmm_context_t;

#define GPUFMM_DEVICE_CPU (-1)     /* the OpenMP CPU backend                 */
#define GPUFMM_DEVICE_DEFAULT (-2) /* the first GPU if any, else the CPU     */

typedef enum gpufmm_backend_e {
  GPUFMM_BACKEND_CPU = 0,
  GPUFMM_BACKEND_CUDA = 1
} gpufmm_backend_t;

typedef struct gpufmm_device_info_s {
  char name[256];             /* "NVIDIA H100 80GB HBM3", or the CPU's name   */
  int backend;                /* a gpufmm_backend_t                           */
  int device;                 /* CUDA ordinal, or GPUFMM_DEVICE_CPU           */
  int multiprocessors;        /* SMs on a GPU; logical cores on the CPU       */
  int compute_major;          /* compute capability (0 on the CPU)            */
  int compute_minor;
  int64_t total_memory;       /* bytes of device (or physical host) memory    */
  int64_t free_memory;        /* bytes free now                               */
  int64_t shared_mem_per_block_optin; /* bytes (0 on the CPU)                 */
  int64_t l2_cache_bytes;     /* bytes (0 on the CPU)                         */
} gpufmm_device_info_t;

/* device >= 0: that GPU; GPUFMM_DEVICE_CPU; or GPUFMM_DEVICE_DEFAULT.
 * Errors: NOT_SUPPORTED (GPU asked for, CUDA not built in), NO_DEVICE (no
 * such GPU), INVALID_ARGUMENT (device < -2), DEVICE (CUDA init failed). */
gpufmm_status_t gpufmm_context_create(int device, gpufmm_context_t* ctx);
/* Frees the context. Arrays and plans made on it must be destroyed first;
 * destroying NULL is a no-op. */
gpufmm_status_t gpufmm_context_destroy(gpufmm_context_t ctx);
gpufmm_status_t gpufmm_context_backend(gpufmm_context_t ctx, gpufmm_backend_t* backend);
gpufmm_status_t gpufmm_context_device_info(gpufmm_context_t ctx, gpufmm_device_info_t* info);
/* Waits for all work queued on the context's stream (no-op on the CPU). */
gpufmm_status_t gpufmm_context_synchronize(gpufmm_context_t ctx);
/* The context's cudaStream_t (as void*), NULL on the CPU backend. Users may
 * launch their own kernels on it. */
gpufmm_status_t gpufmm_context_stream(gpufmm_context_t ctx, void** stream);

/* ------------------------------------------------------------------------ */
/* Device arrays                                                             */
/* ------------------------------------------------------------------------ */

typedef enum gpufmm_dtype_e {
  GPUFMM_INT32 = 0,
  GPUFMM_INT64 = 1,
  GPUFMM_FLOAT32 = 2,
  GPUFMM_FLOAT64 = 3,
  GPUFMM_COMPLEX64 = 4,  /* two float32: re, im  (C99 float _Complex)  */
  GPUFMM_COMPLEX128 = 5  /* two float64: re, im  (C99 double _Complex) */
} gpufmm_dtype_t;

#define GPUFMM_MAX_RANK 3

typedef struct gpufmm_array_s* gpufmm_array_t;

/* Bytes of one element of dtype (0 for an unknown dtype). */
int64_t gpufmm_dtype_size(gpufmm_dtype_t dtype);

/* A new array of rank 1..3 with dims[0..rank-1] >= 0 (column-major), on the
 * context's device (host memory on the CPU backend). Contents undefined.
 * Errors: INVALID_HANDLE (ctx), TYPE_MISMATCH (dtype), INVALID_ARGUMENT
 * (rank, negative dims, element count overflowing int64), OUT_OF_MEMORY. */
gpufmm_status_t gpufmm_array_create(gpufmm_context_t ctx, gpufmm_dtype_t dtype, int rank,
                                    const int64_t* dims, gpufmm_array_t* a);
/* An array over memory the caller owns (a device pointer on a GPU context, a
 * host pointer on the CPU backend); destroy does not free it. */
gpufmm_status_t gpufmm_array_wrap(gpufmm_context_t ctx, gpufmm_dtype_t dtype, int rank,
                                  const int64_t* dims, void* data, gpufmm_array_t* a);
gpufmm_status_t gpufmm_array_destroy(gpufmm_array_t a);

/* Queries. dims must hold GPUFMM_MAX_RANK entries; unused ones are set to 1. */
gpufmm_status_t gpufmm_array_dtype(gpufmm_array_t a, gpufmm_dtype_t* dtype);
gpufmm_status_t gpufmm_array_rank(gpufmm_array_t a, int* rank);
gpufmm_status_t gpufmm_array_dims(gpufmm_array_t a, int64_t* dims);
gpufmm_status_t gpufmm_array_size(gpufmm_array_t a, int64_t* count);
gpufmm_status_t gpufmm_array_context(gpufmm_array_t a, gpufmm_context_t* ctx);
/* The raw data pointer (device memory on a GPU context), for user kernels. */
gpufmm_status_t gpufmm_array_data(gpufmm_array_t a, void** data);

/* Host <-> array transfers of all elements; count must equal the array's
 * element count (SIZE_MISMATCH otherwise). The sync versions return when the
 * copy is complete; the async ones queue it on the context stream, and the
 * host buffer must stay valid (and unchanged, for uploads) until
 * gpufmm_context_synchronize. On the CPU backend async = sync. */
gpufmm_status_t gpufmm_array_upload(gpufmm_array_t a, const void* host, int64_t count);
gpufmm_status_t gpufmm_array_download(gpufmm_array_t a, void* host, int64_t count);
gpufmm_status_t gpufmm_array_upload_async(gpufmm_array_t a, const void* host, int64_t count);
gpufmm_status_t gpufmm_array_download_async(gpufmm_array_t a, void* host, int64_t count);

/* dst <- src, same dtype and element count, same context. */
gpufmm_status_t gpufmm_array_copy(gpufmm_array_t src, gpufmm_array_t dst);
/* dst[dst_offset + i] <- src[src_offset + i], i < count (flat, 0-based
 * element offsets); the ranges must lie inside both arrays and may not
 * overlap when src == dst. */
gpufmm_status_t gpufmm_array_copy_range(gpufmm_array_t src, int64_t src_offset,
                                        gpufmm_array_t dst, int64_t dst_offset, int64_t count);
/* Every element <- *value (value points to one element of the array's dtype). */
gpufmm_status_t gpufmm_array_fill(gpufmm_array_t a, const void* value);

/* ---- BLAS on arrays (float32, float64, complex64, complex128) ----
 * Scalars (alpha, beta, results) point to host values of the arrays' dtype,
 * except nrm2 whose result is the matching real type. Vectors are the whole
 * array (any rank). Complex dot is conjugated in x: sum conj(x_i) * y_i. */
gpufmm_status_t gpufmm_array_axpy(const void* alpha, gpufmm_array_t x, gpufmm_array_t y); /* y += alpha*x */
gpufmm_status_t gpufmm_array_scal(const void* alpha, gpufmm_array_t x);                  /* x *= alpha   */
gpufmm_status_t gpufmm_array_dot(gpufmm_array_t x, gpufmm_array_t y, void* result);
gpufmm_status_t gpufmm_array_nrm2(gpufmm_array_t x, void* result);

typedef enum gpufmm_op_e {
  GPUFMM_OP_N = 0, /* A        */
  GPUFMM_OP_T = 1, /* A^T      */
  GPUFMM_OP_C = 2  /* A^H (= A^T for real dtypes) */
} gpufmm_op_t;

/* y <- alpha*op(A)*x + beta*y; A rank 2 (m x n), x and y any rank with the
 * right element counts. */
gpufmm_status_t gpufmm_array_gemv(gpufmm_op_t trans, const void* alpha, gpufmm_array_t A,
                                  gpufmm_array_t x, const void* beta, gpufmm_array_t y);
/* C <- alpha*op(A)*op(B) + beta*C, all rank 2 (C is m x n). */
gpufmm_status_t gpufmm_array_gemm(gpufmm_op_t transa, gpufmm_op_t transb, const void* alpha,
                                  gpufmm_array_t A, gpufmm_array_t B, const void* beta,
                                  gpufmm_array_t C);

/* ---- Reductions: result points to one host element of the array's dtype.
 * sum: every dtype (integers sum in their own type, wrapping like C).
 * min/max: int32, int64, float32, float64 (TYPE_MISMATCH for complex).
 * An empty array: sum = 0; min/max return INVALID_ARGUMENT. NaNs propagate. */
gpufmm_status_t gpufmm_array_sum(gpufmm_array_t a, void* result);
gpufmm_status_t gpufmm_array_min(gpufmm_array_t a, void* result);
gpufmm_status_t gpufmm_array_max(gpufmm_array_t a, void* result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUFMM_H */
