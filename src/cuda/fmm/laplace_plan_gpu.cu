// Plan creation of the Laplace FMM on a GPU context (issue 5): the device
// side of laplace_plan_create (src/cxx/fmm/laplace_plan.cpp), so that the
// coordinates cross PCIe once and nothing large comes back:
//   laplace_staged_upload /    large host <-> device copies through two pinned
//   laplace_staged_download    chunks (process-wide), the host side of each
//                              chunk copied by the caller's (parallel) memcpy
//                              while the previous chunk's DMA runs
//   laplace_upload_points      the user's coordinates to the device, once (both
//                              trees are built from them, on_context)
//   laplace_first_nonfinite    the plan's finite-coordinate check, on the
//                              uploaded copy
//   laplace_gather_sorted      sorted coordinates (xyz[perm[i]]) on the device,
//                              for laplace_plan_setup
//   laplace_near_field_stats   p2p_pairs, max_near_sources, max_leaf_points
//   laplace_class_counts       per-class entry counts of the M2L lists
// The statistics are integer sums and maxima: exactly what the host loops
// over downloaded lists compute.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "cuda/common/cuda_check.cuh"
#include "fmm/laplace_plan.hpp"
#include "tree/stencil.hpp"
#include "tree/tree.hpp"

namespace gpufmm {
namespace fmm {
namespace cuda {

using gpufmm::cuda::check_launch;
using gpufmm::cuda::clear_last_error;
using gpufmm::cuda::DeviceGuard;
using gpufmm::cuda::DeviceGuardNoThrow;
using gpufmm::cuda::grid_for;
using gpufmm::cuda::StreamBuffer;
using gpufmm::cuda::stream_of;

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

// *first = min(*first, i) over the points i with a NaN or Inf coordinate.
__global__ void k_first_nonfinite(const double* __restrict__ xyz, int64_t n, unsigned long long* __restrict__ first) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    if (!(isfinite(xyz[3 * i]) && isfinite(xyz[3 * i + 1]) && isfinite(xyz[3 * i + 2])))
      atomicMin(first, static_cast<unsigned long long>(i));
}

// r[0] += sum over receiver leaves b of n(b) * (sources in b's neighbours),
// r[1] = max of the latter, r[2] = max points of a receiver leaf.
__global__ void k_near_stats(int64_t b0, int64_t nb, const int32_t* __restrict__ r_beg,
                             const int32_t* __restrict__ r_end, const int64_t* __restrict__ off,
                             const int32_t* __restrict__ idx, const int32_t* __restrict__ s_beg,
                             const int32_t* __restrict__ s_end, unsigned long long* __restrict__ r) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < nb;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = b0 + i;
    unsigned long long near = 0;
    for (int64_t e = off[b]; e < off[b + 1]; ++e) {
      const int32_t s = idx[e];
      near += static_cast<unsigned long long>(s_end[s] - s_beg[s]);
    }
    const unsigned long long nt = static_cast<unsigned long long>(r_end[b] - r_beg[b]);
    if (near * nt != 0) atomicAdd(&r[0], near * nt);
    atomicMax(&r[1], near);
    atomicMax(&r[2], nt);
  }
}

// r[2] = max(r[2], points of a source leaf).
__global__ void k_leaf_max(int64_t b0, int64_t nb, const int32_t* __restrict__ beg,
                           const int32_t* __restrict__ end, unsigned long long* __restrict__ r) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < nb;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    atomicMax(&r[2], static_cast<unsigned long long>(end[b0 + i] - beg[b0 + i]));
}

// hist[c] += entries of class c (c < kNumClasses), shared-memory histogram per block.
__global__ void __launch_bounds__(kBlock)
k_class_hist(const int32_t* __restrict__ cls, int64_t n, unsigned long long* __restrict__ hist) {
  __shared__ unsigned int h[tree::kNumClasses];
  for (int c = threadIdx.x; c < tree::kNumClasses; c += blockDim.x) h[c] = 0;
  __syncthreads();
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t c = cls[i];
    if (c >= 0 && c < tree::kNumClasses) atomicAdd(&h[c], 1u);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < tree::kNumClasses; c += blockDim.x)
    if (h[c] != 0) atomicAdd(&hist[c], static_cast<unsigned long long>(h[c]));
}

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
// caller's copy function (OpenMP threads in laplace_plan.cpp) into one of two
// pinned chunks, and the DMA of one chunk overlaps the host copy of the
// next. The chunks are allocated once (portable pinned memory, 8 MB) and
// shared under a mutex; without them (allocation failed, small copies,
// GPUFMM_LAPLACE_STAGED_COPY=0) the copy is a plain cudaMemcpyAsync.

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

