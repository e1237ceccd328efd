/*
 * gpufmm.h - the C interface of gpufmm (valid C99, usable from C++).
 *
 * Citations. "papers/000" .. "papers/002" below name the papers gpufmm
 * implements (full references in docs/references.md of the source tree):
 *   papers/000  N. A. Gumerov and R. Duraiswami, "Fast multipole methods on
 *               graphics processors", J. Comput. Phys. 227, 8290-8313 (2008)
 *               (the Laplace FMM; numbering of the 2007 preprint);
 *   papers/001  N. Vaughn, L. Wilson and R. Krasny, "A GPU-accelerated
 *               barycentric Lagrange treecode", arXiv:2003.01836 (2020);
 *   papers/002  C. Cecka, "Low communication FMM-accelerated FFT on GPUs",
 *               Proc. SC17 (2017), doi:10.1145/3126908.3126919.
 * "eq. N", "Table N" and "sec. N" are the numbering of the paper cited
 * with them, or of the paper named at the head of their section.
 *
 * Conventions
 *  - Every function returns a gpufmm_status_t; GPUFMM_SUCCESS (0) means it
 *    worked. Outputs come back through pointer arguments, which are left
 *    untouched when the call fails.
 *  - After a failure, gpufmm_last_error_message() (thread-local) says what
 *    went wrong and names the offending argument.
 *  - Handles are opaque ids, not addresses, and a value is never handed out
 *    twice: a handle that was never created, or was destroyed, is reported
 *    as GPUFMM_ERROR_INVALID_HANDLE, forever; destroying NULL is a no-op.
 *  - Threads. Any call may run on any thread, at the same time as any other
 *    call. On one handle:
 *      context: every call may run concurrently (GPU work of all threads is
 *        queued on the context's one stream, in the order the calls make);
 *      array: queries (dtype, rank, dims, size, context, data) and calls
 *        that only read the array may run concurrently; a call that writes
 *        the array's data concurrently with another call reading or writing
 *        it is a data race on that memory, as with any buffer (the library
 *        does not lock arrays);
 *      tree: every call may run concurrently (a tree is read-only);
 *      Laplace plan: evaluate, evaluate_arrays and plan_info may be called
 *        from several threads; they run one at a time per plan (the plan's
 *        workspace is shared), plans of their own run in parallel.
 *    Destroy (every handle type) may be called from any thread at any time:
 *    the handle becomes invalid at once (a call that starts afterwards gets
 *    INVALID_HANDLE), destroy waits for the calls already running that use
 *    the handle (on it, or as an argument, e.g. an array passed to
 *    gpufmm_laplace_evaluate_arrays), then frees it and returns SUCCESS. Of
 *    two destroys of one handle, one succeeds and the other gets
 *    INVALID_HANDLE. A context that still owns arrays, trees or plans is not
 *    destroyed (INVALID_ARGUMENT) and stays valid. Pointers taken from a
 *    handle (gpufmm_array_data, gpufmm_context_stream) die with it.
 *  - Sizes and counts are int64_t. Multi-dimensional arrays are column-major
 *    (Fortran order): dims[0] varies fastest.
 *  - The library never calls exit() or abort() on bad input.
 */
#ifndef GPUFMM_H
#define GPUFMM_H

#include <stddef.h>
#include <stdint.h>

#include "gpufmm_types.h" /* status, backend, dtype, op, Laplace kernel choices */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status                                                                    */
/* ------------------------------------------------------------------------ */

/* gpufmm_status_t, the status codes: in gpufmm_types.h. */

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

/* GPUFMM_DEVICE_CPU, GPUFMM_DEVICE_DEFAULT, gpufmm_backend_t and
 * gpufmm_device_info_t: in gpufmm_types.h. */

/* device >= 0: that GPU; GPUFMM_DEVICE_CPU; or GPUFMM_DEVICE_DEFAULT.
 * Errors: NOT_SUPPORTED (GPU asked for, CUDA not built in), NO_DEVICE (no
 * such GPU), INVALID_ARGUMENT (device < -2), DEVICE (CUDA init failed). */
gpufmm_status_t gpufmm_context_create(int device, gpufmm_context_t* ctx);
/* Frees the context, once the calls running on it have returned (see
 * "Threads" above). Arrays, trees and plans made on it must be destroyed
 * first (else INVALID_ARGUMENT, the context stays valid); destroying NULL is
 * a no-op. */
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

/* gpufmm_dtype_t and GPUFMM_MAX_RANK: in gpufmm_types.h. */

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

/* gpufmm_op_t (GPUFMM_OP_N, GPUFMM_OP_T, GPUFMM_OP_C): in gpufmm_types.h. */

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

/* ------------------------------------------------------------------------ */
/* Octree                                                                    */
/* ------------------------------------------------------------------------ */
/*
 * A uniform-depth octree over N sources and M receivers (papers/000 sec. 2):
 * the points of each set sorted by 63-bit Morton key, the non-empty boxes of
 * every level 0..l_max, and CSR interaction lists. docs/tree.md describes the
 * data layout and conventions in full. In short:
 *  - Keys: 21 bits per axis (levels 0..GPUFMM_TREE_MAX_LEVEL = 21); bit 3k of
 *    a key is bit k of the x cell index, 3k+1 of y, 3k+2 of z. A box key at
 *    level l is a point key shifted right by 3*(21-l).
 *  - Points: sorted stably by key (equal keys keep the user's order);
 *    perm[i] = user index of sorted point i, iperm[j] = sorted position of
 *    user point j (0-based, int32).
 *  - Boxes: only non-empty ones, level-major: the boxes of level l are the
 *    global indices [level_offsets[l], level_offsets[l+1]), ascending by key.
 *    Per box: key, parent (global index, -1 for the root), children
 *    [child_offsets[b], child_offsets[b+1]), sorted points
 *    [point_begin[b], point_end[b]), centre (xyz at 3b).
 *  - Lists: one row per receiver box (global receiver index), entries are
 *    global source-box indices, ascending within each row:
 *      NEIGHBORS  same-level source boxes touching the receiver box (itself
 *                 included), <= 27, every level;
 *      M2L        the standard interaction list: children of the parent's
 *                 neighbours that do not touch the box, <= 189, levels >= 2;
 *      M2L_TYPE1  the M2L entries translated to the box itself in the
 *                 modified stencil, <= 109, levels >= 2;
 *      M2L_TYPE2  row = a receiver box P at level l; entries = source boxes at
 *                 level l+1 translated to P (children of P's neighbours
 *                 touching none of P's children, at distance >= D* of
 *                 eq. 23), <= 80, levels 1..l_max-1.
 *    M2L entries also carry a translation class (see
 *    gpufmm_tree_m2l_class_info) and the ratio eta of eq. (20), from which
 *    the truncation number of eq. (24) follows: p' = p ln(eta*)/ln(eta).
 *  - Receivers == sources (recv NULL): the receiver set is the source set;
 *    receiver and source box indices coincide.
 *  - N = 0 or M = 0 is valid: the set has no boxes and every list is empty
 *    (the rows of the other set still exist). With no points at all and no
 *    given cube, the cube is centred at the origin with side 1.
 */

#define GPUFMM_TREE_MAX_LEVEL 21   /* deepest supported level (21 bits per axis) */
#define GPUFMM_TREE_NUM_LISTS 4
#define GPUFMM_TREE_NUM_CLASSES 559 /* M2L class codes are in [0, 559)       */

typedef struct gpufmm_tree_s* gpufmm_tree_t;

typedef enum gpufmm_tree_set_e {
  GPUFMM_TREE_SOURCES = 0,
  GPUFMM_TREE_RECEIVERS = 1
} gpufmm_tree_set_t;

typedef enum gpufmm_tree_list_e {
  GPUFMM_TREE_NEIGHBORS = 0,
  GPUFMM_TREE_M2L = 1,
  GPUFMM_TREE_M2L_TYPE1 = 2,
  GPUFMM_TREE_M2L_TYPE2 = 3
} gpufmm_tree_list_t;

/* Bit masks for gpufmm_tree_options_t.lists. */
#define GPUFMM_TREE_LIST_BIT(list) (1 << (list))
#define GPUFMM_TREE_LISTS_ALL 15

