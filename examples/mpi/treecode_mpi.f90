! treecode_mpi - the treecode across MPI ranks from Fortran (module
! gpufmm_mpi, with `use mpi`; mpi_f08 programs pass comm%MPI_VAL).
!
! Every rank makes its own random sources in the unit cube (spread over the
! whole cube: the library partitions them) with charges in (-1, 1), and
! passes them to gpufmm_treecode_plan_create_mpi; gpufmm_treecode_evaluate
! returns each rank the Coulomb potential and gradient at its own points,
! in its own order. Each rank checks 50 of its points against the direct
! sum over all sources (gathered for the check only); rank 0 prints the
! parameters, the phase times and the sizes of its locally essential tree.
!
! Usage: mpirun -np P treecode_mpi_f [N]   (N over all ranks, also from
! GPUFMM_EXAMPLE_N; default 200000). Each rank runs on the first GPU if
! there is one, else on the CPU. Stops with a non-zero code if the error
! exceeds eps.
program treecode_mpi
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use mpi
  use gpufmm
  use gpufmm_mpi
  implicit none

  integer, parameter :: dp = real64, nsample = 50
  real(dp), parameter :: eps = 1e-6_dp

  type(gpufmm_context) :: ctx
  type(gpufmm_treecode_options) :: opts
  type(gpufmm_treecode_plan) :: plan
  type(gpufmm_treecode_info) :: info
  real(dp), allocatable :: src(:, :), q(:), pot(:), grad(:, :), all_src(:, :), all_q(:)
  real(dp), allocatable :: ysample(:, :), ref_pot(:), ref_grad(:, :)
  integer, allocatable :: counts(:), displs(:), sample(:)
  real(dp) :: sums(4)
  integer :: ierr, rank, nranks, ntotal, n, i, ns
  integer, allocatable :: seed(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  ntotal = problem_size()
  n = ntotal / nranks
  if (rank < mod(ntotal, nranks)) n = n + 1

  ! ---- this rank's points (a seed of its own)
  call random_seed(size=ns)
  allocate (seed(ns))
  seed = 4242 + 31 * rank
  call random_seed(put=seed)
  allocate (src(3, n), q(n), pot(n), grad(3, n))
  call random_number(src)
  call random_number(q)
  q = 2 * q - 1

  ! ---- the plan over all ranks (collective), one evaluate (collective)
  call gpufmm_context_create(ctx, GPUFMM_DEVICE_DEFAULT)
  call gpufmm_treecode_options_init(opts)          ! Laplace (Coulomb 1/r), the defaults
  opts%eps = eps
  call gpufmm_treecode_plan_create_mpi(ctx, MPI_COMM_WORLD, opts, src, plan)  ! at the sources
  call gpufmm_treecode_evaluate(plan, q, pot=pot, grad=grad)
  info = gpufmm_treecode_plan_info(plan)

  ! ---- the check: every source gathered, the direct sum at sampled points
  allocate (counts(nranks), displs(nranks))
  call MPI_Allgather(n, 1, MPI_INTEGER, counts, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  displs = [(sum(counts(1:i - 1)), i = 1, nranks)]
  allocate (all_q(sum(counts)), all_src(3, sum(counts)))
  call MPI_Allgatherv(q, n, MPI_DOUBLE_PRECISION, all_q, counts, displs, MPI_DOUBLE_PRECISION, &
       MPI_COMM_WORLD, ierr)
  call MPI_Allgatherv(src, 3 * n, MPI_DOUBLE_PRECISION, all_src, 3 * counts, 3 * displs, &
       MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  allocate (sample(min(nsample, n)))
  sample = [(1 + int(int(i - 1, int64) * n / size(sample)), i = 1, size(sample))]
  allocate (ysample(3, size(sample)), ref_pot(size(sample)), ref_grad(3, size(sample)))
  ysample = src(:, sample)
  ! The direct sum on this rank's context: the sampled points are sources
  ! too, so they get no self term, as in the treecode.
  call gpufmm_direct(ctx, opts%kernel, all_src, all_q, ysample, ref_pot, ref_grad)
  sums = [sum((pot(sample) - ref_pot)**2), sum(ref_pot**2), sum((grad(:, sample) - ref_grad)**2), &
       sum(ref_grad**2)]
  call MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)

  if (rank == 0) then
     print '(a, i0, a, i0, a, f0.2, a, i0)', 'treecode over ', nranks, ' rank(s), N = ', ntotal, &
          ': theta ', info%theta, ', degree ', info%degree
     print '(a, i0, a, i0, a, i0, a, i0, a)', 'rank 0 owns ', info%nsrc_owned, ' sources; from other ranks: ', &
          info%let_boxes, ' box arrays, ', info%let_clusters, ' clusters, ', info%let_points, ' points'
     print '(a, f0.3, a, f0.3, a, f0.3, a, f0.3, a)', 'create ', info%plan_seconds, ' s (RCB ', info%t_rcb, &
          ', LET tree ', info%t_let_tree, ', LET data ', info%t_let_data, ')'
     print '(a, f0.4, a, f0.4, a, f0.4, a)', 'evaluate ', info%t_total, ' s (routes ', info%t_route, &
          ', exchange ', info%t_exchange, ')'
     print '(a, es9.2, a, es9.2, a, es7.1, a)', 'relative L2 error: pot ', sqrt(sums(1) / sums(2)), &
          ', grad ', sqrt(sums(3) / sums(4)), ' (eps ', eps, ')'
  end if

  call gpufmm_treecode_plan_destroy(plan)   ! collective, before MPI_Finalize
  call gpufmm_context_destroy(ctx)
  call MPI_Finalize(ierr)
  if (sqrt(sums(1) / sums(2)) > eps .or. sqrt(sums(3) / sums(4)) > eps) error stop 'treecode_mpi: error above eps'

contains

  !> N from the first command-line argument, else GPUFMM_EXAMPLE_N, else 200000.
  integer function problem_size() result(m)
    character(len=32) :: arg
    integer :: length, ios
    m = 200000
    call get_environment_variable('GPUFMM_EXAMPLE_N', arg, length)
    if (length > 0) read (arg, *, iostat=ios) m
    if (command_argument_count() >= 1) then
       call get_command_argument(1, arg)
       read (arg, *, iostat=ios) m
    end if
    if (m < nranks) error stop 'usage: mpirun -np P treecode_mpi_f [N >= P]'
  end function problem_size

end program treecode_mpi
