// The barycentric Lagrange treecode (issue 15): error against time, sizes,
// and the peers, in one run. Prints tables and writes CSV.
//
//   bench_treecode --calibrate [--n 1e6] [--leaf 0] [--cpu] [--skip-uniform]
//       the error table of src/cxx/treecode/params.cpp (params_table.inc):
//       particle-cluster, double, theta x degree: the largest relative L2
//       error (potential, gradient) over uniform, ellipsoid-surface and
//       Plummer points and the Coulomb and regularized Yukawa (kappa 0.5,
//       delta 0.02) kernels (on GPU 0 unless --cpu or there is none; leaf 0:
//       the plan's).
//   bench_treecode --sweep [--n 1e6] [--kernels coulomb,yukawa,user-yukawa] [--thetas 0.5,0.7,0.8]
//                  [--degrees 2,4,6,8,10,12] [--leaf L1,L2] [--precisions double,float] [--cpu] [--csv PATH]
//       error versus time (papers/001 Fig. 4): plan and evaluate times and the
//       sampled error of potential and gradient; on a GPU also the evaluate
//       on device arrays (evaluate_arrays: no host transfers).
//   bench_treecode --scaling [--sizes 1e5,1e6,1e7] [--eps 1e-6] [--cpu|--gpu] [--csv PATH]
//       sizes at ~eps: the treecode (double and float), this library's direct
//       sum (timed at N <= --direct-max, else from its measured rate) and,
//       for Coulomb, the Laplace FMM at the same eps.
//   common: --sample K (targets of the error check, default 2000),
//           --type pc|cp|cc, --dist uniform|plummer|ellipsoid, --repeat R,
//           --barytree "CMD" (the peer: CMD INPUT OUTPUT kernel kappa theta
//           degree leaf batch type; see docs/treecode.md) runs it on the same
//           points and parameters in the sweep.
// Errors: relative L2 (papers/001 eq. 16) at K sampled targets against
// gpufmm_direct in double on the same context.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "common/distributions.hpp"
#include "gpufmm.h"