typedef struct gpufmm_tree_options_s {
  int l_max;       /* >= 0: the depth to use (0..GPUFMM_TREE_MAX_LEVEL);
                      -1: derive it from s_max (the default)                  */
  int s_max;       /* with l_max = -1: the smallest depth at which no source
                      box and no receiver box holds more than s_max points
                      (>= 1; default 64), capped at max_level                 */
  int max_level;   /* cap on the derived depth, 0..GPUFMM_TREE_MAX_LEVEL
                      (default 21). Points closer than side/2^max_level can
                      not be separated: their leaf keeps more than s_max
                      points (no error; see the statistics)                   */
  int cube_given;  /* 0 (default): the cube is the bounding box's largest
                      extent (enlarged by 2^-12) around its centre;
                      1: use cube_center and cube_side                        */
  double cube_center[3];
  double cube_side;  /* > 0 when cube_given                                  */
  int lists;       /* which lists to build: OR of GPUFMM_TREE_LIST_BIT(list);
                      default GPUFMM_TREE_LISTS_ALL                           */
  int kind;        /* GPUFMM_TREE_UNIFORM (default): every leaf at l_max;
                      GPUFMM_TREE_ADAPTIVE: a box is split while it holds more
                      than s_max points, up to max_level, so leaves have
                      variable depth (l_max must be -1; the lists keep their
                      same-level definitions, docs/tree.md)                   */
} gpufmm_tree_options_t;

/* Values of gpufmm_tree_options_t.kind. */
#define GPUFMM_TREE_UNIFORM 0
#define GPUFMM_TREE_ADAPTIVE 1

/* Fills *opt with the defaults above. Errors: INVALID_ARGUMENT (opt NULL). */
gpufmm_status_t gpufmm_tree_options_init(gpufmm_tree_options_t* opt);

/* Builds an octree on ctx (CPU backend: OpenMP; GPU: everything on the
 * device, on the context's stream; the call returns when the tree is
 * complete). src: nsrc points, 3 x nsrc doubles in host memory (x0 y0 z0 x1
 * ...). recv: nrecv receivers likewise, or NULL for "the receivers are the
 * sources" (then nrecv must equal nsrc). opt NULL = defaults. src (recv) may be
 * NULL only when nsrc (nrecv) is 0; pass any non-NULL recv with nrecv = 0 for
 * an empty receiver set.
 * Errors: INVALID_HANDLE (ctx); INVALID_ARGUMENT (tree NULL; negative or
 * too large counts (> 2^31 - 2 points); a NULL coordinate pointer with a
 * positive count; l_max < -1 or > GPUFMM_TREE_MAX_LEVEL; s_max < 1 with
 * l_max = -1; max_level outside 0..21; lists outside 0..15; kind not
 * GPUFMM_TREE_UNIFORM or GPUFMM_TREE_ADAPTIVE; cube_given not 0 or 1;
 * cube_given with a non-finite centre or a side that is not > 0 and finite; a NaN or Inf
 * coordinate - the message names the set and the first bad point index; with
 * cube_given, a point outside the cube - likewise named; a coordinate range
 * so wide that the cube's side overflows); SIZE_MISMATCH (recv NULL and
 * nrecv != nsrc); NOT_SUPPORTED (more boxes than int32 indices hold);
 * OUT_OF_MEMORY; DEVICE (a CUDA call failed). */
gpufmm_status_t gpufmm_tree_build(gpufmm_context_t ctx, const gpufmm_tree_options_t* opt,
                                  int64_t nsrc, const double* src, int64_t nrecv,
                                  const double* recv, gpufmm_tree_t* tree);

/* As gpufmm_tree_build, with the coordinates in arrays of ctx: float64, rank
 * 2, dims (3, n) (dims[1] may be 0). recv NULL: receivers are the sources. On
 * a GPU context the coordinates are read on the device (no host copy).
 * Errors: as gpufmm_tree_build, plus INVALID_HANDLE (src, or a non-NULL recv),
 * TYPE_MISMATCH (not float64), SIZE_MISMATCH (rank or dims[0] != 3),
 * INVALID_ARGUMENT (an array of another context). */
gpufmm_status_t gpufmm_tree_build_arrays(gpufmm_context_t ctx, const gpufmm_tree_options_t* opt,
                                         gpufmm_array_t src, gpufmm_array_t recv,
                                         gpufmm_tree_t* tree);

/* Frees the tree (NULL is a no-op). Errors: INVALID_HANDLE. */
gpufmm_status_t gpufmm_tree_destroy(gpufmm_tree_t tree);

typedef struct gpufmm_tree_list_stats_s {
  int built;        /* 0 if the list was not requested (the rest is 0)       */
  int64_t rows;     /* rows counted: receiver boxes at the levels where the
                       list is defined (NEIGHBORS all, M2L and TYPE1 2..l_max,
                       TYPE2 1..l_max-1), or at that one level                */
  int64_t entries;  /* entries in those rows                                  */
  int64_t min, max; /* row lengths (0 when rows = 0)                          */
  double mean;
} gpufmm_tree_list_stats_t;

typedef struct gpufmm_tree_stats_s {
  int l_max;
  int same_sets;              /* 1 when the receivers are the sources         */
  int backend;                /* gpufmm_backend_t of the tree's context       */
  int64_t num_sources, num_receivers;
  double cube_center[3];
  double cube_side;
  /* non-empty boxes per level (entries beyond l_max are 0) and in total */
  int64_t source_boxes[GPUFMM_TREE_MAX_LEVEL + 1];
  int64_t receiver_boxes[GPUFMM_TREE_MAX_LEVEL + 1];
  int64_t total_source_boxes, total_receiver_boxes;
  /* points per (non-empty) leaf box at l_max; 0 for an empty set */
  int64_t source_leaf_min, source_leaf_max;
  double source_leaf_mean;
  int64_t receiver_leaf_min, receiver_leaf_max;
  double receiver_leaf_mean;
  /* list lengths, overall and per receiver-box level */
  gpufmm_tree_list_stats_t lists[GPUFMM_TREE_NUM_LISTS];
  gpufmm_tree_list_stats_t list_levels[GPUFMM_TREE_NUM_LISTS][GPUFMM_TREE_MAX_LEVEL + 1];
  /* build time in seconds, per phase: upload (host coordinates to the GPU; 0
     on the CPU or for device arrays), keys (validation, bounding cube, Morton
     keys), sort (stable key sort, inverse permutation), hierarchy (depth,
     boxes, links, centres), lists; total = wall time of the build call. On a
     GPU the phases are timed with CUDA events on the stream. */
  double time_upload, time_keys, time_sort, time_hierarchy, time_lists, time_total;
} gpufmm_tree_stats_t;

/* Statistics of a tree (computed on the first call, then cached).
 * Errors: INVALID_HANDLE (tree), INVALID_ARGUMENT (stats NULL), DEVICE. */
gpufmm_status_t gpufmm_tree_stats(gpufmm_tree_t tree, gpufmm_tree_stats_t* stats);

/* Level offsets of a set's boxes: offsets[0..l_max+1], count = l_max + 2.
 * Errors: INVALID_HANDLE; INVALID_ARGUMENT (set, offsets NULL);
 * SIZE_MISMATCH (count != l_max + 2). */
gpufmm_status_t gpufmm_tree_level_offsets(gpufmm_tree_t tree, gpufmm_tree_set_t set,
                                          int64_t count, int64_t* offsets);

/* Copies a set's sorted point data to host buffers of n entries (n must be
 * the set's number of points); any output may be NULL to skip it.
 * Errors: INVALID_HANDLE; INVALID_ARGUMENT (set); SIZE_MISMATCH (n); DEVICE. */
gpufmm_status_t gpufmm_tree_get_points(gpufmm_tree_t tree, gpufmm_tree_set_t set, int64_t n,
                                       uint64_t* keys, int32_t* perm, int32_t* iperm);

