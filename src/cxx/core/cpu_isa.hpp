// The CPU backend's hot loops for the running processor. The library is
// built for the baseline ISA (x86-64: SSE2); a function marked
// GPUFMM_CPU_CLONES is compiled three times - x86-64-v4 (AVX-512),
// x86-64-v3 (AVX2 + FMA) and the baseline - and the loader picks the copy
// for the CPU (GCC's target_clones: an ifunc resolver per function). The
// functions it inlines (GPUFMM_CPU_FLATTEN: all of them) and the OpenMP
// regions it holds are compiled into each copy, so the math headers shared
// with the CUDA kernels vectorise for the running CPU. Put both on the
// outermost function of a loop nest that does the arithmetic. The sources
// that use them are compiled with -ffp-contract=off (CMakeLists.txt), so
// every copy computes the baseline's bits.
//
// Off where GCC's target_clones is not available (other compilers and
// architectures, nvcc) and in builds that define GPUFMM_NO_CPU_CLONES (the
// sanitizer builds: ifunc resolvers run before the sanitizers' runtime).
// The Laplace FMM's CPU pipeline has its own three copies with a cap for
// tests (fmm/laplace/pipeline.cpp).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && \
    !defined(GPUFMM_NO_CPU_CLONES)
#define GPUFMM_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define GPUFMM_CPU_FLATTEN __attribute__((flatten))
#else
#define GPUFMM_CPU_CLONES
#define GPUFMM_CPU_FLATTEN
#endif
