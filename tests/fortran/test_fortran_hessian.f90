! test_fortran_hessian - several densities and Hessians from Fortran
! (gpufmm_laplace_evaluate_nd, gpufmm_laplace_direct_nd of module
! gpufmm_fmm) in FMM3D's array layouts: charge(nd, n), dipvec(nd, 3, n),
! pot(nd, n), grad(nd, 3, n), hess(nd, 6, n). nd = 3 densities at eps 1e-6
! against the direct sum (pot, grad <= eps; hess <= eps); each density equal
! to an nd = 1 evaluate; a wrong shape is SIZE_MISMATCH with the outputs
! unchanged. CPU backend unless GPUFMM_TEST_DEVICE says otherwise.
program test_fortran_hessian
  use, intrinsic :: iso_fortran_env, only: int64, real64, output_unit
  use gpufmm
  use gpufmm_test_support, expect => expect_status
  implicit none
  integer, parameter :: ns = 3000, nt = 1500, nd = 3
  real(real64), parameter :: eps = 1.0e-6_real64
  type(gpufmm_context) :: ctx
  type(gpufmm_laplace_plan) :: plan
  type(gpufmm_laplace_options) :: opt
  real(real64) :: src(3, ns), trg(3, nt), q(nd, ns), d(nd, 3, ns)
  real(real64) :: pot(nd, nt), grad(nd, 3, nt), hess(nd, 6, nt)
  real(real64) :: rpot(nd, nt), rgrad(nd, 3, nt), rhess(nd, 6, nt)
  real(real64) :: p1(1, nt), g1(1, 3, nt), h1(1, 6, nt), wrong(nd, 5, nt)
  integer :: st, k
  character(len=120) :: line

  call gpufmm_context_create(ctx, test_device())
  call seed_random(4711)
  call random_number(src)
  call random_number(trg)
  call random_number(q)
  call random_number(d)
  q = 2 * q - 1
  d = 2 * d - 1

  opt%eps = eps
  opt%l_max = 3  ! the far field carries most pairs
  call gpufmm_laplace_plan_create(ctx, opt, src, plan, targets=trg)
  call gpufmm_laplace_evaluate_nd(plan, charges=q, dipoles=d, pot=pot, grad=grad, hess=hess, status=st)
  call expect(st, GPUFMM_SUCCESS, '', 'evaluate_nd')
  call gpufmm_laplace_direct_nd(ctx, src, charges=q, dipoles=d, targets=trg, pot=rpot, grad=rgrad, hess=rhess, &
       status=st)
  call expect(st, GPUFMM_SUCCESS, '', 'direct_nd')
  write (line, '(a, 3es10.2)') '  nd = 3 errors pot, grad, hess:', err(pot, rpot), err(grad, rgrad), err(hess, rhess)
  write (output_unit, '(a)') trim(line)
  call check(err(pot, rpot) <= eps, 'potential error above eps')
  call check(err(grad, rgrad) <= eps, 'gradient error above eps')
  call check(err(hess, rhess) <= eps, 'Hessian error above eps')
  call check(err(hess, rhess) > 0, 'Hessian not computed')

  do k = 1, nd  ! each density alone: the same numbers
     call gpufmm_laplace_evaluate_nd(plan, charges=q(k:k, :), dipoles=d(k:k, :, :), pot=p1, grad=g1, hess=h1, &
          status=st)
     call expect(st, GPUFMM_SUCCESS, '', 'evaluate_nd, one density')
     call check(all(p1(1, :) == pot(k, :)) .and. all(g1(1, :, :) == grad(k, :, :)) .and. &
          all(h1(1, :, :) == hess(k, :, :)), 'density alone differs from nd = 3')
  end do

  hess = 7
  call gpufmm_laplace_evaluate_nd(plan, charges=q, hess=wrong, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'hess', 'wrong Hessian shape')
  call gpufmm_laplace_evaluate_nd(plan, charges=q(:, 1:ns - 1), hess=hess, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'charges', 'wrong charge count')
  call check(all(hess == 7), 'outputs changed by a failed call')

  call gpufmm_laplace_plan_destroy(plan)
  call gpufmm_context_destroy(ctx)
  call finish_checks('test_fortran_hessian')
contains
  real(real64) function err(a, ref)
    real(real64), intent(in) :: a(..), ref(..)
    select rank (a)
    rank (2)
       select rank (ref)
       rank (2)
          err = sqrt(sum((a - ref)**2) / sum(ref**2))
       end select
    rank (3)
       select rank (ref)
       rank (3)
          err = sqrt(sum((a - ref)**2) / sum(ref**2))
       end select
    end select
  end function err
end program test_fortran_hessian
