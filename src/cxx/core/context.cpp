#include "core/context.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#ifdef GPUFMM_HAVE_CUDA
#include "core/cuda_backend.hpp"
#endif

namespace gpufmm {

long long host_physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return (pages > 0 && page > 0) ? static_cast<long long>(pages) * page : 0;
}

long long host_available_memory() {
  long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return (pages > 0 && page > 0) ? static_cast<long long>(pages) * page : 0;
}

void* backend_alloc(Context& ctx, size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  if (ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    return cuda::malloc_device(ctx, bytes, what);
#endif
  }
  // Linux overcommits: a request beyond physical memory "succeeds" and kills
  // the process on first touch. Refuse it up front instead.
  const long long phys = host_physical_memory();
  if (phys > 0 && static_cast<unsigned long long>(bytes) > static_cast<unsigned long long>(phys))
    fail(GPUFMM_ERROR_OUT_OF_MEMORY, "cannot allocate ", bytes, " bytes for ", what,
         ": the host has ", phys, " bytes of physical memory");
  const size_t align = 64, rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (!p) fail(GPUFMM_ERROR_OUT_OF_MEMORY, "host allocation of ", bytes, " bytes for ", what, " failed");
  return p;
}

void backend_free(Context& ctx, void* p) noexcept {
  if (!p) return;
  if (ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    cuda::free_device(ctx, p);
#endif
    return;
  }
  std::free(p);
}

void backend_upload(Context& ctx, void* dst, const void* host, size_t bytes, bool async) {
  if (bytes == 0) return;
  if (ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    cuda::copy_h2d(ctx, dst, host, bytes, async);
#endif
    return;
  }
  (void)async;  // host copies complete immediately
  std::memcpy(dst, host, bytes);
}

void backend_download(Context& ctx, void* host, const void* src, size_t bytes, bool async) {
  if (bytes == 0) return;
  if (ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    cuda::copy_d2h(ctx, host, src, bytes, async);
#endif
    return;
  }
  (void)async;
  std::memcpy(host, src, bytes);
}

void backend_copy(Context& ctx, void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  if (ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    cuda::copy_d2d(ctx, dst, src, bytes);
#endif
    return;
  }
  std::memmove(dst, src, bytes);
}

void backend_synchronize(Context& ctx) {
  if (ctx.on_gpu()) {
#ifdef GPUFMM_HAVE_CUDA
    cuda::synchronize(ctx);
#endif
  }
}

}  // namespace gpufmm
