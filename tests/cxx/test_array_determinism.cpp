// sum, dot and nrm2 of the CPU backend give the same bits for every OpenMP
// thread count and every run (fixed-order partials, src/cxx/array/array_cpu.cpp).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gpufmm.h"

namespace {

struct Case {
  gpufmm_dtype_t dtype;
  int reals;  // real components per element
  bool single;
};

// Raw result bytes of one call (16: the largest result, complex128).
struct Bits {
  unsigned char b[16] = {0};
  bool operator==(const Bits& o) const { return std::memcmp(b, o.b, sizeof b) == 0; }
};

class ArrayDeterminism : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx_), GPUFMM_SUCCESS);
    threads_ = omp_get_max_threads();
  }
  void TearDown() override {
    omp_set_num_threads(threads_);
    EXPECT_EQ(gpufmm_context_destroy(ctx_), GPUFMM_SUCCESS);
  }
  // n elements of mixed signs over six orders of magnitude, so that the
  // order of the additions shows in the last bits.
  gpufmm_array_t random_array(const Case& c, int64_t n) {
    std::vector<double> v(static_cast<size_t>(n * c.reals));
    std::uniform_real_distribution<double> u(-1.0, 1.0), e(-3.0, 3.0);
    for (double& x : v) x = u(gen_) * std::pow(10.0, e(gen_));
    std::vector<float> f(v.begin(), v.end());
    const int64_t dims[1] = {n};
    gpufmm_array_t a = nullptr;
    EXPECT_EQ(gpufmm_array_create(ctx_, c.dtype, 1, dims, &a), GPUFMM_SUCCESS);
    EXPECT_EQ(gpufmm_array_upload(a, c.single ? static_cast<const void*>(f.data()) : v.data(), n), GPUFMM_SUCCESS);
    return a;
  }
  gpufmm_context_t ctx_ = nullptr;
  int threads_ = 1;
  std::mt19937_64 gen_{20251124};
};

TEST_F(ArrayDeterminism, SumDotNrm2AreTheSameBitsForEveryThreadCount) {
  const Case cases[] = {{GPUFMM_FLOAT32, 1, true},
                        {GPUFMM_FLOAT64, 1, false},
                        {GPUFMM_COMPLEX64, 2, true},
                        {GPUFMM_COMPLEX128, 2, false}};
  const int64_t sizes[] = {1, 7, 4095, 4097, 100003, (int64_t(1) << 20) + 13};
  const int threads[] = {1, 2, 3, 4, 7};
  for (const Case& c : cases)
    for (int64_t n : sizes) {
      gpufmm_array_t x = random_array(c, n), y = random_array(c, n);
      Bits sum1, dot1, nrm1;
      for (int t : threads)
        for (int run = 0; run < 2; ++run) {
          omp_set_num_threads(t);
          Bits sum, dot, nrm;
          ASSERT_EQ(gpufmm_array_sum(x, sum.b), GPUFMM_SUCCESS);
          ASSERT_EQ(gpufmm_array_dot(x, y, dot.b), GPUFMM_SUCCESS);
          ASSERT_EQ(gpufmm_array_nrm2(x, nrm.b), GPUFMM_SUCCESS);
          if (t == 1 && run == 0) {
            sum1 = sum;
            dot1 = dot;
            nrm1 = nrm;
            continue;
          }
          EXPECT_TRUE(sum == sum1) << "sum, dtype " << c.dtype << ", n " << n << ", " << t << " threads, run " << run;
          EXPECT_TRUE(dot == dot1) << "dot, dtype " << c.dtype << ", n " << n << ", " << t << " threads, run " << run;
          EXPECT_TRUE(nrm == nrm1) << "nrm2, dtype " << c.dtype << ", n " << n << ", " << t << " threads, run "
                                   << run;
        }
      EXPECT_EQ(gpufmm_array_destroy(x), GPUFMM_SUCCESS);
      EXPECT_EQ(gpufmm_array_destroy(y), GPUFMM_SUCCESS);
    }
}

// nrm2 scales where squares would overflow or underflow (Blue's algorithm),
// and propagates NaN and Inf.
TEST_F(ArrayDeterminism, Nrm2ExtremeValues) {
  const int64_t dims[1] = {3};
  gpufmm_array_t a = nullptr;
  ASSERT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 1, dims, &a), GPUFMM_SUCCESS);
  auto nrm2 = [&](double x0, double x1, double x2) {
    const double h[3] = {x0, x1, x2};
    EXPECT_EQ(gpufmm_array_upload(a, h, 3), GPUFMM_SUCCESS);
    double r = -1;
    EXPECT_EQ(gpufmm_array_nrm2(a, &r), GPUFMM_SUCCESS);
    return r;
  };
  EXPECT_DOUBLE_EQ(nrm2(3e300, 4e300, 0), 5e300);
  EXPECT_DOUBLE_EQ(nrm2(3e-300, 4e-300, 0), 5e-300);
  EXPECT_NEAR(nrm2(3e-320, 4e-320, 0) / 5e-320, 1.0, 1e-3);  // subnormal inputs
  EXPECT_DOUBLE_EQ(nrm2(1e300, 1.0, 1e-300), 1e300);
  EXPECT_DOUBLE_EQ(nrm2(1.0, 1e-300, 0), 1.0);
  EXPECT_DOUBLE_EQ(nrm2(3.0, 4.0, 0), 5.0);
  EXPECT_TRUE(std::isnan(nrm2(1.0, NAN, 1e300)));
  EXPECT_TRUE(std::isnan(nrm2(1e-300, NAN, 0)));
  EXPECT_TRUE(std::isinf(nrm2(1.0, INFINITY, 0)));
  EXPECT_EQ(nrm2(0, 0, 0), 0.0);
  EXPECT_EQ(gpufmm_array_destroy(a), GPUFMM_SUCCESS);
}

}  // namespace
