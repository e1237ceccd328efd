! laplace_fmm - the Laplace FMM from Fortran: plan once, evaluate many times.
!
! N random sources in the unit cube carry random charges. The FMM computes
! the potential and its gradient at the sources (no self term) with a
! requested relative L2 error eps = 1e-6. The plan (octree, lists,
! translation data) is built once; two evaluations with different charges
! reuse it, as an iterative solver would. About 200 of the points are then
! checked against the direct sum, computed at those points only.
!
! Usage: laplace_fmm_f [N]   (N also from the environment variable
! GPUFMM_EXAMPLE_N; default 100000). Runs on the first GPU if there is one,
! else on the CPU backend. Stops with a non-zero exit code if the error
! exceeds eps.
program laplace_fmm
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use gpufmm
  implicit none

  integer, parameter :: dp = real64
  real(dp), parameter :: eps = 1e-6_dp
  integer, parameter :: nsample_max = 200

  type(gpufmm_context) :: ctx
  type(gpufmm_device_info) :: dev
  type(gpufmm_laplace_options) :: opts
  type(gpufmm_laplace_plan) :: plan
  type(gpufmm_laplace_info) :: info
  real(dp), allocatable :: src(:, :), q(:), pot(:), grad(:, :)
  real(dp), allocatable :: ysample(:, :), ref_pot(:), ref_grad(:, :)
  integer, allocatable :: sample(:)
  real(dp) :: err_pot, err_grad, worst
  integer :: n, nsample, i, round

  n = problem_size()
  call gpufmm_context_create(ctx, GPUFMM_DEVICE_DEFAULT)  ! no status: errors stop the program
  dev = gpufmm_context_device_info(ctx)
  print '(a, i0, a, a)', 'Laplace FMM, N = ', n, ' points, on ', trim(dev%name)

  allocate (src(3, n), q(n), pot(n), grad(3, n))
  call random_number(src)                        ! uniform in the unit cube

  ! ---- plan once
  call gpufmm_laplace_options_init(opts)
  opts%eps = eps
  call gpufmm_laplace_plan_create(ctx, opts, src, plan)  ! targets absent: at the sources
  info = gpufmm_laplace_plan_info(plan)
  print '(a, i0, a, i0, a, i0, a, f0.3, a)', 'plan: p = ', info%p, ', l_max = ', info%l_max, &
       ', ', info%source_boxes, ' boxes, built in ', info%plan_seconds, ' s'

  ! ---- the sample of targets checked against the direct sum
  nsample = min(nsample_max, n)
  allocate (sample(nsample), ysample(3, nsample), ref_pot(nsample), ref_grad(3, nsample))
  sample = [(1 + int(int(i - 1, int64) * n / nsample), i = 1, nsample)]
  ysample = src(:, sample)

  worst = 0
  do round = 1, 2
     ! ---- new charges, same plan
     call random_number(q)
     q = 2 * q - 1
     call gpufmm_laplace_evaluate(plan, charges=q, pot=pot, grad=grad)
     info = gpufmm_laplace_plan_info(plan)

     ! ---- direct sum at the sampled points only (they are sources too, so
     !      they get no self term, as in the FMM)
     call gpufmm_laplace_direct(ctx, src, charges=q, targets=ysample, pot=ref_pot, grad=ref_grad)
     err_pot = sqrt(sum((pot(sample) - ref_pot)**2) / sum(ref_pot**2))
     err_grad = sqrt(sum((grad(:, sample) - ref_grad)**2) / sum(ref_grad**2))
     worst = max(worst, err_pot, err_grad)
     print '(a, i0, a, f0.4, a, es9.2, a, es9.2, a, i0, a)', 'evaluate ', round, ': ', info%t_total, &
          ' s; relative L2 error pot ', err_pot, ', grad ', err_grad, ' (', nsample, ' targets)'
  end do
  print '(a, 6(f0.4, a))', 'last evaluate, seconds: S exp ', info%t_p2m, ', up trans ', info%t_upward, &
       ', down trans ', info%t_downward, ', R eval ', info%t_l2p, ', sparse ', info%t_p2p, &
       ', total ', info%t_total, ''

  call gpufmm_laplace_plan_destroy(plan)                  ! plans first,
  call gpufmm_context_destroy(ctx)                        ! then the context
  deallocate (src, q, pot, grad, sample, ysample, ref_pot, ref_grad)
  if (worst > eps) error stop 'laplace_fmm: error above eps'
  print '(a)', 'OK'

contains

  !> N from the first command-line argument, else GPUFMM_EXAMPLE_N, else 100000.
  integer function problem_size() result(n)
    character(len=32) :: arg
    integer :: length, ios, m
    n = 100000
    call get_environment_variable('GPUFMM_EXAMPLE_N', arg, length)
    if (length > 0) then
       read (arg, *, iostat=ios) m
       if (ios /= 0) error stop 'laplace_fmm: GPUFMM_EXAMPLE_N is not an integer'
       n = m
    end if
    if (command_argument_count() >= 1) then
       call get_command_argument(1, arg)
       read (arg, *, iostat=ios) m
       if (ios /= 0) error stop 'usage: laplace_fmm_f [N]'
       n = m
    end if
    if (n < 1) error stop 'laplace_fmm: N must be positive'
  end function problem_size

end program laplace_fmm
