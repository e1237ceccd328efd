// One macro marks the math shared by the OpenMP backend and the CUDA kernels.
// Headers that hold host+device math include this file and mark every
// function GPUFMM_HD; under nvcc it expands to __host__ __device__, elsewhere
// to nothing. Such functions allocate nothing and throw nothing.
#pragma once

#if defined(__CUDACC__)
#define GPUFMM_HD __host__ __device__
#define GPUFMM_HD_INLINE __host__ __device__ __forceinline__
#else
#define GPUFMM_HD
#define GPUFMM_HD_INLINE inline
#endif
