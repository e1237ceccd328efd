// libFuzzer target over the C API (issue 14): a byte stream is decoded into a
// sequence of calls - contexts, arrays of arbitrary dtype / rank / dims,
// transfers, array operations, octrees, Laplace plans and evaluates, direct
// sums of every kernel, FMM-FFT plans and transforms, destroys (stale and
// NULL handles included) - with
// arbitrary values: counts, enum values as raw integers, coordinates and
// charges including NaN, Inf and huge values, eps and option fields.
//
// Invariants checked after every call (a violation aborts, which libFuzzer
// reports with the input that caused it):
//  - the status is one of gpufmm_status_t's values;
//  - a failed call leaves a non-empty message naming the function;
//  - a failed call leaves its outputs untouched (poisoned before the call);
//  - on benign inputs (finite, in a unit box, eps >= 1e-10, double) the FMM
//    agrees with the direct sum within 100 eps (relative L2), and the
//    FMM-FFT (complex128, its parameters from eps) with a direct DFT within
//    100 eps.
// Sanitizers (ASan, UBSan) catch memory errors and undefined behaviour.
// Build and run: tools/run-fuzz [seconds] (clang with libFuzzer).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpufmm.h"

extern "C" {
// tests/fuzz/enum_calls.c: enum-typed parameters passed as raw ints, from C.
gpufmm_status_t fuzz_array_create(gpufmm_context_t ctx, int dtype, int rank, const int64_t* dims,
                                  gpufmm_array_t* out);
gpufmm_status_t fuzz_tree_list_size(gpufmm_tree_t tree, int list, int64_t* rows, int64_t* entries);
}

