// Staged host <-> device copies and the upload of a plan's coordinates
// (staging.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>

#include "cuda/common/cuda_check.cuh"
#include "cuda/common/staging.hpp"

namespace gpufmm {
namespace cuda {

namespace {

// Device scratch that outlives the call (the uploaded coordinates), freed in
// stream order with the context's device current.
struct Held {
  int device = 0;
  std::unique_ptr<StreamBuffer> buf;
  ~Held() {
    DeviceGuardNoThrow g(device);
    if (!g.ok()) {
      (void)buf.release();  // cannot free without the device; leak rather than crash
      return;
    }
    buf.reset();
  }
};

// ---------------------------------------------------------------- staged copies
//
// A pageable cudaMemcpy stages through the driver's pinned buffers with one
// host thread (a few GB/s). Here the host side of each 4 MB chunk is the
// caller's copy function (plan::parallel_copy: OpenMP threads) into one of two
// pinned chunks, and the DMA of one chunk overlaps the host copy of the
// next. The chunks are allocated once (portable pinned memory, 8 MB) and
// shared under a mutex; without them (allocation failed, small copies) the
// copy is a plain cudaMemcpyAsync.

constexpr size_t kStageChunk = size_t(4) << 20;
constexpr size_t kStageMin = size_t(1) << 20;

struct Staging {
  std::mutex mutex;
  void* buf[2] = {nullptr, nullptr};
  bool failed = false;
};

// Never destroyed: pinned memory lives as long as the process (freeing it
// from a static destructor could run after the CUDA runtime is gone).
Staging& staging() {
  static Staging* s = new Staging;
  return *s;
}

// Under the lock: the two chunks, allocated on first use.
bool staging_buffers(Staging& s) {
  if (s.buf[0] != nullptr) return true;
  if (s.failed) return false;
  for (int k = 0; k < 2; ++k)
    if (cudaHostAlloc(&s.buf[k], kStageChunk, cudaHostAllocPortable) != cudaSuccess) {
      (void)cudaGetLastError();
      s.buf[k] = nullptr;
      if (k == 1) {
        (void)cudaFreeHost(s.buf[0]);
        (void)cudaGetLastError();
        s.buf[0] = nullptr;
      }
      s.failed = true;
      return false;
    }
  return true;
}

class ChunkEvents {
 public:
  ChunkEvents() {
    for (int k = 0; k < 2; ++k) {
      GPUFMM_CUDA_CHECK(cudaEventCreateWithFlags(&e_[k], cudaEventDisableTiming));
      made_ = k + 1;
    }
  }
  ~ChunkEvents() {
    for (int k = 0; k < made_; ++k)
      if (cudaEventDestroy(e_[k]) != cudaSuccess) (void)cudaGetLastError();
  }
  cudaEvent_t operator[](int k) const { return e_[k]; }
  ChunkEvents(const ChunkEvents&) = delete;
  ChunkEvents& operator=(const ChunkEvents&) = delete;

