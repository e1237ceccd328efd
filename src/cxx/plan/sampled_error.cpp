// plan/sampled_error.hpp.
#include "plan/sampled_error.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpufmm {
namespace plan {

namespace {

// The norm of the result leaves out targets that dominate it: each holding
// more than 1 / kDominant of the rest, at most kMaxDominant of them and at
// most one target in kDominantShare.
constexpr double kDominant = 32.0;
constexpr int64_t kMaxDominant = 64;
constexpr int64_t kDominantShare = 64;  // at most one target in this many

}  // namespace

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double reference_value(uint64_t& s, bool positive) {
  if (positive) return double(splitmix64(s) >> 11) * 0x1.0p-53;
  return splitmix64(s) >> 63 ? 1.0 : -1.0;
}

double reference_uniform(uint64_t& s) { return 2.0 * reference_value(s, true) - 1.0; }

void typical_leading_moment(std::vector<double>& values, int per) {
  const size_t n = values.size() / size_t(per);
  if (n == 0) return;
  double m[3] = {0, 0, 0}, s2 = 0, m2 = 0;
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < per; ++c) {
      const double v = values[i * size_t(per) + size_t(c)];
      m[c] += v;
      s2 += v * v;
    }
  for (int c = 0; c < per; ++c) m2 += m[c] * m[c];
  // E|sum|^2 = sum of E v^2 over independent zero-mean values.
  double to[3] = {0, 0, 0};
  if (m2 > 0) {
    for (int c = 0; c < per; ++c) to[c] = m[c] * std::sqrt(s2 / m2);
  } else {
    to[0] = std::sqrt(s2);
  }
  for (int c = 0; c < per; ++c) {
    const double shift = (to[c] - m[c]) / double(n);
    for (size_t i = 0; i < n; ++i) values[i * size_t(per) + size_t(c)] += shift;
  }
}

Samples strata_samples(int64_t nt, int64_t count, uint64_t seed) {
  Samples S;
  if (nt <= count) {
    S.at.resize(size_t(nt));
    for (int64_t i = 0; i < nt; ++i) S.at[size_t(i)] = i;
    S.weight.assign(size_t(nt), 1.0);
    return S;
  }
  for (int64_t j = 0; j < count; ++j) {
    const int64_t lo = j * nt / count, hi = (j + 1) * nt / count;
    S.at.push_back(lo + int64_t(splitmix64(seed) % uint64_t(hi - lo)));
  }
  S.weight.assign(S.at.size(), double(nt) / double(count));
  return S;
}

double estimated_rel_l2(const std::vector<double>& approx, const std::vector<double>& ref, const Samples& S, int per,
                        std::vector<double>& v2) {
  const int64_t nt = int64_t(approx.size()) / per;
  v2.resize(size_t(nt));
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < nt; ++t) {
    double s = 0;
    for (int c = 0; c < per; ++c) s += approx[size_t(t * per + c)] * approx[size_t(t * per + c)];
    v2[size_t(t)] = s;
  }
  // The largest targets, largest first: at most kMaxDominant, and at most
  // one in kDominantShare of them (with few targets each would hold more
  // than 1/kDominant of the rest once fewer than kDominant remained, and
  // all would go). One pass; a value enters when it beats the smallest kept.
  const int64_t keep = std::min<int64_t>(kMaxDominant, nt / kDominantShare);
  std::vector<std::pair<double, int64_t>> top;
  top.reserve(size_t(keep) + 1);
  for (int64_t t = 0; t < nt && keep > 0; ++t) {
    const double v = v2[size_t(t)];
    if (int64_t(top.size()) == keep && !(v > top.back().first)) continue;
    auto at = std::upper_bound(top.begin(), top.end(), v,
                               [](double x, const std::pair<double, int64_t>& e) { return x > e.first; });
    top.insert(at, {v, t});
    if (int64_t(top.size()) > keep) top.pop_back();
  }
  // The norm of the targets outside `top`, summed (not the total less the
  // largest: a closest pair's |grad|^2 can be 1e15 times the rest's, and
  // the difference would be rounding, even negative), in fixed blocks added
  // in order: the same bits on any number of threads (a plan's p must not
  // depend on them).
  std::vector<int64_t> in_top(top.size());
  for (size_t i = 0; i < top.size(); ++i) in_top[i] = top[i].second;
  std::sort(in_top.begin(), in_top.end());
  constexpr int64_t kBlock = 4096;
  const int64_t nblocks = (nt + kBlock - 1) / kBlock;
  std::vector<double> partial(size_t(nblocks), 0.0);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < nblocks; ++b) {
    const int64_t lo = b * kBlock, hi = std::min(nt, (b + 1) * kBlock);
    auto skip = std::lower_bound(in_top.begin(), in_top.end(), lo);
    double sum = 0;
    for (int64_t t = lo; t < hi; ++t) {
      if (skip != in_top.end() && *skip == t) {
        ++skip;
        continue;
      }
      sum += v2[size_t(t)];
    }
    partial[size_t(b)] = sum;
  }
  // rest[j]: the norm without top[0 .. j-1], summed from the smallest up.
  std::vector<double> rest(top.size() + 1);
  rest[top.size()] = 0;
  for (double x : partial) rest[top.size()] += x;
  for (size_t j = top.size(); j-- > 0;) rest[j] = rest[j + 1] + top[j].first;
  // Leave out, largest first, every target that holds more than 1/kDominant
  // of what remains.
  std::vector<int64_t> left_out;
  while (left_out.size() < top.size() && top[left_out.size()].first * kDominant > rest[left_out.size()])
    left_out.push_back(top[left_out.size()].second);
  const double n = rest[left_out.size()];
  std::sort(left_out.begin(), left_out.end());
  double e = 0;
  for (size_t i = 0; i < S.at.size(); ++i) {
    if (std::binary_search(left_out.begin(), left_out.end(), S.at[i])) continue;
    for (int c = 0; c < per; ++c) {
      const double d = approx[size_t(S.at[i] * per + c)] - ref[i * per + c];
      e += S.weight[i] * d * d;
    }
  }
  return n > 0 ? std::sqrt(e / n) : std::sqrt(e);
}

}  // namespace plan
}  // namespace gpufmm
