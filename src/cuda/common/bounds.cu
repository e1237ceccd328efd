#include "cuda/common/bounds.cuh"

namespace gpufmm {
namespace cuda {

__global__ void __launch_bounds__(kBoxBlock)
    box_partial_kernel(const double* __restrict__ p, int64_t n, double* __restrict__ part,
                       unsigned long long* __restrict__ bad) {
  __shared__ double sh[6][kBoxBlock];
  double v[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
  unsigned long long first = ULLONG_MAX;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double x = p[3 * i], y = p[3 * i + 1], z = p[3 * i + 2];
    if (!(isfinite(x) && isfinite(y) && isfinite(z))) {
      if (first == ULLONG_MAX) first = static_cast<unsigned long long>(i);
      continue;
    }
    v[0] = fmin(v[0], x); v[1] = fmin(v[1], y); v[2] = fmin(v[2], z);
    v[3] = fmax(v[3], x); v[4] = fmax(v[4], y); v[5] = fmax(v[5], z);
  }
  if (first != ULLONG_MAX) atomicMin(bad, first);
  block_box_reduce(v, sh);
  if (threadIdx.x < 6) part[6 * blockIdx.x + threadIdx.x] = sh[threadIdx.x][0];
}

}  // namespace cuda
}  // namespace gpufmm
