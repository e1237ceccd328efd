// The Laplace FMM on the GPU: its expansion of the CUDA driver
// (cuda/fmm/eval.cuh, which runs the streams, staging, checks and graphs),
// one method per stage choosing its kernels by the plan's strategies:
//   upward      P2M (BpB / WpB / TpB), M2M levels L-1..2 (BpB / GEMM / GpB / TpB)
//   downward    per level l: L2L (LevelDown3), M2L of type 1 (LevelDown1) and
//               type 2 (LevelDown2); or every level's M2L at once (GRP, GEMM)
//   to_targets  L2P (TpT / BpB / TpB), an adaptive plan's M2P
//   near        P2P (BpB, the mutual passes, TpT)
// The plan's device data come from laplace_plan_setup (setup.cu). Kernels:
// kernels.cuh, m2l_group.cuh, nearfield/p2p.cuh. Design and measurements:
// docs/laplace_gpu.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/fmm/eval.cuh"
#include "cuda/fmm/laplace/gpu_data.cuh"
#include "cuda/nearfield/p2p.cuh"
#include "kernels/kernel.hpp"
#include "plan/checks.hpp"

namespace gpufmm {
namespace fmm {
namespace cuda {

namespace nf = gpufmm::nearfield::cuda;

namespace {

// f(std::true_type) when the Hessian is wanted (fh non-null), else
// f(std::false_type): the kHess of the L2P kernels (l2p_point).
template <class F>
void with_hess(const void* fh, F&& f) {
  if (fh)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// ------------------------------------------------------------ evaluate

// The Laplace FMM as an expansion of the CUDA driver (cuda/fmm/eval.cuh):
// one method per stage, as the CPU expansion has them, each choosing its
// kernel by the plan's strategies (G.k).
template <class T>
struct LaplaceGpuExpansion {
  using Real = T;
  LaplacePlan& P;
  GpuData& G;
  const DevTables<T>& tab;
  const tree::Tree& tr;
  const tree::PointSet& S;
  const tree::PointSet& R;
  cudaStream_t s0;
  int p, L;
  int64_t p2;

  LaplaceGpuExpansion(LaplacePlan& plan, GpuData& g, const DevTables<T>& t)
      : P(plan), G(g), tab(t), tr(*plan.tree), S(plan.tree->src), R(plan.tree->receivers()),
        s0(stream_of(plan.ctx)), p(plan.p), L(plan.l_max), p2(int64_t(plan.p) * plan.p) {}

  T* scratch() {
    if (G.scratch == nullptr) {
      const size_t per = size_t(3) * p2 * sizeof(T);
      int64_t want = std::max<int64_t>(S.nboxes, R.nboxes) * 32;
      want = std::min<int64_t>(want, int64_t(G.sms) * G.max_threads_sm);
      want = std::min<int64_t>(want, int64_t(kScratchBudget / per));
      want = std::max<int64_t>(128, want / 128 * 128);
      G.scratch = G.alloc(size_t(want) * per, "laplace translation scratch");
      G.scratch_threads = want;
    }
    return static_cast<T*>(G.scratch);
  }

  // Launch geometry of a translation kernel: (blocks, threads, dynamic smem).
  struct Geo {
    unsigned blocks;
    int threads;
    size_t smem;
    int use_smem;
  };
  Geo geo(int64_t work_items) {
    scratch();
    Geo g;
    const size_t per = size_t(2) * p2 * sizeof(T);
    g.use_smem = 0;
    g.threads = 128;
    g.smem = 0;
    if (G.k.work_smem && 32 * per <= G.smem_optin) {
      g.use_smem = 1;
      g.threads = 32;
      while (g.threads < 128 && 2 * g.threads * per <= G.smem_optin / 2) g.threads *= 2;
      g.smem = g.threads * per;
    }
    const int64_t b = (work_items + g.threads - 1) / g.threads;
    const int64_t cap = G.scratch_threads / g.threads;
    g.blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min(b, cap)));
    return g;
  }

