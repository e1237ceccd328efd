// Device arrays on the CUDA backend, through the public C API (gpufmm.h).
//
// Every test skips (GTEST_SKIP) when no CUDA device is visible. On a GPU each
// test checks the CUDA backend against host references computed here in
// double precision and against the CPU backend on the same inputs.
//
// Random inputs use a fresh seed per test; the seed is printed with every
// failure (SCOPED_TRACE) so that a failure can be reproduced with
// GPUFMM_TEST_SEED=<seed>.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpufmm.h"

namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;

#define GPUFMM_OK(call) ASSERT_EQ(GPUFMM_SUCCESS, (call)) << #call << ": " << gpufmm_last_error_message()
#define GPUFMM_EXPECT_OK(call) \
  EXPECT_EQ(GPUFMM_SUCCESS, (call)) << #call << ": " << gpufmm_last_error_message()
#define CUDA_OK(call) ASSERT_EQ(cudaSuccess, (call)) << #call

// ------------------------------------------------------------------ types

template <class T> struct Dt;
template <> struct Dt<int32_t> { static constexpr gpufmm_dtype_t value = GPUFMM_INT32; };
template <> struct Dt<int64_t> { static constexpr gpufmm_dtype_t value = GPUFMM_INT64; };
template <> struct Dt<float> { static constexpr gpufmm_dtype_t value = GPUFMM_FLOAT32; };
template <> struct Dt<double> { static constexpr gpufmm_dtype_t value = GPUFMM_FLOAT64; };
template <> struct Dt<cf> { static constexpr gpufmm_dtype_t value = GPUFMM_COMPLEX64; };
template <> struct Dt<cd> { static constexpr gpufmm_dtype_t value = GPUFMM_COMPLEX128; };

template <class T> struct IsComplex : std::false_type {};
template <class R> struct IsComplex<std::complex<R>> : std::true_type {};

template <class T> struct RealOf { using type = T; };
template <class R> struct RealOf<std::complex<R>> { using type = R; };
template <class T> using Real = typename RealOf<T>::type;

template <class T>
double eps_of() {
  return static_cast<double>(std::numeric_limits<Real<T>>::epsilon());
}

template <class T>
cd to_cd(const T& v) {
  if constexpr (IsComplex<T>::value)
    return cd(static_cast<double>(v.real()), static_cast<double>(v.imag()));
  else
    return cd(static_cast<double>(v), 0.0);
}

template <class T>
bool bit_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// ------------------------------------------------------------------ random data

uint64_t fresh_seed() {
  if (const char* s = std::getenv("GPUFMM_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

struct Rng {
  uint64_t seed = fresh_seed();
  std::mt19937_64 gen{seed};
  std::string trace() const { return "seed = " + std::to_string(seed) + " (GPUFMM_TEST_SEED)"; }
};

template <class T>
T random_value(std::mt19937_64& g) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::uniform_int_distribution<int64_t>(-1000000, 1000000)(g));
  } else if constexpr (IsComplex<T>::value) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const double re = u(g), im = u(g);
    return T(static_cast<Real<T>>(re), static_cast<Real<T>>(im));
  } else {
    return static_cast<T>(std::uniform_real_distribution<double>(-1.0, 1.0)(g));
  }
}

template <class T>
std::vector<T> random_vector(std::mt19937_64& g, size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) x = random_value<T>(g);
  return v;
}

// Values k/4 with small integer k: every partial sum of up to ~10^6 of them
// is exact in float32, so sums are exact whatever the summation order.
template <class T>
std::vector<T> exact_vector(std::mt19937_64& g, size_t n) {
  std::uniform_int_distribution<int> k(-8, 8);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_integral_v<T>)
      x = static_cast<T>(k(g));
    else if constexpr (IsComplex<T>::value)
      x = T(static_cast<Real<T>>(k(g) / 4.0), static_cast<Real<T>>(k(g) / 4.0));
    else
      x = static_cast<T>(k(g) / 4.0);
  }
  return v;
}

// ------------------------------------------------------------------ handles

bool gpu_available() {
  int n = 0;
  return gpufmm_device_count(&n) == GPUFMM_SUCCESS && n > 0;
}

// An array handle destroyed at scope exit (before the fixture's contexts).
struct Arr {
  gpufmm_array_t h = nullptr;
  Arr() = default;
  Arr(Arr&& o) noexcept : h(std::exchange(o.h, nullptr)) {}
  Arr& operator=(Arr&& o) noexcept {
    std::swap(h, o.h);
    return *this;
  }
  Arr(const Arr&) = delete;
  Arr& operator=(const Arr&) = delete;
  ~Arr() {
    if (h) {
      EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_destroy(h)) << gpufmm_last_error_message();
    }
  }
  operator gpufmm_array_t() const { return h; }
};

Arr new_array(gpufmm_context_t ctx, gpufmm_dtype_t dt, const std::vector<int64_t>& dims) {
  Arr a;
  EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_create(ctx, dt, static_cast<int>(dims.size()), dims.data(), &a.h))
      << gpufmm_last_error_message();
  return a;
}

template <class T>
Arr uploaded(gpufmm_context_t ctx, const std::vector<T>& host, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(host.size())};
  Arr a = new_array(ctx, Dt<T>::value, dims);
  EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_upload(a, host.data(), static_cast<int64_t>(host.size())))
      << gpufmm_last_error_message();
  return a;
}

template <class T>
std::vector<T> downloaded(gpufmm_array_t a) {
  int64_t n = -1;
  EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_size(a, &n)) << gpufmm_last_error_message();
  std::vector<T> v(static_cast<size_t>(std::max<int64_t>(n, 0)));
  EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_download(a, v.data(), n)) << gpufmm_last_error_message();
  return v;
}

