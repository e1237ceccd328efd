! test_fortran_direct - pair kernels and the direct sum from Fortran (module
! gpufmm_kernels_mod): gpufmm_kernel_init for every kernel type and its
! errors; gpufmm_direct against a plain double-precision loop written here
! for Yukawa and regularized Laplace (random points, separate targets and at
! the sources); the Laplace kernel against gpufmm_laplace_direct;
! gpufmm_direct_arrays on device arrays against gpufmm_direct; a user
! kernel (bind(c) functions and expressions: either backend) that is the
! Yukawa kernel against the built-in one; size errors through `status` with
! the outputs unchanged.
!
! Runs on the CPU backend (CI); GPUFMM_TEST_DEVICE picks another device.
!> The Yukawa kernel and its derivative, p(1) = kappa, as user-kernel
!> functions (module procedures: c_funloc of bind(c) procedures).
module test_direct_user_fns
  use, intrinsic :: iso_c_binding, only: c_double
  use gpufmm, only: GPUFMM_KERNEL_MAX_PARAMS
  implicit none
contains
  real(c_double) function user_yukawa(r, p) bind(c)
    real(c_double), value :: r
    real(c_double), intent(in) :: p(GPUFMM_KERNEL_MAX_PARAMS)
    user_yukawa = exp(-p(1) * r) / r
  end function user_yukawa

  real(c_double) function user_yukawa_dr(r, p) bind(c)
    real(c_double), value :: r
    real(c_double), intent(in) :: p(GPUFMM_KERNEL_MAX_PARAMS)
    user_yukawa_dr = -exp(-p(1) * r) * (1 + p(1) * r) / (r * r)
  end function user_yukawa_dr

end module test_direct_user_fns

