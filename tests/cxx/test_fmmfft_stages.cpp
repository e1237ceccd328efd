// Every stage of the FMM-FFT's FMMs (papers/002 Algorithm 1) on its own,
// against a dense long-double reference built here from the paper's
// formulas (not from src/cxx/fmmfft/operators.hpp): the CPU stages run up
// to a stage, the test reads the workspace and applies the dense operator
// to that stage's actual input. Plus the C API's bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/fft_check.hpp"
#include "core/context.hpp"
#include "fmmfft/plan.hpp"
#include "gpufmm.h"

using namespace gpufmm;
using ld = long double;

namespace {

const ld kPi = 3.141592653589793238462643383279502884L;

struct Ref {
  int Q;
  std::vector<ld> z;
  explicit Ref(int q) : Q(q), z(q) {
    for (int j = 0; j < Q; ++j) z[j] = std::cos((2 * j + 1) * kPi / (2 * Q));
  }
  // l_i(x) over the first-kind nodes: the barycentric form with the weights
  // (-1)^j sin((2j + 1) pi / 2Q) (exact at the nodes).
  ld lag(int i, ld x) const {
    ld num = 0, den = 0;
    for (int j = 0; j < Q; ++j) {
      if (x == z[j]) return i == j ? 1 : 0;
      const ld w = ((j & 1) ? -1 : 1) * std::sin((2 * j + 1) * kPi / (2 * Q)) / (x - z[j]);
      den += w;
      if (j == i) num = w;
    }
    return num / den;
  }
};

ld cot(ld a) { return std::cos(a) / std::sin(a); }

struct Stages : ::testing::Test {
  Context ctx;  // the CPU backend
  fmmfft::Options o;
  std::unique_ptr<fmmfft::Plan> plan;
  std::vector<double> x;
  int64_t N = 0, M = 0, Rr = 0;
  int P = 0, ml = 0, L = 0, B = 0, Q = 0;
  void make(int sign_unused = 0) {
    (void)sign_unused;
    o.n = 1 << 12;
    o.P = 8;
    o.ml = 16;
    o.B = 3;
    o.Q = 10;
    plan = fmmfft::plan_create(ctx, o);
    N = plan->par.N, M = plan->par.M, P = plan->par.P, ml = plan->par.ml, L = plan->par.L, B = plan->par.B,
    Q = plan->par.Q, Rr = 2 * (P - 1);
    ASSERT_EQ(L, 5);
    x = gpufmm_test::random_signal(N, std::random_device{}(), false);
  }
  void run(int last, int sign = -1) {
    std::vector<double> out(x.size());
    fmmfft::detail::execute_cpu(*plan, x.data(), out.data(), sign, last);
  }
  const double* mult(int l) const {
    return static_cast<const double*>(fmmfft::detail::cpu_workspace(*plan).mult) + plan->level_offset[l - B];
  }
  const double* loc(int l) const {
    return static_cast<const double*>(fmmfft::detail::cpu_workspace(*plan).loc) + plan->level_offset[l - B];
  }
  const double* T() const { return static_cast<const double*>(fmmfft::detail::cpu_workspace(*plan).T); }
  // Input row r' (r' = c + 2(p - 1)) of FMM p, point n of the sequence x_p.
  double in(int64_t rp, int64_t n) const { return x[size_t(rp + 2 + 2 * P * ((n % M + M) % M))]; }
};

// Relative max difference of got against ref.
double rel_max(const std::vector<ld>& ref, const double* got) {
  ld e = 0, m = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    e = std::max(e, std::fabs(ref[i] - got[i]));
    m = std::max(m, std::fabs(ref[i]));
  }
  return double(e / m);
}

}  // namespace

TEST_F(Stages, S2MandM2M) {
  make();
  run(fmmfft::kM2M);
  Ref ref(Q);
  std::vector<ld> want(size_t(Rr) * Q << L);
  for (int64_t b = 0; b < (int64_t(1) << L); ++b)
    for (int q = 0; q < Q; ++q)
      for (int64_t r = 0; r < Rr; ++r) {
        ld s = 0;
        for (int m = 0; m < ml; ++m) s += ref.lag(q, -1 + ld(2 * m + 1) / ml) * in(r, m + ml * b);
        want[r + Rr * (q + Q * b)] = s;
      }
  EXPECT_LT(rel_max(want, mult(L)), 1e-14) << "S2M";
  for (int l = L - 1; l >= B; --l) {
    std::vector<ld> w(size_t(Rr) * Q << l);
    const double* c = mult(l + 1);
    for (int64_t b = 0; b < (int64_t(1) << l); ++b)
      for (int q = 0; q < Q; ++q)
        for (int64_t r = 0; r < Rr; ++r) {
          ld s = 0;
          for (int k = 0; k < Q; ++k)
            s += ref.lag(q, (ref.z[k] - 1) / 2) * c[r + Rr * (k + Q * (2 * b))] +
                 ref.lag(q, (ref.z[k] + 1) / 2) * c[r + Rr * (k + Q * (2 * b + 1))];
          w[r + Rr * (q + Q * b)] = s;
        }
    EXPECT_LT(rel_max(w, mult(l)), 1e-14) << "M2M level " << l;
  }
}

