// What the plans that measure their own error share (the calibration,
// plan/calibrate.hpp, of the Laplace FMM and the treecode):
// reproducible reference values, sampled targets, and the relative L2
// error over all targets estimated from the samples.
#pragma once

#include <cstdint>
#include <vector>

namespace gpufmm {
namespace plan {

// splitmix64: the next value of the generator of state s.
uint64_t splitmix64(uint64_t& s);
// One value of a calibration's reference densities: uniform in (0, 1)
// (positive), else a random sign of magnitude 1.
double reference_value(uint64_t& s, bool positive);
// One value uniform in (-1, 1).
double reference_uniform(uint64_t& s);
// Shifts every value of zero-mean reference densities (per = 1 charges, 3
// dipoles, n x per) by one constant so that their sum (the total charge, the
// dipole moment) has the magnitude it has on average over draws, its
// direction kept: targets far from the sources see a set through that sum,
// and a draw that cancels it by chance makes its relative error larger by as
// much (measured: one of 4 sets of random dipoles 10x another's).
void typical_leading_moment(std::vector<double>& values, int per);

// Sampled targets (user indices) and the number of targets each stands for
// in the estimate of the error's sum of squares.
struct Samples {
  std::vector<int64_t> at;
  std::vector<double> weight;
};

// Every target when there are at most `count`; else one random target in
// each of `count` equal strata of the user's order (weight nt / count).
Samples strata_samples(int64_t nt, int64_t count, uint64_t seed);

// Relative L2 error of `approx` (per x nt values, user order) over all
// targets, estimated from its difference from `ref` (per values per
// sample, in S's order) at the samples, against a norm of the result that
// does not depend on the reference values: the norm comes from every
// target's value, not from the samples, and leaves out the few targets that
// dominate it (and their errors). The norm is dominated by the closest
// source-target pairs (|grad|^2 ~ 1/r^4 has no finite mean for random
// points), so a sample misses or over-weights them, and the reference
// values on those few pairs decide it: a dipole nearly perpendicular to its
// closest target's direction made one set's norm 8x smaller than another's
// on the same points (the Laplace FMM, distinct targets, eps 1e-9). Without
// them the norm is a sum over many targets, about the same for any set of
// values; their own errors, near-field sums mostly, scale with their values
// (in float, rounding: kept, they alone missed 1e-5). The same bits on any
// number of threads. v2: scratch.
double estimated_rel_l2(const std::vector<double>& approx, const std::vector<double>& ref, const Samples& S,
                        int per, std::vector<double>& v2);

}  // namespace plan
}  // namespace gpufmm