 private:
  cudaEvent_t e_[2] = {nullptr, nullptr};
  int made_ = 0;
};

// Waits for everything queued on s (the pinned chunks must be idle before
// the lock is released), ignoring errors: for the exception paths.
void drain(cudaStream_t s) noexcept {
  if (cudaStreamSynchronize(s) != cudaSuccess) (void)cudaGetLastError();
}

// What both directions share: a plain cudaMemcpyAsync of kind `kind`
// (waited for when it goes to the host) for small copies or without pinned
// memory; else chunks(buf, s, ev) under the staging lock, the stream drained
// when it throws.
template <class Chunks>
void staged_copy(Context& ctx, void* dst, const void* src, size_t bytes, HostCopy copy, cudaMemcpyKind kind,
                 Chunks&& chunks) {
  if (bytes == 0) return;
  DeviceGuard guard(ctx);
  clear_last_error();
  const cudaStream_t s = stream_of(ctx);
  Staging& st = staging();
  std::unique_lock<std::mutex> lock(st.mutex);
  if (bytes < kStageMin || copy == nullptr || !staging_buffers(st)) {
    lock.unlock();
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    if (kind == cudaMemcpyDeviceToHost) GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  try {
    ChunkEvents ev;
    chunks(st.buf, s, ev);
  } catch (...) {
    drain(s);
    throw;
  }
}

}  // namespace

void staged_upload(Context& ctx, void* dst, const void* src, size_t bytes, HostCopy copy) {
  staged_copy(ctx, dst, src, bytes, copy, cudaMemcpyHostToDevice, [&](void* const* buf, cudaStream_t s,
                                                                     const ChunkEvents& ev) {
    bool used[2] = {false, false};
    int k = 0;
    for (size_t off = 0; off < bytes; off += kStageChunk, k ^= 1) {
      const size_t len = std::min(kStageChunk, bytes - off);
      if (used[k]) GPUFMM_CUDA_CHECK(cudaEventSynchronize(ev[k]));
      copy(buf[k], static_cast<const char*>(src) + off, len);
      GPUFMM_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + off, buf[k], len, cudaMemcpyHostToDevice, s));
      GPUFMM_CUDA_CHECK(cudaEventRecord(ev[k], s));
      used[k] = true;
    }
    for (int j = 0; j < 2; ++j)
      if (used[j]) GPUFMM_CUDA_CHECK(cudaEventSynchronize(ev[j]));
  });
}

void staged_download(Context& ctx, void* dst, const void* src, size_t bytes, HostCopy copy) {
  staged_copy(ctx, dst, src, bytes, copy, cudaMemcpyDeviceToHost, [&](void* const* buf, cudaStream_t s,
                                                                     const ChunkEvents& ev) {
    const size_t nchunks = (bytes + kStageChunk - 1) / kStageChunk;
    auto len_of = [&](size_t c) { return std::min(kStageChunk, bytes - c * kStageChunk); };
    auto enqueue = [&](size_t c) {
      const int k = static_cast<int>(c & 1);
      GPUFMM_CUDA_CHECK(cudaMemcpyAsync(buf[k], static_cast<const char*>(src) + c * kStageChunk, len_of(c),
                                        cudaMemcpyDeviceToHost, s));
      GPUFMM_CUDA_CHECK(cudaEventRecord(ev[k], s));
    };
    enqueue(0);
    if (nchunks > 1) enqueue(1);
    for (size_t c = 0; c < nchunks; ++c) {
      const int k = static_cast<int>(c & 1);
      GPUFMM_CUDA_CHECK(cudaEventSynchronize(ev[k]));
      copy(static_cast<char*>(dst) + c * kStageChunk, buf[k], len_of(c));
      if (c + 2 < nchunks) enqueue(c + 2);
    }
  });
}

DevicePoints upload_points(Context& ctx, const double* src, int64_t ns, const double* trg,
                                          int64_t nt, HostCopy copy) {
  DevicePoints d;
  if (trg == nullptr) nt = 0;
  DeviceGuard guard(ctx);
  clear_last_error();
  auto h = std::make_shared<Held>();
  h->device = ctx.device;
  const size_t bs = sizeof(double) * 3 * static_cast<size_t>(std::max<int64_t>(ns, 0)),
               bt = sizeof(double) * 3 * static_cast<size_t>(std::max<int64_t>(nt, 0));
  const size_t bs_al = (bs + 255) / 256 * 256;
  h->buf = std::make_unique<StreamBuffer>(ctx, std::max<size_t>(bs_al + bt, 256), "plan coordinates");
  char* base = static_cast<char*>(h->buf->get());
  double* ds = reinterpret_cast<double*>(base);
  double* dt = reinterpret_cast<double*>(base + bs_al);
  staged_upload(ctx, ds, src, bs, copy);
  if (bt > 0) staged_upload(ctx, dt, trg, bt, copy);
  d.src = ds;
  d.trg = trg != nullptr ? dt : nullptr;
  d.hold = h;
  return d;
}

}  // namespace cuda
}  // namespace gpufmm
