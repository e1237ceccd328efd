! bem_sphere - a boundary element method with the FMM as the matrix-vector
! product: the exterior Dirichlet problem for the Laplace equation on the
! unit sphere S, single-layer formulation, collocation, restarted GMRES.
!
! Find u harmonic outside S, u = f on S, u -> 0 at infinity, as a single
! layer u(x) = int_S sigma(y) / |x - y| dS_y (the library's kernel 1/r, no
! 1/(4 pi)); the density solves the first-kind equation (S sigma)(x) = f(x)
! for x on S. Discretization: the N points x_i of the spherical Fibonacci
! (golden-spiral) lattice with the equal-area weights w_i = 4 pi / N, as both
! quadrature and collocation points, with singularity subtraction: since
! int_S dS_y / |x - y| = 4 pi for every x on the unit sphere,
!
!     (A sigma)_i = sum_{j /= i} w_j (sigma_j - sigma_i) / |x_i - x_j| + 4 pi sigma_i
!                 = FMM(w sigma)_i - sigma_i FMM(w)_i + 4 pi sigma_i,
!
! where FMM(c)_i = sum_{j /= i} c_j / |x_i - x_j| is the potential at the
! points of charges c at the points (the library leaves out coincident
! pairs). One FMM plan is built for the points; FMM(w) is evaluated once, and
! every GMRES iteration is one more evaluation. Two problems:
!
! (a) capacitance: f = 1. The total charge Q = sum_i w_i sigma_i is 1 (the
!     unit sphere at potential 1, kernel 1/r). The constant is an eigenvector
!     of A (eigenvalue 4 pi: the subtraction cancels), so GMRES converges in
!     one iteration and Q = 1 to rounding: this checks the plumbing (kernel,
!     weights, 4 pi), not the quadrature.
! (b) f(x) = 1/|x - x0|, x0 = (0.3, -0.2, 0.25) inside S: the exterior
!     solution is u(x) = 1/|x - x0|. The single layer of the computed density,
!     sum_j w_j sigma_j / |x - x_j|, is evaluated at 20 points at radius 2 to 3
!     with the direct sum of the gpufmm module and compared with it. GMRES
!     needs several iterations (measured: 7 at eps = 1e-6, 15 to 18 at
!     eps = 1e-9, N = 1e4 to 1e5): S multiplies the spherical harmonics of
!     degree l by 4 pi / (2l + 1), and f has every degree, with weights
!     falling as |x0|^l.
!
! GMRES(30) stops at a relative residual of max(1e-8, 10 eps): the FMM
! computes each product to a relative error eps, so a smaller residual would
! not mean more. The geometry, the operator, GMRES and the two problems are
! in bem_common.f90 and know nothing of the FMM: module bem_gpufmm below has
! every gpufmm call, in two routines (the potential at the points, the
! potential elsewhere); a variant with another fast summation replaces this
! file and keeps bem_common.f90.
!
! Usage: bem_sphere_f [N] [eps] [cpu|gpu]   (the first number is N, also
! from the environment variable GPUFMM_EXAMPLE_N, default 20000; the second
! eps, default 1e-6; cpu: the CPU backend, gpu: the first GPU, neither: the
! first GPU if there is one, else the CPU backend).
! Prints the backend, the plan time, for each problem the GMRES iterations,
! the final relative residual, the mean time of a product and the time of
! the solve, then Q and its error and the exterior error. Stops with a
! non-zero exit code if GMRES does not converge, or if |Q - 1| or the
! exterior error is above 1e-3 when N >= 10000 and eps <= 1e-6.

!> Every gpufmm call of the example: the context, the plan on the
!> collocation points, and the two potentials bem_common asks for.
module bem_gpufmm
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use gpufmm
  use bem_common, only: dp, clock, seconds_string
  implicit none
  private
  public :: fmm_open, fmm_potential, direct_potential, fmm_close

  type(gpufmm_context) :: ctx
  type(gpufmm_laplace_plan) :: plan
  real(dp), allocatable :: points(:, :)

