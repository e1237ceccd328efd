! fft_mpi - the FMM-accelerated FFT across MPI ranks from Fortran (module
! gpufmm_mpi, with `use mpi`; mpi_f08 programs pass comm%MPI_VAL).
!
! N complex numbers are block-partitioned over the G ranks in natural
! order: rank g holds x(g N/G + 1 : (g+1) N/G) and gets the same block of
! the forward DFT, X(k) = sum_n x(n) exp(-2 pi i (n-1)(k-1) / N), in
! complex128 to eps = 1e-12. Each rank checks 8 of its outputs against a
! direct DFT over the whole input (every rank makes the same input, for
! the check); rank 0 prints the parameters and what each rank sent.
!
! Usage: mpirun -np G fft_mpi_f [N]   (also from GPUFMM_EXAMPLE_N; default
! 2**20). G must be a power of two. Every rank runs on the CPU. Stops with
! a non-zero code if the error exceeds eps.
program fft_mpi
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use, intrinsic :: iso_c_binding, only: c_double_complex
  use mpi
  use gpufmm
  use gpufmm_mpi
  implicit none

  integer, parameter :: dp = real64, nsample = 8
  real(dp), parameter :: eps = 1e-12_dp

  type(gpufmm_context) :: ctx
  type(gpufmm_fft_options) :: opts
  type(gpufmm_fft_plan) :: plan
  type(gpufmm_fft_info) :: info
  complex(c_double_complex), allocatable :: x(:), xl(:), yl(:)
  real(dp), allocatable :: re(:), im(:)
  real(dp) :: sums(2)
  complex(c_double_complex) :: ref
  integer :: ierr, rank, nranks, ns, i
  integer(int64) :: n, nl, k
  integer, allocatable :: seed(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  n = problem_size()
  nl = n / nranks

  ! ---- the same input on every rank (one seed); this rank's block
  call random_seed(size=ns)
  allocate (seed(ns))
  seed = 20261127
  call random_seed(put=seed)
  allocate (re(n), im(n))
  call random_number(re)
  call random_number(im)
  x = cmplx(2 * re - 1, 2 * im - 1, kind=c_double_complex)
  xl = x(rank * nl + 1:(rank + 1) * nl)
  allocate (yl(nl))

  ! ---- the plan over all ranks (collective), one transform (collective)
  call gpufmm_context_create(ctx, GPUFMM_DEVICE_CPU)
  call gpufmm_fft_options_init(opts)
  opts%n = n          ! the global length, the same on every rank
  opts%eps = eps
  call gpufmm_fft_plan_create_mpi(ctx, MPI_COMM_WORLD, opts, plan)
  call gpufmm_fft_execute_host(plan, xl, yl, GPUFMM_FFT_FORWARD)
  info = gpufmm_fft_plan_info(plan)

  ! ---- the check: 8 outputs of this rank's block against the direct DFT
  sums = 0
  do i = 1, nsample
     k = (i - 1) * (nl / nsample) + nl / (2 * nsample) + 1     ! 1-based in the block
     ref = direct_dft(x, rank * nl + k - 1)
     sums = sums + [abs(yl(k) - ref)**2, abs(ref)**2]
  end do
  call MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)

  if (rank == 0) then
     print '(a, i0, a, i0, a, i0, a, i0, a, i0, a, i0, a, i0, a, i0)', 'FMM-FFT of N = ', n, ' over ', nranks, &
          ' rank(s), ', info%n_local, ' each: P = ', info%p, ', M_L = ', info%ml, ', L = ', info%levels, &
          ', B = ', info%base, ', Q = ', info%q
     print '(a, i0, a, i0, a, i0, a, i0, a)', 'rank 0 sent ', info%sent_input, ' (input halo) + ', info%sent_multipoles, &
          ' (multipole halos) + ', info%sent_base, ' (base level) reals (messages: ', info%messages, &
          '; 1 MPI, 2 NCCL)'
     print '(a, es9.2, a, es7.1, a)', 'relative L2 error at the sampled outputs: ', sqrt(sums(1) / sums(2)), &
          ' (eps ', eps, ')'
  end if

  call gpufmm_fft_plan_destroy(plan)   ! collective, before MPI_Finalize
  call gpufmm_context_destroy(ctx)
  call MPI_Finalize(ierr)
  if (sqrt(sums(1) / sums(2)) > eps) error stop 'fft_mpi: error above eps'

contains

  !> Output k (0-based) of the forward DFT of x, with the twiddle of the
  !> exact index j k mod N.
  complex(c_double_complex) function direct_dft(x, k) result(s)
    complex(c_double_complex), intent(in) :: x(:)
    integer(int64), intent(in) :: k
    real(dp), parameter :: two_pi = 6.283185307179586476925286766559_dp
    integer(int64) :: j, idx
    s = 0
    idx = 0
    do j = 1, size(x, kind=int64)
       s = s + x(j) * exp(cmplx(0, -two_pi * real(idx, dp) / real(size(x), dp), kind=c_double_complex))
       idx = mod(idx + k, size(x, kind=int64))
    end do
  end function direct_dft

  !> N from the first command-line argument, else GPUFMM_EXAMPLE_N, else 2**20.
  integer(int64) function problem_size() result(m)
    character(len=32) :: arg
    integer :: length, ios
    m = 2_int64**20
    call get_environment_variable('GPUFMM_EXAMPLE_N', arg, length)
    if (length > 0) read (arg, *, iostat=ios) m
    if (command_argument_count() >= 1) then
       call get_command_argument(1, arg)
       read (arg, *, iostat=ios) m
    end if
    if (mod(m, int(nranks, int64)) /= 0) error stop 'usage: mpirun -np G fft_mpi_f [N, a multiple of G]'
  end function problem_size

end program fft_mpi
