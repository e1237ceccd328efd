// Errors across MPI ranks (collective.hpp).
#include "mpi/collective.hpp"

#include <vector>

namespace gpufmm {
namespace mpi {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) len = 0;
  fail(GPUFMM_ERROR_COMMUNICATION, call, " failed: ", len > 0 ? std::string(s, size_t(len)) : "unknown MPI error");
}

void agree(MPI_Comm comm, gpufmm_status_t st, const std::string& message, bool agreed) {
  int rank = 0, size = 1;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  // A rank's own error first, then one agreed before, lowest rank first.
  const int key = st == GPUFMM_SUCCESS ? 2 * size : agreed ? size + rank : rank;
  int first = 0;
  check(MPI_Allreduce(&key, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce (error agreement)");
  if (first == 2 * size) return;
  const int root = first % size;
  const bool own = first < size;
  int head[2] = {int(st), int(message.size())};
  check(MPI_Bcast(head, 2, MPI_INT, root, comm), "MPI_Bcast (error agreement)");
  std::vector<char> text(message.begin(), message.end());
  text.resize(size_t(head[1]));
  if (head[1] > 0) check(MPI_Bcast(text.data(), head[1], MPI_CHAR, root, comm), "MPI_Bcast (error agreement)");
  std::string m(text.begin(), text.end());
  if (own) m = "rank " + std::to_string(root) + ": " + m;
  throw AgreedError(gpufmm_status_t(head[0]), m);
}

}  // namespace mpi
}  // namespace gpufmm
