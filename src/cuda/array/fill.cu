// gpufmm_array_fill on the CUDA backend: a grid-stride kernel per element
// size (4, 8, 16 bytes), the value passed by value.
#include <cstdint>
#include <cstring>

#include "array/array.hpp"
#include "core/cuda_backend.hpp"
#include "cuda/common/cuda_check.cuh"

namespace gpufmm {
namespace cuda {

namespace {

constexpr int kBlock = 256;

struct alignas(16) Bits128 {
  uint64_t lo, hi;
};
struct Bits128Unaligned {  // 8-byte aligned, for wrapped pointers
  uint64_t lo, hi;
};
struct Bytes16 {
  unsigned char b[16];
};

template <class T>
__global__ void fill_kernel(T* __restrict__ x, int64_t n, T v) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = v;
}

// Fallback for a (wrapped) pointer not aligned to its element size.
__global__ void fill_bytes_kernel(unsigned char* __restrict__ x, int64_t n, int esize, Bytes16 v) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    for (int b = 0; b < esize; ++b) x[i * esize + b] = v.b[b];
}

template <class T>
void launch_fill(int64_t n, void* x, const void* value, cudaStream_t s) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  clear_last_error();
  fill_kernel<T><<<grid_for(n, kBlock), kBlock, 0, s>>>(static_cast<T*>(x), n, v);
  check_launch("fill_kernel");
}

bool aligned(const void* p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

}  // namespace

void fill(Context& ctx, gpufmm_dtype_t dt, int64_t n, void* x, const void* value) {
  const size_t es = dtype_size(dt);
  require(es == 4 || es == 8 || es == 16, GPUFMM_ERROR_TYPE_MISMATCH, "fill: invalid dtype ",
          static_cast<int>(dt));
  require(n >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "fill: negative element count ", n);
  if (n == 0) return;
  require(x != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "fill: NULL data pointer");
  require(value != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "fill: argument 'value' is NULL");
  DeviceGuard guard(ctx);
  cudaStream_t s = stream_of(ctx);
  if (es == 4 && aligned(x, 4)) {
    launch_fill<uint32_t>(n, x, value, s);
  } else if (es == 8 && aligned(x, 8)) {
    launch_fill<uint64_t>(n, x, value, s);
  } else if (es == 16 && aligned(x, 16)) {
    launch_fill<Bits128>(n, x, value, s);
  } else if (es == 16 && aligned(x, 8)) {
    launch_fill<Bits128Unaligned>(n, x, value, s);
  } else {
    Bytes16 v;
    std::memset(&v, 0, sizeof v);
    std::memcpy(v.b, value, es);
    clear_last_error();
    fill_bytes_kernel<<<grid_for(n, kBlock), kBlock, 0, s>>>(static_cast<unsigned char*>(x), n,
                                                             static_cast<int>(es), v);
    check_launch("fill_bytes_kernel");
  }
}

}  // namespace cuda
}  // namespace gpufmm
