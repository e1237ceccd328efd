! bem_sphere_fmm3d - the boundary element example of bem_sphere.f90 written
! the way a legacy code that calls FMM3D writes it: the matrix-vector
! product is FMM3D's routine lfmm3d_s_c_p (potential at the sources,
! charges only), declared as FMM3D 2.1 declares it (integer*8 nsource and
! ier, 1/(4 pi) in the kernel). The same source links to FMM3D (-lfmm3d) or to gpufmm's
! drop-in (-lgpufmm_fmm3d -lgpufmm): relinking is the only change, which is
! what the drop-in promises (docs/fmm3d.md). The geometry, the operator,
! GMRES and the two test problems are those of bem_common.f90; see
! bem_sphere.f90 for the formulation.
!
! The drop-in keeps the plan of the last geometries (keyed by the
! coordinates), so the repeated calls on the same points reuse one plan, as
! bem_sphere.f90 does by hand; with FMM3D every call builds its tree again.
!
! Usage: bem_sphere_fmm3d_f [N] [eps]   (N also from GPUFMM_EXAMPLE_N,
! default 20000; eps default 1e-6). The drop-in runs on the first GPU if
! there is one (GPUFMM_FMM3D_BACKEND=cpu|gpu chooses). Prints what
! bem_sphere_f prints; stops with a non-zero exit code on the same failed
! checks.

!> The two potentials bem_common asks for, through FMM3D's interface.
module bem_fmm3d
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use bem_common, only: dp
  implicit none
  private
  public :: fmm3d_open, fmm_potential, direct_potential

  real(dp), allocatable :: points(:, :)
  real(dp) :: fmm_eps
  real(dp), parameter :: four_pi = 16 * atan(1.0_dp)

  interface
     subroutine lfmm3d_s_c_p(eps, nsource, source, charge, pot, ier)
       import :: int64, real64
       real(real64) :: eps
       integer(int64) :: nsource
       real(real64) :: source(3, *), charge(*), pot(*)
       integer(int64) :: ier
     end subroutine lfmm3d_s_c_p
  end interface

contains

  subroutine fmm3d_open(x, eps)
    real(dp), intent(in) :: x(:, :), eps
    points = x
    fmm_eps = eps
    print '(a)', 'fast summation: lfmm3d_s_c_p (FMM3D interface)'
  end subroutine fmm3d_open

  !> pot(i) = sum_{j /= i} c(j) / |x_i - x_j|: FMM3D's potential times 4 pi.
  subroutine fmm_potential(c, pot)
    real(dp), intent(in) :: c(:)
    real(dp), intent(out) :: pot(:)
    real(dp) :: cc(size(c))
    integer(int64) :: ier
    cc = c
    call lfmm3d_s_c_p(fmm_eps, int(size(points, 2), int64), points, cc, pot, ier)
    if (ier /= 0) error stop 'lfmm3d_s_c_p failed'
    pot = four_pi * pot
  end subroutine fmm_potential

  !> pot(i) = sum_j c(j) / |y_i - x_j| by plain loops (few points y).
  subroutine direct_potential(c, y, pot)
    real(dp), intent(in) :: c(:), y(:, :)
    real(dp), intent(out) :: pot(:)
    integer :: i, j
    do i = 1, size(y, 2)
       pot(i) = 0
       do j = 1, size(points, 2)
          pot(i) = pot(i) + c(j) / norm2(y(:, i) - points(:, j))
       end do
    end do
  end subroutine direct_potential

end module bem_fmm3d

program bem_sphere_fmm3d
  use bem_common
  use bem_fmm3d
  implicit none

  real(dp), parameter :: default_eps = 1e-6_dp
  real(dp), allocatable :: x(:, :), w(:)
  real(dp) :: eps, tol, t0, t_start, value
  integer :: n, i, length, ios
  character(len=64) :: arg
  logical :: ok

  t_start = clock()
  n = 20000
  eps = default_eps
  call get_environment_variable('GPUFMM_EXAMPLE_N', arg, length)
  if (length > 0) then
     read (arg, *, iostat=ios) value
     if (ios /= 0) error stop 'usage: bem_sphere_fmm3d_f [N] [eps]'
     n = nint(value)
  end if
  do i = 1, min(command_argument_count(), 2)
     call get_command_argument(i, arg)
     read (arg, *, iostat=ios) value
     if (ios /= 0) error stop 'usage: bem_sphere_fmm3d_f [N] [eps]'
     if (i == 1) n = nint(value)
     if (i == 2) eps = value
  end do
  if (n < 2) error stop 'bem_sphere_fmm3d: N must be at least 2'
  if (.not. (eps > 0 .and. eps < 1)) error stop 'bem_sphere_fmm3d: eps must be in (0, 1)'
  tol = max(1e-8_dp, 10 * eps)
  print '(a, i0, a, es7.1, a, es7.1)', 'BEM, exterior Dirichlet problem on the unit sphere: N = ', n, &
       ', FMM eps = ', eps, ', GMRES tol = ', tol
  allocate (x(3, n), w(n))
  call sphere_points(n, x, w)
  call fmm3d_open(x, eps)
  t0 = clock()
  call single_layer_init(w, fmm_potential)
  print '(a, a, a)', 'FMM of the weights (first call: plan or tree): ', seconds_string(clock() - t0), ' s'
  call solve_test_problems(x, w, direct_potential, tol, &
       check_accuracy=(n >= 10000 .and. eps <= default_eps), ok=ok)
  call single_layer_free()
  deallocate (x, w)
  print '(a, a, a)', 'total: ', seconds_string(clock() - t_start), ' s'
  if (.not. ok) error stop 'bem_sphere_fmm3d: check failed'
  print '(a)', 'OK'
end program bem_sphere_fmm3d
