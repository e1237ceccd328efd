// CPU backend of the array operations: BLAS (Fortran interface, any
// LP64 BLAS; OpenBLAS preferred) for the linear algebra, OpenMP for fill and
// reductions. Level-1 calls are split into chunks of at most INT_MAX elements.
#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

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
// Real results only: REAL functions return float in gfortran-built BLAS and
// OpenBLAS. Complex dots go through gemm (complex function returns differ
// between BLAS builds).
double ddot_(const int*, const double*, const int*, const double*, const int*);
float sdot_(const int*, const float*, const int*, const float*, const int*);
double dnrm2_(const int*, const double*, const int*);
float snrm2_(const int*, const float*, const int*);
double dznrm2_(const int*, const cd*, const int*);
float scnrm2_(const int*, const cf*, const int*);
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

// Sum accumulated in Acc: double for floats; for integers the unsigned type
// of the same width, so that sums wrap like C unsigned arithmetic (no
// undefined overflow).
template <class T, class Acc>
void sum_t(int64_t n, const T* x, void* result) {
  Acc s = Acc(0);
#pragma omp parallel
  {
    Acc local = Acc(0);
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < n; ++i) local += static_cast<Acc>(x[i]);
#pragma omp critical
    s += local;
  }
  T out = static_cast<T>(s);
  std::memcpy(result, &out, sizeof(T));
}

template <class T>
void csum_t(int64_t n, const std::complex<T>* x, void* result) {
  double re = 0, im = 0;
#pragma omp parallel for reduction(+ : re, im) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    re += x[i].real();
    im += x[i].imag();
  }
  std::complex<T> out(static_cast<T>(re), static_cast<T>(im));
  std::memcpy(result, &out, sizeof out);
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
  const int one = 1;
  double d = 0;
  cd z = 0;
  chunks(n, [&](int64_t o, int len) {
    switch (dt) {
      case GPUFMM_FLOAT32: d += sdot_(&len, (const float*)x + o, &one, (const float*)y + o, &one); break;
      case GPUFMM_FLOAT64: d += ddot_(&len, (const double*)x + o, &one, (const double*)y + o, &one); break;
      case GPUFMM_COMPLEX64: {  // conj(x)^T y as a 1x1 gemm
        const cf a(1), b(0);
        cf r(0);
        cgemm_("C", "N", &one, &one, &len, &a, (const cf*)x + o, &len, (const cf*)y + o, &len, &b, &r, &one);
        z += cd(r);
        break;
      }
      case GPUFMM_COMPLEX128: {
        const cd a(1), b(0);
        cd r(0);
        zgemm_("C", "N", &one, &one, &len, &a, (const cd*)x + o, &len, (const cd*)y + o, &len, &b, &r, &one);
        z += r;
        break;
      }
      default: not_float(dt, "dot");
    }
  });
  switch (dt) {
    case GPUFMM_FLOAT32: { float f = static_cast<float>(d); std::memcpy(result, &f, 4); break; }
    case GPUFMM_FLOAT64: std::memcpy(result, &d, 8); break;
    case GPUFMM_COMPLEX64: { cf f(z); std::memcpy(result, &f, 8); break; }
    default: std::memcpy(result, &z, 16); break;
  }
}

void nrm2(gpufmm_dtype_t dt, int64_t n, const void* x, void* result) {
  const int one = 1;
  double r = 0;
  chunks(n, [&](int64_t o, int len) {
    double part = 0;
    switch (dt) {
      case GPUFMM_FLOAT32: part = snrm2_(&len, (const float*)x + o, &one); break;
      case GPUFMM_FLOAT64: part = dnrm2_(&len, (const double*)x + o, &one); break;
      case GPUFMM_COMPLEX64: part = scnrm2_(&len, (const cf*)x + o, &one); break;
      case GPUFMM_COMPLEX128: part = dznrm2_(&len, (const cd*)x + o, &one); break;
      default: not_float(dt, "nrm2");
    }
    r = std::hypot(r, part);
  });
  if (dt == GPUFMM_FLOAT32 || dt == GPUFMM_COMPLEX64) {
    float f = static_cast<float>(r);
    std::memcpy(result, &f, 4);
  } else {
    std::memcpy(result, &r, 8);
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

void reduce(gpufmm_dtype_t dt, Reduction op, int64_t n, const void* x, void* result) {
  if (op == Reduction::Sum) {
    switch (dt) {
      case GPUFMM_INT32: sum_t<int32_t, uint32_t>(n, (const int32_t*)x, result); return;
      case GPUFMM_INT64: sum_t<int64_t, uint64_t>(n, (const int64_t*)x, result); return;
      case GPUFMM_FLOAT32: sum_t<float, double>(n, (const float*)x, result); return;
      case GPUFMM_FLOAT64: sum_t<double, double>(n, (const double*)x, result); return;
      case GPUFMM_COMPLEX64: csum_t<float>(n, (const cf*)x, result); return;
      case GPUFMM_COMPLEX128: csum_t<double>(n, (const cd*)x, result); return;
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
