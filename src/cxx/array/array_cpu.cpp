// CPU backend of the array operations: BLAS (Fortran interface, any
// LP64 BLAS; OpenBLAS preferred) for the linear algebra, OpenMP for fill and
// reductions. Level-1 calls are split into chunks of at most INT_MAX elements.
// sum, dot and nrm2 are our own fixed-order reductions (see `blocked`): the
// same bits for every thread count and every run, which BLAS does not
// promise.
#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "array/array.hpp"

using cf = std::complex<float>;
using cd = std::complex<double>;

extern "C" {
void saxpy_(const int*, const float*, const float*, const int*, float*, const int*);
void daxpy_(const int*, const double*, const double*, const int*, double*, const int*);
void caxpy_(const int*, const cf*, const cf*, const int*, cf*, const int*);
void zaxpy_(const int*, const cd*, const cd*, const int*, cd*, const int*);
void sscal_(const int*, const float*, float*, const int*);
void dscal_(const int*, const double*, double*, const int*);
void cscal_(const int*, const cf*, cf*, const int*);
void zscal_(const int*, const cd*, cd*, const int*);
void sgemv_(const char*, const int*, const int*, const float*, const float*, const int*, const float*,
            const int*, const float*, float*, const int*);
void dgemv_(const char*, const int*, const int*, const double*, const double*, const int*, const double*,
            const int*, const double*, double*, const int*);
void cgemv_(const char*, const int*, const int*, const cf*, const cf*, const int*, const cf*, const int*,
            const cf*, cf*, const int*);
void zgemv_(const char*, const int*, const int*, const cd*, const cd*, const int*, const cd*, const int*,
            const cd*, cd*, const int*);
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
            const int*, const float*, const int*, const float*, float*, const int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
            const int*, const double*, const int*, const double*, double*, const int*);
void cgemm_(const char*, const char*, const int*, const int*, const int*, const cf*, const cf*, const int*,
            const cf*, const int*, const cf*, cf*, const int*);
void zgemm_(const char*, const char*, const int*, const int*, const int*, const cd*, const cd*, const int*,
            const cd*, const int*, const cd*, cd*, const int*);
}

namespace gpufmm {
namespace cpu {
namespace {

constexpr int64_t kChunk = INT_MAX;

// Calls f(offset, len) over [0, n) in chunks a 32-bit BLAS can take.
template <class F>
void chunks(int64_t n, F&& f) {
  for (int64_t off = 0; off < n; off += kChunk) f(off, static_cast<int>(std::min(kChunk, n - off)));
}

int blas_int(int64_t v, const char* what) {
  require(v <= INT_MAX, GPUFMM_ERROR_NOT_SUPPORTED, what, " = ", v,
          " exceeds the 32-bit integers of the CPU BLAS");
  return static_cast<int>(std::max<int64_t>(v, 1));
}

char op_char(gpufmm_op_t op) { return op == GPUFMM_OP_N ? 'N' : op == GPUFMM_OP_T ? 'T' : 'C'; }

[[noreturn]] void not_float(gpufmm_dtype_t dt, const char* op) {
  fail(GPUFMM_ERROR_TYPE_MISMATCH, op, " is not defined for dtype ", dtype_name(dt));
}

template <class T>
void fill_t(int64_t n, T* x, T v) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) x[i] = v;
}

// Deterministic reductions: [0, n) is cut into blocks of kBlock elements
// (a fixed size, not one per thread); any thread reduces a block in index
// order, with kLanes interleaved accumulators (vectorisable without
// reassociation), and one thread then adds the block partials in block
// order. The result depends on n and the data only: the same bits for every
// thread count and every run.
constexpr int64_t kBlock = 4096;
constexpr int kLanes = 8;

// term(i) -> Acc for i in [begin, end), summed in the fixed order above.
template <class Acc, class Term>
Acc block_sum(int64_t begin, int64_t end, const Term& term) {
  Acc acc[kLanes];
  for (Acc& a : acc) a = Acc();
  int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += term(i + l);
  for (; i < end; ++i) acc[i % kLanes] += term(i);
  for (int l = 1; l < kLanes; ++l) acc[0] += acc[l];
  return acc[0];
}

// The sum of term(i) over [0, n), n > 0, deterministic.
template <class Acc, class Term>
Acc blocked(int64_t n, const Term& term) {
  const int64_t nb = (n + kBlock - 1) / kBlock;
  std::vector<Acc> part(static_cast<size_t>(nb));
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < nb; ++b) part[b] = block_sum<Acc>(b * kBlock, std::min(n, (b + 1) * kBlock), term);
  Acc total = part[0];
  for (int64_t b = 1; b < nb; ++b) total += part[b];
  return total;
}

