// The device-array test suite, written once against the public C API and
// instantiated per backend: tests/cxx/test_arrays.cpp runs it on the CPU
// backend (CI), tests/cuda/test_cuda_arrays.cpp on GPU 0 (label gpu; skipped
// when there is no device). Every check compares with a host reference
// computed here in double precision on fresh random data.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpufmm.h"

namespace array_suite {

using cf = std::complex<float>;
using cd = std::complex<double>;

inline int visible_devices() {
  int n = 0;
  gpufmm_device_count(&n);
  return n;
}

inline uint64_t fresh_seed() {
  static std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

template <class T>
struct Traits;
template <>
struct Traits<int32_t> {
  static constexpr gpufmm_dtype_t dt = GPUFMM_INT32;
  static int32_t make(std::mt19937_64& g) { return static_cast<int32_t>(g() % 2001) - 1000; }
  static double tol() { return 0; }
};
template <>
struct Traits<int64_t> {
  static constexpr gpufmm_dtype_t dt = GPUFMM_INT64;
  static int64_t make(std::mt19937_64& g) { return static_cast<int64_t>(g() % 2000001) - 1000000; }
  static double tol() { return 0; }
};
template <>
struct Traits<float> {
  static constexpr gpufmm_dtype_t dt = GPUFMM_FLOAT32;
  static float make(std::mt19937_64& g) { return std::uniform_real_distribution<float>(-1, 1)(g); }
  static double tol() { return 1e-5; }
};
template <>
struct Traits<double> {
  static constexpr gpufmm_dtype_t dt = GPUFMM_FLOAT64;
  static double make(std::mt19937_64& g) { return std::uniform_real_distribution<double>(-1, 1)(g); }
  static double tol() { return 1e-13; }
};
template <>
struct Traits<cf> {
  static constexpr gpufmm_dtype_t dt = GPUFMM_COMPLEX64;
  static cf make(std::mt19937_64& g) { return {Traits<float>::make(g), Traits<float>::make(g)}; }
  static double tol() { return 1e-5; }
};
template <>
struct Traits<cd> {
  static constexpr gpufmm_dtype_t dt = GPUFMM_COMPLEX128;
  static cd make(std::mt19937_64& g) { return {Traits<double>::make(g), Traits<double>::make(g)}; }
  static double tol() { return 1e-13; }
};

template <class T>
std::vector<T> random_vec(size_t n, std::mt19937_64& g) {
  std::vector<T> v(n);
  for (auto& x : v) x = Traits<T>::make(g);
  return v;
}

inline cd to_cd(cd x) { return x; }
inline cd to_cd(cf x) { return cd(x.real(), x.imag()); }
inline cd to_cd(double x) { return cd(x, 0); }
inline cd to_cd(float x) { return cd(x, 0); }
inline cd conj_cd(cd x) { return std::conj(x); }

// max |a - b| / max(1, max |b|)
template <class T>
double rel_diff(const std::vector<T>& a, const std::vector<cd>& ref) {
  double num = 0, den = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(to_cd(a[i]) - ref[i]));
    den = std::max(den, std::abs(ref[i]));
  }
  return num / den;
}

#define GPUFMM_OK(call) ASSERT_EQ((call), GPUFMM_SUCCESS) << gpufmm_last_error_message()

