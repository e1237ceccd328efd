// Errors across MPI ranks (collective.hpp).
#include "mpi/collective.hpp"

#include <algorithm>
#include <cstring>
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

void check_comm(MPI_Comm comm) {
  int flag = 0;
  check(MPI_Initialized(&flag), "MPI_Initialized");
  require(flag != 0, GPUFMM_ERROR_INVALID_ARGUMENT, "MPI is not initialized: call MPI_Init first");
  check(MPI_Finalized(&flag), "MPI_Finalized");
  require(flag == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "MPI is finalized");
  require(comm != MPI_COMM_NULL, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'comm' is MPI_COMM_NULL");
  check(MPI_Comm_test_inter(comm, &flag), "MPI_Comm_test_inter");
  require(flag == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "argument 'comm' is an intercommunicator");
}

void agree_options(MPI_Comm comm, const std::vector<std::pair<const char*, double>>& fields) {
  std::vector<double> v(fields.size()), root(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) v[i] = root[i] = fields[i].second;
  check(MPI_Bcast(root.data(), int(root.size()), MPI_DOUBLE, 0, comm), "MPI_Bcast (options)");
  collective(comm, [&] {
    for (size_t i = 0; i < v.size(); ++i)
      require(std::memcmp(&v[i], &root[i], sizeof(double)) == 0, GPUFMM_ERROR_INVALID_ARGUMENT, "options field '",
              fields[i].first, "' differs from rank 0's (", v[i], " against ", root[i],
              "): every rank passes the same options");
  });
}

void get_ranges(void* dst, const std::vector<int64_t>& begin, const std::vector<int64_t>& end, int64_t unit,
                int target, MPI_Win win) {
  constexpr int64_t kPiece = int64_t(1) << 30;
  char* d = static_cast<char*>(dst);
  std::vector<MPI_Request> req;
  for (size_t i = 0; i < begin.size(); ++i)
    for (int64_t at = begin[i] * unit, stop = end[i] * unit; at < stop; at += kPiece) {
      const int n = int(std::min(kPiece, stop - at));
      req.push_back(MPI_REQUEST_NULL);
      check(MPI_Rget(d, n, MPI_BYTE, target, MPI_Aint(at), n, MPI_BYTE, win, &req.back()), "MPI_Rget");
      d += n;
    }
  check(MPI_Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE), "MPI_Waitall (MPI_Rget)");
}

}  // namespace mpi
}  // namespace gpufmm
