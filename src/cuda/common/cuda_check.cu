// Error conversion, launch geometry and stream-ordered scratch memory for the
// CUDA backend (see cuda_check.cuh, cublas_handle.cuh).
#include "cuda/common/cublas_handle.cuh"
#include "cuda/common/cuda_check.cuh"

#include <algorithm>

namespace gpufmm {
namespace cuda {

void throw_cuda_error(cudaError_t err, const char* call) {
  (void)cudaGetLastError();  // clear the runtime's record of this error
  const gpufmm_status_t status =
      err == cudaErrorMemoryAllocation ? GPUFMM_ERROR_OUT_OF_MEMORY : GPUFMM_ERROR_DEVICE;
  fail(status, call, ": ", cudaGetErrorString(err), " (", cudaGetErrorName(err), ")");
}

void throw_cublas_error(cublasStatus_t st, const char* call) {
  (void)cudaGetLastError();
  const gpufmm_status_t status =
      st == CUBLAS_STATUS_ALLOC_FAILED ? GPUFMM_ERROR_OUT_OF_MEMORY : GPUFMM_ERROR_DEVICE;
  fail(status, call, ": ", cublasGetStatusString(st), " (", cublasGetStatusName(st), ")");
}

unsigned grid_for(int64_t n, int block) {
  int dev = 0, sms = 0;
  GPUFMM_CUDA_CHECK(cudaGetDevice(&dev));
  GPUFMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int64_t wanted = (n + block - 1) / block;
  const int64_t cap = std::max<int64_t>(1, int64_t(sms) * 32);
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(wanted, cap)));
}

StreamBuffer::StreamBuffer(Context& ctx, size_t bytes, const char* what) : stream_(stream_of(ctx)) {
  if (bytes == 0) return;
  int dev = 0, pools = 0;
  GPUFMM_CUDA_CHECK(cudaGetDevice(&dev));
  GPUFMM_CUDA_CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev));
  cudaError_t err;
  const char* call;
  if (pools) {
    async_ = true;
    call = "cudaMallocAsync";
    err = cudaMallocAsync(&p_, bytes, stream_);
  } else {
    call = "cudaMalloc";
    err = cudaMalloc(&p_, bytes);
  }
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    p_ = nullptr;
    fail(GPUFMM_ERROR_OUT_OF_MEMORY, call, ": cannot allocate ", bytes,
         " bytes of device scratch memory for ", what, " on CUDA device ", dev);
  }
  if (err != cudaSuccess) {
    p_ = nullptr;
    throw_cuda_error(err, call);
  }
}

StreamBuffer::~StreamBuffer() {
  if (p_ == nullptr) return;
  cudaError_t err;
  if (async_) {
    err = cudaFreeAsync(p_, stream_);
  } else {
    // cudaFree is not stream ordered: let the work that uses p_ finish first.
    err = cudaStreamSynchronize(stream_);
    cudaError_t err2 = cudaFree(p_);
    if (err == cudaSuccess) err = err2;
  }
  if (err != cudaSuccess) (void)cudaGetLastError();
}

}  // namespace cuda
}  // namespace gpufmm