TEST_F(Stages, M2LandL2L) {
  make();
  run(fmmfft::kL2L);
  Ref ref(Q);
  for (int l = B; l <= L; ++l) {
    const int64_t nb = int64_t(1) << l;
    std::vector<ld> w(size_t(Rr) * Q * nb);
    for (int64_t b = 0; b < nb; ++b)
      for (int i = 0; i < Q; ++i)
        for (int64_t r = 0; r < Rr; ++r) {
          const int p = int(r / 2) + 1;
          ld s = 0;
          // M2L: the boxes whose parents neighbour b's parent but that do not
          // neighbour b (every non-neighbour at the base level), cyclic.
          for (int64_t c = 0; c < nb; ++c) {
            const int64_t d = ((c - b) % nb + nb) % nb;  // c = b + d
            if (d == 0 || d == 1 || d == nb - 1) continue;
            if (l > B) {
              const int64_t pd = (((c >> 1) - (b >> 1)) % (nb / 2) + nb / 2) % (nb / 2);
              if (!(pd == 0 || pd == 1 || pd == nb / 2 - 1)) continue;
            }
            const int64_t sgn = d > nb / 2 ? d - nb : d;
            for (int j = 0; j < Q; ++j)
              s += cot(kPi / nb * ((ref.z[j] - ref.z[i]) / 2 + sgn) + kPi * p / N) * mult(l)[r + Rr * (j + Q * c)];
          }
          if (l > B) {  // L2L from the parent
            const double* par = loc(l - 1);
            const ld u = (b & 1) ? (ref.z[i] + 1) / 2 : (ref.z[i] - 1) / 2;  // the child node in the parent
            for (int k = 0; k < Q; ++k) s += ref.lag(k, u) * par[r + Rr * (k + Q * (b / 2))];
          }
          w[r + Rr * (i + Q * b)] = s;
        }
    EXPECT_LT(rel_max(w, loc(l)), 1e-13) << "M2L (+ L2L) level " << l;
  }
}

TEST_F(Stages, L2TthenS2TwithPost) {
  make();
  Ref ref(Q);
  for (int sign : {-1, 1}) {
    run(fmmfft::kL2T, sign);
    std::vector<double> t_l2t(T(), T() + 2 * N);
    std::vector<ld> w(size_t(Rr) * M);
    for (int64_t n = 0; n < M; ++n)
      for (int64_t r = 0; r < Rr; ++r) {
        const int64_t b = n / ml, m = n % ml;
        ld s = 0;
        for (int q = 0; q < Q; ++q) s += ref.lag(q, -1 + ld(2 * m + 1) / ml) * loc(L)[r + Rr * (q + Q * b)];
        w[r + Rr * n] = s;
      }
    std::vector<double> got(w.size());
    for (int64_t n = 0; n < M; ++n)
      for (int64_t r = 0; r < Rr; ++r) got[r + Rr * n] = t_l2t[2 + r + 2 * P * n];
    EXPECT_LT(rel_max(w, got.data()), 1e-14) << "L2T";

    run(fmmfft::kS2T, sign);
    std::vector<ld> want(2 * size_t(N));
    std::vector<double> have(T(), T() + 2 * N);
    for (int p = 0; p < P; ++p) {
      ld rre = 0, rim = 0;  // r_p: the sum of x_p
      for (int64_t n = 0; n < M; ++n) rre += in(2 * p - 2, n), rim += in(2 * p - 1, n);
      const ld a = kPi * p / P, rho_re = std::cos(a) * std::sin(a) / M, rho_im = sign * std::sin(a) * std::sin(a) / M;
      for (int64_t n = 0; n < M; ++n) {
        const size_t k = 2 * (p + size_t(P) * n);
        if (p == 0) {
          want[k] = x[k], want[k + 1] = x[k + 1];
          continue;
        }
        ld re = t_l2t[k], im = t_l2t[k + 1];
        const int64_t b = n / ml;
        for (int64_t j = (b - 1) * ml; j < (b + 2) * ml; ++j) {  // the three leaves, cyclic
          const ld c = cot(kPi * (j - n) / M + kPi * p / N);
          re += c * in(2 * p - 2, j);
          im += c * in(2 * p - 1, j);
        }
        re += sign * rim, im -= sign * rre;  // T - sign i r
        want[k] = rho_re * re - rho_im * im;
        want[k + 1] = rho_re * im + rho_im * re;
      }
    }
    EXPECT_LT(rel_max(want, have.data()), 1e-13) << "S2T + POST, sign " << sign;
  }
}

