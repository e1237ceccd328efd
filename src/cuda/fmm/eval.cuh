// The CUDA driver of every FMM (issue 51): one evaluate over an expansion
// E, every stage on the GPU, written once (streams, fork and join, staging,
// bad-value flags, groups of densities, the CUDA graph, stage times); the
// expansion launches its own kernels for the passes.
//
//   stream s0 (the context's)               stream s1 (near field)
//   [H2D inputs]  permute in (+ finite check)
//        |---------- event ------------------------> E::near (P2P)
//   E::upward (P2M, M2M)                                   |
//   (or the fork here: DriverData::near_after_up)          |
//   E::downward (L2L, M2L, P2L) per density                |
//   E::to_targets (L2P, M2P)  <-------- event -------------'
//   result check, permute out (far + near) [D2H outputs]
//
// The expansion E (GPU side), bound to one plan and precision:
//   using Real;       the plan's precision (T below)
//   PlanCore& P;      its plan (a derived plan binds here)
//   G                 its device data, derived from DriverData<K>; K (G.k):
//                     its kernel strategies and every parameter that changes
//                     the work it enqueues, in the graph's key, so that a
//                     change is captured anew rather than replayed
//   cudaStream_t s0;  the context's stream
//   int64_t mult_size() const, local_size() const;  coefficients of all
//                     source boxes / receiver boxes for one density
//   bool overlap() const;  the near field on s1, alongside the far field
//   bool graph() const;    the device work replayed as a CUDA graph
//   void prepare();        plan data of strategies set after the plan
//   template <class At> void upward(T* q, T* d, T* M, int nk, At at);
//                     P2M and M2M of nk densities (q + k nsrc, d + 3 k nsrc
//                     into M + k mult_size()); at(1) after the P2M
//   void downward(T* q, T* d, T* M, T* L, uint8_t* hl);  one density, L
//                     zeroed and hl cleared by the driver: P2L, M2L, L2L
//   void to_targets(const T* M, T* L, uint8_t* hl, T* fp, T* fg, T* fh, int nk);
//                     L2P (and M2P) of nk densities into the far results
//   void near(T* q, T* d, T* np, T* ng, T* nh, cudaStream_t s, int nd);
//                     P2P of nd densities on stream s (zeros where there
//                     are no sources)
// Everything is enqueued on streams without host synchronisation or
// allocation (a graph capture), except prepare().
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cuda/common/staging.hpp"
#include "cuda/fmm/driver_data.cuh"
#include "cuda/fmm/driver_kernels.cuh"
#include "fmm/plan_core.hpp"
#include "plan/checks.hpp"

namespace gpufmm {
namespace fmm {
namespace cuda {

inline double elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return ms * 1e-3;
}

template <class E, class K>
struct Eval {
  using T = typename E::Real;
  E& ex;
  PlanCore& P;
  DriverData<K>& G;
  const tree::PointSet& S;
  const tree::PointSet& R;
  cudaStream_t s0;
  int L;

  explicit Eval(E& e)
      : ex(e), P(e.P), G(e.G), S(e.P.tree->src), R(e.P.tree->receivers()), s0(e.s0), L(e.P.l_max) {}

  // Device pointers of one evaluate: the inputs in the user's order (device
  // arrays, or the staging copies of host inputs), the workspace, the outputs
  // in the user's order (device arrays or staging buffers).
  // nd densities interleaved in the user's arrays (EvalArgs); in the
  // workspace (q .. fh) one after the other.
  template <class SS>
  struct Ptrs {
    const SS *uq = nullptr, *ud = nullptr;
    SS *up = nullptr, *ug = nullptr, *uh = nullptr;
    int nd = 1;
    T *q = nullptr, *d = nullptr, *np = nullptr, *ng = nullptr, *fp = nullptr, *fg = nullptr;
    T *nh = nullptr, *fh = nullptr;
    T *M = nullptr, *Lx = nullptr;
    uint8_t* hl = nullptr;
  };

  // A stage-timing event. In a graph capture it becomes an event-record node
  // (cudaEventRecordExternal), so the stage times of a replay are measured too.
  void record(cudaEvent_t e, cudaStream_t s, bool capturing) {
    if (capturing)
      GPUFMM_CUDA_CHECK(cudaEventRecordWithFlags(e, s, cudaEventRecordExternal));
    else
      GPUFMM_CUDA_CHECK(cudaEventRecord(e, s));
  }
  void mark(int i, cudaStream_t s, bool capturing) { record(G.ev[i], s, capturing); }

