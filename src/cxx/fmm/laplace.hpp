// Umbrella header for the Laplace FMM math (host+device, header-only).
// See docs/laplace_math.md for what each function computes.
#pragma once

#include "fmm/laplace_basis.hpp"
#include "fmm/laplace_error.hpp"
#include "fmm/laplace_expansion.hpp"
#include "fmm/laplace_rotation.hpp"
#include "fmm/laplace_translation.hpp"
