! test_fortran_fmm - the Fortran Laplace FMM API (module gpufmm_fmm and the
! FORTRAN 77-style routines of gpufmm_f77.f90) against gpufmm_laplace_direct
! on a few thousand random points: eps = 1e-6, relative L2 error of pot and
! grad <= 1e-6 (papers/000 eq. 36). Then the error paths through `status`
! and `ier`, checking that a failed call leaves its outputs unchanged.
!
! Runs on the CPU backend (CI). Set GPUFMM_TEST_DEVICE to a device number to
! run the module API elsewhere (0, 1, ... a GPU; -2 the default device); the
! F77 routines always use the default device. Exits with a non-zero code
! (error stop) if any check fails.
module test_fortran_fmm_support
  use, intrinsic :: iso_fortran_env, only: int64, real64, output_unit
  use gpufmm
  use gpufmm_test_support, expect => expect_status
  implicit none

  real(real64), parameter :: eps = 1.0e-6_real64

contains

  !> ||a - ref|| / ||ref|| over all elements.
  real(real64) function rel_l2(a, ref)
    real(real64), intent(in) :: a(:), ref(:)
    rel_l2 = sqrt(sum((a - ref)**2) / sum(ref**2))
  end function rel_l2

  !> Checks an FMM result against the direct one and reports the errors.
  subroutine check_accuracy(what, pot, ref_pot, grad, ref_grad)
    character(len=*), intent(in) :: what
    real(real64), intent(in), optional :: pot(:), ref_pot(:), grad(:, :), ref_grad(:, :)
    real(real64) :: e
    character(len=40) :: buf
    character(len=:), allocatable :: line
    line = '  ' // what // ': relative L2 error'
    if (present(pot)) then
       e = rel_l2(pot, ref_pot)
       call check(e <= eps, what // ': potential error above eps')
       write (buf, '(a, es9.2)') ' pot', e
       line = line // trim(buf)
    end if
    if (present(grad)) then
       e = rel_l2(reshape(grad, [size(grad)]), reshape(ref_grad, [size(ref_grad)]))
       call check(e <= eps, what // ': gradient error above eps')
       write (buf, '(a, es9.2)') ' grad', e
       line = line // trim(buf)
    end if
    write (output_unit, '(a)') line
  end subroutine check_accuracy

  !> Points uniform in the unit cube, values uniform in [-1, 1).
  subroutine random_points(x)
    real(real64), intent(out) :: x(:, :)
    call random_number(x)
  end subroutine random_points

  subroutine random_values(v)
    real(real64), intent(out) :: v(:)
    call random_number(v)
    v = 2 * v - 1
  end subroutine random_values

end module test_fortran_fmm_support

program test_fortran_fmm
  use test_fortran_fmm_support
  implicit none
  integer, parameter :: ns = 3000, nt = 2000
  type(gpufmm_context) :: ctx
  type(gpufmm_laplace_plan) :: plan, plan2, stale
  type(gpufmm_laplace_options) :: opts, defaults, deep
  type(gpufmm_laplace_info) :: info
  type(gpufmm_device_info) :: dev
  type(gpufmm_array) :: dq, dpot
  real(real64) :: src(3, ns), trg(3, nt), q(ns), q2(ns), d(3, ns), dum(1), dum3(3, 1)
  real(real64) :: pot(nt), grad(3, nt), rpot(nt), rgrad(3, nt)
  real(real64) :: spot(ns), sgrad(3, ns), rspot(ns), rsgrad(3, ns)
  real(real64) :: bad_src(2, ns), bad_q(ns - 1), nan_q(ns)
  real(real64), allocatable :: none(:, :)
  character(len=200) :: msg
  integer :: device, st, ier, seed_size
  integer, allocatable :: seed(:)

  device = test_device()
  call gpufmm_context_create(ctx, device)
  dev = gpufmm_context_device_info(ctx)
  write (output_unit, '(a, a)') 'test_fortran_fmm on ', trim(dev%name)

  call random_seed(size=seed_size)
  allocate (seed(seed_size))
  seed = 20250 + [(st, st = 1, seed_size)]
  call random_seed(put=seed)
  deallocate (seed)
  call random_points(src)
  call random_points(trg)
  call random_values(q)
  call random_values(q2)
  call random_number(d)
  d = 2 * d - 1

  ! ------------------------------------------------------------------ options
  call gpufmm_laplace_options_init(opts)
  call check(opts%eps == defaults%eps .and. opts%precision == defaults%precision .and. &
       opts%p == defaults%p .and. opts%l_max == defaults%l_max .and. opts%s_max == defaults%s_max .and. &
       opts%stencil == defaults%stencil .and. opts%variable_truncation == defaults%variable_truncation .and. &
       opts%tree == defaults%tree .and. opts%calibrate == defaults%calibrate .and. &
       opts%densities == defaults%densities, &
       'the default-initialised gpufmm_laplace_options equals gpufmm_laplace_options_init')
  call check(opts%table_cache == defaults%table_cache .and. opts%gpu_p2m == defaults%gpu_p2m .and. &
       opts%gpu_m2m == defaults%gpu_m2m .and. opts%gpu_m2l == defaults%gpu_m2l .and. &
       opts%gpu_l2l == defaults%gpu_l2l .and. opts%gpu_l2p == defaults%gpu_l2p .and. &
       opts%gpu_p2p == defaults%gpu_p2p .and. opts%gpu_overlap == defaults%gpu_overlap .and. &
       opts%gpu_graph == defaults%gpu_graph .and. opts%cube_padding == defaults%cube_padding, &
       'and so do its table_cache, gpu_* and cube_padding')
  opts%eps = eps

  ! ------------------------------------------------------------------ plan: separate targets
  write (output_unit, '(a)') 'module API, separate targets:'
  call gpufmm_laplace_direct(ctx, src, charges=q, dipoles=d, targets=trg, pot=rpot, grad=rgrad)
  call gpufmm_laplace_plan_create(ctx, opts, src, plan, targets=trg)
  call check(gpufmm_laplace_plan_associated(plan), 'plan created')
  call gpufmm_laplace_evaluate(plan, charges=q, dipoles=d, pot=pot, grad=grad)
  call check_accuracy('charges + dipoles', pot, rpot, grad, rgrad)
  info = gpufmm_laplace_plan_info(plan)
  call check(info%p >= 1 .and. info%nsrc == ns .and. info%ntrg == nt, 'plan_info: p, nsrc, ntrg')
  call check(info%t_total >= 0 .and. info%plan_seconds >= 0, 'plan_info: times')
  call check(info%calibration_evaluates >= 0 .and. info%measured_eps >= 0 .and. info%measured_eps < eps, &
       'plan_info: calibration (evaluates, measured error below eps)')
  write (output_unit, '(a, i0, a, i0, a, i0)') '  p = ', info%p, ', l_max = ', info%l_max, &
       ', source boxes = ', info%source_boxes

  call check(info%cube_padding >= 1 .and. info%cube_padding < 2, 'plan_info: cube_padding in [1, 2)')

  ! a deeper tree than the cost model picks for so few points, so that the
  ! expansions and translations take part; its cube 1.5 times the points'
  ! (options%cube_padding, the last field of the C struct)
  deep = opts
  deep%s_max = 32
  deep%tree = GPUFMM_LAPLACE_TREE_UNIFORM
  deep%cube_padding = 1.5_real64
  call gpufmm_laplace_plan_create(ctx, deep, src, plan2, targets=trg)
  call gpufmm_laplace_evaluate(plan2, charges=q, dipoles=d, pot=pot, grad=grad)
  info = gpufmm_laplace_plan_info(plan2)
  write (output_unit, '(a, i0, a, i0, a, i0, a, i0)') '  s_max = 32: p = ', info%p, ', l_max = ', info%l_max, &
       ', source boxes = ', info%source_boxes, ', M2L translations = ', info%m2l_translations
  call check(info%l_max >= 2, 's_max = 32 gives a tree of depth >= 2')
  call check(info%cube_padding == 1.5_real64, 'cube_padding = 1.5 reported')
  call check_accuracy('charges + dipoles, s_max = 32', pot, rpot, grad, rgrad)
  call gpufmm_laplace_plan_destroy(plan2)

  ! second evaluate, new charges, no dipoles, potential only then gradient only
  call gpufmm_laplace_direct(ctx, src, charges=q2, targets=trg, pot=rpot, grad=rgrad)
  grad = 7
  call gpufmm_laplace_evaluate(plan, charges=q2, pot=pot)
  call check_accuracy('new charges, pot only', pot=pot, ref_pot=rpot)
  call check(all(grad == 7), 'grad not wanted: untouched')
  call gpufmm_laplace_evaluate(plan, charges=q2, grad=grad)
  call check_accuracy('new charges, grad only', grad=grad, ref_grad=rgrad)

  ! the array variant: charges and potentials stay in gpufmm arrays
  call gpufmm_array_create_like(ctx, q2, dq)
  call gpufmm_array_create_like(ctx, pot, dpot)
  call gpufmm_array_upload(dq, q2)
  call gpufmm_laplace_evaluate_arrays(plan, charges=dq, pot=dpot)
  pot = 0
  call gpufmm_array_download(dpot, pot)
  call check_accuracy('evaluate_arrays, pot', pot=pot, ref_pot=rpot)

  ! dipoles only
  call gpufmm_laplace_direct(ctx, src, dipoles=d, targets=trg, pot=rpot, grad=rgrad)
  call gpufmm_laplace_evaluate(plan, dipoles=d, pot=pot, grad=grad)
  call check_accuracy('dipoles only', pot, rpot, grad, rgrad)

  ! ------------------------------------------------------------------ plan at the sources, one-shot
  write (output_unit, '(a)') 'module API, at the sources:'
  call gpufmm_laplace_direct(ctx, src, charges=q, dipoles=d, pot=rspot, grad=rsgrad)
  call gpufmm_laplace_plan_create(ctx, opts, src, stale)
  call gpufmm_laplace_evaluate(stale, charges=q, dipoles=d, pot=spot, grad=sgrad)
  call check_accuracy('plan at the sources', spot, rspot, sgrad, rsgrad)
  call gpufmm_laplace_plan_destroy(stale)
  call gpufmm_laplace_plan_create(ctx, deep, src, plan2)
  call gpufmm_laplace_evaluate(plan2, charges=q, dipoles=d, pot=spot, grad=sgrad)
  call check_accuracy('plan at the sources, s_max = 32', spot, rspot, sgrad, rsgrad)
  call gpufmm_laplace_plan_destroy(plan2)
  call check(.not. gpufmm_laplace_plan_associated(stale), 'destroy nulls the handle')
  spot = 0
  sgrad = 0
  call gpufmm_laplace(ctx, eps, src, charges=q, dipoles=d, pot=spot, grad=sgrad)
  call check_accuracy('one-shot gpufmm_laplace', spot, rspot, sgrad, rsgrad)
  ! an unallocated allocatable is an absent argument
  call gpufmm_laplace(ctx, eps, src, charges=q, dipoles=none, pot=spot)
  call gpufmm_laplace_direct(ctx, src, charges=q, pot=rspot)
  call check_accuracy('unallocated dipoles = absent', pot=spot, ref_pot=rspot)
  ! float direct sum against double
  call gpufmm_laplace_direct(ctx, src, charges=q, pot=spot, precision=GPUFMM_FLOAT32)
  call check(rel_l2(spot, rspot) <= 1.0e-5_real64, 'direct sum in float within 1e-5 of double')

  ! ------------------------------------------------------------------ FORTRAN 77-style routines
  write (output_unit, '(a)') 'FORTRAN 77-style routines:'
  call gpufmm_laplace_direct(ctx, src, charges=q, dipoles=d, targets=trg, pot=rpot, grad=rgrad)
  call gpufmm_lfmm3d(eps, ns, src, 1, q, 1, d, nt, trg, 1, pot, 1, grad, ier)
  call expect(ier, GPUFMM_SUCCESS, '', 'gpufmm_lfmm3d')
  call check_accuracy('gpufmm_lfmm3d, targets', pot, rpot, grad, rgrad)
  call gpufmm_laplace_direct(ctx, src, charges=q, pot=rspot, grad=rsgrad)
  call gpufmm_lfmm3d(eps, ns, src, 1, q, 0, dum3, 0, dum3, 1, spot, 1, sgrad, ier)
  call expect(ier, GPUFMM_SUCCESS, '', 'gpufmm_lfmm3d at the sources')
  call check_accuracy('gpufmm_lfmm3d, at the sources', spot, rspot, sgrad, rsgrad)
  pot = 0
  call gpufmm_ldirect3d(ns, src, 1, q, 1, d, nt, trg, 1, pot, 0, dum3, ier)
  call expect(ier, GPUFMM_SUCCESS, '', 'gpufmm_ldirect3d')
  call gpufmm_laplace_direct(ctx, src, charges=q, dipoles=d, targets=trg, pot=rpot)
  call check(rel_l2(pot, rpot) <= 1.0e-13_real64, 'gpufmm_ldirect3d = gpufmm_laplace_direct')
  sgrad = 0
  call gpufmm_ldirect3d(ns, src, 0, dum, 1, d, 0, dum3, 0, dum, 1, sgrad, ier)
  call gpufmm_laplace_direct(ctx, src, dipoles=d, grad=rsgrad)
  call check(ier == 0 .and. rel_l2(reshape(sgrad, [3 * ns]), reshape(rsgrad, [3 * ns])) <= 1.0e-13_real64, &
       'gpufmm_ldirect3d dipoles at the sources, grad only')

  ! ------------------------------------------------------------------ error paths
  write (output_unit, '(a)') 'error paths:'
  pot = 42
  grad = 43
  call gpufmm_laplace_evaluate(plan, pot=pot, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'charges', 'evaluate without charges or dipoles')
  call gpufmm_laplace_evaluate(plan, charges=q, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'pot', 'evaluate without pot or grad')
  call gpufmm_laplace_evaluate(plan, charges=bad_q, pot=pot, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'charges', 'evaluate with ns-1 charges')
  call gpufmm_laplace_evaluate(plan, charges=q, pot=spot, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'pot', 'evaluate with pot of the wrong size')
  call gpufmm_laplace_evaluate(plan, charges=q, grad=sgrad, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'grad', 'evaluate with grad of the wrong size')
  nan_q = q
  nan_q(17) = ieee_nan()
  call gpufmm_laplace_evaluate(plan, charges=nan_q, pot=pot, grad=grad, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, '16', 'evaluate with a NaN charge (0-based index 16)')
  call check(all(pot == 42) .and. all(grad == 43), 'outputs unchanged after failed evaluates')

  bad_src = 0
  call gpufmm_laplace_plan_create(ctx, opts, bad_src, stale, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'sources', 'plan_create with sources(2, n)')
  call check(.not. gpufmm_laplace_plan_associated(stale), 'failed plan_create leaves the handle null')
  defaults%eps = 2
  call gpufmm_laplace_plan_create(ctx, defaults, src, stale, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'eps', 'plan_create with eps = 2')

  stale = plan
  call gpufmm_laplace_plan_destroy(plan)
  call gpufmm_laplace_evaluate(stale, charges=q, pot=pot, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'plan', 'evaluate on a destroyed plan')
  info = gpufmm_laplace_plan_info(stale, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'plan', 'plan_info on a destroyed plan')

  call gpufmm_laplace_direct(ctx, src, charges=q, pot=spot, precision=GPUFMM_INT32, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'precision', 'direct with precision GPUFMM_INT32')
  call gpufmm_laplace_direct(ctx, bad_src, charges=q, pot=spot, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'sources', 'direct with sources(2, n)')
  call gpufmm_laplace(ctx, eps, src, charges=q, dipoles=d, pot=pot, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'pot', 'one-shot with pot(nt) at the sources')
  call gpufmm_laplace(ctx, -1.0_real64, src, charges=q, pot=spot, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'eps', 'one-shot with eps = -1')

  call gpufmm_lfmm3d(eps, ns, src, 2, q, 0, dum3, nt, trg, 1, pot, 0, dum3, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'ifcharge', 'gpufmm_lfmm3d with ifcharge = 2')
  call gpufmm_errmsg(msg)
  call check(index(msg, 'ifcharge') > 0, 'gpufmm_errmsg returns the message')
  call gpufmm_lfmm3d(eps, ns, src, 0, q, 0, dum3, nt, trg, 1, pot, 0, dum3, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'ifdipole', 'gpufmm_lfmm3d with nothing in')
  call gpufmm_lfmm3d(eps, ns, src, 1, q, 0, dum3, nt, trg, 0, pot, 0, dum3, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'ifgrad', 'gpufmm_lfmm3d with nothing out')
  call gpufmm_lfmm3d(eps, -5, src, 1, q, 0, dum3, nt, trg, 1, pot, 0, dum3, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'ns', 'gpufmm_lfmm3d with ns = -5')
  call gpufmm_ldirect3d(ns, src, 1, q, 0, dum3, -1, trg, 1, pot, 0, dum3, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'nt', 'gpufmm_ldirect3d with nt = -1')
  call gpufmm_ldirect3d(ns, src, 1, nan_q, 0, dum3, nt, trg, 1, pot, 0, dum3, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'charge', 'gpufmm_ldirect3d with a NaN charge')
  call gpufmm_lfmm3d(0.0_real64, ns, src, 1, q, 0, dum3, nt, trg, 1, pot, 0, dum3, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'eps', 'gpufmm_lfmm3d with eps = 0')
  call check(all(pot == 42) .and. all(grad == 43), 'outputs unchanged after failed F77 calls')

  call gpufmm_array_destroy(dq)
  call gpufmm_array_destroy(dpot)
  call gpufmm_context_destroy(ctx)

  call finish_checks('test_fortran_fmm')

contains

  function ieee_nan() result(x)
    use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
    real(real64) :: x
    x = ieee_value(x, ieee_quiet_nan)
  end function ieee_nan

end program test_fortran_fmm
