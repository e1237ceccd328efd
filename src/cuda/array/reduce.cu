// Sum / min / max of a device array with cub::DeviceReduce::Reduce.
//  - Integer sums run in the matching unsigned type, so they wrap like C
//    (two's complement) without signed-overflow undefined behaviour.
//  - Float min/max propagate NaN (if either operand is NaN the result is).
//  - Complex sums use a two-real struct with the alignment of one real.
#include <cub/device/device_reduce.cuh>

#include <cstdint>
#include <cstring>
#include <limits>

#include "array/array.hpp"
#include "core/cuda_backend.hpp"
#include "cuda/common/cuda_check.cuh"
#include "cuda/common/temp_storage.cuh"

namespace gpufmm {
namespace cuda {

namespace {

struct Plus {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
  template <class R>
  __host__ __device__ Complex<R> operator()(const Complex<R>& a, const Complex<R>& b) const {
    return Complex<R>{a.re + b.re, a.im + b.im};
  }
};

// x != x is true only for NaN (and always false for integers).
struct MinNaN {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    if (a != a) return a;
    if (b != b) return b;
    return b < a ? b : a;
  }
};

struct MaxNaN {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    if (a != a) return a;
    if (b != b) return b;
    return a < b ? b : a;
  }
};

template <class T, class Op>
void run_reduce(Context& ctx, int64_t n, const void* x, Op op, T init, void* result) {
  DeviceGuard guard(ctx);
  cudaStream_t s = stream_of(ctx);
  const T* in = static_cast<const T*>(x);

  clear_last_error();
  // One scratch block: the result slot, then CUB's temp storage.
  T* d_out = nullptr;
  auto reduce = [&](void* t, size_t& b) { return cub::DeviceReduce::Reduce(t, b, in, d_out, n, op, init, s); };
  TempStorage tmp(ctx, "a reduction");
  tmp.add(d_out, 1);
  tmp.add_cub(reduce, "cub::DeviceReduce::Reduce (temp storage query)");
  tmp.allocate();
  tmp.run_cub(reduce, "cub::DeviceReduce::Reduce");
  check_launch("cub::DeviceReduce::Reduce");
  T h;
  check(cudaMemcpyAsync(&h, d_out, sizeof(T), cudaMemcpyDeviceToHost, s),
        "cudaMemcpyAsync (reduction result)");
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize (reduction)");
  std::memcpy(result, &h, sizeof(T));
}

template <class T>
void sum_t(Context& ctx, int64_t n, const void* x, void* result) {
  run_reduce<T>(ctx, n, x, Plus{}, T{}, result);
}

template <class T>
void minmax_t(Context& ctx, Reduction op, int64_t n, const void* x, void* result) {
  using L = std::numeric_limits<T>;
  if (op == Reduction::Min)
    run_reduce<T>(ctx, n, x, MinNaN{}, L::has_infinity ? L::infinity() : L::max(), result);
  else
    run_reduce<T>(ctx, n, x, MaxNaN{}, L::has_infinity ? -L::infinity() : L::lowest(), result);
}

}  // namespace

void reduce(Context& ctx, gpufmm_dtype_t dt, Reduction op, int64_t n, const void* x, void* result) {
  const size_t es = dtype_size(dt);
  require(es != 0, GPUFMM_ERROR_TYPE_MISMATCH, "reduce: invalid dtype ", static_cast<int>(dt));
  require(result != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "reduce: argument 'result' is NULL");
  require(n >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "reduce: negative element count ", n);
  const char* name = op == Reduction::Sum ? "sum" : op == Reduction::Min ? "min" : "max";

  if (op != Reduction::Sum && (dt == GPUFMM_COMPLEX64 || dt == GPUFMM_COMPLEX128))
    fail(GPUFMM_ERROR_TYPE_MISMATCH, name, ": dtype ", dtype_name(dt),
         " has no ordering (int32, int64, float32, float64 only)");
  if (n == 0) {
    require(op == Reduction::Sum, GPUFMM_ERROR_INVALID_ARGUMENT, name, " of an empty array");
    std::memset(result, 0, es);  // all-zero bits are 0 in every dtype
    return;
  }
  require(x != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, name, ": NULL data pointer");

  if (op == Reduction::Sum) {
    switch (dt) {
      case GPUFMM_INT32: return sum_t<uint32_t>(ctx, n, x, result);
      case GPUFMM_INT64: return sum_t<uint64_t>(ctx, n, x, result);
      case GPUFMM_FLOAT32: return sum_t<float>(ctx, n, x, result);
      case GPUFMM_FLOAT64: return sum_t<double>(ctx, n, x, result);
      case GPUFMM_COMPLEX64: return sum_t<Complex<float>>(ctx, n, x, result);
      case GPUFMM_COMPLEX128: return sum_t<Complex<double>>(ctx, n, x, result);
    }
  } else {
    switch (dt) {
      case GPUFMM_INT32: return minmax_t<int32_t>(ctx, op, n, x, result);
      case GPUFMM_INT64: return minmax_t<int64_t>(ctx, op, n, x, result);
      case GPUFMM_FLOAT32: return minmax_t<float>(ctx, op, n, x, result);
      case GPUFMM_FLOAT64: return minmax_t<double>(ctx, op, n, x, result);
      default: break;
    }
  }
  fail(GPUFMM_ERROR_TYPE_MISMATCH, name, ": unsupported dtype ", static_cast<int>(dt));
}

}  // namespace cuda
}  // namespace gpufmm
