// Domain decomposition across MPI ranks (issue 16; papers/001 sec. 3.1):
// recursive coordinate bisection of the points of every rank, and the
// routes that move points to their owners and values back.
//
// RCB: the ranks [0, G) are halved recursively, [a, b) into [a, a + k/2) and
// [a + k/2, b) (k = b - a); the points of a group are cut by a plane normal
// to the longest side of their bounding box such that the lower part holds
// (k/2)/k of them. The plane is found by histograms: 64 bins over the
// interval that holds the cut, summed over the ranks (MPI_Allreduce), the
// interval narrowed to the bin where the count crosses the goal, until a
// bin edge meets it exactly or the interval holds points of one coordinate
// only (ties then decide: the edge nearer the goal). Every group of a level
// is cut in the same passes. A point goes to the lower part when its
// coordinate is below the cut. The owner of a point is the rank its group
// ends as.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace gpufmm {
namespace mpi {

// Points of one rank: sets of xyz (3 x n doubles each); all sets of all
// ranks are partitioned together, each point with weight one. Returns the
// owner of each point, per set. Collective.
std::vector<std::vector<int>> rcb_owners(MPI_Comm comm, const std::vector<const double*>& xyz,
                                         const std::vector<int64_t>& n);

// The way of a rank's points to their owners (and of values back).
// Received points are ordered by sending rank, each rank's in its order.
struct Route {
  std::vector<int> send_count, send_displ, recv_count, recv_displ;  // in points
  std::vector<int64_t> order;  // local point indices in sending order
  int64_t nrecv = 0;
};
Route make_route(MPI_Comm comm, const std::vector<int>& owner);

// Moves `width` doubles per point: forward from the local points (local
// order) to the owned points (received order); back from the owned points
// to the local points. `scratch` holds the packed values (grown as needed,
// kept by the caller so that repeated evaluates reuse its pages); the
// packing runs on the host's OpenMP threads.
void route_forward(MPI_Comm comm, const Route& r, const double* local, double* owned, int width,
                   std::vector<double>& scratch);
void route_back(MPI_Comm comm, const Route& r, const double* owned, double* local, int width,
                std::vector<double>& scratch);

// v grown (never shrunk) to hold at least n values; its data. Buffers kept
// from one call to the next keep their pages.
double* grown(std::vector<double>& v, size_t n);

}  // namespace mpi
}  // namespace gpufmm