contains

  !> The context on `device` (a GPUFMM_DEVICE_* or a GPU number), the plan
  !> on the points x with relative error eps; prints both.
  subroutine fmm_open(device, x, eps)
    integer, intent(in) :: device
    real(dp), intent(in) :: x(:, :), eps
    type(gpufmm_device_info) :: dev
    type(gpufmm_laplace_options) :: opts
    type(gpufmm_laplace_info) :: info
    character(len=32) :: threads
    integer :: length
    real(dp) :: t0
    call gpufmm_context_create(ctx, device)       ! no status: errors stop the program
    dev = gpufmm_context_device_info(ctx)
    if (dev%backend == GPUFMM_BACKEND_CUDA) then
       print '(a, a)', 'backend: GPU, ', trim(dev%name)
    else
       call get_environment_variable('OMP_NUM_THREADS', threads, length)
       if (length == 0) threads = 'unset'
       print '(a, a, a, i0, a, a)', 'backend: CPU, ', trim(dev%name), ', ', dev%multiprocessors, &
            ' logical cores, OMP_NUM_THREADS ', trim(threads)
    end if
    points = x
    call gpufmm_laplace_options_init(opts)
    opts%eps = eps
    t0 = clock()
    call gpufmm_laplace_plan_create(ctx, opts, points, plan)   ! targets absent: at the sources
    info = gpufmm_laplace_plan_info(plan)
    print '(a, a, a, i0, a, i0, a, i0, a)', 'FMM plan: ', seconds_string(clock() - t0), ' s (p = ', &
         info%p, ', depth ', info%l_max, ', ', info%source_boxes, ' boxes)'
  end subroutine fmm_open

  !> The matrix-vector product's summation: pot(i) = sum_{j /= i} c(j) / |x_i - x_j|.
  subroutine fmm_potential(c, pot)
    real(dp), intent(in) :: c(:)
    real(dp), intent(out) :: pot(:)
    call gpufmm_laplace_evaluate(plan, charges=c, pot=pot)
  end subroutine fmm_potential

  !> pot(i) = sum_j c(j) / |y_i - x_j| by direct summation (few points y).
  subroutine direct_potential(c, y, pot)
    real(dp), intent(in) :: c(:), y(:, :)
    real(dp), intent(out) :: pot(:)
    call gpufmm_laplace_direct(ctx, points, charges=c, targets=y, pot=pot)
  end subroutine direct_potential

  subroutine fmm_close()
    call gpufmm_laplace_plan_destroy(plan)        ! plans first,
    call gpufmm_context_destroy(ctx)              ! then the context
    deallocate (points)
  end subroutine fmm_close

end module bem_gpufmm

program bem_sphere
  use bem_common
  use bem_gpufmm
  use gpufmm, only: GPUFMM_DEVICE_CPU, GPUFMM_DEVICE_DEFAULT
  implicit none

  real(dp), parameter :: default_eps = 1e-6_dp
  real(dp), allocatable :: x(:, :), w(:)
  real(dp) :: eps, tol, t0, t_start
  integer :: n, device
  logical :: ok

  t_start = clock()
  call arguments(n, eps, device)
  tol = max(1e-8_dp, 10 * eps)
  print '(a, i0, a, es7.1, a, es7.1)', 'BEM, exterior Dirichlet problem on the unit sphere: N = ', n, &
       ', FMM eps = ', eps, ', GMRES tol = ', tol
  allocate (x(3, n), w(n))
  call sphere_points(n, x, w)

  call fmm_open(device, x, eps)
  t0 = clock()
  call single_layer_init(w, fmm_potential)        ! FMM(w), once
  print '(a, a, a)', 'FMM of the weights: ', seconds_string(clock() - t0), ' s'
  call solve_test_problems(x, w, direct_potential, tol, &
       check_accuracy=(n >= 10000 .and. eps <= default_eps), ok=ok)

  call single_layer_free()
  call fmm_close()
  deallocate (x, w)
  print '(a, a, a)', 'total: ', seconds_string(clock() - t_start), ' s'
  if (.not. ok) error stop 'bem_sphere: check failed'
  print '(a)', 'OK'

contains

  !> N, eps and the device from the command line (numbers: N, then eps;
  !> words: cpu, gpu), N also from GPUFMM_EXAMPLE_N.
  subroutine arguments(n, eps, device)
    integer, intent(out) :: n, device
    real(dp), intent(out) :: eps
    character(len=64) :: arg
    real(dp) :: value
    integer :: i, length, numbers
    n = 20000
    eps = default_eps
    device = GPUFMM_DEVICE_DEFAULT
    call get_environment_variable('GPUFMM_EXAMPLE_N', arg, length)
    if (length > 0) n = nint(number(arg))
    numbers = 0
    do i = 1, command_argument_count()
       call get_command_argument(i, arg)
       select case (arg)
       case ('cpu')
          device = GPUFMM_DEVICE_CPU
       case ('gpu')
          device = 0
       case default
          value = number(arg)
          numbers = numbers + 1
          if (numbers == 1) then
             n = nint(value)
          else if (numbers == 2) then
             eps = value
          else
             error stop 'usage: bem_sphere_f [N] [eps] [cpu|gpu]'
          end if
       end select
    end do
    if (n < 2) error stop 'bem_sphere: N must be at least 2'
    if (.not. (eps > 0 .and. eps < 1)) error stop 'bem_sphere: eps must be in (0, 1)'
  end subroutine arguments

  !> A number written as '20000', '2e4' or '1e-6'.
  real(dp) function number(text)
    character(len=*), intent(in) :: text
    integer :: ios
    read (text, *, iostat=ios) number
    if (ios /= 0) error stop 'usage: bem_sphere_f [N] [eps] [cpu|gpu]'
  end function number

end program bem_sphere
