! bem_common - what the BEM examples share (not a program; examples/CMakeLists.txt
! links it into every examples/fortran/bem_*.f90): the points on the unit
! sphere, the discrete single-layer operator, restarted GMRES, and the two
! test problems with their checks. There is no FMM in this file: a program
! hands in two routines with the interfaces below, the potential of charges
! at the collocation points (the matrix-vector product) and at other points
! (the exterior check), so that the same code runs with any fast summation
! (bem_sphere.f90 uses the gpufmm module API). Formulation: bem_sphere.f90.
module bem_common
  use, intrinsic :: iso_fortran_env, only: int64, real64
  implicit none
  private
  public :: sphere_points, single_layer_init, single_layer_apply, single_layer_free, gmres, &
       solve_test_problems, seconds_string, clock

  integer, parameter, public :: dp = real64
  real(dp), parameter, public :: four_pi = 4 * acos(-1.0_dp)
  !> The point inside the sphere whose free-space potential is problem (b).
  real(dp), parameter, public :: x0(3) = [0.3_dp, -0.2_dp, 0.25_dp]
  !> Accuracy checks of solve_test_problems: |Q - 1| and the exterior error.
  real(dp), parameter, public :: tol_check = 1e-3_dp

  abstract interface
     !> pot(i) = sum over j /= i of c(j) / |x_i - x_j|, x the N collocation
     !> points (kernel 1/r, no 1/(4 pi); no self term).
     subroutine potential_at_points(c, pot)
       import :: dp
       real(dp), intent(in) :: c(:)
       real(dp), intent(out) :: pot(:)
     end subroutine potential_at_points
     !> pot(i) = sum over j of c(j) / |y_i - x_j| at points y(:, i) off the sphere.
     subroutine potential_at_targets(c, y, pot)
       import :: dp
       real(dp), intent(in) :: c(:), y(:, :)
       real(dp), intent(out) :: pot(:)
     end subroutine potential_at_targets
     !> y = A x
     subroutine linear_operator(x, y)
       import :: dp
       real(dp), intent(in) :: x(:)
       real(dp), intent(out) :: y(:)
     end subroutine linear_operator
  end interface
  public :: potential_at_points, potential_at_targets, linear_operator

  ! The single-layer operator: weights, sum_{j /= i} w_j / |x_i - x_j|, the
  ! fast summation behind it, and the count and time of its products.
  real(dp), allocatable :: w_op(:), w_pot(:)
  procedure(potential_at_points), pointer :: summation => null()
  integer, public :: matvec_count = 0
  real(dp), public :: matvec_seconds = 0

