// Out-of-range values of every enum argument and enum-valued options field
// of the C API (issue 14): 42, -1 and INT_MAX come back as INVALID_ARGUMENT
// or TYPE_MISMATCH naming the argument, never as undefined behaviour (the
// test is meant to run clean under -fsanitize=undefined
// -fno-sanitize-recover=all).
#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <type_traits>

#include "gpufmm.h"

namespace {

// A C or Fortran caller passes an enum argument as an int, any int. C++ can
// not form an out-of-range enum value without undefined behaviour of its
// own, so the test calls the functions through their int ABI: the same
// function type with every enum parameter an int (as Fortran's bind(c)
// interfaces declare it).
template <class T>
using IntIfEnum = std::conditional_t<std::is_enum<T>::value, int, T>;

template <class R, class... A>
auto int_abi(R (*f)(A...)) {
  return reinterpret_cast<R (*)(IntIfEnum<A>...)>(f);
}

const int kBad[] = {42, -1, INT_MAX};

// status is `want` and the last error message names 'arg'.
void expect_named(gpufmm_status_t status, gpufmm_status_t want, const std::string& arg, int value) {
  EXPECT_EQ(status, want) << arg << " = " << value;
  const std::string msg = gpufmm_last_error_message();
  EXPECT_NE(msg.find("'" + arg + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(value)), std::string::npos) << msg;
}

class EnumArgs : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(gpufmm_context_create(GPUFMM_DEVICE_CPU, &ctx_), GPUFMM_SUCCESS); }
  void TearDown() override { EXPECT_EQ(gpufmm_context_destroy(ctx_), GPUFMM_SUCCESS); }
  gpufmm_array_t matrix(int64_t m, int64_t n) {
    const int64_t dims[2] = {m, n};
    gpufmm_array_t a = nullptr;
    EXPECT_EQ(gpufmm_array_create(ctx_, GPUFMM_FLOAT64, 2, dims, &a), GPUFMM_SUCCESS);
    return a;
  }
  gpufmm_context_t ctx_ = nullptr;
};

TEST_F(EnumArgs, StatusStringAndDtypeSize) {
  for (int v : kBad) {
    EXPECT_NE(std::string(int_abi(gpufmm_status_string)(v)).find("UNKNOWN"), std::string::npos) << v;
    EXPECT_EQ(int_abi(gpufmm_dtype_size)(v), 0) << v;
  }
}

TEST_F(EnumArgs, ArrayCreateAndWrap) {
  const int64_t dims[1] = {4};
  double data[4] = {0, 0, 0, 0};
  for (int v : kBad) {
    gpufmm_array_t a = nullptr;
    expect_named(int_abi(gpufmm_array_create)(ctx_, v, 1, dims, &a), GPUFMM_ERROR_TYPE_MISMATCH, "dtype", v);
    EXPECT_EQ(a, nullptr);
    expect_named(int_abi(gpufmm_array_wrap)(ctx_, v, 1, dims, data, &a), GPUFMM_ERROR_TYPE_MISMATCH, "dtype", v);
    EXPECT_EQ(a, nullptr);
  }
}

TEST_F(EnumArgs, GemvAndGemmOperations) {
  gpufmm_array_t A = matrix(2, 2), B = matrix(2, 2), C = matrix(2, 2), x = matrix(2, 1), y = matrix(2, 1);
  const double one = 1.0, zero = 0.0;
  for (int v : kBad) {
    expect_named(int_abi(gpufmm_array_gemv)(v, &one, A, x, &zero, y), GPUFMM_ERROR_INVALID_ARGUMENT, "trans", v);
    expect_named(int_abi(gpufmm_array_gemm)(v, GPUFMM_OP_N, &one, A, B, &zero, C), GPUFMM_ERROR_INVALID_ARGUMENT,
                 "transa", v);
    expect_named(int_abi(gpufmm_array_gemm)(GPUFMM_OP_N, v, &one, A, B, &zero, C), GPUFMM_ERROR_INVALID_ARGUMENT,
                 "transb", v);
  }
  for (gpufmm_array_t a : {A, B, C, x, y}) EXPECT_EQ(gpufmm_array_destroy(a), GPUFMM_SUCCESS);
}