/* Copies a set's boxes (all levels) to host buffers; nboxes must equal the
 * set's total number of boxes. keys, parent, point_begin, point_end hold
 * nboxes entries, child_offsets nboxes + 1, centers 3 * nboxes. Any output may
 * be NULL. Errors: INVALID_HANDLE; INVALID_ARGUMENT (set); SIZE_MISMATCH
 * (nboxes); DEVICE. */
gpufmm_status_t gpufmm_tree_get_boxes(gpufmm_tree_t tree, gpufmm_tree_set_t set, int64_t nboxes,
                                      uint64_t* keys, int32_t* parent, int32_t* child_offsets,
                                      int32_t* point_begin, int32_t* point_end, double* centers);

/* Size of a list: rows (= total receiver boxes) and entries.
 * Errors: INVALID_HANDLE; INVALID_ARGUMENT (list unknown, rows or entries
 * NULL, or the list was not built). */
gpufmm_status_t gpufmm_tree_list_size(gpufmm_tree_t tree, gpufmm_tree_list_t list,
                                      int64_t* rows, int64_t* entries);

/* Copies a list: offsets[rows + 1], index[entries]; for the M2L lists also
 * cls[entries] and eta[entries]. Any output may be NULL. rows and entries must
 * equal gpufmm_tree_list_size's. Errors: INVALID_HANDLE; INVALID_ARGUMENT
 * (list unknown or not built; cls or eta non-NULL for NEIGHBORS);
 * SIZE_MISMATCH (rows, entries); DEVICE. */
gpufmm_status_t gpufmm_tree_get_list(gpufmm_tree_t tree, gpufmm_tree_list_t list, int64_t rows,
                                     int64_t entries, int64_t* offsets, int32_t* index,
                                     int32_t* cls, double* eta);

/* Decodes an M2L class code. to_parent: 0 for a same-level class (M2L and
 * M2L_TYPE1 entries), 1 for a type-2 class. offset: source-box centre minus
 * row's receiver-box centre, in units of the SOURCE box size (for type 2 the
 * row's box P is one level coarser than the source box): integers in -3..3
 * with max |offset| >= 2, or halves of odd integers in -5..5. eta: the
 * ratio of eq. (20) with radii sqrt(3)/2 (source box) and sqrt(3)/2 or sqrt(3)
 * (receiver box or P) in source-box units. Codes:
 *   same level  cls = (dx+3) + 7(dy+3) + 49(dz+3)
 *   type 2      cls = 343 + (ex+5)/2 + 6(ey+5)/2 + 36(ez+5)/2, offset = e/2.
 * Any output may be NULL. Errors: INVALID_ARGUMENT (a code that no list
 * holds: out of range, touching boxes, or a parent position not of type 2). */
gpufmm_status_t gpufmm_tree_m2l_class_info(int32_t cls, int* to_parent, double offset[3],
                                           double* eta);

/* ------------------------------------------------------------------------ */
/* Laplace FMM                                                               */
/* ------------------------------------------------------------------------ */
/*
 * The fast multipole method of Gumerov & Duraiswami (papers/000) for
 *
 *   phi(y_i) = sum_j  q_j / |y_i - x_j|  +  d_j . (y_i - x_j) / |y_i - x_j|^3
 *
 * (kernel 1/r, no 1/(4 pi); the dipole term is d_j . grad_x (1/|y - x|) at
 * x = x_j) and its gradient grad_y phi at the targets y_i. A target that
 * coincides with a source gets no self term. Real polynomial basis, RCR
 * translations, the modified M2L stencil (type-1 to the box, type-2 to the
 * parent) and a per-translation truncation number (eq. 24). The truncation
 * number p follows from the requested relative L2 error eps (eq. 36): by
 * default the plan measures the error it reaches (options.calibrate), else
 * from a worst-case error model, with 8 more terms when the leaves are nearly
 * empty (fewer than 9 near-field sources per target: the closest pairs then
 * go through the far field; docs/laplace_fmm.md section 3).
 * gpufmm_laplace_plan_info reports p and the measured error. For
 * eps beyond what p = GPUFMM_LAPLACE_MAX_P certifies in double (below
 * ~7e-12), the plan keeps the full p for every translation and uses the
 * standard stencil, whatever options.stencil says.
 *
 * Plan once, evaluate many times: the plan holds the octree, lists and
 * translation data of one geometry; each evaluate takes new charges and/or
 * dipoles. Arrays are column-major: coordinates, dipoles and gradients are
 * 3 x n (x0 y0 z0 x1 ...), charges and potentials n. The translation tables
 * depend only on (p, precision) and are cached per process and, on a GPU
 * context, per device (shared by plans; up to 64 MB per device, released
 * with the device's last context; options.table_cache = 0 builds a plan's
 * tables for it alone).
 */

typedef struct gpufmm_laplace_plan_s* gpufmm_laplace_plan_t;

/* gpufmm_laplace_stencil_t (GPUFMM_STENCIL_*) and gpufmm_laplace_strategy_t
 * (GPUFMM_STRATEGY_*), the values of the stencil and gpu_* fields: in gpufmm_types.h. */

typedef struct gpufmm_laplace_options_s {
  double eps;          /* requested relative L2 error of potential and gradient
                          (eq. 36), 0 < eps < 1; default 1e-6; with
                          GPUFMM_FLOAT32 at least 1e-5 (GPUFMM_ERROR_ACCURACY
                          below: single precision does not reach it; also
                          where the calibration measures more than eps at
                          float's largest p on the given points, and the
                          error still falls with p)                          */
  int precision;       /* GPUFMM_FLOAT64 (default) or GPUFMM_FLOAT32: the
                          arithmetic of evaluate; host inputs and outputs of
                          gpufmm_laplace_evaluate are double either way        */
  int p;               /* 0 (default): from eps; else force this truncation
                          number (1..GPUFMM_LAPLACE_MAX_P)                      */
  int l_max;           /* -1 (default): chosen by the cost model; else depth
                          (in double, a depth whose leaves are so sparse that
                          eps would need more than GPUFMM_LAPLACE_MAX_P terms
                          gives way to the cost model's; plan_info.l_max
                          reports the depth used)                              */
  int s_max;           /* -1 (default): cost model; else at most s_max points
                          per finest box (used when l_max = -1)                */
  int stencil;         /* a gpufmm_laplace_stencil_t, default MODIFIED          */
  int variable_truncation; /* 1 (default): p' of eq. 24 per translation; 0: p */
  int table_cache;     /* 1 (default): translation tables shared through the
                          per-process and per-device caches; 0: built for
                          this plan alone                                      */
  /* GPU context only: the kernel strategy of each stage (a
   * gpufmm_laplace_strategy_t; defaults: the fastest measured on an H100):    */
  int gpu_p2m;         /* BPB (default), WPB or TPB                             */
  int gpu_m2m;         /* AUTO (default: GEMM in double where p >= 27, else
                          BPB), BPB, GEMM (dense products of the eight octant
                          operators, levels whose buffers fit; others BPB),
                          GPB or TPB                                           */
  int gpu_m2l;         /* AUTO (default: GEMM where p <= 24, or p <= 36 on
                          adaptive trees and uniform ones of at most 1e5
                          translations, and its operators fit in 1/32 of the
                          device's memory; beyond p = 36 on those trees GEMM
                          as the products of the RCR factors; else GRP), GEMM,
                          GRP (GEMM and GRP: BPB where p is too large for
                          them), BPB, WPB or TPB                               */
  int gpu_l2l;         /* BPB (default) or TPB                                  */
  int gpu_l2p;         /* TPT (default), BPB or TPB                             */
  int gpu_p2p;         /* BPB (default) or TPT                                  */
  int gpu_overlap;     /* 1 (default): near field on a second stream, alongside
                          the far field; 0: after it                           */
  int gpu_graph;       /* 1 (default): the device work of an evaluate replayed
                          as one CUDA graph while the arguments repeat; 0:
                          kernels launched one by one                          */
  int tree;            /* a gpufmm_laplace_tree_t: AUTO (default), UNIFORM or
                          ADAPTIVE (leaves at the depth their points need;
                          s_max is then the split threshold, -1: the
                          backend's default; l_max must be -1)                 */
  int calibrate;       /* with p = 0: 1 (default): p is the smallest whose
                          error, measured by evaluates of this plan on
                          reference densities at up to 2048 sampled targets
                          against the direct sum, is within eps/2.2 (lands
                          within ~2-4x below eps; docs/laplace_fmm.md sec. 3);
                          0: p from the worst-case error model (no test
                          evaluates; ~10-50x below eps on most inputs, but
                          up to 1.6x above it on cubic lattices of dipoles
                          at eps 1e-9, and 8x for dipoles at targets far
                          from every source: docs/laplace_fmm.md sec. 3)     */
  int densities;       /* a gpufmm_laplace_densities_t: ANY (default), CHARGES
                          or DIPOLES - what the evaluates' sources carry; the
                          calibration uses it, and an evaluate passing the
                          other kind returns INVALID_ARGUMENT                   */
  double cube_padding; /* a uniform tree's cube against the points' bounding
                          cube, sharing its lower corner, so that leaves fall
                          between two depths' sizes: 0 (default): chosen by
                          the cost model among 2^(k/6), k = 0..5, where it
                          chooses the depth (l_max = s_max = -1; not for
                          FLOAT32 with separate targets), else 1;
                          or a factor in [1, 2). An adaptive tree takes 1
                          (with tree = ADAPTIVE only 0 or 1 are accepted);
                          plan_info.cube_padding reports the one used         */
} gpufmm_laplace_options_t;

