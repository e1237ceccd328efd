// The options and plan information that every FMM of gpufmm.h shares,
// converted once for the thunks of each FMM (laplace.cpp; a Helmholtz or
// Chebyshev FMM's): templates over the C structs, which name these fields
// alike (gpufmm_laplace_options_t, gpufmm_laplace_info_t), and over the
// core's options and plan. What is an FMM's own (Laplace: p, the stencil,
// variable truncation, the kernel strategies of the CUDA stages) its thunks
// convert themselves.
#pragma once

#include <cstring>

#include "array/array.hpp"
#include "core/error.hpp"
#include "gpufmm.h"

namespace gpufmm {
namespace capi {

// The shared fields of C options c into the core's options o, each checked
// as the C struct names it (INVALID_ARGUMENT: "options field 'calibrate'
// ..."); the ranges are the core's validate_options' to check.
template <class COptions, class Options>
void fmm_options_common(const COptions& c, Options& o) {
  o.eps = c.eps;
  o.precision = checked_precision(c.precision, "options field 'precision'");
  o.l_max = c.l_max;
  o.s_max = c.s_max;
  require_flag(c.table_cache, "table_cache");
  o.table_cache = c.table_cache != 0;
  require_flag(c.gpu_overlap, "gpu_overlap");
  o.gpu.overlap = c.gpu_overlap != 0;
  require_flag(c.gpu_graph, "gpu_graph");
  o.gpu.graph = c.gpu_graph != 0;
  o.tree = c.tree;
  require_flag(c.calibrate, "calibrate");
  o.calibrate = c.calibrate != 0;
  o.densities = c.densities;
  o.cube_padding = c.cube_padding;
}

// The shared fields of the C information of a plan (info zeroed first):
// depth, precision, backend, sizes, plan time, the per-stage times of the
// last evaluate, the tree's kind and cube, and the calibration's evaluates
// and error.
template <class Plan, class CInfo>
void fmm_info_common(const Plan& plan, CInfo& info) {
  std::memset(&info, 0, sizeof info);
  info.l_max = plan.l_max;
  info.precision = plan.options.precision;
  info.backend = plan.ctx.backend;
  info.nsrc = plan.nsrc;
  info.ntrg = plan.ntrg;
  info.source_boxes = plan.src_boxes;
  info.target_boxes = plan.trg_boxes;
  info.m2l_translations = plan.m2l_translations;
  info.p2p_pairs = plan.p2p_pairs;
  info.adaptive = plan.adaptive ? 1 : 0;
  info.calibration_evaluates = plan.calibration_evaluates;
  info.measured_eps = plan.measured_eps;
  info.cube_padding = plan.cube_padding;
  info.plan_seconds = plan.plan_seconds;
  info.t_p2m = plan.last.p2m;
  info.t_upward = plan.last.upward;
  info.t_downward = plan.last.downward;
  info.t_l2p = plan.last.l2p;
  info.t_p2p = plan.last.p2p;
  info.t_total = plan.last.total;
}

}  // namespace capi
}  // namespace gpufmm