namespace {

using bench::flag;
using bench::now;
using bench::option;
using bench::split;

struct Problem {
  int64_t n = 0;
  std::vector<double> x, q;
  std::vector<int64_t> sample;  // indices of the error check
  std::vector<double> sx;       // their coordinates
};

Problem make(gpufmm_test::Dist d, int64_t n, uint64_t seed, int64_t k) {
  Problem p;
  p.n = n;
  p.x = gpufmm_test::make_points(d, n, seed);
  gpufmm_test::Rng rng(seed + 11);
  p.q.resize(size_t(n));
  for (auto& v : p.q) v = 2 * rng.uniform() - 1;
  k = std::min(k, n);
  for (int64_t i = 0; i < k; ++i) {
    const int64_t j = int64_t(rng.uniform() * double(n)) % n;
    p.sample.push_back(j);
    for (int c = 0; c < 3; ++c) p.sx.push_back(p.x[3 * j + c]);
  }
  return p;
}

// Yukawa as a user kernel (issue 15, item 3): the same g(r) = exp(-kappa r)/r
// through NVRTC on the GPU and function pointers on the CPU, so that its
// time measures what a user kernel costs against the built-in one.
double user_yukawa(double r, const double* p) { return std::exp(-p[0] * r) / r; }
double user_yukawa_dr(double r, const double* p) { return -std::exp(-p[0] * r) * (1 + p[0] * r) / (r * r); }

// coulomb, yukawa, or user-yukawa (the user kernel above).
gpufmm_kernel_t kernel(const std::string& name, double kappa) {
  gpufmm_kernel_t k;
  if (name == "yukawa")
    CHECK(gpufmm_kernel_init(&k, GPUFMM_KERNEL_YUKAWA, 1, &kappa));
  else if (name == "user-yukawa")
    CHECK(gpufmm_kernel_init_user(&k, 1, &kappa, "exp(-p[0] * r) / r", "-exp(-p[0] * r) * (1 + p[0] * r) / (r * r)",
                                  user_yukawa, user_yukawa_dr, GPUFMM_KERNEL_R0_LEFT_OUT));
  else
    CHECK(gpufmm_kernel_init(&k, GPUFMM_KERNEL_LAPLACE, 0, nullptr));
  return k;
}

struct Ref {
  std::vector<double> pot, grad;
};

// The direct sum in double at the sample (the sample points are sources:
// the singular kernels leave the coincident pair out, as at the sources).
Ref reference(gpufmm_context_t ctx, const gpufmm_kernel_t& k, const Problem& p) {
  Ref r;
  const int64_t m = int64_t(p.sample.size());
  r.pot.resize(size_t(m));
  r.grad.resize(size_t(3 * m));
  CHECK(gpufmm_direct(ctx, &k, GPUFMM_FLOAT64, p.n, p.x.data(), p.q.data(), m, p.sx.data(), r.pot.data(),
                      r.grad.data()));
  return r;
}

double err_at(const std::vector<double>& v, const std::vector<double>& ref, const std::vector<int64_t>& sample,
              int per) {
  double e = 0, s = 0;
  for (size_t i = 0; i < sample.size(); ++i)
    for (int c = 0; c < per; ++c) {
      const double a = v[size_t(per * sample[i] + c)], b = ref[per * i + c];
      e += (a - b) * (a - b);
      s += b * b;
    }
  return std::sqrt(e / s);
}

struct Run {
  double plan = 0, eval = 0, epot = 0, egrad = 0;
  double eval_arrays = 0;  // GPU: evaluate_arrays on device arrays (no host transfers); 0 on the CPU
  gpufmm_treecode_info_t info{};
};

// The best of `repeat` evaluates with the charges and outputs in device
// arrays of the plan's precision (data resident, as a GPU code keeps them).
double time_arrays(gpufmm_context_t ctx, gpufmm_treecode_plan_t plan, const gpufmm_treecode_options_t& o,
                   const Problem& p, int repeat, bool grad) {
  const gpufmm_dtype_t dt = o.precision == GPUFMM_FLOAT32 ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
  const int64_t dq[1] = {p.n}, dg[1] = {3 * p.n};
  gpufmm_array_t qa, pa, ga = nullptr;
  CHECK(gpufmm_array_create(ctx, dt, 1, dq, &qa));
  CHECK(gpufmm_array_create(ctx, dt, 1, dq, &pa));
  if (grad) CHECK(gpufmm_array_create(ctx, dt, 1, dg, &ga));
  if (dt == GPUFMM_FLOAT64) {
    CHECK(gpufmm_array_upload(qa, p.q.data(), p.n));
  } else {
    const std::vector<float> qf(p.q.begin(), p.q.end());
    CHECK(gpufmm_array_upload(qa, qf.data(), p.n));
  }
  CHECK(gpufmm_treecode_evaluate_arrays(plan, qa, pa, ga));  // warm-up
  double best = HUGE_VAL;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    const double t0 = now();
    CHECK(gpufmm_treecode_evaluate_arrays(plan, qa, pa, ga));
    best = std::min(best, now() - t0);
  }
  for (gpufmm_array_t a : {qa, pa, ga})
    if (a) CHECK(gpufmm_array_destroy(a));
  return best;
}

Run run_treecode(gpufmm_context_t ctx, const gpufmm_treecode_options_t& o, const Problem& p, const Ref& ref,
                 int repeat, bool grad) {
  Run r;
  std::vector<double> pot(size_t(p.n)), g(grad ? size_t(3 * p.n) : 0);
  gpufmm_treecode_plan_t plan;
  r.plan = HUGE_VAL;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    const double t0 = now();
    CHECK(gpufmm_treecode_plan_create(ctx, &o, p.n, p.x.data(), 0, nullptr, &plan));
    r.plan = std::min(r.plan, now() - t0);
    if (i + 1 < repeat) CHECK(gpufmm_treecode_plan_destroy(plan));
  }
  CHECK(gpufmm_treecode_evaluate(plan, p.q.data(), pot.data(), grad ? g.data() : nullptr));  // warm-up
  r.eval = HUGE_VAL;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    const double t0 = now();
    CHECK(gpufmm_treecode_evaluate(plan, p.q.data(), pot.data(), grad ? g.data() : nullptr));
    r.eval = std::min(r.eval, now() - t0);
  }
  CHECK(gpufmm_treecode_plan_info(plan, &r.info));
  if (r.info.backend == GPUFMM_BACKEND_CUDA) r.eval_arrays = time_arrays(ctx, plan, o, p, repeat, grad);
  CHECK(gpufmm_treecode_plan_destroy(plan));
  r.epot = err_at(pot, ref.pot, p.sample, 1);
  r.egrad = grad ? err_at(g, ref.grad, p.sample, 3) : 0;
  return r;
}

