// What the CUDA driver of the Laplace FMM shares between its files: the
// device data of a plan (GpuData, hung off LaplacePlan::gpu) and the small
// launch helpers.
//   tables.cu    the translation tables on the device (process-wide cache)
//   setup.cu     laplace_plan_setup: tables, sorted coordinates, leaf map,
//                P2P work units, grouped M2L entries
//   evaluate.cu  laplace_evaluate: one method per stage, the streams
// Kernels: kernels.cuh, m2l_group.cuh, nearfield/p2p.cuh. Design and
// measurements: docs/laplace_gpu.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/cuda_backend.hpp"
#include "cuda/common/cuda_check.cuh"
#include "cuda/common/graph_cache.cuh"
#include "cuda/fmm/driver_data.cuh"
#include "cuda/fmm/laplace/adaptive.cuh"
#include "cuda/fmm/laplace/kernels.cuh"
#include "cuda/fmm/laplace/m2l_gemm.cuh"
#include "cuda/fmm/laplace/m2l_group.cuh"
#include "cuda/nearfield/p2p_mutual.cuh"
#include "fmm/laplace/gpu.hpp"
#include "tree/tree.hpp"

namespace gpufmm {
namespace fmm {
namespace cuda {

constexpr size_t kScratchBudget = size_t(512) << 20;  // per-thread work slots, bytes

// Device data of one plan: the driver's (DriverData) and the Laplace
// expansion's.
struct GpuData : DriverData<LaplaceGpuKernels> {
  // Grouped M2L (m2l = GRP): receivers per group (k.m2l_group, else
  // m2l_group_size), entries.
  int grp_size = 0;
  DevM2LGroups grp;
  // M2L as dense products (m2l = GEMM; m2l_gemm.cu).
  M2LGemm gemm;
  // M2M as dense products (m2m = GEMM; m2m_gemm.cu).
  M2MGemm m2m_gemm;
  // tables (device memory shared with the device table cache and other plans)
  DevTables<double> tab_d;
  DevTables<float> tab_f;
  std::shared_ptr<const void> tables_mem;
  uint64_t* p2p_units = nullptr;  // k_p2p_bpb work units (build_p2p_units)
  int64_t p2p_nunits = 0;
  // The mutual near field's leaf pairs (uniform plans with sources =
  // targets; k.p2p_mutual).
  nearfield::cuda::MutualPasses mutual;
  void* scratch = nullptr;
  int64_t scratch_threads = 0;
  // Adaptive plans (issue 19): the receiver leaves (rows of U and W) as a
  // compact set, the lists (lists/adaptive.hpp), per level the ranges of
  // the receiver leaves ([l_max + 2]), and the source leaves.
  struct Adaptive {
    int64_t nleaves = 0, nw = 0, nx = 0;  // receiver leaves, W entries, X rows
    int64_t nsrc_leaves = 0;
    int32_t *leaves = nullptr, *src_leaves = nullptr;
    DevSet rleaf;  // row r: leaf leaves[r] (point ranges, centres, keys)
    int64_t *u_off = nullptr, *w_off = nullptr, *x_off = nullptr;
    int32_t *u = nullptr, *w = nullptr, *x_box = nullptr, *x = nullptr;
    std::vector<int64_t> leaf_level;
    lists::LevelOffsets soff{}, roff{};  // level offsets of the sources, receivers
  } ad;

  ~GpuData() {  // the driver's data (streams, events, blocks) after this
    DeviceGuardNoThrow g(device);
    if (g.ok() && gemm.handle) (void)cublasDestroy(gemm.handle);
  }
};

inline GpuData& gpu_of(LaplacePlan& P) {
  require(P.gpu != nullptr, GPUFMM_ERROR_INTERNAL, "laplace: the plan's GPU data are missing");
  return *static_cast<GpuData*>(P.gpu.get());
}

inline DevSet dev_set(const tree::PointSet& s) {
  DevSet d;
  d.parent = s.parent;
  d.child_offset = s.child_offset;
  d.point_begin = s.point_begin;
  d.point_end = s.point_end;
  d.box_key = s.box_key;
  d.center = s.center;
  d.perm = s.perm;
  return d;
}

// The same with the frame of the tree's finest level (DevSet::leaf), for
// the kernels that take coordinates relative to the leaves' centres.
inline DevSet dev_set(const tree::Tree& t, const tree::PointSet& s) {
  DevSet d = dev_set(s);
  d.leaf = tree::level_frame(t.cube, t.l_max);
  return d;
}

inline DevList dev_list(const lists::List& l) {
  DevList d;
  d.offsets = l.offsets;
  d.index = l.index;
  d.cls = l.cls;
  return d;
}


// The plan data of the M2L strategy G.k.m2l when they are not there yet (at
// set-up, and at an evaluate after laplace_gpu_kernels changed it): the
// grouped entries (GRP) or the dense products (GEMM). Both need the grouped
// kernel's work vectors of 4 lanes in shared memory (p <= 44 in double on
// an H100); beyond, G.k.m2l becomes BPB (setup.cu). Also the dense M2M
// operators and columns (G.k.m2m = GEMM).
void m2l_plan_data(GpuData& G, const LaplacePlan& P, cudaStream_t s0);
// The number of entries of the M2L lists that the grouped strategies take
// (setup.cu).
int64_t m2l_entry_count(const LaplacePlan& P, cudaStream_t s0);
// Those entries keyed by (group of gsize consecutive receivers of a level,
// or of any levels with span_levels, class), sorted, and cut into segments
// of one class (setup.cu).
void build_m2l_groups(GpuData& G, const LaplacePlan& P, int gsize, bool span_levels, DevM2LGroups& out,
                      cudaStream_t s0);
// m2l = GEMM (m2l_gemm.cu): the plan's part (G.gemm), and L (+)= the M2L of
// every level (has_local set for every receiver with an entry).
void m2l_gemm_build(GpuData& G, const LaplacePlan& P, bool rcr, cudaStream_t s0);
template <class T>
void m2l_gemm_run(GpuData& G, int p, const T* M, T* L, uint8_t* has_local, cudaStream_t s);
// Bytes of each buffer of the dense products (k.m2l_gemm_mb MB, else 1 GB,
// at most 1/32 of the device's memory; m2l_gemm.cu).
size_t gemm_buffer_bytes(const GpuData& G);
// The plan's cuBLAS handle (G.gemm.handle, with its own workspace, so that
// a graph capture allocates nothing), created on first use (m2l_gemm.cu).
cublasHandle_t plan_cublas(GpuData& G);
// m2m = GEMM (m2m_gemm.cu): the plan's part (G.m2m_gemm), and the M2M into
// the parents [b0, b0 + nb) of level l where that level is dense (else
// false: nothing done).
void m2m_gemm_build(GpuData& G, const LaplacePlan& P, cudaStream_t s0);
template <class T>
bool m2m_gemm_level(GpuData& G, int p, int l, int64_t b0, int64_t nb, const int32_t* child_offset, T* M,
                    cudaStream_t s);

// The device tables of a plan (tables.cu): shared through the process-wide
// device table cache (cache true) or uploaded for the plan alone; G keeps
// them alive (G.tables_mem) and counts their bytes.
template <class T>
DevTables<T> device_tables(GpuData& G, const LaplaceTables<T>& t, bool vt, bool cache);

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
