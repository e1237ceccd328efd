// OpenMP building blocks of the CPU tree and list builders: thread counts
// for cheap loops, the bounding box of points, an ordered parallel
// selection and an exclusive scan (also used by the direct sum).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpufmm {
namespace tree {
namespace detail {

inline int64_t chunk_begin(int64_t n, int t, int nt) { return n * t / nt; }

// Threads for a loop of n cheap iterations (avoid waking a team for tiny n).
inline int team_for(int64_t n) {
  const int64_t per = 16384;
  const int64_t want = (n + per - 1) / per;
  const int maxt = omp_get_max_threads();
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(want, maxt)));
}

// Extends [lo, hi] (per axis) by the n points p (3 x n).
inline void bounding_box(const double* p, int64_t n, double lo[3], double hi[3]) {
  double lx = lo[0], ly = lo[1], lz = lo[2], hx = hi[0], hy = hi[1], hz = hi[2];
#pragma omp parallel for reduction(min : lx, ly, lz) reduction(max : hx, hy, hz) \
    num_threads(team_for(n)) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    lx = std::min(lx, p[3 * i]);
    ly = std::min(ly, p[3 * i + 1]);
    lz = std::min(lz, p[3 * i + 2]);
    hx = std::max(hx, p[3 * i]);
    hy = std::max(hy, p[3 * i + 1]);
    hz = std::max(hz, p[3 * i + 2]);
  }
  lo[0] = lx; lo[1] = ly; lo[2] = lz;
  hi[0] = hx; hi[1] = hy; hi[2] = hz;
}

// Indices i in [0, n) with pred(i), ascending, written to out (which must
// have room); returns their number.
template <class Pred>
int64_t parallel_select(int64_t n, Pred pred, int32_t* out) {
  const int team = team_for(n);
  std::vector<int64_t> counts(static_cast<size_t>(team) + 1, 0);
  int64_t total = 0;
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = chunk_begin(n, t, nt), e = chunk_begin(n, t + 1, nt);
    int64_t c = 0;
    for (int64_t i = b; i < e; ++i) c += pred(i) ? 1 : 0;
    counts[static_cast<size_t>(t) + 1] = c;
#pragma omp barrier
#pragma omp single
    {
      for (int u = 0; u < nt; ++u) counts[static_cast<size_t>(u) + 1] += counts[static_cast<size_t>(u)];
      total = counts[static_cast<size_t>(nt)];
    }
    int64_t pos = counts[static_cast<size_t>(t)];
    for (int64_t i = b; i < e; ++i)
      if (pred(i)) out[pos++] = static_cast<int32_t>(i);
  }
  return total;
}

// In-place exclusive scan of a[0..n) (a[n-1] is expected to be a 0 pad when
// the result is used as CSR offsets); returns the total.
inline int64_t exclusive_scan(int64_t* a, int64_t n) {
  const int team = team_for(n);
  std::vector<int64_t> part(static_cast<size_t>(team) + 1, 0);
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = chunk_begin(n, t, nt), e = chunk_begin(n, t + 1, nt);
    int64_t s = 0;
    for (int64_t i = b; i < e; ++i) s += a[i];
    part[static_cast<size_t>(t) + 1] = s;
#pragma omp barrier
#pragma omp single
    for (int u = 0; u < nt; ++u) part[static_cast<size_t>(u) + 1] += part[static_cast<size_t>(u)];
    int64_t run = part[static_cast<size_t>(t)];
    for (int64_t i = b; i < e; ++i) {
      const int64_t v = a[i];
      a[i] = run;
      run += v;
    }
  }
  return n > 0 ? a[n - 1] : 0;
}

}  // namespace detail
}  // namespace tree
}  // namespace gpufmm
