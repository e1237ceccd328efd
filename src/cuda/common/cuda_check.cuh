// Shared plumbing of the CUDA backend: turning CUDA / cuBLAS return codes into
// gpufmm::Error, making a context's device current for the duration of a call,
// launch geometry, and stream-ordered scratch memory.
//
// Every failing CUDA runtime call also sets the runtime's per-thread "last
// error"; the helpers below clear it (cudaGetLastError) so that a stale,
// non-sticky error is never reported again by an unrelated later check.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/context.hpp"
#include "core/error.hpp"
#include "core/gpufmm_types.h"

namespace gpufmm {
namespace cuda {

// Throws gpufmm::Error for a failed runtime call: OUT_OF_MEMORY for
// cudaErrorMemoryAllocation, DEVICE otherwise; the message is
// "<call>: <cudaGetErrorString> (<cudaGetErrorName>)". Clears the last error.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call);

inline void check(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw_cuda_error(err, call);
}

// After a kernel launch: reports a launch error (bad configuration, ...)
// naming the kernel. Asynchronous execution errors surface at the next
// synchronizing call, which is checked too.
inline void check_launch(const char* kernel) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda_error(err, kernel);
}

// Clears a stale non-sticky error left by someone else before we launch, so
// that check_launch reports only our launch.
inline void clear_last_error() noexcept { (void)cudaGetLastError(); }

#define GPUFMM_CUDA_CHECK(call) ::gpufmm::cuda::check((call), #call)

inline cudaStream_t stream_of(const Context& ctx) {
  return static_cast<cudaStream_t>(ctx.stream);
}

// Makes `device` current and restores the previously current device on exit
// (a program may hold contexts on several GPUs, and its own code may rely on
// its current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    GPUFMM_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) {
      GPUFMM_CUDA_CHECK(cudaSetDevice(device));
      switched_ = true;
    }
  }
  explicit DeviceGuard(const Context& ctx) : DeviceGuard(ctx.device) {}
  ~DeviceGuard() {
    if (switched_) {
      if (cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
    }
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

// The same, for noexcept paths (release, free): never throws; ok() says
// whether the device could be made current.
class DeviceGuardNoThrow {
 public:
  explicit DeviceGuardNoThrow(int device) noexcept {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      (void)cudaGetLastError();
      previous_ = -1;
    }
    if (previous_ != device) {
      if (cudaSetDevice(device) != cudaSuccess) {
        (void)cudaGetLastError();
        ok_ = false;
        return;
      }
      switched_ = previous_ >= 0;
    }
  }
  ~DeviceGuardNoThrow() {
    if (switched_ && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
  }
  bool ok() const noexcept { return ok_; }
  DeviceGuardNoThrow(const DeviceGuardNoThrow&) = delete;
  DeviceGuardNoThrow& operator=(const DeviceGuardNoThrow&) = delete;

 private:
  int previous_ = -1;
  bool switched_ = false;
  bool ok_ = true;
};

// Grid size for a grid-stride kernel over n items with `block` threads per
// block: enough blocks to fill the device a few times over, never more than
// needed. The current device must be the context's device.
unsigned grid_for(int64_t n, int block);

// Stream-ordered scratch memory on the context's stream (cudaMallocAsync
// where the device supports memory pools, else cudaMalloc). Freed in stream
// order on destruction, so it may be released before the work using it
// completes. The context's device must be current at construction and
// destruction (hold a DeviceGuard for longer than the buffer).
class StreamBuffer {
 public:
  StreamBuffer(Context& ctx, size_t bytes, const char* what);
  ~StreamBuffer();
  void* get() const noexcept { return p_; }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;

 private:
  cudaStream_t stream_ = nullptr;
  void* p_ = nullptr;
  bool async_ = false;
};

// Complex numbers as the kernels see them: two reals with the alignment of
// one real (so a wrapped pointer that is only 4/8-byte aligned still works).
template <class T>
struct Complex {
  T re, im;
};

}  // namespace cuda
}  // namespace gpufmm
