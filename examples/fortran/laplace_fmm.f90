! laplace_fmm - the Laplace FMM from Fortran: plan once, evaluate many times.
!
! N random sources in the unit cube carry random charges. The FMM computes
! the potential and its gradient at the sources (no self term) with a
! requested relative L2 error eps = 1e-6. The plan (octree, lists,
! translation data) is built once; two evaluations with different charges
! reuse it, as an iterative solver would. Each result is then checked
! against the direct sum at K of the N points, computed at those points
! only, and the direct sum is timed for comparison: K = N (the whole direct
! sum) while N * K stays within about 2e12 pairs on a GPU (~3 s on an H100,
! so up to N ~ 1.4e6) and 2e8 on the CPU; else K = that budget / N (at least
! 200) and the time of the whole direct sum is extrapolated from K targets
! (its cost is linear in the number of targets); the output says which.
!
! It prints the requested eps, the backend (the GPU's name, or the CPU's)
! and the number of OpenMP threads of the CPU (OMP_NUM_THREADS; see README,
! "CPU threads"), read with omp_lib: compile it with -fopenmp (gfortran),
! e.g. gfortran -fopenmp laplace_fmm.f90 -I<prefix>/include/gpufmm/fortran
! -L<prefix>/lib -lgpufmm_fortran -lgpufmm -Wl,-rpath,<prefix>/lib.
!
! Usage: laplace_fmm_f [N]   (N also from the environment variable
! GPUFMM_EXAMPLE_N; default 100000). Runs on the first GPU if there is one,
! else on the CPU backend. Stops with a non-zero exit code if the error
! exceeds eps.
program laplace_fmm
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use omp_lib, only: omp_get_max_threads
  use gpufmm
  implicit none

  integer, parameter :: dp = real64
  real(dp), parameter :: eps = 1e-6_dp
  integer, parameter :: nsample_min = 200
  ! Pairs (targets x sources) the timed direct sum may cost: see the header.
  real(dp), parameter :: pairs_gpu = 2e12_dp, pairs_cpu = 2e8_dp

  type(gpufmm_context) :: ctx
  type(gpufmm_device_info) :: dev
  type(gpufmm_laplace_options) :: opts
  type(gpufmm_laplace_plan) :: plan
  type(gpufmm_laplace_info) :: info
  real(dp), allocatable :: src(:, :), q(:), pot(:), grad(:, :)
  real(dp), allocatable :: ysample(:, :), ref_pot(:), ref_grad(:, :)
  integer, allocatable :: sample(:)
  real(dp) :: err_pot, err_grad, worst, t_direct, t_full
  integer :: n, nsample, i, round
  logical :: on_gpu
  character(len=:), allocatable :: how

  n = problem_size()
  call gpufmm_context_create(ctx, GPUFMM_DEVICE_DEFAULT)  ! no status: errors stop the program
  dev = gpufmm_context_device_info(ctx)
  on_gpu = dev%backend == GPUFMM_BACKEND_CUDA
  print '(a, i0, a, a)', 'Laplace FMM, N = ', n, ' points, requested relative L2 error eps = ', fmt_es(eps)
  if (on_gpu) then
     print '(a, i0, 5a, i0)', 'backend: GPU ', dev%device, ', ', trim(dev%name), ' (', &
          itoa(dev%multiprocessors), ' SMs); OpenMP threads of the host CPU: ', omp_get_max_threads()
  else
     print '(2a, a, i0, a, i0, a)', 'backend: CPU, ', trim(dev%name), '; OpenMP threads: ', omp_get_max_threads(), &
          ' (of ', dev%multiprocessors, ' logical cores; OMP_NUM_THREADS sets it)'
  end if

  allocate (src(3, n), q(n), pot(n), grad(3, n))
  call random_number(src)                        ! uniform in the unit cube

  ! ---- plan once
  call gpufmm_laplace_options_init(opts)
  opts%eps = eps
  call gpufmm_laplace_plan_create(ctx, opts, src, plan)  ! targets absent: at the sources
  info = gpufmm_laplace_plan_info(plan)
  if (info%l_max >= 2) then
     print '(a, i0, a, i0, a, i0, 3a)', 'plan: p = ', info%p, ', l_max = ', info%l_max, ', ', &
          info%source_boxes, ' boxes, built in ', fmt(info%plan_seconds, 3), ' s'
  else  ! no box is well separated from another: no expansion at all
     print '(a, i0, a, i0, 3a)', 'plan: p = - (depth ', info%l_max, ': direct sum only), ', &
          info%source_boxes, ' boxes, built in ', fmt(info%plan_seconds, 3), ' s'
  end if

  ! ---- the targets checked against (and timed with) the direct sum
  nsample = int(min(real(n, dp), max(real(nsample_min, dp), merge(pairs_gpu, pairs_cpu, on_gpu) / n)))
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
     t_direct = wall_seconds()
     call gpufmm_laplace_direct(ctx, src, charges=q, targets=ysample, pot=ref_pot, grad=ref_grad)
     t_direct = wall_seconds() - t_direct
     err_pot = sqrt(sum((pot(sample) - ref_pot)**2) / sum(ref_pot**2))
     err_grad = sqrt(sum((grad(:, sample) - ref_grad)**2) / sum(ref_grad**2))
     worst = max(worst, err_pot, err_grad)
     print '(a, i0, 7a, i0, a)', 'evaluate ', round, ': ', fmt(info%t_total, 4), &
          ' s; relative L2 error pot ', fmt_es(err_pot), ', grad ', fmt_es(err_grad), ' (', nsample, ' targets)'
  end do
  print '(12a)', 'last evaluate, seconds: S exp ', fmt(info%t_p2m, 4), ', up trans ', fmt(info%t_upward, 4), &
       ', down trans ', fmt(info%t_downward, 4), ', R eval ', fmt(info%t_l2p, 4), ', sparse ', &
       fmt(info%t_p2p, 4), ', total ', fmt(info%t_total, 4)

  ! ---- the direct sum of the last round, for comparison
  if (nsample == n) then
     t_full = t_direct
     print '(a, i0, 3a)', 'direct sum (double, pot + grad), all ', n, ' targets: ', fmt(t_direct, 4), &
          ' s (measured)'
  else
     t_full = t_direct * n / nsample
     print '(a, i0, a, i0, 3a)', 'direct sum (double, pot + grad) at ', nsample, ' of ', n, ' targets: ', &
          fmt(t_direct, 4), ' s (measured)'
     print '(a, i0, 5a)', '  all ', n, ' targets: ~', fmt(t_full, 2), ' s (extrapolated: x N/', &
          itoa(nsample), ', not measured)'
  end if
  how = '(' // trim(merge('measured    ', 'extrapolated', nsample == n)) // '; plan time not included)'
  if (info%t_total > 0 .and. t_full >= info%t_total) then
     print '(4a)', 'the evaluate is ', fmt(t_full / info%t_total, 1), 'x faster than the direct sum ', how
  else if (t_full > 0) then
     print '(4a)', 'the direct sum is ', fmt(info%t_total / t_full, 1), 'x faster than the evaluate at this N ', how
  end if

  call gpufmm_laplace_plan_destroy(plan)                  ! plans first,
  call gpufmm_context_destroy(ctx)                        ! then the context
  deallocate (src, q, pot, grad, sample, ysample, ref_pot, ref_grad, how)
  if (worst > eps) error stop 'laplace_fmm: error above eps'
  print '(a)', 'OK'