/* The defaults above as an initializer, member by member (what
 * gpufmm_laplace_options_init sets, and the default values of the Fortran
 * type gpufmm_laplace_options, generated from it):
 *     gpufmm_laplace_options_t opt = GPUFMM_LAPLACE_OPTIONS_DEFAULT;       */
#define GPUFMM_LAPLACE_OPTIONS_DEFAULT {                                      \
    1e-6,                         /* eps                                   */ \
    GPUFMM_FLOAT64,               /* precision                             */ \
    0,                            /* p: from eps                           */ \
    -1,                           /* l_max: cost model                     */ \
    -1,                           /* s_max: cost model                     */ \
    GPUFMM_STENCIL_MODIFIED,      /* stencil                               */ \
    1,                            /* variable_truncation                   */ \
    1,                            /* table_cache                           */ \
    GPUFMM_STRATEGY_BPB,          /* gpu_p2m                               */ \
    GPUFMM_STRATEGY_AUTO,         /* gpu_m2m                               */ \
    GPUFMM_STRATEGY_AUTO,         /* gpu_m2l                               */ \
    GPUFMM_STRATEGY_BPB,          /* gpu_l2l                               */ \
    GPUFMM_STRATEGY_TPT,          /* gpu_l2p                               */ \
    GPUFMM_STRATEGY_BPB,          /* gpu_p2p                               */ \
    1,                            /* gpu_overlap                           */ \
    1,                            /* gpu_graph                             */ \
    GPUFMM_LAPLACE_TREE_AUTO,     /* tree                                  */ \
    1,                            /* calibrate                             */ \
    GPUFMM_LAPLACE_DENSITIES_ANY, /* densities                             */ \
    0.0                           /* cube_padding: cost model              */ \
  }

#define GPUFMM_LAPLACE_MAX_P 50  /* = kMaxP of the math (src/cxx/fmm/laplace/basis.hpp) */

typedef struct gpufmm_laplace_info_s {
  int p;                 /* truncation number                                   */
  int l_max;             /* depth of the octree                                 */
  int precision;         /* GPUFMM_FLOAT32 or GPUFMM_FLOAT64                    */
  int backend;           /* a gpufmm_backend_t                                   */
  int64_t nsrc, ntrg;
  int64_t source_boxes, target_boxes;  /* non-empty boxes, all levels          */
  int64_t m2l_translations;            /* S|R translations per evaluate        */
  int64_t p2p_pairs;                    /* source-target pairs in the near field */
  double plan_seconds;                  /* time to build the plan               */
  /* per-stage seconds of the last evaluate (papers/000 Table 8): */
  double t_p2m;          /* "S exp": multipole expansions of the leaves         */
  double t_upward;       /* "up trans": M2M                                     */
  double t_downward;     /* "down trans": M2L (type 1 and 2) and L2L            */
  double t_l2p;          /* "R eval": local expansions at the targets (and, in an
                            adaptive tree, multipoles of W boxes: M2P)           */
  double t_p2p;          /* "sparse": near-field direct sum                     */
  double t_total;        /* whole evaluate, transfers included                  */
  int adaptive;          /* 1: the tree is adaptive (options.tree)              */
  int calibration_evaluates; /* test evaluates of options.calibrate (0: none)   */
  double measured_eps;   /* the relative L2 error they measured at p (the larger
                            of potential and gradient, and of charges and
                            dipoles per options.densities); 0 when p was not
                            calibrated. Above eps / 2.2 only where the largest
                            p (50 in double, 16 in float) reaches no further:
                            the plan then has that p (in float at its rounding
                            floor: the smallest p whose truncation the floor
                            hides, docs/laplace_fmm.md sec. 3)                  */
  double cube_padding;   /* the tree's cube against the points' bounding cube
                            (options.cube_padding; 1 for an adaptive tree)      */
} gpufmm_laplace_info_t;

/* Fills *opt with the defaults. Errors: INVALID_ARGUMENT (opt NULL). */
gpufmm_status_t gpufmm_laplace_options_init(gpufmm_laplace_options_t* opt);

/* Builds a plan for nsrc sources and ntrg targets (3 x n doubles in host
 * memory); targets == NULL means "at the sources" (ntrg is then ignored).
 * opt NULL = defaults.
 * Errors: INVALID_HANDLE (ctx); INVALID_ARGUMENT (plan NULL; nsrc or ntrg
 * negative; a NULL coordinate pointer with a positive count; eps not in
 * (0, 1); p, l_max, s_max, stencil, precision, a 0/1 flag or a gpu_* kernel
 * out of range, named in the message; a NaN or Inf
 * coordinate, named with its index; precision FLOAT32 and points whose
 * bounding cube's side is outside [2^-32, 2^60]); ACCURACY (a nonzero
 * coordinate below 2^-458 in magnitude, named with its index, or a cube
 * side above 2^500: squared distances would underflow or overflow double;
 * FLOAT32 with eps below 1e-5, or a calibrated FLOAT32 plan whose test
 * evaluates measure more than eps at p = 16, the largest in float, with the
 * error still falling with p - not float's rounding floor, which
 * plan_info.measured_eps reports: the message names the error measured);
 * OUT_OF_MEMORY; DEVICE. */
gpufmm_status_t gpufmm_laplace_plan_create(gpufmm_context_t ctx, const gpufmm_laplace_options_t* opt,
                                           int64_t nsrc, const double* sources, int64_t ntrg,
                                           const double* targets, gpufmm_laplace_plan_t* plan);
gpufmm_status_t gpufmm_laplace_plan_destroy(gpufmm_laplace_plan_t plan);

/* Evaluates with host arrays: charges[nsrc] and/or dipoles[3 x nsrc] (NULL
 * for what the sources do not carry; not both NULL), pot[ntrg] and/or
 * grad[3 x ntrg] (NULL for what is not wanted; not both NULL). Outputs are
 * overwritten, in the user's order.
 * Errors: INVALID_HANDLE (plan); INVALID_ARGUMENT (both inputs NULL, both
 * outputs NULL, a NaN or Inf charge or dipole - named with its index; for a
 * FLOAT32 plan a charge or dipole component that float cannot hold: above
 * 3.4e38 or nonzero below 1.2e-38 in magnitude); ACCURACY (a potential or
 * gradient overflowed the plan's precision, e.g. a source within ~1e-13 of a
 * target in single precision; the target is named); OUT_OF_MEMORY; DEVICE;
 * the outputs are unchanged on any error. */
gpufmm_status_t gpufmm_laplace_evaluate(gpufmm_laplace_plan_t plan, const double* charges,
                                        const double* dipoles, double* pot, double* grad);

