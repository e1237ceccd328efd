// The FMM-FFT on the CPU backend (plan.hpp): the batched GEMMs through BLAS
// (array/: cpu::gemm_strided_batched), M2L and S2T+POST as OpenMP loops over
// blocks of 8 FMMs (16 rows: the unit-stride dimension, vectorized), the 2D
// FFT with FFTW (threads through libfftw3_omp). The operator entries are
// operators.hpp's, as on the GPU.
#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "array/array.hpp"
#include "core/cpu_isa.hpp"
#include "core/error.hpp"
#include "fmmfft/operators.hpp"
#include "fmmfft/plan.hpp"
#include "fmmfft/ring.hpp"

namespace gpufmm {
namespace fmmfft {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// FFTW's planner is not thread-safe: one lock for all plans of the library
// (and fftw_make_planner_thread_safe for other users in the process).
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

template <class R>
struct Fftw;
template <>
struct Fftw<double> {
  using plan = fftw_plan;
  using cpx = fftw_complex;
  static plan many(int n, int howmany, cpx* in, int istride, int idist, cpx* out, int ostride, int odist, int sign,
                   unsigned flags) {
    fftw_plan_with_nthreads(omp_get_max_threads());
    return fftw_plan_many_dft(1, &n, howmany, in, nullptr, istride, idist, out, nullptr, ostride, odist, sign, flags);
  }
  static void exec(plan p, void* in, void* out) { fftw_execute_dft(p, (cpx*)in, (cpx*)out); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
};
template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  using cpx = fftwf_complex;
  static plan many(int n, int howmany, cpx* in, int istride, int idist, cpx* out, int ostride, int odist, int sign,
                   unsigned flags) {
    fftwf_plan_with_nthreads(omp_get_max_threads());
    return fftwf_plan_many_dft(1, &n, howmany, in, nullptr, istride, idist, out, nullptr, ostride, odist, sign,
                               flags);
  }
  static void exec(plan p, void* in, void* out) { fftwf_execute_dft(p, (cpx*)in, (cpx*)out); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
};

constexpr int kW = 16;  // rows per block: 8 FMMs, real and imaginary parts

}  // namespace

struct CpuPlan {
  Context* ctx = nullptr;
  bool single = false;
  void* work = nullptr;       // mult | loc | T (T: the Distributed's fft_buffer over several ranks)
  int64_t nexp = 0;           // reals of mult (and of loc)
  void* halo = nullptr;       // over several ranks: the halos and base level (ring.hpp)
  void* fft_p[2] = {};        // along p, in place on T: [0] forward, [1] inverse
  void* fft_m[2] = {};        // along m, T -> out (unaligned out allowed)
  std::vector<float> s2m_f, m2m_f;  // the operators rounded once (float plans)
  ~CpuPlan() {
    for (int d = 0; d < 2; ++d) {
      std::lock_guard<std::mutex> lock(planner_mutex());
      if (single) {
        if (fft_p[d]) fftwf_destroy_plan(fftwf_plan(fft_p[d]));
        if (fft_m[d]) fftwf_destroy_plan(fftwf_plan(fft_m[d]));
      } else {
        if (fft_p[d]) fftw_destroy_plan(fftw_plan(fft_p[d]));
        if (fft_m[d]) fftw_destroy_plan(fftw_plan(fft_m[d]));
      }
    }
    if (work) backend_free(*ctx, work);
    if (halo) backend_free(*ctx, halo);
  }
};

void CpuPlanDeleter::operator()(CpuPlan* g) const { delete g; }

namespace {

template <class R>
struct Stages {
  Plan& p;
  const R* x;   // input (interleaved complex; this rank's N / G)
  R* mult;
  R* loc;
  R* T;
  const R* s2m;
  const R* m2m;
  R* halo = nullptr;  // CpuPlan::halo (several ranks)
  gpufmm_dtype_t dt = sizeof(R) == 4 ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;

