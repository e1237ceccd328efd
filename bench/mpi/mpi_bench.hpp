// Shared by the MPI benchmark drivers: reductions of one value over the
// ranks of MPI_COMM_WORLD (every rank gets the result).
#pragma once

#include <mpi.h>

namespace bench {

inline double max_over_ranks(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

inline double mean_over_ranks(double v) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return v / size;
}

}  // namespace bench