/* The same with gpufmm arrays on the plan's context (data stay on the
 * device): dtype = the plan's precision; charges and pot have nsrc / ntrg
 * elements, dipoles and grad 3*nsrc / 3*ntrg (any rank). NULL handles for
 * what is absent or not wanted.
 * Errors as gpufmm_laplace_evaluate, plus INVALID_HANDLE (a non-NULL handle
 * that is not a live array), TYPE_MISMATCH (dtype), SIZE_MISMATCH (element
 * count), INVALID_ARGUMENT (an array of another context). */
gpufmm_status_t gpufmm_laplace_evaluate_arrays(gpufmm_laplace_plan_t plan, gpufmm_array_t charges,
                                               gpufmm_array_t dipoles, gpufmm_array_t pot,
                                               gpufmm_array_t grad);

/* Several densities on the plan's geometry in one call (one tree, one set
 * of lists and translation tables), and the Hessian. nd >= 1 densities,
 * interleaved as FMM3D stores them (Fortran charge(nd,n), dipvec(nd,3,n),
 * pot(nd,n), grad(nd,3,n), hess(nd,6,n)): density k of source j is
 * charges[k + nd*j], its dipole component c is dipoles[k + nd*(c + 3*j)];
 * pot[k + nd*i], grad[k + nd*(c + 3*i)], hess[k + nd*(c + 6*i)] with the
 * Hessian's components c in the order xx, yy, zz, xy, xz, yz (the second
 * derivatives of phi at the target). NULL for what the sources do not carry
 * (not both) and what is not wanted (not all three). nd = 1 and hess NULL is
 * gpufmm_laplace_evaluate. The accuracy eps of the plan is that of the
 * potential and gradient; the Hessian, one derivative further, is measured
 * in docs/laplace_fmm.md (relative L2 error up to ~10 eps).
 * Errors as gpufmm_laplace_evaluate, plus INVALID_ARGUMENT for nd < 1 (a bad
 * charge or dipole value is named with its source and density). */
gpufmm_status_t gpufmm_laplace_evaluate_nd(gpufmm_laplace_plan_t plan, int nd, const double* charges,
                                           const double* dipoles, double* pot, double* grad, double* hess);

/* The same with gpufmm arrays on the plan's context (dtype = the plan's
 * precision; element counts nd*nsrc, 3*nd*nsrc, nd*ntrg, 3*nd*ntrg,
 * 6*nd*ntrg). Errors as gpufmm_laplace_evaluate_arrays. */
gpufmm_status_t gpufmm_laplace_evaluate_nd_arrays(gpufmm_laplace_plan_t plan, int nd, gpufmm_array_t charges,
                                                  gpufmm_array_t dipoles, gpufmm_array_t pot, gpufmm_array_t grad,
                                                  gpufmm_array_t hess);

/* Truncation number, depth, sizes and the per-stage times of the last
 * evaluate. Errors: INVALID_HANDLE, INVALID_ARGUMENT (info NULL). */
gpufmm_status_t gpufmm_laplace_plan_info(gpufmm_laplace_plan_t plan, gpufmm_laplace_info_t* info);

/* One shot: plan with defaults and the given eps, evaluate once, destroy. */
gpufmm_status_t gpufmm_laplace(gpufmm_context_t ctx, double eps, int64_t nsrc, const double* sources,
                               const double* charges, const double* dipoles, int64_t ntrg,
                               const double* targets, double* pot, double* grad);

/* Direct summation of the same sums, O(nsrc * ntrg): the reference for
 * accuracy checks and the baseline of the benchmarks. precision is
 * GPUFMM_FLOAT64 or GPUFMM_FLOAT32 (the arithmetic; host data are double).
 * Runs on the context's backend: OpenMP on the CPU, a shared-memory tiled
 * kernel on a GPU. targets == NULL: at the sources (no self term).
 * Arguments and errors as gpufmm_laplace_plan_create + evaluate, but for
 * the FMM's own options and its ACCURACY checks (a sum over every pair has no
 * expansion to keep accurate; docs/c_api.md lists what each function returns).
 * The same code as gpufmm_direct with GPUFMM_KERNEL_LAPLACE, which has no
 * dipoles. */
gpufmm_status_t gpufmm_laplace_direct(gpufmm_context_t ctx, int precision, int64_t nsrc,
                                      const double* sources, const double* charges,
                                      const double* dipoles, int64_t ntrg, const double* targets,
                                      double* pot, double* grad);

/* gpufmm_laplace_direct for nd densities and with the Hessian, in the
 * layout of gpufmm_laplace_evaluate_nd. Errors as gpufmm_laplace_direct,
 * plus INVALID_ARGUMENT for nd < 1. */
gpufmm_status_t gpufmm_laplace_direct_nd(gpufmm_context_t ctx, int precision, int nd, int64_t nsrc,
                                         const double* sources, const double* charges, const double* dipoles,
                                         int64_t ntrg, const double* targets, double* pot, double* grad,
                                         double* hess);

/* ------------------------------------------------------------------------ */
/* Pair kernels and the direct sum for every kernel                           */
/* ------------------------------------------------------------------------ */

/* The interaction G(y, x) between a target y and a source x, r = |y - x|.
 * The potential at y is sum_j q_j G(y, x_j) (plus, for Laplace, the dipole
 * terms of gpufmm_laplace_direct); no 1/(4 pi) factor. */
typedef enum gpufmm_kernel_type_e {
  GPUFMM_KERNEL_LAPLACE = 0,             /* 1/r; charges and dipoles; no params          */
  GPUFMM_KERNEL_YUKAWA = 1,              /* exp(-kappa r)/r; params {kappa >= 0}         */
  GPUFMM_KERNEL_REGULARIZED_LAPLACE = 2, /* 1/s, s = sqrt(r^2 + delta^2); {delta > 0}    */
  GPUFMM_KERNEL_REGULARIZED_YUKAWA = 3,  /* exp(-kappa s)/s; params {kappa >= 0, delta > 0} */
  GPUFMM_KERNEL_USER = 4                 /* g(r; p), given at run time: params p[0..7] (0 to 8
                                            of them); set with gpufmm_kernel_init_user     */
} gpufmm_kernel_type_t;

#define GPUFMM_KERNEL_MAX_PARAMS 8
/* Longest expression of a user kernel, terminating NUL included. */
#define GPUFMM_KERNEL_MAX_EXPR 512

/* A user kernel at coincident points (r = 0): the pair is left out (a
 * singular g such as exp(-kappa r)/r, the built-in singular kernels' rule)
 * or adds g(0) with zero gradient (a finite g such as a Gaussian). */
#define GPUFMM_KERNEL_R0_LEFT_OUT 0
#define GPUFMM_KERNEL_R0_INCLUDED 1

/* The CPU form of a user kernel: g(r) or dg/dr at distance r >= 0, with
 * p = the kernel's params (GPUFMM_KERNEL_MAX_PARAMS values, those past
 * nparams 0). Called concurrently from several threads: it must be pure
 * (no writes to shared state). From Fortran: a bind(c) function
 * real(c_double) function g(r, p) with real(c_double), value :: r and
 * real(c_double), intent(in) :: p(GPUFMM_KERNEL_MAX_PARAMS), passed as
 * c_funloc(g). */
typedef double (*gpufmm_radial_fn_t)(double r, const double* p);

/* A kernel: its type (a gpufmm_kernel_type_t) and parameters, in the order
 * the type's comment lists them; unused entries are 0. Fill it with
 * gpufmm_kernel_init (or gpufmm_kernel_init_user), which validates the
 * parameters. Coincident pairs (r = 0): the singular kernels (Laplace,
 * Yukawa) leave them out (no self term); the regularized kernels include
 * them, G(0) = 1/delta (times exp(-kappa delta)), with zero gradient; a user
 * kernel as its r0 field says.
 *
 * A user kernel G(y, x) = g(|y - x|) carries g in one form per backend, and
 * may carry both, so that one description runs anywhere:
 *  - GPU: value_expr and deriv_expr, C expressions of g(r) and dg/dr in the
 *    variable r and the parameters p[0] .. p[7] (CUDA math functions such
 *    as exp, sqrt, pow), compiled with NVRTC on first use and cached in the
 *    context per expressions, r0 rule and precision; in a float evaluation r
 *    and p are float. "" when absent.
 *  - CPU: value_fn and deriv_fn (NULL when absent).
 * The gradient is dg/dr (y - x) / r. The fields are plain data (fixed
 * arrays, function pointers), so the struct is copied like the others and
 * maps to a Fortran bind(c) type. */