contains

  !> x with `decimals` digits after the point and a leading zero ("0.8507 s",
  !> where the F edit descriptor alone may print ".8507").
  function fmt(x, decimals) result(text)
    real(dp), intent(in) :: x
    integer, intent(in) :: decimals
    character(len=:), allocatable :: text
    character(len=64) :: buf, form
    write (form, '(a, i0, a)') '(f0.', decimals, ')'
    write (buf, form) x
    text = trim(adjustl(buf))
    if (text(1:1) == '.') then
       text = '0' // text
    else if (len(text) > 1) then
       if (text(1:2) == '-.') text = '-0' // text(2:)
    end if
  end function fmt

  !> x in scientific notation, e.g. "1.46E-08".
  function fmt_es(x) result(text)
    real(dp), intent(in) :: x
    character(len=:), allocatable :: text
    character(len=32) :: buf
    write (buf, '(es12.2)') x
    text = trim(adjustl(buf))
  end function fmt_es

  !> i as text.
  function itoa(i) result(text)
    integer, intent(in) :: i
    character(len=:), allocatable :: text
    character(len=16) :: buf
    write (buf, '(i0)') i
    text = trim(buf)
  end function itoa

  !> Wall-clock seconds since some fixed moment.
  real(dp) function wall_seconds()
    integer(int64) :: count, rate
    call system_clock(count, rate)
    wall_seconds = real(count, dp) / real(rate, dp)
  end function wall_seconds

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
