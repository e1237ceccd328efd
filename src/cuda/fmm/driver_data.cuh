// The device data of a plan that the CUDA FMM driver (cuda/fmm/eval.cuh)
// needs whatever the expansion: the streams and events, the CUDA graph of an
// evaluate, the sorted coordinates, the bad-value flags, the workspace and
// staging blocks grown to the largest nd seen. An expansion's device data
// derive from DriverData<K> (K: its kernel strategies, part of the graph's
// key) and add its tables and plan data (cuda/fmm/laplace/gpu_data.cuh).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/context.hpp"
#include "core/cuda_backend.hpp"
#include "cuda/common/cuda_check.cuh"
#include "cuda/common/graph_cache.cuh"
#include "cuda/common/points.hpp"
#include "fmm/plan_core.hpp"

namespace gpufmm {
namespace fmm {
namespace cuda {

using gpufmm::cuda::DeviceGuard;
using gpufmm::cuda::DeviceGuardNoThrow;
using gpufmm::cuda::check_launch;
using gpufmm::cuda::clear_last_error;
using gpufmm::cuda::stream_of;

constexpr int kNumEvents = 10;
// Densities per pass of the kernels that take several (P2P, P2M, L2P).
constexpr int kNdGroup = 4;

// What makes the device work of two evaluates the same graph: the user's
// device pointers (or the staging buffers of the host API), what is given and
// wanted, the number of densities, the user's precision, the kernel
// strategies k (a plan's strategies may change between evaluates) and the
// workspace of the densities (grown with nd). Everything else (tables, tree,
// expansions) belongs to the plan and does not change between evaluates.
template <class K>
struct GraphKey {
  const void *q = nullptr, *d = nullptr;
  void *pot = nullptr, *grad = nullptr, *hess = nullptr;
  int nd = 1;
  int dtype = -1;
  K k;
  const void* ws[10] = {};
  bool operator==(const GraphKey& o) const {
    return q == o.q && d == o.d && pot == o.pot && grad == o.grad && hess == o.hess && nd == o.nd &&
           dtype == o.dtype && k == o.k && std::equal(ws, ws + 10, o.ws);
  }
};

template <class K>
struct DriverData {
  Context* ctx = nullptr;
  int device = 0;
  int sms = 132;
  int max_threads_sm = 2048;
  size_t smem_optin = 48 << 10;
  cudaStream_t s1 = nullptr;
  cudaEvent_t ev[kNumEvents] = {};  // stage timing
  // Stage timing of the far field of density groups 1, 2, ... (kNdGroup
  // densities each; 5 events: start, after P2M, M2M, M2L/L2L, L2P), grown
  // with nd.
  std::vector<cudaEvent_t> ev_far;
  cudaEvent_t fork = nullptr, join = nullptr;  // s0 -> s1 -> s0 (no timing)
  bool near_after_up = false;  // the fork after the upward pass (resolved from the strategies)
  // CUDA graph of the device work of an evaluate: replayed while the
  // arguments (GraphKey) stay the same.
  gpufmm::cuda::GraphCache<GraphKey<K>> graph;
  K k;  // the kernel strategies (the plan's options; may change between evaluates)
  std::vector<void*> blocks;
  size_t bytes = 0;
  // sorted coordinates (txyz == sxyz when same_sets), target -> leaf
  double* sxyz = nullptr;
  const double* txyz = nullptr;
  int32_t* leaf_of = nullptr;
  unsigned long long* bad = nullptr;  // [3]: first bad charge, dipole (user index), result (sorted index)
  // workspace (allocated on first use, in the plan's precision)
  uint8_t* has_local = nullptr;
  // Blocks grown to the largest nd seen (grow).
  struct Staging {
    void* p = nullptr;
    size_t bytes = 0;
  };
  // Densities in Morton order and their near- and far-field results, nd
  // densities one after the other; the multipoles and locals of up to
  // kNdGroup densities (one after the other).
  Staging q, d, near_pot, near_grad, far_pot, far_grad, near_hess, far_hess, M, L;
  // Staging of host inputs and of outputs (host API; device arrays with
  // nd > 1, so that nothing is written before every density succeeded).
  Staging in_q, in_d, out_pot, out_grad, out_hess;