class ArraySuite : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    device_ = GetParam();
    if (device_ >= 0 && visible_devices() <= device_) GTEST_SKIP() << "no CUDA device " << device_;
    seed_ = fresh_seed();
    gen_.seed(seed_);
    ASSERT_EQ(gpufmm_context_create(device_, &ctx_), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  }
  void TearDown() override {
    if (ctx_) EXPECT_EQ(gpufmm_context_destroy(ctx_), GPUFMM_SUCCESS) << gpufmm_last_error_message();
  }

  gpufmm_array_t make(gpufmm_dtype_t dt, std::vector<int64_t> dims) {
    gpufmm_array_t a = nullptr;
    EXPECT_EQ(gpufmm_array_create(ctx_, dt, static_cast<int>(dims.size()), dims.data(), &a), GPUFMM_SUCCESS)
        << gpufmm_last_error_message();
    return a;
  }
  template <class T>
  gpufmm_array_t make_from(const std::vector<T>& host, std::vector<int64_t> dims) {
    gpufmm_array_t a = make(Traits<T>::dt, dims);
    EXPECT_EQ(gpufmm_array_upload(a, host.data(), static_cast<int64_t>(host.size())), GPUFMM_SUCCESS);
    return a;
  }
  template <class T>
  std::vector<T> fetch(gpufmm_array_t a) {
    int64_t n = 0;
    EXPECT_EQ(gpufmm_array_size(a, &n), GPUFMM_SUCCESS);
    std::vector<T> h(static_cast<size_t>(n));
    EXPECT_EQ(gpufmm_array_download(a, h.data(), n), GPUFMM_SUCCESS) << gpufmm_last_error_message();
    return h;
  }

  template <class T>
  void check_roundtrip();
  template <class T>
  void check_blas1();
  template <class T>
  void check_gemv_gemm();

  int device_ = GPUFMM_DEVICE_CPU;
  uint64_t seed_ = 0;
  std::mt19937_64 gen_;
  gpufmm_context_t ctx_ = nullptr;
};