bool staging_enabled() {
  const char* e = std::getenv("GPUFMM_LAPLACE_STAGED_COPY");
  return e == nullptr || std::strcmp(e, "0") != 0;
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

}  // namespace

void laplace_staged_upload(Context& ctx, void* dst, const void* src, size_t bytes, LaplaceHostCopy copy) {
  if (bytes == 0) return;
  DeviceGuard guard(ctx);
  clear_last_error();
  const cudaStream_t s = stream_of(ctx);
  Staging& st = staging();
  std::unique_lock<std::mutex> lock(st.mutex);
  if (bytes < kStageMin || copy == nullptr || !staging_enabled() || !staging_buffers(st)) {
    lock.unlock();
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    return;
  }
  try {
    ChunkEvents ev;
    bool used[2] = {false, false};
    int k = 0;
    for (size_t off = 0; off < bytes; off += kStageChunk, k ^= 1) {
      const size_t len = std::min(kStageChunk, bytes - off);
      if (used[k]) GPUFMM_CUDA_CHECK(cudaEventSynchronize(ev[k]));
      copy(st.buf[k], static_cast<const char*>(src) + off, len);
      GPUFMM_CUDA_CHECK(
          cudaMemcpyAsync(static_cast<char*>(dst) + off, st.buf[k], len, cudaMemcpyHostToDevice, s));
      GPUFMM_CUDA_CHECK(cudaEventRecord(ev[k], s));
      used[k] = true;
    }
    for (int j = 0; j < 2; ++j)
      if (used[j]) GPUFMM_CUDA_CHECK(cudaEventSynchronize(ev[j]));
  } catch (...) {
    drain(s);
    throw;
  }
}

void laplace_staged_download(Context& ctx, void* dst, const void* src, size_t bytes, LaplaceHostCopy copy) {
  if (bytes == 0) return;
  DeviceGuard guard(ctx);
  clear_last_error();
  const cudaStream_t s = stream_of(ctx);
  Staging& st = staging();
  std::unique_lock<std::mutex> lock(st.mutex);
  if (bytes < kStageMin || copy == nullptr || !staging_enabled() || !staging_buffers(st)) {
    lock.unlock();
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  try {
    ChunkEvents ev;
    const size_t nchunks = (bytes + kStageChunk - 1) / kStageChunk;
    auto len_of = [&](size_t c) { return std::min(kStageChunk, bytes - c * kStageChunk); };
    auto enqueue = [&](size_t c) {
      const int k = static_cast<int>(c & 1);
      GPUFMM_CUDA_CHECK(cudaMemcpyAsync(st.buf[k], static_cast<const char*>(src) + c * kStageChunk, len_of(c),
                                        cudaMemcpyDeviceToHost, s));
      GPUFMM_CUDA_CHECK(cudaEventRecord(ev[k], s));
    };
    enqueue(0);
    if (nchunks > 1) enqueue(1);
    for (size_t c = 0; c < nchunks; ++c) {
      const int k = static_cast<int>(c & 1);
      GPUFMM_CUDA_CHECK(cudaEventSynchronize(ev[k]));
      copy(static_cast<char*>(dst) + c * kStageChunk, st.buf[k], len_of(c));
      if (c + 2 < nchunks) enqueue(c + 2);
    }
  } catch (...) {
    drain(s);
    throw;
  }
}

LaplaceDevicePoints laplace_upload_points(Context& ctx, const double* src, int64_t ns, const double* trg,
                                          int64_t nt, LaplaceHostCopy copy) {
  LaplaceDevicePoints d;
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
  laplace_staged_upload(ctx, ds, src, bs, copy);
  if (bt > 0) laplace_staged_upload(ctx, dt, trg, bt, copy);
  d.src = ds;
  d.trg = trg != nullptr ? dt : nullptr;
  d.hold = h;
  return d;
}

int64_t laplace_first_nonfinite(Context& ctx, const double* xyz, int64_t n) {
  if (n <= 0) return n;
  DeviceGuard guard(ctx);
  clear_last_error();
  const cudaStream_t s = stream_of(ctx);
  StreamBuffer buf(ctx, sizeof(unsigned long long), "coordinate check");
  unsigned long long* r = static_cast<unsigned long long*>(buf.get());
  const unsigned long long none = static_cast<unsigned long long>(n);
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(r, &none, sizeof none, cudaMemcpyHostToDevice, s));
  k_first_nonfinite<<<std::min<unsigned>(grid_for(n, kBlock), 2048u), kBlock, 0, s>>>(xyz, n, r);
  check_launch("laplace coordinate check kernel");
  unsigned long long h = none;
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(&h, r, sizeof h, cudaMemcpyDeviceToHost, s));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
  return static_cast<int64_t>(h);
}