contains

  !> N points of the spherical Fibonacci (golden-spiral) lattice on the unit
  !> sphere, x(:, i), with the equal-area weights w(i) = 4 pi / N.
  subroutine sphere_points(n, x, w)
    integer, intent(in) :: n
    real(dp), intent(out) :: x(3, n), w(n)
    real(dp), parameter :: golden_angle = acos(-1.0_dp) * (3 - sqrt(5.0_dp))
    real(dp) :: z, r, phi
    integer :: i
    do i = 1, n
       z = 1 - (2 * i - 1) / real(n, dp)
       r = sqrt(max(0.0_dp, 1 - z * z))
       phi = golden_angle * (i - 1)
       x(:, i) = [r * cos(phi), r * sin(phi), z]
    end do
    w = four_pi / n
  end subroutine sphere_points

  !> Sets up the operator of single_layer_apply: weights w and the fast
  !> summation `potential`; computes its one fixed product, potential(w).
  subroutine single_layer_init(w, potential)
    real(dp), intent(in) :: w(:)
    procedure(potential_at_points) :: potential
    call single_layer_free()
    summation => potential
    w_op = w
    allocate (w_pot(size(w)))
    call summation(w, w_pot)
    matvec_count = 0
    matvec_seconds = 0
  end subroutine single_layer_init

  !> y = A sigma, the single layer at the collocation points with singularity
  !> subtraction: y_i = sum_{j /= i} w_j (sigma_j - sigma_i) / |x_i - x_j|
  !> + 4 pi sigma_i = potential(w sigma)_i - sigma_i potential(w)_i + 4 pi sigma_i.
  subroutine single_layer_apply(sigma, y)
    real(dp), intent(in) :: sigma(:)
    real(dp), intent(out) :: y(:)
    real(dp) :: t0
    t0 = clock()
    call summation(w_op * sigma, y)
    y = y - sigma * w_pot + four_pi * sigma
    matvec_count = matvec_count + 1
    matvec_seconds = matvec_seconds + (clock() - t0)
  end subroutine single_layer_apply

  subroutine single_layer_free()
    if (allocated(w_op)) deallocate (w_op)
    if (allocated(w_pot)) deallocate (w_pot)
    summation => null()
  end subroutine single_layer_free

  !> Restarted GMRES(m) for A x = b, modified Gram-Schmidt and Givens
  !> rotations. x holds the initial guess on entry. Stops when the relative
  !> residual |b - A x| / |b| is at most tol (default 1e-8) or after max_iter
  !> iterations (default 500); restarts every `restart` iterations (default
  !> 30). Each iteration is one product with A, and each cycle ends with one
  !> more for its true residual, so that the residual tested last and
  !> returned in relres is |b - A x| / |b|, not the estimate of the
  !> rotations. iters: the iterations done.
  subroutine gmres(apply, b, x, iters, relres, tol, restart, max_iter)
    procedure(linear_operator) :: apply
    real(dp), intent(in) :: b(:)
    real(dp), intent(inout) :: x(:)
    integer, intent(out) :: iters
    real(dp), intent(out) :: relres
    real(dp), intent(in), optional :: tol
    integer, intent(in), optional :: restart, max_iter
    real(dp), allocatable :: v(:, :), h(:, :), cs(:), sn(:), g(:), r(:)
    real(dp) :: rtol, bnorm, beta, d, t
    integer :: m, maxit, n, k, j, kdone
    rtol = 1e-8_dp
    if (present(tol)) rtol = tol
    m = 30
    if (present(restart)) m = restart
    maxit = 500
    if (present(max_iter)) maxit = max_iter
    n = size(b)
    allocate (v(n, m + 1), h(m + 1, m), cs(m), sn(m), g(m + 1), r(n))
    iters = 0
    bnorm = norm2(b)
    if (bnorm == 0) bnorm = 1
    do                                             ! one cycle a restart
       if (iters == 0 .and. all(x == 0)) then
          r = b                                    ! no product for a zero initial guess
       else
          call apply(x, r)
          r = b - r
       end if
       beta = norm2(r)
       relres = beta / bnorm
       if (relres <= rtol .or. iters >= maxit) exit
       v(:, 1) = r / beta
       g = 0
       g(1) = beta
       kdone = 0
       do k = 1, m
          iters = iters + 1
          kdone = k
          call apply(v(:, k), r)                   ! Arnoldi, modified Gram-Schmidt
          do j = 1, k
             h(j, k) = dot_product(v(:, j), r)
             r = r - h(j, k) * v(:, j)
          end do
          h(k + 1, k) = norm2(r)
          if (h(k + 1, k) > 0) v(:, k + 1) = r / h(k + 1, k)
          do j = 1, k - 1                          ! the earlier rotations on column k
             t = cs(j) * h(j, k) + sn(j) * h(j + 1, k)
             h(j + 1, k) = -sn(j) * h(j, k) + cs(j) * h(j + 1, k)
             h(j, k) = t
          end do
          d = hypot(h(k, k), h(k + 1, k))          ! the rotation that zeroes h(k + 1, k)
          cs(k) = h(k, k) / d
          sn(k) = h(k + 1, k) / d
          h(k, k) = d
          h(k + 1, k) = 0
          g(k + 1) = -sn(k) * g(k)
          g(k) = cs(k) * g(k)
          if (abs(g(k + 1)) <= rtol * bnorm .or. iters >= maxit) exit   ! estimate; checked above
       end do
       do j = kdone, 1, -1                         ! h(1:k, 1:k) y = g(1:k), y in g
          g(j) = (g(j) - dot_product(h(j, j + 1:kdone), g(j + 1:kdone))) / h(j, j)
       end do
       x = x + matmul(v(:, 1:kdone), g(1:kdone))
    end do
    deallocate (v, h, cs, sn, g, r)
  end subroutine gmres

  !> Solves the two problems with single_layer_apply (set up before) and
  !> prints what they give; `ok` is .false. if GMRES did not converge or, when
  !> `check_accuracy`, |Q - 1| or the exterior error is above tol_check.
  !> (a) capacitance: f = 1; the total charge Q = sum w_i sigma_i is 1 (the
  !> unit sphere at potential 1, kernel 1/r). (b) f = 1/|x - x0|, x0 inside:
  !> the exterior solution is 1/|x - x0|, checked at 20 points at radius 2 to
  !> 3 with `exterior` (the weights w are the charges there).
  subroutine solve_test_problems(x, w, exterior, tol, check_accuracy, ok)
    real(dp), intent(in) :: x(:, :), w(:), tol
    procedure(potential_at_targets) :: exterior
    logical, intent(in) :: check_accuracy
    logical, intent(out) :: ok
    integer, parameter :: nout = 20
    real(dp), allocatable :: f(:), sigma(:)
    real(dp) :: y(3, nout), wy(nout), u(nout), exact(nout), q, err_q, err_out
    integer :: n, i
    n = size(w)
    allocate (f(n), sigma(n))
    ok = .true.

    f = 1
    call solve('(a) capacitance, f = 1', f, sigma)
    q = sum(w * sigma)
    err_q = abs(q - 1)
    print '(a, f14.12, a, es8.2)', '    total charge Q = ', q, ', |Q - 1| = ', err_q

    f = 1 / norm2(x - spread(x0, 2, n), dim=1)
    call solve('(b) f = 1/|x - x0|, x0 = (0.3, -0.2, 0.25)', f, sigma)
    call sphere_points(nout, y, wy)                ! 20 directions, radii 2 to 3
    do i = 1, nout
       y(:, i) = y(:, i) * (2 + (i - 1) / real(nout - 1, dp))
    end do
    call exterior(w * sigma, y, u)
    exact = 1 / norm2(y - spread(x0, 2, nout), dim=1)
    err_out = maxval(abs(u - exact) / abs(exact))
    print '(a, i0, a, es8.2)', '    max relative error of u at ', nout, ' points at radius 2 to 3: ', err_out

    if (check_accuracy .and. .not. (err_q <= tol_check .and. err_out <= tol_check)) then
       print '(a, es7.1)', '    |Q - 1| or the exterior error is above ', tol_check
       ok = .false.
    end if
    deallocate (f, sigma)

  contains

    subroutine solve(title, rhs, sol)
      character(len=*), intent(in) :: title
      real(dp), intent(in) :: rhs(:)
      real(dp), intent(out) :: sol(:)
      real(dp) :: t0, relres
      integer :: iters
      print '(a)', title
      matvec_count = 0
      matvec_seconds = 0
      sol = 0
      t0 = clock()
      call gmres(single_layer_apply, rhs, sol, iters, relres, tol)
      print '(a, i0, a, es8.2, a, es8.2, a, i0, a, a, a, a, a)', '    GMRES iterations ', iters, &
           ', relative residual ', relres, ' (tol ', tol, '); ', matvec_count, &
           ' products, ', seconds_string(matvec_seconds / max(1, matvec_count)), ' s each; solve ', &
           seconds_string(clock() - t0), ' s'
      if (.not. relres <= tol) then
         print '(a)', '    GMRES did not converge'
         ok = .false.
      end if
    end subroutine solve

  end subroutine solve_test_problems

  !> Wall-clock seconds since some fixed time.
  real(dp) function clock()
    integer(int64) :: count, rate
    call system_clock(count, rate)
    clock = real(count, dp) / rate
  end function clock

  !> Seconds as '0.123' (F0.3 would print '.123').
  function seconds_string(t) result(s)
    real(dp), intent(in) :: t
    character(len=:), allocatable :: s
    character(len=32) :: buf
    write (buf, '(f20.3)') t
    s = trim(adjustl(buf))
  end function seconds_string

end module bem_common
