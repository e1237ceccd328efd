!> gpufmm_mpi - the parts of gpufmm that run across MPI ranks, for Fortran
!> (library gpufmm_mpi_fortran; the C header is gpufmm_mpi.h; user guide
!> docs/treecode_mpi.md).
!>
!> The communicator is an integer handle: the `comm` of `use mpi` (or of
!> mpif.h), or `comm%MPI_VAL` of mpi_f08's type(MPI_Comm). This module needs
!> no MPI Fortran module to build.
!>
!> gpufmm_treecode_plan_create_mpi builds a treecode plan over the ranks of
!> comm: every rank passes its own points, in any distribution; the plan is
!> then used with gpufmm_treecode_evaluate (each rank: its own charges, its
!> own targets' pot and grad, in its own order), gpufmm_treecode_plan_info
!> (the rank's view, with the communication volume and times) and
!> gpufmm_treecode_plan_destroy of gpufmm_treecode_mod. The create, the
!> evaluate and the destroy are collective: every rank calls them, in the
!> same order; an error on any rank is returned on every rank.
!>
!> gpufmm_fft_plan_create_mpi builds an FMM-FFT plan over the ranks of comm
!> (docs/fmmfft_mpi.md): the transform of N elements block-partitioned in
!> natural order, N / G on each rank; it is then used with
!> gpufmm_fft_execute_host, gpufmm_fft_plan_info and gpufmm_fft_plan_destroy
!> of module gpufmm_fft (collective but the info).
module gpufmm_mpi
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_double, c_ptr, c_null_ptr
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use gpufmm_core
  use gpufmm_treecode_mod, only: gpufmm_treecode_options, gpufmm_treecode_plan
  use gpufmm_fft, only: gpufmm_fft_options, gpufmm_fft_plan
  implicit none
  private

  public :: gpufmm_treecode_plan_create_mpi, gpufmm_fft_plan_create_mpi

  interface
     function c_plan_create_mpi(ctx, comm, opt, nsrc, sources, ntrg, targets, plan) &
          bind(c, name='gpufmm_treecode_plan_create_mpi_f') result(s)
       import :: c_int, c_int64_t, c_double, c_ptr, gpufmm_treecode_options
       type(c_ptr), value :: ctx
       integer(c_int), value :: comm
       type(gpufmm_treecode_options), intent(in) :: opt
       integer(c_int64_t), value :: nsrc, ntrg
       real(c_double), intent(in) :: sources(*)
       real(c_double), intent(in), optional :: targets(*)
       type(c_ptr), intent(out) :: plan
       integer(c_int) :: s
     end function c_plan_create_mpi
     function c_fft_plan_create_mpi(ctx, comm, opt, plan) bind(c, name='gpufmm_fft_plan_create_mpi_f') result(s)
       import :: c_int, c_ptr, gpufmm_fft_options
       type(c_ptr), value :: ctx
       integer(c_int), value :: comm
       type(gpufmm_fft_options), intent(in) :: opt
       type(c_ptr), intent(out) :: plan
       integer(c_int) :: s
     end function c_fft_plan_create_mpi
  end interface

contains

  !> Builds a treecode plan over the ranks of comm from this rank's
  !> sources(3, nsrc) and, when present on every rank, targets(3, ntrg)
  !> (absent on every rank: at the sources). A rank may have no points
  !> (arrays of extent 0). Every rank passes the same opts; the parameters
  !> chosen from eps are rank 0's.
  !> Errors (returned on every rank): those of gpufmm_treecode_plan_create,
  !> an options field that differs from rank 0's (INVALID_ARGUMENT, named),
  !> GPUFMM_ERROR_COMMUNICATION (an MPI call failed). A shape error
  !> (SIZE_MISMATCH here) fails the other ranks with INVALID_ARGUMENT naming
  !> this rank.
  subroutine gpufmm_treecode_plan_create_mpi(ctx, comm, opts, sources, plan, targets, status)
    type(gpufmm_context), intent(in) :: ctx
    integer, intent(in) :: comm
    type(gpufmm_treecode_options), intent(in) :: opts
    real(real64), intent(in) :: sources(:, :)
    type(gpufmm_treecode_plan), intent(inout) :: plan
    real(real64), intent(in), optional :: targets(:, :)
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_treecode_plan_create_mpi'
    character(len=:), allocatable :: msg
    type(c_ptr) :: p
    integer(int64) :: nsrc, ntrg
    integer(c_int) :: s
    msg = gpufmm_points_error(sources, targets)
    nsrc = size(sources, 2, kind=int64)
    ntrg = 0
    if (present(targets)) ntrg = size(targets, 2, kind=int64)
    ! The call is collective: a bad shape still takes part (with a count the
    ! library refuses, so that every rank fails), then reports its own error.
    if (len(msg) > 0) nsrc = -1
    p = c_null_ptr
    s = c_plan_create_mpi(gpufmm_context_c_ptr(ctx), int(comm, c_int), opts, nsrc, sources, ntrg, targets, p)
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    if (s == GPUFMM_SUCCESS) call gpufmm_handle_set(plan, p)
    call gpufmm_check_status(s, status, where)
  end subroutine gpufmm_treecode_plan_create_mpi

  !> Builds an FMM-FFT plan over the ranks of comm (G, a power of two, CPU
  !> contexts) for opts%n elements in all; every rank passes the same
  !> opts. Transforms then take each rank's opts%n / G elements.
  !> Errors (returned on every rank): those of gpufmm_fft_plan_create, an
  !> options field that differs from rank 0's (INVALID_ARGUMENT, named),
  !> NOT_SUPPORTED (a GPU context, G not a power of two),
  !> GPUFMM_ERROR_COMMUNICATION (an MPI call failed).
  subroutine gpufmm_fft_plan_create_mpi(ctx, comm, opts, plan, status)
    type(gpufmm_context), intent(in) :: ctx
    integer, intent(in) :: comm
    type(gpufmm_fft_options), intent(in) :: opts
    type(gpufmm_fft_plan), intent(inout) :: plan
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(c_int) :: s
    p = c_null_ptr
    s = c_fft_plan_create_mpi(gpufmm_context_c_ptr(ctx), int(comm, c_int), opts, p)
    if (s == GPUFMM_SUCCESS) call gpufmm_handle_set(plan, p)
    call gpufmm_check_status(s, status, 'gpufmm_fft_plan_create_mpi')
  end subroutine gpufmm_fft_plan_create_mpi

end module gpufmm_mpi