namespace {

// Reads the input front to back; past the end it yields zeros.
class Bytes {
 public:
  Bytes(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool done() const { return i_ >= n_; }
  uint8_t u8() { return i_ < n_ ? d_[i_++] : 0; }
  int small(int m) { return m > 0 ? u8() % m : 0; }  // in [0, m)
  int32_t i32() {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= uint32_t(u8()) << (8 * k);
    return int32_t(v);
  }
  // A count: mostly small, sometimes negative or huge.
  int64_t count(int64_t typical) {
    switch (small(8)) {
      case 0: return -int64_t(u8()) - 1;
      case 1: return int64_t(1) << (40 + small(23));
      default: return small(int(typical) + 1);
    }
  }
  // A double: mostly in [0, 1), sometimes special or extreme.
  double real() {
    switch (small(16)) {
      case 0: return NAN;
      case 1: return u8() & 1 ? INFINITY : -INFINITY;
      case 2: return std::ldexp(1.0, small(2040) - 1020);
      case 3: return -std::ldexp(double(u8()), small(80) - 40);
      case 4: return 0.0;
      default: return double(uint32_t(i32())) / 4294967296.0;
    }
  }
  // An enum-typed argument as a raw integer: usually valid, sometimes not.
  int enumval(int nvalid) {
    switch (small(6)) {
      case 0: return i32();
      case 1: return -1;
      default: return small(nvalid);
    }
  }

 private:
  const uint8_t* d_;
  size_t n_, i_ = 0;
};

[[noreturn]] void violated(const char* what, const char* call) {
  std::fprintf(stderr, "fuzz_c_api: invariant violated after %s: %s (last message: %s)\n", call, what,
               gpufmm_last_error_message());
  std::abort();
}

// The status invariants of one call.
void check(gpufmm_status_t s, const char* call) {
  if (int(s) < 0 || int(s) > int(GPUFMM_ERROR_COMMUNICATION)) violated("status out of range", call);
  if (s == GPUFMM_ERROR_INTERNAL) violated("GPUFMM_ERROR_INTERNAL", call);
  if (s != GPUFMM_SUCCESS) {
    const std::string m = gpufmm_last_error_message();
    if (m.empty()) violated("empty message on failure", call);
    if (m.find(call) == std::string::npos) violated("message does not name the function", call);
  }
}

constexpr double kPoison = -12345.678;

bool untouched(const std::vector<double>& v) {
  for (double x : v)
    if (!(x == kPoison)) return false;
  return true;
}

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double e = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    e += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  return n > 0 ? std::sqrt(e / n) : std::sqrt(e);
}

struct State {
  std::vector<gpufmm_context_t> ctx;  // live and destroyed (stale) ones
  std::vector<gpufmm_array_t> arr;
  std::vector<gpufmm_laplace_plan_t> plan;
  std::vector<int64_t> plan_n;  // sources of each plan (targets = sources)
  int plans_made = 0, big_plans = 0;  // op_plan calls; those with the larger point cap
  std::vector<gpufmm_tree_t> tree;
  std::vector<gpufmm_fft_plan_t> fft;
};

template <class H>
H pick(Bytes& b, const std::vector<H>& v) {
  if (v.empty() || b.small(8) == 0) return nullptr;  // NULL now and then
  return v[size_t(b.small(int(v.size())))];
}

gpufmm_context_t live_or_new(Bytes& b, State& st) {
  gpufmm_context_t c = pick(b, st.ctx);
  if (c) return c;
  check(gpufmm_context_create(GPUFMM_DEVICE_CPU, &c), "gpufmm_context_create");
  st.ctx.push_back(c);
  return c;
}

std::vector<double> points(Bytes& b, int64_t n, bool benign) {
  std::vector<double> p(size_t(3 * n));
  for (auto& x : p) x = benign ? double(b.u8()) / 256.0 + 1e-3 * double(b.small(7)) : b.real();
  return p;
}

void op_array(Bytes& b, State& st) {
  gpufmm_context_t c = live_or_new(b, st);
  const int dtype = b.enumval(6), rank = b.small(5);
  int64_t dims[3] = {b.count(40), b.count(4), b.count(3)};
  gpufmm_array_t a = reinterpret_cast<gpufmm_array_t>(0x1);
  const gpufmm_status_t s = fuzz_array_create(c, dtype, rank, dims, &a);
  check(s, "gpufmm_array_create");
  if (s != GPUFMM_SUCCESS) {
    if (a != reinterpret_cast<gpufmm_array_t>(0x1)) violated("output written on failure", "gpufmm_array_create");
    return;
  }
  st.arr.push_back(a);
  int64_t n = 0;
  check(gpufmm_array_size(a, &n), "gpufmm_array_size");
  std::vector<double> host(size_t(std::min<int64_t>(n, 4096)) * 2 + 2);
  for (auto& x : host) x = b.real();
  check(gpufmm_array_upload(a, host.data(), b.count(n)), "gpufmm_array_upload");
}

void op_array_math(Bytes& b, State& st) {
  gpufmm_array_t x = pick(b, st.arr), y = pick(b, st.arr);
  double out[2] = {kPoison, kPoison};
  double alpha[2] = {b.real(), b.real()};
  switch (b.small(8)) {
    case 0: check(gpufmm_array_sum(x, out), "gpufmm_array_sum"); break;
    case 1: check(gpufmm_array_min(x, out), "gpufmm_array_min"); break;
    case 2: check(gpufmm_array_max(x, out), "gpufmm_array_max"); break;
    case 3: check(gpufmm_array_nrm2(x, out), "gpufmm_array_nrm2"); break;
    case 4: check(gpufmm_array_dot(x, y, out), "gpufmm_array_dot"); break;
    case 5: check(gpufmm_array_axpy(alpha, x, y), "gpufmm_array_axpy"); break;
    case 6: check(gpufmm_array_scal(alpha, x), "gpufmm_array_scal"); break;
    default: check(gpufmm_array_copy(x, y), "gpufmm_array_copy"); break;
  }
}

void op_direct(Bytes& b, State& st) {
  gpufmm_context_t c = live_or_new(b, st);
  gpufmm_kernel_t k{};  // a hand-made kernel below: no stray expression or function fields
  double params[4] = {b.real(), b.real(), b.real(), b.real()};
  const int type = b.enumval(4), np = b.small(4);
  const gpufmm_status_t sk = gpufmm_kernel_init(&k, type, np, params);
  check(sk, "gpufmm_kernel_init");
  if (sk != GPUFMM_SUCCESS) k.type = b.i32();  // a hand-made, bad kernel
  const int64_t ns = b.count(30), nt = b.count(20);
  const bool benign = b.small(2) == 0;
  const auto src = points(b, std::max<int64_t>(0, std::min<int64_t>(ns, 64)), benign);
  const auto trg = points(b, std::max<int64_t>(0, std::min<int64_t>(nt, 64)), benign);
  std::vector<double> q(src.size() / 3 + 1);
  for (auto& v : q) v = benign ? double(b.u8()) / 128.0 - 1.0 : b.real();
  // At the sources (targets NULL: nsrc results) or at the separate targets
  // (their count). The harness once passed the sources' count with the
  // separate targets, or an empty target vector's NULL data(), and read or
  // wrote past its own buffers (tools/run-fuzz -seed=7 and -seed=8:
  // tests/fuzz/corpus/direct-no-targets, direct-target-count-*).
  const bool src_count = b.small(2) == 0;
  const bool at_src = src_count && b.small(2);
  const int64_t m = at_src ? int64_t(src.size() / 3) : int64_t(trg.size() / 3);
  std::vector<double> pot(size_t(m) + 1, kPoison), grad(3 * size_t(m) + 3, kPoison);
  static const double kNoTargets[3] = {0, 0, 0};  // separate targets, even none, are not NULL
  const double* targets = at_src ? nullptr : trg.empty() ? kNoTargets : trg.data();
  const gpufmm_status_t s =
      gpufmm_direct(c, &k, b.enumval(12), std::min<int64_t>(ns, int64_t(src.size() / 3)), src.data(), q.data(), m,
                    targets, b.small(4) ? pot.data() : nullptr, b.small(4) ? grad.data() : nullptr);
  check(s, "gpufmm_direct");
  if (s != GPUFMM_SUCCESS && !(untouched(pot) && untouched(grad))) violated("outputs written on failure", "gpufmm_direct");
}

void op_tree(Bytes& b, State& st) {
  gpufmm_context_t c = live_or_new(b, st);
  gpufmm_tree_options_t o;
  check(gpufmm_tree_options_init(&o), "gpufmm_tree_options_init");
  if (b.small(2)) o.l_max = b.small(2) ? b.small(8) - 1 : b.i32();
  if (b.small(2)) o.s_max = b.small(2) ? b.small(40) : b.i32();
  if (b.small(3) == 0) o.max_level = b.i32();
  if (b.small(3) == 0) o.cube_given = b.enumval(2);
  if (o.cube_given == 1) {
    o.cube_center[0] = b.real(), o.cube_center[1] = b.real(), o.cube_center[2] = b.real();
    o.cube_side = b.real();
  }
  if (b.small(3) == 0) o.lists = b.i32();
  if (b.small(2)) o.kind = b.enumval(2);
  const int64_t n = std::min<int64_t>(b.count(60), 200);
  const auto src = points(b, std::max<int64_t>(n, 0), b.small(2) == 0);
  gpufmm_tree_t t = nullptr;
  const gpufmm_status_t s = gpufmm_tree_build(c, &o, n, src.data(), n, nullptr, &t);
  check(s, "gpufmm_tree_build");
  if (s != GPUFMM_SUCCESS) {
    if (t != nullptr) violated("output written on failure", "gpufmm_tree_build");
    return;
  }
  st.tree.push_back(t);
  gpufmm_tree_stats_t ts;
  check(gpufmm_tree_stats(t, &ts), "gpufmm_tree_stats");
  int64_t rows = 0, entries = 0;
  check(fuzz_tree_list_size(t, b.enumval(4), &rows, &entries), "gpufmm_tree_list_size");
}

// Several densities and the Hessian on plan p (n sources src, targets at
// the sources): outputs untouched on failure; with compare_eps > 0, the
// Hessian within 100 compare_eps of gpufmm_laplace_direct_nd.
void op_evaluate_nd(Bytes& b, gpufmm_context_t c, gpufmm_laplace_plan_t p, const std::vector<double>& src, int64_t n,
                    double compare_eps) {
  const bool benign = compare_eps > 0;
  // nd < 1 is an error; a larger nd is 1..8: the harness holds nd x n
  // densities and results (an nd of 2^30 asked it for 100+ GB, an
  // out-of-memory abort of the harness itself, not of the library).
  int nd = b.small(4) ? 1 + b.small(4) : int(b.i32());
  if (nd > 8) nd = 1 + nd % 8;
  const size_t m = size_t(std::max(nd, 1)) * size_t(std::max<int64_t>(n, 0));
  std::vector<double> q(m + 1), d(3 * m + 3);
  for (auto& v : q) v = benign ? double(b.u8()) / 128.0 - 1.0 : b.real();
  for (auto& v : d) v = benign ? double(b.u8()) / 128.0 - 1.0 : b.real();
  const double* dip = b.small(2) == 0 ? d.data() : nullptr;
  std::vector<double> pot(m + 1, kPoison), grad(3 * m + 3, kPoison), hess(6 * m + 6, kPoison);
  const bool want_pot = b.small(3) != 0, want_grad = b.small(3) != 0, want_hess = b.small(4) != 0;
  const gpufmm_status_t s = gpufmm_laplace_evaluate_nd(p, nd, q.data(), dip, want_pot ? pot.data() : nullptr,
                                                       want_grad ? grad.data() : nullptr,
                                                       want_hess ? hess.data() : nullptr);
  check(s, "gpufmm_laplace_evaluate_nd");
  if (s != GPUFMM_SUCCESS) {
    if (!(untouched(pot) && untouched(grad) && untouched(hess)))
      violated("outputs written on failure", "gpufmm_laplace_evaluate_nd");
    return;
  }
  if (!benign || !want_hess || n < 2) return;
  std::vector<double> ge(3 * m), he(6 * m);
  check(gpufmm_laplace_direct_nd(c, GPUFMM_FLOAT64, nd, n, src.data(), q.data(), dip, 0, nullptr, nullptr, ge.data(),
                                 he.data()),
        "gpufmm_laplace_direct_nd");
  hess.resize(6 * m);
  if (rel_l2(hess, he) > 100 * compare_eps)
    violated("FMM Hessian beyond 100 eps of the direct sum", "gpufmm_laplace_evaluate_nd");
}

// At most kMaxPlans plan creations per input (one with the larger point cap
// below): a plan with a far field can take seconds under ASan (calibration),
// and the input's total stays well inside the -timeout of tools/run-fuzz.
constexpr int kMaxPlans = 4;

void op_plan(Bytes& b, State& st) {
  if (st.plans_made >= kMaxPlans) return;
  ++st.plans_made;
  gpufmm_context_t c = live_or_new(b, st);
  gpufmm_laplace_options_t o;
  check(gpufmm_laplace_options_init(&o), "gpufmm_laplace_options_init");
  const bool benign = b.small(2) == 0;
  // Cost under ASan: a plan builds translation tables for each p it uses
  // (~175 p^3 bytes; 50 ms at p = 16, 1.6 s at p = 50), also for the
  // model's p when a sparse tree then takes 8 more terms, and for each p its
  // calibration tries. The library keeps them per process (LRU, 64 MB per
  // precision): every p up to ~25 and a few large ones fit, 1..50 does not,
  // and inputs sweeping p rebuilt tables on most plans (15-35 executions/s).
  // So eps is 1e-1..1e-4 on 7 benign plans in 8 (p <= 12, 20 in a sparse
  // tree), else 1e-5, 1e-6 or 1e-10 (p 17..50, a calibration up to the
  // largest); a forced p is 1..17 (17: above float's largest), 50 (the
  // largest: arrays of kMaxP, scalar M2L above p = 32) or 51, or any int.
  static const double kRareEps[3] = {1e-5, 1e-6, 1e-10};
  o.eps = benign ? (b.small(8) ? std::pow(10.0, -1.0 - b.small(4)) : kRareEps[b.small(3)]) : b.real();
  if (b.small(3) == 0) o.precision = b.enumval(6);
  if (b.small(3) == 0) o.p = b.small(2) ? (b.small(8) ? 1 + b.small(17) : 50 + b.small(2)) : b.i32();
  if (b.small(3) == 0) o.l_max = b.small(2) ? b.small(6) - 1 : b.i32();
  if (b.small(3) == 0) o.s_max = b.small(2) ? b.small(40) - 1 : b.i32();
  if (b.small(4) == 0) o.stencil = b.enumval(2);
  if (b.small(4) == 0) o.variable_truncation = b.enumval(2);
  if (b.small(6) == 0) o.gpu_m2l = b.enumval(8);
  if (b.small(6) == 0) o.calibrate = b.enumval(2);  // 1 (default): test evaluates at plan time
  if (b.small(6) == 0) o.tree = b.enumval(3);
  if (b.small(6) == 0) o.densities = b.enumval(3);
  // Points: a far-field evaluate costs ~p^3 per M2L translation (under ASan
  // ~70 us at p = 8, 3 ms at p = 50: 16 points at l_max 3 take 14 ms at
  // p = 8, 128 points 260 ms) and a calibration runs 3-24 of them at plan
  // time (48 points at l_max 4, eps 1e-4, no variable truncation: p 30, 10
  // s). So a plan has at most 12 points (6 where p may exceed 20: a forced
  // p above 17, eps below 1e-4); on one plan in 8, at most one per input, up
  // to 24 (16), or 48 at l_max 2:
  // calibrations on dozens of points stay reachable (46 points at l_max 2
  // were a finding); up to 400 without a far field (l_max 0 or 1).
  // Negative counts are passed as they are, huge ones (2^40 and more) as
  // the cap.
  const bool high_p = o.p != 0 ? o.p > 17 : !(o.eps >= 1e-4);
  const bool big = b.small(8) == 0 && st.big_plans++ == 0;
  const int64_t cap = o.l_max == 0 || o.l_max == 1 ? 400
                      : big                        ? (high_p ? 16 : o.l_max == 2 ? 48 : 24)
                                                   : (high_p ? 6 : 12);
  const int64_t n = std::min<int64_t>(b.count(std::min<int64_t>(cap, 120)), cap);
  const auto src = points(b, std::max<int64_t>(n, 0), benign);
  gpufmm_laplace_plan_t p = nullptr;
  const gpufmm_status_t s = gpufmm_laplace_plan_create(c, &o, n, src.data(), 0, nullptr, &p);
  check(s, "gpufmm_laplace_plan_create");
  if (s != GPUFMM_SUCCESS) {
    if (p != nullptr) violated("output written on failure", "gpufmm_laplace_plan_create");
    return;
  }
  st.plan.push_back(p);
  st.plan_n.push_back(n);
  // Evaluate, and on benign inputs compare with the direct sum.
  std::vector<double> q(size_t(n) + 1);
  for (auto& v : q) v = benign ? double(b.u8()) / 128.0 - 1.0 : b.real();
  std::vector<double> pot(size_t(n) + 1, kPoison), grad(3 * size_t(n) + 3, kPoison);
  const gpufmm_status_t se = gpufmm_laplace_evaluate(p, q.data(), nullptr, pot.data(), grad.data());
  check(se, "gpufmm_laplace_evaluate");
  if (se != GPUFMM_SUCCESS) {
    if (!(untouched(pot) && untouched(grad))) violated("outputs written on failure", "gpufmm_laplace_evaluate");
    return;
  }
  gpufmm_laplace_info_t info;
  check(gpufmm_laplace_plan_info(p, &info), "gpufmm_laplace_plan_info");
  if (benign && n > 1 && o.eps >= 1e-10 && info.precision == GPUFMM_FLOAT64 && o.p == 0) {
    std::vector<double> pe(static_cast<size_t>(n)), ge(3 * static_cast<size_t>(n));
    check(gpufmm_laplace_direct(c, GPUFMM_FLOAT64, n, src.data(), q.data(), nullptr, 0, nullptr, pe.data(),
                                ge.data()),
          "gpufmm_laplace_direct");
    pot.resize(size_t(n));
    if (rel_l2(pot, pe) > 100 * o.eps) violated("FMM potential beyond 100 eps of the direct sum", "gpufmm_laplace_evaluate");
  }
  if (b.small(2))
    op_evaluate_nd(b, c, p, src, n,
                   benign && o.eps >= 1e-10 && info.precision == GPUFMM_FLOAT64 && o.p == 0 ? o.eps : 0.0);
}

void op_fft(Bytes& b, State& st) {
  gpufmm_context_t c = live_or_new(b, st);
  gpufmm_fft_options_t o;
  check(gpufmm_fft_options_init(&o), "gpufmm_fft_options_init");
  const bool benign = b.small(2) == 0;
  o.n = benign ? 4 * (2 + b.small(60)) : std::min<int64_t>(b.count(300), 4096);
  o.eps = benign ? std::pow(10.0, -2.0 - b.small(12)) : (b.small(2) ? 0.0 : b.real());
  if (!benign) {
    if (b.small(3) == 0) o.dtype = b.enumval(6);
    if (b.small(3) == 0) o.p = b.small(2) ? b.small(40) : b.i32();
    if (b.small(3) == 0) o.ml = b.small(2) ? b.small(40) : b.i32();
    if (b.small(3) == 0) o.b = b.small(2) ? b.small(8) : b.i32();
    if (b.small(3) == 0) o.q = b.small(2) ? b.small(30) : b.i32();
    if (b.small(4) == 0) o.direction = b.small(5) - 2;
    if (b.small(6) == 0) o.tune = b.small(3);
    if (b.small(6) == 0) o.post = b.small(2) ? b.small(3) : b.i32();
  }
  gpufmm_fft_plan_t p = nullptr;
  // Sometimes through the several-GPU entry point: 0 to 3 of the contexts
  // (one gives the plain plan; CPU contexts among several are refused).
  const bool multi = b.small(4) == 0;
  const char* create = multi ? "gpufmm_fft_plan_create_multi" : "gpufmm_fft_plan_create";
  gpufmm_context_t cs[3] = {c, pick(b, st.ctx), pick(b, st.ctx)};
  const gpufmm_status_t s = multi ? gpufmm_fft_plan_create_multi(b.small(8) ? cs : nullptr, int(b.small(4)), &o, &p)
                                  : gpufmm_fft_plan_create(c, &o, &p);
  check(s, create);
  if (s != GPUFMM_SUCCESS) {
    if (p != nullptr) violated("output written on failure", create);
    return;
  }
  st.fft.push_back(p);
  gpufmm_fft_info_t info;
  check(gpufmm_fft_plan_info(p, &info), "gpufmm_fft_plan_info");
  // Host transform (reals of the plan's dtype; complex128 counted as doubles).
  const int64_t n = info.n;
  const bool single = info.dtype == GPUFMM_COMPLEX64;
  std::vector<double> x(2 * size_t(n)), y(2 * size_t(n), kPoison);
  for (auto& v : x) v = benign ? double(b.u8()) / 128.0 - 1.0 : b.real();
  const int dir = b.small(4) == 0 ? b.i32() : (b.small(2) ? GPUFMM_FFT_FORWARD : GPUFMM_FFT_INVERSE);
  gpufmm_status_t se;
  if (single) {
    std::vector<float> xf(x.begin(), x.end()), yf(x.size(), float(kPoison));
    se = gpufmm_fft_execute_host(p, xf.data(), yf.data(), dir);
    for (size_t i = 0; i < y.size(); ++i) y[i] = yf[i] == float(kPoison) ? kPoison : yf[i];
  } else {
    se = gpufmm_fft_execute_host(p, x.data(), y.data(), dir);
  }
  check(se, "gpufmm_fft_execute_host");
  if (se != GPUFMM_SUCCESS) {
    if (!untouched(y)) violated("output written on failure", "gpufmm_fft_execute_host");
  } else if (benign && !single && o.eps >= 1e-13) {
    std::vector<double> ref(x.size());
    for (int64_t k = 0; k < n; ++k) {
      long double re = 0, im = 0;
      for (int64_t j = 0; j < n; ++j) {
        const long double a = dir * 2 * 3.141592653589793238462643383279502884L * ((j * k) % n) / n;
        re += x[2 * j] * std::cos(a) - x[2 * j + 1] * std::sin(a);
        im += x[2 * j] * std::sin(a) + x[2 * j + 1] * std::cos(a);
      }
      ref[2 * k] = double(re), ref[2 * k + 1] = double(im);
    }
    if (rel_l2(y, ref) > 100 * o.eps) violated("FMM-FFT beyond 100 eps of the direct DFT", "gpufmm_fft_execute_host");
  }
  // Device-array transform on arrays of any dtype and size.
  gpufmm_array_t a = pick(b, st.arr), d = b.small(2) ? a : pick(b, st.arr);
  check(gpufmm_fft_execute(p, a, d, dir), "gpufmm_fft_execute");
  if (b.small(3) == 0) {
    gpufmm_array_t ins[1] = {a}, outs[1] = {d};
    check(gpufmm_fft_execute_multi(p, b.small(8) ? ins : nullptr, b.small(8) ? outs : nullptr, dir),
          "gpufmm_fft_execute_multi");
  }
}

void op_destroy(Bytes& b, State& st) {
  switch (b.small(5)) {
    case 0: check(gpufmm_array_destroy(pick(b, st.arr)), "gpufmm_array_destroy"); break;
    case 1: check(gpufmm_laplace_plan_destroy(pick(b, st.plan)), "gpufmm_laplace_plan_destroy"); break;
    case 2: check(gpufmm_tree_destroy(pick(b, st.tree)), "gpufmm_tree_destroy"); break;
    case 3: check(gpufmm_fft_plan_destroy(pick(b, st.fft)), "gpufmm_fft_plan_destroy"); break;
    default: check(gpufmm_context_destroy(pick(b, st.ctx)), "gpufmm_context_destroy"); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes b(data, size);
  State st;
  for (int step = 0; step < 24 && !b.done(); ++step) {
    switch (b.small(7)) {
      case 0: op_array(b, st); break;
      case 1: op_array_math(b, st); break;
      case 2: op_direct(b, st); break;
      case 3: op_tree(b, st); break;
      case 4: op_plan(b, st); break;
      case 5: op_fft(b, st); break;
      default: op_destroy(b, st); break;
    }
  }
  // Clean up whatever is still alive (destroying a stale handle is an error,
  // not a crash; children before their contexts).
  for (auto p : st.plan) gpufmm_laplace_plan_destroy(p);
  for (auto p : st.fft) gpufmm_fft_plan_destroy(p);
  for (auto t : st.tree) gpufmm_tree_destroy(t);
  for (auto a : st.arr) gpufmm_array_destroy(a);
  for (auto c : st.ctx) gpufmm_context_destroy(c);
  return 0;
}