  int64_t R_() const { return p.rows(); }
  R* mult_at(int l) const { return mult + p.level_offset[l - p.par.B]; }
  R* loc_at(int l) const { return loc + p.level_offset[l - p.par.B]; }
  R* halo_part(int k) const { return const_cast<R*>(fmmfft::halo_part(p, halo, k)); }
  R* base_all() const { return const_cast<R*>(fmmfft::base_all(p, halo)); }
  Ring<R> input_ring() const { return fmmfft::input_ring(p, x, halo); }
  Ring<R> level_ring(int l) const { return fmmfft::level_ring(p, l, mult_at(l), halo); }

  void gemm(gpufmm_op_t tb, int64_t m, int64_t n, int64_t k, const R* A, int64_t lda, int64_t sA, const R* B,
            int64_t ldb, R beta, R* C, int64_t ldc, int64_t sC, int64_t batch) const {
    const R one = 1;
    cpu::gemm_strided_batched(dt, GPUFMM_OP_N, tb, m, n, k, &one, A, lda, sA, B, ldb, 0, &beta, C, ldc, sC, batch);
  }

  void s2m_stage() const {
    const int64_t P = p.par.P, Q = p.par.Q, ml = p.par.ml, Rr = R_();
    gemm(GPUFMM_OP_T, Rr, Q, ml, x + 2, 2 * P, 2 * P * ml, s2m, Q, R(0), mult_at(p.par.L), Rr, Rr * Q,
         p.boxes(p.par.L));
  }
  void m2m_stage() const {
    const int64_t Q = p.par.Q, Rr = R_();
    for (int l = p.par.L - 1; l >= p.par.B; --l)
      gemm(GPUFMM_OP_T, Rr, Q, 2 * Q, mult_at(l + 1), Rr, Rr * 2 * Q, m2m, Q, R(0), mult_at(l), Rr, Rr * Q,
           p.boxes(l));
  }
  void l2l_stage() const {
    const int64_t Q = p.par.Q, Rr = R_();
    for (int l = p.par.B; l < p.par.L; ++l)
      gemm(GPUFMM_OP_N, Rr, 2 * Q, Q, loc_at(l), Rr, Rr * Q, m2m, Q, R(1), loc_at(l + 1), Rr, Rr * 2 * Q,
           p.boxes(l));
  }
  void l2t_stage() const {
    const int64_t P = p.par.P, Q = p.par.Q, ml = p.par.ml, Rr = R_();
    gemm(GPUFMM_OP_N, Rr, ml, Q, loc_at(p.par.L), Rr, Rr * Q, s2m, Q, R(0), T + 2, 2 * P, 2 * P * ml,
         p.boxes(p.par.L));
  }