// Sum accumulated in Acc: double (or complex<double>) for floats; for
// integers the unsigned type of the same width, so that sums wrap like C
// unsigned arithmetic (no undefined overflow).
template <class T, class Acc>
void sum_t(int64_t n, const T* x, void* result) {
  const Acc s = blocked<Acc>(n, [x](int64_t i) { return static_cast<Acc>(x[i]); });
  const T out = static_cast<T>(s);
  std::memcpy(result, &out, sizeof(T));
}

// conj(x) y (x^T y for reals), accumulated in double or complex<double>.
template <class T>
void dot_t(int64_t n, const T* x, const T* y, void* result) {
  const double d = blocked<double>(n, [x, y](int64_t i) { return double(x[i]) * double(y[i]); });
  const T out = static_cast<T>(d);
  std::memcpy(result, &out, sizeof out);
}

template <class T>
void dot_t(int64_t n, const std::complex<T>* x, const std::complex<T>* y, void* result) {
  const cd d = blocked<cd>(n, [x, y](int64_t i) {
    const double xr = x[i].real(), xi = x[i].imag(), yr = y[i].real(), yi = y[i].imag();
    return cd(xr * yr + xi * yi, xr * yi - xi * yr);
  });
  const std::complex<T> out(static_cast<T>(d.real()), static_cast<T>(d.imag()));
  std::memcpy(result, &out, sizeof out);
}

// Squares of single-precision values summed in double can neither overflow
// nor underflow; the norm is rounded to float once.
float nrm2_single(int64_t n, const float* v) {
  return static_cast<float>(std::sqrt(blocked<double>(n, [v](int64_t i) { return double(v[i]) * double(v[i]); })));
}

// Double precision: Blue's three accumulators (as the reference BLAS dnrm2
// of LAPACK 3.10): squares of small, medium and big values, the small and
// big ones scaled so that no square overflows or underflows. Sums of them
// add, so they reduce in blocks like the other sums.
struct BlueSums {
  static constexpr double kTsml = 0x1p-511, kTbig = 0x1p486, kSsml = 0x1p537, kSbig = 0x1p-538;
  double sml = 0, med = 0, big = 0;
  BlueSums& operator+=(const BlueSums& o) {
    sml += o.sml;
    med += o.med;
    big += o.big;
    return *this;
  }
  static BlueSums of(double v) {  // NaN goes to med and propagates
    const double a = std::fabs(v);
    BlueSums t;
    if (a > kTbig) t.big = (a * kSbig) * (a * kSbig);
    else if (a < kTsml) t.sml = (a * kSsml) * (a * kSsml);
    else t.med = a * a;
    return t;
  }
  double norm() const {
    if (big > 0) return std::sqrt(big + (med * kSbig) * kSbig) / kSbig;
    if (sml > 0) {
      if (!(med > 0) && !std::isnan(med)) return std::sqrt(sml) / kSsml;
      const double m = std::sqrt(med), s = std::sqrt(sml) / kSsml;
      const double lo = std::isnan(m) || m < s ? m : s, hi = std::isnan(m) || m < s ? s : m;
      return hi * std::sqrt(1 + (lo / hi) * (lo / hi));
    }
    return std::sqrt(med);
  }
};

double nrm2_double(int64_t n, const double* v) {
  return blocked<BlueSums>(n, [v](int64_t i) { return BlueSums::of(v[i]); }).norm();
}

// min/max with NaN propagation for floating types.
template <class T>
void minmax_t(int64_t n, const T* x, bool is_max, void* result) {
  T best = x[0];
  bool nan = false;
#pragma omp parallel
  {
    T local = x[0];
    bool lnan = false;
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < n; ++i) {
      const T v = x[i];
      if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
        if (v != v) lnan = true;
      }
      if (is_max ? (v > local) : (v < local)) local = v;
    }
#pragma omp critical
    {
      if (is_max ? (local > best) : (local < best)) best = local;
      nan = nan || lnan;
    }
  }
  if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
    if (nan) best = std::numeric_limits<T>::quiet_NaN();
  }
  std::memcpy(result, &best, sizeof(T));
}

}  // namespace

void fill(gpufmm_dtype_t dt, int64_t n, void* x, const void* value) {
  switch (dtype_size(dt)) {
    case 4: { uint32_t v; std::memcpy(&v, value, 4); fill_t(n, static_cast<uint32_t*>(x), v); break; }
    case 8: { uint64_t v; std::memcpy(&v, value, 8); fill_t(n, static_cast<uint64_t*>(x), v); break; }
    case 16: { cd v; std::memcpy(&v, value, 16); fill_t(n, static_cast<cd*>(x), v); break; }
    default: fail(GPUFMM_ERROR_INTERNAL, "fill: bad dtype");
  }
}