// A GPU context on device 0 and a CPU context; every test skips without a GPU.
class CudaArrays : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << "no CUDA device visible";
    GPUFMM_OK(gpufmm_context_create(0, &gpu));
    GPUFMM_OK(gpufmm_context_create(GPUFMM_DEVICE_CPU, &cpu));
  }
  void TearDown() override {
    if (gpu) {
      EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_context_destroy(gpu)) << gpufmm_last_error_message();
    }
    if (cpu) {
      EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_context_destroy(cpu)) << gpufmm_last_error_message();
    }
  }
  gpufmm_context_t gpu = nullptr;
  gpufmm_context_t cpu = nullptr;
  Rng rng;
};

// ------------------------------------------------------------------ host BLAS reference

template <class T>
cd op_elem(const std::vector<T>& A, int64_t lda, gpufmm_op_t op, int64_t i, int64_t l) {
  // op(A)(i, l) for A stored column-major with leading dimension lda.
  if (op == GPUFMM_OP_N) return to_cd(A[i + l * lda]);
  const cd v = to_cd(A[l + i * lda]);
  return op == GPUFMM_OP_C ? std::conj(v) : v;
}

// Checks got ~ ref elementwise, with |got - ref| <= tol_scale[i] * tol + tiny.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<cd>& ref, const std::vector<double>& bound,
                  double factor, const char* what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  const double eps = eps_of<T>();
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 10; ++i) {
    const double err = std::abs(to_cd(got[i]) - ref[i]);
    const double tol = factor * eps * bound[i] + std::numeric_limits<double>::min();
    if (!(err <= tol)) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " = " << to_cd(got[i]) << ", reference " << ref[i]
                    << ", |error| = " << err << " > tolerance " << tol;
    }
  }
}

template <class T>
void expect_scalar_close(const T& got, const cd& ref, double bound, double factor, const char* what) {
  const double err = std::abs(to_cd(got) - ref);
  const double tol = factor * eps_of<T>() * bound + std::numeric_limits<double>::min();
  EXPECT_LE(err, tol) << what << ": got " << to_cd(got) << ", reference " << ref;
}

template <class T>
T from_cd(const cd& v) {
  if constexpr (IsComplex<T>::value)
    return T(static_cast<Real<T>>(v.real()), static_cast<Real<T>>(v.imag()));
  else
    return static_cast<T>(v.real());
}

template <class T>
T random_scalar(std::mt19937_64& g) {
  // Scalars away from 0 and 1 so that a dropped alpha/beta is noticed.
  std::uniform_real_distribution<double> u(0.5, 1.5);
  if constexpr (IsComplex<T>::value)
    return T(static_cast<Real<T>>(u(g)), static_cast<Real<T>>(-u(g)));
  else
    return static_cast<T>(u(g));
}

// ================================================================== tests

TEST_F(CudaArrays, ContextInfoAndStream) {
  gpufmm_backend_t be = GPUFMM_BACKEND_CPU;
  GPUFMM_OK(gpufmm_context_backend(gpu, &be));
  EXPECT_EQ(be, GPUFMM_BACKEND_CUDA);
  gpufmm_device_info_t info;
  std::memset(&info, 0xab, sizeof info);
  GPUFMM_OK(gpufmm_context_device_info(gpu, &info));
  EXPECT_EQ(info.backend, GPUFMM_BACKEND_CUDA);
  EXPECT_EQ(info.device, 0);
  EXPECT_GT(std::strlen(info.name), 0u);
  EXPECT_LT(std::strlen(info.name), sizeof info.name);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GE(info.compute_major, 1);
  EXPECT_GT(info.total_memory, 0);
  EXPECT_GT(info.free_memory, 0);
  EXPECT_LE(info.free_memory, info.total_memory);
  EXPECT_GT(info.shared_mem_per_block_optin, 0);
  EXPECT_GT(info.l2_cache_bytes, 0);
  void* stream = nullptr;
  GPUFMM_OK(gpufmm_context_stream(gpu, &stream));
  EXPECT_NE(stream, nullptr);
  GPUFMM_OK(gpufmm_context_synchronize(gpu));
}

TEST_F(CudaArrays, NoSuchDevice) {
  gpufmm_context_t c = nullptr;
  EXPECT_EQ(GPUFMM_ERROR_NO_DEVICE, gpufmm_context_create(9999, &c));
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(std::string(gpufmm_last_error_message()).find("9999"), std::string::npos)
      << gpufmm_last_error_message();
  // The existing context is unaffected.
  GPUFMM_OK(gpufmm_context_synchronize(gpu));
}

// ------------------------------------------------------------------ transfers

template <class T>
void round_trip(gpufmm_context_t ctx, std::mt19937_64& g) {
  SCOPED_TRACE(std::string("dtype ") + std::to_string(Dt<T>::value));
  const std::vector<std::vector<int64_t>> shapes = {{1}, {1000}, {37, 5}, {1, 9}, {3, 4, 5}, {7, 1, 3}, {0}, {4, 0, 2}};
  for (const auto& dims : shapes) {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    const auto host = random_vector<T>(g, static_cast<size_t>(n));
    Arr a = uploaded(ctx, host, dims);
    ASSERT_NE(a.h, nullptr);
    gpufmm_dtype_t dt;
    int rank = 0;
    int64_t qd[GPUFMM_MAX_RANK] = {0, 0, 0}, count = -1;
    GPUFMM_OK(gpufmm_array_dtype(a, &dt));
    GPUFMM_OK(gpufmm_array_rank(a, &rank));
    GPUFMM_OK(gpufmm_array_dims(a, qd));
    GPUFMM_OK(gpufmm_array_size(a, &count));
    EXPECT_EQ(dt, Dt<T>::value);
    EXPECT_EQ(rank, static_cast<int>(dims.size()));
    for (int i = 0; i < GPUFMM_MAX_RANK; ++i) EXPECT_EQ(qd[i], i < rank ? dims[i] : 1);
    EXPECT_EQ(count, n);
    gpufmm_context_t owner = nullptr;
    GPUFMM_OK(gpufmm_array_context(a, &owner));
    EXPECT_EQ(owner, ctx);
    EXPECT_TRUE(bit_equal(downloaded<T>(a), host));
    // Wrong count: SIZE_MISMATCH, nothing written.
    std::vector<T> big(static_cast<size_t>(n) + 1);
    EXPECT_EQ(GPUFMM_ERROR_SIZE_MISMATCH, gpufmm_array_download(a, big.data(), n + 1));
  }
}