TEST_F(EnumArgs, TreeSetsListsAndOptions) {
  const double pts[3 * 4] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  gpufmm_tree_options_t opt;
  ASSERT_EQ(gpufmm_tree_options_init(&opt), GPUFMM_SUCCESS);
  opt.l_max = 2;
  gpufmm_tree_t t = nullptr;
  ASSERT_EQ(gpufmm_tree_build(ctx_, &opt, 4, pts, 4, nullptr, &t), GPUFMM_SUCCESS);
  int64_t offsets[64] = {0}, rows = -7, entries = -7;
  for (int v : kBad) {
    expect_named(int_abi(gpufmm_tree_level_offsets)(t, v, 4, offsets), GPUFMM_ERROR_INVALID_ARGUMENT, "set", v);
    expect_named(int_abi(gpufmm_tree_get_points)(t, v, 4, nullptr, nullptr, nullptr),
                 GPUFMM_ERROR_INVALID_ARGUMENT, "set", v);
    expect_named(int_abi(gpufmm_tree_get_boxes)(t, v, 0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
                 GPUFMM_ERROR_INVALID_ARGUMENT, "set", v);
    expect_named(int_abi(gpufmm_tree_list_size)(t, v, &rows, &entries), GPUFMM_ERROR_INVALID_ARGUMENT, "list", v);
    EXPECT_EQ(rows, -7);
    expect_named(int_abi(gpufmm_tree_get_list)(t, v, 0, 0, nullptr, nullptr, nullptr, nullptr),
                 GPUFMM_ERROR_INVALID_ARGUMENT, "list", v);
  }
  EXPECT_EQ(gpufmm_tree_destroy(t), GPUFMM_SUCCESS);
  for (int v : kBad) {
    gpufmm_tree_options_t o = opt;
    o.kind = v;
    t = nullptr;
    expect_named(gpufmm_tree_build(ctx_, &o, 4, pts, 4, nullptr, &t), GPUFMM_ERROR_INVALID_ARGUMENT, "kind", v);
    EXPECT_EQ(t, nullptr);
  }
}

// cube_given is a flag: 0 or 1, not "non-zero".
TEST_F(EnumArgs, TreeCubeGivenIsZeroOrOne) {
  const double pts[3] = {0.25, 0.25, 0.25};
  gpufmm_tree_options_t opt;
  ASSERT_EQ(gpufmm_tree_options_init(&opt), GPUFMM_SUCCESS);
  opt.cube_side = 1.0;
  for (int v : {2, 42, -1, INT_MAX}) {
    opt.cube_given = v;
    gpufmm_tree_t t = nullptr;
    expect_named(gpufmm_tree_build(ctx_, &opt, 1, pts, 1, nullptr, &t), GPUFMM_ERROR_INVALID_ARGUMENT,
                 "cube_given", v);
    EXPECT_EQ(t, nullptr);
  }
  opt.cube_given = 1;
  gpufmm_tree_t t = nullptr;
  ASSERT_EQ(gpufmm_tree_build(ctx_, &opt, 1, pts, 1, nullptr, &t), GPUFMM_SUCCESS);
  EXPECT_EQ(gpufmm_tree_destroy(t), GPUFMM_SUCCESS);
}

TEST_F(EnumArgs, LaplaceOptions) {
  const double pts[3 * 2] = {0, 0, 0, 1, 1, 1};
  gpufmm_laplace_options_t def;
  ASSERT_EQ(gpufmm_laplace_options_init(&def), GPUFMM_SUCCESS);
  struct Field {
    const char* name;
    int gpufmm_laplace_options_t::*member;
  };
  const Field fields[] = {{"precision", &gpufmm_laplace_options_t::precision},
                          {"stencil", &gpufmm_laplace_options_t::stencil},
                          {"gpu_p2m", &gpufmm_laplace_options_t::gpu_p2m},
                          {"gpu_m2m", &gpufmm_laplace_options_t::gpu_m2m},
                          {"gpu_m2l", &gpufmm_laplace_options_t::gpu_m2l},
                          {"gpu_l2l", &gpufmm_laplace_options_t::gpu_l2l},
                          {"gpu_l2p", &gpufmm_laplace_options_t::gpu_l2p},
                          {"gpu_p2p", &gpufmm_laplace_options_t::gpu_p2p}};
  for (const Field& f : fields)
    for (int v : kBad) {
      gpufmm_laplace_options_t o = def;
      o.*f.member = v;
      gpufmm_laplace_plan_t plan = nullptr;
      expect_named(gpufmm_laplace_plan_create(ctx_, &o, 2, pts, 0, nullptr, &plan), GPUFMM_ERROR_INVALID_ARGUMENT,
                   f.name, v);
      EXPECT_EQ(plan, nullptr);
    }
}

TEST_F(EnumArgs, DirectPrecisionAndKernelType) {
  const double pts[3 * 2] = {0, 0, 0, 1, 1, 1}, q[2] = {1, 1};
  double pot[2] = {-3, -3};
  gpufmm_kernel_t k;
  ASSERT_EQ(gpufmm_kernel_init(&k, GPUFMM_KERNEL_LAPLACE, 0, nullptr), GPUFMM_SUCCESS);
  gpufmm_array_t s = matrix(3, 2), c = matrix(2, 1), p = matrix(2, 1);
  for (int v : kBad) {
    expect_named(gpufmm_laplace_direct(ctx_, v, 2, pts, q, nullptr, 0, nullptr, pot, nullptr),
                 GPUFMM_ERROR_INVALID_ARGUMENT, "precision", v);
    expect_named(gpufmm_direct(ctx_, &k, v, 2, pts, q, 0, nullptr, pot, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT,
                 "precision", v);
    expect_named(gpufmm_direct_arrays(&k, v, s, c, nullptr, p, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT, "precision",
                 v);
    EXPECT_EQ(pot[0], -3.0);
    gpufmm_kernel_t bad = k;  // the type of a kernel: named with the kernel
    expect_named(gpufmm_kernel_init(&bad, v, 0, nullptr), GPUFMM_ERROR_INVALID_ARGUMENT, "kernel", v);
    EXPECT_EQ(bad.type, GPUFMM_KERNEL_LAPLACE);
    bad.type = v;
    expect_named(gpufmm_direct(ctx_, &bad, GPUFMM_FLOAT64, 2, pts, q, 0, nullptr, pot, nullptr),
                 GPUFMM_ERROR_INVALID_ARGUMENT, "kernel", v);
  }
  for (gpufmm_array_t a : {s, c, p}) EXPECT_EQ(gpufmm_array_destroy(a), GPUFMM_SUCCESS);
}

}  // namespace