  // M2L of level l: base (every box s = 2..2^B-2 away, cyclic) or a level
  // below it (s in {-2, 2, 3} for even boxes, {-3, -2, 2} for odd ones),
  // into this rank's boxes (`first`: the index of its first box in the
  // ring of sources).
  GPUFMM_CPU_CLONES GPUFMM_CPU_FLATTEN void m2l_level(int l, bool base) const {
    const int Q = p.par.Q;
    const Ring<R> src = level_ring(l);
    const int64_t first = base && p.dist ? p.dist->rank * p.boxes(l) : 0;
    const int64_t Rr = R_(), nb = p.boxes(l), nblk = (Rr + kW - 1) / kW;
    const int ns = m2l_count(l, base);
    if (ns <= 0) return;
    std::vector<double> cotA(size_t(ns) * Q * Q);  // cot A per (s, i, j): the level's part of the entries
    for (int si = 0; si < ns; ++si)
      for (int i = 0; i < Q; ++i)
        for (int j = 0; j < Q; ++j) cotA[(size_t(si) * Q + i) * Q + j] = m2l_cot(l, p.z[i], p.z[j], m2l_offset(si, base));
    const int64_t chunk = 64, nch = (nb + chunk - 1) / chunk;
    R* Lc = loc_at(l);
#pragma omp parallel
    {
      std::vector<R> K(size_t(ns) * Q * Q * kW);
      std::vector<R> acc(size_t(Q) * kW), m(size_t(Q) * kW);  // outputs; one source box's rows
#pragma omp for schedule(dynamic)
      for (int64_t t = 0; t < nblk * nch; ++t) {
        const int64_t r0 = (t / nch) * kW, w = std::min<int64_t>(kW, Rr - r0);
        const int64_t b0 = (t % nch) * chunk, b1 = std::min(nb, b0 + chunk);
        for (int64_t r = 0; r < kW; ++r) {
          const double tb = r < w ? shift_tan(p.par.N, (r0 + r) / 2 + 1) : 0.0;
          for (size_t e = 0; e < cotA.size(); ++e) K[e * kW + r] = r < w ? R(m2l_shifted(cotA[e], tb)) : R(0);
        }
        for (int64_t b = b0; b < b1; ++b) {
          std::fill(acc.begin(), acc.end(), R(0));
          for (int si = 0; si < ns; ++si) {
            const int s = m2l_offset(si, base);
            if (!m2l_applies(s, b, base)) continue;
            const R* sb = src.at(first + b + s) + r0;
            for (int j = 0; j < Q; ++j)
              for (int r = 0; r < kW; ++r) m[size_t(j) * kW + r] = r < w ? sb[Rr * j + r] : R(0);
            // Each output's sum over j in registers (the same order of
            // terms as over (s, j) for every output).
            for (int i = 0; i < Q; ++i) {
              R a[kW];
              R* ai = &acc[size_t(i) * kW];
              for (int r = 0; r < kW; ++r) a[r] = ai[r];
              const R* k = &K[(size_t(si) * Q + i) * Q * kW];
              for (int j = 0; j < Q; ++j) {
#pragma omp simd
                for (int r = 0; r < kW; ++r) a[r] += k[size_t(j) * kW + r] * m[size_t(j) * kW + r];
              }
              for (int r = 0; r < kW; ++r) ai[r] = a[r];
            }
          }
          for (int i = 0; i < Q; ++i)
            for (int64_t r = 0; r < w; ++r) Lc[r0 + r + Rr * (i + int64_t(Q) * b)] = acc[size_t(i) * kW + r];
        }
      }
    }
  }
  void m2lb_stage() const { m2l_level(p.par.B, true); }

  // r_p = sum over q, b of mult^B (double sums; every rank's boxes), rows
  // of the FMMs.
  void reduce_stage(std::vector<double>& r) const {
    const int64_t Rr = R_(), cols = int64_t(p.par.Q) << p.par.B;
    const R* M = level_ring(p.par.B).mid;
    r.assign(size_t(Rr), 0.0);
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < Rr; ++row) {
      double s = 0;
      for (int64_t c = 0; c < cols; ++c) s += double(M[row + Rr * c]);
      r[size_t(row)] = s;
    }
  }

