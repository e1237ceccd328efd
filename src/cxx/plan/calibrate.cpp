// plan/calibrate.hpp.
#include "plan/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "nearfield/direct.hpp"

namespace gpufmm {
namespace plan {

ReferenceField direct_reference(Context& ctx, const kernels::KernelDesc& k, int64_t nsrc, const double* sources) {
  return [&ctx, k, nsrc, sources](const double* values, int per, int64_t m, const double* xyz, double* pot,
                                  double* grad) {
    nearfield::DirectArgs d;
    d.nsrc = nsrc;
    d.sources = sources;
    (per == 1 ? d.charges : d.dipoles) = values;
    d.ntrg = m;
    d.targets = xyz;
    d.pot = pot;
    d.grad = grad;
    nearfield::direct(ctx, k, GPUFMM_FLOAT64, d);
  };
}

Reference make_reference(Samples at, const double* txyz, int64_t nsrc, const std::vector<DensitySpec>& specs,
                         bool grad, const ReferenceField& field, const char* what) {
  Reference R;
  R.at = std::move(at);
  const int64_t m = R.m();
  R.xyz.resize(size_t(3 * m));
  for (int64_t i = 0; i < m; ++i)
    for (int c = 0; c < 3; ++c) R.xyz[size_t(3 * i + c)] = txyz[3 * R.at.at[size_t(i)] + c];
  R.sets.resize(specs.size());
  uint64_t seed = kReferenceSeed;
  for (size_t k = 0; k < specs.size(); ++k) {
    ReferenceSet& r = R.sets[k];
    r.spec = specs[k];
    const int per = r.spec.per;
    allocating(what, 8.0 * (double(per) * double(nsrc) + 4.0 * double(m)), [&] {
      r.values.resize(size_t(per * nsrc));
      r.field.pot.resize(size_t(m));
      r.field.grad.resize(grad ? size_t(3 * m) : 0);
    });
    for (double& v : r.values) v = r.spec.uniform ? reference_uniform(seed) : reference_value(seed, r.spec.positive);
    if (r.spec.typical_moment && !r.spec.positive) typical_leading_moment(r.values, per);
    field(r.values.data(), per, m, R.xyz.data(), r.field.pot.data(), grad ? r.field.grad.data() : nullptr);
  }
  return R;
}

double max_error(double a, double b) { return std::isnan(b) || a < b ? b : a; }

double measured_error(const std::vector<double>& pot, const std::vector<double>& grad, const SampledField& f,
                      const Samples& S, std::vector<double>& v2) {
  double e = estimated_rel_l2(pot, f.pot, S, 1, v2);
  if (!f.grad.empty()) e = max_error(e, estimated_rel_l2(grad, f.grad, S, 3, v2));
  return e;
}

SampledField at_samples(const std::vector<double>& pot, const std::vector<double>& grad, const Samples& S) {
  SampledField f;
  const size_t m = S.at.size();
  f.pot.resize(m);
  f.grad.resize(grad.empty() ? 0 : 3 * m);
  for (size_t i = 0; i < m; ++i) {
    const size_t t = size_t(S.at[i]);
    f.pot[i] = pot[t];
    for (size_t c = 0; c < 3 && !grad.empty(); ++c) f.grad[3 * i + c] = grad[3 * t + c];
  }
  return f;
}

TestEvaluates::TestEvaluates(Reference ref, int64_t nt, Evaluate evaluate)
    : ref_(std::move(ref)), evaluate_(std::move(evaluate)) {
  const bool grad = !ref_.sets.empty() && !ref_.sets[0].field.grad.empty();
  allocating("the calibration's outputs", 32.0 * double(nt), [&] {
    pot_.resize(size_t(nt));
    grad_.resize(grad ? size_t(3 * nt) : 0);
  });
}

void TestEvaluates::evaluate(size_t k) {
  const ReferenceSet& r = ref_.sets[k];
  evaluate_(r.values.data(), r.spec.per, pot_.data(), grad_.empty() ? nullptr : grad_.data());
  ++count_;
}

double TestEvaluates::error(size_t k) { return measured_error(pot_, grad_, ref_.sets[k].field, ref_.at, v2_); }

double TestEvaluates::error_against(const SampledField& f) { return measured_error(pot_, grad_, f, ref_.at, v2_); }

SampledField TestEvaluates::outputs_at_samples() const { return at_samples(pot_, grad_, ref_.at); }

IntegerResult search_integer(const IntegerSearch& s) {
  IntegerResult out;
  out.bad = s.lo - 1;
  int& ok = out.ok;
  int& bad = out.bad;
  int q = s.start;
  double r = s.ratio;
  for (int phase = 0; phase < 2 && ok < 0; ++phase) {
    const bool every = phase == 1 || s.one_set;
    int q_prev = -1, candidate = -1;
    double e_prev = 0;
    for (int step = 0; step < s.max_steps; ++step) {
      const double e = s.measure(q, every);
      if (q_prev > 0 && e > 0 && e_prev > 0)
        r = std::min(s.max_ratio, std::max(s.min_ratio, std::pow(e_prev / e, 1.0 / double(q - q_prev))));
      q_prev = q;
      e_prev = e;
      if (e <= s.goal) {
        if (candidate < 0 || q < candidate) candidate = q;
      } else {
        bad = std::max(bad, q);
      }
      const int hi = candidate < 0 ? s.hi : candidate - 1;  // candidates: bad + 1 .. hi
      if (bad + 1 > hi) break;
      int next;
      if (e <= s.goal) {  // down by as many units as the slope allows
        const int k = e > 0 ? int(std::floor(std::log(s.goal / e) / std::log(r))) : q;
        if (k <= 0) break;  // q - 1 predicted above goal
        next = q - k;
      } else {  // up by as many units as the slope says are missing
        next = q + std::max(1, int(std::ceil(std::log(e / s.goal) / std::log(r))));
      }
      q = std::max(bad + 1, std::min(hi, next));
    }
    if (candidate < 0) break;
    if (s.measure(candidate, true) <= s.goal) {
      ok = candidate;
    } else {
      bad = std::max(bad, candidate);
      q = std::min(s.hi, candidate + 1);
    }
  }
  return out;
}

GridResult search_grid(const GridSearch& s, int start, double e_start) {
  GridResult out;
  out.error = e_start;
  std::vector<int> measured{start}, missed;
  double best_work = e_start <= s.goal ? s.cost(start) : HUGE_VAL;
  if (e_start > s.goal) missed.push_back(start);
  double ratio = e_start / s.predicted(start);
  for (int step = 0; step < s.max_steps; ++step) {
    int next = -1;
    for (int c : s.order) {
      if (s.cost(c) >= best_work) break;
      if (std::find(measured.begin(), measured.end(), c) != measured.end()) continue;
      if (std::any_of(missed.begin(), missed.end(), [&](int x) { return s.ruled_out(c, x); })) continue;
      if (s.predicted(c) * ratio <= s.goal) {
        next = c;
        break;
      }
    }
    if (next < 0) break;
    const double e = s.measure(next);
    measured.push_back(next);
    if (!std::isfinite(e)) break;
    ratio = e / s.predicted(next);
    if (e <= s.goal) {
      s.keep(next);
      out.best = next;
      out.error = e;
      best_work = s.cost(next);
    } else {
      missed.push_back(next);
    }
  }
  return out;
}

}  // namespace plan
}  // namespace gpufmm
