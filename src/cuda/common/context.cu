// CUDA contexts: device enumeration, stream creation and release, device
// information, synchronization, and the lazily created cuBLAS handle.
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/cuda_backend.hpp"
#include "cuda/common/cublas_handle.cuh"
#include "cuda/common/cuda_check.cuh"
#include "cuda/nearfield/user_kernel.cuh"

namespace gpufmm {
namespace cuda {

int device_count() noexcept {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    // No driver, no device, driver too old, ...: there is simply no GPU.
    (void)cudaGetLastError();
    return 0;
  }
  return n < 0 ? 0 : n;
}

namespace {

void require_device(int device) {
  const int n = device_count();
  if (device < 0 || device >= n)
    fail(GPUFMM_ERROR_NO_DEVICE, "CUDA device ", device, " does not exist: ", n,
         n == 1 ? " CUDA device is" : " CUDA devices are", " visible",
         n > 0 ? " (valid ordinals 0.." + std::to_string(n - 1) + ")" : std::string());
}

// Live contexts per device, and the device caches' drop functions.
struct LiveContexts {
  std::mutex mutex;
  std::map<int, long> count;
  std::vector<void (*)(int) noexcept> drops;
};

LiveContexts& live_contexts() {
  static LiveContexts* l = new LiveContexts;  // never destroyed: contexts may outlive static destructors
  return *l;
}

}  // namespace

void at_last_context_release(void (*drop)(int device) noexcept) {
  LiveContexts& l = live_contexts();
  std::lock_guard<std::mutex> lock(l.mutex);
  for (auto f : l.drops)
    if (f == drop) return;
  l.drops.push_back(drop);
}

void context_init(Context& ctx, int device) {
  require_device(device);
  DeviceGuard guard(device);  // cudaSetDevice also initializes the primary context
  // One step above the least priority, so that a plan's helper stream can
  // run below it (the Laplace FMM's near field: laplace_plan_setup).
  int least = 0, greatest = 0;
  GPUFMM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s = nullptr;
  GPUFMM_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, least > greatest ? least - 1 : least));
  ctx.backend = GPUFMM_BACKEND_CUDA;
  ctx.device = device;
  ctx.stream = static_cast<void*>(s);
  ctx.cublas = nullptr;
  LiveContexts& l = live_contexts();
  std::lock_guard<std::mutex> lock(l.mutex);
  ++l.count[device];
}

void context_release(Context& ctx) noexcept {
  if (ctx.stream == nullptr && ctx.cublas == nullptr) return;
  DeviceGuardNoThrow guard(ctx.device);
  cudaStream_t s = stream_of(ctx);
  if (s != nullptr && cudaStreamSynchronize(s) != cudaSuccess) (void)cudaGetLastError();
  nearfield::cuda::release_user_kernels(ctx);
  if (ctx.cublas != nullptr) {
    (void)cublasDestroy(static_cast<cublasHandle_t>(ctx.cublas));
    ctx.cublas = nullptr;
  }
  if (s != nullptr && cudaStreamDestroy(s) != cudaSuccess) (void)cudaGetLastError();
  const bool counted = ctx.stream != nullptr;
  ctx.stream = nullptr;
  if (!counted) return;
  LiveContexts& l = live_contexts();
  std::lock_guard<std::mutex> lock(l.mutex);  // the drops take only their own locks
  auto it = l.count.find(ctx.device);
  if (it != l.count.end() && --it->second == 0)
    for (auto f : l.drops) f(ctx.device);
}

void device_info(int device, gpufmm_device_info_t* info) {
  require_out(info, "info");
  require_device(device);
  DeviceGuard guard(device);
  cudaDeviceProp prop;
  GPUFMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  size_t free_b = 0, total_b = 0;
  GPUFMM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));

  gpufmm_device_info_t out;
  std::memset(&out, 0, sizeof out);
  const size_t len = strnlen(prop.name, sizeof prop.name);
  std::memcpy(out.name, prop.name, len < sizeof out.name ? len : sizeof out.name - 1);
  out.backend = GPUFMM_BACKEND_CUDA;
  out.device = device;
  out.multiprocessors = prop.multiProcessorCount;
  out.compute_major = prop.major;
  out.compute_minor = prop.minor;
  out.total_memory = static_cast<int64_t>(total_b);
  out.free_memory = static_cast<int64_t>(free_b);
  out.shared_mem_per_block_optin = static_cast<int64_t>(prop.sharedMemPerBlockOptin);
  out.l2_cache_bytes = static_cast<int64_t>(prop.l2CacheSize);
  *info = out;
}

void synchronize(Context& ctx) {
  DeviceGuard guard(ctx);
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(stream_of(ctx)));
}

cublasHandle_t cublas_handle(Context& ctx) {
  std::lock_guard<std::mutex> lock(ctx.mutex);
  if (ctx.cublas != nullptr) return static_cast<cublasHandle_t>(ctx.cublas);
  cublasHandle_t h = nullptr;
  GPUFMM_CUBLAS_CHECK(cublasCreate(&h));
  cublasStatus_t st = cublasSetStream(h, stream_of(ctx));
  const char* call = "cublasSetStream";
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
    call = "cublasSetPointerMode";
  }
  if (st == CUBLAS_STATUS_SUCCESS) {
    // Full-precision float32 (no TF32 tensor-core shortcut).
    st = cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    call = "cublasSetMathMode";
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    (void)cublasDestroy(h);
    throw_cublas_error(st, call);
  }
  ctx.cublas = static_cast<void*>(h);
  return h;
}

}  // namespace cuda
}  // namespace gpufmm