TEST_F(CudaArrays, UploadDownloadRoundTripAllDtypesAndRanks) {
  SCOPED_TRACE(rng.trace());
  round_trip<int32_t>(gpu, rng.gen);
  round_trip<int64_t>(gpu, rng.gen);
  round_trip<float>(gpu, rng.gen);
  round_trip<double>(gpu, rng.gen);
  round_trip<cf>(gpu, rng.gen);
  round_trip<cd>(gpu, rng.gen);
}

template <class T>
void copy_checks(gpufmm_context_t gpu, gpufmm_context_t cpu, std::mt19937_64& g) {
  SCOPED_TRACE(std::string("dtype ") + std::to_string(Dt<T>::value));
  const size_t n = 1001;
  const auto a = random_vector<T>(g, n), b = random_vector<T>(g, n);
  for (gpufmm_context_t ctx : {gpu, cpu}) {
    Arr src = uploaded(ctx, a, {11, 91});
    Arr dst = uploaded(ctx, b);
    GPUFMM_OK(gpufmm_array_copy(src, dst));  // same count, different shapes
    EXPECT_TRUE(bit_equal(downloaded<T>(dst), a));

    // copy_range between arrays, and inside one array (disjoint ranges).
    Arr d2 = uploaded(ctx, b);
    GPUFMM_OK(gpufmm_array_copy_range(src, 100, d2, 500, 321));
    std::vector<T> want = b;
    std::copy(a.begin() + 100, a.begin() + 421, want.begin() + 500);
    EXPECT_TRUE(bit_equal(downloaded<T>(d2), want));
    GPUFMM_OK(gpufmm_array_copy_range(d2, 0, d2, 900, 101));
    std::copy(want.begin(), want.begin() + 101, want.begin() + 900);
    EXPECT_TRUE(bit_equal(downloaded<T>(d2), want));
    GPUFMM_OK(gpufmm_array_copy_range(d2, 5, d2, 7, 0));  // empty range
    EXPECT_EQ(GPUFMM_ERROR_INVALID_ARGUMENT, gpufmm_array_copy_range(d2, 0, d2, 10, 20));  // overlap
    EXPECT_EQ(GPUFMM_ERROR_INVALID_ARGUMENT, gpufmm_array_copy_range(src, 1000, d2, 0, 2));  // past end
    EXPECT_TRUE(bit_equal(downloaded<T>(d2), want));
  }
}

TEST_F(CudaArrays, CopyAndCopyRange) {
  SCOPED_TRACE(rng.trace());
  copy_checks<int32_t>(gpu, cpu, rng.gen);
  copy_checks<int64_t>(gpu, cpu, rng.gen);
  copy_checks<float>(gpu, cpu, rng.gen);
  copy_checks<double>(gpu, cpu, rng.gen);
  copy_checks<cf>(gpu, cpu, rng.gen);
  copy_checks<cd>(gpu, cpu, rng.gen);
}

template <class T>
void fill_checks(gpufmm_context_t gpu, gpufmm_context_t cpu, std::mt19937_64& g) {
  SCOPED_TRACE(std::string("dtype ") + std::to_string(Dt<T>::value));
  for (int64_t n : {int64_t(1), int64_t(255), int64_t(100003)}) {
    const T v = random_value<T>(g);
    const std::vector<T> want(static_cast<size_t>(n), v);
    Arr ag = uploaded(gpu, random_vector<T>(g, static_cast<size_t>(n)), {n});
    Arr ac = new_array(cpu, Dt<T>::value, {n});
    GPUFMM_OK(gpufmm_array_fill(ag, &v));
    GPUFMM_OK(gpufmm_array_fill(ac, &v));
    EXPECT_TRUE(bit_equal(downloaded<T>(ag), want)) << "n = " << n;
    EXPECT_TRUE(bit_equal(downloaded<T>(ac), want)) << "n = " << n;
  }
  Arr empty = new_array(gpu, Dt<T>::value, {0});
  const T v = random_value<T>(g);
  GPUFMM_OK(gpufmm_array_fill(empty, &v));
}

TEST_F(CudaArrays, Fill) {
  SCOPED_TRACE(rng.trace());
  fill_checks<int32_t>(gpu, cpu, rng.gen);
  fill_checks<int64_t>(gpu, cpu, rng.gen);
  fill_checks<float>(gpu, cpu, rng.gen);
  fill_checks<double>(gpu, cpu, rng.gen);
  fill_checks<cf>(gpu, cpu, rng.gen);
  fill_checks<cd>(gpu, cpu, rng.gen);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Arr a = new_array(gpu, GPUFMM_FLOAT64, {17});
  GPUFMM_OK(gpufmm_array_fill(a, &nan));
  for (double x : downloaded<double>(a)) EXPECT_TRUE(std::isnan(x));
}

// ------------------------------------------------------------------ BLAS (typed)

template <class T>
class CudaBlas : public CudaArrays {};
using FloatTypes = ::testing::Types<float, double, cf, cd>;
TYPED_TEST_SUITE(CudaBlas, FloatTypes);

TYPED_TEST(CudaBlas, AxpyScal) {
  using T = TypeParam;
  SCOPED_TRACE(this->rng.trace());
  auto& g = this->rng.gen;
  const size_t n = 4099;
  const auto x = random_vector<T>(g, n), y = random_vector<T>(g, n);
  const T alpha = random_scalar<T>(g), beta = random_scalar<T>(g);
  std::vector<cd> ref(n);
  std::vector<double> bound(n);
  for (size_t i = 0; i < n; ++i) {
    ref[i] = to_cd(alpha) * to_cd(x[i]) + to_cd(y[i]);
    bound[i] = std::abs(to_cd(alpha)) * std::abs(to_cd(x[i])) + std::abs(to_cd(y[i]));
  }
  for (gpufmm_context_t ctx : {this->gpu, this->cpu}) {
    Arr X = uploaded(ctx, x, {int64_t(n)}), Y = uploaded(ctx, y, {int64_t(n)});
    GPUFMM_OK(gpufmm_array_axpy(&alpha, X, Y));
    expect_close(downloaded<T>(Y), ref, bound, 4.0, "axpy");
    EXPECT_TRUE(bit_equal(downloaded<T>(X), x)) << "axpy changed x";
    GPUFMM_OK(gpufmm_array_scal(&beta, X));
    std::vector<cd> sref(n);
    std::vector<double> sb(n);
    for (size_t i = 0; i < n; ++i) {
      sref[i] = to_cd(beta) * to_cd(x[i]);
      sb[i] = std::abs(sref[i]);
    }
    expect_close(downloaded<T>(X), sref, sb, 4.0, "scal");
  }
}

