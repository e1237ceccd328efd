// The OpenMP evaluate of the treecode (plan.hpp): modified charges of the
// source clusters (work units of at most Plan::kChunk points, partial sums
// reduced per cluster in a fixed order), the near field over the list rows
// (nearfield::sum_sources, the one CPU source loop, with the row's points
// gathered relative to the row's centre), the downward interpolation of
// the target clusters' proxy potentials, and the outputs in the user's
// order. The math is treecode/geometry.hpp and the kernel structs.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "core/cpu_isa.hpp"
#include "core/error.hpp"
#include "nearfield/p2p.hpp"
#include "treecode/plan.hpp"

namespace gpufmm {
namespace treecode {
namespace detail {

namespace {

double now() { return omp_get_wtime(); }

// The near field of rows [r0, r1): each row's targets against the gathered
// points of its columns (eq. 9 and eq. 11 in one form), with gradients when
// kG. Compiled for the running CPU (core/cpu_isa.hpp).
template <bool kG, class K, class T>
GPUFMM_CPU_CLONES GPUFMM_CPU_FLATTEN void near_rows(const Plan& P, const K& kern, const T* q, int64_t r0, int64_t r1,
                                                    T* pot, T* grad) {
#pragma omp parallel
  {
    nearfield::Sources<double, T> g(nearfield::padded(P.max_row_sources));
#pragma omp for schedule(dynamic, 1)
    for (int64_t r = r0; r < r1; ++r) {
      const double* c = &P.tset_center[3 * r];
      int64_t m = 0;
      for (int64_t e = P.list_offsets[r]; e < P.list_offsets[r + 1]; ++e) {
        const int32_t col = P.list_index[e];
        for (int64_t j = P.sset_begin[col]; j < P.sset_end[col]; ++j, ++m) {
          g.x[m] = P.sxyz[3 * j] - c[0];
          g.y[m] = P.sxyz[3 * j + 1] - c[1];
          g.z[m] = P.sxyz[3 * j + 2] - c[2];
          g.q[m] = q[j];
        }
      }
      for (; m % nearfield::kLanes != 0; ++m) {
        g.x[m] = g.y[m] = g.z[m] = 0.0;
        g.q[m] = T(0);
      }
      for (int64_t i = P.tset_begin[r]; i < P.tset_end[r]; ++i) {
        T v, gx, gy, gz;
        nearfield::sum_sources<true, false, kG>(kern, P.txyz[3 * i] - c[0], P.txyz[3 * i + 1] - c[1],
                                                P.txyz[3 * i + 2] - c[2], 0, m, g, v, gx, gy, gz);
        pot[i] = v;
        if (kG) {
          grad[3 * i] = gx;
          grad[3 * i + 1] = gy;
          grad[3 * i + 2] = gz;
        }
      }
    }
  }
}

template <class T, class S>
void run(Plan& P, const S* charges, S* pot_out, S* grad_out) {
  const double t0 = now();
  const int64_t ns = P.nsrc, nt = P.ntrg;
  const bool want_grad = grad_out != nullptr;
  // An MPI plan's ranks all take part in the exchange, with or without points.
  auto zeros = [&] {
    if (pot_out) std::fill(pot_out, pot_out + nt, S(0));
    if (grad_out) std::fill(grad_out, grad_out + 3 * nt, S(0));
  };
  if (!P.exchange && (nt == 0 || ns == 0)) return zeros();
  const int n = P.par.degree, np1 = P.np1, np3 = P.np3;
  const int64_t nsp = int64_t(P.sprox_box.size()), ntp = int64_t(P.tprox_box.size());
  std::vector<double> u(static_cast<size_t>(np1));
  approx::cheb_units(n, u.data());

  // Charges in sorted order, then the modified charges (eqs. 12, 14-15).
  double t = now();
  std::vector<T> q(size_t(ns + nsp * np3));
  std::vector<double> qd(static_cast<size_t>(ns));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < ns; ++i) {
    qd[i] = double(charges[P.src_perm[i]]);
    q[i] = T(qd[i]);
  }
  const int64_t nchunk = int64_t(P.chunk_cluster.size());
  std::vector<double> part(size_t(nchunk * np3), 0.0);
#pragma omp parallel
  {
    std::vector<double> L(static_cast<size_t>(3 * np1));
#pragma omp for schedule(dynamic, 1)
    for (int64_t c = 0; c < nchunk; ++c) {
      const Box& bx = P.sbox.box[P.sprox_box[P.chunk_cluster[c]]];
      double* out = part.data() + c * np3;
      for (int32_t i = P.chunk_begin[c]; i < P.chunk_end[c]; ++i) {
        lagrange3(n, u.data(), bx, &P.sxyz[3 * int64_t(i)], L.data(), nullptr);
        add_modified_charges(n, L.data(), qd[i], out);
      }
    }
  }
  {
    // Chunks are cluster-major: cluster p's chunks are consecutive.
    std::vector<int64_t> first(size_t(nsp + 1), nchunk);
    for (int64_t c = nchunk - 1; c >= 0; --c) first[P.chunk_cluster[c]] = c;
    for (int64_t p = nsp - 1; p >= 0; --p) first[p] = std::min(first[p], first[p + 1]);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < nsp; ++p)
      for (int k = 0; k < np3; ++k) {
        double s = 0;
        for (int64_t c = first[p]; c < first[p + 1]; ++c) s += part[c * np3 + k];
        q[ns + p * np3 + k] = T(s);
      }
  }
  P.times.upward = now() - t;
  if (P.exchange) {  // the charges of other ranks' sets (plan.hpp)
    std::vector<double> local(q.begin(), q.end()), remote(static_cast<size_t>(P.nq_remote));
    P.exchange(local.data(), remote.data());
    q.resize(size_t(P.nq_local + P.nq_remote));
    std::transform(remote.begin(), remote.end(), q.begin() + P.nq_local, [](double v) { return T(v); });
    if (nt == 0) return;
    if (P.nq_local + P.nq_remote == 0) return zeros();
  }

