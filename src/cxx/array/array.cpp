#include "array/array.hpp"

#include <limits>

namespace gpufmm {

size_t dtype_size(gpufmm_dtype_t dt) {
  switch (dt) {
    case GPUFMM_INT32: return 4;
    case GPUFMM_INT64: return 8;
    case GPUFMM_FLOAT32: return 4;
    case GPUFMM_FLOAT64: return 8;
    case GPUFMM_COMPLEX64: return 8;
    case GPUFMM_COMPLEX128: return 16;
  }
  return 0;
}

const char* dtype_name(gpufmm_dtype_t dt) {
  switch (dt) {
    case GPUFMM_INT32: return "int32";
    case GPUFMM_INT64: return "int64";
    case GPUFMM_FLOAT32: return "float32";
    case GPUFMM_FLOAT64: return "float64";
    case GPUFMM_COMPLEX64: return "complex64";
    case GPUFMM_COMPLEX128: return "complex128";
  }
  return "invalid-dtype";
}

bool dtype_is_valid(int dt) { return dt >= GPUFMM_INT32 && dt <= GPUFMM_COMPLEX128; }

bool dtype_is_float(gpufmm_dtype_t dt) {
  return dt == GPUFMM_FLOAT32 || dt == GPUFMM_FLOAT64 || dt == GPUFMM_COMPLEX64 || dt == GPUFMM_COMPLEX128;
}

gpufmm_dtype_t checked_dtype(int dt, const char* argname) {
  require(dtype_is_valid(dt), GPUFMM_ERROR_TYPE_MISMATCH, "argument '", argname, "' = ", dt,
          " is not a gpufmm_dtype_t");
  return static_cast<gpufmm_dtype_t>(dt);
}

gpufmm_dtype_t checked_precision(int v, const char* what) {
  require(v == GPUFMM_FLOAT32 || v == GPUFMM_FLOAT64, GPUFMM_ERROR_INVALID_ARGUMENT, what, " = ", v,
          " is neither GPUFMM_FLOAT32 (", static_cast<int>(GPUFMM_FLOAT32), ") nor GPUFMM_FLOAT64 (",
          static_cast<int>(GPUFMM_FLOAT64), ")");
  return static_cast<gpufmm_dtype_t>(v);
}

int64_t checked_count(int rank, const int64_t* dims, gpufmm_dtype_t dt) {
  require(rank >= 1 && rank <= GPUFMM_MAX_RANK, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'rank' = ", rank,
          " is not in 1..", GPUFMM_MAX_RANK);
  require(dims != nullptr, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'dims' is NULL");
  // The product of the non-zero dims must fit 64-bit bytes whatever the
  // order of the dims and whether another one is 0 (then the count is 0).
  const int64_t max_count = std::numeric_limits<int64_t>::max() / static_cast<int64_t>(dtype_size(dt));
  int64_t nonzero = 1;
  bool empty = false;
  for (int i = 0; i < rank; ++i) {
    require(dims[i] >= 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'dims[", i, "]' = ", dims[i], " is negative");
    if (dims[i] == 0) {
      empty = true;
      continue;
    }
    require(nonzero <= max_count / dims[i], GPUFMM_ERROR_INVALID_ARGUMENT,
            "argument 'dims': the array size overflows 64-bit bytes");
    nonzero *= dims[i];
  }
  return empty ? 0 : nonzero;
}

gpufmm_array_s* array_create(Context& ctx, gpufmm_dtype_t dt, int rank, const int64_t* dims) {
  const int64_t count = checked_count(rank, dims, dt);
  auto a = std::make_unique<Array>();
  a->ctx = &ctx;
  a->dtype = dt;
  a->rank = rank;
  for (int i = 0; i < rank; ++i) a->dims[i] = dims[i];
  a->count = count;
  void* data = backend_alloc(ctx, static_cast<size_t>(count) * dtype_size(dt), "an array");
  a->data = data;
  try {
    return array_handle(std::move(a));
  } catch (...) {
    backend_free(ctx, data);
    throw;
  }
}

gpufmm_array_s* array_handle(std::unique_ptr<Array> a) {
  auto* h = static_cast<gpufmm_array_s*>(register_handle(a.get(), HandleKind::Array));
  a->ctx->children++;
  a.release();
  return h;
}

void array_destroy(gpufmm_array_s* handle, const char* argname) {
  Array* a = retired_handle<Array>(handle, HandleKind::Array, argname);
  if (a->owned) backend_free(*a->ctx, a->data);
  a->ctx->children--;
  delete a;
}

void require_array(const Array& a, gpufmm_dtype_t dt, int64_t count, const char* argname) {
  require(a.dtype == dt, GPUFMM_ERROR_TYPE_MISMATCH, "array '", argname, "' has dtype ", dtype_name(a.dtype),
          ", expected ", dtype_name(dt));
  require(a.count == count, GPUFMM_ERROR_SIZE_MISMATCH, "array '", argname, "' has ", a.count,
          " elements, expected ", count);
}

void* plan_array_data(const Context& ctx, gpufmm_dtype_t dtype, gpufmm_array_s* a, int64_t count, const char* name) {
  if (a == nullptr) return nullptr;
  Array* arr = checked_array(a, name);
  require(arr->ctx == &ctx, GPUFMM_ERROR_INVALID_ARGUMENT, "array '", name,
          "' belongs to another context than the plan's");
  require(arr->dtype == dtype, GPUFMM_ERROR_TYPE_MISMATCH, "array '", name, "' has dtype ", dtype_name(arr->dtype),
          " but the plan's precision is ", dtype_name(dtype));
  require(arr->count == count, GPUFMM_ERROR_SIZE_MISMATCH, "array '", name, "' has ", arr->count,
          " elements, expected ", count);
  // A zero-size array has no data pointer; any non-NULL marker will do.
  static double empty = 0.0;
  return arr->data != nullptr ? arr->data : &empty;
}

}  // namespace gpufmm