program test_fortran_direct
  use, intrinsic :: iso_fortran_env, only: int64, real32, real64
  use, intrinsic :: iso_c_binding, only: c_funptr, c_funloc
  use gpufmm
  use gpufmm_test_support, expect => expect_status
  use test_direct_user_fns
  implicit none
  integer, parameter :: n = 700, m = 400
  real(real64), parameter :: kappa = 0.7_real64, delta = 0.01_real64
  type(gpufmm_context) :: ctx
  type(gpufmm_kernel) :: lap, yuk, reg, kept, user
  type(gpufmm_array) :: dsrc, dq, dpot, dgrad
  real(real64) :: src(3, n), q(n), trg(3, m), pot(m), grad(3, m), pref(m), gref(3, m)
  real(real64) :: pn(n), pa(n), ga(3, n), gn(3, n), bad(2, n), kept_src(3, n), centre(3)
  integer :: s
  type(c_funptr) :: fn, dfn

  call random_number(src)
  call random_number(trg)
  call random_number(q)
  q = 2 * q - 1
  call gpufmm_context_create(ctx, test_device())

  ! ---------------------------------------------------------------- kernels
  call gpufmm_kernel_init(lap, GPUFMM_KERNEL_LAPLACE)
  call check(lap%type == GPUFMM_KERNEL_LAPLACE .and. lap%nparams == 0, 'Laplace kernel')
  call gpufmm_kernel_init(yuk, GPUFMM_KERNEL_YUKAWA, [kappa])
  call check(yuk%nparams == 1 .and. yuk%params(1) == kappa, 'Yukawa kernel holds kappa')
  call gpufmm_kernel_init(reg, GPUFMM_KERNEL_REGULARIZED_LAPLACE, [delta])
  kept = yuk
  call gpufmm_kernel_init(kept, GPUFMM_KERNEL_YUKAWA, [-1.0_real64], status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 'kappa', 'negative kappa refused')
  call check(kept%params(1) == kappa, 'kernel unchanged after an error')
  call gpufmm_kernel_init(kept, GPUFMM_KERNEL_REGULARIZED_YUKAWA, [kappa], status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 'takes 2 parameters', 'parameter count checked')
  call gpufmm_kernel_init(kept, 17, status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 'gpufmm_kernel_type_t', 'unknown type refused')

  ! ---------------------------------------------------------------- direct sums against a loop
  call gpufmm_direct(ctx, yuk, src, q, trg, pot, grad)
  call reference(1, trg, pref, gref)
  call check(rel(pot, pref) < 1e-13_real64, 'Yukawa potential = the loop')
  call check(rel(reshape(grad, [3 * m]), reshape(gref, [3 * m])) < 1e-13_real64, 'Yukawa gradient = the loop')
  call gpufmm_direct(ctx, reg, src, q, pot=pn)  ! at the sources: regularized includes the self term
  call reference(2, src, pa, ga)
  call check(rel(pn, pa) < 1e-13_real64, 'regularized Laplace at the sources = the loop (self term included)')
  ! Float: against the loop on the points as the float sum takes them, their
  ! coordinates about the bounding box's centre rounded to float (the
  ! documented error of close pairs, src/cxx/nearfield/direct_cpu.cpp: a pair
  ! 1e-3 apart alone gives 1.1e-5 against the given points, and one of the
  ! random draws has such a pair now and then), so that 1e-5 bounds the float
  ! arithmetic on every draw.
  call gpufmm_direct(ctx, yuk, src, q, pot=pn, precision=GPUFMM_FLOAT32)
  kept_src = src
  centre = 0.5_real64 * minval(src, 2) + 0.5_real64 * maxval(src, 2)
  src = real(real(src - spread(centre, 2, n), real32), real64)
  call reference(1, src, pa, ga)
  src = kept_src
  call check(rel(pn, pa) < 1e-5_real64, 'Yukawa in float at the sources')

  ! Laplace: gpufmm_direct = gpufmm_laplace_direct
  call gpufmm_direct(ctx, lap, src, q, trg, pot, grad)
  call gpufmm_laplace_direct(ctx, src, charges=q, targets=trg, pot=pref, grad=gref)
  call check(all(pot == pref) .and. all(grad == gref), 'Laplace kernel = gpufmm_laplace_direct')

  ! ---------------------------------------------------------------- a user kernel: Yukawa
  fn = c_funloc(user_yukawa)
  dfn = c_funloc(user_yukawa_dr)
  call gpufmm_kernel_init_user(user, [kappa], value_expr='exp(-p[0] * r) / r', &
       deriv_expr='-exp(-p[0] * r) * (1 + p[0] * r) / (r * r)', value_fn=fn, deriv_fn=dfn)
  call check(user%type == GPUFMM_KERNEL_USER .and. user%params(1) == kappa, 'user kernel holds its parameter')
  call gpufmm_direct(ctx, user, src, q, pot=pn, grad=gn)
  call gpufmm_direct(ctx, yuk, src, q, pot=pa, grad=ga)
  call check(rel(pn, pa) < 1e-13_real64, 'user Yukawa potential = the built-in one')
  call check(rel(reshape(gn, [3 * n]), reshape(ga, [3 * n])) < 1e-13_real64, 'user Yukawa gradient = the built-in')
  kept = yuk
  call gpufmm_kernel_init_user(kept, [kappa], value_expr='exp(-p[0] * r) / r', status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 'deriv_expr', 'user kernel: half a form refused')
  call check(kept%type == GPUFMM_KERNEL_YUKAWA, 'kernel unchanged after an error')

  ! ---------------------------------------------------------------- device arrays
  call gpufmm_array_create_like(ctx, src, dsrc)
  call gpufmm_array_create_like(ctx, q, dq)
  call gpufmm_array_create_like(ctx, pn, dpot)
  call gpufmm_array_create_like(ctx, gn, dgrad)
  call gpufmm_array_upload(dsrc, src)
  call gpufmm_array_upload(dq, q)
  call gpufmm_direct_arrays(yuk, dsrc, dq, pot=dpot, grad=dgrad)
  call gpufmm_array_download(dpot, pa)
  call gpufmm_array_download(dgrad, ga)
  call gpufmm_direct(ctx, yuk, src, q, pot=pn, grad=gn)
  call check(all(pa == pn) .and. all(ga == gn), 'gpufmm_direct_arrays = gpufmm_direct')
  call gpufmm_direct_arrays(yuk, dsrc, dq, status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 'nothing to compute', 'arrays: no output refused')

  ! ---------------------------------------------------------------- size errors, outputs unchanged
  pot = 7
  call gpufmm_direct(ctx, yuk, src, q(1:n - 1), trg, pot, status=s)
  call expect(s, GPUFMM_ERROR_SIZE_MISMATCH, 'charges', 'short charges refused')
  call gpufmm_direct(ctx, yuk, src, q, trg, pot(1:m - 1), status=s)
  call expect(s, GPUFMM_ERROR_SIZE_MISMATCH, 'pot', 'short pot refused')
  bad = 0
  call gpufmm_direct(ctx, yuk, bad, q, trg, pot, status=s)
  call expect(s, GPUFMM_ERROR_SIZE_MISMATCH, 'sources', '2-row sources refused')
  call check(all(pot == 7), 'outputs unchanged after errors')

  call gpufmm_array_destroy(dsrc); call gpufmm_array_destroy(dq)
  call gpufmm_array_destroy(dpot); call gpufmm_array_destroy(dgrad)
  call gpufmm_context_destroy(ctx)
  call finish_checks('test_fortran_direct')

contains

  !> The sums of kernel `which` (1 Yukawa kappa, 2 regularized Laplace delta)
  !> at targets t, in plain double loops (the singular Yukawa leaves out r = 0).
  subroutine reference(which, t, p, g)
    integer, intent(in) :: which
    real(real64), intent(in) :: t(:, :)
    real(real64), intent(out) :: p(:), g(:, :)
    real(real64) :: r(3), d, s2, c
    integer :: i, j
    p = 0
    g = 0
    do i = 1, size(t, 2)
       do j = 1, n
          r = t(:, i) - src(:, j)
          d = norm2(r)
          if (which == 1) then
             if (d == 0) cycle
             p(i) = p(i) + q(j) * exp(-kappa * d) / d
             c = -q(j) * exp(-kappa * d) * (1 + kappa * d) / d**3
          else
             s2 = d * d + delta * delta
             p(i) = p(i) + q(j) / sqrt(s2)
             c = -q(j) / (s2 * sqrt(s2))
          end if
          g(:, i) = g(:, i) + c * r
       end do
    end do
  end subroutine reference

  real(real64) function rel(a, b)
    real(real64), intent(in) :: a(:), b(:)
    rel = norm2(a - b) / norm2(b)
  end function rel

end program test_fortran_direct