typedef struct gpufmm_kernel_s {
  int type;
  int nparams;
  double params[GPUFMM_KERNEL_MAX_PARAMS];
  int r0;                                    /* user: GPUFMM_KERNEL_R0_*         */
  char value_expr[GPUFMM_KERNEL_MAX_EXPR];   /* user, GPU: g(r)                  */
  char deriv_expr[GPUFMM_KERNEL_MAX_EXPR];   /* user, GPU: dg/dr                 */
  gpufmm_radial_fn_t value_fn;               /* user, CPU: g(r)                  */
  gpufmm_radial_fn_t deriv_fn;               /* user, CPU: dg/dr                 */
} gpufmm_kernel_t;

/* Sets *kernel to `type` with nparams parameters from params (NULL when
 * nparams = 0). Example: double kappa = 0.5;
 * gpufmm_kernel_init(&k, GPUFMM_KERNEL_YUKAWA, 1, &kappa).
 * Errors: INVALID_ARGUMENT (kernel NULL, an unknown type, nparams not the
 * type's count, a parameter out of its range or not finite); *kernel is
 * untouched then. */
gpufmm_status_t gpufmm_kernel_init(gpufmm_kernel_t* kernel, int type, int nparams, const double* params);

/* Sets *kernel to a user kernel g(r; p) with nparams (0..8) parameters p
 * from params (NULL when nparams = 0), the GPU form value_expr / deriv_expr
 * (both NULL or "": none) and the CPU form value_fn / deriv_fn (both NULL:
 * none),
 * at least one form, and r0 a GPUFMM_KERNEL_R0_* rule. Example (Yukawa):
 *   gpufmm_kernel_init_user(&k, 1, &kappa, "exp(-p[0] * r) / r",
 *                           "-exp(-p[0] * r) * (1 + p[0] * r) / (r * r)",
 *                           yuk, dyuk, GPUFMM_KERNEL_R0_LEFT_OUT);
 * The expressions are compiled on first use on a GPU (an error then returns
 * INVALID_ARGUMENT with the compiler's log in the message). A sum on the
 * CPU backend needs the functions, on a GPU the expressions (else
 * INVALID_ARGUMENT naming the missing form). A sum whose result holds a NaN
 * or Inf (g or dg/dr not finite at some pair) fails with INVALID_ARGUMENT,
 * the outputs untouched. The Laplace FMM takes no kernel: user kernels go
 * to gpufmm_direct* and gpufmm_treecode*.
 * Errors: INVALID_ARGUMENT (kernel NULL, nparams outside 0..8, params NULL
 * with nparams > 0, a parameter not finite, only one of a pair given, no
 * form at all, an expression of GPUFMM_KERNEL_MAX_EXPR characters or more,
 * r0 not a GPUFMM_KERNEL_R0_* value); *kernel is untouched then. */
gpufmm_status_t gpufmm_kernel_init_user(gpufmm_kernel_t* kernel, int nparams, const double* params,
                                        const char* value_expr, const char* deriv_expr,
                                        gpufmm_radial_fn_t value_fn, gpufmm_radial_fn_t deriv_fn, int r0);

/* Direct summation of kernel `kernel`, O(nsrc * ntrg), with charges:
 *   pot[i]  = sum_j charges[j] G(targets_i, sources_j)
 *   grad[i] = gradient of pot with respect to the target (3 values).
 * sources 3 x nsrc, targets 3 x ntrg (xyz of a point together), charges
 * nsrc, pot ntrg, grad 3 x ntrg (pot or grad may be NULL: not wanted, not
 * both). targets == NULL: at the sources (ntrg ignored; the singular
 * kernels then leave out each point's own term). precision GPUFMM_FLOAT64 or
 * GPUFMM_FLOAT32 is the arithmetic; data are double. Runs on the context's
 * backend: OpenMP on the CPU, a shared-memory tiled kernel on a GPU.
 * Errors: INVALID_HANDLE (ctx), INVALID_ARGUMENT (kernel NULL or invalid,
 * precision, a negative count, a NULL array that holds values, a NaN or Inf
 * coordinate or charge: the message names the argument and the index),
 * OUT_OF_MEMORY, DEVICE. The outputs are untouched on any error. */
gpufmm_status_t gpufmm_direct(gpufmm_context_t ctx, const gpufmm_kernel_t* kernel, int precision, int64_t nsrc,
                              const double* sources, const double* charges, int64_t ntrg, const double* targets,
                              double* pot, double* grad);

/* The same on gpufmm arrays (dtype GPUFMM_FLOAT64, any rank) of one context,
 * the data staying where they are (device memory on a GPU context):
 * sources 3 nsrc elements, charges nsrc, targets 3 ntrg (a NULL handle: at
 * the sources), pot ntrg and grad 3 ntrg (NULL handles: not wanted, not
 * both). Errors as gpufmm_direct, plus INVALID_HANDLE (a non-NULL handle
 * that is not a live array), TYPE_MISMATCH (dtype), SIZE_MISMATCH (element
 * counts that disagree), INVALID_ARGUMENT (arrays of different contexts). */
gpufmm_status_t gpufmm_direct_arrays(const gpufmm_kernel_t* kernel, int precision, gpufmm_array_t sources,
                                     gpufmm_array_t charges, gpufmm_array_t targets, gpufmm_array_t pot,
                                     gpufmm_array_t grad);

/* ------------------------------------------------------------------------ */
/* The barycentric Lagrange treecode (papers/001; docs/treecode.md)          */
/* ------------------------------------------------------------------------ */

/* pot[i] = sum_j charges[j] G(targets_i, sources_j) and its gradient, for
 * any kernel of gpufmm_kernel_t, to a requested relative L2 error: source
 * clusters approximated by barycentric Lagrange interpolation at Chebyshev
 * points where the MAC (r_batch + r_cluster) / R < theta accepts them. */
typedef struct gpufmm_treecode_plan_s* gpufmm_treecode_plan_t;

typedef enum gpufmm_treecode_type_e {
  GPUFMM_TREECODE_PC = 0, /* particle-cluster (the BLTC): targets against cluster proxies     */
  GPUFMM_TREECODE_CP = 1, /* cluster-particle: proxies of target clusters, then interpolated */
  GPUFMM_TREECODE_CC = 2  /* cluster-cluster: both (dual traversal)                          */
} gpufmm_treecode_type_t;

#define GPUFMM_TREECODE_MAX_DEGREE 30

typedef struct gpufmm_treecode_options_s {
  gpufmm_kernel_t kernel; /* default: Laplace (Coulomb)                            */
  double eps;             /* relative L2 error asked for, in (0, 1); default 1e-6  */
  double theta;           /* MAC parameter in (0, 1); 0 (default): from eps         */
  int degree;             /* interpolation degree n, 0..GPUFMM_TREECODE_MAX_DEGREE;
                             -1 (default): from eps                                 */
  int leaf_size;          /* N_L, most points of a source leaf; 0: cost model      */
  int batch_size;         /* N_B, most targets of a batch; 0: cost model           */
  int type;               /* a gpufmm_treecode_type_t; default GPUFMM_TREECODE_PC  */
  int precision;          /* GPUFMM_FLOAT64 (default) or GPUFMM_FLOAT32            */
  int grad;               /* 1 (default): eps holds for the gradient too; 0: for
                             the potential only (a cheaper plan)                    */
  int calibrate;          /* with theta or degree from eps: 0 (default): from the
                             worst-case error table (no test evaluates; 100-1000x
                             below eps on uniform points); 1: the cheapest of the
                             table's (theta, degree) whose error, measured by
                             evaluates of this plan on two reference charge sets
                             at up to 2048 sampled targets against the direct
                             sum, is within eps/4 (3-10 test evaluates, each an
                             evaluate's time: for plans evaluated many times;
                             docs/treecode.md). Single-process plans only     */
} gpufmm_treecode_options_t;

