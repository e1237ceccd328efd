// Device memory of a CUDA context: allocation, release and transfers, all
// queued on the context's stream.
#include "core/cuda_backend.hpp"
#include "cuda/common/cuda_check.cuh"

namespace gpufmm {
namespace cuda {

void* malloc_device(Context& ctx, size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  DeviceGuard guard(ctx);
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: the context stays usable
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
      (void)cudaGetLastError();
      free_b = total_b = 0;
    }
    fail(GPUFMM_ERROR_OUT_OF_MEMORY, "cannot allocate ", bytes, " bytes of device memory for ",
         what != nullptr ? what : "an array", " on CUDA device ", ctx.device, " (", free_b,
         " bytes free of ", total_b, ")");
  }
  if (err != cudaSuccess) throw_cuda_error(err, "cudaMalloc");
  return p;
}

void free_device(Context& ctx, void* p) noexcept {
  if (p == nullptr) return;
  DeviceGuardNoThrow guard(ctx.device);
  // Work queued on the stream may still use p; cudaFree is not stream ordered.
  if (ctx.stream != nullptr && cudaStreamSynchronize(stream_of(ctx)) != cudaSuccess)
    (void)cudaGetLastError();
  if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

namespace {

void copy(Context& ctx, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, bool async,
          const char* call) {
  if (bytes == 0) return;
  require(dst != nullptr && src != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, call,
          ": NULL pointer for a copy of ", bytes, " bytes");
  DeviceGuard guard(ctx);
  cudaStream_t s = stream_of(ctx);
  check(cudaMemcpyAsync(dst, src, bytes, kind, s), call);
  if (!async) check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
}

}  // namespace

void copy_h2d(Context& ctx, void* dst, const void* src, size_t bytes, bool async) {
  copy(ctx, dst, src, bytes, cudaMemcpyHostToDevice, async, "cudaMemcpyAsync (host to device)");
}

void copy_d2h(Context& ctx, void* dst, const void* src, size_t bytes, bool async) {
  copy(ctx, dst, src, bytes, cudaMemcpyDeviceToHost, async, "cudaMemcpyAsync (device to host)");
}

void copy_d2d(Context& ctx, void* dst, const void* src, size_t bytes) {
  copy(ctx, dst, src, bytes, cudaMemcpyDeviceToDevice, true, "cudaMemcpyAsync (device to device)");
}

}  // namespace cuda
}  // namespace gpufmm
