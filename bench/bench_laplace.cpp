// Laplace FMM benchmark (issue 4): plan time, per-stage times in the form of
// papers/000 Table 8, achieved error and speed-up over the direct sum.
//
//   bench_laplace [--cpu | --gpu] [--max-n 1e6] [--sizes 1e4,1e5,1e6]
//                 [--eps 1e-3,1e-6,1e-9] [--float] [--dist uniform]
//                 [--distinct] [--repeat 3] [--full-direct-max 1e5]
//                 [--csv PATH]
//   bench_laplace --calibrate [--csv PATH]     (cost-model constants, 1 thread)
//
// Every row: N sources (= targets unless --distinct, then N targets of the
// same distribution) with random charges in [-1, 1], potential + gradient,
// double (and float with --float), on the context given by --cpu / --gpu
// (default: the first GPU if there is one). Columns:
//   plan        gpufmm_laplace_plan_create (tree, cost model, tables)
//   S exp ... sparse   the stages of the best of `repeat` evaluates
//               (P2M, M2M, M2L+L2L, L2P, P2P; papers/000 Table 8), total =
//               the whole evaluate (permutations / transfers included)
//   err pot, err grad  eq. (36) at 1000 evenly spaced targets against
//               gpufmm_laplace_direct in double (on the same context)
//   direct      the direct sum for all N targets in the plan's precision on
//               the same context: measured when N <= --full-direct-max, else
//               the time for 1000 targets scaled by N / 1000 ("~")
//   speed-up    direct / FMM total
//
// --calibrate runs the CPU pipeline on one thread at forced depths and
// fits the per-core constants of the cost model (laplace_cost_constants_cpu,
// docs/laplace_fmm.md): seconds per P2P pair, per p^3 and p^2 of a
// translation, per p^2 per point of P2M + L2P.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/distributions.hpp"
#include "core/context.hpp"
#include "fmm/laplace/plan.hpp"
#include "bench_args.hpp"
#include "gpufmm.h"

