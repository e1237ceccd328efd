! test_fortran_treecode - the Fortran treecode API (module
! gpufmm_treecode_mod and the FORTRAN 77-style gpufmm_treecode3d of
! gpufmm_f77.f90) against gpufmm_direct in double on 10000 random points in
! the unit cube: Coulomb and Yukawa (kappa 0.5), eps 1e-4 and 1e-6, every
! compute type (PC, CP, CC), relative L2 error of pot and grad <= eps
! (papers/001 eq. 16). (At this N the CPU plans of eps 1e-6 sum directly;
! the cases of eps 1e-4 and those with small clusters go through proxies. N
! is kept small because the cpu label also runs under the sanitizers; the
! C++ tests sweep the accuracy.) Then the options theta, degree, leaf_size,
! batch_size, type and precision reaching the plan (CC with small clusters:
! proxies on both sides); separate targets through proxies, plan reuse, the
! device-array entry point, the one-shot, gpufmm_treecode3d against the
! module, and the error paths through `status` and `ier` (outputs
! unchanged). Everything made is destroyed and deallocated (the cpu label
! runs under LeakSanitizer in CI).
!
! Runs on the CPU backend (CI). GPUFMM_TEST_DEVICE picks another device for
! the module API; gpufmm_treecode3d always runs on the default device, so it
! is compared with the module on a context of the default device.
program test_fortran_treecode
  use, intrinsic :: iso_fortran_env, only: int64, real64, output_unit
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use gpufmm
  use gpufmm_test_support, expect => expect_status
  implicit none
  integer, parameter :: n = 10000, m = 2000
  real(real64), parameter :: kappa = 0.5_real64
  real(real64), parameter :: epss(2) = [1.0e-2_real64, 1.0e-6_real64]
  integer, parameter :: types(3) = [GPUFMM_TREECODE_PC, GPUFMM_TREECODE_CP, GPUFMM_TREECODE_CC]
  character(len=2), parameter :: type_names(3) = ['PC', 'CP', 'CC']
  type(gpufmm_context) :: ctx, ctx_default
  type(gpufmm_device_info) :: dev
  type(gpufmm_kernel) :: kernels(2)
  character(len=7), parameter :: kernel_names(2) = ['Coulomb', 'Yukawa ']
  type(gpufmm_treecode_options) :: opts, defaults
  type(gpufmm_treecode_plan) :: plan, stale
  type(gpufmm_treecode_info) :: info
  type(gpufmm_array) :: dq, dpot
  real(real64), allocatable :: src(:, :), q(:), q2(:), trg(:, :), pot(:), grad(:, :), rpot(:), rgrad(:, :)
  real(real64), allocatable :: tpot(:), tgrad(:, :), rtpot(:), rtgrad(:, :), pot77(:), grad77(:, :)
  real(real64) :: bad_src(2, 10), dum(1), dum3(3, 1)
  character(len=200) :: msg
  integer :: ik, ie, it, st, ier

  call gpufmm_context_create(ctx, test_device())
  call gpufmm_context_create(ctx_default, GPUFMM_DEVICE_DEFAULT)
  dev = gpufmm_context_device_info(ctx)
  write (output_unit, '(a, a)') 'test_fortran_treecode on ', trim(dev%name)
  allocate (src(3, n), q(n), q2(n), trg(3, m), pot(n), grad(3, n), rpot(n), rgrad(3, n))
  allocate (tpot(m), tgrad(3, m), rtpot(m), rtgrad(3, m), pot77(m), grad77(3, m))
  call seed_random(2025)
  call random_number(src)
  call random_number(trg)
  call random_number(q)
  q = 2 * q - 1
  call random_number(q2)
  q2 = 2 * q2 - 1
  call gpufmm_kernel_init(kernels(1), GPUFMM_KERNEL_LAPLACE)
  call gpufmm_kernel_init(kernels(2), GPUFMM_KERNEL_YUKAWA, [kappa])

  ! ------------------------------------------------------------------ options
  call gpufmm_treecode_options_init(opts)
  call check(opts%eps == defaults%eps .and. opts%theta == defaults%theta .and. opts%degree == defaults%degree &
       .and. opts%leaf_size == defaults%leaf_size .and. opts%batch_size == defaults%batch_size .and. &
       opts%type == defaults%type .and. opts%precision == defaults%precision .and. opts%grad == defaults%grad .and. &
       opts%kernel%type == defaults%kernel%type .and. opts%kernel%nparams == defaults%kernel%nparams, &
       'the default-initialised gpufmm_treecode_options equals gpufmm_treecode_options_init')

  ! ------------------------------------------------------------------ accuracy: kernel x eps x type, at the sources
  do ik = 1, 2
     write (output_unit, '(a, a, a)') trim(kernel_names(ik)), ', at the sources:'
     call gpufmm_direct(ctx, kernels(ik), src, q, pot=rpot, grad=rgrad)
     do ie = 1, 2
        do it = 1, 3
           opts%kernel = kernels(ik)
           opts%eps = epss(ie)
           opts%type = types(it)
           call evaluate_at_sources(opts, info)
           call check_errors(type_names(it), epss(ie), pot, rpot, grad, rgrad, info)
           call check(info%nsrc == n .and. info%ntrg == n .and. info%type == types(it) .and. &
                info%theta > 0 .and. info%theta < 1 .and. info%degree >= 0 .and. &
                info%degree <= GPUFMM_TREECODE_MAX_DEGREE .and. info%source_clusters > 0 .and. &
                info%t_total >= 0 .and. info%plan_seconds >= 0, 'plan_info: sizes, parameters, times')
           ! at eps 1e-6 (degree 10: 1331 proxies a cluster) the CPU sums this N directly
           if (ie == 1) call check(info%approx_interactions > 0, type_names(it) // ' at eps 1e-2: proxies take part')
        end do
     end do
  end do

  ! ------------------------------------------------------------------ the other options reach the plan
  ! (rpot, rgrad: Yukawa at the sources, from the loop above)
  write (output_unit, '(a)') 'Yukawa, at the sources, options set:'
  opts = yukawa_options(0.6_real64, 5, 64, 128)
  opts%type = GPUFMM_TREECODE_CC
  call evaluate_at_sources(opts, info)
  call check(info%theta == opts%theta .and. info%degree == opts%degree .and. info%leaf_size == opts%leaf_size &
       .and. info%batch_size == opts%batch_size .and. info%type == opts%type, &
       'theta, degree, leaf_size, batch_size and type reach the plan')
  call check(info%source_proxy_clusters > 0 .and. info%target_proxy_clusters > 0 .and. &
       info%approx_interactions > 0, 'small clusters: proxies on both sides')
  call check_errors('CC, theta 0.6, degree 5, N_L 64, N_B 128', 1.0e-4_real64, pot, rpot, grad, rgrad, info)
  opts = yukawa_options()
  opts%eps = 1.0e-4_real64
  opts%precision = GPUFMM_FLOAT32
  call evaluate_at_sources(opts, info)
  call check(info%precision == GPUFMM_FLOAT32, 'precision reaches the plan')
  call check_errors('PC in float', opts%eps, pot, rpot, grad, rgrad, info)

  ! ------------------------------------------------------------------ plan reuse, outputs, device arrays
  ! small clusters and a low degree, so that proxies take part: the error
  ! is checked against 1e-4 (the calibration predicts 3e-4 for theta 0.7,
  ! degree 5; about 2e-6 is reached)
  write (output_unit, '(a)') 'Yukawa, separate targets, plan reused:'
  opts = yukawa_options(0.7_real64, 5, 64, 64)
  call gpufmm_treecode_plan_create(ctx, opts, src, plan, targets=trg)
  info = gpufmm_treecode_plan_info(plan)
  call check(info%nsrc == n .and. info%ntrg == m .and. info%approx_interactions > 0, &
       'separate targets: sizes, proxies take part')
  call gpufmm_direct(ctx, kernels(2), src, q, trg, rtpot, rtgrad)
  call gpufmm_treecode_evaluate(plan, q, pot=tpot, grad=tgrad)
  call check_errors('charges q', 1.0e-4_real64, tpot, rtpot, tgrad, rtgrad, info)
  call gpufmm_direct(ctx, kernels(2), src, q2, trg, rtpot, rtgrad)
  tgrad = 7
  call gpufmm_treecode_evaluate(plan, q2, pot=tpot)
  call check(all(tgrad == 7), 'grad not wanted: untouched')
  call gpufmm_treecode_evaluate(plan, q2, grad=tgrad)
  call check_errors('new charges, pot then grad', 1.0e-4_real64, tpot, rtpot, tgrad, rtgrad)
  ! the array variant: charges and potentials stay in gpufmm arrays
  call gpufmm_array_create_like(ctx, q2, dq)
  call gpufmm_array_create_like(ctx, tpot, dpot)
  call gpufmm_array_upload(dq, q2)
  call gpufmm_treecode_evaluate_arrays(plan, dq, pot=dpot)
  pot77 = 0
  call gpufmm_array_download(dpot, pot77)
  call check(rel_l2(pot77, tpot) <= 1.0e-14_real64, 'evaluate_arrays = evaluate')

  ! ------------------------------------------------------------------ one-shot and FORTRAN 77
  write (output_unit, '(a)') 'one-shot and gpufmm_treecode3d (default device):'
  call gpufmm_treecode(ctx, kernels(2), 1.0e-6_real64, src, q2, trg, tpot, tgrad)
  call check_errors('one-shot gpufmm_treecode', 1.0e-6_real64, tpot, rtpot, tgrad, rtgrad)
  call gpufmm_treecode(ctx_default, kernels(2), 1.0e-6_real64, src, q2, trg, tpot, tgrad)
  call gpufmm_treecode3d(GPUFMM_KERNEL_YUKAWA, 1, [kappa], 1.0e-6_real64, n, src, q2, m, trg, 1, pot77, 1, grad77, ier)
  call expect(ier, GPUFMM_SUCCESS, '', 'gpufmm_treecode3d, targets')
  call check(rel_l2(pot77, tpot) <= 1.0e-12_real64 .and. rel_l2(flat(grad77), flat(tgrad)) <= 1.0e-12_real64, &
       'gpufmm_treecode3d = gpufmm_treecode (targets)')
  call gpufmm_treecode(ctx_default, kernels(1), 1.0e-4_real64, src, q, pot=rpot)
  call gpufmm_treecode3d(GPUFMM_KERNEL_LAPLACE, 0, dum, 1.0e-4_real64, n, src, q, 0, dum3, 1, pot, 0, dum3, ier)
  call expect(ier, GPUFMM_SUCCESS, '', 'gpufmm_treecode3d, at the sources')
  call check(rel_l2(pot, rpot) <= 1.0e-12_real64, 'gpufmm_treecode3d = gpufmm_treecode (at the sources, pot only)')

  ! ------------------------------------------------------------------ error paths
  write (output_unit, '(a)') 'error paths:'
  tpot = 42
  tgrad = 43
  call gpufmm_treecode_evaluate(plan, q(1:n - 1), pot=tpot, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'charges', 'evaluate with n-1 charges')
  call gpufmm_treecode_evaluate(plan, q, pot=pot, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'pot', 'evaluate with pot of the wrong size')
  call gpufmm_treecode_evaluate(plan, q, grad=grad, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'grad', 'evaluate with grad of the wrong size')
  call gpufmm_treecode_evaluate(plan, q, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'pot', 'evaluate without pot or grad')
  q2 = q
  q2(17) = ieee_value(q2(17), ieee_quiet_nan)
  call gpufmm_treecode_evaluate(plan, q2, pot=tpot, grad=tgrad, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, '16', 'evaluate with a NaN charge (0-based index 16)')
  call gpufmm_treecode_evaluate_arrays(plan, dpot, pot=dq, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'charges', 'evaluate_arrays with arrays swapped')
  call check(all(tpot == 42) .and. all(tgrad == 43), 'outputs unchanged after failed evaluates')

  call gpufmm_treecode_options_init(opts)
  opts%theta = 1.5_real64
  call gpufmm_treecode_plan_create(ctx, opts, src, stale, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'theta', 'plan_create with theta = 1.5')
  call check(.not. gpufmm_treecode_plan_associated(stale), 'failed plan_create leaves the handle null')
  call gpufmm_treecode_options_init(opts)
  opts%degree = GPUFMM_TREECODE_MAX_DEGREE + 1
  call gpufmm_treecode_plan_create(ctx, opts, src, stale, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'degree', 'plan_create with degree too large')
  call gpufmm_treecode_options_init(opts)
  opts%type = 3
  call gpufmm_treecode_plan_create(ctx, opts, src, stale, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'type', 'plan_create with type = 3')
  call gpufmm_treecode_options_init(opts)
  opts%kernel = kernels(2)
  opts%kernel%params(1) = -1
  call gpufmm_treecode_plan_create(ctx, opts, src, stale, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'kappa', 'plan_create with kappa = -1')
  call gpufmm_treecode_options_init(opts)
  bad_src = 0
  call gpufmm_treecode_plan_create(ctx, opts, bad_src, stale, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'sources', 'plan_create with sources(2, n)')
  call gpufmm_treecode_plan_create(ctx, opts, src, stale, targets=bad_src, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'targets', 'plan_create with targets(2, m)')
  call check(.not. gpufmm_treecode_plan_associated(stale), 'the handle stays null')

  call gpufmm_treecode(ctx, kernels(1), 2.0_real64, src, q, pot=pot, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'eps', 'one-shot with eps = 2')
  call gpufmm_treecode(ctx, kernels(1), 1.0e-4_real64, src, q, trg, pot=pot, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'pot', 'one-shot with pot(n) at m targets')

  call gpufmm_treecode3d(GPUFMM_KERNEL_YUKAWA, 1, [-kappa], 1.0e-6_real64, n, src, q, m, trg, 1, tpot, 1, tgrad, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'kappa', 'gpufmm_treecode3d with kappa < 0')
  call gpufmm_treecode3d(9, 0, dum, 1.0e-6_real64, n, src, q, m, trg, 1, tpot, 1, tgrad, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'type', 'gpufmm_treecode3d with ktype = 9')
  call gpufmm_treecode3d(GPUFMM_KERNEL_LAPLACE, -1, dum, 1.0e-6_real64, n, src, q, m, trg, 1, tpot, 1, tgrad, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'nparams', 'gpufmm_treecode3d with nparams = -1')
  call gpufmm_treecode3d(GPUFMM_KERNEL_LAPLACE, 0, dum, 1.0e-6_real64, n, src, q, m, trg, 2, tpot, 1, tgrad, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'ifpot', 'gpufmm_treecode3d with ifpot = 2')
  call gpufmm_errmsg(msg)
  call check(index(msg, 'ifpot') > 0, 'gpufmm_errmsg returns the message')
  call gpufmm_treecode3d(GPUFMM_KERNEL_LAPLACE, 0, dum, 1.0e-6_real64, n, src, q, m, trg, 0, tpot, 0, tgrad, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'ifgrad', 'gpufmm_treecode3d with nothing out')
  call gpufmm_treecode3d(GPUFMM_KERNEL_LAPLACE, 0, dum, 1.0e-6_real64, n, src, q, -1, trg, 1, tpot, 1, tgrad, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'nt', 'gpufmm_treecode3d with nt = -1')
  call gpufmm_treecode3d(GPUFMM_KERNEL_LAPLACE, 0, dum, 0.0_real64, n, src, q, m, trg, 1, tpot, 1, tgrad, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'eps', 'gpufmm_treecode3d with eps = 0')
  call gpufmm_treecode3d(GPUFMM_KERNEL_LAPLACE, 0, dum, 1.0e-6_real64, n, src, q2, m, trg, 1, tpot, 1, tgrad, ier)
  call expect(ier, GPUFMM_ERROR_INVALID_ARGUMENT, 'charge', 'gpufmm_treecode3d with a NaN charge')
  call check(all(tpot == 42) .and. all(tgrad == 43), 'outputs unchanged after failed F77 calls')

  stale = plan
  call gpufmm_treecode_plan_destroy(plan)
  call check(.not. gpufmm_treecode_plan_associated(plan), 'destroy nulls the handle')
  call gpufmm_treecode_evaluate(stale, q, pot=tpot, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'plan', 'evaluate on a destroyed plan')
  info = gpufmm_treecode_plan_info(stale, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'plan', 'plan_info on a destroyed plan')

  call gpufmm_array_destroy(dq)
  call gpufmm_array_destroy(dpot)
  call gpufmm_context_destroy(ctx_default)
  call gpufmm_context_destroy(ctx)
  deallocate (src, q, q2, trg, pot, grad, rpot, rgrad, tpot, tgrad, rtpot, rtgrad, pot77, grad77)
  call finish_checks('test_fortran_treecode')

contains

  !> The library's default options with the Yukawa kernel, and theta,
  !> degree, leaf_size and batch_size when given.
  function yukawa_options(theta, degree, leaf, batch) result(o)
    real(real64), intent(in), optional :: theta
    integer, intent(in), optional :: degree, leaf, batch
    type(gpufmm_treecode_options) :: o
    call gpufmm_treecode_options_init(o)
    o%kernel = kernels(2)
    if (present(theta)) o%theta = theta
    if (present(degree)) o%degree = degree
    if (present(leaf)) o%leaf_size = leaf
    if (present(batch)) o%batch_size = batch
  end function yukawa_options

  !> A plan of opts at the sources: charges q evaluated into pot and grad,
  !> its info, then destroyed.
  subroutine evaluate_at_sources(opts, info)
    type(gpufmm_treecode_options), intent(in) :: opts
    type(gpufmm_treecode_info), intent(out) :: info
    type(gpufmm_treecode_plan) :: p
    call gpufmm_treecode_plan_create(ctx, opts, src, p)
    call gpufmm_treecode_evaluate(p, q, pot=pot, grad=grad)
    info = gpufmm_treecode_plan_info(p)
    call gpufmm_treecode_plan_destroy(p)
  end subroutine evaluate_at_sources

  !> Relative L2 errors of pot and grad against the direct sum <= eps; one
  !> line, with the parameters the plan chose when its info is given.
  subroutine check_errors(what, eps, pot, ref_pot, grad, ref_grad, info)
    character(len=*), intent(in) :: what
    real(real64), intent(in) :: eps
    real(real64), intent(in) :: pot(:), ref_pot(:), grad(:, :), ref_grad(:, :)
    type(gpufmm_treecode_info), intent(in), optional :: info
    real(real64) :: ep, eg
    character(len=40) :: params
    ep = rel_l2(pot, ref_pot)
    eg = rel_l2(flat(grad), flat(ref_grad))
    params = ''
    if (present(info)) write (params, '(a, f4.2, a, i0, a)') ' (theta ', info%theta, ', degree ', info%degree, ')'
    write (output_unit, '(2x, a, a, es8.1, a, es9.2, a, es9.2, a)') what, ': eps', eps, &
         ', error pot', ep, ', grad', eg, trim(params)
    call check(ep <= eps, what // ': potential error above eps')
    call check(eg <= eps, what // ': gradient error above eps')
  end subroutine check_errors

  real(real64) function rel_l2(a, ref)
    real(real64), intent(in) :: a(:), ref(:)
    rel_l2 = sqrt(sum((a - ref)**2) / sum(ref**2))
  end function rel_l2

  function flat(a) result(v)
    real(real64), intent(in) :: a(:, :)
    real(real64) :: v(size(a))
    v = reshape(a, [size(a)])
  end function flat

end program test_fortran_treecode
