// The context behind gpufmm_context_t: one backend (the OpenMP CPU backend or
// one CUDA device), the CUDA stream all of its work is queued on, and lazily
// created library handles. Everything created on a context (arrays, trees,
// plans) holds a child reference; a context with live children refuses to be
// destroyed, so nothing is left dangling.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>

#include "core/error.hpp"
#include "core/handles.hpp"
#include "core/gpufmm_types.h"

// The public handle types are incomplete: a handle is an id that the
// registry maps to its object (core/handles.hpp).
struct gpufmm_context_s;

namespace gpufmm {

struct Context {
  void* handle = nullptr;          // its gpufmm_context_t (core/handles.hpp)
  gpufmm_backend_t backend = GPUFMM_BACKEND_CPU;
  int device = GPUFMM_DEVICE_CPU;  // CUDA ordinal, or GPUFMM_DEVICE_CPU
  void* stream = nullptr;          // cudaStream_t (CUDA backend)
  void* cublas = nullptr;          // cublasHandle_t, created on first use
  void* user_kernels = nullptr;    // compiled user kernels (src/cuda/nearfield/user_kernel.cuh), on first use
  std::atomic<long long> children{0};
  std::mutex mutex;                // guards lazy creation of handles

  bool on_gpu() const { return backend == GPUFMM_BACKEND_CUDA; }
};

// Base of what lives on a context (plans, tree memory): holds ctx and a
// child reference on it for the object's lifetime, so that a context with
// live children refuses to be destroyed. The reference is dropped after the
// derived object's destructor and members are gone.
class ContextChild {
 public:
  explicit ContextChild(Context& c) : ctx(c) { ctx.children.fetch_add(1); }
  ~ContextChild() { ctx.children.fetch_sub(1); }
  ContextChild(const ContextChild&) = delete;
  ContextChild& operator=(const ContextChild&) = delete;

  Context& ctx;
};

enum class Reduction { Sum, Min, Max };

inline Context* checked_context(gpufmm_context_s* c, const char* argname = "ctx") {
  return checked_handle<Context>(c, HandleKind::Context, argname);
}

// Bytes of physical host memory (for OUT_OF_MEMORY on the CPU backend).
long long host_physical_memory();
long long host_available_memory();

// Backend-neutral memory on a context: device memory on a GPU context,
// 64-byte aligned host memory on the CPU backend. alloc throws
// OUT_OF_MEMORY (naming `what`) and leaves the context usable.
void* backend_alloc(Context& ctx, size_t bytes, const char* what);
void backend_free(Context& ctx, void* p) noexcept;
// Host -> context memory, context -> host, context -> context (bytes).
void backend_upload(Context& ctx, void* dst, const void* host, size_t bytes, bool async);
void backend_download(Context& ctx, void* host, const void* src, size_t bytes, bool async);
void backend_copy(Context& ctx, void* dst, const void* src, size_t bytes);
void backend_synchronize(Context& ctx);

}  // namespace gpufmm
