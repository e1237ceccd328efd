// Parameters of the FMM-FFT: the admitted sizes, eps -> Q, and the flop /
// memory model of papers/002 sec. 5 that ranks the (P, M_L, L, B) of an N.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "fmmfft/plan.hpp"

namespace gpufmm {
namespace fmmfft {

const char* stage_name(int s) {
  static const char* names[kStages] = {"S2M", "M2M", "M2L", "M2L-B", "REDUCE", "L2L", "L2T", "S2T+POST", "FFT-P", "FFT-M"};
  return s >= 0 && s < kStages ? names[s] : "?";
}

namespace {

// Achieved relative L2 error of the whole transform against FFTW, per Q
// (index Q; 0 and 1 unused), the largest over N = 2^12 .. 3 2^20 with
// (P, M_L, B) from (8, 128, 3) to (4096, 16, 3), both directions, uniform
// random input in [-1, 1]^2 (printed by tests/cxx/
// test_fmmfft_calibration_long.cpp on the CPU backend), for M_L >= 8
// (leaf_factor below). Both precisions stop at their rounding floor, which
// grows with P (double: 2e-15 at P <= 1024, 7e-15 at P = 4096); at Q = 7
// the H100 measured 5.0e-7 in float at N = 2^26.
constexpr double kErrDouble[kMaxQ + 1] = {1,       1,       3.5e-3,  5.2e-4,  7.8e-5,  1.3e-5,  2.1e-6,
                                          3.5e-7,  5.4e-8,  7.3e-9,  1.4e-9,  2.8e-10, 3.8e-11, 8.3e-12,
                                          1.2e-12, 1.8e-13, 2.9e-14, 7.5e-15, 7.4e-15, 7.4e-15, 7.4e-15,
                                          7.4e-15, 7.4e-15, 7.4e-15, 7.4e-15};
constexpr double kErrFloat[kMaxQ + 1] = {1,      1,      3.5e-3, 5.2e-4, 7.8e-5, 1.3e-5, 2.1e-6, 6.0e-7, 3.8e-7,
                                         3.8e-7, 3.8e-7, 3.8e-7, 3.8e-7, 3.8e-7, 3.8e-7, 3.8e-7, 3.8e-7, 3.8e-7,
                                         3.8e-7, 3.8e-7, 3.8e-7, 3.8e-7, 3.8e-7, 3.8e-7, 3.8e-7};
constexpr double kSafety = 2;  // the table's error times this must meet eps

int64_t ilog2_exact(int64_t v) {  // log2 of a power of two, else -1
  if (v <= 0 || (v & (v - 1)) != 0) return -1;
  int64_t l = 0;
  while ((int64_t(1) << l) < v) ++l;
  return l;
}

}  // namespace

// Small leaves converge more slowly: the FMMs' targets sit p / P of a point
// off the sources, which brings the kernel's poles up to 1 / M_L of a leaf
// closer to the far boxes. Measured error ratio to M_L >= 8 at Q = 12..18
// (tests/cxx/test_fmmfft_calibration_long.cpp): 3 at M_L = 4, 14 at
// M_L = 2; M_L = 1 converges too slowly to be offered.
double leaf_factor(int ml) { return ml >= 8 ? 1 : ml >= 4 ? 4 : 16; }

double predicted_error(int Q, bool single, int ml) {
  Q = std::clamp(Q, 0, kMaxQ);
  return (single ? kErrFloat[Q] : kErrDouble[Q]) * leaf_factor(ml);
}

double default_eps(bool single) { return single ? 1e-6 : 2e-14; }

int order_for(double eps, bool single, int ml) {
  for (int Q = 2; Q <= kMaxQ; ++Q)
    if (kSafety * predicted_error(Q, single, ml) <= eps) return Q;
  fail(GPUFMM_ERROR_ACCURACY, "eps = ", eps, " is below what the ", single ? "complex64" : "complex128",
       " FMM-FFT reaches (", kSafety * predicted_error(kMaxQ, single, ml), ")");
}

void validate(const Options& o) {
  require(o.dtype == GPUFMM_COMPLEX64 || o.dtype == GPUFMM_COMPLEX128, GPUFMM_ERROR_TYPE_MISMATCH,
          "options field 'dtype' = ", int(o.dtype), " is not GPUFMM_COMPLEX64 or GPUFMM_COMPLEX128");
  require(o.eps == 0 || (o.eps > 0 && o.eps < 1), GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'eps' = ", o.eps,
          " is not 0 (the default) or in (0, 1)");
  require((o.P == 0) == (o.ml == 0), GPUFMM_ERROR_INVALID_ARGUMENT, "options fields 'p' = ", o.P, " and 'ml' = ",
          o.ml, ": set both or neither");
  require(o.P == 0 || o.P >= 2, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'p' = ", o.P, " is below 2");
  require(o.ml >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'ml' = ", o.ml, " is negative");
  require(o.B == 0 || (o.B >= 2 && o.B <= 20), GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'b' = ", o.B,
          " is not 0 (from the model) or in 2..20");
  require(o.Q == 0 || (o.Q >= 2 && o.Q <= kMaxQ), GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'q' = ", o.Q,
          " is not 0 (from eps) or in 2..", kMaxQ);
  require(o.direction >= -1 && o.direction <= 1, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'direction' = ",
          o.direction, " is not 0 (both), GPUFMM_FFT_FORWARD or GPUFMM_FFT_INVERSE");
  require(o.tune >= 0 && o.tune <= 64, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'tune' = ", o.tune,
          " is not in 0..64");
  require(o.post == 0 || o.post == 1, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'post' = ", o.post,
          " is not GPUFMM_FFT_POST_FUSED (0) or GPUFMM_FFT_POST_CALLBACK (1)");
}

// The factorizations considered: P <= 4096 (flatter 2D FFTs gain nothing,
// papers/002 sec. 6.3.2, and the transform's rounding grows with P), leaves
// of kMinLeaf <= M_L <= 128 points (the GPU near field keeps 4 M_L entries
// per FMM in shared memory; leaf_factor), L >= 2.
constexpr int64_t kMaxP = 4096;
constexpr int64_t kMaxLeaf = 128;

// Over G ranks (a power of two): G | P (the 2D FFT's output splits into
// whole rows of M) and 2^L >= G (the base level B >= log2 G, B <= L).
bool admitted(int64_t n, int G) {
  if (n < kMinN || n % 4) return false;
  const int64_t lg = ilog2_exact(G);
  for (int64_t P = 2; P <= std::min(n / 4, kMaxP); ++P) {
    if (n % P || P % G) continue;
    const int64_t M = n / P;
    for (int L = 2; L < 62 && M % (int64_t(1) << L) == 0; ++L)
      if ((M >> L) >= kMinLeaf && (M >> L) <= kMaxLeaf && L >= lg) return true;
  }
  return false;
}

void check_size(int64_t n, int G) {
  require(G >= 1 && ilog2_exact(G) >= 0, GPUFMM_ERROR_NOT_SUPPORTED, "the FMM-FFT runs on a power of two of ranks, not ",
          G);
  if (admitted(n, G)) return;
  std::ostringstream near;
  if (n < kMinN) {
    near << "the smallest admitted size is " << kMinN;
  } else {
    int64_t lo = n - 1, hi = n + 1;
    while (lo >= kMinN && !admitted(lo, G)) --lo;
    while (!admitted(hi, G)) ++hi;
    near << "the nearest admitted sizes are ";
    if (lo >= kMinN) near << lo << " and ";
    near << hi;
  }
  std::ostringstream ranks;
  if (G > 1) ranks << ", and over " << G << " ranks P a multiple of " << G << " and 2^L >= " << G;
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'n' = ", n,
       " is not admitted: the FMM-FFT needs N = P M_L 2^L with 2 <= P <= ", kMaxP, ", ", kMinLeaf, " <= M_L <= ",
       kMaxLeaf, ", L >= 2", ranks.str(), "; ", near.str());
}

Model model(const Params& p, int real_bytes, const Machine& m, int G) {
  Model r;
  // One rank's share (sec. 5, per processing element): its N / G inputs,
  // 2^l / G boxes of each level; the base level's M2L-B over its own boxes,
  // the REDUCE over all of them.
  const double C = 2, P1 = p.P - 1, Q = p.Q, ML = p.ml, N = double(p.N) / G;
  const double nL = std::ldexp(1.0, p.L) / G, nB = std::ldexp(1.0, p.B) / G, nBall = std::ldexp(1.0, p.B);
  const double w = real_bytes;
  // Flops (sec. 5.1, G = 1).
  r.flops[kS2M] = r.flops[kL2T] = 2 * C * ML * nL * P1 * Q;
  r.flops[kM2M] = r.flops[kL2L] = 4 * C * (nL - nB) * P1 * Q * Q;
  r.flops[kS2T] = 6 * C * ML * ML * nL * P1;
  // M2L: the translations, plus computing each FMM's entries once per level
  // (papers/002 reads no operator for M2L; its entries differ per FMM):
  // kEntry flops for each of the P - 1 FMMs' ns Q^2 entries.
  constexpr double kEntry = 20;
  r.flops[kM2L] = 6 * C * (2 * nL - 2 * nB) * P1 * Q * Q + kEntry * 4 * (p.L - p.B) * P1 * Q * Q;
  r.flops[kM2LB] = 2 * C * nB * std::max(0.0, nBall - 3) * P1 * Q * Q + kEntry * std::max(0.0, nBall - 3) * P1 * Q * Q;
  r.flops[kReduce] = C * nBall * P1 * Q;
  r.flops[kFftP] = 5 * N * std::log2(double(p.P));
  r.flops[kFftM] = 5 * N * std::log2(double(p.M));  // over G ranks: with its transposition
  // Bytes this implementation moves (sec. 5.3, with the fusions of plan.hpp).
  const double expL = C * P1 * Q * nL;
  r.bytes[kS2M] = w * (C * N + expL);
  r.bytes[kM2M] = w * 3 * C * P1 * Q * (nL - nB);
  r.bytes[kL2L] = w * 5 * C * P1 * Q * (nL - nB);
  r.bytes[kM2L] = w * 2 * C * P1 * Q * (2 * nL - 2 * nB);
  r.bytes[kM2LB] = w * C * P1 * Q * (nB + nBall);
  r.bytes[kReduce] = w * C * P1 * Q * nBall;
  r.bytes[kL2T] = w * (expL + C * N);
  r.bytes[kS2T] = w * 3 * C * N;
  r.bytes[kFftP] = w * 2 * C * N;
  r.bytes[kFftM] = w * 2 * C * N;
  // Calls per stage (kernel launches, BLAS batches, OpenMP regions): what
  // the roofline leaves out and small N pays; one per level for M2M, M2L,
  // L2L.
  const double levels = p.L - p.B;
  const double calls[kStages] = {1, levels, levels, 1, 1, levels, 1, 1, 1, 1};
  // GEMMs of few rows run below the roofline: R = 2 (P - 1) rows per
  // product (papers/002 sec. 6.3.2: P = 32 is already slower).
  const double rows_eff = std::min(1.0, 2 * P1 / 128.0);
  for (int s = 0; s < kStages; ++s) {
    double g = m.gamma;
    if (s == kS2M || s == kM2M || s == kL2L || s == kL2T || s == kM2L || s == kM2LB) g *= rows_eff;
    if (s == kS2T || s == kM2L || s == kM2LB) g *= 0.5;  // hand-written kernels, not GEMMs
    r.seconds[s] = std::max(r.flops[s] / g, r.bytes[s] / m.beta) + calls[s] * m.latency;
    r.total += r.seconds[s];
  }
  return r;
}

std::vector<Params> candidates(const Options& o, double eps, const Machine& m, int real_bytes, size_t keep,
                               int G) {
  const int64_t N = o.n;
  const int lg = int(ilog2_exact(G));
  // Base levels tried: from max(2, log2 G) (every rank holds whole boxes of
  // level B) to two above it, at most L.
  const int B_lo = std::max(2, lg), B_hi = std::max(4, lg + 2);
  std::vector<std::pair<double, Params>> all;
  bool unreachable = false;
  auto consider = [&](int64_t P, int64_t ml, int B) {
    Params p;
    p.N = N;
    p.P = int(P);
    p.M = N / P;
    p.ml = int(ml);
    p.L = int(ilog2_exact(p.M / ml));
    p.B = B;
    if (o.Q != 0) {
      p.Q = o.Q;
    } else {
      const bool single = real_bytes == 4;
      if (kSafety * predicted_error(kMaxQ, single, p.ml) > eps) {
        unreachable = true;  // eps is beyond this leaf size
        return;
      }
      p.Q = order_for(eps, single, p.ml);
    }
    all.emplace_back(model(p, real_bytes, m, G).total, p);
  };
  if (o.P != 0) {
    require(o.P <= kMaxP && o.ml >= kMinLeaf && o.ml <= kMaxLeaf, GPUFMM_ERROR_INVALID_ARGUMENT,
            "options fields 'p' = ", o.P, " and 'ml' = ", o.ml, ": p must be at most ", kMaxP, " and ml in ",
            kMinLeaf, "..", kMaxLeaf);
    require(N % (int64_t(o.P) * o.ml) == 0 && ilog2_exact(N / (int64_t(o.P) * o.ml)) >= 2,
            GPUFMM_ERROR_INVALID_ARGUMENT, "options fields 'p' = ", o.P, " and 'ml' = ", o.ml, " do not factor n = ",
            N, " as P M_L 2^L with L >= 2");
    const int L = int(ilog2_exact(N / (int64_t(o.P) * o.ml)));
    require(o.B <= L, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'b' = ", o.B, " exceeds the leaf level L = ", L);
    require(o.P % G == 0 && L >= lg, GPUFMM_ERROR_INVALID_ARGUMENT, "options fields 'p' = ", o.P, " and 'ml' = ",
            o.ml, ": over ", G, " ranks p must be a multiple of ", G, " and 2^L (here ", int64_t(1) << L,
            ") at least ", G);
    require(o.B == 0 || o.B >= lg, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'b' = ", o.B, ": over ", G,
            " ranks 2^b must be at least ", G);
    if (o.B != 0)
      consider(o.P, o.ml, o.B);
    else
      for (int B = B_lo; B <= std::min(L, B_hi); ++B) consider(o.P, o.ml, B);
  } else {
    // Leaves of at least 16 (else 8, else kMinLeaf) points where N allows
    // (leaf_factor; float loses a little at 8).
    for (int64_t min_leaf : {int64_t(16), int64_t(8), kMinLeaf}) {
      for (int64_t P = 2; P <= std::min(N / 4, kMaxP); ++P) {
        if (N % P || P % G) continue;
        const int64_t M = N / P;
        for (int L = std::max(2, lg); L < 62 && M % (int64_t(1) << L) == 0; ++L) {
          const int64_t ml = M >> L;
          if (ml > kMaxLeaf || ml < min_leaf) continue;
          if (o.B != 0) {
            if (o.B <= L && o.B >= lg) consider(P, ml, o.B);
          } else {
            for (int B = B_lo; B <= std::min(L, B_hi); ++B) consider(P, ml, B);
          }
        }
      }
      if (!all.empty()) break;
    }
  }
  if (all.empty() && unreachable)
    fail(GPUFMM_ERROR_ACCURACY, "eps = ", eps, " is below what the ", real_bytes == 4 ? "complex64" : "complex128",
         " FMM-FFT reaches with the leaves n = ", N, " admits");
  require(!all.empty(), GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'b' = ", o.B,
          G > 1 ? " exceeds the leaf level L, or is below log2 of the ranks, in" : " exceeds the leaf level L of",
          " every factorization of n = ", N);
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Params> r;
  for (size_t i = 0; i < all.size() && r.size() < std::max<size_t>(keep, 1); ++i) r.push_back(all[i].second);
  return r;
}

}  // namespace fmmfft
}  // namespace gpufmm
