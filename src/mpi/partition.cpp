// Domain decomposition across MPI ranks (partition.hpp).
#include "mpi/partition.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "mpi/collective.hpp"

namespace gpufmm {
namespace mpi {

namespace {

constexpr int kBins = 64;
constexpr int kMaxPasses = 24;

struct Group {
  int a, b;  // ranks [a, b)
};

// The cut of one group at one level, while its search runs.
struct Search {
  int dim = 0;
  int64_t goal = 0, below = 0;  // points wanted below the cut; points below lo
  double lo = 0, hi = 0;        // the interval holding the cut
  double cut = 0;
  bool done = true;
  double edge(int j) const { return j == kBins ? hi : lo + (hi - lo) * (double(j) / kBins); }
};

}  // namespace

std::vector<std::vector<int>> rcb_owners(MPI_Comm comm, const std::vector<const double*>& xyz,
                                         const std::vector<int64_t>& n) {
  int size = 1;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  // All points of the rank in one list (set, index).
  std::vector<const double*> pt;
  for (size_t s = 0; s < xyz.size(); ++s)
    for (int64_t i = 0; i < n[s]; ++i) pt.push_back(xyz[s] + 3 * i);
  const int64_t np = int64_t(pt.size());
  std::vector<int32_t> gid(size_t(np), 0);  // the point's group at this level
  std::vector<Group> groups{{0, size}};
  while (std::any_of(groups.begin(), groups.end(), [](const Group& g) { return g.b - g.a > 1; })) {
    const int ng = int(groups.size());
    // Bounding boxes (min of lo and of -hi) and counts of the groups.
    std::vector<double> box(size_t(6 * ng), std::numeric_limits<double>::infinity());
    std::vector<int64_t> count(size_t(ng), 0);
    for (int64_t i = 0; i < np; ++i) {
      double* b = &box[6 * size_t(gid[i])];
      for (int d = 0; d < 3; ++d) {
        b[d] = std::min(b[d], pt[i][d]);
        b[3 + d] = std::min(b[3 + d], -pt[i][d]);
      }
      ++count[gid[i]];
    }
    check(MPI_Allreduce(MPI_IN_PLACE, box.data(), 6 * ng, MPI_DOUBLE, MPI_MIN, comm), "MPI_Allreduce (RCB)");
    check(MPI_Allreduce(MPI_IN_PLACE, count.data(), ng, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce (RCB)");
    std::vector<Search> cut(static_cast<size_t>(ng));
    for (int g = 0; g < ng; ++g) {
      const int k = groups[g].b - groups[g].a;
      if (k < 2 || count[g] == 0) continue;
      Search& c = cut[g];
      const double* b = &box[6 * size_t(g)];
      for (int d = 1; d < 3; ++d)
        if (-b[3 + d] - b[d] > -b[3 + c.dim] - b[c.dim]) c.dim = d;
      c.goal = count[g] * (k / 2) / k;
      c.lo = b[c.dim];
      c.hi = std::nextafter(-b[3 + c.dim], std::numeric_limits<double>::infinity());
      c.cut = c.lo;
      c.done = c.goal == 0;
    }
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      if (std::all_of(cut.begin(), cut.end(), [](const Search& c) { return c.done; })) break;
      std::vector<int64_t> hist(size_t(ng) * kBins, 0);
#pragma omp parallel
      {
        std::vector<int64_t> mine(hist.size(), 0);
#pragma omp for schedule(static)
        for (int64_t i = 0; i < np; ++i) {
          const Search& c = cut[gid[i]];
          if (c.done) continue;
          const double x = pt[i][c.dim];
          if (x < c.lo || x >= c.hi) continue;
          int lo = 0, hi = kBins;  // the bin j with edge(j) <= x < edge(j + 1)
          while (hi - lo > 1) {
            const int mid = (lo + hi) / 2;
            if (x < c.edge(mid))
              hi = mid;
            else
              lo = mid;
          }
          ++mine[size_t(gid[i]) * kBins + lo];
        }
#pragma omp critical
        for (size_t j = 0; j < hist.size(); ++j) hist[j] += mine[j];
      }
      check(MPI_Allreduce(MPI_IN_PLACE, hist.data(), ng * kBins, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce (RCB)");
      for (int g = 0; g < ng; ++g) {
        Search& c = cut[g];
        if (c.done) continue;
        int64_t at = c.below;  // points below edge(j)
        int j = 0;
        while (j < kBins && at + hist[size_t(g) * kBins + j] <= c.goal) at += hist[size_t(g) * kBins + j++];
        // edge(j) has `at` points below it, at <= goal < at + hist[j]
        if (at == c.goal || j == kBins) {
          c.cut = c.edge(j);
          c.done = true;
          continue;
        }
        const double lo = c.edge(j), hi = c.edge(j + 1);
        if (lo == c.lo && hi == c.hi) {  // one coordinate value: the nearer edge
          c.cut = c.goal - at <= at + hist[size_t(g) * kBins + j] - c.goal ? lo : hi;
          c.done = true;
          continue;
        }
        c.lo = lo;
        c.hi = hi;
        c.below = at;
        c.cut = lo;
      }
    }
    // The next level.
    std::vector<Group> next;
    std::vector<int32_t> low(static_cast<size_t>(ng)), high(static_cast<size_t>(ng));
    for (int g = 0; g < ng; ++g) {
      const Group G = groups[g];
      const int k = G.b - G.a;
      low[g] = int32_t(next.size());
      if (k < 2) {
        next.push_back(G);
        high[g] = low[g];
        continue;
      }
      next.push_back({G.a, G.a + k / 2});
      high[g] = int32_t(next.size());
      next.push_back({G.a + k / 2, G.b});
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < np; ++i) {
      const int g = gid[i];
      const Search& c = cut[g];
      gid[i] = groups[g].b - groups[g].a < 2 ? low[g] : pt[i][c.dim] < c.cut ? low[g] : high[g];
    }
    groups.swap(next);
  }
  std::vector<std::vector<int>> owner(xyz.size());
  int64_t i = 0;
  for (size_t s = 0; s < xyz.size(); ++s) {
    owner[s].resize(size_t(n[s]));
    for (int64_t j = 0; j < n[s]; ++j, ++i) owner[s][j] = groups[gid[i]].a;
  }
  return owner;
}

Route make_route(MPI_Comm comm, const std::vector<int>& owner) {
  int size = 1;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  Route r;
  r.send_count.assign(size_t(size), 0);
  for (int o : owner) ++r.send_count[o];
  r.send_displ.assign(size_t(size), 0);
  for (int q = 1; q < size; ++q) r.send_displ[q] = r.send_displ[q - 1] + r.send_count[q - 1];
  r.order.resize(owner.size());
  {
    std::vector<int> at(r.send_displ);
    for (size_t i = 0; i < owner.size(); ++i) r.order[size_t(at[owner[i]]++)] = int64_t(i);
  }
  r.recv_count.assign(size_t(size), 0);
  check(MPI_Alltoall(r.send_count.data(), 1, MPI_INT, r.recv_count.data(), 1, MPI_INT, comm), "MPI_Alltoall");
  r.recv_displ.assign(size_t(size), 0);
  int64_t total = 0;
  for (int q = 0; q < size; ++q) {
    r.recv_displ[q] = int(total);
    total += r.recv_count[q];
  }
  r.nrecv = total;
  return r;
}

namespace {

// Counts and displacements of a route side scaled by width, checked against int.
std::vector<int> scaled(const std::vector<int>& v, int width) {
  std::vector<int> s(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t x = int64_t(v[i]) * width;
    require(x <= std::numeric_limits<int>::max(), GPUFMM_ERROR_INVALID_ARGUMENT, "a rank holds more than 2^31 ",
            "values to send or receive in one exchange: use more ranks");
    s[i] = int(x);
  }
  return s;
}

// One rank: the route is a permutation of the rank's own points (the
// identity for RCB's single group); no MPI transfer.
bool local_only(const Route& r) { return r.send_count.size() == 1; }

// out[k] = in[order[k]] (pack) or out[order[k]] = in[k] (unpack), `width`
// doubles per point, over the host's threads.
void permute(const std::vector<int64_t>& order, const double* in, double* out, int width, bool pack) {
  const int64_t n = int64_t(order.size());
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = order[size_t(k)];
    for (int d = 0; d < width; ++d) {
      if (pack)
        out[k * width + d] = in[i * width + d];
      else
        out[i * width + d] = in[k * width + d];
    }
  }
}

}  // namespace

double* grown(std::vector<double>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

void route_forward(MPI_Comm comm, const Route& r, const double* local, double* owned, int width,
                   std::vector<double>& scratch) {
  if (local_only(r)) {
    permute(r.order, local, owned, width, true);
    return;
  }
  double* buf = grown(scratch, r.order.size() * size_t(width));
  permute(r.order, local, buf, width, true);
  const auto sc = scaled(r.send_count, width), sd = scaled(r.send_displ, width);
  const auto rc = scaled(r.recv_count, width), rd = scaled(r.recv_displ, width);
  check(MPI_Alltoallv(buf, sc.data(), sd.data(), MPI_DOUBLE, owned, rc.data(), rd.data(), MPI_DOUBLE, comm),
        "MPI_Alltoallv");
}

void route_back(MPI_Comm comm, const Route& r, const double* owned, double* local, int width,
                std::vector<double>& scratch) {
  if (local_only(r)) {
    permute(r.order, owned, local, width, false);
    return;
  }
  double* buf = grown(scratch, r.order.size() * size_t(width));
  const auto sc = scaled(r.send_count, width), sd = scaled(r.send_displ, width);
  const auto rc = scaled(r.recv_count, width), rd = scaled(r.recv_displ, width);
  check(MPI_Alltoallv(owned, rc.data(), rd.data(), MPI_DOUBLE, buf, sc.data(), sd.data(), MPI_DOUBLE, comm),
        "MPI_Alltoallv");
  permute(r.order, buf, local, width, false);
}

}  // namespace mpi
}  // namespace gpufmm