int type_of(const std::string& s) {
  return s == "cp" ? GPUFMM_TREECODE_CP : s == "cc" ? GPUFMM_TREECODE_CC : GPUFMM_TREECODE_PC;
}

void calibrate(int argc, char** argv) {
  const int64_t n = int64_t(std::atof(option(argc, argv, "--n", "1e6").c_str()));
  const int leaf = std::atoi(option(argc, argv, "--leaf", "0").c_str());
  const int64_t k = int64_t(std::atof(option(argc, argv, "--sample", "3000").c_str()));
  gpufmm_context_t ctx;
  if (flag(argc, argv, "--cpu") || gpufmm_context_create(0, &ctx) != GPUFMM_SUCCESS)
    CHECK(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx));
  const double thetas[] = {0.5, 0.6, 0.7, 0.8, 0.9};
  double err[2][5][17] = {};
  gpufmm_kernel_t reg_yukawa;
  const double ry[2] = {0.5, 2e-2};
  CHECK(gpufmm_kernel_init(&reg_yukawa, GPUFMM_KERNEL_REGULARIZED_YUKAWA, 2, ry));
  const gpufmm_kernel_t kerns[2] = {kernel("coulomb", 0), reg_yukawa};
  const gpufmm_test::Dist dists[3] = {gpufmm_test::Dist::Uniform, gpufmm_test::Dist::Ellipsoid,
                                      gpufmm_test::Dist::Plummer};
  const int d0 = flag(argc, argv, "--skip-uniform") ? 1 : 0;
  for (int di = d0; di < 3; ++di) {
    const Problem p = make(dists[di], n, 1000 + di, k);
    for (int ki = 0; ki < 2; ++ki) {
      const Ref ref = reference(ctx, kerns[ki], p);
      for (int ti = 0; ti < 5; ++ti)
        for (int d = 0; d <= 16; ++d) {
          gpufmm_treecode_options_t o;
          CHECK(gpufmm_treecode_options_init(&o));
          o.kernel = kerns[ki];
          o.theta = thetas[ti];
          o.degree = d;
          o.leaf_size = o.batch_size = leaf;
          const Run r = run_treecode(ctx, o, p, ref, 1, true);
          err[0][ti][d] = std::max(err[0][ti][d], std::max(r.epot, 1e-16));
          err[1][ti][d] = std::max(err[1][ti][d], std::max(r.egrad, 1e-16));
          std::fprintf(stderr, "%s %s theta %.1f n %2d: pot %.3e grad %.3e\n", gpufmm_test::dist_name(dists[di]),
                       ki ? "reg_yukawa" : "coulomb", thetas[ti], d, r.epot, r.egrad);
        }
    }
  }
  std::printf("// Generated by bench_treecode --calibrate --n %lld --leaf %d (see params.cpp).\n", (long long)n, leaf);
  std::printf("constexpr double kErr[2][kNumThetas][kMaxTableDegree + 1] = {\n");
  for (int g = 0; g < 2; ++g) {
    std::printf("  {  // %s\n", g ? "gradient" : "potential");
    for (int ti = 0; ti < 5; ++ti) {
      std::printf("    {");
      for (int d = 0; d <= 16; ++d) std::printf("%s%.2e", d ? ", " : "", err[g][ti][d]);
      std::printf("},  // theta %.1f\n", thetas[ti]);
    }
    std::printf("  },\n");
  }
  std::printf("};\n");
  CHECK(gpufmm_context_destroy(ctx));
}