typedef struct gpufmm_treecode_info_s {
  double theta;          /* the parameters the plan runs with                     */
  int degree;
  int leaf_size, batch_size;
  int type, precision, backend;
  int64_t nsrc, ntrg;
  int64_t source_clusters, target_clusters, batches;
  int64_t source_proxy_clusters, target_proxy_clusters; /* clusters with proxies   */
  int64_t list_entries;       /* entries of the batch/cluster interaction lists   */
  int64_t approx_interactions; /* kernel evaluations through proxies per evaluate */
  int64_t direct_interactions; /* kernel evaluations point to point               */
  double predicted_error;     /* the calibration's error for theta and degree     */
  double plan_seconds;        /* time to build the plan, of which:                 */
  double t_plan_tree;         /*   the trees (and their copies to the host)        */
  double t_plan_lists;        /*   the traversal and the interaction lists         */
  double t_plan_setup;        /*   coordinates, proxies, the device copies         */
  double t_precompute;        /* last evaluate: modified charges                  */
  double t_compute;           /* last evaluate: the near field (eqs. 9 and 11)    */
  double t_downward;          /* last evaluate: interpolation to the targets (CP, CC) */
  double t_total;             /* last evaluate, transfers included                */
  /* Plans over MPI ranks (gpufmm_mpi.h): this rank's view. There nsrc and
   * ntrg above are the rank's own arguments, the sizes and the plan and
   * stage times above its plan over the points it owns, plan_seconds and
   * t_total the whole collective create and evaluate. A single-process
   * plan has nranks 1, rank 0, the owned and global counts equal to nsrc
   * and ntrg, and zeros below them. */
  int nranks, rank;
  int64_t nsrc_owned, ntrg_owned;   /* points this rank owns after the RCB   */
  int64_t nsrc_global, ntrg_global; /* points of all ranks                    */
  int64_t let_boxes;          /* box arrays of other ranks got (LET, step 1)  */
  int64_t let_clusters;       /* other ranks' proxy clusters in this rank's lists */
  int64_t let_points;         /* other ranks' points in this rank's lists     */
  int64_t let_bytes_plan;     /* bytes got from other ranks by the create     */
  int64_t let_bytes_evaluate; /* bytes got from other ranks per evaluate      */
  double t_rcb;               /* create: recursive coordinate bisection       */
  double t_redistribute;      /* create: points to the ranks that own them    */
  double t_let_tree;          /* create: other ranks' box arrays, the lists   */
  double t_let_data;          /* create: other ranks' points, the set-up      */
  double t_route;             /* last evaluate: charges to the owners and the
                                 results back                                 */
  double t_exchange;          /* last evaluate: charges and modified charges
                                 of other ranks (one-sided)                   */
  int calibration_evaluates;  /* test evaluates of options.calibrate (0: none) */
  double measured_eps;      /* the error they measured for theta and degree
                                 (0: not measured)                            */
} gpufmm_treecode_info_t;

/* Fills *opt with the defaults. Errors: INVALID_ARGUMENT (opt NULL). */
gpufmm_status_t gpufmm_treecode_options_init(gpufmm_treecode_options_t* opt);

/* Builds a plan for nsrc sources and ntrg targets (3 x n doubles in host
 * memory); targets == NULL: at the sources (ntrg ignored; a point's own
 * term as gpufmm_direct has it). opt NULL = defaults.
 * Errors: INVALID_HANDLE (ctx); INVALID_ARGUMENT (plan NULL; a count
 * negative or beyond 2^31 - 2; a NULL coordinate pointer with a positive
 * count; a NaN or Inf coordinate, named with its index; an options field
 * out of range, named: the kernel's type or parameters, eps, theta, degree,
 * leaf_size, batch_size, type, precision, grad); OUT_OF_MEMORY; DEVICE. */
gpufmm_status_t gpufmm_treecode_plan_create(gpufmm_context_t ctx, const gpufmm_treecode_options_t* opt,
                                            int64_t nsrc, const double* sources, int64_t ntrg,
                                            const double* targets, gpufmm_treecode_plan_t* plan);
gpufmm_status_t gpufmm_treecode_plan_destroy(gpufmm_treecode_plan_t plan);

/* Evaluates with host arrays: charges[nsrc]; pot[ntrg] and/or grad[3 x ntrg]
 * (NULL: not wanted; not both). Outputs are overwritten in the user's order.
 * Errors: INVALID_HANDLE (plan); INVALID_ARGUMENT (charges NULL, both
 * outputs NULL, a NaN or Inf charge, named with its index); OUT_OF_MEMORY;
 * DEVICE. The outputs are unchanged on any error. */
gpufmm_status_t gpufmm_treecode_evaluate(gpufmm_treecode_plan_t plan, const double* charges, double* pot,
                                         double* grad);

/* The same with gpufmm arrays on the plan's context (the data stay on the
 * device): dtype = the plan's precision, charges nsrc elements, pot ntrg,
 * grad 3 ntrg (NULL handles: not wanted). Errors as gpufmm_treecode_evaluate,
 * plus INVALID_HANDLE (a non-NULL handle that is not a live array),
 * TYPE_MISMATCH (dtype), SIZE_MISMATCH (element count), INVALID_ARGUMENT (an
 * array of another context). Charges on the device are not checked for
 * NaN. */
gpufmm_status_t gpufmm_treecode_evaluate_arrays(gpufmm_treecode_plan_t plan, gpufmm_array_t charges,
                                                gpufmm_array_t pot, gpufmm_array_t grad);

/* The parameters chosen, the sizes and the times of the last evaluate.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (info NULL). */
gpufmm_status_t gpufmm_treecode_plan_info(gpufmm_treecode_plan_t plan, gpufmm_treecode_info_t* info);

/* One shot: a plan with the defaults, `kernel` and eps, one evaluate, destroy. */
gpufmm_status_t gpufmm_treecode(gpufmm_context_t ctx, const gpufmm_kernel_t* kernel, double eps, int64_t nsrc,
                                const double* sources, const double* charges, int64_t ntrg, const double* targets,
                                double* pot, double* grad);

/* ------------------------------------------------------------------------ */
/* The FMM-accelerated FFT (papers/002; docs/fmmfft.md)                      */
/* ------------------------------------------------------------------------ */

/* The 1D DFT X[k] = sum_n x[n] exp(sign 2 pi i n k / N) (sign -1 forward,
 * +1 inverse, unnormalized like FFTW and cuFFT) of N complex numbers,
 * computed as P - 1 periodic cotangent FMMs and an M x P 2D FFT (Edelman et
 * al., Cecka): N = P M_L 2^L, to a requested relative L2 error. */
typedef struct gpufmm_fft_plan_s* gpufmm_fft_plan_t;

#define GPUFMM_FFT_FORWARD (-1)
#define GPUFMM_FFT_INVERSE 1
#define GPUFMM_FFT_MAX_Q 24
/* Where POST (z_p = rho_p (T_p - sign i r_p), papers/002 sec. 3) runs on
 * the GPU (gpufmm_fft_options_t's field post; docs/fmmfft.md). */
#define GPUFMM_FFT_POST_FUSED 0    /* in the near-field kernel (S2T), default */
#define GPUFMM_FFT_POST_CALLBACK 1 /* in the load of the 2D FFT's first cuFFT
                                      transform: an LTO callback that cuFFT
                                      links into its kernel at plan time   */
/* Stages of one transform (gpufmm_fft_info_t's arrays; docs/fmmfft.md). */
#define GPUFMM_FFT_STAGE_S2M 0
#define GPUFMM_FFT_STAGE_M2M 1
#define GPUFMM_FFT_STAGE_M2L 2    /* the levels below the base level */
#define GPUFMM_FFT_STAGE_M2L_B 3  /* the base level */
#define GPUFMM_FFT_STAGE_REDUCE 4
#define GPUFMM_FFT_STAGE_L2L 5
#define GPUFMM_FFT_STAGE_L2T 6
#define GPUFMM_FFT_STAGE_S2T 7    /* the near field with POST fused */
#define GPUFMM_FFT_STAGE_FFT_P 8  /* the 2D FFT: M transforms of length P */
#define GPUFMM_FFT_STAGE_FFT_M 9  /*             P transforms of length M */
#define GPUFMM_FFT_STAGES 10