  // T_p = rho_p (T_p + S2T x_p - sign i r_p) for p >= 1, T_0 = x_0, over
  // blocks of 8 FMMs (rows) and chunks of leaves.
  GPUFMM_CPU_CLONES GPUFMM_CPU_FLATTEN void s2t_stage(const std::vector<double>& red, int sign) const {
    const int64_t P = p.par.P, ml = p.par.ml, M = p.par.M, nb = p.boxes(p.par.L);
    const Ring<R> xs = input_ring();
    const int64_t rows = 2 * P, nblk = (rows + kW - 1) / kW, nk = 4 * ml - 1;  // k = -(2ml-1)..2ml-1
    const int64_t chunk = std::max<int64_t>(1, 4096 / ml), nch = (nb + chunk - 1) / chunk;
#pragma omp parallel
    {
      std::vector<R> K(size_t(nk) * kW);
      std::vector<double> rho(kW), ir(kW);
#pragma omp for schedule(dynamic)
      for (int64_t t = 0; t < nblk * nch; ++t) {
        const int64_t r0 = (t / nch) * kW, w = std::min<int64_t>(kW, rows - r0);
        const int64_t b0 = (t % nch) * chunk, b1 = std::min(nb, b0 + chunk);
        for (int64_t r = 0; r < kW; ++r) {
          const int64_t pp = (r0 + r) / 2;
          const bool fmm = r < w && pp >= 1;
          for (int64_t k = 0; k < nk; ++k) K[size_t(k) * kW + r] = fmm ? R(s2t_entry(p.par.N, P, pp, k - (2 * ml - 1))) : R(0);
          if (fmm) {
            const Rho f = post_factor(P, M, pp, sign);
            rho[r] = (r & 1) ? f.im : f.re;  // the pair (re, im) of rho_p, per row
            ir[r] = red[size_t(r0 + r - 2)];
          }
        }
        for (int64_t b = b0; b < b1; ++b) {
          // The leaves b - 1, b, b + 1 of input: whole leaves, so each is
          // contiguous (the ring wraps, or reaches into the halos, at leaf
          // boundaries) and the inner loop needs no index arithmetic.
          const R* leaf[3] = {xs.at(ml * (b - 1)) + r0, xs.at(ml * b) + r0, xs.at(ml * (b + 1)) + r0};
          for (int64_t i = 0; i < ml; ++i) {
            R* out = T + 2 * P * (i + ml * b) + r0;
            R acc[kW];
            for (int r = 0; r < kW; ++r) acc[r] = (r < w && (r0 + r) >= 2) ? out[r] : R(0);
            for (int l3 = 0; l3 < 3; ++l3) {
              // sources j = (l3 - 1) M_L + jj: entry k = j - i + 2 M_L - 1
              const R* xl = leaf[l3];
              const R* kl = &K[size_t((l3 + 1) * ml - i - 1) * kW];
              if (w == kW) {
                for (int64_t jj = 0; jj < ml; ++jj) {
                  const R* xv = xl + 2 * P * jj;
                  const R* k = kl + jj * kW;
#pragma omp simd
                  for (int r = 0; r < kW; ++r) acc[r] += k[r] * xv[r];
                }
              } else {
                for (int64_t jj = 0; jj < ml; ++jj)
                  for (int64_t r = 0; r < w; ++r) acc[r] += kl[jj * kW + r] * xl[2 * P * jj + r];
              }
            }
            const R* xi = x + 2 * P * (i + ml * b) + r0;
            for (int64_t r = 0; r < w; r += 2) {
              if (r0 + r == 0) {  // p = 0: C_0 is the identity
                out[0] = xi[0];
                out[1] = xi[1];
                continue;
              }
              const Cplx z = post_apply(Rho{rho[r], rho[r + 1]}, double(acc[r]), double(acc[r + 1]), ir[r],
                                        ir[r + 1], sign);
              out[r] = R(z.re);
              out[r + 1] = R(z.im);
            }
          }
        }
      }
    }
  }
};

// Index of the first NaN or Inf among n reals, or -1.
template <class R>
int64_t first_nonfinite(const R* x, int64_t n) {
  int64_t first = n;
#pragma omp parallel for reduction(min : first) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) && i < first) first = i;
  return first == n ? -1 : first;
}

template <class R>
void setup_t(Plan& p) {
  using F = Fftw<R>;
  auto g = std::unique_ptr<CpuPlan, CpuPlanDeleter>(new CpuPlan);
  g->ctx = &p.ctx;
  g->single = sizeof(R) == 4;
  const int64_t N = p.local_n(), P = p.par.P, M = p.par.M;
  g->nexp = p.level_offset.back();
  if (g->single) {
    g->s2m_f.assign(p.s2m.begin(), p.s2m.end());
    g->m2m_f.assign(p.m2m.begin(), p.m2m.end());
  }
  const int64_t t_reals = p.dist ? 0 : 2 * N;  // over several ranks T is the 2D FFT's buffer
  const size_t bytes = sizeof(R) * size_t(2 * g->nexp + t_reals);
  g->work = backend_alloc(p.ctx, bytes, "FMM-FFT workspace (expansions and the FMM output)");
  if (p.dist) {
    // Halos (zeroed: the input halo's rows of p = 0 never travel, and the
    // S2T multiplies them by 0) and the base level of every rank.
    const size_t hbytes = sizeof(R) * size_t(p.halo_offset.back());
    g->halo = backend_alloc(p.ctx, hbytes, "FMM-FFT halos and base level");
    std::memset(g->halo, 0, hbytes);
    p.cpu = std::move(g);
    return;
  }
  require(P <= INT32_MAX && M <= INT32_MAX, GPUFMM_ERROR_NOT_SUPPORTED, "n = ", N, " is too large for FFTW's int sizes");
  R* T = static_cast<R*>(g->work) + 2 * g->nexp;
  std::vector<R> probe(2 * size_t(N) + 2);  // an unaligned output for the planner (FFTW_UNALIGNED plans)
  {
    detail::fftw_init();
    std::lock_guard<std::mutex> lock(planner_mutex());
    for (int d = 0; d < 2; ++d) {
      const int sign = d == 0 ? -1 : 1;
      if (p.options.direction != 0 && p.options.direction != sign) continue;
      auto* t = reinterpret_cast<typename F::cpx*>(T);
      auto* o = reinterpret_cast<typename F::cpx*>(probe.data() + 1);
      g->fft_p[d] = (void*)F::many(int(P), int(M), t, 1, int(P), t, 1, int(P), sign, FFTW_ESTIMATE);
      g->fft_m[d] = (void*)F::many(int(M), int(P), t, int(P), 1, o, 1, int(M), sign, FFTW_ESTIMATE | FFTW_UNALIGNED);
      require(g->fft_p[d] && g->fft_m[d], GPUFMM_ERROR_INTERNAL, "FFTW could not plan the M x P 2D FFT");
    }
  }
  p.cpu = std::move(g);
}

template <class R>
void execute_t(Plan& p, const void* in, void* out, int sign, int last) {
  using F = Fftw<R>;
  CpuPlan& g = *p.cpu;
  Distributed* d = p.dist.get();
  const int64_t N = p.local_n();
  const R* x = static_cast<const R*>(in);
  auto check = [&] {
    const int64_t bad = first_nonfinite(x, 2 * N);
    require(bad < 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'in': element ", bad / 2, " has a NaN or Inf ",
            bad % 2 ? "imaginary" : "real", " part");
  };
  if (d) {
    require(last == kStages - 1, GPUFMM_ERROR_INTERNAL, "a plan over several ranks runs every stage");
    d->agree(check);
  } else {
    check();
  }
  const R *s2m, *m2m;
  if constexpr (sizeof(R) == 4)
    s2m = g.s2m_f.data(), m2m = g.m2m_f.data();
  else
    s2m = p.s2m.data(), m2m = p.m2m.data();
  R* mult = static_cast<R*>(g.work);
  R* T = d ? static_cast<R*>(d->fft_buffer()) : mult + 2 * g.nexp;
  Stages<R> st{p, x, mult, mult + g.nexp, T, s2m, m2m, static_cast<R*>(g.halo)};
  std::vector<double> red;
  auto timed = [&](int s, auto&& f) {
    if (s > last) return;
    const auto t0 = Clock::now();
    f();
    p.times[s] = since(t0);
  };
  const int B = p.par.B, L = p.par.L;
  const int64_t box = p.rows() * p.par.Q;
  if (d) {
    d->t_wait = 0;
    d->sent_input = d->sent_multipoles = d->sent_base = 0;
    // Algorithm 1: the input's halo travels during S2M, M2M, M2L.
    d->halo_begin(0, x, N / p.par.P, 2 * int64_t(p.par.P), 2, p.par.ml, st.halo_part(0), st.halo_part(1));
  }
  timed(kS2M, [&] { st.s2m_stage(); });
  timed(kM2M, [&] { st.m2m_stage(); });
  if (d) {
    // The base level's all-gather during the M2L of the levels below it,
    // each level's halo during the M2L of the levels before it.
    d->gather_begin(st.mult_at(B), box * p.boxes(B), st.base_all());
    for (int l = B + 1; l <= L; ++l) {
      const int k = 2 * (l - B);
      d->halo_begin(l, st.mult_at(l), p.boxes(l), box, 0, 2, st.halo_part(k), st.halo_part(k + 1));
    }
  }
  timed(kM2L, [&] {
    for (int l = B + 1; l <= L; ++l) {
      if (d) d->halo_end(l);
      st.m2l_level(l, false);
    }
  });
  timed(kM2LB, [&] {
    if (d) d->gather_end();
    st.m2lb_stage();
  });
  timed(kReduce, [&] { st.reduce_stage(red); });
  timed(kL2L, [&] { st.l2l_stage(); });
  timed(kL2T, [&] { st.l2t_stage(); });
  timed(kS2T, [&] {
    if (d) d->halo_end(0);
    st.s2t_stage(red, sign);
  });
  if (d) {
    // One distributed transform (FFTW-MPI): its time is under FFT-M.
    p.times[kFftP] = 0;
    timed(kFftM, [&] { d->fft2d(out, sign); });
    return;
  }
  const int dd = sign < 0 ? 0 : 1;
  timed(kFftP, [&] { F::exec(typename F::plan(g.fft_p[dd]), st.T, st.T); });
  timed(kFftM, [&] { F::exec(typename F::plan(g.fft_m[dd]), st.T, out); });
}

}  // namespace

namespace detail {

void fftw_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    fftw_init_threads();
    fftwf_init_threads();
    fftw_make_planner_thread_safe();
    fftwf_make_planner_thread_safe();
  });
}

