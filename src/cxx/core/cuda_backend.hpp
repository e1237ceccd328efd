// The CUDA side of the core, implemented in src/cuda/ and compiled only when
// the library is built with CUDA (GPUFMM_HAVE_CUDA). Callers reach these
// functions only through a context whose backend is GPUFMM_BACKEND_CUDA, which
// cannot exist in a build without CUDA. Every function makes the context's
// device current, checks every CUDA/cuBLAS return code and throws
// gpufmm::Error (DEVICE, OUT_OF_MEMORY, ...) with the failing call named.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/context.hpp"
#include "core/gpufmm_types.h"

namespace gpufmm {
namespace cuda {

int device_count() noexcept;  // 0 when there is no driver or no device
void context_init(Context& ctx, int device);  // sets ctx.device, creates the stream
void context_release(Context& ctx) noexcept;  // destroys stream and handles
// Device-wide caches (the Laplace plans' translation tables) register a
// function that drops their data of one device; it runs on the releasing
// thread when the last live context of that device is released (under the
// registry's lock: it must not create or release contexts).
void at_last_context_release(void (*drop)(int device) noexcept);
void device_info(int device, gpufmm_device_info_t* info);
void synchronize(Context& ctx);

void* malloc_device(Context& ctx, size_t bytes, const char* what);
void free_device(Context& ctx, void* p) noexcept;
void copy_h2d(Context& ctx, void* dst, const void* src, size_t bytes, bool async);
void copy_d2h(Context& ctx, void* dst, const void* src, size_t bytes, bool async);
void copy_d2d(Context& ctx, void* dst, const void* src, size_t bytes);

// Array operations on device data (n elements of dtype). Scalars and results
// are host pointers to values of the dtype (nrm2: the matching real type).
// Results are complete (stream synchronized) on return.
void fill(Context& ctx, gpufmm_dtype_t dt, int64_t n, void* x, const void* value);
void axpy(Context& ctx, gpufmm_dtype_t dt, int64_t n, const void* alpha, const void* x, void* y);
void scal(Context& ctx, gpufmm_dtype_t dt, int64_t n, const void* alpha, void* x);
void dot(Context& ctx, gpufmm_dtype_t dt, int64_t n, const void* x, const void* y, void* result);
void nrm2(Context& ctx, gpufmm_dtype_t dt, int64_t n, const void* x, void* result);
// Column-major, BLAS argument conventions (lda = leading dimension).
void gemv(Context& ctx, gpufmm_dtype_t dt, gpufmm_op_t trans, int64_t m, int64_t n,
          const void* alpha, const void* A, int64_t lda, const void* x, const void* beta, void* y);
void gemm(Context& ctx, gpufmm_dtype_t dt, gpufmm_op_t ta, gpufmm_op_t tb, int64_t m, int64_t n,
          int64_t k, const void* alpha, const void* A, int64_t lda, const void* B, int64_t ldb,
          const void* beta, void* C, int64_t ldc);
void reduce(Context& ctx, gpufmm_dtype_t dt, Reduction op, int64_t n, const void* x, void* result);
// cpu::gemm_strided_batched on the context's stream (cuBLAS; float32 and
// float64; asynchronous: no synchronization on return).
void gemm_strided_batched(Context& ctx, gpufmm_dtype_t dt, gpufmm_op_t ta, gpufmm_op_t tb, int64_t m, int64_t n,
                          int64_t k, const void* alpha, const void* A, int64_t lda, int64_t strideA,
                          const void* B, int64_t ldb, int64_t strideB, const void* beta, void* C, int64_t ldc,
                          int64_t strideC, int64_t batch);

}  // namespace cuda
}  // namespace gpufmm