TYPED_TEST(CudaBlas, DotNrm2) {
  using T = TypeParam;
  using R = Real<T>;
  SCOPED_TRACE(this->rng.trace());
  auto& g = this->rng.gen;
  for (size_t n : {size_t(1), size_t(1000), size_t(100003)}) {
    const auto x = random_vector<T>(g, n), y = random_vector<T>(g, n);
    cd dref = 0;
    double dbound = 0, ss = 0;
    for (size_t i = 0; i < n; ++i) {
      dref += std::conj(to_cd(x[i])) * to_cd(y[i]);
      dbound += std::abs(to_cd(x[i])) * std::abs(to_cd(y[i]));
      ss += std::norm(to_cd(x[i]));
    }
    const double nref = std::sqrt(ss);
    // Probabilistic rounding-error bound (Higham & Mary): ~ sqrt(n) u sum|x||y|,
    // with a generous constant.
    const double factor = 8.0 * std::sqrt(double(n)) + 8.0;
    T results[2];
    R norms[2];
    int i = 0;
    for (gpufmm_context_t ctx : {this->gpu, this->cpu}) {
      Arr X = uploaded(ctx, x), Y = uploaded(ctx, y);
      T d{};
      R r{};
      GPUFMM_OK(gpufmm_array_dot(X, Y, &d));
      GPUFMM_OK(gpufmm_array_nrm2(X, &r));
      expect_scalar_close<T>(d, dref, dbound, factor, "dot");
      expect_scalar_close<R>(r, cd(nref, 0), nref, factor, "nrm2");
      results[i] = d;
      norms[i] = r;
      ++i;
    }
    // GPU vs CPU on the same inputs.
    expect_scalar_close<T>(results[0], to_cd(results[1]), dbound, 2 * factor, "dot gpu vs cpu");
    expect_scalar_close<R>(norms[0], to_cd(norms[1]), nref, 2 * factor, "nrm2 gpu vs cpu");
  }
}

TYPED_TEST(CudaBlas, Gemv) {
  using T = TypeParam;
  SCOPED_TRACE(this->rng.trace());
  auto& g = this->rng.gen;
  const int64_t m = 37, n = 23;
  const auto A = random_vector<T>(g, size_t(m * n));
  for (gpufmm_op_t op : {GPUFMM_OP_N, GPUFMM_OP_T, GPUFMM_OP_C}) {
    SCOPED_TRACE("op = " + std::to_string(op));
    const int64_t xn = op == GPUFMM_OP_N ? n : m, yn = op == GPUFMM_OP_N ? m : n;
    const auto x = random_vector<T>(g, size_t(xn)), y = random_vector<T>(g, size_t(yn));
    const T alpha = random_scalar<T>(g), beta = random_scalar<T>(g);
    std::vector<cd> ref(static_cast<size_t>(yn));
    std::vector<double> bound(static_cast<size_t>(yn));
    for (int64_t i = 0; i < yn; ++i) {
      cd s = 0;
      double b = 0;
      for (int64_t l = 0; l < xn; ++l) {
        const cd a = op_elem(A, m, op, i, l);
        s += a * to_cd(x[l]);
        b += std::abs(a) * std::abs(to_cd(x[l]));
      }
      ref[i] = to_cd(alpha) * s + to_cd(beta) * to_cd(y[i]);
      bound[i] = std::abs(to_cd(alpha)) * b + std::abs(to_cd(beta)) * std::abs(to_cd(y[i]));
    }
    std::vector<T> out[2];
    int k = 0;
    for (gpufmm_context_t ctx : {this->gpu, this->cpu}) {
      Arr Ad = uploaded(ctx, A, {m, n}), X = uploaded(ctx, x), Y = uploaded(ctx, y);
      GPUFMM_OK(gpufmm_array_gemv(op, &alpha, Ad, X, &beta, Y));
      out[k] = downloaded<T>(Y);
      expect_close(out[k], ref, bound, 4.0 * (xn + 2), k == 0 ? "gemv gpu" : "gemv cpu");
      ++k;
    }
    std::vector<cd> cpu_ref(out[1].size());
    for (size_t i = 0; i < cpu_ref.size(); ++i) cpu_ref[i] = to_cd(out[1][i]);
    expect_close(out[0], cpu_ref, bound, 8.0 * (xn + 2), "gemv gpu vs cpu");
  }
}

