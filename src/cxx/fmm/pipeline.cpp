// The OpenMP driver's choice of instruction set (fmm/pipeline.hpp; the
// copies of its body are built where GCC targets x86-64).
#include "fmm/plan_core.hpp"

namespace gpufmm {
namespace fmm {

int cpu_pipeline_isa_level() {
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
  static const int level = [] {
    __builtin_cpu_init();
    int l = 0;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) l = 1;
    if (l == 1 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"))
      l = 2;
    return l;
  }();
  return level;
#else
  return 0;
#endif
}

const char* cpu_pipeline_isa() {
  switch (cpu_pipeline_isa_level()) {
    case 2: return "avx512";
    case 1: return "avx2";
    default: return "generic";
  }
}

}  // namespace fmm
}  // namespace gpufmm