  // Event j (0: start, 1: after P2M, 2: M2M, 3: M2L/L2L, 4: L2P) of the far
  // field of density group g: G.ev[1 + j] for the first, G.ev_far for the
  // others.
  cudaEvent_t far_event(int g, int j) {
    return g == 0 ? G.ev[1 + j] : G.ev_far[size_t(5 * (g - 1) + j)];
  }

  // The device work of an evaluate, from the input check to the permutation
  // of the results into the user's order: stream operations only (no host
  // synchronisation, no allocation), so that it can be captured into a graph.
  // All x.nd densities: the near field of all at once (p2p), the far field
  // one density after the other.
  template <class SS>
  void enqueue(const Ptrs<SS>& x, bool capturing) {
    const int64_t ns = P.nsrc, nt = P.ntrg;
    const int nd = x.nd;
    T *q = x.q, *d = x.d, *np = x.np, *ng = x.ng, *fp = x.fp, *fg = x.fg, *nh = x.nh, *fh = x.fh;
    mark(0, s0, capturing);
    GPUFMM_CUDA_CHECK(cudaMemsetAsync(G.bad, 0xff, 3 * sizeof(unsigned long long), s0));
    if (ns > 0)
      for (int kd = 0; kd < nd; ++kd) {
        k_permute_in<T, SS><<<blocks_for(G, ns, 256), 256, 0, s0>>>(ns, S.perm, x.uq, x.ud, q ? q + kd * ns : nullptr,
                                                                     d ? d + kd * 3 * ns : nullptr, nd, kd, G.bad);
        check_launch("FMM permute-in kernel");
      }
    mark(1, s0, capturing);

    // Near field: on s1 concurrently with the far field (overlap), else on s0
    // after it (so that the stage events time each stage alone).
    const bool overlap = ex.overlap();
    cudaStream_t sn = overlap ? G.s1 : s0;
    auto near = [&]() {
      if (overlap) {
        GPUFMM_CUDA_CHECK(cudaEventRecord(G.fork, s0));
        GPUFMM_CUDA_CHECK(cudaStreamWaitEvent(G.s1, G.fork, 0));
      }
      mark(6, sn, capturing);
      ex.near(q, d, np, ng, nh, sn, nd);
      mark(7, sn, capturing);
      if (overlap) GPUFMM_CUDA_CHECK(cudaEventRecord(G.join, sn));
    };
    // The fork: at the start, or after the first density group's upward
    // pass (G.near_after_up), so that the near field's blocks, once on
    // every SM, do not hold the P2M back until they end.
    const bool after_up = overlap && G.near_after_up && x.M;
    if (overlap && !after_up) near();

    // Far field on s0, kNdGroup densities at a time (their expansions one
    // after the other in M and Lx, reused by the next group).
    for (int g = 0; g * kNdGroup < nd; ++g) {
      const int k0 = g * kNdGroup, nk = std::min(kNdGroup, nd - k0);
      if (g > 0) record(far_event(g, 0), s0, capturing);
      auto at = [&](int j) { record(far_event(g, j), s0, capturing); };
      if (x.M) {
        T* M = x.M;
        T* Lx = x.Lx;
        uint8_t* hl = x.hl;
        const int64_t Ms = ex.mult_size(), Ls = ex.local_size();
        T* qg = q ? q + k0 * ns : nullptr;
        T* dg = d ? d + k0 * 3 * ns : nullptr;
        ex.upward(qg, dg, M, nk, at);  // P2M, at(1), M2M
        at(2);
        if (after_up && g == 0) near();
        // Downward, density by density: L = 0, has_local = 0, then the
        // expansion's downward pass. has_local follows from the lists
        // alone: the same for every density.
        for (int k = 0; k < nk; ++k) {
          T* Mk = M + k * Ms;
          T* Lk = Lx + k * Ls;
          GPUFMM_CUDA_CHECK(cudaMemsetAsync(Lk, 0, size_t(Ls) * sizeof(T), s0));
          GPUFMM_CUDA_CHECK(cudaMemsetAsync(hl, 0, size_t(R.nboxes), s0));
          ex.downward(qg ? qg + k * ns : nullptr, dg ? dg + k * 3 * ns : nullptr, Mk, Lk, hl);
        }
        // The locals past nk of a smaller last group: zeros for the L2P
        // that walks kNdGroup expansions (their results are not written).
        if (nd > 1)
          for (int k = nk; k < kNdGroup; ++k)
            GPUFMM_CUDA_CHECK(cudaMemsetAsync(Lx + k * Ls, 0, size_t(Ls) * sizeof(T), s0));
        at(3);
        T* fpg = fp ? fp + k0 * nt : nullptr;
        T* fgg = fg ? fg + k0 * 3 * nt : nullptr;
        T* fhg = fh ? fh + k0 * 6 * nt : nullptr;
        ex.to_targets(M, Lx, hl, fpg, fgg, fhg, nk);
      } else {
        for (int j = 1; j <= 3; ++j) at(j);
      }
      at(4);
    }
    if (overlap)
      GPUFMM_CUDA_CHECK(cudaStreamWaitEvent(s0, G.join, 0));
    else
      near();

    // Outputs (user order), unless a result is not finite.
    if (nt > 0) {
      auto at = [](T* v, int64_t off) { return v ? v + off : nullptr; };
      for (int kd = 0; kd < nd; ++kd) {
        k_check_results<T><<<blocks_for(G, nt, 256), 256, 0, s0>>>(nt, at(np, kd * nt), at(fp, kd * nt),
                                                                   at(ng, kd * 3 * nt), at(fg, kd * 3 * nt),
                                                                   at(nh, kd * 6 * nt), at(fh, kd * 6 * nt), G.bad);
        check_launch("FMM result check kernel");
      }
      for (int kd = 0; kd < nd; ++kd) {
        k_permute_out<T, SS><<<blocks_for(G, nt, 256), 256, 0, s0>>>(
            nt, R.perm, at(np, kd * nt), at(fp, kd * nt), at(ng, kd * 3 * nt), at(fg, kd * 3 * nt),
            at(nh, kd * 6 * nt), at(fh, kd * 6 * nt), x.up, x.ug, x.uh, nd, kd, G.bad);
        check_launch("FMM permute-out kernel");
      }
    }
  }