template <class T>
void ArraySuite::check_roundtrip() {
  const std::vector<std::vector<int64_t>> shapes = {{0}, {1}, {1000}, {17, 9}, {5, 0}, {4, 3, 7}};
  for (const auto& dims : shapes) {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    auto h = random_vec<T>(static_cast<size_t>(n), gen_);
    gpufmm_array_t a = make_from(h, dims);
    ASSERT_NE(a, nullptr);
    gpufmm_dtype_t dt;
    int rank;
    int64_t qd[3], cnt;
    GPUFMM_OK(gpufmm_array_dtype(a, &dt));
    GPUFMM_OK(gpufmm_array_rank(a, &rank));
    GPUFMM_OK(gpufmm_array_dims(a, qd));
    GPUFMM_OK(gpufmm_array_size(a, &cnt));
    EXPECT_EQ(dt, Traits<T>::dt);
    EXPECT_EQ(rank, static_cast<int>(dims.size()));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(qd[i], i < rank ? dims[static_cast<size_t>(i)] : 1);
    EXPECT_EQ(cnt, n);
    gpufmm_context_t owner = nullptr;
    GPUFMM_OK(gpufmm_array_context(a, &owner));
    EXPECT_EQ(owner, ctx_);
    EXPECT_TRUE(fetch<T>(a) == h) << "round trip changed data, seed " << seed_;

    // async transfers complete after synchronize
    auto h2 = random_vec<T>(static_cast<size_t>(n), gen_);
    std::vector<T> back(static_cast<size_t>(n));
    GPUFMM_OK(gpufmm_array_upload_async(a, h2.data(), n));
    GPUFMM_OK(gpufmm_array_download_async(a, back.data(), n));
    GPUFMM_OK(gpufmm_context_synchronize(ctx_));
    EXPECT_TRUE(back == h2);

    // fill
    const T v = Traits<T>::make(gen_);
    GPUFMM_OK(gpufmm_array_fill(a, &v));
    for (const auto& x : fetch<T>(a)) ASSERT_EQ(x, v);

    // copy and copy_range
    gpufmm_array_t b = make(Traits<T>::dt, dims);
    GPUFMM_OK(gpufmm_array_upload(a, h.data(), n));
    GPUFMM_OK(gpufmm_array_copy(a, b));
    EXPECT_TRUE(fetch<T>(b) == h);
    if (n >= 4) {
      auto z = random_vec<T>(static_cast<size_t>(n), gen_);
      GPUFMM_OK(gpufmm_array_upload(b, z.data(), n));
      const int64_t cnt2 = n / 2, so = n - cnt2, dso = 1;
      GPUFMM_OK(gpufmm_array_copy_range(a, so, b, dso, cnt2 - 1));
      for (int64_t i = 0; i < cnt2 - 1; ++i) z[static_cast<size_t>(dso + i)] = h[static_cast<size_t>(so + i)];
      EXPECT_TRUE(fetch<T>(b) == z);
      // out of range and overlapping: error, nothing changed
      EXPECT_EQ(gpufmm_array_copy_range(a, n - 1, b, 0, 2), GPUFMM_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(gpufmm_array_copy_range(a, 0, b, n - 1, 2), GPUFMM_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(gpufmm_array_copy_range(a, -1, b, 0, 1), GPUFMM_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(gpufmm_array_copy_range(a, 0, b, 0, -1), GPUFMM_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(gpufmm_array_copy_range(b, 0, b, 1, 2), GPUFMM_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(gpufmm_last_error_message()).find("overlap"), std::string::npos);
      EXPECT_TRUE(fetch<T>(b) == z);
      // within one array, disjoint ranges are fine
      GPUFMM_OK(gpufmm_array_copy_range(b, 0, b, n - 2, 2));
      z[static_cast<size_t>(n - 2)] = z[0];
      z[static_cast<size_t>(n - 1)] = z[1];
      EXPECT_TRUE(fetch<T>(b) == z);
    }
    // upload of the wrong count: SIZE_MISMATCH, array unchanged
    std::vector<T> bigger(static_cast<size_t>(n + 1), v);
    auto before = fetch<T>(b);
    EXPECT_EQ(gpufmm_array_upload(b, bigger.data(), n + 1), GPUFMM_ERROR_SIZE_MISMATCH);
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("count"), std::string::npos);
    EXPECT_EQ(gpufmm_array_download(b, bigger.data(), n + 1), GPUFMM_ERROR_SIZE_MISMATCH);
    EXPECT_TRUE(fetch<T>(b) == before);
    GPUFMM_OK(gpufmm_array_destroy(a));
    GPUFMM_OK(gpufmm_array_destroy(b));
  }
}

template <class T>
void ArraySuite::check_blas1() {
  const double tol = Traits<T>::tol();
  for (int64_t n : {1, 7, 1000, 100003}) {
    auto x = random_vec<T>(static_cast<size_t>(n), gen_), y = random_vec<T>(static_cast<size_t>(n), gen_);
    gpufmm_array_t X = make_from(x, {n}), Y = make_from(y, {n});
    const T alpha = Traits<T>::make(gen_);
    GPUFMM_OK(gpufmm_array_axpy(&alpha, X, Y));
    std::vector<cd> ref(static_cast<size_t>(n));
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = to_cd(alpha) * to_cd(x[i]) + to_cd(y[i]);
    EXPECT_LT(rel_diff(fetch<T>(Y), ref), 4 * tol) << "axpy n=" << n << " seed " << seed_;

    GPUFMM_OK(gpufmm_array_scal(&alpha, X));
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = to_cd(alpha) * to_cd(x[i]);
    EXPECT_LT(rel_diff(fetch<T>(X), ref), 4 * tol) << "scal";

    GPUFMM_OK(gpufmm_array_upload(X, x.data(), n));
    GPUFMM_OK(gpufmm_array_upload(Y, y.data(), n));
    T d{};
    GPUFMM_OK(gpufmm_array_dot(X, Y, &d));
    cd dref = 0;
    double scale = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      dref += conj_cd(to_cd(x[i])) * to_cd(y[i]);
      scale += std::abs(to_cd(x[i])) * std::abs(to_cd(y[i]));
    }
    EXPECT_LT(std::abs(to_cd(d) - dref), tol * scale * 10) << "dot n=" << n << " seed " << seed_;

    using R = decltype(std::abs(T{}));
    R nrm{};
    GPUFMM_OK(gpufmm_array_nrm2(X, &nrm));
    double nref = 0;
    for (const auto& v : x) nref += std::norm(to_cd(v));
    nref = std::sqrt(nref);
    EXPECT_NEAR(static_cast<double>(nrm), nref, 10 * tol * nref) << "nrm2";
    GPUFMM_OK(gpufmm_array_destroy(X));
    GPUFMM_OK(gpufmm_array_destroy(Y));
  }
  // size mismatch: nothing changes
  auto x = random_vec<T>(5, gen_), y = random_vec<T>(6, gen_);
  gpufmm_array_t X = make_from(x, {5}), Y = make_from(y, {6});
  const T one = T(1);
  T d{};
  EXPECT_EQ(gpufmm_array_axpy(&one, X, Y), GPUFMM_ERROR_SIZE_MISMATCH);
  EXPECT_EQ(gpufmm_array_dot(X, Y, &d), GPUFMM_ERROR_SIZE_MISMATCH);
  EXPECT_EQ(gpufmm_array_axpy(nullptr, X, X), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_array_dot(X, X, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(fetch<T>(Y) == y);
  GPUFMM_OK(gpufmm_array_destroy(X));
  GPUFMM_OK(gpufmm_array_destroy(Y));
}

template <class T>
void ArraySuite::check_gemv_gemm() {
  const double tol = Traits<T>::tol();
  auto opval = [](gpufmm_op_t op, const std::vector<T>& A, int64_t lda, int64_t i, int64_t j) {
    // element (i, j) of op(A) for column-major A with leading dimension lda
    if (op == GPUFMM_OP_N) return to_cd(A[static_cast<size_t>(i + j * lda)]);
    cd v = to_cd(A[static_cast<size_t>(j + i * lda)]);
    return op == GPUFMM_OP_C ? std::conj(v) : v;
  };
  const int64_t m = 37, n = 23, k = 19;
  for (gpufmm_op_t op : {GPUFMM_OP_N, GPUFMM_OP_T, GPUFMM_OP_C}) {
    // gemv: y = alpha*op(A)*x + beta*y
    auto A = random_vec<T>(static_cast<size_t>(m * n), gen_);
    const int64_t xn = op == GPUFMM_OP_N ? n : m, yn = op == GPUFMM_OP_N ? m : n;
    auto x = random_vec<T>(static_cast<size_t>(xn), gen_), y = random_vec<T>(static_cast<size_t>(yn), gen_);
    const T alpha = Traits<T>::make(gen_), beta = Traits<T>::make(gen_);
    gpufmm_array_t dA = make_from(A, {m, n}), dx = make_from(x, {xn}), dy = make_from(y, {yn});
    GPUFMM_OK(gpufmm_array_gemv(op, &alpha, dA, dx, &beta, dy));
    std::vector<cd> ref(static_cast<size_t>(yn));
    for (int64_t i = 0; i < yn; ++i) {
      cd s = 0;
      for (int64_t j = 0; j < xn; ++j) s += opval(op, A, m, i, j) * to_cd(x[static_cast<size_t>(j)]);
      ref[static_cast<size_t>(i)] = to_cd(alpha) * s + to_cd(beta) * to_cd(y[static_cast<size_t>(i)]);
    }
    EXPECT_LT(rel_diff(fetch<T>(dy), ref), 50 * tol) << "gemv op " << op << " seed " << seed_;
    // wrong x length
    EXPECT_EQ(gpufmm_array_gemv(op, &alpha, dA, dy, &beta, dx), GPUFMM_ERROR_SIZE_MISMATCH);
    GPUFMM_OK(gpufmm_array_destroy(dA));
    GPUFMM_OK(gpufmm_array_destroy(dx));
    GPUFMM_OK(gpufmm_array_destroy(dy));

    for (gpufmm_op_t opb : {GPUFMM_OP_N, GPUFMM_OP_T, GPUFMM_OP_C}) {
      const int64_t ar = op == GPUFMM_OP_N ? m : k, ac = op == GPUFMM_OP_N ? k : m;
      const int64_t br = opb == GPUFMM_OP_N ? k : n, bc = opb == GPUFMM_OP_N ? n : k;
      auto a = random_vec<T>(static_cast<size_t>(ar * ac), gen_), b = random_vec<T>(static_cast<size_t>(br * bc), gen_);
      auto c = random_vec<T>(static_cast<size_t>(m * n), gen_);
      gpufmm_array_t da = make_from(a, {ar, ac}), db = make_from(b, {br, bc}), dc = make_from(c, {m, n});
      GPUFMM_OK(gpufmm_array_gemm(op, opb, &alpha, da, db, &beta, dc));
      std::vector<cd> cref(static_cast<size_t>(m * n));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          cd s = 0;
          for (int64_t l = 0; l < k; ++l) s += opval(op, a, ar, i, l) * opval(opb, b, br, l, j);
          cref[static_cast<size_t>(i + j * m)] = to_cd(alpha) * s + to_cd(beta) * to_cd(c[static_cast<size_t>(i + j * m)]);
        }
      EXPECT_LT(rel_diff(fetch<T>(dc), cref), 50 * tol) << "gemm " << op << opb << " seed " << seed_;
      // C of the wrong shape: SIZE_MISMATCH, C unchanged
      auto cbefore = fetch<T>(dc);
      EXPECT_EQ(gpufmm_array_gemm(op, opb, &alpha, db, da, &beta, dc), GPUFMM_ERROR_SIZE_MISMATCH);
      EXPECT_TRUE(fetch<T>(dc) == cbefore);
      GPUFMM_OK(gpufmm_array_destroy(da));
      GPUFMM_OK(gpufmm_array_destroy(db));
      GPUFMM_OK(gpufmm_array_destroy(dc));
    }
  }
  // empty inner dimension: C <- beta*C
  auto c = random_vec<T>(6, gen_);
  const T beta = Traits<T>::make(gen_), alpha = T(1);
  gpufmm_array_t da = make(Traits<T>::dt, {2, 0}), db = make(Traits<T>::dt, {0, 3}), dc = make_from(c, {2, 3});
  GPUFMM_OK(gpufmm_array_gemm(GPUFMM_OP_N, GPUFMM_OP_N, &alpha, da, db, &beta, dc));
  std::vector<cd> cref(6);
  for (size_t i = 0; i < 6; ++i) cref[i] = to_cd(beta) * to_cd(c[i]);
  EXPECT_LT(rel_diff(fetch<T>(dc), cref), 4 * tol);
  // beta == 0 overwrites (BLAS convention): NaN in C does not survive
  const T nan = T(std::numeric_limits<double>::quiet_NaN()), zero = T(0);
  GPUFMM_OK(gpufmm_array_fill(dc, &nan));
  GPUFMM_OK(gpufmm_array_gemm(GPUFMM_OP_N, GPUFMM_OP_N, &alpha, da, db, &zero, dc));
  for (const auto& v : fetch<T>(dc)) EXPECT_EQ(v, zero);
  GPUFMM_OK(gpufmm_array_destroy(da));
  GPUFMM_OK(gpufmm_array_destroy(db));
  GPUFMM_OK(gpufmm_array_destroy(dc));
}

TEST_P(ArraySuite, RoundTripQueriesFillCopyAllDtypes) {
  check_roundtrip<int32_t>();
  check_roundtrip<int64_t>();
  check_roundtrip<float>();
  check_roundtrip<double>();
  check_roundtrip<cf>();
  check_roundtrip<cd>();
}

TEST_P(ArraySuite, Blas1AllFloatDtypes) {
  check_blas1<float>();
  check_blas1<double>();
  check_blas1<cf>();
  check_blas1<cd>();
}

TEST_P(ArraySuite, GemvGemmAllOps) {
  check_gemv_gemm<float>();
  check_gemv_gemm<double>();
  check_gemv_gemm<cf>();
  check_gemv_gemm<cd>();
}

TEST_P(ArraySuite, BlasRejectsIntegers) {
  gpufmm_array_t a = make(GPUFMM_INT32, {4});
  int32_t one = 1, r = 0;
  const int32_t v = 3;
  GPUFMM_OK(gpufmm_array_fill(a, &v));
  EXPECT_EQ(gpufmm_array_axpy(&one, a, a), GPUFMM_ERROR_TYPE_MISMATCH);
  EXPECT_EQ(gpufmm_array_scal(&one, a), GPUFMM_ERROR_TYPE_MISMATCH);
  EXPECT_EQ(gpufmm_array_dot(a, a, &r), GPUFMM_ERROR_TYPE_MISMATCH);
  EXPECT_EQ(gpufmm_array_nrm2(a, &r), GPUFMM_ERROR_TYPE_MISMATCH);
  gpufmm_array_t b = make(GPUFMM_FLOAT64, {4});
  double d1 = 1;
  EXPECT_EQ(gpufmm_array_axpy(&d1, b, a), GPUFMM_ERROR_TYPE_MISMATCH);
  EXPECT_EQ(gpufmm_array_copy(a, b), GPUFMM_ERROR_TYPE_MISMATCH);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("dtype"), std::string::npos);
  for (int32_t x : fetch<int32_t>(a)) EXPECT_EQ(x, 3);
  GPUFMM_OK(gpufmm_array_destroy(a));
  GPUFMM_OK(gpufmm_array_destroy(b));
}

TEST_P(ArraySuite, Reductions) {
  for (int64_t n : {1, 5, 100001}) {
    auto vi = random_vec<int32_t>(static_cast<size_t>(n), gen_);
    auto vl = random_vec<int64_t>(static_cast<size_t>(n), gen_);
    auto vd = random_vec<double>(static_cast<size_t>(n), gen_);
    auto vf = random_vec<float>(static_cast<size_t>(n), gen_);
    auto vz = random_vec<cd>(static_cast<size_t>(n), gen_);
    gpufmm_array_t ai = make_from(vi, {n}), al = make_from(vl, {n}), ad = make_from(vd, {n}),
                   af = make_from(vf, {n}), az = make_from(vz, {n});
    int32_t si, mi, xi;
    int64_t sl, ml, xl;
    double sd, md, xd;
    float sf, mf, xf;
    cd sz;
    GPUFMM_OK(gpufmm_array_sum(ai, &si));
    GPUFMM_OK(gpufmm_array_min(ai, &mi));
    GPUFMM_OK(gpufmm_array_max(ai, &xi));
    GPUFMM_OK(gpufmm_array_sum(al, &sl));
    GPUFMM_OK(gpufmm_array_min(al, &ml));
    GPUFMM_OK(gpufmm_array_max(al, &xl));
    GPUFMM_OK(gpufmm_array_sum(ad, &sd));
    GPUFMM_OK(gpufmm_array_min(ad, &md));
    GPUFMM_OK(gpufmm_array_max(ad, &xd));
    GPUFMM_OK(gpufmm_array_sum(af, &sf));
    GPUFMM_OK(gpufmm_array_min(af, &mf));
    GPUFMM_OK(gpufmm_array_max(af, &xf));
    GPUFMM_OK(gpufmm_array_sum(az, &sz));
    int64_t ri = 0, rl = 0;
    double rd = 0, rf = 0, absd = 0;
    cd rz = 0;
    for (int64_t i = 0; i < n; ++i) {
      ri += vi[static_cast<size_t>(i)];
      rl += vl[static_cast<size_t>(i)];
      rd += vd[static_cast<size_t>(i)];
      absd += std::abs(vd[static_cast<size_t>(i)]);
      rf += vf[static_cast<size_t>(i)];
      rz += vz[static_cast<size_t>(i)];
    }
    EXPECT_EQ(si, static_cast<int32_t>(ri));
    EXPECT_EQ(sl, rl);
    EXPECT_EQ(mi, *std::min_element(vi.begin(), vi.end()));
    EXPECT_EQ(xi, *std::max_element(vi.begin(), vi.end()));
    EXPECT_EQ(ml, *std::min_element(vl.begin(), vl.end()));
    EXPECT_EQ(xl, *std::max_element(vl.begin(), vl.end()));
    EXPECT_EQ(md, *std::min_element(vd.begin(), vd.end()));
    EXPECT_EQ(xd, *std::max_element(vd.begin(), vd.end()));
    EXPECT_EQ(mf, *std::min_element(vf.begin(), vf.end()));
    EXPECT_EQ(xf, *std::max_element(vf.begin(), vf.end()));
    EXPECT_NEAR(sd, rd, 1e-13 * (absd + 1));
    EXPECT_NEAR(sf, rf, 1e-5 * (absd + 1));
    EXPECT_LT(std::abs(sz - rz), 1e-12 * (n + 1.0));
    cd zmin;
    EXPECT_EQ(gpufmm_array_min(az, &zmin), GPUFMM_ERROR_TYPE_MISMATCH);
    EXPECT_EQ(gpufmm_array_max(az, &zmin), GPUFMM_ERROR_TYPE_MISMATCH);
    // NaN propagates through min, max and sum
    vd[static_cast<size_t>(n / 2)] = std::numeric_limits<double>::quiet_NaN();
    GPUFMM_OK(gpufmm_array_upload(ad, vd.data(), n));
    GPUFMM_OK(gpufmm_array_min(ad, &md));
    GPUFMM_OK(gpufmm_array_max(ad, &xd));
    GPUFMM_OK(gpufmm_array_sum(ad, &sd));
    EXPECT_TRUE(std::isnan(md) && std::isnan(xd) && std::isnan(sd));
    for (auto a : {ai, al, ad, af, az}) GPUFMM_OK(gpufmm_array_destroy(a));
  }
  gpufmm_array_t e = make(GPUFMM_FLOAT64, {0});
  double r = 1;
  GPUFMM_OK(gpufmm_array_sum(e, &r));
  EXPECT_EQ(r, 0.0);
  EXPECT_EQ(gpufmm_array_min(e, &r), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_array_max(e, &r), GPUFMM_ERROR_INVALID_ARGUMENT);
  GPUFMM_OK(gpufmm_array_destroy(e));
}

TEST_P(ArraySuite, BadCreateArguments) {
  gpufmm_array_t a = reinterpret_cast<gpufmm_array_t>(0x1);  // must stay untouched on failure
  const gpufmm_array_t sentinel = a;
  int64_t dims[3] = {4, 5, 6};
  EXPECT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 0, dims, &a), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("rank"), std::string::npos);
  EXPECT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 4, dims, &a), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_array_create(ctx_, static_cast<gpufmm_dtype_t>(42), 1, dims, &a), GPUFMM_ERROR_TYPE_MISMATCH);
  EXPECT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 1, nullptr, &a), GPUFMM_ERROR_INVALID_ARGUMENT);
  int64_t neg[2] = {3, -1};
  EXPECT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 2, neg, &a), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("dims[1]"), std::string::npos);
  int64_t huge[3] = {int64_t(1) << 40, int64_t(1) << 40, 1};
  EXPECT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 2, huge, &a), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("overflow"), std::string::npos);
  // non-zero dims whose product overflows are refused in every order, also
  // beside a zero dim (which makes the array empty)
  const int64_t big = int64_t(1) << 40;
  const int64_t orders[3][3] = {{big, big, 0}, {0, big, big}, {big, 0, big}};
  for (const auto& d : orders) {
    EXPECT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 3, d, &a), GPUFMM_ERROR_INVALID_ARGUMENT)
        << d[0] << " x " << d[1] << " x " << d[2];
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("overflow"), std::string::npos);
  }
  EXPECT_EQ(gpufmm_array_create(nullptr, GPUFMM_FLOAT64, 1, dims, &a), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 1, dims, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(a, sentinel);
}

