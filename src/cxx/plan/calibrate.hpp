// Calibration by test evaluates, written once for every plan that measures
// its own error (the Laplace FMM's p, fmm/laplace/calibrate.cpp; the
// treecode's theta and degree, treecode/calibrate.cpp; the next FMMs'):
//  * the reference: sampled targets, reference densities drawn from one
//    seed, and their field at the samples from a callback (the double
//    direct sum today, direct_reference; an Ewald sum for a periodic plan);
//  * the test evaluates: the plan's outputs on each reference set, counted,
//    and their measured error (the relative L2 error of potential and
//    gradient estimated from the samples, plan/sampled_error.hpp);
//  * two searches driven by callbacks: over an integer (a truncation
//    number: the smallest within the goal, stepping by the error ratio of
//    one more term) and over a grid of candidates (the cheapest within the
//    goal, by a predicted error scaled by the last measured ratio).
// The goal of both is eps / the plan's margin; a plan keeps its model's
// parameters where the error cannot be measured (not finite).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/context.hpp"
#include "kernels/kernel.hpp"
#include "plan/sampled_error.hpp"

namespace gpufmm {
namespace plan {

// Targets compared with the reference (all of them below this count).
constexpr int64_t kCalibrationSamples = 2048;
// The seed of the reference densities (a plan's parameters are reproducible).
constexpr uint64_t kReferenceSeed = 0xC0FFEEull;

// How one reference set's values are drawn (reference_value,
// reference_uniform): charges (per = 1) or dipoles (per = 3), of random
// sign and magnitude 1, uniform in (0, 1) (positive) or in (-1, 1)
// (uniform); typical_moment: signed values shifted so that their sum has
// its typical magnitude (typical_leading_moment).
struct DensitySpec {
  int per = 1;
  bool positive = false;
  bool uniform = false;
  bool typical_moment = false;
};

// A field at the samples: the potential (m) and the gradient (3 x m; empty
// where the calibration measures none).
struct SampledField {
  std::vector<double> pot, grad;
};

// One reference set: its values (per x nsrc, user order) and their field.
struct ReferenceSet {
  DensitySpec spec;
  std::vector<double> values;
  SampledField field;
};

// What the test evaluates are compared with.
struct Reference {
  Samples at;
  std::vector<double> xyz;  // the sampled targets, 3 x m
  std::vector<ReferenceSet> sets;
  int64_t m() const { return int64_t(at.at.size()); }
};

// The field of `values` (per x nsrc) at xyz (3 x m): pot (m) and, when not
// null, grad (3 x m).
using ReferenceField =
    std::function<void(const double* values, int per, int64_t m, const double* xyz, double* pot, double* grad)>;

// The double-precision direct sum of kernel k over the sources (3 x nsrc,
// host, user order) on ctx's backend. ctx and sources must outlive it.
ReferenceField direct_reference(Context& ctx, const kernels::KernelDesc& k, int64_t nsrc, const double* sources);

// The samples `at` of the targets txyz (3 x nt), and one set per spec, in
// order, with values drawn from kReferenceSeed and their field (with the
// gradient when grad). what: the sets in an out-of-memory message.
Reference make_reference(Samples at, const double* txyz, int64_t nsrc, const std::vector<DensitySpec>& specs,
                         bool grad, const ReferenceField& field, const char* what);

// The larger of a and b, NaN where either is: an error that cannot be
// measured stays so through the maximum over potential, gradient and sets.
double max_error(double a, double b);

// The error of outputs (pot: nt; grad: 3 x nt, user order) against a field
// at the samples: the larger relative L2 error of potential and (where the
// field has one) gradient, estimated_rel_l2. v2: scratch.
double measured_error(const std::vector<double>& pot, const std::vector<double>& grad, const SampledField& f,
                      const Samples& S, std::vector<double>& v2);

// The outputs at the samples (to compare later evaluates with).
SampledField at_samples(const std::vector<double>& pot, const std::vector<double>& grad, const Samples& S);

// The test evaluates of one calibration: the reference, the outputs (nt
// targets; the gradient when the reference has one) and their count.
class TestEvaluates {
 public:
  // evaluate(values, per, pot, grad): the plan at its current parameters
  // on one set's values into outputs in user order (grad null: none).
  using Evaluate = std::function<void(const double* values, int per, double* pot, double* grad)>;

  TestEvaluates(Reference ref, int64_t nt, Evaluate evaluate);
  const Reference& reference() const { return ref_; }
  size_t sets() const { return ref_.sets.size(); }
  int count() const { return count_; }
  // Set k through the plan (counted when it returns), then its error
  // (measured_error against the set's field). Apart, so that a caller can
  // time them apart; error reads the outputs of the last evaluate.
  void evaluate(size_t k);
  double error(size_t k);
  // The error of the last evaluate against another field at the samples.
  double error_against(const SampledField& f);
  // The last evaluate's outputs at the samples.
  SampledField outputs_at_samples() const;

 private:
  Reference ref_;
  Evaluate evaluate_;
  std::vector<double> pot_, grad_, v2_;
  int count_ = 0;
};

// The search over an integer q (a truncation number) for the smallest in
// [lo, hi] whose error is within goal, where the error falls by a ratio per
// unit. measure(q, every): the error at q of the first reference set
// (every false) or the largest of all sets; it may throw to end the
// search. Two phases: the search on the first set (every set at once when
// one_set), then every set at the q found; where one misses the goal
// there, the search goes on above it with every set. Each phase measures at
// most max_steps times from `start` (then from one above the miss),
// stepping by the error ratio per unit (first `ratio`, then the one
// measured between its last two measurements, within [min_ratio,
// max_ratio]) until the smallest q within the goal has its predecessor
// measured or predicted above it.
struct IntegerSearch {
  int lo = 0, hi = 0, start = 0;
  double goal = 0;
  double ratio = 2.0;
  double min_ratio = 1.2, max_ratio = 4.0;
  int max_steps = 6;
  bool one_set = false;
  std::function<double(int q, bool every)> measure;
};
struct IntegerResult {
  int ok = -1;   // the q found, -1: none within goal
  int bad = -1;  // the largest q measured above goal, or lo - 1
};
IntegerResult search_integer(const IntegerSearch& s);

// The search over candidates 0 .. n-1 of a grid (the treecode's theta x
// degree) for the cheapest whose error is within goal. The start (measured
// first, its error given; it need not be in `order`) and then, up to
// max_steps times, the first candidate of `order` (cheapest first) cheaper
// than the best within goal so far, not measured, not ruled out by a miss,
// whose predicted error times the last measured ratio (measured /
// predicted) is within goal: measure(c) builds and measures it; keep(c)
// then takes it as the best. A measured error that is not finite ends the
// search.
struct GridSearch {
  std::vector<int> order;
  double goal = 0;
  int max_steps = 4;
  std::function<double(int)> cost, predicted;
  std::function<bool(int c, int missed)> ruled_out;  // c cannot be within goal where `missed` was not
  std::function<double(int)> measure;
  std::function<void(int)> keep;
};
struct GridResult {
  int best = -1;     // the cheapest within goal after the start; -1: none (the start stays)
  double error = 0;  // its measured error (the start's when best is -1)
};
GridResult search_grid(const GridSearch& s, int start, double e_start);

}  // namespace plan
}  // namespace gpufmm