void setup_cpu(Plan& p) {
  if (p.single())
    setup_t<float>(p);
  else
    setup_t<double>(p);
}

void execute_cpu(Plan& p, const void* in, void* out, int sign, int last) {
  if (p.single())
    execute_t<float>(p, in, out, sign, last);
  else
    execute_t<double>(p, in, out, sign, last);
}

CpuWorkspace cpu_workspace(const Plan& p) {
  const size_t es = p.real_bytes();
  const char* w = static_cast<const char*>(p.cpu->work);
  return CpuWorkspace{w, w + es * p.cpu->nexp, w + 2 * es * p.cpu->nexp};
}

// gamma: a 512^3 GEMM on all threads; beta: a 64 MiB copy (read + write);
// latency: a small batched GEMM call.
Machine calibrate_cpu(bool single) {
  const int n = 512;
  const gpufmm_dtype_t dt = single ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
  const size_t es = single ? 4 : 8;
  std::vector<char> a(es * n * n, 0), c(es * n * n, 0);
  const double one = 1, zero = 0;
  const float onef = 1, zerof = 0;
  const void* al = single ? (const void*)&onef : (const void*)&one;
  const void* be = single ? (const void*)&zerof : (const void*)&zero;
  cpu::gemm(dt, GPUFMM_OP_N, GPUFMM_OP_N, n, n, n, al, a.data(), n, a.data(), n, be, c.data(), n);  // warm-up
  auto t0 = Clock::now();
  cpu::gemm(dt, GPUFMM_OP_N, GPUFMM_OP_N, n, n, n, al, a.data(), n, a.data(), n, be, c.data(), n);
  Machine m;
  m.gamma = 2.0 * n * n * n / std::max(since(t0), 1e-6);
  const size_t bytes = size_t(64) << 20;
  std::vector<char> s(bytes, 1), d(bytes, 0);
  t0 = Clock::now();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < int64_t(bytes); i += 4096) std::memcpy(&d[i], &s[i], std::min<size_t>(4096, bytes - i));
  m.beta = 2.0 * bytes / std::max(since(t0), 1e-6);
  // latency: a batched GEMM of 16 tiny products, 20 times.
  const int reps = 20;
  t0 = Clock::now();
  for (int r = 0; r < reps; ++r)
    cpu::gemm_strided_batched(dt, GPUFMM_OP_N, GPUFMM_OP_N, 8, 8, 8, al, a.data(), 8, 64, a.data(), 8, 0, be,
                              c.data(), 8, 64, 16);
  m.latency = since(t0) / reps;
  return m;
}

}  // namespace detail

}  // namespace fmmfft
}  // namespace gpufmm
