// POST in cuFFT's load (gpufmm_fft_options_t::post = GPUFMM_FFT_POST_CALLBACK):
// what the callback (post_callback.lto.cu, compiled to LTO-IR at build time
// and linked into cuFFT's kernel by cuFFT at plan time) reads through its
// caller info. The near-field kernel then writes the FMM outputs t_p (and
// x_0) unscaled, and the first transform of the 2D FFT loads
// z_p = rho_p (t_p - sign i r_p) (operators.hpp's post_apply).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpufmm {
namespace fmmfft {

struct PostInfo {
  const double* rho;  // post_factor of p = 0..P-1: [2 P] forward (re, im), then [2 P] inverse
  const double* red;  // r_p of p = 1..P-1 (re, im): k_reduce's output
  int64_t P;
  int64_t zp;  // the element of index (m, p) is at m zm + p zp: p = (offset / zp) mod P
  int sign;    // of the transform running now (set before each)
};

// The callbacks' C++ names in the embedded LTO-IR (post_callback.lto.cu).
constexpr const char* kPostLoadZ = "gpufmm_fmmfft_post_load_z";
constexpr const char* kPostLoadC = "gpufmm_fmmfft_post_load_c";

// The LTO-IR of post_callback.lto.cu (the build embeds it: CMakeLists.txt,
// cmake/embed_binary.cmake).
extern const unsigned char kPostCallbackLto[];
extern const std::size_t kPostCallbackLto_size;

}  // namespace fmmfft
}  // namespace gpufmm