  void* alloc(size_t b, const char* what) {
    void* p = backend_alloc(*ctx, std::max<size_t>(b, 16), what);
    blocks.push_back(p);
    bytes += b;
    return p;
  }
  // st.p with at least `b` bytes (the old block freed when it is smaller).
  void* grow(Staging& st, size_t b, const char* what) {
    if (st.p != nullptr && st.bytes >= b) return st.p;
    if (st.p != nullptr) {
      blocks.erase(std::find(blocks.begin(), blocks.end(), st.p));
      backend_free(*ctx, st.p);
      bytes -= st.bytes;
      st.p = nullptr;
    }
    st.p = alloc(b, what);
    st.bytes = b;
    return st.p;
  }
  DriverData() = default;
  DriverData(const DriverData&) = delete;
  DriverData& operator=(const DriverData&) = delete;
  ~DriverData() {
    DeviceGuardNoThrow g(device);
    if (!g.ok()) return;
    if (s1) {
      (void)cudaStreamSynchronize(s1);
      (void)cudaStreamDestroy(s1);
    }
    graph.reset();
    for (auto& e : ev)
      if (e) (void)cudaEventDestroy(e);
    for (auto& e : ev_far) (void)cudaEventDestroy(e);
    if (fork) (void)cudaEventDestroy(fork);
    if (join) (void)cudaEventDestroy(join);
    for (void* p : blocks) backend_free(*ctx, p);
    (void)cudaGetLastError();
  }
};

// The driver's part of a plan's set-up, before the expansion's: the device's
// properties, the near field's stream (the context's priority, or the least
// where low_priority_near, so that the far field's blocks go first where
// both wait), the stage events.
template <class K>
void driver_init(DriverData<K>& G, PlanCore& P, bool low_priority_near) {
  G.ctx = &P.ctx;
  G.device = P.ctx.device;
  GPUFMM_CUDA_CHECK(cudaDeviceGetAttribute(&G.sms, cudaDevAttrMultiProcessorCount, G.device));
  GPUFMM_CUDA_CHECK(cudaDeviceGetAttribute(&G.max_threads_sm, cudaDevAttrMaxThreadsPerMultiProcessor, G.device));
  int optin = 0;
  GPUFMM_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, G.device));
  G.smem_optin = static_cast<size_t>(optin);
  int least = 0, greatest = 0, prio = 0;
  GPUFMM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  GPUFMM_CUDA_CHECK(cudaStreamGetPriority(static_cast<cudaStream_t>(P.ctx.stream), &prio));
  if (low_priority_near) prio = least;
  GPUFMM_CUDA_CHECK(cudaStreamCreateWithPriority(&G.s1, cudaStreamNonBlocking, prio));
  for (auto& e : G.ev) GPUFMM_CUDA_CHECK(cudaEventCreate(&e));
  GPUFMM_CUDA_CHECK(cudaEventCreateWithFlags(&G.fork, cudaEventDisableTiming));
  GPUFMM_CUDA_CHECK(cudaEventCreateWithFlags(&G.join, cudaEventDisableTiming));
}

// The sorted coordinates on the device (gathered there from the plan's
// device copy of the user's during plan creation, or uploaded from its host
// copies), the bad-value flags and the target -> leaf map's storage, on s0.
template <class K>
void driver_coordinates(DriverData<K>& G, const PlanCore& P, cudaStream_t s0) {
  G.sxyz = static_cast<double*>(G.alloc(sizeof(double) * 3 * std::max<int64_t>(P.nsrc, 1), "FMM sources"));
  if (P.nsrc > 0 && P.dev_sources != nullptr)
    gpufmm::cuda::gather_points(P.ctx, P.dev_sources, P.tree->src.perm, P.nsrc, G.sxyz);
  else if (P.nsrc > 0)
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(G.sxyz, P.src_xyz.data(), sizeof(double) * 3 * P.nsrc,
                                      cudaMemcpyHostToDevice, s0));
  if (P.same_sets) {
    G.txyz = G.sxyz;
  } else {
    double* t = static_cast<double*>(G.alloc(sizeof(double) * 3 * std::max<int64_t>(P.ntrg, 1), "FMM targets"));
    if (P.ntrg > 0 && P.dev_targets != nullptr)
      gpufmm::cuda::gather_points(P.ctx, P.dev_targets, P.tree->recv_own.perm, P.ntrg, t);
    else if (P.ntrg > 0)
      GPUFMM_CUDA_CHECK(cudaMemcpyAsync(t, P.trg_xyz.data(), sizeof(double) * 3 * P.ntrg, cudaMemcpyHostToDevice, s0));
    G.txyz = t;
  }
  G.bad = static_cast<unsigned long long*>(G.alloc(3 * sizeof(unsigned long long), "FMM flags"));
  G.leaf_of = static_cast<int32_t*>(G.alloc(sizeof(int32_t) * std::max<int64_t>(P.ntrg, 1), "FMM leaf map"));
}

template <class K>
inline unsigned blocks_for(const DriverData<K>& G, int64_t threads, int block) {
  const int64_t b = (threads + block - 1) / block;
  const int64_t cap = int64_t(G.sms) * (G.max_threads_sm / block) * 8;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(b, cap)));
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
