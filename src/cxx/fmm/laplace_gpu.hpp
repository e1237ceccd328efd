// The CUDA driver of the Laplace FMM (issue 5): what the plan and the
// benchmark see of it. The kernels are in src/cuda/fmm/laplace_*.cu; the
// design, the strategies and measured numbers in docs/laplace_gpu.md.
//
// The device data of a plan (tables, sorted coordinates, workspace, streams,
// events) hang off LaplacePlan::gpu (a type-erased shared_ptr whose deleter
// frees them), so that the plan's own code needs no CUDA types.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fmm/laplace_plan.hpp"

namespace gpufmm {
namespace fmm {

// Kernel strategy per stage (GPUFMM_LAPLACE_KERNELS, docs/laplace_gpu.md).
//   p2m  : 0 tpb  thread per leaf box (sources walked serially into M)
//          1 wpb  warp per leaf box (lanes over sources, each coefficient
//                 summed over the warp by shuffles, lane 0 adds it)
//          2 bpb  warp(s) per leaf box, tiles of 32 sources: contributions
//                 stored in a shared-memory tile, summed per coefficient in
//                 source order (the default)
//   p2m_warps: warps per leaf of p2m=bpb: 0 auto (1 when the leaves fill
//          the GPU: the CPU's summation order), 1, 2 or 4
//   m2m  : 0 tpb  thread per parent (children serially)
//          1 gpb  8 threads per parent (one per child slot), reduction
//          2 bpb  block per parent, cooperative RCR (the default)
//   m2l  : 0 tpb  thread per receiver box (row entries serially, LevelDown1/2)
//          1 wpb  warp per receiver box (lanes over row entries), reduction
//          2 bpb  block per receiver box, cooperative RCR, level by level
//          3 grp  every level in one launch, block per group of receivers,
//                 entries of one class 8 at a time as lane vectors (the
//                 default; laplace_m2l_group.cuh)
//   l2p  : 0 tpb  thread per leaf box;   1 tpt thread per target (the
//                 default);   2 bpb  block per leaf box, L_b in shared memory
//   p2p  : 0 bpb  block per target leaf, source tiles in shared memory
//          1 tpt  thread per target, sources read from global memory
//   overlap: 1 near field on a second stream (default), 0 serialised
//   graph: 1 the device work of an evaluate captured once into a CUDA graph
//          and replayed by later evaluates with the same arguments (one
//          launch instead of one per stage and level; the default), 0 every
//          kernel launched one by one
//   work : smem  the 2 p^2 work vectors of every RCR translation in shared
//                memory (when they fit), global: in a global scratch slab
struct LaplaceGpuKernels {
  // Defaults: the fastest measured on an H100 (docs/laplace_gpu.md).
  int p2m = 2, m2m = 2, m2l = 3, l2p = 1, p2p = 0;
  int p2m_warps = 0;  // p2m=bpb: warps per leaf (0: automatic)
  int overlap = 1;
  int graph = 1;
  int work_smem = 1;  // translation work vectors in shared memory (1) or global scratch (0)
  bool operator==(const LaplaceGpuKernels& o) const {
    return p2m == o.p2m && m2m == o.m2m && m2l == o.m2l && l2p == o.l2p && p2p == o.p2p &&
           p2m_warps == o.p2m_warps && overlap == o.overlap && graph == o.graph && work_smem == o.work_smem;
  }
};

// Parses "p2p=bpb,m2l=tpb,..." into k (unknown keys or values are ignored,
// so a typo falls back to the default). Returns false when something was
// not understood.
inline bool laplace_gpu_parse_kernels(const char* s, LaplaceGpuKernels& k) {
  if (s == nullptr) return true;
  bool ok = true;
  std::string all(s);
  size_t pos = 0;
  while (pos <= all.size()) {
    size_t end = all.find(',', pos);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      ok = false;
      continue;
    }
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    auto pick = [&](int& field, const char* v0, const char* v1) {
      if (val == v0 || val == "0") field = 0;
      else if (val == v1 || val == "1") field = 1;
      else ok = false;
    };
    auto pick3 = [&](int& field, const char* v0, const char* v1, const char* v2) {
      if (val == v2 || val == "2") field = 2;
      else pick(field, v0, v1);
    };
    if (key == "p2m") pick3(k.p2m, "tpb", "wpb", "bpb");
    else if (key == "p2m_warps") {
      if (val == "auto" || val == "0") k.p2m_warps = 0;
      else if (val == "1" || val == "2" || val == "4") k.p2m_warps = val[0] - '0';
      else ok = false;
    }
    else if (key == "m2m") pick3(k.m2m, "tpb", "gpb", "bpb");
    else if (key == "m2l") {
      if (val == "grp" || val == "3") k.m2l = 3;
      else pick3(k.m2l, "tpb", "wpb", "bpb");
    }
    else if (key == "l2p") pick3(k.l2p, "tpb", "tpt", "bpb");
    else if (key == "p2p") pick(k.p2p, "bpb", "tpt");
    else if (key == "overlap") pick(k.overlap, "off", "on");
    else if (key == "graph") pick(k.graph, "off", "on");
    else if (key == "work") pick(k.work_smem, "global", "smem");
    else ok = false;
  }
  return ok;
}

inline std::string laplace_gpu_kernels_string(const LaplaceGpuKernels& k) {
  std::string s;
  s += k.p2m == 2 ? "p2m=bpb" : k.p2m ? "p2m=wpb" : "p2m=tpb";
  if (k.p2m == 2 && k.p2m_warps) s += ",p2m_warps=" + std::to_string(k.p2m_warps);
  s += k.m2m == 2 ? ",m2m=bpb" : k.m2m ? ",m2m=gpb" : ",m2m=tpb";
  s += k.m2l == 3 ? ",m2l=grp" : k.m2l == 2 ? ",m2l=bpb" : k.m2l ? ",m2l=wpb" : ",m2l=tpb";
  s += k.l2p == 2 ? ",l2p=bpb" : k.l2p ? ",l2p=tpt" : ",l2p=tpb";
  s += k.p2p ? ",p2p=tpt" : ",p2p=bpb";
  s += k.overlap ? ",overlap=on" : ",overlap=off";
  s += k.graph ? ",graph=on" : ",graph=off";
  s += k.work_smem ? ",work=smem" : ",work=global";
  return s;
}

// Cost-model constants of the CUDA driver (papers/000 eqs. 26-32 with the
// GPU's own per-operation costs, so the optimal cluster size differs from the
// CPU's; docs/laplace_gpu.md). Whole-device seconds, not per core.
// GPUFMM_LAPLACE_GPU_COST="c_pair,c_rcr3,c_rcr2,c_point[,c_rcr0]" overrides them.
inline LaplaceCostConstants laplace_cost_constants_gpu(bool single_precision) {
  // Fitted on an H100 (2026-11-24, docs/laplace_gpu.md "GPU-optimal depth"),
  // uniform points, potential + gradient, default kernels:
  //  - c_pair: P2P seconds / pairs at N = 1e6 (L = 4) and 1e7 (L = 5);
  //  - c_rcr3, c_rcr0: (M2M + M2L + L2L) seconds per translation against
  //    the mean p'^3 of the translations at N = 1e7: double p = 8 (L = 6)
  //    and 38 (L = 5; p = 22 within 10 %), float p = 8 and 16 (L = 5). The
  //    grouped M2L's cost is mostly latency between its RCR steps: a
  //    translation costs ~2.6 ns whatever p, plus ~2.1 ps (double) / 0.9 ps
  //    (float) per p'^3. Trees of a few hundred boxes run their translations
  //    2-3x slower than this (too few groups to fill the GPU);
  //  - c_point: (P2M + L2P) seconds per p^2 per point at N = 1e6.
  LaplaceCostConstants c;
  if (single_precision) {
    c.c_pair = 7.0e-13;
    c.c_rcr3 = 8.9e-13;
    c.c_rcr2 = 0.0;
    c.c_rcr0 = 2.6e-9;
    c.c_point = 1.8e-15;
  } else {
    c.c_pair = 1.45e-12;
    c.c_rcr3 = 2.1e-12;
    c.c_rcr2 = 0.0;
    c.c_rcr0 = 2.6e-9;
    c.c_point = 2.6e-15;
  }
  if (const char* e = std::getenv("GPUFMM_LAPLACE_GPU_COST")) {
    double v[5];
    const int got = std::sscanf(e, "%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4]);
    if (got >= 4) {
      c.c_pair = v[0];
      c.c_rcr3 = v[1];
      c.c_rcr2 = v[2];
      c.c_point = v[3];
      c.c_rcr0 = got == 5 ? v[4] : 0.0;
    }
  }
  return c;
}

#if defined(GPUFMM_HAVE_CUDA)
namespace cuda {
// Uploads the tables and sorted coordinates of a plan whose tree was built on
// a GPU context, creates the second stream and the events; sets plan.gpu.
void laplace_plan_setup(LaplacePlan& plan);
// Strategy of the plan's kernels (initialised from GPUFMM_LAPLACE_KERNELS at
// setup; the benchmark changes it between evaluates). Requires a set-up plan.
LaplaceGpuKernels& laplace_gpu_kernels(LaplacePlan& plan);
// Device bytes held by the plan's GPU data (tables, coordinates, workspace).
size_t laplace_gpu_bytes(const LaplacePlan& plan);
}  // namespace cuda
#endif

}  // namespace fmm
}  // namespace gpufmm
