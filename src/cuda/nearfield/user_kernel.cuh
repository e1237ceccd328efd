// User kernels on the GPU (GPUFMM_KERNEL_USER, kernels/radial.hpp): the
// near-field kernel templates of this library - direct_kernel
// (direct_kernel.cuh, the direct sum) and k_p2p_bpb (p2p.cuh, the
// treecode's near field and approximations) - compiled by NVRTC with the
// kernel struct Radial<T, F, kR0Included> whose F evaluates the user's
// expressions. The source NVRTC gets is those headers (embedded in the
// library, user_kernel_headers.hpp) and a few lines that define F: no
// kernel is written twice. The module is compiled on first use and cached in
// the context per (expressions, r0 rule, precision); a context is one device.
// Loading and launching go through the runtime's library API
// (cudaLibraryLoadData, cudaKernel_t), so the library links no driver
// library and still loads on a machine without one.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/context.hpp"
#include "kernels/kernel.hpp"

namespace gpufmm {
namespace nearfield {
namespace cuda {

// The compiled kernels of one user kernel in one precision T, index kG
// (gradient wanted), charges only:
//   direct[kG] = direct_kernel<Radial<T, F, r0>, T, true, false, kG>
//   p2p[kG]    = k_p2p_bpb<Radial<T, F, r0>, T, true, false, kG>
// Launched with kernels::RadialParams<T> (user_params) as the kernel argument.
struct UserKernels {
  cudaKernel_t direct[2] = {nullptr, nullptr};
  cudaKernel_t p2p[2] = {nullptr, nullptr};
};

// The compiled kernels of u in `precision` on ctx's device (ctx's device
// current). Throws INVALID_ARGUMENT with NVRTC's log when the expressions do
// not compile, DEVICE when the compiled code does not load.
const UserKernels& user_kernels(Context& ctx, const kernels::UserKernel& u, gpufmm_dtype_t precision);

// The source NVRTC compiles for u in `precision` (user_kernels; tests).
std::string user_kernel_source(const kernels::UserKernel& u, gpufmm_dtype_t precision);

template <class T>
kernels::RadialParams<T> user_params(const kernels::UserKernel& u) {
  kernels::RadialParams<T> p;
  for (int k = 0; k < kernels::kMaxUserParams; ++k) p.p[k] = T(u.params[k]);
  return p;
}

// Launches f on `stream` (args: pointers to the kernel's arguments, in order).
void launch_user_kernel(cudaKernel_t f, dim3 grid, unsigned block, cudaStream_t stream, void** args,
                        const char* what);

// Blocks of f resident per SM at `block` threads (the occupancy query).
int user_kernel_occupancy(cudaKernel_t f, int block);

// Unloads the context's compiled kernels (context_release; the device current).
void release_user_kernels(Context& ctx) noexcept;

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
