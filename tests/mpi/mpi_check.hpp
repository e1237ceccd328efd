// Shared by the MPI test programs (run by CTest under mpirun, label mpi):
// the rank and size, collective test bookkeeping (a rank's failure fails
// the test on every rank; rank 0 prints the result) and a seed drawn on
// rank 0 for every rank.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

namespace mpi_check {

inline int rank = 0, size = 1;
inline int failures = 0, failures_before = 0;  // of the program; at the start of the test
inline std::string test_name;

// Sets rank and size (after MPI_Init).
inline void init() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
}

inline void expect(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "[rank %d] FAIL %s: %s\n", rank, test_name.c_str(), what.c_str());
}

// Ends a test: every rank learns whether any failed.
inline bool finish_test() {
  int f = failures - failures_before, all = 0;
  failures_before = failures;
  MPI_Allreduce(&f, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("[%s] %s\n", all == 0 ? "  OK  " : "FAILED", test_name.c_str());
  std::fflush(stdout);
  return all == 0;
}

inline uint64_t shared_seed() {
  uint64_t s = 0;
  if (rank == 0) {
    std::random_device rd;
    s = (uint64_t(rd()) << 32) ^ rd();
  }
  MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return s;
}

// The program's end: every rank's failures summed, printed by rank 0; the
// exit code (after MPI_Finalize).
inline int finish_program() {
  int f = failures, all = 0;
  MPI_Allreduce(&f, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d failure(s)\n", all == 0 ? "PASSED" : "FAILED", all);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}

}  // namespace mpi_check