  // The near field over the rows.
  t = now();
  std::vector<T> pot(size_t(nt + ntp * np3), T(0));
  std::vector<T> grad(want_grad ? size_t(3 * nt) : 0, T(0));
  kernels::with_kernel<T>(P.options.kernel, [&](const auto& kern) {
    if (want_grad) near_rows<true>(P, kern, q.data(), 0, P.nbatch, pot.data(), grad.data());  // the batches
    near_rows<false>(P, kern, q.data(), want_grad ? P.nbatch : 0, P.nsets_t, pot.data(), grad.data());  // the rest
  });
  P.times.nearfield = now() - t;

  // Downward: the proxy potentials of the target clusters to their targets.
  t = now();
  std::vector<double> dv(ntp > 0 ? size_t(nt) : 0, 0.0), dg(ntp > 0 && want_grad ? size_t(3 * nt) : 0, 0.0);
  if (ntp > 0) {
    std::vector<double> phi(static_cast<size_t>(ntp * np3));
    for (int64_t k = 0; k < ntp * np3; ++k) phi[k] = double(pot[nt + k]);
#pragma omp parallel
    {
      std::vector<double> L(static_cast<size_t>(3 * np1)), dL(size_t(3 * np1));
#pragma omp for schedule(static)
      for (int64_t i = 0; i < nt; ++i) {
        double v = 0, gv[3] = {0, 0, 0};
        for (int32_t A = P.trg_leaf[i]; A >= 0; A = P.tbox.parent[A]) {
          const int32_t p = P.tprox[A];
          if (p < 0) continue;
          lagrange3(n, u.data(), P.tbox.box[A], &P.txyz[3 * i], L.data(), want_grad ? dL.data() : nullptr);
          interpolate(n, L.data(), dL.data(), phi.data() + int64_t(p) * np3, v, want_grad ? gv : nullptr);
        }
        dv[i] = v;
        if (want_grad)
          for (int d = 0; d < 3; ++d) dg[3 * i + d] = gv[d];
      }
    }
  }
  P.times.downward = now() - t;

  // Outputs in the user's order; a user kernel's first into scratch arrays,
  // copied only when every value is finite.
  const bool user = P.options.kernel.type == kernels::KernelType::kUser;
  std::vector<S> po(user && pot_out ? size_t(nt) : 0), go(user && want_grad ? size_t(3 * nt) : 0);
  S* out_pot = user && pot_out ? po.data() : pot_out;
  S* out_grad = user && want_grad ? go.data() : grad_out;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nt; ++i) {
    const int64_t j = P.trg_perm[i];
    if (out_pot) out_pot[j] = S(double(pot[i]) + (ntp > 0 ? dv[i] : 0.0));
    if (want_grad)
      for (int d = 0; d < 3; ++d)
        out_grad[3 * j + d] = S(double(grad[3 * i + d]) + (ntp > 0 ? dg[3 * i + d] : 0.0));
  }
  if (user) {
    kernels::check_user_results(out_pot, out_grad, nt);
    if (pot_out) std::copy(po.begin(), po.end(), pot_out);
    if (want_grad) std::copy(go.begin(), go.end(), grad_out);
  }
  P.times.total = now() - t0;
}

}  // namespace

void evaluate_cpu(Plan& P, const EvalArgs& a) {
  if (P.options.precision == GPUFMM_FLOAT32) {
    if (a.on_context)
      run<float>(P, static_cast<const float*>(a.charges), static_cast<float*>(a.pot), static_cast<float*>(a.grad));
    else
      run<float>(P, static_cast<const double*>(a.charges), static_cast<double*>(a.pot),
                 static_cast<double*>(a.grad));
  } else {
    run<double>(P, static_cast<const double*>(a.charges), static_cast<double*>(a.pot),
                static_cast<double*>(a.grad));
  }
}

}  // namespace detail
}  // namespace treecode
}  // namespace gpufmm