void axpy(gpufmm_dtype_t dt, int64_t n, const void* alpha, const void* x, void* y) {
  const int one = 1;
  chunks(n, [&](int64_t o, int len) {
    switch (dt) {
      case GPUFMM_FLOAT32: saxpy_(&len, (const float*)alpha, (const float*)x + o, &one, (float*)y + o, &one); break;
      case GPUFMM_FLOAT64: daxpy_(&len, (const double*)alpha, (const double*)x + o, &one, (double*)y + o, &one); break;
      case GPUFMM_COMPLEX64: caxpy_(&len, (const cf*)alpha, (const cf*)x + o, &one, (cf*)y + o, &one); break;
      case GPUFMM_COMPLEX128: zaxpy_(&len, (const cd*)alpha, (const cd*)x + o, &one, (cd*)y + o, &one); break;
      default: not_float(dt, "axpy");
    }
  });
}

void scal(gpufmm_dtype_t dt, int64_t n, const void* alpha, void* x) {
  const int one = 1;
  chunks(n, [&](int64_t o, int len) {
    switch (dt) {
      case GPUFMM_FLOAT32: sscal_(&len, (const float*)alpha, (float*)x + o, &one); break;
      case GPUFMM_FLOAT64: dscal_(&len, (const double*)alpha, (double*)x + o, &one); break;
      case GPUFMM_COMPLEX64: cscal_(&len, (const cf*)alpha, (cf*)x + o, &one); break;
      case GPUFMM_COMPLEX128: zscal_(&len, (const cd*)alpha, (cd*)x + o, &one); break;
      default: not_float(dt, "scal");
    }
  });
}

void dot(gpufmm_dtype_t dt, int64_t n, const void* x, const void* y, void* result) {
  switch (dt) {
    case GPUFMM_FLOAT32: dot_t(n, (const float*)x, (const float*)y, result); break;
    case GPUFMM_FLOAT64: dot_t(n, (const double*)x, (const double*)y, result); break;
    case GPUFMM_COMPLEX64: dot_t(n, (const cf*)x, (const cf*)y, result); break;
    case GPUFMM_COMPLEX128: dot_t(n, (const cd*)x, (const cd*)y, result); break;
    default: not_float(dt, "dot");
  }
}

// A complex array is the real array of its 2n components.
void nrm2(gpufmm_dtype_t dt, int64_t n, const void* x, void* result) {
  switch (dt) {
    case GPUFMM_FLOAT32:
    case GPUFMM_COMPLEX64: {
      const float f = nrm2_single(dt == GPUFMM_FLOAT32 ? n : 2 * n, static_cast<const float*>(x));
      std::memcpy(result, &f, 4);
      break;
    }
    case GPUFMM_FLOAT64:
    case GPUFMM_COMPLEX128: {
      const double d = nrm2_double(dt == GPUFMM_FLOAT64 ? n : 2 * n, static_cast<const double*>(x));
      std::memcpy(result, &d, 8);
      break;
    }
    default: not_float(dt, "nrm2");
  }
}

void gemv(gpufmm_dtype_t dt, gpufmm_op_t trans, int64_t m, int64_t n, const void* alpha, const void* A,
          int64_t lda, const void* x, const void* beta, void* y) {
  const int M = blas_int(m, "rows of A"), N = blas_int(n, "columns of A"), L = blas_int(lda, "lda"), one = 1;
  const char t = op_char(trans);
  switch (dt) {
    case GPUFMM_FLOAT32: sgemv_(&t, &M, &N, (const float*)alpha, (const float*)A, &L, (const float*)x, &one, (const float*)beta, (float*)y, &one); break;
    case GPUFMM_FLOAT64: dgemv_(&t, &M, &N, (const double*)alpha, (const double*)A, &L, (const double*)x, &one, (const double*)beta, (double*)y, &one); break;
    case GPUFMM_COMPLEX64: cgemv_(&t, &M, &N, (const cf*)alpha, (const cf*)A, &L, (const cf*)x, &one, (const cf*)beta, (cf*)y, &one); break;
    case GPUFMM_COMPLEX128: zgemv_(&t, &M, &N, (const cd*)alpha, (const cd*)A, &L, (const cd*)x, &one, (const cd*)beta, (cd*)y, &one); break;
    default: not_float(dt, "gemv");
  }
}

