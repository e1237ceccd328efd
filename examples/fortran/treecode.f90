! treecode - the barycentric Lagrange treecode from Fortran, any kernel.
!
! N random sources in the unit cube carry random charges in (-1, 1). The
! treecode (papers/001) computes the screened Coulomb (Yukawa) potential
! exp(-kappa r)/r, kappa = 0.5, and its gradient at the sources (no self
! term) with a requested relative L2 error eps = 1e-6, in the
! cluster-cluster compute type; the plan picks theta and the interpolation
! degree from eps. About 200 of the points are then checked against the
! direct sum of the same kernel, computed at those points only.
!
! Usage: treecode_f [N]   (N also from the environment variable
! GPUFMM_EXAMPLE_N; default 100000). Runs on the first GPU if there is one,
! else on the CPU backend. Stops with a non-zero exit code if the error
! exceeds eps.
program treecode
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use gpufmm
  implicit none

  integer, parameter :: dp = real64
  real(dp), parameter :: eps = 1e-6_dp, kappa = 0.5_dp
  integer, parameter :: nsample_max = 200

  type(gpufmm_context) :: ctx
  type(gpufmm_device_info) :: dev
  type(gpufmm_treecode_options) :: opts
  type(gpufmm_treecode_plan) :: plan
  type(gpufmm_treecode_info) :: info
  real(dp), allocatable :: src(:, :), q(:), pot(:), grad(:, :)
  real(dp), allocatable :: ysample(:, :), ref_pot(:), ref_grad(:, :)
  integer, allocatable :: sample(:)
  real(dp) :: err_pot, err_grad
  integer :: n, nsample, i

  n = problem_size()
  call gpufmm_context_create(ctx, GPUFMM_DEVICE_DEFAULT)  ! no status: errors stop the program
  dev = gpufmm_context_device_info(ctx)
  print '(a, i0, a, a)', 'treecode, Yukawa, N = ', n, ' points, on ', trim(dev%name)

  allocate (src(3, n), q(n), pot(n), grad(3, n))
  call random_number(src)                        ! uniform in the unit cube
  call random_number(q)
  q = 2 * q - 1

  ! ---- the options: the kernel is data (type and parameters), eps the accuracy
  call gpufmm_treecode_options_init(opts)       ! the library's defaults
  call gpufmm_kernel_init(opts%kernel, GPUFMM_KERNEL_YUKAWA, [kappa])
  opts%eps = eps                                 ! for pot and (opts%grad = 1) grad
  opts%type = GPUFMM_TREECODE_CC                 ! cluster-cluster; _PC (default) or _CP

  ! ---- plan once (trees, lists, proxies), evaluate (here once; new charges reuse the plan)
  call gpufmm_treecode_plan_create(ctx, opts, src, plan)  ! targets absent: at the sources
  call gpufmm_treecode_evaluate(plan, q, pot=pot, grad=grad)
  info = gpufmm_treecode_plan_info(plan)
  print '(a, f0.2, a, i0, a, i0, a, i0, a, f0.3, a)', 'plan: theta ', info%theta, ', degree ', info%degree, &
       ', ', info%source_clusters, ' source clusters, ', info%source_proxy_clusters, ' with proxies; ', &
       info%plan_seconds, ' s'
  print '(a, f0.4, a, f0.4, a, f0.4, a, f0.4, a)', 'evaluate: ', info%t_total, ' s (modified charges ', &
       info%t_precompute, ', near field and approximation ', info%t_compute, ', interpolation ', &
       info%t_downward, ')'

  ! ---- direct sum at the sampled points only (they are sources too, so
  !      they get no self term, as in the treecode)
  nsample = min(nsample_max, n)
  allocate (sample(nsample), ysample(3, nsample), ref_pot(nsample), ref_grad(3, nsample))
  sample = [(1 + int(int(i - 1, int64) * n / nsample), i = 1, nsample)]
  ysample = src(:, sample)
  call gpufmm_direct(ctx, opts%kernel, src, q, ysample, ref_pot, ref_grad)
  err_pot = sqrt(sum((pot(sample) - ref_pot)**2) / sum(ref_pot**2))
  err_grad = sqrt(sum((grad(:, sample) - ref_grad)**2) / sum(ref_grad**2))
  print '(a, i0, a, es9.2, a, es9.2, a, es7.1, a)', 'relative L2 error on ', nsample, ' targets: pot ', &
       err_pot, ', grad ', err_grad, ' (eps ', eps, ')'

  call gpufmm_treecode_plan_destroy(plan)                 ! plans first,
  call gpufmm_context_destroy(ctx)                        ! then the context
  deallocate (src, q, pot, grad, sample, ysample, ref_pot, ref_grad)
  if (max(err_pot, err_grad) > eps) error stop 'treecode: error above eps'
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
       if (ios /= 0) error stop 'treecode: GPUFMM_EXAMPLE_N is not an integer'
       n = m
    end if
    if (command_argument_count() >= 1) then
       call get_command_argument(1, arg)
       read (arg, *, iostat=ios) m
       if (ios /= 0) error stop 'usage: treecode_f [N]'
       n = m
    end if
    if (n < 1) error stop 'treecode: N must be positive'
  end function problem_size

end program treecode