  template <class SS>
  void run(const EvalArgs& a) {
    const auto w0 = std::chrono::steady_clock::now();
    const bool has_q = a.charges != nullptr, has_d = a.dipoles != nullptr;
    const bool want_pot = a.pot != nullptr, want_hess = a.hess != nullptr;
    const bool want_grad = a.grad != nullptr || want_hess;  // the Hessian's walk and loop give the gradient too
    const int64_t ns = P.nsrc, nt = P.ntrg;
    const size_t nd = size_t(a.nd);
    clear_last_error();
    ex.prepare();  // the plan data of a strategy set after the plan

    // Inputs (user order) on the device; workspace and output staging (all
    // allocations before the device work, so that it can be a graph).
    Ptrs<SS> x;
    x.nd = a.nd;
    x.uq = has_q ? static_cast<const SS*>(a.charges) : nullptr;
    x.ud = has_d ? static_cast<const SS*>(a.dipoles) : nullptr;
    if (!a.on_context) {
      if (has_q && ns > 0) {
        void* st = G.grow(G.in_q, nd * size_t(ns) * sizeof(SS), "FMM input staging");
        gpufmm::cuda::staged_upload(P.ctx, st, x.uq, nd * size_t(ns) * sizeof(SS), plan::parallel_copy);
        x.uq = static_cast<const SS*>(st);
      }
      if (has_d && ns > 0) {
        void* st = G.grow(G.in_d, nd * size_t(3 * ns) * sizeof(SS), "FMM input staging");
        gpufmm::cuda::staged_upload(P.ctx, st, x.ud, nd * size_t(3 * ns) * sizeof(SS), plan::parallel_copy);
        x.ud = static_cast<const SS*>(st);
      }
    }
    // nd densities one after the other.
    auto ws = [&](typename DriverData<K>::Staging& st, int64_t per_density, const char* what) {
      return static_cast<T*>(G.grow(st, nd * size_t(per_density) * sizeof(T), what));
    };
    x.q = has_q ? ws(G.q, ns, "FMM charges") : nullptr;
    x.d = has_d ? ws(G.d, 3 * ns, "FMM dipoles") : nullptr;
    x.np = want_pot ? ws(G.near_pot, nt, "FMM potentials") : nullptr;
    x.ng = want_grad ? ws(G.near_grad, 3 * nt, "FMM gradients") : nullptr;
    x.nh = want_hess ? ws(G.near_hess, 6 * nt, "FMM Hessians") : nullptr;
    const bool far = L >= 2 && ns > 0 && nt > 0;
    x.fp = far && want_pot ? ws(G.far_pot, nt, "FMM potentials") : nullptr;
    x.fg = far && want_grad ? ws(G.far_grad, 3 * nt, "FMM gradients") : nullptr;
    x.fh = far && want_hess ? ws(G.far_hess, 6 * nt, "FMM Hessians") : nullptr;
    while (G.ev_far.size() < 5 * ((nd - 1) / kNdGroup)) {
      cudaEvent_t e = nullptr;
      GPUFMM_CUDA_CHECK(cudaEventCreate(&e));
      G.ev_far.push_back(e);
    }
    if (far) {
      const size_t ng = size_t(a.nd > 1 ? kNdGroup : 1);  // the L2P of a last, smaller group reads kNdGroup
      x.M = static_cast<T*>(G.grow(G.M, ng * size_t(ex.mult_size()) * sizeof(T), "FMM multipoles"));
      x.Lx = static_cast<T*>(G.grow(G.L, ng * size_t(ex.local_size()) * sizeof(T), "FMM locals"));
      if (G.has_local == nullptr)
        G.has_local = static_cast<uint8_t*>(G.alloc(size_t(R.nboxes), "FMM has_local"));
      x.hl = G.has_local;
    }
    x.up = static_cast<SS*>(a.pot);
    x.ug = static_cast<SS*>(a.grad);
    x.uh = static_cast<SS*>(a.hess);
    // Host outputs through staging (device outputs are written after every
    // density's results were checked).
    if (!a.on_context) {
      if (x.up) x.up = static_cast<SS*>(G.grow(G.out_pot, nd * size_t(nt) * sizeof(SS), "FMM output staging"));
      if (x.ug) x.ug = static_cast<SS*>(G.grow(G.out_grad, nd * size_t(3 * nt) * sizeof(SS), "FMM output staging"));
      if (x.uh) x.uh = static_cast<SS*>(G.grow(G.out_hess, nd * size_t(6 * nt) * sizeof(SS), "FMM output staging"));
    }

    StageTimes& tm = P.last;
    tm = StageTimes();
    GraphKey<K> key;
    key.q = x.uq;
    key.d = x.ud;
    key.pot = x.up;
    key.grad = x.ug;
    key.hess = x.uh;
    key.nd = a.nd;
    key.dtype = int(a.dtype);
    key.k = G.k;
    const void* wsp[10] = {x.q, x.d, x.np, x.ng, x.nh, x.fp, x.fg, x.fh, x.M, x.Lx};
    std::copy(wsp, wsp + 10, key.ws);
    G.graph.run(s0, key, ex.graph(), [&](bool capturing) { enqueue(x, capturing); });
    fail_if_bad(a, x);

    if (!a.on_context && nt > 0) {  // staged through pinned chunks (cuda/common/staging.cu)
      auto down = [&](void* user, const SS* st, size_t per) {
        if (user) gpufmm::cuda::staged_download(P.ctx, user, st, nd * per * size_t(nt) * sizeof(SS), plan::parallel_copy);
      };
      down(a.pot, x.up, 1);
      down(a.grad, x.ug, 3);
      down(a.hess, x.uh, 6);
    }
    add_stage_times(tm, a.nd);
    tm.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  }

