! test_fortran_fft - the Fortran FMM-FFT API (module gpufmm_fft) on random
! complex input in [-1, 1]^2, in complex128 and complex64, through host
! arrays (out of place and in place) and through gpufmm arrays:
!  - at N = 256, forward and inverse against a direct DFT computed here in
!    double (exact twiddles): relative L2 error <= the plan's eps;
!  - at N = 3*2^12, inverse(forward(x)) = N x: relative L2 error <= 2 eps;
!  - the device-array path gives the host path's values;
!  - plan_create with the options by keyword and in a gpufmm_fft_options
!    (P, M_L, B, Q reach the plan), plan_info (parameters, the model, stage
!    times, stage names);
!  - the error paths through `status`: N = 18 not admitted, options out of
!    range, host arrays of the wrong kind or size, a NaN input (output
!    untouched), a direction the plan was not made for, gpufmm arrays of
!    the wrong dtype or size, a destroyed plan.
! Everything made is destroyed and deallocated (the cpu label runs under
! LeakSanitizer in CI). Runs on the CPU backend unless GPUFMM_TEST_DEVICE
! names another device.
program test_fortran_fft
  use, intrinsic :: iso_c_binding, only: c_double_complex, c_float_complex
  use, intrinsic :: iso_fortran_env, only: int64, real32, real64, output_unit
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use gpufmm
  use gpufmm_test_support, expect => expect_status
  implicit none
  integer, parameter :: dp = real64
  integer, parameter :: n_small = 256, n_large = 3 * 2**12
  integer, parameter :: dtypes(2) = [GPUFMM_COMPLEX128, GPUFMM_COMPLEX64]
  character(len=10), parameter :: dtype_names(2) = ['complex128', 'complex64 ']
  type(gpufmm_context) :: ctx
  type(gpufmm_device_info) :: dev
  type(gpufmm_fft_options) :: opts, defaults
  type(gpufmm_fft_plan) :: plan, stale, pm
  type(gpufmm_fft_info) :: info
  type(gpufmm_array) :: da, db
  complex(c_double_complex), allocatable :: x(:), y(:), z(:), ref(:)
  complex(c_float_complex), allocatable :: xs(:), ys(:)
  integer :: id, st

  call gpufmm_context_create(ctx, test_device())
  dev = gpufmm_context_device_info(ctx)
  write (output_unit, '(a, a)') 'test_fortran_fft on ', trim(dev%name)
  call seed_random(2025)

  ! ------------------------------------------------------------------ options, stage names
  call gpufmm_fft_options_init(opts)
  call check(opts%n == defaults%n .and. opts%dtype == defaults%dtype .and. opts%eps == defaults%eps .and. &
       opts%p == defaults%p .and. opts%ml == defaults%ml .and. opts%b == defaults%b .and. opts%q == defaults%q &
       .and. opts%direction == defaults%direction .and. opts%tune == defaults%tune .and. opts%post == defaults%post, &
       'the default-initialised gpufmm_fft_options equals gpufmm_fft_options_init')
  call check(gpufmm_fft_stage_name(GPUFMM_FFT_STAGE_S2M) == 'S2M' .and. &
       gpufmm_fft_stage_name(GPUFMM_FFT_STAGE_M2L_B) == 'M2L-B' .and. &
       gpufmm_fft_stage_name(GPUFMM_FFT_STAGE_FFT_M) == 'FFT-M' .and. &
       gpufmm_fft_stage_name(GPUFMM_FFT_STAGES) == '?' .and. gpufmm_fft_stage_name(-1) == '?', &
       'gpufmm_fft_stage_name')

  do id = 1, 2
     ! ---------------------------------------------------------------- N = 256 against a direct DFT
     write (output_unit, '(a, a, i0, a)') trim(dtype_names(id)), ', N = ', n_small, ', against a direct DFT:'
     x = random_input(n_small, dtypes(id))
     call gpufmm_fft_plan_create(ctx, n_small, plan, dtype=dtypes(id))
     info = gpufmm_fft_plan_info(plan)
     call check_info(info, int(n_small, int64), dtypes(id))
     y = transform(plan, x, GPUFMM_FFT_FORWARD, .false.)
     call check_error('forward, host arrays', y, direct_dft(x, -1), info%eps)
     z = transform(plan, x, GPUFMM_FFT_FORWARD, .true.)
     call check(rel_l2(z, y) <= 10 * epsilon_of(dtypes(id)), 'forward: gpufmm arrays = host arrays')
     y = transform(plan, x, GPUFMM_FFT_INVERSE, .false.)
     call check_error('inverse, host arrays', y, direct_dft(x, 1), info%eps)
     z = transform(plan, x, GPUFMM_FFT_INVERSE, .true.)
     call check(rel_l2(z, y) <= 10 * epsilon_of(dtypes(id)), 'inverse: gpufmm arrays = host arrays')
     info = gpufmm_fft_plan_info(plan)
     call check(all(info%time >= 0) .and. info%t_total > 0, 'plan_info: stage times of the last execute')
     call gpufmm_fft_plan_destroy(plan)

     ! ---------------------------------------------------------------- N = 3*2^12: inverse(forward) = N identity
     write (output_unit, '(a, a, i0, a)') trim(dtype_names(id)), ', N = ', n_large, ', inverse(forward(x)) / N:'
     x = random_input(n_large, dtypes(id))
     call gpufmm_fft_plan_create(ctx, int(n_large, int64), plan, dtype=dtypes(id))
     info = gpufmm_fft_plan_info(plan)
     call check_info(info, int(n_large, int64), dtypes(id))
     y = transform(plan, x, GPUFMM_FFT_FORWARD, .false.)
     z = transform(plan, y, GPUFMM_FFT_INVERSE, .false., in_place=.true.) / n_large
     call check_error('host arrays (inverse in place)', z, x, 2 * info%eps)
     y = transform(plan, x, GPUFMM_FFT_FORWARD, .true.)
     z = transform(plan, y, GPUFMM_FFT_INVERSE, .true., in_place=.true.) / n_large
     call check_error('gpufmm arrays (inverse in place)', z, x, 2 * info%eps)
     call gpufmm_fft_plan_destroy(plan)
  end do

  ! ------------------------------------------------------------------ parameters set directly reach the plan
  write (output_unit, '(a)') 'complex128, N = 3*2^12, P = 24, M_L = 8, B = 3, Q = 18 (a gpufmm_fft_options):'
  x = random_input(n_large, GPUFMM_COMPLEX128)
  call gpufmm_fft_plan_create(ctx, n_large, plan)
  ref = transform(plan, x, GPUFMM_FFT_FORWARD, .false.)
  call gpufmm_fft_plan_destroy(plan)
  call gpufmm_fft_options_init(opts)
  opts%n = n_large
  opts%p = 24
  opts%ml = 8
  opts%b = 3
  opts%q = 18
  opts%direction = GPUFMM_FFT_FORWARD
  call gpufmm_fft_plan_create(ctx, opts, plan)
  info = gpufmm_fft_plan_info(plan)
  call check(info%p == 24 .and. info%ml == 8 .and. info%m == n_large / 24 .and. info%levels == 6 .and. &
       info%base == 3 .and. info%q == 18, 'p, ml, b and q reach the plan (M = 512, L = 6)')
  y = transform(plan, x, GPUFMM_FFT_FORWARD, .false.)
  call check_error('against the default plan', y, ref, 2 * info%eps)
  ! a forward-only plan refuses the inverse
  z = 7   ! (n_large elements)
  call gpufmm_fft_execute_host(plan, x, z, GPUFMM_FFT_INVERSE, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'direction', 'inverse on a forward-only plan')
  call check(all(z == (7, 0)), 'output untouched after the refused inverse')
  call gpufmm_fft_plan_destroy(plan)

  ! ------------------------------------------------------------------ POST in cuFFT's load: GPU only
  call gpufmm_fft_plan_create(ctx, n_large, plan, post=GPUFMM_FFT_POST_CALLBACK, status=st)
  if (dev%backend == GPUFMM_BACKEND_CUDA) then
     call check(st == GPUFMM_SUCCESS, 'post = GPUFMM_FFT_POST_CALLBACK on the GPU')
     if (st == GPUFMM_SUCCESS) then
        y = transform(plan, x, GPUFMM_FFT_FORWARD, .false.)
        call check_error('POST callback against the default plan', y, ref, 2 * info%eps)
        call gpufmm_fft_plan_destroy(plan)
     end if
  else
     call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'GPU context', 'post = GPUFMM_FFT_POST_CALLBACK on the CPU')
  end if

  ! ------------------------------------------------------------------ error paths
  write (output_unit, '(a)') 'error paths:'
  call gpufmm_fft_plan_create(ctx, 18, stale, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'admitted', 'plan_create with n = 18')
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, '16 and 24', 'n = 18: the nearest admitted sizes')
  call check(.not. gpufmm_fft_plan_associated(stale), 'failed plan_create leaves the handle null')
  call gpufmm_fft_plan_create(ctx, n_large, stale, p=24, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'ml', 'plan_create with p but not ml')
  call gpufmm_fft_plan_create(ctx, n_large, stale, q=GPUFMM_FFT_MAX_Q + 1, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'q', 'plan_create with q too large')
  call gpufmm_fft_plan_create(ctx, n_large, stale, dtype=GPUFMM_FLOAT64, status=st)
  call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'dtype', 'plan_create with dtype GPUFMM_FLOAT64')
  call gpufmm_fft_plan_create(ctx, n_large, stale, eps=1e-20_dp, status=st)
  call expect(st, GPUFMM_ERROR_ACCURACY, 'eps', 'plan_create with eps = 1e-20')
  call check(.not. gpufmm_fft_plan_associated(stale), 'the handle stays null')

  call gpufmm_fft_plan_create(ctx, n_small, plan)
  x = random_input(n_small, GPUFMM_COMPLEX128)
  deallocate (y)
  allocate (y(n_small), xs(n_small), ys(n_small))
  y = 42
  xs = 1
  call gpufmm_fft_execute_host(plan, xs, ys, GPUFMM_FFT_FORWARD, status=st)
  call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'in', 'complex(c_float_complex) arrays on a complex128 plan')
  call gpufmm_fft_execute_host(plan, x(1:n_small - 1), y, GPUFMM_FFT_FORWARD, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'in', 'execute_host with in of N - 1 elements')
  call gpufmm_fft_execute_host(plan, x, y(1:n_small - 1), GPUFMM_FFT_FORWARD, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'out', 'execute_host with out of N - 1 elements')
  call gpufmm_fft_execute_host(plan, x(1:n_small - 1), GPUFMM_FFT_FORWARD, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'x', 'execute_host in place with N - 1 elements')
  call gpufmm_fft_execute_host(plan, x, y, 0, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'direction', 'execute_host with direction 0')
  z = x
  z(18) = cmplx(ieee_value(1.0_dp, ieee_quiet_nan), 0, kind=dp)
  call gpufmm_fft_execute_host(plan, z, y, GPUFMM_FFT_FORWARD, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, '17', 'execute_host with a NaN at 0-based index 17')
  call check(all(y == (42, 0)), 'outputs unchanged after failed execute_host calls')

  call gpufmm_array_create_like(ctx, xs, da)   ! complex64 on a complex128 plan
  call gpufmm_array_create_like(ctx, x(1:n_small - 1), db)
  call gpufmm_fft_execute(plan, da, da, GPUFMM_FFT_FORWARD, status=st)
  call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'in', 'execute on a complex64 array, complex128 plan')
  call gpufmm_fft_execute(plan, db, db, GPUFMM_FFT_FORWARD, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'in', 'execute on an array of N - 1 elements')
  call gpufmm_array_destroy(da)
  call gpufmm_array_destroy(db)

  stale = plan
  call gpufmm_fft_plan_destroy(plan)
  call check(.not. gpufmm_fft_plan_associated(plan), 'destroy nulls the handle')
  call gpufmm_fft_plan_destroy(plan, status=st)
  call expect(st, GPUFMM_SUCCESS, '', 'destroying a null handle is a no-op')
  call gpufmm_fft_execute_host(plan, x, y, GPUFMM_FFT_FORWARD, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'plan', 'execute_host on a null plan')
  call gpufmm_fft_execute_host(stale, x, y, GPUFMM_FFT_FORWARD, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'plan', 'execute_host on a destroyed plan')
  info = gpufmm_fft_plan_info(stale, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'plan', 'plan_info on a destroyed plan')

  ! ------------------------------------------------------------------ plans over several GPUs
  write (output_unit, '(a)') 'gpufmm_fft_plan_create_multi:'
  call gpufmm_fft_options_init(opts)
  opts%n = n_small
  call gpufmm_fft_plan_create_multi([ctx, ctx], opts, pm, status=st)
  call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'ctxs', 'create_multi: one context twice (CPU, or one GPU)')
  call check(.not. gpufmm_fft_plan_associated(pm), 'a failed create_multi leaves the handle null')
  call gpufmm_fft_plan_create_multi([ctx], opts, plan)
  info = gpufmm_fft_plan_info(plan)
  call check(info%parts == 1 .and. info%n_local == n_small, 'one context: one part of N elements')
  x = random_input(n_small, GPUFMM_COMPLEX128)
  call gpufmm_fft_plan_create(ctx, opts, stale)
  ref = transform(stale, x, GPUFMM_FFT_FORWARD, .false.)
  call gpufmm_fft_plan_destroy(stale)
  y = transform(plan, x, GPUFMM_FFT_FORWARD, .false.)
  call check(all(y == ref), 'create_multi with one context: the plain plan''s values')
  call gpufmm_array_create_like(ctx, x, da)
  call gpufmm_array_upload(da, x)
  call gpufmm_fft_execute_multi(plan, [da], [da], GPUFMM_FFT_FORWARD)
  call gpufmm_array_download(da, y)
  call check(maxval(abs(y - ref)) <= 1e-12_dp * maxval(abs(ref)), 'execute_multi on one array in place')
  call gpufmm_fft_execute_multi(plan, [da, da], [da, da], GPUFMM_FFT_FORWARD, status=st)
  call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'one array per GPU', 'execute_multi with two arrays on one part')
  call gpufmm_array_destroy(da)
  call gpufmm_fft_plan_destroy(plan)

  call gpufmm_context_destroy(ctx)
  deallocate (x, y, z, ref, xs, ys)
  call finish_checks('test_fortran_fft')

