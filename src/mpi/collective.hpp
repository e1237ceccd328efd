// Errors across MPI ranks (issue 16, "an error on one rank reported on every
// rank"): an MPI call that fails becomes a gpufmm::Error (status
// GPUFMM_ERROR_COMMUNICATION, naming the call), and a step every rank runs
// ends with an agreement: when it failed on any rank, every rank throws the
// same error, that of the lowest rank where it first failed, as
// "rank r: message". No rank is left waiting in a later collective call.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace gpufmm {
namespace mpi {

// Throws COMMUNICATION "MPI_Xxx failed: <MPI's error string>" unless rc is
// MPI_SUCCESS (the library's communicators and windows return errors
// instead of aborting: MPI_ERRORS_RETURN).
void check(int rc, const char* call);

// An error every rank already agreed on (thrown by agree).
class AgreedError : public Error {
 public:
  using Error::Error;
};

// Collective over comm: returns when st is SUCCESS on every rank, else
// throws AgreedError on every rank. `agreed` marks an error that came from
// an earlier agreement (it loses to a rank's own error).
void agree(MPI_Comm comm, gpufmm_status_t st, const std::string& message, bool agreed = false);

// Runs f and agrees on its outcome (collective over comm). f must not make
// a collective call after anything that can throw: a rank that threw would
// be in the agreement while the others are in that call.
template <class F>
void collective(MPI_Comm comm, F&& f) {
  gpufmm_status_t st = GPUFMM_SUCCESS;
  std::string msg;
  bool agreed = false;
  try {
    f();
  } catch (const AgreedError& e) {
    st = e.status();
    msg = e.what();
    agreed = true;
  } catch (const Error& e) {
    st = e.status();
    msg = e.what();
  } catch (const std::bad_alloc&) {
    st = GPUFMM_ERROR_OUT_OF_MEMORY;
    msg = "host memory allocation failed (std::bad_alloc)";
  } catch (const std::exception& e) {
    st = GPUFMM_ERROR_INTERNAL;
    msg = std::string("internal error: ") + e.what();
  }
  agree(comm, st, msg, agreed);
}

// Throws INVALID_ARGUMENT (local, before any collective call) unless MPI
// is initialized and not finalized and comm is an intracommunicator.
void check_comm(MPI_Comm comm);

// Collective: the named values (a plan's options) equal to rank 0's on
// every rank, else INVALID_ARGUMENT on every rank naming the first field
// that differs ("options field 'x' differs from rank 0's").
void agree_options(MPI_Comm comm, const std::vector<std::pair<const char*, double>>& fields);

// Inside a passive-target epoch on win (MPI_Win_lock_all or MPI_Win_lock):
// copies elements [begin[i], end[i]) of rank `target`'s window, an array of
// `unit` bytes per element with displacement unit 1, to their
// concatenation at dst, and returns when the data are there. One
// contiguous MPI_Rget per range (pieces of at most 2^30 bytes), then
// MPI_Waitall. The plain MPI_Get, with an indexed target datatype or per
// range, completed by MPI_Win_unlock_all (or MPI_Win_flush_all) as the
// standard says, is not used: OpenMPI 4.1's osc/ucx returned from those
// before the data of gets of some kilobytes had arrived (in about 40 % of
// runs of two ranks on one host; tests/mpi: check_remote_gets).
void get_ranges(void* dst, const std::vector<int64_t>& begin, const std::vector<int64_t>& end, int64_t unit,
                int target, MPI_Win win);

}  // namespace mpi
}  // namespace gpufmm