// The peer on the same points: writes them, runs CMD, reads the potentials.
bool run_peer(const std::string& cmd, const Problem& p, const std::string& kname, double kappa, double theta,
              int degree, int leaf, const std::string& type, double& seconds, std::vector<double>& pot) {
  const std::string in = "bench_treecode_peer_in.bin", out = "bench_treecode_peer_out.bin";
  {
    std::ofstream f(in, std::ios::binary);
    const int64_t n = p.n;
    f.write(reinterpret_cast<const char*>(&n), sizeof n);
    for (int64_t i = 0; i < n; ++i) {
      const double rec[4] = {p.x[3 * i], p.x[3 * i + 1], p.x[3 * i + 2], p.q[i]};
      f.write(reinterpret_cast<const char*>(rec), sizeof rec);
    }
  }
  char line[1024];
  std::snprintf(line, sizeof line, "%s %s %s %s %.17g %.17g %d %d %d %s", cmd.c_str(), in.c_str(), out.c_str(),
                kname.c_str(), kappa, theta, degree, leaf, leaf, type.c_str());
  const double t0 = now();
  const int rc = std::system(line);
  seconds = now() - t0;
  if (rc != 0) {
    std::fprintf(stderr, "peer failed (%d): %s\n", rc, line);
    return false;
  }
  std::ifstream f(out, std::ios::binary);
  pot.assign(size_t(p.n), 0.0);
  f.read(reinterpret_cast<char*>(pot.data()), std::streamsize(sizeof(double) * size_t(p.n)));
  return bool(f);
}

void sweep(int argc, char** argv, gpufmm_context_t ctx, bool gpu) {
  const int64_t n = int64_t(std::atof(option(argc, argv, "--n", "1e6").c_str()));
  const int64_t k = int64_t(std::atof(option(argc, argv, "--sample", "2000").c_str()));
  const int repeat = std::atoi(option(argc, argv, "--repeat", "2").c_str());
  const std::vector<std::string> leaves = split(option(argc, argv, "--leaf", "0"));
  const std::string type = option(argc, argv, "--type", "pc");
  const std::string peer = option(argc, argv, "--barytree", "");
  gpufmm_test::Dist dist = gpufmm_test::Dist::Uniform;
  gpufmm_test::parse_dist(option(argc, argv, "--dist", "uniform"), dist);
  const std::string csv = option(argc, argv, "--csv", "");
  FILE* out = csv.empty() ? nullptr : std::fopen(csv.c_str(), "w");
  if (out)
    std::fprintf(out, "code,backend,precision,kernel,n,type,theta,degree,leaf,batch,plan_s,eval_s,err_pot,err_grad,"
                      "approx,direct,t_pre,t_compute,t_down,eval_arrays_s\n");
  std::printf("%-9s %-4s %-8s %4s %5s %3s %5s %9s %9s %9s %9s %11s %11s\n", "code", "dev", "kernel", "type", "theta",
              "n", "leaf", "plan[s]", "eval[s]", "err pot", "err grad", "approx", "direct");
  const Problem p = make(dist, n, 42, k);
  for (const std::string& kn : split(option(argc, argv, "--kernels", "coulomb,yukawa"))) {
    const double kappa = kn == "yukawa" || kn == "user-yukawa" ? 0.5 : 0;
    const gpufmm_kernel_t kern = kernel(kn, kappa);
    const Ref ref = reference(ctx, kern, p);
    for (const std::string& ts : split(option(argc, argv, "--thetas", "0.5,0.7,0.8")))
      for (const std::string& ds : split(option(argc, argv, "--degrees", "2,4,6,8,10,12")))
      for (const std::string& ls : leaves)
      for (const std::string& prec : split(option(argc, argv, "--precisions", "double"))) {
        const int leaf = std::atoi(ls.c_str());
        gpufmm_treecode_options_t o;
        CHECK(gpufmm_treecode_options_init(&o));
        o.kernel = kern;
        o.theta = std::atof(ts.c_str());
        o.degree = std::atoi(ds.c_str());
        o.type = type_of(type);
        o.leaf_size = o.batch_size = leaf;
        o.precision = prec == "float" ? GPUFMM_FLOAT32 : GPUFMM_FLOAT64;
        const Run r = run_treecode(ctx, o, p, ref, repeat, true);
        std::printf("%-9s %-4s %-8s %4s %5.2f %3d %5d %9.4f %9.4f %9.2e %9.2e %11.3e %11.3e  %s plan: tree %.4f "
                    "lists %.4f setup %.4f  eval: pre %.4f nf %.4f down %.4f  nf rate %.3e/s  arrays %.4f\n",
                    "gpufmm", gpu ? "gpu" : "cpu", kn.c_str(), type.c_str(), o.theta, o.degree, r.info.leaf_size,
                    r.plan, r.eval, r.epot, r.egrad, double(r.info.approx_interactions),
                    double(r.info.direct_interactions), prec.c_str(), r.info.t_plan_tree, r.info.t_plan_lists,
                    r.info.t_plan_setup, r.info.t_precompute, r.info.t_compute, r.info.t_downward,
                    double(r.info.approx_interactions + r.info.direct_interactions) / r.info.t_compute,
                    r.eval_arrays);
        std::fflush(stdout);
        if (out)
          std::fprintf(out, "gpufmm,%s,%s,%s,%lld,%s,%.2f,%d,%d,%d,%.6g,%.6g,%.4g,%.4g,%lld,%lld,%.6g,%.6g,%.6g,%.6g\n",
                       gpu ? "gpu" : "cpu", prec.c_str(), kn.c_str(), (long long)n, type.c_str(), o.theta, o.degree,
                       r.info.leaf_size, r.info.batch_size, r.plan, r.eval, r.epot, r.egrad,
                       (long long)r.info.approx_interactions, (long long)r.info.direct_interactions,
                       r.info.t_precompute, r.info.t_compute, r.info.t_downward, r.eval_arrays);
        if (!peer.empty()) {
          double secs = 0;
          std::vector<double> pot;
          const int pleaf = leaf > 0 ? leaf : r.info.leaf_size;
          if (run_peer(peer, p, kn, kappa, o.theta, o.degree, pleaf, type, secs, pot)) {
            const double e = err_at(pot, ref.pot, p.sample, 1);
            std::printf("%-9s %-4s %-8s %4s %5.2f %3d %5d %9s %9.4f %9.2e %9s\n", "barytree", "cpu", kn.c_str(),
                        type.c_str(), o.theta, o.degree, pleaf, "-", secs, e, "-");
            if (out)
              std::fprintf(out, "barytree,cpu,double,%s,%lld,%s,%.2f,%d,%d,%d,,%.6g,%.4g,,,,,,,\n", kn.c_str(),
                           (long long)n, type.c_str(), o.theta, o.degree, pleaf, pleaf, secs, e);
          }
        }
      }
  }
  if (out) std::fclose(out);
}