TYPED_TEST(CudaBlas, Gemm) {
  using T = TypeParam;
  SCOPED_TRACE(this->rng.trace());
  auto& g = this->rng.gen;
  const int64_t m = 19, n = 23, k = 31;
  for (gpufmm_op_t ta : {GPUFMM_OP_N, GPUFMM_OP_T, GPUFMM_OP_C}) {
    for (gpufmm_op_t tb : {GPUFMM_OP_N, GPUFMM_OP_T, GPUFMM_OP_C}) {
      SCOPED_TRACE("transa = " + std::to_string(ta) + ", transb = " + std::to_string(tb));
      const int64_t ar = ta == GPUFMM_OP_N ? m : k, ac = ta == GPUFMM_OP_N ? k : m;
      const int64_t br = tb == GPUFMM_OP_N ? k : n, bc = tb == GPUFMM_OP_N ? n : k;
      const auto A = random_vector<T>(g, size_t(ar * ac)), B = random_vector<T>(g, size_t(br * bc));
      const auto C = random_vector<T>(g, size_t(m * n));
      const T alpha = random_scalar<T>(g), beta = random_scalar<T>(g);
      std::vector<cd> ref(static_cast<size_t>(m * n));
      std::vector<double> bound(static_cast<size_t>(m * n));
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          cd s = 0;
          double b = 0;
          for (int64_t l = 0; l < k; ++l) {
            const cd a = op_elem(A, ar, ta, i, l), bb = op_elem(B, br, tb, l, j);
            s += a * bb;
            b += std::abs(a) * std::abs(bb);
          }
          ref[i + j * m] = to_cd(alpha) * s + to_cd(beta) * to_cd(C[i + j * m]);
          bound[i + j * m] = std::abs(to_cd(alpha)) * b + std::abs(to_cd(beta)) * std::abs(to_cd(C[i + j * m]));
        }
      std::vector<T> out[2];
      int c = 0;
      for (gpufmm_context_t ctx : {this->gpu, this->cpu}) {
        Arr Ad = uploaded(ctx, A, {ar, ac}), Bd = uploaded(ctx, B, {br, bc}), Cd = uploaded(ctx, C, {m, n});
        GPUFMM_OK(gpufmm_array_gemm(ta, tb, &alpha, Ad, Bd, &beta, Cd));
        out[c] = downloaded<T>(Cd);
        expect_close(out[c], ref, bound, 4.0 * (k + 2), c == 0 ? "gemm gpu" : "gemm cpu");
        ++c;
      }
      std::vector<cd> cpu_ref(out[1].size());
      for (size_t i = 0; i < cpu_ref.size(); ++i) cpu_ref[i] = to_cd(out[1][i]);
      expect_close(out[0], cpu_ref, bound, 8.0 * (k + 2), "gemm gpu vs cpu");
    }
  }
}

TEST_F(CudaArrays, BlasRejectsIntegers) {
  Arr a = uploaded(gpu, std::vector<int32_t>(10, 1)), b = uploaded(gpu, std::vector<int32_t>(10, 2));
  const int32_t alpha = 2;
  int32_t r = 0;
  EXPECT_EQ(GPUFMM_ERROR_TYPE_MISMATCH, gpufmm_array_axpy(&alpha, a, b));
  EXPECT_EQ(GPUFMM_ERROR_TYPE_MISMATCH, gpufmm_array_scal(&alpha, a));
  EXPECT_EQ(GPUFMM_ERROR_TYPE_MISMATCH, gpufmm_array_dot(a, b, &r));
  EXPECT_EQ(GPUFMM_ERROR_TYPE_MISMATCH, gpufmm_array_nrm2(a, &r));
  EXPECT_EQ(downloaded<int32_t>(b), std::vector<int32_t>(10, 2));
}

// ------------------------------------------------------------------ reductions

template <class T>
void sum_checks(gpufmm_context_t gpu, gpufmm_context_t cpu, std::mt19937_64& g) {
  SCOPED_TRACE(std::string("dtype ") + std::to_string(Dt<T>::value));
  for (size_t n : {size_t(1), size_t(1000), size_t(1u << 20) + 3}) {
    // Exactly summable data: the result is exact in any order.
    const auto x = exact_vector<T>(g, n);
    T want{};
    if constexpr (std::is_integral_v<T>) {
      std::make_unsigned_t<T> s = 0;
      for (auto v : x) s += static_cast<std::make_unsigned_t<T>>(v);
      want = static_cast<T>(s);
    } else {
      cd s = 0;
      for (auto v : x) s += to_cd(v);
      want = from_cd<T>(s);
    }
    for (gpufmm_context_t ctx : {gpu, cpu}) {
      Arr a = uploaded(ctx, x);
      T got{};
      GPUFMM_OK(gpufmm_array_sum(a, &got));
      EXPECT_EQ(got, want) << "n = " << n << (ctx == gpu ? " (gpu)" : " (cpu)");
    }
  }
  if constexpr (!std::is_integral_v<T>) {
    // Random data: both backends close to the double reference and each other.
    const size_t n = 100003;
    const auto x = random_vector<T>(g, n);
    cd ref = 0;
    double bound = 0;
    for (auto v : x) {
      ref += to_cd(v);
      bound += std::abs(to_cd(v));
    }
    const double factor = 8.0 * std::sqrt(double(n)) + 8.0;
    T got[2];
    int i = 0;
    for (gpufmm_context_t ctx : {gpu, cpu}) {
      Arr a = uploaded(ctx, x);
      GPUFMM_OK(gpufmm_array_sum(a, &got[i]));
      expect_scalar_close<T>(got[i], ref, bound, factor, i == 0 ? "sum gpu" : "sum cpu");
      ++i;
    }
    expect_scalar_close<T>(got[0], to_cd(got[1]), bound, 2 * factor, "sum gpu vs cpu");
  }
  // Empty: 0.
  Arr e = new_array(gpu, Dt<T>::value, {0});
  T z = random_value<T>(g);
  GPUFMM_OK(gpufmm_array_sum(e, &z));
  EXPECT_EQ(z, T{});
}

TEST_F(CudaArrays, Sum) {
  SCOPED_TRACE(rng.trace());
  sum_checks<int32_t>(gpu, cpu, rng.gen);
  sum_checks<int64_t>(gpu, cpu, rng.gen);
  sum_checks<float>(gpu, cpu, rng.gen);
  sum_checks<double>(gpu, cpu, rng.gen);
  sum_checks<cf>(gpu, cpu, rng.gen);
  sum_checks<cd>(gpu, cpu, rng.gen);
}