contains

  !> n uniform random complex numbers in [-1, 1]^2, rounded to complex64
  !> when dtype is GPUFMM_COMPLEX64 (so that the reference sees the input
  !> the transform sees).
  function random_input(n, dtype) result(v)
    integer, intent(in) :: n, dtype
    complex(c_double_complex), allocatable :: v(:)
    real(dp), allocatable :: re(:), im(:)
    allocate (re(n), im(n))
    call random_number(re)
    call random_number(im)
    v = cmplx(2 * re - 1, 2 * im - 1, kind=dp)
    if (dtype == GPUFMM_COMPLEX64) v = cmplx(v, kind=c_float_complex)
  end function random_input

  !> The plan's transform of x in direction dir, returned in double: through
  !> host arrays (in place when in_place), or through gpufmm arrays (one
  !> array when in_place), of the plan's precision.
  function transform(p, x, dir, on_device, in_place) result(y)
    type(gpufmm_fft_plan), intent(in) :: p
    complex(c_double_complex), intent(in) :: x(:)
    integer, intent(in) :: dir
    logical, intent(in) :: on_device
    logical, intent(in), optional :: in_place
    complex(c_double_complex), allocatable :: y(:)
    complex(c_float_complex), allocatable :: xs(:), ys(:)
    type(gpufmm_fft_info) :: inf
    logical :: same
    same = .false.
    if (present(in_place)) same = in_place
    inf = gpufmm_fft_plan_info(p)
    y = x
    if (inf%dtype == GPUFMM_COMPLEX128) then
       if (on_device) call on_arrays(p, dir, same, inf%dtype, y8=y)
       if (.not. on_device .and. same) call gpufmm_fft_execute_host(p, y, dir)
       if (.not. on_device .and. .not. same) call gpufmm_fft_execute_host(p, x, y, dir)
    else
       xs = cmplx(x, kind=c_float_complex)
       ys = xs
       if (on_device) call on_arrays(p, dir, same, inf%dtype, y4=ys)
       if (.not. on_device .and. same) call gpufmm_fft_execute_host(p, ys, dir)
       if (.not. on_device .and. .not. same) call gpufmm_fft_execute_host(p, xs, ys, dir)
       y = cmplx(ys, kind=dp)
    end if
  end function transform

  !> y8 or y4 = the transform of itself through gpufmm arrays of dtype: in
  !> and out one array (same) or two.
  subroutine on_arrays(p, dir, same, dtype, y8, y4)
    type(gpufmm_fft_plan), intent(in) :: p
    integer, intent(in) :: dir, dtype
    logical, intent(in) :: same
    complex(c_double_complex), intent(inout), optional :: y8(:)
    complex(c_float_complex), intent(inout), optional :: y4(:)
    type(gpufmm_array) :: a, b
    integer :: n
    if (present(y8)) n = size(y8)
    if (present(y4)) n = size(y4)
    call gpufmm_array_create(ctx, dtype, [n], a)
    if (present(y8)) call gpufmm_array_upload(a, y8)
    if (present(y4)) call gpufmm_array_upload(a, y4)
    b = a
    if (.not. same) call gpufmm_array_create(ctx, dtype, [n], b)
    call gpufmm_fft_execute(p, a, b, dir)
    if (present(y8)) call gpufmm_array_download(b, y8)
    if (present(y4)) call gpufmm_array_download(b, y4)
    if (.not. same) call gpufmm_array_destroy(b)
    call gpufmm_array_destroy(a)
  end subroutine on_arrays

  !> X(k) = sum_j x(j) exp(sign 2 pi i (j-1)(k-1) / N) in double, with the
  !> twiddles from the exact index ((j-1)(k-1) mod N).
  function direct_dft(x, sign) result(xf)
    complex(c_double_complex), intent(in) :: x(:)
    integer, intent(in) :: sign
    complex(c_double_complex) :: xf(size(x))
    complex(c_double_complex) :: w(0:size(x) - 1)
    real(dp), parameter :: two_pi = 2 * acos(-1.0_dp)
    integer :: n, j, k
    n = size(x)
    do j = 0, n - 1
       w(j) = cmplx(cos(two_pi * j / n), sign * sin(two_pi * j / n), kind=dp)
    end do
    do k = 0, n - 1
       xf(k + 1) = sum(x * w(mod([(j * k, j = 0, n - 1)], n)))
    end do
  end function direct_dft

  !> The plan's parameters are consistent: N = P M, M = M_L 2^L, B <= L,
  !> Q in range, the dtype and backend, the roofline model.
  subroutine check_info(inf, n, dtype)
    type(gpufmm_fft_info), intent(in) :: inf
    integer(int64), intent(in) :: n
    integer, intent(in) :: dtype
    write (output_unit, '(2x, a, i0, a, i0, a, i0, a, i0, a, i0, a, es8.1)') 'P ', inf%p, ', M_L ', inf%ml, &
         ', L ', inf%levels, ', B ', inf%base, ', Q ', inf%q, ', eps ', inf%eps
    call check(inf%n == n .and. inf%p * inf%m == n .and. inf%ml * 2_int64**inf%levels == inf%m .and. &
         inf%base >= 2 .and. inf%base <= inf%levels .and. inf%q >= 2 .and. inf%q <= GPUFMM_FFT_MAX_Q, &
         'plan_info: N = P M_L 2^L, B, Q')
    call check(inf%dtype == dtype .and. inf%eps > 0 .and. inf%predicted_error > 0 .and. &
         inf%predicted_error <= inf%eps .and. inf%plan_seconds >= 0, 'plan_info: dtype, eps, predicted error')
    ! (M2M, M2L and L2L have nothing to do when L = B)
    call check(inf%gamma > 0 .and. inf%beta > 0 .and. all(inf%flops >= 0) .and. all(inf%bytes >= 0) .and. &
         all(inf%model >= 0) .and. inf%model(GPUFMM_FFT_STAGE_S2M) > 0 .and. inf%model(GPUFMM_FFT_STAGE_S2T) > 0 &
         .and. inf%model(GPUFMM_FFT_STAGE_FFT_P) > 0 .and. inf%model(GPUFMM_FFT_STAGE_FFT_M) > 0, &
         'plan_info: the roofline model of the stages')
    if (test_device() == GPUFMM_DEVICE_CPU) call check(inf%backend == GPUFMM_BACKEND_CPU, 'plan_info: backend')
  end subroutine check_info

  !> Relative L2 error of a against ref <= tol, on one line.
  subroutine check_error(what, a, ref, tol)
    character(len=*), intent(in) :: what
    complex(c_double_complex), intent(in) :: a(:), ref(:)
    real(dp), intent(in) :: tol
    real(dp) :: e
    e = rel_l2(a, ref)
    write (output_unit, '(2x, a, a, es9.2, a, es8.1, a)') what, ': error', e, ' (bound', tol, ')'
    call check(e <= tol, what // ': error above the bound')
  end subroutine check_error

  real(dp) function rel_l2(a, ref)
    complex(c_double_complex), intent(in) :: a(:), ref(:)
    rel_l2 = sqrt(sum(abs(a - ref)**2) / sum(abs(ref)**2))
  end function rel_l2

  !> The unit roundoff of the plan's precision.
  real(dp) function epsilon_of(dtype)
    integer, intent(in) :: dtype
    epsilon_of = epsilon(1.0_dp)
    if (dtype == GPUFMM_COMPLEX64) epsilon_of = epsilon(1.0_real32)
  end function epsilon_of

end program test_fortran_fft