typedef struct gpufmm_fft_options_s {
  int64_t n;       /* the transform length N (required)                          */
  int dtype;       /* GPUFMM_COMPLEX128 (default) or GPUFMM_COMPLEX64            */
  double eps;      /* relative L2 error asked for; 0: 2e-14 (complex128), 1e-6  */
  int p, ml;       /* P and M_L; 0, 0: from the model (set both or neither)     */
  int b;           /* base level B >= 2; 0: from the model                        */
  int q;           /* expansion order Q in 2..GPUFMM_FFT_MAX_Q; 0: from eps       */
  int direction;   /* 0: both (default); GPUFMM_FFT_FORWARD or _INVERSE only    */
  int tune;        /* time this many best-predicted parameter sets and keep the
                      fastest (0: the model's best, default)                    */
  int post;        /* GPUFMM_FFT_POST_FUSED (default) or GPUFMM_FFT_POST_CALLBACK
                      (CUDA backend only: cuFFT links the callback at plan
                      time through libnvJitLink)                                */
} gpufmm_fft_options_t;

typedef struct gpufmm_fft_info_s {
  int64_t n, m;           /* N and M = N / P                                    */
  int p, ml, levels, base, q; /* P, M_L, L, B, Q                               */
  int dtype, backend;
  double eps;             /* the eps the plan was made for                      */
  double predicted_error; /* the calibration's error for Q                      */
  double gamma, beta;     /* the roofline: flop/s of a batched GEMM, bytes/s    */
  double flops[GPUFMM_FFT_STAGES];  /* per stage                                */
  double bytes[GPUFMM_FFT_STAGES];  /* moved, per stage                         */
  double model[GPUFMM_FFT_STAGES];  /* roofline time, seconds (eq. 3)           */
  double time[GPUFMM_FFT_STAGES];   /* last execute, seconds                    */
  double t_total;         /* last execute, transfers included                   */
  double plan_seconds;
  /* A plan over MPI ranks (gpufmm_fft_plan_create_mpi; docs/fmmfft_mpi.md)
   * or several GPUs (gpufmm_fft_plan_create_multi: part 0's figures; NCCL
   * sends whole points, 2 C P M_L for the input, and t_wait is 0: its
   * messages are ordered against the stages on the GPU, no host thread
   * waits for them); a single-process plan: ranks 1,
   * rank 0, n_local n, the rest 0.                                           */
  int ranks, rank;        /* G and this rank                                    */
  int64_t n_local;        /* the elements this rank passes and gets: N / G      */
  int64_t sent_input;     /* reals this rank sent in the last transform: the
                             input's halo, 2 C (P - 1) M_L (C = 2)             */
  int64_t sent_multipoles; /* the multipoles' halos, 4 C (L - B) (P - 1) Q     */
  int64_t sent_base;      /* its block of the base level, 2^B C (P - 1) Q / G
                             (to each other rank, MPI_Iallgather)              */
  double t_wait;          /* seconds the last transform waited for messages     */
  int parts;              /* GPUs of this process the plan spans: G of
                             gpufmm_fft_plan_create_multi, else 1 (the
                             host transform then takes n_local parts elements) */
  int messages;           /* how the halos, the base level and the 2D FFT's
                             transposition travel: 0 none (one process, one
                             part), 1 MPI (GPU ranks: through pinned host
                             memory), 2 NCCL between the GPUs' memories
                             (several GPUs of one process, or GPU ranks with
                             a GPU each and NCCL; docs/fmmfft_mpi.md)       */
} gpufmm_fft_info_t;

/* Fills *opt with the defaults (n = 0: set it). Errors: INVALID_ARGUMENT. */
gpufmm_status_t gpufmm_fft_options_init(gpufmm_fft_options_t* opt);

/* Builds a plan (parameters, operators, FFT plans, workspace of about
 * N (1 + 4 Q / M_L) complex numbers).
 * Errors: INVALID_HANDLE (ctx); INVALID_ARGUMENT (opt or plan NULL; n not
 * admitted: the message names the nearest admitted sizes; a field out of
 * range, named; p and ml that do not factor n); TYPE_MISMATCH (dtype);
 * ACCURACY (eps below what the precision reaches); OUT_OF_MEMORY; DEVICE. */
gpufmm_status_t gpufmm_fft_plan_create(gpufmm_context_t ctx, const gpufmm_fft_options_t* opt,
                                       gpufmm_fft_plan_t* plan);
gpufmm_status_t gpufmm_fft_plan_destroy(gpufmm_fft_plan_t plan);

/* Builds a plan over the GPUs of `count` contexts of this process (a power
 * of two, each on a different GPU; docs/fmmfft_mpi.md): part g works on the
 * elements [g N / G, (g + 1) N / G) (natural order) on ctxs[g], and the parts
 * exchange halos, the base level and the 2D FFT's transposition through
 * NCCL (libnccl.so.2, loaded at run time), one host thread per GPU. Then
 * gpufmm_fft_execute_host takes all N elements (the plan splits them) and
 * gpufmm_fft_execute_multi one array per part; gpufmm_fft_plan_info
 * reports part 0 (ranks: G). count 1: a plain plan on ctxs[0].
 * Errors: those of gpufmm_fft_plan_create (n not admitted over G parts:
 * the message names the nearest sizes); INVALID_HANDLE (a context);
 * INVALID_ARGUMENT (ctxs or plan NULL, count < 1; a CPU context, or two
 * contexts on one GPU, when count > 1); NOT_SUPPORTED (count not a power of
 * two; a build without CUDA or nccl.h; libnccl.so.2 not found); an error of
 * one part is returned named "GPU part g: ...". */
gpufmm_status_t gpufmm_fft_plan_create_multi(const gpufmm_context_t* ctxs, int count, const gpufmm_fft_options_t* opt,
                                             gpufmm_fft_plan_t* plan);

/* out = DFT(in) on arrays of the plan's context: dtype the plan's, N
 * elements each (any rank; a plan over MPI ranks: this rank's N / G, in
 * natural order, collective; a plan over several GPUs takes
 * gpufmm_fft_execute_multi); in == out is allowed. direction
 * GPUFMM_FFT_FORWARD or GPUFMM_FFT_INVERSE.
 * Errors: INVALID_HANDLE; TYPE_MISMATCH; SIZE_MISMATCH; INVALID_ARGUMENT
 * (direction; an array of another context; a NaN or Inf input, named with
 * its index: out is then untouched); OUT_OF_MEMORY; DEVICE. */
gpufmm_status_t gpufmm_fft_execute(gpufmm_fft_plan_t plan, gpufmm_array_t in, gpufmm_array_t out, int direction);

/* The same on a plan's parts (gpufmm_fft_plan_create_multi): in[g], out[g]
 * arrays of part g's context, N / G elements each (part g's block of the
 * input and output, natural order); on a plan of one part, one array each.
 * Errors: as gpufmm_fft_execute, any part's named "GPU part g: ...";
 * INVALID_ARGUMENT (in or out NULL). */
gpufmm_status_t gpufmm_fft_execute_multi(gpufmm_fft_plan_t plan, const gpufmm_array_t* in, const gpufmm_array_t* out,
                                         int direction);

/* The same with host arrays of N interleaved complex numbers of the plan's
 * dtype (double[2N] or float[2N]; a plan over MPI ranks: N / G; a plan over
 * several GPUs: all N); in == out is allowed. */
gpufmm_status_t gpufmm_fft_execute_host(gpufmm_fft_plan_t plan, const void* in, void* out, int direction);

/* Parameters, the model and the stage times of the last execute. */
gpufmm_status_t gpufmm_fft_plan_info(gpufmm_fft_plan_t plan, gpufmm_fft_info_t* info);

/* The name of stage s (GPUFMM_FFT_STAGE_*), "?" when out of range. */
const char* gpufmm_fft_stage_name(int stage);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUFMM_H */