TEST(FmmFftApi, BadInput) {
  gpufmm_context_t ctx;
  ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx), GPUFMM_SUCCESS);
  gpufmm_fft_options_t o;
  ASSERT_EQ(gpufmm_fft_options_init(&o), GPUFMM_SUCCESS);
  gpufmm_fft_plan_t h = nullptr;
  auto create = [&](gpufmm_fft_options_t opt) { return gpufmm_fft_plan_create(ctx, &opt, &h); };
  auto msg = [] { return std::string(gpufmm_last_error_message()); };
  o.n = 1000002;  // 2 * 500001: not a multiple of 4
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("1000000 and 1000004"), std::string::npos) << msg();
  o.n = 4;
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("smallest admitted size is 16"), std::string::npos) << msg();
  o.n = 4 * 100003;  // 4 times a prime above the largest P: no factorization
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("nearest admitted sizes"), std::string::npos) << msg();
  o.n = 1 << 12;
  o.dtype = GPUFMM_FLOAT64;
  EXPECT_EQ(create(o), GPUFMM_ERROR_TYPE_MISMATCH);
  o.dtype = GPUFMM_COMPLEX64;
  o.eps = 1e-9;
  EXPECT_EQ(create(o), GPUFMM_ERROR_ACCURACY) << msg();
  o.eps = 2;
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("'eps'"), std::string::npos);
  o.eps = 0;
  o.p = 8;
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);  // p without ml
  o.ml = 3;
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);  // 8 * 3 does not divide 4096
  EXPECT_NE(msg().find("do not factor"), std::string::npos) << msg();
  o.ml = 16, o.b = 6;  // L = 5
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("'b'"), std::string::npos) << msg();
  o.b = 0, o.q = 99;
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);
  o.q = 0, o.direction = 2;
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);
  o.direction = GPUFMM_FFT_FORWARD;
  o.post = 2;
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("'post'"), std::string::npos) << msg();
  o.post = GPUFMM_FFT_POST_CALLBACK;  // a cuFFT callback: not on the CPU backend
  EXPECT_EQ(create(o), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("needs a GPU context"), std::string::npos) << msg();
  o.post = GPUFMM_FFT_POST_FUSED;
  EXPECT_EQ(gpufmm_fft_plan_create(ctx, nullptr, &h), GPUFMM_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(create(o), GPUFMM_SUCCESS) << msg();

  const int64_t n = o.n;
  std::vector<float> x(2 * n, 0.5f), y(2 * n, 7.0f);
  EXPECT_EQ(gpufmm_fft_execute_host(h, x.data(), y.data(), GPUFMM_FFT_INVERSE), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("direction"), std::string::npos) << msg();
  EXPECT_EQ(gpufmm_fft_execute_host(h, x.data(), y.data(), 0), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_fft_execute_host(h, nullptr, y.data(), -1), GPUFMM_ERROR_INVALID_ARGUMENT);
  x[2 * 77 + 1] = NAN;
  EXPECT_EQ(gpufmm_fft_execute_host(h, x.data(), y.data(), -1), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("element 77"), std::string::npos) << msg();
  for (float v : y) ASSERT_EQ(v, 7.0f) << "output untouched";
  x[2 * 77 + 1] = 0;
  // Arrays: wrong dtype, wrong length.
  gpufmm_array_t a = nullptr, b = nullptr;
  int64_t dims[1] = {n};
  ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_COMPLEX128, 1, dims, &a), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_fft_execute(h, a, a, -1), GPUFMM_ERROR_TYPE_MISMATCH);
  dims[0] = n - 1;
  ASSERT_EQ(gpufmm_array_create(ctx, GPUFMM_COMPLEX64, 1, dims, &b), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_fft_execute(h, b, b, -1), GPUFMM_ERROR_SIZE_MISMATCH);
  EXPECT_EQ(gpufmm_fft_execute(h, nullptr, b, -1), GPUFMM_ERROR_INVALID_HANDLE);
  gpufmm_array_destroy(a);
  gpufmm_array_destroy(b);
  gpufmm_fft_info_t info;
  EXPECT_EQ(gpufmm_fft_plan_info(h, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(gpufmm_fft_plan_info(h, &info), GPUFMM_SUCCESS);
  EXPECT_EQ(info.n, n);
  EXPECT_EQ(int64_t(info.p) * info.ml << info.levels, n);
  EXPECT_STREQ(gpufmm_fft_stage_name(GPUFMM_FFT_STAGE_S2T), "S2T+POST");
  EXPECT_STREQ(gpufmm_fft_stage_name(99), "?");
  EXPECT_EQ(gpufmm_fft_plan_destroy(h), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_fft_plan_destroy(h), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_fft_plan_info(h, &info), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_context_destroy(ctx), GPUFMM_SUCCESS);
}

// gpufmm_fft_plan_create_multi's checks, and one context: a plain plan
// that execute_multi and execute_host run like gpufmm_fft_execute.
TEST(FmmFftApi, MultiChecksAndOnePart) {
  gpufmm_context_t c[3] = {};
  for (auto& ci : c) ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ci), GPUFMM_SUCCESS);
  gpufmm_fft_options_t o;
  ASSERT_EQ(gpufmm_fft_options_init(&o), GPUFMM_SUCCESS);
  o.n = 1 << 12;
  o.eps = 1e-10;
  auto msg = [] { return std::string(gpufmm_last_error_message()); };
  gpufmm_fft_plan_t h = nullptr;
  EXPECT_EQ(gpufmm_fft_plan_create_multi(nullptr, 2, &o, &h), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_fft_plan_create_multi(c, 0, &o, &h), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_fft_plan_create_multi(c, 1, &o, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_fft_plan_create_multi(c, 3, &o, &h), GPUFMM_ERROR_NOT_SUPPORTED);
  EXPECT_NE(msg().find("power of two"), std::string::npos) << msg();
  EXPECT_EQ(gpufmm_fft_plan_create_multi(c, 2, &o, &h), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("'ctxs'[0] is a CPU context"), std::string::npos) << msg();
  gpufmm_context_t bad[2] = {c[0], reinterpret_cast<gpufmm_context_t>(uintptr_t(12345))};
  EXPECT_EQ(gpufmm_fft_plan_create_multi(bad, 2, &o, &h), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(h, nullptr);

  ASSERT_EQ(gpufmm_fft_plan_create_multi(c, 1, &o, &h), GPUFMM_SUCCESS) << msg();
  gpufmm_fft_plan_t ref = nullptr;
  ASSERT_EQ(gpufmm_fft_plan_create(c[0], &o, &ref), GPUFMM_SUCCESS);
  const int64_t n = o.n;
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(2 * n), y(2 * n), z(2 * n);
  for (auto& v : x) v = u(rng);
  ASSERT_EQ(gpufmm_fft_execute_host(ref, x.data(), z.data(), -1), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_fft_execute_host(h, x.data(), y.data(), -1), GPUFMM_SUCCESS) << msg();
  EXPECT_EQ(y, z);
  gpufmm_array_t a = nullptr;
  int64_t dims[1] = {n};
  ASSERT_EQ(gpufmm_array_create(c[0], GPUFMM_COMPLEX128, 1, dims, &a), GPUFMM_SUCCESS);
  ASSERT_EQ(gpufmm_array_upload(a, x.data(), n), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_fft_execute_multi(h, &a, nullptr, -1), GPUFMM_ERROR_INVALID_ARGUMENT);
  gpufmm_array_t none = nullptr;
  EXPECT_EQ(gpufmm_fft_execute_multi(h, &a, &none, -1), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_NE(msg().find("'out[0]'"), std::string::npos) << msg();
  ASSERT_EQ(gpufmm_fft_execute_multi(h, &a, &a, -1), GPUFMM_SUCCESS) << msg();
  ASSERT_EQ(gpufmm_array_download(a, y.data(), n), GPUFMM_SUCCESS);
  EXPECT_EQ(y, z);
  gpufmm_fft_info_t info;
  ASSERT_EQ(gpufmm_fft_plan_info(h, &info), GPUFMM_SUCCESS);
  EXPECT_EQ(info.ranks, 1);
  EXPECT_EQ(info.n_local, n);
  gpufmm_array_destroy(a);
  EXPECT_EQ(gpufmm_fft_plan_destroy(h), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_fft_plan_destroy(ref), GPUFMM_SUCCESS);
  for (auto& ci : c) EXPECT_EQ(gpufmm_context_destroy(ci), GPUFMM_SUCCESS);
}