TEST_F(CudaArrays, IntegerSumWrapsLikeC) {
  const std::vector<int32_t> x(1000, std::numeric_limits<int32_t>::max());
  uint32_t s = 0;
  for (auto v : x) s += static_cast<uint32_t>(v);
  const int32_t want = static_cast<int32_t>(s);
  for (gpufmm_context_t ctx : {gpu, cpu}) {
    Arr a = uploaded(ctx, x);
    int32_t got = 0;
    GPUFMM_OK(gpufmm_array_sum(a, &got));
    EXPECT_EQ(got, want);
  }
  const std::vector<int64_t> y = {std::numeric_limits<int64_t>::max(), 2, std::numeric_limits<int64_t>::min()};
  for (gpufmm_context_t ctx : {gpu, cpu}) {
    Arr a = uploaded(ctx, y);
    int64_t got = 0;
    GPUFMM_OK(gpufmm_array_sum(a, &got));
    EXPECT_EQ(got, int64_t(1));
  }
}

template <class T>
void minmax_checks(gpufmm_context_t gpu, gpufmm_context_t cpu, std::mt19937_64& g) {
  SCOPED_TRACE(std::string("dtype ") + std::to_string(Dt<T>::value));
  for (size_t n : {size_t(1), size_t(777), size_t(1u << 20) + 5}) {
    const auto x = random_vector<T>(g, n);
    const T mn = *std::min_element(x.begin(), x.end()), mx = *std::max_element(x.begin(), x.end());
    for (gpufmm_context_t ctx : {gpu, cpu}) {
      Arr a = uploaded(ctx, x);
      T lo{}, hi{};
      GPUFMM_OK(gpufmm_array_min(a, &lo));
      GPUFMM_OK(gpufmm_array_max(a, &hi));
      EXPECT_EQ(lo, mn) << "n = " << n << (ctx == gpu ? " (gpu)" : " (cpu)");
      EXPECT_EQ(hi, mx) << "n = " << n << (ctx == gpu ? " (gpu)" : " (cpu)");
    }
  }
  // Extremes of the type are found (the reduction's initial value is not).
  {
    std::vector<T> x = random_vector<T>(g, 513);
    x[200] = std::numeric_limits<T>::lowest();
    x[300] = std::numeric_limits<T>::max();
    Arr a = uploaded(gpu, x);
    T lo{}, hi{};
    GPUFMM_OK(gpufmm_array_min(a, &lo));
    GPUFMM_OK(gpufmm_array_max(a, &hi));
    EXPECT_EQ(lo, std::numeric_limits<T>::lowest());
    EXPECT_EQ(hi, std::numeric_limits<T>::max());
  }
  if constexpr (std::is_floating_point_v<T>) {
    // NaN propagates wherever it is, for both backends; infinities are values.
    const size_t n = 100001;
    for (size_t pos : {size_t(0), size_t(12345), n - 1}) {
      std::vector<T> x = random_vector<T>(g, n);
      x[pos] = std::numeric_limits<T>::quiet_NaN();
      for (gpufmm_context_t ctx : {gpu, cpu}) {
        Arr a = uploaded(ctx, x);
        T lo = 0, hi = 0, s = 0;
        GPUFMM_OK(gpufmm_array_min(a, &lo));
        GPUFMM_OK(gpufmm_array_max(a, &hi));
        GPUFMM_OK(gpufmm_array_sum(a, &s));
        EXPECT_TRUE(std::isnan(lo)) << "NaN at " << pos << (ctx == gpu ? " (gpu)" : " (cpu)");
        EXPECT_TRUE(std::isnan(hi)) << "NaN at " << pos << (ctx == gpu ? " (gpu)" : " (cpu)");
        EXPECT_TRUE(std::isnan(s)) << "NaN at " << pos << (ctx == gpu ? " (gpu)" : " (cpu)");
      }
    }
    std::vector<T> x = random_vector<T>(g, 1000);
    x[10] = -std::numeric_limits<T>::infinity();
    x[20] = std::numeric_limits<T>::infinity();
    Arr a = uploaded(gpu, x);
    T lo = 0, hi = 0;
    GPUFMM_OK(gpufmm_array_min(a, &lo));
    GPUFMM_OK(gpufmm_array_max(a, &hi));
    EXPECT_EQ(lo, -std::numeric_limits<T>::infinity());
    EXPECT_EQ(hi, std::numeric_limits<T>::infinity());
  }
  // Empty: INVALID_ARGUMENT, result untouched.
  Arr e = new_array(gpu, Dt<T>::value, {0});
  T r = T(7);
  EXPECT_EQ(GPUFMM_ERROR_INVALID_ARGUMENT, gpufmm_array_min(e, &r));
  EXPECT_EQ(GPUFMM_ERROR_INVALID_ARGUMENT, gpufmm_array_max(e, &r));
  EXPECT_EQ(r, T(7));
}

TEST_F(CudaArrays, MinMax) {
  SCOPED_TRACE(rng.trace());
  minmax_checks<int32_t>(gpu, cpu, rng.gen);
  minmax_checks<int64_t>(gpu, cpu, rng.gen);
  minmax_checks<float>(gpu, cpu, rng.gen);
  minmax_checks<double>(gpu, cpu, rng.gen);
  Arr c = uploaded(gpu, std::vector<cf>(10, cf(1, 2)));
  cf r(3, 4);
  EXPECT_EQ(GPUFMM_ERROR_TYPE_MISMATCH, gpufmm_array_min(c, &r));
  EXPECT_EQ(GPUFMM_ERROR_TYPE_MISMATCH, gpufmm_array_max(c, &r));
  EXPECT_EQ(r, cf(3, 4));
}

// ------------------------------------------------------------------ memory

