// Device checks and permutations of point coordinates (3 x n doubles) that
// every plan does after the upload (staging.hpp), on the context's stream.
// Declared without CUDA types, so that the plans' C++ code calls them.
#pragma once

#include <cstdint>

#include "core/context.hpp"

namespace gpufmm {
namespace cuda {

// The smallest i < n whose point xyz[3i..3i+2] (device memory) has a NaN or
// Inf coordinate, n when there is none (waits for the context's stream);
// plan::fail_if_bad_point reports it.
int64_t first_nonfinite_point(Context& ctx, const double* xyz, int64_t n);
// The smallest i < n whose point (device memory, finite) is not
// plan::point_resolvable, n when there is none (waits for the context's
// stream); plan::fail_if_tiny_point reports it.
int64_t first_tiny_point(Context& ctx, const double* xyz, int64_t n);
// out[3i+k] = xyz[3 perm[i] + k], i < n (all device pointers; asynchronous):
// the coordinates in a tree's sorted order.
void gather_points(Context& ctx, const double* xyz, const int32_t* perm, int64_t n, double* out);

}  // namespace cuda
}  // namespace gpufmm