void scaling(int argc, char** argv, gpufmm_context_t ctx, bool gpu) {
  const double eps = std::atof(option(argc, argv, "--eps", "1e-6").c_str());
  const int64_t k = int64_t(std::atof(option(argc, argv, "--sample", "2000").c_str()));
  const int repeat = std::atoi(option(argc, argv, "--repeat", "3").c_str());
  const int64_t direct_max = int64_t(std::atof(option(argc, argv, "--direct-max", "1e6").c_str()));
  const std::string type = option(argc, argv, "--type", "pc");
  const std::string csv = option(argc, argv, "--csv", "");
  FILE* out = csv.empty() ? nullptr : std::fopen(csv.c_str(), "w");
  if (out) std::fprintf(out, "code,backend,kernel,precision,n,eps,theta,degree,leaf,plan_s,eval_s,err_pot,err_grad\n");
  std::printf("%-10s %-4s %-8s %-6s %9s %5s %3s %5s %9s %9s %9s %9s\n", "code", "dev", "kernel", "prec", "n", "theta",
              "n", "leaf", "plan[s]", "eval[s]", "err pot", "err grad");
  for (const std::string& kn : split(option(argc, argv, "--kernels", "coulomb,yukawa")))
    for (const std::string& ns : split(option(argc, argv, "--sizes", "1e5,1e6,1e7"))) {
      const int64_t n = int64_t(std::atof(ns.c_str()));
      const double kappa = kn == "yukawa" || kn == "user-yukawa" ? 0.5 : 0;
      const gpufmm_kernel_t kern = kernel(kn, kappa);
      const Problem p = make(gpufmm_test::Dist::Uniform, n, 7, k);
      const Ref ref = reference(ctx, kern, p);
      auto row = [&](const char* code, const char* prec, double th, int deg, int leaf, double plan, double eval,
                     double ep, double eg) {
        std::printf("%-10s %-4s %-8s %-6s %9lld %5.2f %3d %5d %9.4f %9.4f %9.2e %9.2e\n", code, gpu ? "gpu" : "cpu",
                    kn.c_str(), prec, (long long)n, th, deg, leaf, plan, eval, ep, eg);
        std::fflush(stdout);
        if (out)
          std::fprintf(out, "%s,%s,%s,%s,%lld,%.3g,%.2f,%d,%d,%.6g,%.6g,%.4g,%.4g\n", code, gpu ? "gpu" : "cpu",
                       kn.c_str(), prec, (long long)n, eps, th, deg, leaf, plan, eval, ep, eg);
      };
      for (int prec : {GPUFMM_FLOAT64, GPUFMM_FLOAT32}) {
        gpufmm_treecode_options_t o;
        CHECK(gpufmm_treecode_options_init(&o));
        o.kernel = kern;
        o.eps = prec == GPUFMM_FLOAT32 ? std::max(eps, 1e-4) : eps;
        o.precision = prec;
        o.type = type_of(type);
        const Run r = run_treecode(ctx, o, p, ref, repeat, true);
        row("treecode", prec == GPUFMM_FLOAT32 ? "float" : "double", r.info.theta, r.info.degree, r.info.leaf_size,
            r.plan, r.eval, r.epot, r.egrad);
      }
      // This library's direct sum of the same kernel (all targets).
      if (n <= direct_max) {
        std::vector<double> pot(static_cast<size_t>(n)), g(static_cast<size_t>(3 * n));
        double best = HUGE_VAL;
        for (int i = 0; i < std::max(1, repeat - 1); ++i) {
          const double t0 = now();
          CHECK(gpufmm_direct(ctx, &kern, GPUFMM_FLOAT64, n, p.x.data(), p.q.data(), 0, nullptr, pot.data(),
                              g.data()));
          best = std::min(best, now() - t0);
        }
        row("direct", "double", 0, 0, 0, 0, best, err_at(pot, ref.pot, p.sample, 1), err_at(g, ref.grad, p.sample, 3));
      }
      if (kn == "coulomb") {  // the Laplace FMM at the same eps
        gpufmm_laplace_options_t lo;
        CHECK(gpufmm_laplace_options_init(&lo));
        lo.eps = eps;
        gpufmm_laplace_plan_t lp;
        const double t0 = now();
        CHECK(gpufmm_laplace_plan_create(ctx, &lo, n, p.x.data(), 0, nullptr, &lp));
        const double plan = now() - t0;
        std::vector<double> pot(static_cast<size_t>(n)), g(static_cast<size_t>(3 * n));
        CHECK(gpufmm_laplace_evaluate(lp, p.q.data(), nullptr, pot.data(), g.data()));
        double best = HUGE_VAL;
        for (int i = 0; i < repeat; ++i) {
          const double t1 = now();
          CHECK(gpufmm_laplace_evaluate(lp, p.q.data(), nullptr, pot.data(), g.data()));
          best = std::min(best, now() - t1);
        }
        CHECK(gpufmm_laplace_plan_destroy(lp));
        row("laplace-fmm", "double", 0, 0, 0, plan, best, err_at(pot, ref.pot, p.sample, 1),
            err_at(g, ref.grad, p.sample, 3));
      }
    }
  if (out) std::fclose(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (flag(argc, argv, "--calibrate")) {
    calibrate(argc, argv);
    return 0;
  }
  const bool cpu = flag(argc, argv, "--cpu");
  gpufmm_context_t ctx;
  const bool gpu = !cpu && gpufmm_context_create(0, &ctx) == GPUFMM_SUCCESS;
  if (!gpu) CHECK(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx));
  std::printf("# bench_treecode on %s (%d OpenMP threads)\n", gpu ? "GPU 0" : "the CPU", omp_get_max_threads());
  if (flag(argc, argv, "--scaling"))
    scaling(argc, argv, ctx, gpu);
  else
    sweep(argc, argv, ctx, gpu);
  CHECK(gpufmm_context_destroy(ctx));
  return 0;
}