TEST_F(CudaArrays, OutOfMemoryLeavesContextUsable) {
  const int64_t dims[1] = {int64_t(1) << 40};  // 8 TiB of float64
  gpufmm_array_t a = nullptr;
  EXPECT_EQ(GPUFMM_ERROR_OUT_OF_MEMORY, gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dims, &a));
  EXPECT_EQ(a, nullptr);
  const std::string msg = gpufmm_last_error_message();
  EXPECT_NE(msg.find("8796093022208"), std::string::npos) << msg;  // bytes requested
  EXPECT_NE(msg.find("free"), std::string::npos) << msg;
  // Still usable: allocate, compute, reduce, BLAS.
  SCOPED_TRACE(rng.trace());
  const auto x = exact_vector<double>(rng.gen, 1000);
  double want = 0;
  for (double v : x) want += v;
  Arr b = uploaded(gpu, x);
  double s = 0, d = 0;
  GPUFMM_OK(gpufmm_array_sum(b, &s));
  EXPECT_EQ(s, want);
  GPUFMM_OK(gpufmm_array_dot(b, b, &d));
  EXPECT_GT(d, 0.0);
  GPUFMM_OK(gpufmm_context_synchronize(gpu));
  // And a second failure behaves the same.
  EXPECT_EQ(GPUFMM_ERROR_OUT_OF_MEMORY, gpufmm_array_create(gpu, GPUFMM_FLOAT64, 1, dims, &a));
  EXPECT_EQ(a, nullptr);
  EXPECT_TRUE(bit_equal(downloaded<double>(b), x));
}

TEST_F(CudaArrays, AsyncUploadDownloadThenSynchronize) {
  SCOPED_TRACE(rng.trace());
  const size_t n = size_t(1) << 22;
  const auto x = random_vector<float>(rng.gen, n);
  // Pinned host buffers, so that the copies really are asynchronous.
  float* hin = nullptr;
  float* hout = nullptr;
  CUDA_OK(cudaMallocHost(reinterpret_cast<void**>(&hin), n * sizeof(float)));
  CUDA_OK(cudaMallocHost(reinterpret_cast<void**>(&hout), n * sizeof(float)));
  std::memcpy(hin, x.data(), n * sizeof(float));
  std::fill(hout, hout + n, -7.0f);
  {
    Arr a = new_array(gpu, GPUFMM_FLOAT32, {int64_t(n)});
    Arr b = new_array(gpu, GPUFMM_FLOAT32, {int64_t(n)});
    const float two = 2.0f;
    // All on the context stream, in order: upload, scale, copy, download.
    EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_upload_async(a, hin, int64_t(n))) << gpufmm_last_error_message();
    EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_scal(&two, a)) << gpufmm_last_error_message();
    EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_copy(a, b)) << gpufmm_last_error_message();
    EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_download_async(b, hout, int64_t(n))) << gpufmm_last_error_message();
    EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_context_synchronize(gpu)) << gpufmm_last_error_message();
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += hout[i] != 2.0f * x[i];
    EXPECT_EQ(bad, 0u);
    // Pageable buffers too.
    std::vector<float> back(n, 0.0f);
    EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_upload_async(a, x.data(), int64_t(n)));
    EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_array_download_async(a, back.data(), int64_t(n)));
    EXPECT_EQ(GPUFMM_SUCCESS, gpufmm_context_synchronize(gpu));
    EXPECT_TRUE(bit_equal(back, x));
  }
  EXPECT_EQ(cudaSuccess, cudaFreeHost(hin));
  EXPECT_EQ(cudaSuccess, cudaFreeHost(hout));
}

TEST_F(CudaArrays, WrapUserDeviceMemory) {
  SCOPED_TRACE(rng.trace());
  const int64_t m = 33, n = 17;
  const size_t count = size_t(m * n);
  CUDA_OK(cudaSetDevice(0));
  void* raw = nullptr;
  // Room for an aligned array and for misaligned ones (offsets 4 and 8 bytes).
  CUDA_OK(cudaMalloc(&raw, count * 16 + 64));
  {
    const auto x = random_vector<double>(rng.gen, count);
    const int64_t dims[2] = {m, n};
    Arr w;
    GPUFMM_OK(gpufmm_array_wrap(gpu, GPUFMM_FLOAT64, 2, dims, raw, &w.h));
    void* data = nullptr;
    GPUFMM_OK(gpufmm_array_data(w, &data));
    EXPECT_EQ(data, raw);
    GPUFMM_OK(gpufmm_array_upload(w, x.data(), int64_t(count)));
    std::vector<double> back(count);
    CUDA_OK(cudaMemcpy(back.data(), raw, count * sizeof(double), cudaMemcpyDeviceToHost));
    EXPECT_TRUE(bit_equal(back, x));
    // Data written by the user is seen by gpufmm.
    std::vector<double> ones(count, 1.0);
    CUDA_OK(cudaMemcpy(raw, ones.data(), count * sizeof(double), cudaMemcpyHostToDevice));
    double s = 0;
    GPUFMM_OK(gpufmm_array_sum(w, &s));
    EXPECT_EQ(s, double(count));
  }
  // Destroying the wrapper did not free the memory: it is still ours.
  std::vector<double> probe(4);
  EXPECT_EQ(cudaSuccess, cudaMemcpy(probe.data(), raw, sizeof(double) * 4, cudaMemcpyDeviceToHost));

  // Complex data need only the alignment of one real component.
  {
    const cd v(1.5, -2.25);
    Arr w;
    const int64_t dims[1] = {int64_t(count)};
    void* p8 = static_cast<char*>(raw) + 8;
    GPUFMM_OK(gpufmm_array_wrap(gpu, GPUFMM_COMPLEX128, 1, dims, p8, &w.h));
    GPUFMM_OK(gpufmm_array_fill(w, &v));
    EXPECT_TRUE(bit_equal(downloaded<cd>(w), std::vector<cd>(count, v)));
  }
  {
    // float64 data at a 4-byte offset: refused (cuBLAS/CUB would fault).
    gpufmm_array_t w = nullptr;
    const int64_t dims[1] = {int64_t(count)};
    void* p4 = static_cast<char*>(raw) + 4;
    EXPECT_EQ(GPUFMM_ERROR_INVALID_ARGUMENT, gpufmm_array_wrap(gpu, GPUFMM_FLOAT64, 1, dims, p4, &w));
    EXPECT_EQ(w, nullptr);
    EXPECT_NE(std::string(gpufmm_last_error_message()).find("aligned"), std::string::npos);
  }
  EXPECT_EQ(cudaSuccess, cudaFree(raw));
}