  // Dynamic shared memory above the 48 KB default; the carveout preference
  // asks for the largest shared-memory configuration, so that several blocks
  // of a large-smem kernel can share an SM.
  template <class K>
  void set_smem(K kernel, size_t smem) {
    if (smem > (48u << 10)) {
      GPUFMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem)));
      GPUFMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                             cudaSharedmemCarveoutMaxShared));
    }
  }

  template <int KIND, int GG>
  void translate(int64_t b0, int64_t nb, const int32_t* rows32, const int64_t* rows64, const uint64_t* key,
                 const int32_t* idx, const int32_t* cls, const T* Min, T* Out, uint8_t* hl) {
    if (nb <= 0) return;
    const Geo g = geo(nb * GG);
    auto kern = k_translate<T, KIND, GG>;
    set_smem(kern, g.smem);
    kern<<<g.blocks, g.threads, g.smem, s0>>>(b0, nb, p, tab, rows32, rows64, key, idx, cls, Min, Out, hl,
                                              scratch(), g.use_smem);
    check_launch(KIND == kKindM2M ? "laplace M2M kernel" : "laplace M2L kernel");
  }

  // Slots of a BpB batch: about 4 elements per thread (S p^2 ~ 1024; H100,
  // p = 22 double: S = 2 15.6 ms, 4 17.3 ms, 8 19.1 ms for the downward pass
  // at N = 1e6, L = 4), at most 16 (kind_cap: 8 for M2M), shared memory <= 96 KB.
  int bpb_slots(int kind_cap) const {
    int S = G.k.bpb_slots > 0 ? G.k.bpb_slots : std::max(1, int((1024 + p2 / 2) / p2));
    S = std::min(S, std::min(16, kind_cap));
    while (S > 1 && bpb_smem_bytes<T>(p, S) > std::min<size_t>(G.smem_optin, 96u << 10)) --S;
    return S;
  }

  template <int KIND>
  void translate_bpb(int64_t b0, int64_t nb, const int32_t* rows32, const int64_t* rows64, const uint64_t* key,
                     const int32_t* idx, const int32_t* cls, const int32_t* parent, const T* Min, T* Out,
                     uint8_t* hl) {
    if (nb <= 0) return;
    const int S = bpb_slots(KIND == kBpbM2M ? 8 : 16);
    const size_t smem = bpb_smem_bytes<T>(p, S);
    auto kern = k_translate_bpb<T, KIND>;
    set_smem(kern, smem);
    const int64_t work = KIND == kBpbL2L ? (nb + S - 1) / S : nb;
    const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(work, 1 << 30)));
    kern<<<blocks, kBpbThreads, smem, s0>>>(b0, nb, p, S, tab, rows32, rows64, key, idx, cls, parent, Min, Out,
                                             hl);
    check_launch(KIND == kBpbM2M ? "laplace M2M kernel" : KIND == kBpbM2L ? "laplace M2L kernel"
                                                                          : "laplace L2L kernel");
  }

  template <int NL, int NT>
  void m2l_grouped_launch(const T* M, T* Lx, uint8_t* hl) {
    const size_t smem = m2l_group_smem_bytes<T, NL>(p);
    auto kern = k_m2l_group<T, NL, NT>;
    set_smem(kern, smem);
    const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(G.grp.ngroups, 1 << 30)));
    kern<<<blocks, NT, smem, s0>>>(p, tab, G.grp, M, Lx, hl);
    check_launch("laplace grouped M2L kernel");
  }

  // Lanes: k.m2l_lanes (8 by default, 4 where 8 do not fit). Threads
  // (k.m2l_threads, else automatic): the fewest of 256, 320, 384 and 512
  // that hold the p^2 elements of a step (every element of every RCR step
  // its own thread), 512 beyond.
  template <int NL>
  void m2l_grouped_lanes(const T* M, T* Lx, uint8_t* hl) {
    const int nt = G.k.m2l_threads > 0 ? G.k.m2l_threads : p2 <= 256 ? 256 : p2 <= 320 ? 320 : p2 <= 384 ? 384 : 512;
    if (nt == 256)
      m2l_grouped_launch<NL, 256>(M, Lx, hl);
    else if (nt == 320)
      m2l_grouped_launch<NL, 320>(M, Lx, hl);
    else if (nt == 384)
      m2l_grouped_launch<NL, 384>(M, Lx, hl);
    else
      m2l_grouped_launch<NL, 512>(M, Lx, hl);
  }

  void m2l_grouped(const T* M, T* Lx, uint8_t* hl) {
    if (G.grp.ngroups == 0) return;
    const int lanes = G.k.m2l_lanes > 0 ? G.k.m2l_lanes : G.grp_size >= 8 ? 8 : 4;
    if (lanes == 4 || m2l_group_smem_bytes<T, 8>(p) > G.smem_optin)
      m2l_grouped_lanes<4>(M, Lx, hl);
    else
      m2l_grouped_lanes<8>(M, Lx, hl);
  }

  void m2l_level(const lists::List& list, int l, T* M, T* Lx, uint8_t* hl) {
    const int64_t b0 = R.level_offset[l], nb = R.level_offset[l + 1] - b0;
    if (G.k.m2l == GPUFMM_STRATEGY_BPB)
      translate_bpb<kBpbM2L>(b0, nb, nullptr, list.offsets, nullptr, list.index, list.cls, nullptr, M, Lx, hl);
    else if (G.k.m2l == GPUFMM_STRATEGY_WPB)
      translate<kKindM2L, 32>(b0, nb, nullptr, list.offsets, nullptr, list.index, list.cls, M, Lx, hl);
    else
      translate<kKindM2L, 1>(b0, nb, nullptr, list.offsets, nullptr, list.index, list.cls, M, Lx, hl);
  }

  // The rows of the BpB near field: an adaptive plan's U rows of its
  // receiver leaves (a compact set), or a uniform plan's NEIGHBORS rows of
  // the leaves (from b0); one block per work unit.
  struct BpbRows {
    int64_t b0 = 0;
    DevSet recv;
    DevList rows;
    unsigned blocks = 1;
  };
  BpbRows p2p_bpb_rows() const {
    BpbRows r;
    r.blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(G.p2p_nunits, 1 << 30)));
    if (P.adaptive) {
      r.recv = G.ad.rleaf;
      r.rows.offsets = G.ad.u_off;
      r.rows.index = G.ad.u;
    } else {
      r.b0 = R.level_offset[L];
      r.recv = dev_set(tr, R);
      r.rows = dev_list(P.lists->list[lists::kNeighbors]);
    }
    return r;
  }

  // The mutual near field (nearfield/p2p_mutual.cuh): the results zeroed,
  // then pass 0 (each leaf with itself) and the 26 passes of leaf pairs,
  // one after the other on s, or all in one launch of the flow schedule;
  // blocks of NW warps.
  template <bool kG, int NW>
  void p2p_mutual_launch(const T* q, T* pot, T* grad, cudaStream_t s) {
    const int64_t nt = P.ntrg;
    if (pot) GPUFMM_CUDA_CHECK(cudaMemsetAsync(pot, 0, size_t(nt) * sizeof(T), s));
    if (kG) GPUFMM_CUDA_CHECK(cudaMemsetAsync(grad, 0, size_t(3 * nt) * sizeof(T), s));
    const DevSet r = dev_set(tr, R);
    const nf::MutualPasses& mp = G.mutual;
    // Blocks per SM of the flow schedule (0: the passes): k.p2p_mutual_flow,
    // or automatically all an SM holds less one (a slot for the far field:
    // 11.58 ms at N = 1e6 against 11.75-11.95 with all six, H200) where
    // the passes' tails are long (nf::mutual_flow_pays).
    int flow = G.k.p2p_mutual_flow;
    if (flow < 0) flow = nf::mutual_flow_pays(mp, G.sms) ? std::max(1, nf::kMutualMinWarpsPerSm / NW - 1) : 0;
    if (flow > 0) {
      GPUFMM_CUDA_CHECK(cudaMemsetAsync(mp.counters, 0, size_t(mp.nb + 1) * sizeof(unsigned), s));
      const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(mp.offset[nf::kMutualPasses], int64_t(flow) * G.sms));
      nf::k_p2p_mutual_flow<kernels::Laplace<T>, T, kG, NW><<<blocks, 32 * NW, 0, s>>>(kernels::Laplace<T>{}, mp, r,
                                                                                       G.sxyz, q, pot, grad);
      check_launch("laplace mutual P2P kernel (flow)");
      return;
    }
    for (int k = 0; k < nf::kMutualPasses; ++k) {
      const int64_t n = mp.offset[k + 1] - mp.offset[k];
      if (n <= 0) continue;
      const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(n, 1 << 30));
      if (k == 0)
        nf::k_p2p_mutual<kernels::Laplace<T>, T, kG, true, NW><<<blocks, 32 * NW, 0, s>>>(
            kernels::Laplace<T>{}, mp.pairs + mp.offset[k], n, r, G.sxyz, q, pot, grad);
      else
        nf::k_p2p_mutual<kernels::Laplace<T>, T, kG, false, NW><<<blocks, 32 * NW, 0, s>>>(
            kernels::Laplace<T>{}, mp.pairs + mp.offset[k], n, r, G.sxyz, q, pot, grad);
      check_launch("laplace mutual P2P kernel");
    }
  }
  // Points of A per lane: k.p2p_mutual_lanes (1, 2 or 4).
  template <bool kG>
  void p2p_mutual(const T* q, T* pot, T* grad, cudaStream_t s) {
    if (G.k.p2p_mutual_lanes == 4)
      p2p_mutual_launch<kG, 2>(q, pot, grad, s);
    else if (G.k.p2p_mutual_lanes == 2)
      p2p_mutual_launch<kG, 4>(q, pot, grad, s);
    else
      p2p_mutual_launch<kG, 8>(q, pot, grad, s);
  }

  // Whether the mutual near field runs where it can (k.p2p_mutual): on,
  // off, or automatically when its 26 passes of leaf pairs average at least
  // kMutualMinBlocksPerSm blocks per SM (NVIDIA H200, uniform points: plans
  // of L = 3, about 1 block per SM and pass, evaluated 20-54 % slower than
  // with BpB at eps 1e-3 .. 1e-6; L = 4 and 5, 12 and more blocks, 0-15 %
  // faster; docs/laplace_gpu.md "Mutual P2P") and its passes are not held
  // up by their largest blocks (nf::mutual_is_balanced).
  static constexpr int kMutualMinBlocksPerSm = 4;
  bool mutual_near_field() const {
    if (G.mutual.pairs == nullptr || G.k.p2p != GPUFMM_STRATEGY_BPB || G.k.p2p_mutual == 0) return false;
    if (G.k.p2p_mutual > 0) return true;
    const int64_t pairs = G.mutual.offset[nf::kMutualPasses] - G.mutual.offset[1];
    return pairs >= int64_t(nf::kMutualPasses - 1) * kMutualMinBlocksPerSm * G.sms &&
           nf::mutual_is_balanced(G.mutual, G.sms);
  }

  // kH: the Hessian into hess as well (either schedule; an adaptive plan's
  // near field is BpB). Charges alone on a uniform plan with sources =
  // targets: the mutual near field where mutual_near_field() says.
  template <bool kC, bool kD, bool kG, bool kH>
  void p2p_launch(const T* q, const T* d, T* pot, T* grad, T* hess, cudaStream_t s) {
    if (kC && !kD && !kH && !P.adaptive && mutual_near_field()) {
      p2p_mutual<kG>(q, pot, grad, s);
      return;
    }
    if (!P.adaptive && G.k.p2p == GPUFMM_STRATEGY_TPT) {
      nf::k_p2p_tpt<kernels::Laplace<T>, T, kC, kD, kG, kH><<<blocks_for(G, P.ntrg, 128), 128, 0, s>>>(
          kernels::Laplace<T>{}, P.ntrg, dev_set(tr, R), dev_set(tr, S), dev_list(P.lists->list[lists::kNeighbors]),
          G.leaf_of, G.sxyz, G.txyz, q, d, pot, grad, hess);
    } else if (G.p2p_nunits > 0) {
      const BpbRows r = p2p_bpb_rows();
      nf::k_p2p_bpb<kernels::Laplace<T>, T, kC, kD, kG, kH><<<r.blocks, nf::kP2PBlock, 0, s>>>(
          kernels::Laplace<T>{}, r.b0, G.p2p_nunits, G.p2p_units, r.recv, dev_set(tr, S), r.rows, G.sxyz, G.txyz, q, d,
          pot, grad, hess);
    }
    check_launch("laplace P2P kernel");
  }

  // ---------------------------------------------------------- stages
  // One method per stage, as the CPU pipeline (fmm/pipeline_impl.hpp)
  // has them; enqueue runs them in order on the streams.

  // P2M: the multipoles of the source leaves (level L; an adaptive plan's
  // leaves of level l: the boxes boxes[0 .. nb)). nk densities one after
  // the other (q + k ns, d + 3 k ns) into M + k S.nboxes p^2.
  void p2m(T* q, T* d, T* M, int nk = 1) {
    p2m_boxes(q, d, M, L, S.level_offset[L], S.level_offset[L + 1] - S.level_offset[L], nullptr, P.nsrc, nk);
  }

  // P2M into nb leaves of level l (l < 0: of every level, an adaptive
  // plan's) holding ns sources in all; nk densities (as p2m): BpB takes up
  // to four per walk of each source's basis (when their accumulators fit in
  // shared memory), the others one at a time.
  void p2m_boxes(T* q, T* d, T* M, int l, int64_t b0, int64_t nb, const int32_t* boxes, int64_t ns, int nk = 1) {
    if (nb <= 0) return;
    LeafLevel lev;
    lev.cube = tr.cube;
    lev.off = G.ad.soff;
    lev.l_max = L;
    lev.level = l;
    const DevSet Sd = dev_set(S);
    const int64_t nsrc = P.nsrc, Ms = S.nboxes * p2;
    // bpb: blocks of nw warps (shared memory nw x p2m_bpb_warp_bytes:
    // 12320 B per warp at p = 22 double, 28448 B at p = 50; with four
    // densities 3 x p^2 values more), wpl warps per leaf: 1 (each
    // coefficient summed over the leaf's sources in order, as on the CPU)
    // when the leaves give >= 16 warps per SM, else 2 or 4 while the leaves
    // average > 32 sources per warp.
    const bool four = nk > 1 && p2m_bpb_warp_bytes<T>(p, kNdGroup) <= G.smem_optin;
    const size_t p2m_wb = p2m_bpb_warp_bytes<T>(p, four ? kNdGroup : 1);
    if (G.k.p2m == GPUFMM_STRATEGY_BPB && p2m_wb <= G.smem_optin && (nk == 1 || four)) {
      int nw = kP2MMaxWarps;
      while (nw > 1 && nw * p2m_wb > std::min<size_t>(G.smem_optin, 96u << 10)) nw /= 2;
      int wpl = G.k.p2m_warps;
      if (wpl <= 0) {
        const double per_leaf = nb > 0 ? double(ns) / double(nb) : 0.0;
        wpl = 1;
        while (wpl < nw && nb * wpl < int64_t(G.sms) * 16 && per_leaf > 32.0 * wpl) wpl *= 2;
      }
      wpl = std::min(wpl, nw);
      const size_t smem = size_t(nw) * p2m_wb;
      const int per_block = nw / wpl;
      const unsigned blocks =
          static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((nb + per_block - 1) / per_block, 1 << 30)));
      NdLayout nl;
      nl.nk = nk;
      nl.q_stride = nsrc;
      nl.d_stride = 3 * nsrc;
      nl.pot_stride = Ms;
      auto launch = [&](auto kernel) {
        set_smem(kernel, smem);
        kernel<<<blocks, 32 * nw, smem, s0>>>(b0, nb, boxes, p, lev, wpl, Sd, G.sxyz, q, d, M, tab.walk, nl);
      };
      if (d && four)
        launch(k_p2m_bpb<T, true, kNdGroup>);
      else if (four)
        launch(k_p2m_bpb<T, false, kNdGroup>);
      else if (d)
        launch(k_p2m_bpb<T, true, 1>);
      else
        launch(k_p2m_bpb<T, false, 1>);
    } else if (nk > 1) {
      for (int k = 0; k < nk; ++k)
        p2m_boxes(q ? q + k * nsrc : nullptr, d ? d + k * 3 * nsrc : nullptr, M + k * Ms, l, b0, nb, boxes, ns);
      return;
    } else if (G.k.p2m != GPUFMM_STRATEGY_TPB) {  // wpb (also bpb where one warp's tile does not fit)
      const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, (nb * 32 + 127) / 128));
      k_p2m_wpb<T><<<blocks, 128, 0, s0>>>(b0, nb, boxes, p, lev, Sd, G.sxyz, q, d, M, tab.walk);
    } else {
      k_p2m_tpb<T><<<blocks_for(G, nb, 64), 64, 0, s0>>>(b0, nb, boxes, p, lev, Sd, G.sxyz, q, d, M, tab.walk);
    }
    check_launch("laplace P2M kernel");
  }

  // M2M, levels L-1 .. 2.
  void m2m(T* M) {
    for (int l = L - 1; l >= 2; --l) m2m_level(l, M);
  }

  // M2M into the parents of level l: GEMM where the plan made the level
  // dense (m2m_gemm.cu), else BpB.
  void m2m_level(int l, T* M) {
    const int64_t b0 = S.level_offset[l], nb = S.level_offset[l + 1] - b0;
    if (G.k.m2m == GPUFMM_STRATEGY_GEMM && m2m_gemm_level<T>(G, p, l, b0, nb, S.child_offset, M, s0)) return;
    if (G.k.m2m == GPUFMM_STRATEGY_BPB || G.k.m2m == GPUFMM_STRATEGY_GEMM)
      translate_bpb<kBpbM2M>(b0, nb, S.child_offset, nullptr, S.box_key, nullptr, nullptr, nullptr, M, M, nullptr);
    else if (G.k.m2m == GPUFMM_STRATEGY_GPB)
      translate<kKindM2M, 8>(b0, nb, S.child_offset, nullptr, S.box_key, nullptr, nullptr, M, M, nullptr);
    else
      translate<kKindM2M, 1>(b0, nb, S.child_offset, nullptr, S.box_key, nullptr, nullptr, M, M, nullptr);
  }

  // Adaptive plans (issue 19): the P2M of the source leaves of every level
  // in one launch (one level at a time left most of the GPU idle: at p = 34
  // a level's leaves give a warp or two per scheduler, and the walk is a
  // chain of dependent FP64 operations), then the M2M bottom up, level by
  // level, into the boxes with children (the leaves keep their P2M). nk
  // densities as p2m.
  void upward_adaptive(T* q, T* d, T* M, int nk = 1) {
    p2m_boxes(q, d, M, -1, 0, G.ad.nsrc_leaves, G.ad.src_leaves, P.nsrc, nk);
    for (int l = L - 1; l >= 2; --l)
      for (int k = 0; k < nk; ++k) m2m_level(l, M + k * S.nboxes * p2);
  }

  // Adaptive plans: P2L of the X rows of every level in one launch, into
  // the zeroed locals before the downward pass (L2L adds the parent's local
  // to the child's, whatever came first).
  void p2l(T* q, T* d, T* Lx, uint8_t* hl) {
    const GpuData::Adaptive& a = G.ad;
    if (a.nx <= 0) return;
    // Warps per row: up to kP2lWarps, as many p^2 accumulators as take at
    // most kP2lSmem bytes (8 warps up to p = 27 in double, 2 at p = 50).
    const size_t per_warp = size_t(p2) * sizeof(T);
    const int warps = static_cast<int>(std::max<size_t>(1, std::min<size_t>(kP2lWarps, kP2lSmem / per_warp)));
    const size_t smem = warps * per_warp;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(a.nx, 1 << 30));
    k_p2l_bpb<T><<<blocks, 32 * warps, smem, s0>>>(a.nx, a.x_box, a.x_off, a.x, p, tr.cube, a.roff, L, dev_set(S),
                                                   dev_set(R), G.sxyz, q, d, Lx, hl, tab.walk);
    check_launch("laplace P2L kernel");
  }

  // Adaptive plans: L2P at the receiver leaves of every level (TpT with the
  // level of each target's leaf, or BpB / TpB level by level), then M2P of
  // the W rows into the same far-field outputs.
  // nk densities (M + k S.nboxes p^2, Lx + k R.nboxes p^2; results at
  // fp + k nt, fg + 3 k nt, fh + 6 k nt): TpT without the Hessian takes up
  // to four per walk of each target's basis, the rest one at a time.
  void l2p_m2p_adaptive(const T* M, T* Lx, uint8_t* hl, T* fp, T* fg, T* fh, int nk) {
    const GpuData::Adaptive& a = G.ad;
    const int64_t nt = P.ntrg, Ms = S.nboxes * p2, Ls = R.nboxes * p2;
    if (nk > 1 && G.k.l2p == GPUFMM_STRATEGY_TPT && !fh) {
      k_l2p_tpt_levels_nd<T, kNdGroup><<<blocks_for(G, nt, 128), 128, 0, s0>>>(
          nt, p, tr.cube, a.roff, L, dev_set(R), G.leaf_of, G.txyz, Lx, Ls, hl, fp, fg, nd_out(nk), tab.walk);
      check_launch("laplace L2P kernel");
      for (int k = 0; k < nk; ++k) m2p_adaptive(M + k * Ms, out_at(fp, k, 1), out_at(fg, k, 3), nullptr);
      return;
    }
    for (int k = 0; k < nk; ++k)
      l2p_m2p_adaptive(M + k * Ms, Lx + k * Ls, hl, out_at(fp, k, 1), out_at(fg, k, 3), out_at(fh, k, 6));
  }

  // Density k's results in an output of per values per target.
  T* out_at(T* v, int k, int per) const { return v ? v + int64_t(k) * per * P.ntrg : nullptr; }
  // The output layout of nk densities (results one density after the other).
  NdLayout nd_out(int nk) const {
    NdLayout nl;
    nl.nk = nk;
    nl.pot_stride = P.ntrg;
    nl.grad_stride = 3 * P.ntrg;
    return nl;
  }

  void l2p_m2p_adaptive(const T* M, T* Lx, uint8_t* hl, T* fp, T* fg, T* fh) {
    const GpuData::Adaptive& a = G.ad;
    if (G.k.l2p == GPUFMM_STRATEGY_TPT) {
      with_hess(fh, [&](auto hess) {
        k_l2p_tpt_levels<T, decltype(hess)::value><<<blocks_for(G, P.ntrg, 128), 128, 0, s0>>>(
            P.ntrg, p, tr.cube, a.roff, L, dev_set(R), G.leaf_of, G.txyz, Lx, hl, fp, fg, fh, tab.walk);
      });
      check_launch("laplace L2P kernel");
    } else {
      const int64_t per_leaf = (P.ntrg + a.nleaves - 1) / std::max<int64_t>(a.nleaves, 1);
      for (int l = 0; l <= L; ++l) {
        const int64_t k0 = a.leaf_level[size_t(l)], nb = a.leaf_level[size_t(l) + 1] - k0;
        l2p_leaves(l, 0, nb, a.leaves + k0, per_leaf, Lx, hl, fp, fg, fh);
      }
    }
    m2p_adaptive(M, fp, fg, fh);
  }

  // Adaptive plans: M2P of the W rows, added to the far-field outputs.
  void m2p_adaptive(const T* M, T* fp, T* fg, T* fh) {
    const GpuData::Adaptive& a = G.ad;
    if (a.nleaves > 0 && a.nw > 0) {
      const size_t smem = size_t(p2) * sizeof(T);
      const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(a.nleaves, 1 << 30)));
      // A thread per target of the largest leaf (64 .. 256): each W box is
      // one pass over the leaf's targets, and a row is as long as its
      // boxes' walks one after another (64 threads took three passes per
      // box on leaves of 166 points: the L2P + M2P of 1e5 Plummer points
      // 0.52 ms against 0.10 on two clusters, which have few W boxes).
      const unsigned threads = static_cast<unsigned>(std::clamp<int64_t>((P.max_leaf_points + 31) / 32 * 32, 64, 256));
      with_hess(fh, [&](auto hess) {
        constexpr bool kHess = decltype(hess)::value;
        set_smem(k_m2p_bpb<T, kHess>, smem);
        k_m2p_bpb<T, kHess><<<blocks, threads, smem, s0>>>(a.nleaves, a.leaves, a.w_off, a.w, p, tr.cube, a.soff, L,
                                                      dev_set(S), dev_set(R), G.txyz, M, fp, fg, fh, tab.walk);
      });
      check_launch("laplace M2P kernel");
    }
  }

  // L2L into the receivers of level l (LevelDown3; from l = 2).
  void l2l(int l, T* Lx, uint8_t* hl) {
    const int64_t b0 = R.level_offset[l], nb = R.level_offset[l + 1] - b0;
    if (l >= 2 && nb > 0 && G.k.l2l == GPUFMM_STRATEGY_BPB) {
      translate_bpb<kBpbL2L>(b0, nb, nullptr, nullptr, R.box_key, nullptr, nullptr, R.parent, Lx, Lx, hl);
    } else if (l >= 2 && nb > 0) {
      const Geo g = geo(nb);
      set_smem(k_l2l<T>, g.smem);
      k_l2l<T><<<g.blocks, g.threads, g.smem, s0>>>(b0, nb, p, tab, dev_set(R), Lx, hl, scratch(),
                                                    g.use_smem);
      check_launch("laplace L2L kernel");
    }
  }

  // M2L into the receivers of level l: LevelDown1 (type 1, or the standard
  // M2L list), LevelDown2 (type 2). The grouped strategy did every level at
  // once (m2l_grouped, m2l_gemm_run).
  void m2l(int l, T* M, T* Lx, uint8_t* hl) {
    if (G.k.m2l == GPUFMM_STRATEGY_GRP || G.k.m2l == GPUFMM_STRATEGY_GEMM) {
    } else if (P.modified) {
      if (l >= 2) m2l_level(P.lists->list[lists::kType1], l, M, Lx, hl);
      m2l_level(P.lists->list[lists::kType2], l, M, Lx, hl);
    } else {
      m2l_level(P.lists->list[lists::kM2L], l, M, Lx, hl);
    }
  }

  // L2P: the far field at the targets.
  // nk densities as l2p_m2p_adaptive.
  void l2p(T* Lx, uint8_t* hl, T* fp, T* fg, T* fh, int nk) {
    const int64_t nt = P.ntrg, Ls = R.nboxes * p2;
    if (nk > 1 && G.k.l2p == GPUFMM_STRATEGY_TPT && !fh) {
      k_l2p_tpt_nd<T, kNdGroup><<<blocks_for(G, nt, 128), 128, 0, s0>>>(
          nt, p, T(tree::box_size(tr.cube, L)), dev_set(tr, R), G.leaf_of, G.txyz, Lx, Ls, hl, fp, fg, nd_out(nk),
          tab.walk);
      check_launch("laplace L2P kernel");
      return;
    }
    for (int k = 0; k < nk; ++k) l2p(Lx + k * Ls, hl, out_at(fp, k, 1), out_at(fg, k, 3), out_at(fh, k, 6));
  }

  void l2p(T* Lx, uint8_t* hl, T* fp, T* fg, T* fh) {
    const int64_t nt = P.ntrg;
    const int64_t b0 = R.level_offset[L], nb = R.level_offset[L + 1] - b0;
    if (G.k.l2p == GPUFMM_STRATEGY_TPT) {
      with_hess(fh, [&](auto hess) {
        k_l2p_tpt<T, decltype(hess)::value><<<blocks_for(G, nt, 128), 128, 0, s0>>>(
            nt, p, T(tree::box_size(tr.cube, L)), dev_set(tr, R), G.leaf_of, G.txyz, Lx, hl, fp, fg, fh, tab.walk);
      });
      check_launch("laplace L2P kernel");
    } else {
      l2p_leaves(L, b0, nb, nullptr, nb > 0 ? (nt + nb - 1) / nb : 1, Lx, hl, fp, fg, fh);
    }
  }

  // L2P at nb leaves of level l (b0 + t, or boxes[t]), per_leaf targets
  // on average: BpB (one block per leaf, 32 .. 128 threads by per_leaf) or
  // TpB (gpu_l2p = TPB).
  void l2p_leaves(int l, int64_t b0, int64_t nb, const int32_t* boxes, int64_t per_leaf, T* Lx, uint8_t* hl, T* fp,
                  T* fg, T* fh) {
    if (nb <= 0) return;
    const T h = T(tree::box_size(tr.cube, l));
    DevSet Rd = dev_set(R);
    Rd.leaf = tree::level_frame(tr.cube, l);
    if (G.k.l2p == GPUFMM_STRATEGY_TPB) {
      with_hess(fh, [&](auto hess) {
        k_l2p_tpb<T, decltype(hess)::value><<<blocks_for(G, nb, 64), 64, 0, s0>>>(b0, nb, boxes, p, h, Rd, G.txyz,
                                                                                 Lx, hl, fp, fg, fh, tab.walk);
      });
    } else {
      const int threads = per_leaf > 64 ? 128 : per_leaf > 32 ? 64 : 32;
      const size_t smem = size_t(p2) * sizeof(T);
      const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(nb, 1 << 30)));
      with_hess(fh, [&](auto hess) {
        constexpr bool kHess = decltype(hess)::value;
        set_smem(k_l2p_bpb<T, kHess>, smem);
        k_l2p_bpb<T, kHess><<<blocks, threads, smem, s0>>>(b0, nb, boxes, p, h, Rd, G.txyz, Lx, hl, fp, fg, fh,
                                                          tab.walk);
      });
    }
    check_launch("laplace L2P kernel");
  }

  // BpB over densities c .. c + 3 at once (k_p2p_bpb_nd; the last group
  // padded with zero densities).
  template <bool kC, bool kD, bool kG>
  void p2p_launch_nd(const T* q, const T* d, T* pot, T* grad, int nd, cudaStream_t s) {
    constexpr int ND = kNdGroup;
    const int64_t ns = P.nsrc;
    if (G.p2p_nunits <= 0) return;
    const BpbRows r = p2p_bpb_rows();
    for (int c = 0; c < nd; c += ND) {
      NdLayout nl = nd_out(std::min(ND, nd - c));
      nl.q_stride = ns;
      nl.d_stride = 3 * ns;
      nf::k_p2p_bpb_nd<kernels::Laplace<T>, T, kC, kD, kG, ND><<<r.blocks, nf::kP2PBlock, 0, s>>>(
          kernels::Laplace<T>{}, r.b0, G.p2p_nunits, G.p2p_units, r.recv, dev_set(tr, S), r.rows, G.sxyz, G.txyz,
          q ? q + c * ns : nullptr, d ? d + c * 3 * ns : nullptr, out_at(pot, c, 1), out_at(grad, c, 3), nl);
      check_launch("laplace P2P kernel");
    }
  }

  // P2P: the near field of nd densities (one after the other in q, d, np,
  // ng, nh) on stream s (zeros where there are no sources). Several
  // densities without the Hessian go through the BpB schedule four at a
  // time (one geometry read and one pair geometry for all four); the
  // Hessian, and TpT, take them one by one.
  void p2p(T* q, T* d, T* np, T* ng, T* nh, cudaStream_t s, int nd = 1) {
    const int64_t ns = P.nsrc, nt = P.ntrg;
    if (nd > 1 && ns > 0 && nt > 0 && !nh && (P.adaptive || G.k.p2p != GPUFMM_STRATEGY_TPT)) {
      kernels::with_sources<true>(q != nullptr, d != nullptr, ng != nullptr, [&](auto c_, auto d_, auto g_) {
        p2p_launch_nd<decltype(c_)::value, decltype(d_)::value, decltype(g_)::value>(q, d, np, ng, nd, s);
      });
      return;
    }
    if (nd > 1 && ns > 0) {
      for (int k = 0; k < nd; ++k)
        p2p(q ? q + k * ns : nullptr, d ? d + k * 3 * ns : nullptr, out_at(np, k, 1), out_at(ng, k, 3),
            out_at(nh, k, 6), s);
      return;
    }
    if (ns > 0 && nt > 0 && nh) {
      kernels::with_sources<true>(q != nullptr, d != nullptr, true, [&](auto c_, auto d_, auto) {
        p2p_launch<decltype(c_)::value, decltype(d_)::value, true, true>(q, d, np, ng, nh, s);
      });
    } else if (ns > 0 && nt > 0) {
      kernels::with_sources<true>(q != nullptr, d != nullptr, ng != nullptr, [&](auto c_, auto d_, auto g_) {
        p2p_launch<decltype(c_)::value, decltype(d_)::value, decltype(g_)::value, false>(q, d, np, ng, nullptr, s);
      });
    } else if (nt > 0) {
      if (np) GPUFMM_CUDA_CHECK(cudaMemsetAsync(np, 0, size_t(nd) * size_t(nt) * sizeof(T), s));
      if (ng) GPUFMM_CUDA_CHECK(cudaMemsetAsync(ng, 0, size_t(nd) * size_t(3 * nt) * sizeof(T), s));
      if (nh) GPUFMM_CUDA_CHECK(cudaMemsetAsync(nh, 0, size_t(nd) * size_t(6 * nt) * sizeof(T), s));
    }
  }

  // ---------------------------------------------------------- the driver's interface
  // (cuda/fmm/eval.cuh)

  int64_t mult_size() const { return S.nboxes * p2; }
  int64_t local_size() const { return R.nboxes * p2; }
  bool overlap() const { return G.k.overlap; }
  bool graph() const { return G.k.graph; }
  void prepare() { m2l_plan_data(G, P, s0); }  // a strategy set after the plan (laplace_gpu_kernels)

  // P2M, at(1), M2M; an adaptive plan's interleaved by level (upward_adaptive).
  template <class At>
  void upward(T* q, T* d, T* M, int nk, At at) {
    if (P.adaptive) {
      at(1);
      upward_adaptive(q, d, M, nk);
    } else {
      p2m(q, d, M, nk);
      at(1);
      for (int k = 0; k < nk; ++k) m2m(M + k * mult_size());
    }
  }

  // An adaptive plan's P2L; then per level L2L, M2L (GRP, GEMM: every
  // level's M2L at once, then L2L level by level).
  void downward(T* q, T* d, T* M, T* Lx, uint8_t* hl) {
    if (P.adaptive) p2l(q, d, Lx, hl);
    if (G.k.m2l == GPUFMM_STRATEGY_GRP) m2l_grouped(M, Lx, hl);
    if (G.k.m2l == GPUFMM_STRATEGY_GEMM) m2l_gemm_run<T>(G, p, M, Lx, hl, s0);
    for (int l = P.modified ? 1 : 2; l <= L; ++l) {
      l2l(l, Lx, hl);
      m2l(l, M, Lx, hl);
    }
  }

  void to_targets(const T* M, T* Lx, uint8_t* hl, T* fp, T* fg, T* fh, int nk) {
    if (P.adaptive)
      l2p_m2p_adaptive(M, Lx, hl, fp, fg, fh, nk);
    else
      l2p(Lx, hl, fp, fg, fh, nk);
  }

  void near(T* q, T* d, T* np, T* ng, T* nh, cudaStream_t s, int nd) { p2p(q, d, np, ng, nh, s, nd); }
};

}  // namespace

void laplace_evaluate(LaplacePlan& P, const LaplaceEvalArgs& a) {
  GpuData& G = gpu_of(P);
  DeviceGuard guard(P.ctx);
  if (P.single()) {
    LaplaceGpuExpansion<float> e(P, G, G.tab_f);
    evaluate(e, a);
  } else {
    LaplaceGpuExpansion<double> e(P, G, G.tab_d);
    evaluate(e, a);
  }
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
