// The context's cuBLAS handle (created lazily, bound to the context stream,
// host pointer mode) and the cuBLAS status check.
#pragma once

#include <cublas_v2.h>

#include "core/context.hpp"

namespace gpufmm {
namespace cuda {

// Throws gpufmm::Error naming `call`: OUT_OF_MEMORY for
// CUBLAS_STATUS_ALLOC_FAILED, DEVICE otherwise.
[[noreturn]] void throw_cublas_error(cublasStatus_t st, const char* call);

inline void check_cublas(cublasStatus_t st, const char* call) {
  if (st != CUBLAS_STATUS_SUCCESS) throw_cublas_error(st, call);
}

#define GPUFMM_CUBLAS_CHECK(call) ::gpufmm::cuda::check_cublas((call), #call)

// Returns ctx's cuBLAS handle, creating it on first use (under ctx.mutex). The
// context's device must be current.
cublasHandle_t cublas_handle(Context& ctx);

}  // namespace cuda
}  // namespace gpufmm