namespace {

using bench::flag;
using bench::now;
using bench::option;
using bench::split;

void check(gpufmm_status_t s, const char* what) {
  if (s != GPUFMM_SUCCESS) {
    std::fprintf(stderr, "%s failed: %s\n", what, gpufmm_last_error_message());
    std::exit(1);
  }
}

struct Row {
  std::string backend, precision, dist;
  long long n = 0;
  double eps = 0;
  int p = 0, l_max = 0;
  long long m2l = 0, pairs = 0;
  double plan = 0, p2m = 0, up = 0, down = 0, l2p = 0, p2p = 0, total = 0;
  double err_pot = 0, err_grad = 0;
  double direct = 0;
  bool direct_measured = false;
};

Row run(gpufmm_context_t ctx, const char* backend, gpufmm_test::Dist dist, long long n, bool distinct,
        double eps, int precision, int repeat, long long full_direct_max) {
  Row r;
  r.backend = backend;
  r.precision = precision == GPUFMM_FLOAT32 ? "float" : "double";
  r.dist = gpufmm_test::dist_name(dist);
  r.n = n;
  r.eps = eps;
  const auto src = gpufmm_test::make_points(dist, n, 1);
  const auto trg = distinct ? gpufmm_test::make_points(dist, n, 2) : std::vector<double>();
  const double* tp = distinct ? trg.data() : nullptr;
  const double* txyz = distinct ? trg.data() : src.data();
  gpufmm_test::Rng rng(3);
  std::vector<double> q(n);
  for (auto& v : q) v = 2 * rng.uniform() - 1;

  gpufmm_laplace_options_t o;
  gpufmm_laplace_options_init(&o);
  o.eps = eps;
  o.precision = precision;
  gpufmm_laplace_plan_t plan = nullptr;
  const double t0 = now();
  check(gpufmm_laplace_plan_create(ctx, &o, n, src.data(), n, tp, &plan), "plan_create");
  r.plan = now() - t0;
  std::vector<double> pot(n), grad(3 * n);
  gpufmm_laplace_info_t best{};
  best.t_total = 1e300;
  for (int k = 0; k < std::max(1, repeat); ++k) {
    check(gpufmm_laplace_evaluate(plan, q.data(), nullptr, pot.data(), grad.data()), "evaluate");
    gpufmm_laplace_info_t info;
    check(gpufmm_laplace_plan_info(plan, &info), "plan_info");
    if (info.t_total < best.t_total) best = info;
  }
  gpufmm_laplace_plan_destroy(plan);
  r.p = best.p;
  r.l_max = best.l_max;
  r.m2l = best.m2l_translations;
  r.pairs = best.p2p_pairs;
  r.p2m = best.t_p2m;
  r.up = best.t_upward;
  r.down = best.t_downward;
  r.l2p = best.t_l2p;
  r.p2p = best.t_p2p;
  r.total = best.t_total;

  // Error at m sampled targets (reference: double direct sum).
  const long long m = std::min<long long>(1000, n);
  std::vector<long long> idx(m);
  std::vector<double> ts(3 * m);
  for (long long i = 0; i < m; ++i) {
    idx[i] = i * n / m;
    for (int k = 0; k < 3; ++k) ts[3 * i + k] = txyz[3 * idx[i] + k];
  }
  std::vector<double> pe(m), ge(3 * m);
  check(gpufmm_laplace_direct(ctx, GPUFMM_FLOAT64, n, src.data(), q.data(), nullptr, m, ts.data(),
                              pe.data(), ge.data()),
        "direct (reference)");
  double e2 = 0, n2 = 0, g2 = 0, gn = 0;
  for (long long i = 0; i < m; ++i) {
    e2 += (pot[idx[i]] - pe[i]) * (pot[idx[i]] - pe[i]);
    n2 += pe[i] * pe[i];
    for (int k = 0; k < 3; ++k) {
      g2 += (grad[3 * idx[i] + k] - ge[3 * i + k]) * (grad[3 * idx[i] + k] - ge[3 * i + k]);
      gn += ge[3 * i + k] * ge[3 * i + k];
    }
  }
  r.err_pot = std::sqrt(e2 / n2);
  r.err_grad = std::sqrt(g2 / gn);

  // Direct-sum time in the plan's precision.
  if (n <= full_direct_max) {
    std::vector<double> pd(n), gd(3 * n);
    const double t1 = now();
    check(gpufmm_laplace_direct(ctx, precision, n, src.data(), q.data(), nullptr, n, tp, pd.data(),
                                gd.data()),
          "direct");
    r.direct = now() - t1;
    r.direct_measured = true;
  } else {
    const double t1 = now();
    check(gpufmm_laplace_direct(ctx, precision, n, src.data(), q.data(), nullptr, m, ts.data(),
                                pe.data(), ge.data()),
          "direct (sampled)");
    r.direct = (now() - t1) * double(n) / double(m);
  }
  return r;
}

void print_header() {
  std::printf(
      "%-7s %-6s %-9s %8s %7s %3s %2s %9s | %8s | %8s %8s %8s %8s %8s %8s | %8s %8s | %9s %8s\n",
      "backend", "prec", "dist", "N", "eps", "p", "L", "M2L", "plan s", "S exp", "up", "down",
      "R eval", "sparse", "total", "err pot", "err grd", "direct s", "speedup");
}

void print_row(const Row& r) {
  std::printf(
      "%-7s %-6s %-9s %8lld %7.0e %3d %2d %9lld | %8.3f | %8.4f %8.4f %8.4f %8.4f %8.4f %8.4f | "
      "%8.1e %8.1e | %s%8.3f %8.1f\n",
      r.backend.c_str(), r.precision.c_str(), r.dist.c_str(), r.n, r.eps, r.p, r.l_max, r.m2l,
      r.plan, r.p2m, r.up, r.down, r.l2p, r.p2p, r.total, r.err_pot, r.err_grad,
      r.direct_measured ? " " : "~", r.direct, r.direct / r.total);
  std::fflush(stdout);
}

// ------------------------------------------------------------------ calibration

int calibrate(const std::string& csv) {
  using namespace gpufmm;
  omp_set_num_threads(1);
  std::printf("Cost-model calibration, 1 thread, CPU pipeline ISA %s\n", fmm::cpu_pipeline_isa());
  FILE* f = csv.empty() ? nullptr : std::fopen(csv.c_str(), "w");
  if (f) std::fprintf(f, "precision,p,l_max,pairs,rcr_p3,rcr_p2,points_p2,t_p2p,t_trans,t_point\n");
  for (int prec : {GPUFMM_FLOAT64, GPUFMM_FLOAT32}) {
    const bool single = prec == GPUFMM_FLOAT32;
    // Rows: (sum p^3, sum p^2, seconds) of the translations.
    std::vector<double> a3, a2, tt, pair_c, point_c;
    for (int p : {4, 8, 12, 16, 22, 30}) {
      if (single && p > 16) continue;
      for (int l : {3, 4}) {
        const long long n = l == 3 ? 20000 : 40000;
        const auto src = gpufmm_test::uniform_cube(n, 5);
        std::vector<double> q(n, 1.0), pot(n), grad(3 * n);
        Context ctx;
        fmm::LaplaceOptions o;
        o.p = p;
        o.l_max = l;
        o.precision = static_cast<gpufmm_dtype_t>(prec);
        auto plan = fmm::laplace_plan_create(ctx, o, n, src.data(), 0, nullptr);
        fmm::LaplaceEvalArgs a;
        a.charges = q.data();
        a.pot = pot.data();
        a.grad = grad.data();
        fmm::StageTimes best;
        best.total = 1e300;
        for (int k = 0; k < 3; ++k) {
          fmm::laplace_evaluate(*plan, a);
          if (plan->last.total < best.total) best = plan->last;
        }
        const double trans = best.upward + best.downward;
        const double pts = double(p) * p * 2.0 * n;
        a3.push_back(plan->rcr_p3);
        a2.push_back(plan->rcr_p2);
        tt.push_back(trans);
        pair_c.push_back(best.p2p / double(plan->p2p_pairs));
        point_c.push_back((best.p2m + best.l2p) / pts);
        std::printf("  %s p=%2d l_max=%d: pairs %.3g (%.2f ns/pair), translations %.3g s "
                    "(%.3f ns per p^3), P2M+L2P %.2f ns per p^2 point\n",
                    single ? "float " : "double", p, l, double(plan->p2p_pairs),
                    pair_c.back() * 1e9, trans, trans / plan->rcr_p3 * 1e9, point_c.back() * 1e9);
        if (f)
          std::fprintf(f, "%s,%d,%d,%lld,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e\n", single ? "float" : "double",
                       p, l, (long long)plan->p2p_pairs, plan->rcr_p3, plan->rcr_p2, pts, best.p2p,
                       trans, best.p2m + best.l2p);
      }
    }
    // Least squares t = c3 a3 + c2 a2, rows weighted by 1/t (relative error).
    double s33 = 0, s22 = 0, s23 = 0, b3 = 0, b2 = 0;
    for (size_t i = 0; i < tt.size(); ++i) {
      const double w = 1.0 / (tt[i] * tt[i]);
      s33 += w * a3[i] * a3[i];
      s22 += w * a2[i] * a2[i];
      s23 += w * a3[i] * a2[i];
      b3 += w * a3[i] * tt[i];
      b2 += w * a2[i] * tt[i];
    }
    const double det = s33 * s22 - s23 * s23;
    double c3 = (b3 * s22 - b2 * s23) / det, c2 = (s33 * b2 - s23 * b3) / det;
    if (c2 < 0) {  // keep the model monotone
      c2 = 0;
      c3 = b3 / s33;
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const fmm::LaplaceCostConstants cur = fmm::laplace_cost_constants_cpu(single);
    std::printf("%s fit: c_pair %.2e  c_rcr3 %.2e  c_rcr2 %.2e  c_point %.2e\n",
                single ? "float " : "double", median(pair_c), c3, c2, median(point_c));
    std::printf("%s now: c_pair %.2e  c_rcr3 %.2e  c_rcr2 %.2e  c_point %.2e\n",
                single ? "float " : "double", cur.c_pair, cur.c_rcr3, cur.c_rcr2, cur.c_point);
  }
  if (f) std::fclose(f);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string csv = option(argc, argv, "--csv", "");
  if (flag(argc, argv, "--calibrate")) return calibrate(csv);

  const bool want_cpu = flag(argc, argv, "--cpu"), want_gpu = flag(argc, argv, "--gpu");
  int ndev = 0;
  gpufmm_device_count(&ndev);
  const bool gpu = want_gpu || (!want_cpu && ndev > 0);
  gpufmm_context_t ctx = nullptr;
  check(gpufmm_context_create(gpu ? 0 : GPUFMM_DEVICE_CPU, &ctx), "context_create");
  gpufmm_device_info_t dev;
  gpufmm_context_device_info(ctx, &dev);
  const long long max_n = static_cast<long long>(std::strtod(option(argc, argv, "--max-n", "1e6").c_str(), nullptr));
  const long long full_direct_max =
      static_cast<long long>(std::strtod(option(argc, argv, "--full-direct-max", "1e5").c_str(), nullptr));
  const int repeat = std::atoi(option(argc, argv, "--repeat", "3").c_str());
  const bool distinct = flag(argc, argv, "--distinct");
  gpufmm_test::Dist dist = gpufmm_test::Dist::Uniform;
  if (!gpufmm_test::parse_dist(option(argc, argv, "--dist", "uniform"), dist)) {
    std::fprintf(stderr, "unknown --dist\n");
    return 1;
  }
  std::vector<long long> sizes;
  for (const auto& s : split(option(argc, argv, "--sizes", "1e4,1e5,1e6"))) {
    const long long n = static_cast<long long>(std::strtod(s.c_str(), nullptr));
    if (n > 0 && n <= max_n) sizes.push_back(n);
  }
  std::vector<double> eps;
  for (const auto& s : split(option(argc, argv, "--eps", "1e-3,1e-6,1e-9"))) eps.push_back(std::strtod(s.c_str(), nullptr));
  std::vector<int> precs = {GPUFMM_FLOAT64};
  if (flag(argc, argv, "--float")) precs.push_back(GPUFMM_FLOAT32);

  const char* backend = gpu ? "gpu" : "cpu";
  std::printf("Laplace FMM benchmark: %s (%s, %d %s), CPU pipeline ISA %s, %d OpenMP threads\n",
              dev.name, backend, dev.multiprocessors, gpu ? "SMs" : "cores",
              gpufmm::fmm::cpu_pipeline_isa(), omp_get_max_threads());
  std::printf("potential + gradient, charges, %s, %s; best of %d evaluates; times in seconds\n",
              gpufmm_test::dist_name(dist), distinct ? "N distinct targets" : "targets = sources",
              repeat);
  print_header();
  std::vector<Row> rows;
  for (int prec : precs)
    for (double e : eps) {
      if (prec == GPUFMM_FLOAT32 && e < 1e-5) continue;  // below the float floor
      for (long long n : sizes) {
        rows.push_back(run(ctx, backend, dist, n, distinct, e, prec, repeat, full_direct_max));
        print_row(rows.back());
      }
    }
  if (!csv.empty()) {
    FILE* f = std::fopen(csv.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", csv.c_str());
      return 1;
    }
    std::fprintf(f,
                 "backend,device,threads,isa,precision,dist,n,eps,p,l_max,m2l,p2p_pairs,plan_s,p2m_s,"
                 "upward_s,downward_s,l2p_s,p2p_s,total_s,err_pot,err_grad,direct_s,direct_measured,"
                 "speedup\n");
    for (const Row& r : rows)
      std::fprintf(f, "%s,\"%s\",%d,%s,%s,%s,%lld,%.0e,%d,%d,%lld,%lld,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,"
                   "%.3e,%.3e,%.6f,%d,%.2f\n",
                   r.backend.c_str(), dev.name, omp_get_max_threads(), gpufmm::fmm::cpu_pipeline_isa(),
                   r.precision.c_str(), r.dist.c_str(), r.n, r.eps, r.p, r.l_max, r.m2l, r.pairs,
                   r.plan, r.p2m, r.up, r.down, r.l2p, r.p2p, r.total, r.err_pot, r.err_grad, r.direct,
                   r.direct_measured ? 1 : 0, r.direct / r.total);
    std::fclose(f);
  }
  gpufmm_context_destroy(ctx);
  return 0;
}
