// gpufmm_kernel_t -> the core's kernel description (bindings/c/direct.cpp),
// for every thunk that takes a kernel (the direct sums, the treecode).
#pragma once

#include "gpufmm.h"
#include "kernels/kernel.hpp"

namespace gpufmm {
namespace capi {

// The validated description of a C kernel; throws INVALID_ARGUMENT naming
// `name` (an unknown type, a parameter count that is not the type's, a
// parameter out of range).
kernels::KernelDesc kernel_desc(const gpufmm_kernel_t* k, const char* name);

}  // namespace capi
}  // namespace gpufmm
