/*
 * gpufmm_fmm3d.h - the few C functions of libgpufmm_fmm3d, the FMM3D drop-in
 * (docs/fmm3d.md), that FMM3D itself does not have (valid C99, usable from
 * C++). The drop-in's main entry points are FMM3D's own Laplace routines,
 * lfmm3d and its wrappers lfmm3d_{s,t,st}_{c,d,cd}_{p,g,h}[_vec], with
 * FMM3D's Fortran signatures (gfortran's names: lower case and a trailing
 * underscore, e.g. lfmm3d_s_c_g_; every argument by reference; integer*8
 * counts, flags and ier as int64_t); programs keep calling them as they did
 * with FMM3D, and need not include this header.
 *
 * Link with -lgpufmm_fmm3d -lgpufmm (instead of -lfmm3d).
 */
#ifndef GPUFMM_FMM3D_H
#define GPUFMM_FMM3D_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ier values of the FMM3D routines of this library. 0: success. FMM3D's own
 * code 4 ("failed to allocate workspace"): gpufmm ran out of host or device
 * memory. Any other failure: GPUFMM_FMM3D_IER_BASE + the gpufmm_status_t of
 * gpufmm.h (e.g. 1001 = an invalid argument: a negative count, a NaN or Inf
 * coordinate, charge or dipole, eps not in (0, 1), nd < 1, ifpgh > 3 ...;
 * 1006 = not supported by this build, e.g. GPUFMM_FMM3D_BACKEND=gpu without
 * CUDA). The outputs are then unchanged and gpufmm_fmm3d_last_error() says
 * what went wrong. */
#define GPUFMM_FMM3D_IER_ALLOC 4
#define GPUFMM_FMM3D_IER_BASE 1000

/* Frees every plan the drop-in keeps (its plan cache; docs/fmm3d.md). The
 * next call on any geometry builds a new plan. Safe at any time, from any
 * thread; calls running meanwhile finish with the plan they hold. */
void gpufmm_fmm3d_cache_clear(void);

/* Plan cache counters since the process started (any pointer may be NULL):
 * calls that found their plan, calls that built one, plans held now. */
void gpufmm_fmm3d_cache_stats(int64_t* hits, int64_t* misses, int64_t* plans);

/* The message of the last failed FMM3D routine on this thread ("" if none
 * yet), e.g. "lfmm3d_s_c_g: argument 'nsource' = -1 is negative". Valid until
 * the next call of the drop-in on this thread. */
const char* gpufmm_fmm3d_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUFMM_FMM3D_H */
