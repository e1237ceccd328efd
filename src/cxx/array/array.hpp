// The device array behind gpufmm_array_t: a dtype, rank 1..3, column-major
// dims and a data pointer in the context's memory (device memory on a GPU
// context, host memory on the CPU backend).
#pragma once

#include <cstdint>
#include <memory>

#include "core/context.hpp"
#include "core/gpufmm_types.h"

struct gpufmm_array_s;  // a handle: an id (core/handles.hpp)

namespace gpufmm {

struct Array {
  Context* ctx = nullptr;
  gpufmm_dtype_t dtype = GPUFMM_FLOAT64;
  int rank = 1;
  int64_t dims[GPUFMM_MAX_RANK] = {1, 1, 1};
  int64_t count = 0;     // product of dims
  void* data = nullptr;  // NULL when count == 0
  bool owned = true;     // false for gpufmm_array_wrap
};

inline Array* checked_array(gpufmm_array_s* a, const char* argname) {
  return checked_handle<Array>(a, HandleKind::Array, argname);
}

// A plan's array argument (evaluate_arrays of the FMM and the treecode): a
// NULL handle is nullptr; else the array must be live, on `ctx`, of dtype
// `dtype` with `count` elements (INVALID_HANDLE, INVALID_ARGUMENT,
// TYPE_MISMATCH, SIZE_MISMATCH naming `name`). Returns its data (a valid
// non-NULL pointer for an empty array).
void* plan_array_data(const Context& ctx, gpufmm_dtype_t dtype, gpufmm_array_s* a, int64_t count, const char* name);

size_t dtype_size(gpufmm_dtype_t dt);  // 0 for an invalid dtype
const char* dtype_name(gpufmm_dtype_t dt);
bool dtype_is_valid(int dt);
bool dtype_is_float(gpufmm_dtype_t dt);  // float32/64, complex64/128

// The dtype a caller passed as an int: TYPE_MISMATCH naming `argname`
// unless it is a gpufmm_dtype_t.
gpufmm_dtype_t checked_dtype(int dt, const char* argname);
// A precision passed as an int: INVALID_ARGUMENT unless GPUFMM_FLOAT32 or
// GPUFMM_FLOAT64; `what` names it ("argument 'precision'").
gpufmm_dtype_t checked_precision(int v, const char* what);

// Validates rank/dims and returns the element count (throws on overflow).
int64_t checked_count(int rank, const int64_t* dims, gpufmm_dtype_t dt);

// Creates an array and returns its handle; used by other areas too (trees,
// plans).
gpufmm_array_s* array_create(Context& ctx, gpufmm_dtype_t dt, int rank, const int64_t* dims);
// Registers an array, counts it as a child of its context and returns its
// handle.
gpufmm_array_s* array_handle(std::unique_ptr<Array> a);
// Destroys a live handle (core/handles.hpp: waits for the calls using it).
void array_destroy(gpufmm_array_s* handle, const char* argname);

// Throws TYPE_MISMATCH / SIZE_MISMATCH naming `argname` unless a has dtype
// `dt` and `count` elements.
void require_array(const Array& a, gpufmm_dtype_t dt, int64_t count, const char* argname);

namespace cpu {
// CPU-backend implementations of the array operations (same contracts as
// gpufmm::cuda::* in core/cuda_backend.hpp).
void fill(gpufmm_dtype_t dt, int64_t n, void* x, const void* value);
void axpy(gpufmm_dtype_t dt, int64_t n, const void* alpha, const void* x, void* y);
void scal(gpufmm_dtype_t dt, int64_t n, const void* alpha, void* x);
void dot(gpufmm_dtype_t dt, int64_t n, const void* x, const void* y, void* result);
void nrm2(gpufmm_dtype_t dt, int64_t n, const void* x, void* result);
void gemv(gpufmm_dtype_t dt, gpufmm_op_t trans, int64_t m, int64_t n, const void* alpha,
          const void* A, int64_t lda, const void* x, const void* beta, void* y);
void gemm(gpufmm_dtype_t dt, gpufmm_op_t ta, gpufmm_op_t tb, int64_t m, int64_t n, int64_t k,
          const void* alpha, const void* A, int64_t lda, const void* B, int64_t ldb,
          const void* beta, void* C, int64_t ldc);
void reduce(gpufmm_dtype_t dt, Reduction op, int64_t n, const void* x, void* result);
// `batch` products C_i = alpha op(A_i) op(B_i) + beta C_i with X_i = X + i
// strideX (elements; strideB may be 0), real dtypes. The products run in
// parallel (OpenMP), each split by rows into calls small enough that the
// BLAS runs them on the calling thread (OpenBLAS threads a GEMM only above
// m n k = 2^18), so the loop owns the cores.
void gemm_strided_batched(gpufmm_dtype_t dt, gpufmm_op_t ta, gpufmm_op_t tb, int64_t m, int64_t n, int64_t k,
                          const void* alpha, const void* A, int64_t lda, int64_t strideA, const void* B,
                          int64_t ldb, int64_t strideB, const void* beta, void* C, int64_t ldc, int64_t strideC,
                          int64_t batch);
}  // namespace cpu

}  // namespace gpufmm