TEST_F(CudaArrays, CallerCurrentDeviceIsRestored) {
  int ndev = 0;
  CUDA_OK(cudaGetDeviceCount(&ndev));
  const int mine = ndev - 1;  // with one GPU this is device 0 and still checks the calls work
  CUDA_OK(cudaSetDevice(mine));
  {
    Arr a = uploaded(gpu, std::vector<float>(1000, 1.0f));
    float s = 0;
    GPUFMM_OK(gpufmm_array_sum(a, &s));
    EXPECT_EQ(s, 1000.0f);
    GPUFMM_OK(gpufmm_array_scal(&s, a));
    GPUFMM_OK(gpufmm_context_synchronize(gpu));
    gpufmm_device_info_t info;
    GPUFMM_OK(gpufmm_context_device_info(gpu, &info));
    EXPECT_EQ(info.device, 0);
  }
  int now = -1;
  CUDA_OK(cudaGetDevice(&now));
  EXPECT_EQ(now, mine);
  CUDA_OK(cudaSetDevice(0));
}

TEST_F(CudaArrays, ContextOnAnotherDevice) {
  int ndev = 0;
  CUDA_OK(cudaGetDeviceCount(&ndev));
  if (ndev < 2) GTEST_SKIP() << "needs 2 GPUs";
  SCOPED_TRACE(rng.trace());
  gpufmm_context_t other = nullptr;
  GPUFMM_OK(gpufmm_context_create(ndev - 1, &other));
  CUDA_OK(cudaSetDevice(0));
  {
    gpufmm_device_info_t info;
    GPUFMM_OK(gpufmm_context_device_info(other, &info));
    EXPECT_EQ(info.device, ndev - 1);
    const int64_t m = 40, n = 30, k = 20;
    const auto A = random_vector<double>(rng.gen, size_t(m * k)), B = random_vector<double>(rng.gen, size_t(k * n));
    const double one = 1.0, zero = 0.0;
    std::vector<double> out[2];
    int i = 0;
    for (gpufmm_context_t ctx : {other, gpu}) {
      Arr Ad = uploaded(ctx, A, {m, k}), Bd = uploaded(ctx, B, {k, n});
      Arr Cd = new_array(ctx, GPUFMM_FLOAT64, {m, n});
      GPUFMM_OK(gpufmm_array_fill(Cd, &zero));
      GPUFMM_OK(gpufmm_array_gemm(GPUFMM_OP_N, GPUFMM_OP_N, &one, Ad, Bd, &zero, Cd));
      double s = 0;
      GPUFMM_OK(gpufmm_array_sum(Cd, &s));
      out[i] = downloaded<double>(Cd);
      double host_sum = 0, host_abs = 0;
      for (double v : out[i]) {
        host_sum += v;
        host_abs += std::abs(v);
      }
      EXPECT_NEAR(s, host_sum, 1e-12 * host_abs * std::sqrt(double(m * n)) + 1e-300);
      ++i;
      void* p = nullptr;
      GPUFMM_OK(gpufmm_array_data(Cd, &p));
      cudaPointerAttributes attr;
      CUDA_OK(cudaPointerGetAttributes(&attr, p));
      EXPECT_EQ(attr.device, ctx == other ? ndev - 1 : 0);
    }
    ASSERT_EQ(out[0].size(), out[1].size());
    for (size_t j = 0; j < out[0].size(); ++j) EXPECT_NEAR(out[0][j], out[1][j], 1e-12 * k);
  }
  int now = -1;
  CUDA_OK(cudaGetDevice(&now));
  EXPECT_EQ(now, 0);
  GPUFMM_OK(gpufmm_context_destroy(other));
  CUDA_OK(cudaGetDevice(&now));
  EXPECT_EQ(now, 0);
}

// ------------------------------------------------------------------ GPU vs CPU

TEST_F(CudaArrays, GpuAndCpuBackendsAgree) {
  SCOPED_TRACE(rng.trace());
  auto& g = rng.gen;
  const int64_t m = 64, n = 48;
  const auto A = random_vector<double>(g, size_t(m * n));
  const auto x = random_vector<double>(g, size_t(n));
  const auto y = random_vector<double>(g, size_t(m));
  const double alpha = 1.25, beta = -0.5;
  std::vector<double> r[2];
  double scalars[2][5];
  int i = 0;
  for (gpufmm_context_t ctx : {gpu, cpu}) {
    Arr Ad = uploaded(ctx, A, {m, n}), X = uploaded(ctx, x), Y = uploaded(ctx, y);
    Arr Z = new_array(ctx, GPUFMM_FLOAT64, {m});
    GPUFMM_OK(gpufmm_array_gemv(GPUFMM_OP_N, &alpha, Ad, X, &beta, Y));  // Y = a*A*x + b*y
    GPUFMM_OK(gpufmm_array_copy(Y, Z));
    GPUFMM_OK(gpufmm_array_axpy(&alpha, Y, Z));  // Z = (1+a) Y
    GPUFMM_OK(gpufmm_array_scal(&beta, Z));
    GPUFMM_OK(gpufmm_array_copy_range(Y, 3, Z, 40, 10));
    GPUFMM_OK(gpufmm_array_dot(Y, Z, &scalars[i][0]));
    GPUFMM_OK(gpufmm_array_nrm2(Z, &scalars[i][1]));
    GPUFMM_OK(gpufmm_array_sum(Z, &scalars[i][2]));
    GPUFMM_OK(gpufmm_array_min(Z, &scalars[i][3]));
    GPUFMM_OK(gpufmm_array_max(Z, &scalars[i][4]));
    r[i] = downloaded<double>(Z);
    ++i;
  }
  ASSERT_EQ(r[0].size(), r[1].size());
  double scale = 0;
  for (double v : r[1]) scale = std::max(scale, std::abs(v));
  const double tol = 1e-12 * (scale + 1) * n;
  for (size_t k = 0; k < r[0].size(); ++k) EXPECT_NEAR(r[0][k], r[1][k], tol) << "element " << k;
  for (int k = 0; k < 5; ++k)
    EXPECT_NEAR(scalars[0][k], scalars[1][k], 1e-12 * (std::abs(scalars[1][k]) + 1) * m) << "scalar " << k;
}

}  // namespace
