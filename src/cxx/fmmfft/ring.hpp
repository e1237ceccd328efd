// The units of one level as the FMM-FFT's S2T and M2L read them (host +
// device: execute_cpu.cpp and the CUDA kernels of src/cuda/fmmfft/): the
// n units of this rank (units of `unit` reals: the input's points of 2 P
// reals, or boxes of R Q multipole reals) and h units of each neighbour, or,
// in one process (before == null), the n units with the index wrapping
// around (the FMMs are periodic).
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "fmmfft/plan.hpp"

namespace gpufmm {
namespace fmmfft {

template <class R>
struct Ring {
  const R* mid;
  int64_t n, unit;
  const R* before = nullptr;  // null: cyclic
  const R* after = nullptr;
  int64_t h = 0;
  // Unit i (-h <= i < n + h over several ranks; any i in one process).
  GPUFMM_HD_INLINE const R* at(int64_t i) const {
    if (before == nullptr) {
      int64_t k = i % n;
      if (k < 0) k += n;
      return mid + unit * k;
    }
    if (i < 0) return before + unit * (i + h);
    if (i >= n) return after + unit * (i - n);
    return mid + unit * i;
  }
};

// The halos and the base level of a plan over several ranks, in one buffer
// of Plan::halo_offset.back() reals: part k = 0, 1 the input's leaf before
// and after; 2 (l - B) and 2 (l - B) + 1 the two boxes of multipoles before
// and after, l = B + 1..L; the last the base level of every rank.
template <class R>
const R* halo_part(const Plan& p, const R* halo, int k) {
  return halo + p.halo_offset[size_t(k)];
}
template <class R>
const R* base_all(const Plan& p, const R* halo) {
  return halo_part(p, halo, 2 * (p.par.L - p.par.B) + 2);
}

// The S2T's input points (units of 2 P reals) and the M2L's multipoles of
// level l (boxes of R Q reals; mult_l: this rank's) as rings: cyclic in
// one process, through the halos over several ranks, where the base level
// is every rank's boxes (cyclic).
template <class R>
Ring<R> input_ring(const Plan& p, const R* x, const R* halo) {
  const int64_t unit = 2 * int64_t(p.par.P);
  if (!p.dist) return Ring<R>{x, p.par.M, unit};
  return Ring<R>{x, p.local_n() / p.par.P, unit, halo_part(p, halo, 0), halo_part(p, halo, 1), p.par.ml};
}
template <class R>
Ring<R> level_ring(const Plan& p, int l, const R* mult_l, const R* halo) {
  const int64_t unit = p.rows() * p.par.Q;
  if (!p.dist) return Ring<R>{mult_l, p.boxes(l), unit};
  if (l == p.par.B) return Ring<R>{base_all(p, halo), int64_t(1) << l, unit};
  const int k = 2 * (l - p.par.B);
  return Ring<R>{mult_l, p.boxes(l), unit, halo_part(p, halo, k), halo_part(p, halo, k + 1), 2};
}

}  // namespace fmmfft
}  // namespace gpufmm