TEST_P(ArraySuite, OutOfMemoryLeavesContextUsable) {
  gpufmm_device_info_t info;
  GPUFMM_OK(gpufmm_context_device_info(ctx_, &info));
  // twice the device (or host) memory, in float64 elements
  int64_t dims[1] = {info.total_memory / 4 + 1};
  gpufmm_array_t a = nullptr;
  EXPECT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 1, dims, &a), GPUFMM_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(a, nullptr);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("bytes"), std::string::npos);
  std::vector<double> h = random_vec<double>(100, gen_);
  gpufmm_array_t b = make_from(h, {100});
  EXPECT_TRUE(fetch<double>(b) == h);
  GPUFMM_OK(gpufmm_array_destroy(b));
}

TEST_P(ArraySuite, DestroyedAndForeignHandles) {
  gpufmm_array_t a = make(GPUFMM_FLOAT32, {8});
  GPUFMM_OK(gpufmm_array_destroy(a));
  float v = 1, r = 0;
  std::vector<float> h(8);
  EXPECT_EQ(gpufmm_array_destroy(a), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_array_upload(a, h.data(), 8), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("destroyed"), std::string::npos);
  EXPECT_EQ(gpufmm_array_download(a, h.data(), 8), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_array_fill(a, &v), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_array_nrm2(a, &r), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_array_sum(nullptr, &r), GPUFMM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gpufmm_array_destroy(nullptr), GPUFMM_SUCCESS);
  int64_t n;
  int local = 0;
  EXPECT_EQ(gpufmm_array_size(reinterpret_cast<gpufmm_array_t>(&local), &n), GPUFMM_ERROR_INVALID_HANDLE);
}

