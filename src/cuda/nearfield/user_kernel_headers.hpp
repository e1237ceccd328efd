// The headers NVRTC compiles for user kernels, as text in the library
// (generated at build time by cmake/embed_sources.cmake from the list in
// CMakeLists.txt; used by nearfield/user_kernel.cu).
#pragma once

namespace gpufmm {
namespace nearfield {
namespace cuda {

struct EmbeddedHeader {
  const char* name;  // as included: "kernels/radial.hpp"
  const char* text;
};

extern const EmbeddedHeader kUserKernelHeaders[];
extern const int kNumUserKernelHeaders;

}  // namespace cuda
}  // namespace nearfield
}  // namespace gpufmm
