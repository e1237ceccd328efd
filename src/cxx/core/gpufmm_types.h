/*
 * gpufmm_types.h - the plain C types of gpufmm that its core works with
 * (valid C99, usable from C++): status codes, the backend and device
 * information, data types, BLAS operations and the kernel choices of the
 * Laplace FMM. It belongs to the core (src/cxx/core), which includes it
 * instead of the public header; gpufmm.h includes it, and C users include
 * gpufmm.h, never this header alone. Installed beside gpufmm.h.
 */
#ifndef GPUFMM_TYPES_H
#define GPUFMM_TYPES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status: every function of gpufmm.h returns one. */
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
  GPUFMM_ERROR_INTERNAL = 9,         /* a bug in gpufmm: please report it      */
  GPUFMM_ERROR_ACCURACY = 10,        /* the requested accuracy cannot be met
                                        for this input in this precision (the
                                        message says why)                      */
  GPUFMM_ERROR_COMMUNICATION = 11    /* an MPI call failed (gpufmm_mpi.h; the
                                        message names it)                      */
} gpufmm_status_t;

/* Backends and devices (gpufmm_context_create, gpufmm_context_device_info). */
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

/* Element types of device arrays. */
typedef enum gpufmm_dtype_e {
  GPUFMM_INT32 = 0,
  GPUFMM_INT64 = 1,
  GPUFMM_FLOAT32 = 2,
  GPUFMM_FLOAT64 = 3,
  GPUFMM_COMPLEX64 = 4,  /* two float32: re, im  (C99 float _Complex)  */
  GPUFMM_COMPLEX128 = 5  /* two float64: re, im  (C99 double _Complex) */
} gpufmm_dtype_t;

#define GPUFMM_MAX_RANK 3

/* Operations on a matrix argument of gpufmm_array_gemv / gpufmm_array_gemm. */
typedef enum gpufmm_op_e {
  GPUFMM_OP_N = 0, /* A        */
  GPUFMM_OP_T = 1, /* A^T      */
  GPUFMM_OP_C = 2  /* A^H (= A^T for real dtypes) */
} gpufmm_op_t;

/* Laplace FMM: the M2L stencil and the kernel strategy of each GPU stage
 * (the stencil and gpu_* fields of gpufmm_laplace_options_t). */
typedef enum gpufmm_laplace_stencil_e {
  GPUFMM_STENCIL_MODIFIED = 0, /* papers/000 sec. 2.2.3 (<= 109 + 80 M2L per box) */
  GPUFMM_STENCIL_STANDARD = 1  /* the classic list (<= 189 M2L per box)          */
} gpufmm_laplace_stencil_t;

/* Laplace FMM: the octree (the tree field of gpufmm_laplace_options_t). */
typedef enum gpufmm_laplace_tree_e {
  GPUFMM_LAPLACE_TREE_AUTO = 0,     /* adaptive where the points are clustered
                                       enough for it to pay (docs/laplace_fmm.md) */
  GPUFMM_LAPLACE_TREE_UNIFORM = 1,  /* every leaf at one depth (cost model)       */
  GPUFMM_LAPLACE_TREE_ADAPTIVE = 2  /* boxes split while they hold > s_max points;
                                       U, V, W, X lists                           */
} gpufmm_laplace_tree_t;

/* Laplace FMM: what the sources of a plan's evaluates carry (the densities
 * field of gpufmm_laplace_options_t). With eps (p = 0) the plan calibrates
 * its truncation number on them; an evaluate that passes what the plan was
 * not made for returns GPUFMM_ERROR_INVALID_ARGUMENT. */
typedef enum gpufmm_laplace_densities_e {
  GPUFMM_LAPLACE_DENSITIES_ANY = 0,      /* charges, dipoles or both: p meets eps
                                            for the worse of the two           */
  GPUFMM_LAPLACE_DENSITIES_CHARGES = 1,  /* charges only (dipoles NULL)        */
  GPUFMM_LAPLACE_DENSITIES_DIPOLES = 2   /* dipoles only (charges NULL)        */
} gpufmm_laplace_densities_t;

/* Kernel strategy of one stage of the CUDA driver (options.gpu_*; ignored on
 * the CPU). Which stage takes which is listed with the options; the kernels
 * and their measured speed are in docs/laplace_gpu.md. */
typedef enum gpufmm_laplace_strategy_e {
  GPUFMM_STRATEGY_TPB = 0, /* thread per box                                   */
  GPUFMM_STRATEGY_WPB = 1, /* warp per box                                     */
  GPUFMM_STRATEGY_BPB = 2, /* block (or warps) per box, cooperative             */
  GPUFMM_STRATEGY_GPB = 3, /* 8 threads per parent box (M2M)                    */
  GPUFMM_STRATEGY_GRP = 4, /* grouped M2L: every level in one launch            */
  GPUFMM_STRATEGY_TPT = 5,  /* thread per target (L2P, P2P)                     */
  GPUFMM_STRATEGY_GEMM = 6, /* M2L as one dense product per operator class and
                               group of receivers (cuBLAS; FP64 tensor cores)  */
  GPUFMM_STRATEGY_AUTO = 7  /* the driver chooses (M2L: GEMM or GRP)           */
} gpufmm_laplace_strategy_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUFMM_TYPES_H */