TEST_P(ArraySuite, ContextWithLiveArraysRefusesDestroy) {
  gpufmm_array_t a = make(GPUFMM_INT64, {3});
  EXPECT_EQ(gpufmm_context_destroy(ctx_), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("live"), std::string::npos);
  const int64_t v = 7;
  GPUFMM_OK(gpufmm_array_fill(a, &v));  // the context still works
  GPUFMM_OK(gpufmm_array_destroy(a));
}

TEST_P(ArraySuite, WrapAndRawPointer) {
  gpufmm_array_t owner = make(GPUFMM_FLOAT64, {12});
  auto h = random_vec<double>(12, gen_);
  GPUFMM_OK(gpufmm_array_upload(owner, h.data(), 12));
  void* p = nullptr;
  GPUFMM_OK(gpufmm_array_data(owner, &p));
  ASSERT_NE(p, nullptr);
  // a 3 x 4 view of the same memory, not owned
  int64_t dims[2] = {3, 4};
  gpufmm_array_t view = nullptr;
  GPUFMM_OK(gpufmm_array_wrap(ctx_, GPUFMM_FLOAT64, 2, dims, p, &view));
  EXPECT_TRUE(fetch<double>(view) == h);
  const double two = 2;
  GPUFMM_OK(gpufmm_array_scal(&two, view));
  GPUFMM_OK(gpufmm_array_destroy(view));  // does not free the memory
  auto back = fetch<double>(owner);
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(back[i], 2 * h[i]);
  EXPECT_EQ(gpufmm_array_wrap(ctx_, GPUFMM_FLOAT64, 2, dims, nullptr, &view), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_array_wrap(ctx_, GPUFMM_FLOAT64, 1, dims, static_cast<char*>(p) + 4, &view),
            GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("aligned"), std::string::npos);
  GPUFMM_OK(gpufmm_array_destroy(owner));
}

TEST_P(ArraySuite, ContextQueries) {
  gpufmm_backend_t b;
  GPUFMM_OK(gpufmm_context_backend(ctx_, &b));
  EXPECT_EQ(b, device_ >= 0 ? GPUFMM_BACKEND_CUDA : GPUFMM_BACKEND_CPU);
  gpufmm_device_info_t info;
  GPUFMM_OK(gpufmm_context_device_info(ctx_, &info));
  EXPECT_GT(info.total_memory, 0);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GT(std::strlen(info.name), 0u);
  EXPECT_EQ(info.backend, static_cast<int>(b));
  void* stream = reinterpret_cast<void*>(0x1);
  GPUFMM_OK(gpufmm_context_stream(ctx_, &stream));
  if (device_ < 0) EXPECT_EQ(stream, nullptr);
  GPUFMM_OK(gpufmm_context_synchronize(ctx_));
  EXPECT_EQ(gpufmm_context_backend(ctx_, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpufmm_context_device_info(ctx_, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT);
}

}  // namespace array_suite