void laplace_gather_sorted(Context& ctx, const double* xyz, const int32_t* perm, int64_t n, double* out) {
  if (n <= 0) return;
  DeviceGuard guard(ctx);
  clear_last_error();
  k_gather_xyz<<<grid_for(n, kBlock), kBlock, 0, stream_of(ctx)>>>(xyz, perm, n, out);
  check_launch("laplace gather (sorted coordinates) kernel");
}

void laplace_near_field_stats(const tree::Tree& t, int64_t& pairs, int64_t& max_near, int64_t& max_leaf) {
  pairs = max_near = max_leaf = 0;
  const tree::PointSet& S = t.src;
  const tree::PointSet& R = t.receivers();
  const tree::List& nb = t.lists[tree::kNeighbors];
  const int L = t.l_max;
  const int64_t rb0 = R.nboxes > 0 ? R.level_offset[L] : 0, rnb = R.nboxes > 0 ? R.level_offset[L + 1] - rb0 : 0;
  const int64_t sb0 = S.nboxes > 0 ? S.level_offset[L] : 0, snb = S.nboxes > 0 ? S.level_offset[L + 1] - sb0 : 0;
  Context& ctx = t.ctx;
  DeviceGuard guard(ctx);
  clear_last_error();
  const cudaStream_t s = stream_of(ctx);
  StreamBuffer buf(ctx, 3 * sizeof(unsigned long long), "plan statistics");
  unsigned long long* r = static_cast<unsigned long long*>(buf.get());
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(r, 0, 3 * sizeof(unsigned long long), s));
  if (rnb > 0 && nb.built) {
    k_near_stats<<<grid_for(rnb, kBlock), kBlock, 0, s>>>(rb0, rnb, R.point_begin, R.point_end, nb.offsets,
                                                         nb.index, S.point_begin, S.point_end, r);
    check_launch("laplace near-field statistics kernel");
  }
  if (snb > 0) {
    k_leaf_max<<<grid_for(snb, kBlock), kBlock, 0, s>>>(sb0, snb, S.point_begin, S.point_end, r);
    check_launch("laplace leaf statistics kernel");
  }
  unsigned long long h[3] = {0, 0, 0};
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(h, r, sizeof h, cudaMemcpyDeviceToHost, s));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
  pairs = static_cast<int64_t>(h[0]);
  max_near = static_cast<int64_t>(h[1]);
  max_leaf = static_cast<int64_t>(h[2]);
}

void laplace_class_counts(const tree::Tree& t, const int* lists, int nlists, int64_t* counts) {
  std::fill(counts, counts + tree::kNumClasses, int64_t(0));
  Context& ctx = t.ctx;
  DeviceGuard guard(ctx);
  clear_last_error();
  const cudaStream_t s = stream_of(ctx);
  StreamBuffer buf(ctx, tree::kNumClasses * sizeof(unsigned long long), "plan class counts");
  unsigned long long* hist = static_cast<unsigned long long*>(buf.get());
  GPUFMM_CUDA_CHECK(cudaMemsetAsync(hist, 0, tree::kNumClasses * sizeof(unsigned long long), s));
  for (int i = 0; i < nlists; ++i) {
    const tree::List& l = t.lists[lists[i]];
    if (!l.built || l.nnz == 0 || l.cls == nullptr) continue;
    const unsigned grid = std::min<unsigned>(grid_for(l.nnz, kBlock), 1024u);
    k_class_hist<<<grid, kBlock, 0, s>>>(l.cls, l.nnz, hist);
    check_launch("laplace class histogram kernel");
  }
  unsigned long long h[tree::kNumClasses];
  GPUFMM_CUDA_CHECK(cudaMemcpyAsync(h, hist, sizeof h, cudaMemcpyDeviceToHost, s));
  GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s));
  for (int c = 0; c < tree::kNumClasses; ++c) counts[c] = static_cast<int64_t>(h[c]);
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
