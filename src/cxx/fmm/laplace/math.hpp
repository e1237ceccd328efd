// Umbrella header for the Laplace FMM math (host+device, header-only).
// See docs/laplace_math.md for what each function computes.
#pragma once

#include "fmm/laplace/basis.hpp"
#include "fmm/laplace/error.hpp"
#include "fmm/laplace/expansion.hpp"
#include "fmm/laplace/rotation.hpp"
#include "fmm/laplace/translation.hpp"
