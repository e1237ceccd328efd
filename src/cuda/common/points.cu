// Device checks and gathers of point coordinates (points.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/common/cuda_check.cuh"
#include "cuda/common/points.hpp"
#include "plan/checks.hpp"

namespace gpufmm {
namespace cuda {

namespace {

constexpr int kBlock = 256;

__global__ void k_gather_xyz(const double* __restrict__ xyz, const int32_t* __restrict__ perm, int64_t n,
                             double* __restrict__ out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = perm[i];
    out[3 * i] = xyz[3 * j];
    out[3 * i + 1] = xyz[3 * j + 1];
    out[3 * i + 2] = xyz[3 * j + 2];
  }
}

// *first = min(*first, i) over the points i with a NaN or Inf coordinate
// (kTiny: that are not plan::point_resolvable).
template <bool kTiny>
__global__ void k_first_bad(const double* __restrict__ xyz, int64_t n, unsigned long long* __restrict__ first) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const bool bad = kTiny ? !plan::point_resolvable(xyz + 3 * i)
                           : !(isfinite(xyz[3 * i]) && isfinite(xyz[3 * i + 1]) && isfinite(xyz[3 * i + 2]));
    if (bad) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

template <bool kTiny>
int64_t first_bad_point(Context& ctx, const double* xyz, int64_t n) {
  if (n <= 0) return n;
  DeviceGuard guard(ctx);
  clear_last_error();
  const cudaStream_t s = stream_of(ctx);
  StreamBuffer buf(ctx, sizeof(unsigned long long), "coordinate check");
  unsigned long long* r = static_cast<unsigned long long*>(buf.get());
  const unsigned long long none = static_cast<unsigned long long>(n);
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(r, &none, sizeof none, cudaMemcpyHostToDevice, s));
  k_first_bad<kTiny><<<std::min<unsigned>(grid_for(n, kBlock), 2048u), kBlock, 0, s>>>(xyz, n, r);
  check_launch("coordinate check kernel");
  unsigned long long h = none;
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(&h, r, sizeof h, cudaMemcpyDeviceToHost, s));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
  return static_cast<int64_t>(h);
}

}  // namespace

int64_t first_nonfinite_point(Context& ctx, const double* xyz, int64_t n) { return first_bad_point<false>(ctx, xyz, n); }

int64_t first_tiny_point(Context& ctx, const double* xyz, int64_t n) { return first_bad_point<true>(ctx, xyz, n); }

void gather_points(Context& ctx, const double* xyz, const int32_t* perm, int64_t n, double* out) {
  if (n <= 0) return;
  DeviceGuard guard(ctx);
  clear_last_error();
  k_gather_xyz<<<grid_for(n, kBlock), kBlock, 0, stream_of(ctx)>>>(xyz, perm, n, out);
  check_launch("gather (sorted coordinates) kernel");
}

}  // namespace cuda
}  // namespace gpufmm