  // After the device work: the first bad input or result (G.bad) fails,
  // named with its density (nothing was written).
  template <class SS>
  void fail_if_bad(const EvalArgs& a, const Ptrs<SS>& x) {
    unsigned long long bad[3] = {kNoBad, kNoBad, kNoBad};
    GPUFMM_CUDA_CHECK(cudaMemcpyAsync(bad, G.bad, sizeof bad, cudaMemcpyDeviceToHost, s0));
    GPUFMM_CUDA_CHECK(cudaStreamSynchronize(s0));
    const int nd = a.nd;
    auto of = [&](int kd) { return nd > 1 ? " of density " + std::to_string(kd) + " (0-based)" : std::string(); };
    if (bad[0] != kNoBad || bad[1] != kNoBad) {
      const bool is_q = bad[0] != kNoBad;
      const int64_t i = static_cast<int64_t>(is_q ? bad[0] : bad[1]);
      const int per = is_q ? 1 : 3;
      std::vector<SS> v(size_t(per * nd));  // source i's values, density fastest
      const SS* at = static_cast<const SS*>(is_q ? a.charges : a.dipoles) + int64_t(nd) * per * i;
      if (a.on_context)
        backend_download(P.ctx, v.data(), at, v.size() * sizeof(SS), false);
      else
        std::copy(at, at + v.size(), v.begin());
      int kd = 0;  // the first density with a bad value at source i
      while (kd + 1 < nd && std::isfinite(double(v[size_t(kd)])) &&
             (per == 1 || (std::isfinite(double(v[size_t(kd + nd)])) && std::isfinite(double(v[size_t(kd + 2 * nd)])))))
        ++kd;
      if (is_q)
        fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'charges': charge ", i, " (0-based)", of(kd), " is NaN or Inf (",
             double(v[size_t(kd)]), ")");
      fail(GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'dipoles': dipole ", i, " (0-based)", of(kd),
           " has a NaN or Inf component (", double(v[size_t(kd)]), ", ", double(v[size_t(kd + nd)]), ", ",
           double(v[size_t(kd + 2 * nd)]), ")");
    }
    if (bad[2] != kNoBad) {  // a result overflowed T: report it (nothing was written)
      const int64_t i = static_cast<int64_t>(bad[2]), nt = P.ntrg;
      int32_t user = 0;
      backend_download(P.ctx, &user, R.perm + i, sizeof user, false);
      for (int kd = 0; kd < nd; ++kd) {  // the first density whose sum is not finite there
        T v[8] = {};  // near pot, far pot, near grad xyz, far grad xyz
        if (x.np) backend_download(P.ctx, v, x.np + kd * nt + i, sizeof(T), false);
        if (x.fp) backend_download(P.ctx, v + 1, x.fp + kd * nt + i, sizeof(T), false);
        if (x.ng) backend_download(P.ctx, v + 2, x.ng + kd * 3 * nt + 3 * i, 3 * sizeof(T), false);
        if (x.fg) backend_download(P.ctx, v + 5, x.fg + kd * 3 * nt + 3 * i, 3 * sizeof(T), false);
        const double g[3] = {double(v[2] + v[5]), double(v[3] + v[6]), double(v[4] + v[7])};
        const double pot = double(v[0] + v[1]);
        const bool finite = std::isfinite(pot) && std::isfinite(g[0]) && std::isfinite(g[1]) && std::isfinite(g[2]);
        if (!finite || kd + 1 == nd) fail_nonfinite_result(sizeof(T) == sizeof(float), user, pot, x.ng ? g : nullptr);
      }
    }
  }

  // The stage times of the last enqueue (its events), the far field's
  // summed over the groups of densities.
  void add_stage_times(StageTimes& tm, int nd) {
    for (int g = 0; g * kNdGroup < nd; ++g) {
      tm.p2m += elapsed(far_event(g, 0), far_event(g, 1));
      tm.upward += elapsed(far_event(g, 1), far_event(g, 2));
      tm.downward += elapsed(far_event(g, 2), far_event(g, 3));
      tm.l2p += elapsed(far_event(g, 3), far_event(g, 4));
    }
    tm.p2p += elapsed(G.ev[6], G.ev[7]);
  }
};


// One evaluate of the plan of expansion e (inputs validated; P.last filled,
// outputs written only on success).
template <class E>
void evaluate(E& e, const EvalArgs& a) {
  Eval<E, decltype(e.G.k)> ev(e);
  if (a.dtype == GPUFMM_FLOAT32)
    ev.template run<float>(a);
  else
    ev.template run<double>(a);
}

}  // namespace cuda
}  // namespace fmm
}  // namespace gpufmm
