// The load callbacks of GPUFMM_FFT_POST_CALLBACK (post_callback.hpp): POST
// of one element as the 2D FFT's first transform reads it. Compiled by the
// build to LTO-IR (nvcc -dc -fatbin, code=lto_XX; CMakeLists.txt) and
// embedded in the library; cuFFT links it into its kernel when the plan is
// made (cufftXtSetJITCallback). Not part of the library's own device code.
#include <cufftXt.h>

#include "cuda/fmmfft/post_callback.hpp"
#include "fmmfft/operators.hpp"

namespace {

template <class C>
__device__ C post_load(void* in, unsigned long long offset, void* info) {
  using gpufmm::fmmfft::Cplx;
  using gpufmm::fmmfft::PostInfo;
  using gpufmm::fmmfft::Rho;
  const PostInfo& s = *static_cast<const PostInfo*>(info);
  const C t = static_cast<const C*>(in)[offset];
  const int64_t p = int64_t(offset / (unsigned long long)s.zp) % s.P;
  if (p == 0) return t;  // x_0 passes unchanged
  const double* rho = s.rho + (s.sign < 0 ? 0 : 2 * s.P) + 2 * p;
  const Cplx z = gpufmm::fmmfft::post_apply(Rho{rho[0], rho[1]}, double(t.x), double(t.y), s.red[2 * (p - 1)],
                                            s.red[2 * (p - 1) + 1], s.sign);
  C out;
  out.x = decltype(t.x)(z.re);
  out.y = decltype(t.y)(z.im);
  return out;
}

}  // namespace

// cuFFT declares the callback itself, with the signature of its type
// (cufftJITCallbackLoadZ, ...), and links it by that C++ name: the callbacks
// are C++ functions at global scope, not extern "C" (with which cuFFT 12.0
// fails the plan with CUFFT_INTERNAL_ERROR; measured on an H200).
__device__ cufftDoubleComplex gpufmm_fmmfft_post_load_z(void* in, unsigned long long offset, void* info, void*) {
  return post_load<cufftDoubleComplex>(in, offset, info);
}

__device__ cufftComplex gpufmm_fmmfft_post_load_c(void* in, unsigned long long offset, void* info, void*) {
  return post_load<cufftComplex>(in, offset, info);
}
