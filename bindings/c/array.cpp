// C thunks for device arrays: validate every argument (handles, dtypes,
// shapes, ranges) before anything is touched, then dispatch to the CPU
// backend or the CUDA backend of the array's context.
#include <algorithm>
#include <cstring>
#include <memory>

#include "array/array.hpp"
#include "core/error.hpp"
#include "gpufmm.h"

#ifdef GPUFMM_HAVE_CUDA
#include "core/cuda_backend.hpp"
#define GPUFMM_DISPATCH_CTX(ctx, name, ...) \
  do {                                      \
    if ((ctx).on_gpu())                     \
      cuda::name(ctx, __VA_ARGS__);         \
    else                                    \
      cpu::name(__VA_ARGS__);               \
  } while (0)
#else
#define GPUFMM_DISPATCH_CTX(ctx, name, ...) ((void)(ctx), cpu::name(__VA_ARGS__))
#endif

using namespace gpufmm;

namespace {

void same_context(const Array& a, const Array& b, const char* na, const char* nb) {
  require(a.ctx == b.ctx, GPUFMM_ERROR_INVALID_ARGUMENT, "arrays '", na, "' and '", nb,
          "' belong to different contexts");
}

void same_dtype(const Array& a, const Array& b, const char* na, const char* nb) {
  require(a.dtype == b.dtype, GPUFMM_ERROR_TYPE_MISMATCH, "arrays '", na, "' (", dtype_name(a.dtype), ") and '", nb,
          "' (", dtype_name(b.dtype), ") have different dtypes");
}

void float_dtype(const Array& a, const char* op) {
  require(dtype_is_float(a.dtype), GPUFMM_ERROR_TYPE_MISMATCH, op, " needs a float32, float64, complex64 or ",
          "complex128 array; got ", dtype_name(a.dtype));
}

void scalar_arg(const void* p, const char* name) {
  require(p != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "scalar argument '", name, "' is NULL");
}

void transfer_args(const Array& a, const void* host, int64_t count) {
  require(count == a.count, GPUFMM_ERROR_SIZE_MISMATCH, "argument 'count' = ", count, " but the array has ", a.count,
          " elements");
  require(host != nullptr || count == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'host' is NULL");
}

void matrix_arg(const Array& a, const char* name) {
  require(a.rank == 2, GPUFMM_ERROR_SIZE_MISMATCH, "array '", name, "' must have rank 2, has rank ", a.rank);
}

// BLAS convention: beta == 0 means "overwrite", so NaN/Inf already in the
// output do not survive. Used where the product is empty (k == 0).
void scale_or_zero(Context& ctx, gpufmm_dtype_t dt, int64_t n, const void* beta, void* y) {
  static const unsigned char zero[16] = {0};
  bool is_zero = true;
  if (dt == GPUFMM_FLOAT32 || dt == GPUFMM_COMPLEX64) {
    const float* b = static_cast<const float*>(beta);
    is_zero = b[0] == 0.0f && (dt == GPUFMM_FLOAT32 || b[1] == 0.0f);
  } else {
    const double* b = static_cast<const double*>(beta);
    is_zero = b[0] == 0.0 && (dt == GPUFMM_FLOAT64 || b[1] == 0.0);
  }
  if (is_zero)
    GPUFMM_DISPATCH_CTX(ctx, fill, dt, n, y, zero);
  else
    GPUFMM_DISPATCH_CTX(ctx, scal, dt, n, beta, y);
}

// The operation a caller passed as an int (enum_arg), checked before it
// becomes a gpufmm_op_t.
gpufmm_op_t checked_op(int op, const char* name) {
  require(op == GPUFMM_OP_N || op == GPUFMM_OP_T || op == GPUFMM_OP_C, GPUFMM_ERROR_INVALID_ARGUMENT, "argument '",
          name, "' = ", op, " is not a gpufmm_op_t");
  return static_cast<gpufmm_op_t>(op);
}

}  // namespace

extern "C" {

int64_t gpufmm_dtype_size(gpufmm_dtype_t dtype) {
  const int dt = enum_arg(dtype);
  return dtype_is_valid(dt) ? static_cast<int64_t>(dtype_size(static_cast<gpufmm_dtype_t>(dt))) : 0;
}

gpufmm_status_t gpufmm_array_create(gpufmm_context_t ctx, gpufmm_dtype_t dtype, int rank, const int64_t* dims,
                                    gpufmm_array_t* a) {
  return guard("gpufmm_array_create", [&] {
    Context* c = checked_context(ctx);
    require_out(a, "a");
    *a = array_create(*c, checked_dtype(enum_arg(dtype), "dtype"), rank, dims);
  });
}

gpufmm_status_t gpufmm_array_wrap(gpufmm_context_t ctx, gpufmm_dtype_t dtype_arg, int rank, const int64_t* dims,
                                  void* data, gpufmm_array_t* a) {
  return guard("gpufmm_array_wrap", [&] {
    Context* c = checked_context(ctx);
    require_out(a, "a");
    const gpufmm_dtype_t dtype = checked_dtype(enum_arg(dtype_arg), "dtype");
    const int64_t count = checked_count(rank, dims, dtype);
    require(data != nullptr || count == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'data' is NULL");
    // cuBLAS, CUB and vector loads need at least the alignment of one real
    // component; a misaligned pointer would fault inside a kernel.
    const size_t real_size = (dtype == GPUFMM_COMPLEX64 || dtype == GPUFMM_COMPLEX128) ? dtype_size(dtype) / 2
                                                                                        : dtype_size(dtype);
    require(reinterpret_cast<uintptr_t>(data) % real_size == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'data' (",
            data, ") is not aligned to ", real_size, " bytes, as dtype ", dtype_name(dtype), " needs");
    auto arr = std::make_unique<Array>();
    arr->ctx = c;
    arr->dtype = dtype;
    arr->rank = rank;
    for (int i = 0; i < rank; ++i) arr->dims[i] = dims[i];
    arr->count = count;
    arr->data = data;
    arr->owned = false;
    *a = array_handle(std::move(arr));
  });
}

gpufmm_status_t gpufmm_array_destroy(gpufmm_array_t a) {
  if (a == nullptr) return GPUFMM_SUCCESS;
  return guard("gpufmm_array_destroy", [&] { array_destroy(a, "a"); });
}

gpufmm_status_t gpufmm_array_dtype(gpufmm_array_t a, gpufmm_dtype_t* dtype) {
  return guard("gpufmm_array_dtype", [&] {
    Array* x = checked_array(a, "a");
    require_out(dtype, "dtype");
    *dtype = x->dtype;
  });
}

gpufmm_status_t gpufmm_array_rank(gpufmm_array_t a, int* rank) {
  return guard("gpufmm_array_rank", [&] {
    Array* x = checked_array(a, "a");
    require_out(rank, "rank");
    *rank = x->rank;
  });
}

gpufmm_status_t gpufmm_array_dims(gpufmm_array_t a, int64_t* dims) {
  return guard("gpufmm_array_dims", [&] {
    Array* x = checked_array(a, "a");
    require_out(dims, "dims");
    for (int i = 0; i < GPUFMM_MAX_RANK; ++i) dims[i] = i < x->rank ? x->dims[i] : 1;
  });
}

gpufmm_status_t gpufmm_array_size(gpufmm_array_t a, int64_t* count) {
  return guard("gpufmm_array_size", [&] {
    Array* x = checked_array(a, "a");
    require_out(count, "count");
    *count = x->count;
  });
}

gpufmm_status_t gpufmm_array_context(gpufmm_array_t a, gpufmm_context_t* ctx) {
  return guard("gpufmm_array_context", [&] {
    Array* x = checked_array(a, "a");
    require_out(ctx, "ctx");
    *ctx = static_cast<gpufmm_context_t>(x->ctx->handle);
  });
}

gpufmm_status_t gpufmm_array_data(gpufmm_array_t a, void** data) {
  return guard("gpufmm_array_data", [&] {
    Array* x = checked_array(a, "a");
    require_out(data, "data");
    *data = x->data;
  });
}

static gpufmm_status_t upload(const char* name, gpufmm_array_t a, const void* host, int64_t count, bool async) {
  return guard(name, [&] {
    Array* x = checked_array(a, "a");
    transfer_args(*x, host, count);
    backend_upload(*x->ctx, x->data, host, static_cast<size_t>(count) * dtype_size(x->dtype), async);
  });
}

static gpufmm_status_t download(const char* name, gpufmm_array_t a, void* host, int64_t count, bool async) {
  return guard(name, [&] {
    Array* x = checked_array(a, "a");
    transfer_args(*x, host, count);
    backend_download(*x->ctx, host, x->data, static_cast<size_t>(count) * dtype_size(x->dtype), async);
  });
}

gpufmm_status_t gpufmm_array_upload(gpufmm_array_t a, const void* host, int64_t count) {
  return upload("gpufmm_array_upload", a, host, count, false);
}
gpufmm_status_t gpufmm_array_upload_async(gpufmm_array_t a, const void* host, int64_t count) {
  return upload("gpufmm_array_upload_async", a, host, count, true);
}
gpufmm_status_t gpufmm_array_download(gpufmm_array_t a, void* host, int64_t count) {
  return download("gpufmm_array_download", a, host, count, false);
}
gpufmm_status_t gpufmm_array_download_async(gpufmm_array_t a, void* host, int64_t count) {
  return download("gpufmm_array_download_async", a, host, count, true);
}

gpufmm_status_t gpufmm_array_copy(gpufmm_array_t src, gpufmm_array_t dst) {
  return guard("gpufmm_array_copy", [&] {
    Array* s = checked_array(src, "src");
    Array* d = checked_array(dst, "dst");
    same_context(*s, *d, "src", "dst");
    same_dtype(*s, *d, "src", "dst");
    require(s->count == d->count, GPUFMM_ERROR_SIZE_MISMATCH, "array 'src' has ", s->count,
            " elements, 'dst' has ", d->count);
    backend_copy(*s->ctx, d->data, s->data, static_cast<size_t>(s->count) * dtype_size(s->dtype));
  });
}

gpufmm_status_t gpufmm_array_copy_range(gpufmm_array_t src, int64_t src_offset, gpufmm_array_t dst,
                                        int64_t dst_offset, int64_t count) {
  return guard("gpufmm_array_copy_range", [&] {
    Array* s = checked_array(src, "src");
    Array* d = checked_array(dst, "dst");
    same_context(*s, *d, "src", "dst");
    same_dtype(*s, *d, "src", "dst");
    require(count >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'count' = ", count, " is negative");
    require(src_offset >= 0 && src_offset <= s->count && count <= s->count - src_offset,
            GPUFMM_ERROR_INVALID_ARGUMENT, "source range [", src_offset, ", ", src_offset, " + ", count,
            ") is outside array 'src' of ", s->count, " elements");
    require(dst_offset >= 0 && dst_offset <= d->count && count <= d->count - dst_offset,
            GPUFMM_ERROR_INVALID_ARGUMENT, "destination range [", dst_offset, ", ", dst_offset, " + ", count,
            ") is outside array 'dst' of ", d->count, " elements");
    if (s == d && count > 0)
      require(src_offset + count <= dst_offset || dst_offset + count <= src_offset, GPUFMM_ERROR_INVALID_ARGUMENT,
              "source and destination ranges overlap within one array");
    const size_t es = dtype_size(s->dtype);
    backend_copy(*s->ctx, static_cast<char*>(d->data) + dst_offset * es,
                 static_cast<const char*>(s->data) + src_offset * es, static_cast<size_t>(count) * es);
  });
}

gpufmm_status_t gpufmm_array_fill(gpufmm_array_t a, const void* value) {
  return guard("gpufmm_array_fill", [&] {
    Array* x = checked_array(a, "a");
    scalar_arg(value, "value");
    if (x->count == 0) return;
    GPUFMM_DISPATCH_CTX(*x->ctx, fill, x->dtype, x->count, x->data, value);
  });
}

gpufmm_status_t gpufmm_array_axpy(const void* alpha, gpufmm_array_t x, gpufmm_array_t y) {
  return guard("gpufmm_array_axpy", [&] {
    Array* X = checked_array(x, "x");
    Array* Y = checked_array(y, "y");
    scalar_arg(alpha, "alpha");
    same_context(*X, *Y, "x", "y");
    same_dtype(*X, *Y, "x", "y");
    float_dtype(*X, "axpy");
    require(X->count == Y->count, GPUFMM_ERROR_SIZE_MISMATCH, "array 'x' has ", X->count, " elements, 'y' has ",
            Y->count);
    if (X->count == 0) return;
    GPUFMM_DISPATCH_CTX(*X->ctx, axpy, X->dtype, X->count, alpha, X->data, Y->data);
  });
}

gpufmm_status_t gpufmm_array_scal(const void* alpha, gpufmm_array_t x) {
  return guard("gpufmm_array_scal", [&] {
    Array* X = checked_array(x, "x");
    scalar_arg(alpha, "alpha");
    float_dtype(*X, "scal");
    if (X->count == 0) return;
    GPUFMM_DISPATCH_CTX(*X->ctx, scal, X->dtype, X->count, alpha, X->data);
  });
}

gpufmm_status_t gpufmm_array_dot(gpufmm_array_t x, gpufmm_array_t y, void* result) {
  return guard("gpufmm_array_dot", [&] {
    Array* X = checked_array(x, "x");
    Array* Y = checked_array(y, "y");
    require_out(result, "result");
    same_context(*X, *Y, "x", "y");
    same_dtype(*X, *Y, "x", "y");
    float_dtype(*X, "dot");
    require(X->count == Y->count, GPUFMM_ERROR_SIZE_MISMATCH, "array 'x' has ", X->count, " elements, 'y' has ",
            Y->count);
    if (X->count == 0) {
      std::memset(result, 0, dtype_size(X->dtype));
      return;
    }
    GPUFMM_DISPATCH_CTX(*X->ctx, dot, X->dtype, X->count, X->data, Y->data, result);
  });
}

gpufmm_status_t gpufmm_array_nrm2(gpufmm_array_t x, void* result) {
  return guard("gpufmm_array_nrm2", [&] {
    Array* X = checked_array(x, "x");
    require_out(result, "result");
    float_dtype(*X, "nrm2");
    if (X->count == 0) {
      const bool single = X->dtype == GPUFMM_FLOAT32 || X->dtype == GPUFMM_COMPLEX64;
      std::memset(result, 0, single ? 4 : 8);
      return;
    }
    GPUFMM_DISPATCH_CTX(*X->ctx, nrm2, X->dtype, X->count, X->data, result);
  });
}

gpufmm_status_t gpufmm_array_gemv(gpufmm_op_t trans_arg, const void* alpha, gpufmm_array_t A, gpufmm_array_t x,
                                  const void* beta, gpufmm_array_t y) {
  return guard("gpufmm_array_gemv", [&] {
    Array* a = checked_array(A, "A");
    Array* X = checked_array(x, "x");
    Array* Y = checked_array(y, "y");
    const gpufmm_op_t trans = checked_op(enum_arg(trans_arg), "trans");
    scalar_arg(alpha, "alpha");
    scalar_arg(beta, "beta");
    same_context(*a, *X, "A", "x");
    same_context(*a, *Y, "A", "y");
    same_dtype(*a, *X, "A", "x");
    same_dtype(*a, *Y, "A", "y");
    float_dtype(*a, "gemv");
    matrix_arg(*a, "A");
    const int64_t m = a->dims[0], n = a->dims[1];
    const int64_t xn = trans == GPUFMM_OP_N ? n : m, yn = trans == GPUFMM_OP_N ? m : n;
    require(X->count == xn, GPUFMM_ERROR_SIZE_MISMATCH, "array 'x' has ", X->count, " elements, op(A) needs ", xn);
    require(Y->count == yn, GPUFMM_ERROR_SIZE_MISMATCH, "array 'y' has ", Y->count, " elements, op(A) gives ", yn);
    require(X != Y, GPUFMM_ERROR_INVALID_ARGUMENT, "arrays 'x' and 'y' must be distinct");
    if (yn == 0) return;
    if (xn == 0) {  // op(A)*x is an empty sum: y <- beta*y
      scale_or_zero(*a->ctx, a->dtype, yn, beta, Y->data);
      return;
    }
    GPUFMM_DISPATCH_CTX(*a->ctx, gemv, a->dtype, trans, m, n, alpha, a->data, std::max<int64_t>(m, 1), X->data,
                        beta, Y->data);
  });
}

gpufmm_status_t gpufmm_array_gemm(gpufmm_op_t transa_arg, gpufmm_op_t transb_arg, const void* alpha, gpufmm_array_t A,
                                  gpufmm_array_t B, const void* beta, gpufmm_array_t C) {
  return guard("gpufmm_array_gemm", [&] {
    Array* a = checked_array(A, "A");
    Array* b = checked_array(B, "B");
    Array* c = checked_array(C, "C");
    const gpufmm_op_t transa = checked_op(enum_arg(transa_arg), "transa");
    const gpufmm_op_t transb = checked_op(enum_arg(transb_arg), "transb");
    scalar_arg(alpha, "alpha");
    scalar_arg(beta, "beta");
    same_context(*a, *b, "A", "B");
    same_context(*a, *c, "A", "C");
    same_dtype(*a, *b, "A", "B");
    same_dtype(*a, *c, "A", "C");
    float_dtype(*a, "gemm");
    matrix_arg(*a, "A");
    matrix_arg(*b, "B");
    matrix_arg(*c, "C");
    require(c != a && c != b, GPUFMM_ERROR_INVALID_ARGUMENT, "array 'C' must be distinct from 'A' and 'B'");
    const int64_t m = transa == GPUFMM_OP_N ? a->dims[0] : a->dims[1];
    const int64_t k = transa == GPUFMM_OP_N ? a->dims[1] : a->dims[0];
    const int64_t kb = transb == GPUFMM_OP_N ? b->dims[0] : b->dims[1];
    const int64_t n = transb == GPUFMM_OP_N ? b->dims[1] : b->dims[0];
    require(k == kb, GPUFMM_ERROR_SIZE_MISMATCH, "inner dimensions differ: op(A) is ", m, " x ", k, ", op(B) is ",
            kb, " x ", n);
    require(c->dims[0] == m && c->dims[1] == n, GPUFMM_ERROR_SIZE_MISMATCH, "array 'C' is ", c->dims[0], " x ",
            c->dims[1], ", op(A)*op(B) is ", m, " x ", n);
    if (m == 0 || n == 0) return;
    if (k == 0) {  // empty inner sum: C <- beta*C
      scale_or_zero(*a->ctx, a->dtype, m * n, beta, c->data);
      return;
    }
    GPUFMM_DISPATCH_CTX(*a->ctx, gemm, a->dtype, transa, transb, m, n, k, alpha, a->data,
                        std::max<int64_t>(a->dims[0], 1), b->data, std::max<int64_t>(b->dims[0], 1), beta, c->data,
                        std::max<int64_t>(m, 1));
  });
}

static gpufmm_status_t reduction(const char* name, Reduction op, gpufmm_array_t a, void* result) {
  return guard(name, [&] {
    Array* x = checked_array(a, "a");
    require_out(result, "result");
    if (op != Reduction::Sum) {
      require(x->dtype != GPUFMM_COMPLEX64 && x->dtype != GPUFMM_COMPLEX128, GPUFMM_ERROR_TYPE_MISMATCH,
              op == Reduction::Min ? "min" : "max", " is not defined for dtype ", dtype_name(x->dtype));
      require(x->count > 0, GPUFMM_ERROR_INVALID_ARGUMENT, op == Reduction::Min ? "min" : "max",
              " of an empty array is undefined");
    }
    if (x->count == 0) {
      std::memset(result, 0, dtype_size(x->dtype));
      return;
    }
    GPUFMM_DISPATCH_CTX(*x->ctx, reduce, x->dtype, op, x->count, x->data, result);
  });
}

gpufmm_status_t gpufmm_array_sum(gpufmm_array_t a, void* result) {
  return reduction("gpufmm_array_sum", Reduction::Sum, a, result);
}
gpufmm_status_t gpufmm_array_min(gpufmm_array_t a, void* result) {
  return reduction("gpufmm_array_min", Reduction::Min, a, result);
}
gpufmm_status_t gpufmm_array_max(gpufmm_array_t a, void* result) {
  return reduction("gpufmm_array_max", Reduction::Max, a, result);
}

}  // extern "C"
