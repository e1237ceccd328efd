// BLAS on device arrays through cuBLAS (v2, 64-bit integer API) for float32,
// float64, complex64 and complex128. Scalars are host values (pointer mode
// host); dot and nrm2 return host values complete on return.
#include <cublas_v2.h>

#include <cstdint>
#include <cstring>

#include "array/array.hpp"
#include "core/cuda_backend.hpp"
#include "cuda/common/cublas_handle.cuh"
#include "cuda/common/cuda_check.cuh"

namespace gpufmm {
namespace cuda {

namespace {

constexpr int kBlock = 256;

[[noreturn]] void bad_dtype(const char* op, gpufmm_dtype_t dt) {
  const bool known = dtype_is_valid(static_cast<int>(dt));
  fail(GPUFMM_ERROR_TYPE_MISMATCH, op, ": dtype ", known ? dtype_name(dt) : "(invalid)",
       " is not supported (float32, float64, complex64 or complex128 only)");
}

cublasOperation_t to_cublas(gpufmm_op_t op, bool is_complex) {
  switch (op) {
    case GPUFMM_OP_N: return CUBLAS_OP_N;
    case GPUFMM_OP_T: return CUBLAS_OP_T;
    case GPUFMM_OP_C: return is_complex ? CUBLAS_OP_C : CUBLAS_OP_T;
  }
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, "invalid gpufmm_op_t value ", static_cast<int>(op));
}

bool is_complex(gpufmm_dtype_t dt) { return dt == GPUFMM_COMPLEX64 || dt == GPUFMM_COMPLEX128; }

// ---- C(m x n, ldc) <- beta * C, with beta == 0 meaning "set to zero" (BLAS:
// C is not read then, so NaNs in it do not survive). Used where the inner
// dimension of gemv/gemm is 0, which cuBLAS would reject or skip.
template <class T>
struct Scalar {
  __host__ __device__ static T mul(T a, T b) { return a * b; }
  __host__ __device__ static bool is_zero(T a) { return a == T(0); }
  __host__ __device__ static T zero() { return T(0); }
};
template <class R>
struct Scalar<Complex<R>> {
  using T = Complex<R>;
  __host__ __device__ static T mul(T a, T b) {
    return T{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  __host__ __device__ static bool is_zero(T a) { return a.re == R(0) && a.im == R(0); }
  __host__ __device__ static T zero() { return T{R(0), R(0)}; }
};

template <class T>
__global__ void scale_matrix_kernel(int64_t m, int64_t n, T* __restrict__ c, int64_t ldc, T beta) {
  const int64_t total = m * n;
  const bool zero = Scalar<T>::is_zero(beta);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t i = t % m, j = t / m;
    T& v = c[i + j * ldc];
    v = zero ? Scalar<T>::zero() : Scalar<T>::mul(beta, v);
  }
}

template <class T>
void scale_matrix_t(Context& ctx, int64_t m, int64_t n, void* c, int64_t ldc, const void* beta) {
  T b;
  std::memcpy(&b, beta, sizeof(T));
  clear_last_error();
  scale_matrix_kernel<T><<<grid_for(m * n, kBlock), kBlock, 0, stream_of(ctx)>>>(
      m, n, static_cast<T*>(c), ldc, b);
  check_launch("scale_matrix_kernel");
}

void scale_matrix(Context& ctx, gpufmm_dtype_t dt, int64_t m, int64_t n, void* c, int64_t ldc,
                  const void* beta) {
  if (m <= 0 || n <= 0) return;
  switch (dt) {
    case GPUFMM_FLOAT32: return scale_matrix_t<float>(ctx, m, n, c, ldc, beta);
    case GPUFMM_FLOAT64: return scale_matrix_t<double>(ctx, m, n, c, ldc, beta);
    case GPUFMM_COMPLEX64: return scale_matrix_t<Complex<float>>(ctx, m, n, c, ldc, beta);
    case GPUFMM_COMPLEX128: return scale_matrix_t<Complex<double>>(ctx, m, n, c, ldc, beta);
    default: bad_dtype("scale", dt);
  }
}

template <class T>
const T* cp(const void* p) { return static_cast<const T*>(p); }
template <class T>
T* mp(void* p) { return static_cast<T*>(p); }

void require_ptr(const void* p, const char* op, const char* name) {
  require(p != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, op, ": argument '", name, "' is NULL");
}

void sync_result(Context& ctx, const char* op) {
  check(cudaStreamSynchronize(stream_of(ctx)), op);
}

}  // namespace

void axpy(Context& ctx, gpufmm_dtype_t dt, int64_t n, const void* alpha, const void* x, void* y) {
  if (!dtype_is_float(dt) || dtype_size(dt) == 0) bad_dtype("axpy", dt);
  if (n <= 0) return;
  require_ptr(alpha, "axpy", "alpha");
  DeviceGuard guard(ctx);
  cublasHandle_t h = cublas_handle(ctx);
  switch (dt) {
    case GPUFMM_FLOAT32:
      GPUFMM_CUBLAS_CHECK(cublasSaxpy_64(h, n, cp<float>(alpha), cp<float>(x), 1, mp<float>(y), 1));
      break;
    case GPUFMM_FLOAT64:
      GPUFMM_CUBLAS_CHECK(cublasDaxpy_64(h, n, cp<double>(alpha), cp<double>(x), 1, mp<double>(y), 1));
      break;
    case GPUFMM_COMPLEX64:
      GPUFMM_CUBLAS_CHECK(cublasCaxpy_64(h, n, cp<cuComplex>(alpha), cp<cuComplex>(x), 1,
                                         mp<cuComplex>(y), 1));
      break;
    case GPUFMM_COMPLEX128:
      GPUFMM_CUBLAS_CHECK(cublasZaxpy_64(h, n, cp<cuDoubleComplex>(alpha), cp<cuDoubleComplex>(x), 1,
                                         mp<cuDoubleComplex>(y), 1));
      break;
    default: bad_dtype("axpy", dt);
  }
}

void scal(Context& ctx, gpufmm_dtype_t dt, int64_t n, const void* alpha, void* x) {
  if (!dtype_is_float(dt) || dtype_size(dt) == 0) bad_dtype("scal", dt);
  if (n <= 0) return;
  require_ptr(alpha, "scal", "alpha");
  DeviceGuard guard(ctx);
  cublasHandle_t h = cublas_handle(ctx);
  switch (dt) {
    case GPUFMM_FLOAT32:
      GPUFMM_CUBLAS_CHECK(cublasSscal_64(h, n, cp<float>(alpha), mp<float>(x), 1));
      break;
    case GPUFMM_FLOAT64:
      GPUFMM_CUBLAS_CHECK(cublasDscal_64(h, n, cp<double>(alpha), mp<double>(x), 1));
      break;
    case GPUFMM_COMPLEX64:
      GPUFMM_CUBLAS_CHECK(cublasCscal_64(h, n, cp<cuComplex>(alpha), mp<cuComplex>(x), 1));
      break;
    case GPUFMM_COMPLEX128:
      GPUFMM_CUBLAS_CHECK(cublasZscal_64(h, n, cp<cuDoubleComplex>(alpha), mp<cuDoubleComplex>(x), 1));
      break;
    default: bad_dtype("scal", dt);
  }
}

void dot(Context& ctx, gpufmm_dtype_t dt, int64_t n, const void* x, const void* y, void* result) {
  if (!dtype_is_float(dt) || dtype_size(dt) == 0) bad_dtype("dot", dt);
  require_ptr(result, "dot", "result");
  alignas(16) unsigned char r[16] = {0};  // the result, copied out only on success
  if (n > 0) {
    DeviceGuard guard(ctx);
    cublasHandle_t h = cublas_handle(ctx);
    switch (dt) {
      case GPUFMM_FLOAT32:
        GPUFMM_CUBLAS_CHECK(cublasSdot_64(h, n, cp<float>(x), 1, cp<float>(y), 1, mp<float>(r)));
        break;
      case GPUFMM_FLOAT64:
        GPUFMM_CUBLAS_CHECK(cublasDdot_64(h, n, cp<double>(x), 1, cp<double>(y), 1, mp<double>(r)));
        break;
      case GPUFMM_COMPLEX64:
        GPUFMM_CUBLAS_CHECK(cublasCdotc_64(h, n, cp<cuComplex>(x), 1, cp<cuComplex>(y), 1,
                                           mp<cuComplex>(r)));
        break;
      case GPUFMM_COMPLEX128:
        GPUFMM_CUBLAS_CHECK(cublasZdotc_64(h, n, cp<cuDoubleComplex>(x), 1, cp<cuDoubleComplex>(y), 1,
                                           mp<cuDoubleComplex>(r)));
        break;
      default: bad_dtype("dot", dt);
    }
    sync_result(ctx, "cudaStreamSynchronize (dot)");
  }
  std::memcpy(result, r, dtype_size(dt));
}

void nrm2(Context& ctx, gpufmm_dtype_t dt, int64_t n, const void* x, void* result) {
  if (!dtype_is_float(dt) || dtype_size(dt) == 0) bad_dtype("nrm2", dt);
  require_ptr(result, "nrm2", "result");
  const bool single = dt == GPUFMM_FLOAT32 || dt == GPUFMM_COMPLEX64;
  float rs = 0.0f;
  double rd = 0.0;
  if (n > 0) {
    DeviceGuard guard(ctx);
    cublasHandle_t h = cublas_handle(ctx);
    switch (dt) {
      case GPUFMM_FLOAT32:
        GPUFMM_CUBLAS_CHECK(cublasSnrm2_64(h, n, cp<float>(x), 1, &rs));
        break;
      case GPUFMM_FLOAT64:
        GPUFMM_CUBLAS_CHECK(cublasDnrm2_64(h, n, cp<double>(x), 1, &rd));
        break;
      case GPUFMM_COMPLEX64:
        GPUFMM_CUBLAS_CHECK(cublasScnrm2_64(h, n, cp<cuComplex>(x), 1, &rs));
        break;
      case GPUFMM_COMPLEX128:
        GPUFMM_CUBLAS_CHECK(cublasDznrm2_64(h, n, cp<cuDoubleComplex>(x), 1, &rd));
        break;
      default: bad_dtype("nrm2", dt);
    }
    sync_result(ctx, "cudaStreamSynchronize (nrm2)");
  }
  if (single)
    std::memcpy(result, &rs, sizeof rs);
  else
    std::memcpy(result, &rd, sizeof rd);
}

void gemv(Context& ctx, gpufmm_dtype_t dt, gpufmm_op_t trans, int64_t m, int64_t n,
          const void* alpha, const void* A, int64_t lda, const void* x, const void* beta, void* y) {
  if (!dtype_is_float(dt) || dtype_size(dt) == 0) bad_dtype("gemv", dt);
  const cublasOperation_t op = to_cublas(trans, is_complex(dt));
  require(m >= 0 && n >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "gemv: negative dimension m = ", m,
          ", n = ", n);
  require_ptr(alpha, "gemv", "alpha");
  require_ptr(beta, "gemv", "beta");
  const int64_t ylen = op == CUBLAS_OP_N ? m : n;
  const int64_t inner = op == CUBLAS_OP_N ? n : m;
  if (ylen == 0) return;
  DeviceGuard guard(ctx);
  if (inner == 0) {  // y <- beta*y (cuBLAS would leave y alone)
    scale_matrix(ctx, dt, ylen, 1, y, ylen, beta);
    return;
  }
  require(lda >= (m > 1 ? m : 1), GPUFMM_ERROR_INVALID_ARGUMENT, "gemv: lda = ", lda,
          " < max(1, m = ", m, ")");
  cublasHandle_t h = cublas_handle(ctx);
  switch (dt) {
    case GPUFMM_FLOAT32:
      GPUFMM_CUBLAS_CHECK(cublasSgemv_64(h, op, m, n, cp<float>(alpha), cp<float>(A), lda,
                                         cp<float>(x), 1, cp<float>(beta), mp<float>(y), 1));
      break;
    case GPUFMM_FLOAT64:
      GPUFMM_CUBLAS_CHECK(cublasDgemv_64(h, op, m, n, cp<double>(alpha), cp<double>(A), lda,
                                         cp<double>(x), 1, cp<double>(beta), mp<double>(y), 1));
      break;
    case GPUFMM_COMPLEX64:
      GPUFMM_CUBLAS_CHECK(cublasCgemv_64(h, op, m, n, cp<cuComplex>(alpha), cp<cuComplex>(A), lda,
                                         cp<cuComplex>(x), 1, cp<cuComplex>(beta),
                                         mp<cuComplex>(y), 1));
      break;
    case GPUFMM_COMPLEX128:
      GPUFMM_CUBLAS_CHECK(cublasZgemv_64(h, op, m, n, cp<cuDoubleComplex>(alpha),
                                         cp<cuDoubleComplex>(A), lda, cp<cuDoubleComplex>(x), 1,
                                         cp<cuDoubleComplex>(beta), mp<cuDoubleComplex>(y), 1));
      break;
    default: bad_dtype("gemv", dt);
  }
}

void gemm(Context& ctx, gpufmm_dtype_t dt, gpufmm_op_t ta, gpufmm_op_t tb, int64_t m, int64_t n,
          int64_t k, const void* alpha, const void* A, int64_t lda, const void* B, int64_t ldb,
          const void* beta, void* C, int64_t ldc) {
  if (!dtype_is_float(dt) || dtype_size(dt) == 0) bad_dtype("gemm", dt);
  const bool cx = is_complex(dt);
  const cublasOperation_t opa = to_cublas(ta, cx), opb = to_cublas(tb, cx);
  require(m >= 0 && n >= 0 && k >= 0, GPUFMM_ERROR_INVALID_ARGUMENT,
          "gemm: negative dimension m = ", m, ", n = ", n, ", k = ", k);
  require_ptr(alpha, "gemm", "alpha");
  require_ptr(beta, "gemm", "beta");
  if (m == 0 || n == 0) return;
  require(ldc >= m, GPUFMM_ERROR_INVALID_ARGUMENT, "gemm: ldc = ", ldc, " < m = ", m);
  DeviceGuard guard(ctx);
  if (k == 0) {  // C <- beta*C
    scale_matrix(ctx, dt, m, n, C, ldc, beta);
    return;
  }
  cublasHandle_t h = cublas_handle(ctx);
  switch (dt) {
    case GPUFMM_FLOAT32:
      GPUFMM_CUBLAS_CHECK(cublasSgemm_64(h, opa, opb, m, n, k, cp<float>(alpha), cp<float>(A), lda,
                                         cp<float>(B), ldb, cp<float>(beta), mp<float>(C), ldc));
      break;
    case GPUFMM_FLOAT64:
      GPUFMM_CUBLAS_CHECK(cublasDgemm_64(h, opa, opb, m, n, k, cp<double>(alpha), cp<double>(A),
                                         lda, cp<double>(B), ldb, cp<double>(beta), mp<double>(C),
                                         ldc));
      break;
    case GPUFMM_COMPLEX64:
      GPUFMM_CUBLAS_CHECK(cublasCgemm_64(h, opa, opb, m, n, k, cp<cuComplex>(alpha),
                                         cp<cuComplex>(A), lda, cp<cuComplex>(B), ldb,
                                         cp<cuComplex>(beta), mp<cuComplex>(C), ldc));
      break;
    case GPUFMM_COMPLEX128:
      GPUFMM_CUBLAS_CHECK(cublasZgemm_64(h, opa, opb, m, n, k, cp<cuDoubleComplex>(alpha),
                                         cp<cuDoubleComplex>(A), lda, cp<cuDoubleComplex>(B), ldb,
                                         cp<cuDoubleComplex>(beta), mp<cuDoubleComplex>(C), ldc));
      break;
    default: bad_dtype("gemm", dt);
  }
}

void gemm_strided_batched(Context& ctx, gpufmm_dtype_t dt, gpufmm_op_t ta, gpufmm_op_t tb, int64_t m, int64_t n,
                          int64_t k, const void* alpha, const void* A, int64_t lda, int64_t strideA,
                          const void* B, int64_t ldb, int64_t strideB, const void* beta, void* C, int64_t ldc,
                          int64_t strideC, int64_t batch) {
  require(dt == GPUFMM_FLOAT32 || dt == GPUFMM_FLOAT64, GPUFMM_ERROR_TYPE_MISMATCH,
          "gemm_strided_batched: dtype ", dtype_name(dt), " is not float32 or float64");
  if (m <= 0 || n <= 0 || batch <= 0) return;
  DeviceGuard guard(ctx);
  const cublasOperation_t opa = to_cublas(ta, false), opb = to_cublas(tb, false);
  cublasHandle_t h = cublas_handle(ctx);
  if (dt == GPUFMM_FLOAT32)
    GPUFMM_CUBLAS_CHECK(cublasSgemmStridedBatched_64(h, opa, opb, m, n, k, cp<float>(alpha), cp<float>(A), lda,
                                                     strideA, cp<float>(B), ldb, strideB, cp<float>(beta),
                                                     mp<float>(C), ldc, strideC, batch));
  else
    GPUFMM_CUBLAS_CHECK(cublasDgemmStridedBatched_64(h, opa, opb, m, n, k, cp<double>(alpha), cp<double>(A), lda,
                                                     strideA, cp<double>(B), ldb, strideB, cp<double>(beta),
                                                     mp<double>(C), ldc, strideC, batch));
}

}  // namespace cuda
}  // namespace gpufmm
