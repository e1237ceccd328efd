// libgpufmm_fmm3d's Laplace routines: FMM3D's lfmm3d and its wrappers
// lfmm3d_{s,t,st}_{c,d,cd}_{p,g,h}[_vec], as FMM3D 2.1 defines them in
// src/Laplace/lfmm3d.f, lfmm3dwrap.f and lfmm3dwrap_vec.f, on top of the C
// API of gpufmm.h, so that a program written for FMM3D relinks against gpufmm
// unchanged (docs/fmm3d.md). The ABI, the context and the plan cache:
// fmm3d_common.hpp. Arrays as FMM3D lays them out, which are the layouts of
// gpufmm_laplace_evaluate_nd.
//
// Normalization: FMM3D's kernel is 1/(4 pi r) (its dipole term
// v . (x - x_j) / (4 pi |x - x_j|^3)); gpufmm's is 1/r, so every output is
// gpufmm's times 1/(4 pi).
#include <algorithm>
#include <cstdint>
#include <memory>

#include "fmm3d_common.hpp"
#include "gpufmm.h"

namespace {

using gpufmm_fmm3d::check;

constexpr double kInvFourPi = 0.07957747154594766788444188168625718;  // 1 / (4 pi)

using LaplaceCall = gpufmm_fmm3d::Call<double>;

// The Laplace plans of one geometry (those the mode needs).
struct LaplaceEntry : gpufmm_fmm3d::Entry {
  using Entry::Entry;
  gpufmm_laplace_plan_t at_src = nullptr, at_trg = nullptr;
  ~LaplaceEntry() override {
    gpufmm_laplace_plan_destroy(at_src);
    gpufmm_laplace_plan_destroy(at_trg);
  }
};

void run(const LaplaceCall& c) {
  using gpufmm_fmm3d::Mode;
  gpufmm_fmm3d::State& st = gpufmm_fmm3d::state();
  const gpufmm_context_t ctx = st.context();
  gpufmm_fmm3d::Request<double> r;
  if (!gpufmm_fmm3d::prepare(c, r)) return;
  const gpufmm_fmm3d::Key key = gpufmm_fmm3d::key_of(gpufmm_fmm3d::Family::kLaplace, c, r);
  const std::shared_ptr<LaplaceEntry> entry = st.plan<LaplaceEntry>(key, [&](LaplaceEntry& e) {
    gpufmm_laplace_options_t opt;
    check(gpufmm_laplace_options_init(&opt));
    opt.eps = c.eps;
    opt.precision = GPUFMM_FLOAT64;
    gpufmm_fmm3d::with_memory_retry(st, [&] {
      // (A retry after running out of memory keeps a plan already made.)
      if (r.mode != Mode::kTargets && e.at_src == nullptr)
        check(gpufmm_laplace_plan_create(ctx, &opt, c.ns, c.src, 0, nullptr, &e.at_src));
      if (r.mode != Mode::kSources && e.at_trg == nullptr)
        check(gpufmm_laplace_plan_create(ctx, &opt, c.ns, c.src, r.nt, c.trg, &e.at_trg));
    });
  });
  const double* q = c.has_charge ? c.charge : nullptr;
  const double* d = c.has_dipole ? c.dipvec : nullptr;
  // gpufmm's sums (kernel 1/r) of nd densities, then times 1/(4 pi).
  gpufmm_fmm3d::evaluate_sets(st, c, r, kInvFourPi, [&](bool sources, double* const out[3]) {
    check(gpufmm_laplace_evaluate_nd(sources ? entry->at_src : entry->at_trg, static_cast<int>(c.nd), q, d, out[0],
                                     out[1], out[2]));
  });
}

}  // namespace

// ---------------------------------------------------------------- entry points

// lfmm3d (src/Laplace/lfmm3d.f): flags as FMM3D reads them (ifcharge,
// ifdipole: 1 = yes, anything else no; ifpgh, ifpghtarg: 1 pot, 2 + grad,
// 3 + hess, 0 or less nothing); iper is not read (FMM3D overwrites it with
// 0; this library leaves it alone).
GPUFMM_FMM3D_EXPORT void lfmm3d_(const int64_t* nd, const double* eps, const int64_t* nsource, const double* source,
                                 const int64_t* ifcharge, const double* charge, const int64_t* ifdipole,
                                 const double* dipvec, const int64_t* iper, const int64_t* ifpgh, double* pot,
                                 double* grad, double* hess, const int64_t* ntarg, const double* targ,
                                 const int64_t* ifpghtarg, double* pottarg, double* gradtarg, double* hesstarg,
                                 int64_t* ier) {
  (void)iper;
  LaplaceCall c("lfmm3d", *nd, *eps, *nsource, source);
  c.has_charge = *ifcharge == 1;
  c.charge = charge;
  c.has_dipole = *ifdipole == 1;
  c.dipvec = dipvec;
  c.at_src = gpufmm_fmm3d::Outputs<double>{std::max<int64_t>(*ifpgh, 0), {pot, grad, hess}};
  c.nt = *ntarg;
  c.trg = targ;
  c.at_trg = gpufmm_fmm3d::Outputs<double>{std::max<int64_t>(*ifpghtarg, 0), {pottarg, gradtarg, hesstarg}};
  *ier = gpufmm_fmm3d::guarded(c.name, [&] { run(c); });
}

// The wrappers of lfmm3dwrap.f and lfmm3dwrap_vec.f (fmm3d_common.hpp spells
// them): no kernel parameters, double charges and outputs.
#define GPUFMM_FMM3D_VALUE_lfmm3d double
#define GPUFMM_FMM3D_PARAM_ARGS_lfmm3d
#define GPUFMM_FMM3D_PARAM_SET_lfmm3d
#define GPUFMM_LFMM3D_WRAPPERS_K(E, K) \
  GPUFMM_FMM3D_WRAPPER(lfmm3d, E, K, p) GPUFMM_FMM3D_WRAPPER(lfmm3d, E, K, g) GPUFMM_FMM3D_WRAPPER(lfmm3d, E, K, h)
#define GPUFMM_LFMM3D_WRAPPERS(E) \
  GPUFMM_LFMM3D_WRAPPERS_K(E, c) GPUFMM_LFMM3D_WRAPPERS_K(E, d) GPUFMM_LFMM3D_WRAPPERS_K(E, cd)

GPUFMM_LFMM3D_WRAPPERS(s)
GPUFMM_LFMM3D_WRAPPERS(t)
GPUFMM_LFMM3D_WRAPPERS(st)