void gemm(gpufmm_dtype_t dt, gpufmm_op_t ta, gpufmm_op_t tb, int64_t m, int64_t n, int64_t k, const void* alpha,
          const void* A, int64_t lda, const void* B, int64_t ldb, const void* beta, void* C, int64_t ldc) {
  const int M = blas_int(m, "m"), N = blas_int(n, "n"), K = static_cast<int>(k);
  blas_int(k, "k");
  const int LA = blas_int(lda, "lda"), LB = blas_int(ldb, "ldb"), LC = blas_int(ldc, "ldc");
  const char a = op_char(ta), b = op_char(tb);
  switch (dt) {
    case GPUFMM_FLOAT32: sgemm_(&a, &b, &M, &N, &K, (const float*)alpha, (const float*)A, &LA, (const float*)B, &LB, (const float*)beta, (float*)C, &LC); break;
    case GPUFMM_FLOAT64: dgemm_(&a, &b, &M, &N, &K, (const double*)alpha, (const double*)A, &LA, (const double*)B, &LB, (const double*)beta, (double*)C, &LC); break;
    case GPUFMM_COMPLEX64: cgemm_(&a, &b, &M, &N, &K, (const cf*)alpha, (const cf*)A, &LA, (const cf*)B, &LB, (const cf*)beta, (cf*)C, &LC); break;
    case GPUFMM_COMPLEX128: zgemm_(&a, &b, &M, &N, &K, (const cd*)alpha, (const cd*)A, &LA, (const cd*)B, &LB, (const cd*)beta, (cd*)C, &LC); break;
    default: not_float(dt, "gemm");
  }
}

void gemm_strided_batched(gpufmm_dtype_t dt, gpufmm_op_t ta, gpufmm_op_t tb, int64_t m, int64_t n, int64_t k,
                          const void* alpha, const void* A, int64_t lda, int64_t strideA, const void* B,
                          int64_t ldb, int64_t strideB, const void* beta, void* C, int64_t ldc, int64_t strideC,
                          int64_t batch) {
  require(dt == GPUFMM_FLOAT32 || dt == GPUFMM_FLOAT64, GPUFMM_ERROR_TYPE_MISMATCH,
          "gemm_strided_batched: dtype ", dtype_name(dt), " is not float32 or float64");
  require(ta == GPUFMM_OP_N, GPUFMM_ERROR_NOT_SUPPORTED, "gemm_strided_batched: op(A) must be N (rows are split)");
  if (m <= 0 || n <= 0 || batch <= 0) return;
  const size_t es = dtype_size(dt);
  const int64_t per = std::max<int64_t>(1, n * std::max<int64_t>(k, 1));
  const int64_t mc = std::max<int64_t>(8, ((int64_t(1) << 18) - 1) / per / 8 * 8);  // rows per call
  const int64_t nchunk = (m + mc - 1) / mc;
  const auto* a = static_cast<const char*>(A);
  const auto* b = static_cast<const char*>(B);
  auto* c = static_cast<char*>(C);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < batch * nchunk; ++t) {
    const int64_t i = t / nchunk, r0 = (t % nchunk) * mc, rows = std::min(mc, m - r0);
    gemm(dt, ta, tb, rows, n, k, alpha, a + es * (i * strideA + r0), lda, b + es * i * strideB, ldb, beta,
         c + es * (i * strideC + r0), ldc);
  }
}

void reduce(gpufmm_dtype_t dt, Reduction op, int64_t n, const void* x, void* result) {
  if (op == Reduction::Sum) {
    switch (dt) {
      case GPUFMM_INT32: sum_t<int32_t, uint32_t>(n, (const int32_t*)x, result); return;
      case GPUFMM_INT64: sum_t<int64_t, uint64_t>(n, (const int64_t*)x, result); return;
      case GPUFMM_FLOAT32: sum_t<float, double>(n, (const float*)x, result); return;
      case GPUFMM_FLOAT64: sum_t<double, double>(n, (const double*)x, result); return;
      case GPUFMM_COMPLEX64: sum_t<cf, cd>(n, (const cf*)x, result); return;
      case GPUFMM_COMPLEX128: sum_t<cd, cd>(n, (const cd*)x, result); return;
    }
    fail(GPUFMM_ERROR_INTERNAL, "reduce: bad dtype");
  }
  const bool mx = op == Reduction::Max;
  switch (dt) {
    case GPUFMM_INT32: minmax_t(n, (const int32_t*)x, mx, result); return;
    case GPUFMM_INT64: minmax_t(n, (const int64_t*)x, mx, result); return;
    case GPUFMM_FLOAT32: minmax_t(n, (const float*)x, mx, result); return;
    case GPUFMM_FLOAT64: minmax_t(n, (const double*)x, mx, result); return;
    default: fail(GPUFMM_ERROR_TYPE_MISMATCH, mx ? "max" : "min", " is not defined for dtype ", dtype_name(dt));
  }
}

}  // namespace cpu
}  // namespace gpufmm
