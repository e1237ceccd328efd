// The CUDA treecode plan (src/cxx/treecode/plan.hpp): the plan's arrays on
// the device. The set-up builds them (plan.cu: the traversal, the list, the
// coordinates and the work units, all on the device); the evaluate reads
// them (treecode.cu).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda/common/cuda_check.cuh"
#include "cuda/common/device_views.cuh"
#include "cuda/common/staging.hpp"
#include "plan/checks.hpp"
#include "treecode/plan.hpp"

namespace gpufmm {
namespace treecode {

using gpufmm::cuda::DevList;
using gpufmm::cuda::DeviceGuardNoThrow;
using gpufmm::cuda::stream_of;

struct CudaPlan {
  Context* ctx = nullptr;
  int device = 0;
  std::vector<void*> blocks;
  void* alloc(size_t b, const char* what) {
    void* p = backend_alloc(*ctx, std::max<size_t>(b, 16), what);
    blocks.push_back(p);
    return p;
  }
  template <class V>
  V* upload(const std::vector<V>& v, const char* what) {
    V* d = static_cast<V*>(alloc(sizeof(V) * v.size(), what));
    if (!v.empty())
      gpufmm::cuda::staged_upload(*ctx, d, v.data(), sizeof(V) * v.size(), plan::parallel_copy);
    return d;
  }
  // Plan arrays.
  double *sxyz = nullptr, *txyz = nullptr, *tset_center = nullptr;
  int32_t *tset_begin = nullptr, *tset_end = nullptr, *sset_begin = nullptr, *sset_end = nullptr;
  int64_t* list_offsets = nullptr;
  int32_t* list_index = nullptr;
  int32_t *chunk_cluster = nullptr, *chunk_begin = nullptr, *chunk_end = nullptr, *chunk_first = nullptr;
  const Box *sprox_geom = nullptr, *tbox_geom = nullptr;
  // src_perm and trg_perm are the trees' own arrays (not in blocks).
  const int32_t *src_perm = nullptr, *trg_perm = nullptr, *tprox = nullptr;
  int32_t *trg_leaf = nullptr, *tparent = nullptr;
  double* u = nullptr;  // approx::cheb_units of the degree
  uint64_t *units_batch = nullptr, *units_prox = nullptr;
  int64_t nunits_batch = 0, nunits_prox = 0;
  // Workspace (first evaluate).
  void *q = nullptr, *pot = nullptr, *grad = nullptr;
  double *qd = nullptr, *part = nullptr, *phi = nullptr;
  void *in_q = nullptr, *out_pot = nullptr, *out_grad = nullptr;  // host API staging (double)
  cudaEvent_t ev[6] = {};
  // The near field's views: target sets (rows), source sets, the list.
  gpufmm::cuda::DevSet targets() const {
    gpufmm::cuda::DevSet R;
    R.center = tset_center;
    R.point_begin = tset_begin;
    R.point_end = tset_end;
    return R;
  }
  gpufmm::cuda::DevSet sources() const {
    gpufmm::cuda::DevSet S;
    S.point_begin = sset_begin;
    S.point_end = sset_end;
    return S;
  }
  DevList list() const {
    DevList l;
    l.offsets = list_offsets;
    l.index = list_index;
    return l;
  }
  ~CudaPlan() {
    DeviceGuardNoThrow g(device);
    if (!g.ok()) return;
    (void)cudaStreamSynchronize(stream_of(*ctx));
    for (auto& e : ev)
      if (e) (void)cudaEventDestroy(e);
    for (void* p : blocks) backend_free(*ctx, p);
    (void)cudaGetLastError();
  }
};

namespace detail {
// Wall-clock seconds (the plan's and the evaluate's timings; treecode.cu).
double seconds();
}  // namespace detail

}  // namespace treecode
}  // namespace gpufmm
