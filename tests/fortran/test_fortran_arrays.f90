! ============================================================================
! GENERATED FILE - DO NOT EDIT BY HAND.
! Made from tests/fortran/test_fortran_arrays.fypp by tools/gen-fortran; edit the template, run
!     tools/gen-fortran
! from the repository root and commit both (building does not need fypp:
! this file is checked in; the CTest fortran_generated_up_to_date fails when
! it is stale).
! ============================================================================
! test_fortran_arrays - the Fortran device-array API, every procedure for
! every kind (int32, int64, real32, real64, complex(real32), complex(real64))
! and host rank 1-3, compared with Fortran intrinsics; and the error paths
! through `status`, checking that a failed call changes nothing.
!
! Runs on the CPU backend (CI). Set GPUFMM_TEST_DEVICE to a device number to
! run it elsewhere: 0, 1, ... a GPU; -2 the default device; -1 the CPU.
! Exits with a non-zero code (error stop) if any check fails.
!
! The per-kind subroutines test_<k> and blas_<k> come from one template
! (tests/fortran/test_fortran_arrays.fypp), like the module they test.
module test_fortran_arrays_support
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64, output_unit
  use, intrinsic :: iso_c_binding, only: c_ptr, c_associated, c_null_ptr
  use gpufmm, itoa => gpufmm_itoa
  use gpufmm_test_support
  implicit none

  type(gpufmm_context) :: ctx

  !> max |a - b| <= tol * (1 + max |b|), rank-1 arrays (pass [m] for a matrix)
  interface close
     module procedure close_r4, close_r8, close_c4
     module procedure close_c8
  end interface close

contains

  ! ==================================================================== helpers

  !> The status of the call just made is `want`; the message is not empty.
  subroutine expect(st, want, what)
    integer, intent(in) :: st, want
    character(len=*), intent(in) :: what
    call check(st == want, what // ' (status ' // itoa(st) // ', expected ' // itoa(want) // ')')
    if (want /= GPUFMM_SUCCESS) call check(len(gpufmm_last_error_message()) > 0, &
         what // ': empty error message')
  end subroutine expect

  !> The last error message contains `word`.
  subroutine expect_message(word, what)
    character(len=*), intent(in) :: word, what
    call check(index(gpufmm_last_error_message(), word) > 0, what // ': message "' // &
         gpufmm_last_error_message() // '" does not mention ' // word)
  end subroutine expect_message

  subroutine check_shape(a, dtype, shp, what)
    type(gpufmm_array), intent(in) :: a
    integer, intent(in) :: dtype, shp(:)
    character(len=*), intent(in) :: what
    integer(int64) :: dims(3)
    integer :: r
    r = size(shp)
    dims = gpufmm_array_dims(a)
    call check(gpufmm_array_dtype(a) == dtype, what // ': dtype')
    call check(gpufmm_array_rank(a) == r, what // ': rank')
    call check(all(dims(1:r) == shp) .and. all(dims(r + 1:) == 1), what // ': dims')
    call check(gpufmm_array_size(a) == product(int(shp, int64)), what // ': size')
  end subroutine check_shape

  !> Test data: n values in [-1, 1) (integers in [-100, 100)).
  function rnd(n) result(x)
    integer, intent(in) :: n
    real(real64) :: x(n)
    call random_number(x)
    x = 2 * x - 1
  end function rnd
  function mk_i4(n) result(x)
    integer, intent(in) :: n
    integer(int32) :: x(n)
    x = int(floor(100 * rnd(n)), int32)
  end function mk_i4
  function mk_i8(n) result(x)
    integer, intent(in) :: n
    integer(int64) :: x(n)
    x = int(floor(100 * rnd(n)), int64) * 100000000_int64   ! beyond int32
  end function mk_i8
  function mk_r4(n) result(x)
    integer, intent(in) :: n
    real(real32) :: x(n)
    x = real(rnd(n), real32)
  end function mk_r4
  function mk_r8(n) result(x)
    integer, intent(in) :: n
    real(real64) :: x(n)
    x = rnd(n)
  end function mk_r8
  function mk_c4(n) result(x)
    integer, intent(in) :: n
    complex(real32) :: x(n)
    x = cmplx(rnd(n), rnd(n), real32)
  end function mk_c4
  function mk_c8(n) result(x)
    integer, intent(in) :: n
    complex(real64) :: x(n)
    x = cmplx(rnd(n), rnd(n), real64)
  end function mk_c8

  !> The 'C' operation: conjugate transpose (transpose for reals).
  function ht_r4(a) result(b)
    real(real32), intent(in) :: a(:, :)
    real(real32) :: b(size(a, 2), size(a, 1))
    b = transpose(a)
  end function ht_r4
  function ht_r8(a) result(b)
    real(real64), intent(in) :: a(:, :)
    real(real64) :: b(size(a, 2), size(a, 1))
    b = transpose(a)
  end function ht_r8
  function ht_c4(a) result(b)
    complex(real32), intent(in) :: a(:, :)
    complex(real32) :: b(size(a, 2), size(a, 1))
    b = conjg(transpose(a))
  end function ht_c4
  function ht_c8(a) result(b)
    complex(real64), intent(in) :: a(:, :)
    complex(real64) :: b(size(a, 2), size(a, 1))
    b = conjg(transpose(a))
  end function ht_c8

  logical function close_r4(a, b, tol)
    real(real32), intent(in) :: a(:), b(:)
    real(real64), intent(in) :: tol
    close_r4 = maxval(abs(a - b)) <= tol * (1 + maxval(abs(b)))
  end function close_r4
  logical function close_r8(a, b, tol)
    real(real64), intent(in) :: a(:), b(:)
    real(real64), intent(in) :: tol
    close_r8 = maxval(abs(a - b)) <= tol * (1 + maxval(abs(b)))
  end function close_r8
  logical function close_c4(a, b, tol)
    complex(real32), intent(in) :: a(:), b(:)
    real(real64), intent(in) :: tol
    close_c4 = maxval(abs(a - b)) <= tol * (1 + maxval(abs(b)))
  end function close_c4
  logical function close_c8(a, b, tol)
    complex(real64), intent(in) :: a(:), b(:)
    real(real64), intent(in) :: tol
    close_c8 = maxval(abs(a - b)) <= tol * (1 + maxval(abs(b)))
  end function close_c8

  ! ==================================================================== integer(int32)
  ! Every kind: create_like and queries, sync and async round trips for ranks
  ! 1-3, a rank-1 host filling a rank-3 array, fill, copy, copy_range, sum.
  subroutine test_i4()
    character(len=*), parameter :: t = 'integer(int32)'
    real(real64), parameter :: tol = 0.0_real64
    integer(int32) :: h1(7), h2(4, 5), h3(3, 2, 4), g1(7), g2(4, 5), g3(3, 2, 4), e1(7), v, r
    integer(int32), allocatable, target :: q1(:), q2(:, :), q3(:, :, :), p1(:), p2(:, :), p3(:, :, :)
    type(gpufmm_array) :: a1, a2, a3, b1

    h1 = mk_i4(7)
    h2 = reshape(mk_i4(20), shape(h2))
    h3 = reshape(mk_i4(24), shape(h3))

    call gpufmm_array_create_like(ctx, h1, a1)
    call gpufmm_array_create_like(ctx, h2, a2)
    call gpufmm_array_create_like(ctx, h3, a3)
    call check_shape(a1, GPUFMM_INT32, shape(h1), t // ' create_like rank 1')
    call check_shape(a2, GPUFMM_INT32, shape(h2), t // ' create_like rank 2')
    call check_shape(a3, GPUFMM_INT32, shape(h3), t // ' create_like rank 3')

    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_upload(a2, h2)
    call gpufmm_array_upload(a3, h3)
    call gpufmm_array_download(a1, g1)
    call gpufmm_array_download(a2, g2)
    call gpufmm_array_download(a3, g3)
    call check(all(g1 == h1), t // ' upload/download rank 1')
    call check(all(g2 == h2), t // ' upload/download rank 2')
    call check(all(g3 == h3), t // ' upload/download rank 3')

    ! async: the host arrays have TARGET and stay alive until synchronize
    q1 = h1(7:1:-1)
    q2 = h2(4:1:-1, :)
    q3 = h3(3:1:-1, :, :)
    allocate(p1, mold=q1)
    allocate(p2, mold=q2)
    allocate(p3, mold=q3)
    call gpufmm_array_upload_async(a1, q1)
    call gpufmm_array_upload_async(a2, q2)
    call gpufmm_array_upload_async(a3, q3)
    call gpufmm_array_download_async(a1, p1)
    call gpufmm_array_download_async(a2, p2)
    call gpufmm_array_download_async(a3, p3)
    call gpufmm_context_synchronize(ctx)
    call check(all(p1 == q1), t // ' async round trip rank 1')
    call check(all(p2 == q2), t // ' async round trip rank 2')
    call check(all(p3 == q3), t // ' async round trip rank 3')

    ! only the element count must match: a rank-1 host array fills a rank-3 array
    call gpufmm_array_upload(a3, reshape(h3, [size(h3)]))
    g3 = h3 - h3
    call gpufmm_array_download(a3, g3)
    call check(all(g3 == h3), t // ' rank-1 host into rank-3 array')

    ! fill
    v = 42_int32
    call gpufmm_array_fill(a2, v)
    call gpufmm_array_download(a2, g2)
    call check(all(g2 == v), t // ' fill')

    ! copy
    call gpufmm_array_create_like(ctx, h1, b1)
    call gpufmm_array_copy(a1, b1)            ! a1 holds q1 = reversed h1
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == q1), t // ' copy')

    ! copy_range, 1-based offsets: b1(2:4) = a1(5:7) (default integers) and
    ! b1(7) = a3(24) (int64 arguments; flat column-major index into rank 3)
    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_fill(b1, v)
    call gpufmm_array_copy_range(a1, 5, b1, 2, 3)
    call gpufmm_array_copy_range(a3, 24_int64, b1, 7_int64, 1_int64)
    call gpufmm_array_copy_range(a1, 1, b1, 1, 0)      ! count 0: nothing
    e1 = v
    e1(2:4) = h1(5:7)
    e1(7) = h3(3, 2, 4)
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == e1), t // ' copy_range')

    ! sum
    call gpufmm_array_sum(a3, r)
    call check(abs(r - sum(h3)) <= tol * sum(abs(h3)), t // ' sum')

    ! min and max (exact)
    call gpufmm_array_min(a3, r)
    call check(r == minval(h3), t // ' min')
    call gpufmm_array_max(a3, r)
    call check(r == maxval(h3), t // ' max')
    call gpufmm_array_min(a1, r)
    call check(r == minval(h1), t // ' min rank 1')
    call gpufmm_array_max(a1, r)
    call check(r == maxval(h1), t // ' max rank 1')

    call gpufmm_array_destroy(a1)
    call gpufmm_array_destroy(a2)
    call gpufmm_array_destroy(a3)
    call gpufmm_array_destroy(b1)
    call check(.not. gpufmm_array_associated(a1), t // ' destroy nulls the handle')
  end subroutine test_i4

  ! ==================================================================== integer(int64)
  ! Every kind: create_like and queries, sync and async round trips for ranks
  ! 1-3, a rank-1 host filling a rank-3 array, fill, copy, copy_range, sum.
  subroutine test_i8()
    character(len=*), parameter :: t = 'integer(int64)'
    real(real64), parameter :: tol = 0.0_real64
    integer(int64) :: h1(7), h2(4, 5), h3(3, 2, 4), g1(7), g2(4, 5), g3(3, 2, 4), e1(7), v, r
    integer(int64), allocatable, target :: q1(:), q2(:, :), q3(:, :, :), p1(:), p2(:, :), p3(:, :, :)
    type(gpufmm_array) :: a1, a2, a3, b1

    h1 = mk_i8(7)
    h2 = reshape(mk_i8(20), shape(h2))
    h3 = reshape(mk_i8(24), shape(h3))

    call gpufmm_array_create_like(ctx, h1, a1)
    call gpufmm_array_create_like(ctx, h2, a2)
    call gpufmm_array_create_like(ctx, h3, a3)
    call check_shape(a1, GPUFMM_INT64, shape(h1), t // ' create_like rank 1')
    call check_shape(a2, GPUFMM_INT64, shape(h2), t // ' create_like rank 2')
    call check_shape(a3, GPUFMM_INT64, shape(h3), t // ' create_like rank 3')

    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_upload(a2, h2)
    call gpufmm_array_upload(a3, h3)
    call gpufmm_array_download(a1, g1)
    call gpufmm_array_download(a2, g2)
    call gpufmm_array_download(a3, g3)
    call check(all(g1 == h1), t // ' upload/download rank 1')
    call check(all(g2 == h2), t // ' upload/download rank 2')
    call check(all(g3 == h3), t // ' upload/download rank 3')

    ! async: the host arrays have TARGET and stay alive until synchronize
    q1 = h1(7:1:-1)
    q2 = h2(4:1:-1, :)
    q3 = h3(3:1:-1, :, :)
    allocate(p1, mold=q1)
    allocate(p2, mold=q2)
    allocate(p3, mold=q3)
    call gpufmm_array_upload_async(a1, q1)
    call gpufmm_array_upload_async(a2, q2)
    call gpufmm_array_upload_async(a3, q3)
    call gpufmm_array_download_async(a1, p1)
    call gpufmm_array_download_async(a2, p2)
    call gpufmm_array_download_async(a3, p3)
    call gpufmm_context_synchronize(ctx)
    call check(all(p1 == q1), t // ' async round trip rank 1')
    call check(all(p2 == q2), t // ' async round trip rank 2')
    call check(all(p3 == q3), t // ' async round trip rank 3')

    ! only the element count must match: a rank-1 host array fills a rank-3 array
    call gpufmm_array_upload(a3, reshape(h3, [size(h3)]))
    g3 = h3 - h3
    call gpufmm_array_download(a3, g3)
    call check(all(g3 == h3), t // ' rank-1 host into rank-3 array')

    ! fill
    v = -7000000000_int64
    call gpufmm_array_fill(a2, v)
    call gpufmm_array_download(a2, g2)
    call check(all(g2 == v), t // ' fill')

    ! copy
    call gpufmm_array_create_like(ctx, h1, b1)
    call gpufmm_array_copy(a1, b1)            ! a1 holds q1 = reversed h1
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == q1), t // ' copy')

    ! copy_range, 1-based offsets: b1(2:4) = a1(5:7) (default integers) and
    ! b1(7) = a3(24) (int64 arguments; flat column-major index into rank 3)
    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_fill(b1, v)
    call gpufmm_array_copy_range(a1, 5, b1, 2, 3)
    call gpufmm_array_copy_range(a3, 24_int64, b1, 7_int64, 1_int64)
    call gpufmm_array_copy_range(a1, 1, b1, 1, 0)      ! count 0: nothing
    e1 = v
    e1(2:4) = h1(5:7)
    e1(7) = h3(3, 2, 4)
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == e1), t // ' copy_range')

    ! sum
    call gpufmm_array_sum(a3, r)
    call check(abs(r - sum(h3)) <= tol * sum(abs(h3)), t // ' sum')

    ! min and max (exact)
    call gpufmm_array_min(a3, r)
    call check(r == minval(h3), t // ' min')
    call gpufmm_array_max(a3, r)
    call check(r == maxval(h3), t // ' max')
    call gpufmm_array_min(a1, r)
    call check(r == minval(h1), t // ' min rank 1')
    call gpufmm_array_max(a1, r)
    call check(r == maxval(h1), t // ' max rank 1')

    call gpufmm_array_destroy(a1)
    call gpufmm_array_destroy(a2)
    call gpufmm_array_destroy(a3)
    call gpufmm_array_destroy(b1)
    call check(.not. gpufmm_array_associated(a1), t // ' destroy nulls the handle')
  end subroutine test_i8

  ! ==================================================================== real(real32)
  ! Every kind: create_like and queries, sync and async round trips for ranks
  ! 1-3, a rank-1 host filling a rank-3 array, fill, copy, copy_range, sum.
  subroutine test_r4()
    character(len=*), parameter :: t = 'real(real32)'
    real(real64), parameter :: tol = 1.0e-5_real64
    real(real32) :: h1(7), h2(4, 5), h3(3, 2, 4), g1(7), g2(4, 5), g3(3, 2, 4), e1(7), v, r
    real(real32), allocatable, target :: q1(:), q2(:, :), q3(:, :, :), p1(:), p2(:, :), p3(:, :, :)
    type(gpufmm_array) :: a1, a2, a3, b1

    h1 = mk_r4(7)
    h2 = reshape(mk_r4(20), shape(h2))
    h3 = reshape(mk_r4(24), shape(h3))

    call gpufmm_array_create_like(ctx, h1, a1)
    call gpufmm_array_create_like(ctx, h2, a2)
    call gpufmm_array_create_like(ctx, h3, a3)
    call check_shape(a1, GPUFMM_FLOAT32, shape(h1), t // ' create_like rank 1')
    call check_shape(a2, GPUFMM_FLOAT32, shape(h2), t // ' create_like rank 2')
    call check_shape(a3, GPUFMM_FLOAT32, shape(h3), t // ' create_like rank 3')

    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_upload(a2, h2)
    call gpufmm_array_upload(a3, h3)
    call gpufmm_array_download(a1, g1)
    call gpufmm_array_download(a2, g2)
    call gpufmm_array_download(a3, g3)
    call check(all(g1 == h1), t // ' upload/download rank 1')
    call check(all(g2 == h2), t // ' upload/download rank 2')
    call check(all(g3 == h3), t // ' upload/download rank 3')

    ! async: the host arrays have TARGET and stay alive until synchronize
    q1 = h1(7:1:-1)
    q2 = h2(4:1:-1, :)
    q3 = h3(3:1:-1, :, :)
    allocate(p1, mold=q1)
    allocate(p2, mold=q2)
    allocate(p3, mold=q3)
    call gpufmm_array_upload_async(a1, q1)
    call gpufmm_array_upload_async(a2, q2)
    call gpufmm_array_upload_async(a3, q3)
    call gpufmm_array_download_async(a1, p1)
    call gpufmm_array_download_async(a2, p2)
    call gpufmm_array_download_async(a3, p3)
    call gpufmm_context_synchronize(ctx)
    call check(all(p1 == q1), t // ' async round trip rank 1')
    call check(all(p2 == q2), t // ' async round trip rank 2')
    call check(all(p3 == q3), t // ' async round trip rank 3')

    ! only the element count must match: a rank-1 host array fills a rank-3 array
    call gpufmm_array_upload(a3, reshape(h3, [size(h3)]))
    g3 = h3 - h3
    call gpufmm_array_download(a3, g3)
    call check(all(g3 == h3), t // ' rank-1 host into rank-3 array')

    ! fill
    v = 1.5_real32
    call gpufmm_array_fill(a2, v)
    call gpufmm_array_download(a2, g2)
    call check(all(g2 == v), t // ' fill')

    ! copy
    call gpufmm_array_create_like(ctx, h1, b1)
    call gpufmm_array_copy(a1, b1)            ! a1 holds q1 = reversed h1
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == q1), t // ' copy')

    ! copy_range, 1-based offsets: b1(2:4) = a1(5:7) (default integers) and
    ! b1(7) = a3(24) (int64 arguments; flat column-major index into rank 3)
    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_fill(b1, v)
    call gpufmm_array_copy_range(a1, 5, b1, 2, 3)
    call gpufmm_array_copy_range(a3, 24_int64, b1, 7_int64, 1_int64)
    call gpufmm_array_copy_range(a1, 1, b1, 1, 0)      ! count 0: nothing
    e1 = v
    e1(2:4) = h1(5:7)
    e1(7) = h3(3, 2, 4)
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == e1), t // ' copy_range')

    ! sum
    call gpufmm_array_sum(a3, r)
    call check(abs(r - sum(h3)) <= tol * sum(abs(h3)), t // ' sum')

    ! min and max (exact)
    call gpufmm_array_min(a3, r)
    call check(r == minval(h3), t // ' min')
    call gpufmm_array_max(a3, r)
    call check(r == maxval(h3), t // ' max')
    call gpufmm_array_min(a1, r)
    call check(r == minval(h1), t // ' min rank 1')
    call gpufmm_array_max(a1, r)
    call check(r == maxval(h1), t // ' max rank 1')

    call gpufmm_array_destroy(a1)
    call gpufmm_array_destroy(a2)
    call gpufmm_array_destroy(a3)
    call gpufmm_array_destroy(b1)
    call check(.not. gpufmm_array_associated(a1), t // ' destroy nulls the handle')
  end subroutine test_r4

  ! ==================================================================== real(real64)
  ! Every kind: create_like and queries, sync and async round trips for ranks
  ! 1-3, a rank-1 host filling a rank-3 array, fill, copy, copy_range, sum.
  subroutine test_r8()
    character(len=*), parameter :: t = 'real(real64)'
    real(real64), parameter :: tol = 1.0e-13_real64
    real(real64) :: h1(7), h2(4, 5), h3(3, 2, 4), g1(7), g2(4, 5), g3(3, 2, 4), e1(7), v, r
    real(real64), allocatable, target :: q1(:), q2(:, :), q3(:, :, :), p1(:), p2(:, :), p3(:, :, :)
    type(gpufmm_array) :: a1, a2, a3, b1

    h1 = mk_r8(7)
    h2 = reshape(mk_r8(20), shape(h2))
    h3 = reshape(mk_r8(24), shape(h3))

    call gpufmm_array_create_like(ctx, h1, a1)
    call gpufmm_array_create_like(ctx, h2, a2)
    call gpufmm_array_create_like(ctx, h3, a3)
    call check_shape(a1, GPUFMM_FLOAT64, shape(h1), t // ' create_like rank 1')
    call check_shape(a2, GPUFMM_FLOAT64, shape(h2), t // ' create_like rank 2')
    call check_shape(a3, GPUFMM_FLOAT64, shape(h3), t // ' create_like rank 3')

    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_upload(a2, h2)
    call gpufmm_array_upload(a3, h3)
    call gpufmm_array_download(a1, g1)
    call gpufmm_array_download(a2, g2)
    call gpufmm_array_download(a3, g3)
    call check(all(g1 == h1), t // ' upload/download rank 1')
    call check(all(g2 == h2), t // ' upload/download rank 2')
    call check(all(g3 == h3), t // ' upload/download rank 3')

    ! async: the host arrays have TARGET and stay alive until synchronize
    q1 = h1(7:1:-1)
    q2 = h2(4:1:-1, :)
    q3 = h3(3:1:-1, :, :)
    allocate(p1, mold=q1)
    allocate(p2, mold=q2)
    allocate(p3, mold=q3)
    call gpufmm_array_upload_async(a1, q1)
    call gpufmm_array_upload_async(a2, q2)
    call gpufmm_array_upload_async(a3, q3)
    call gpufmm_array_download_async(a1, p1)
    call gpufmm_array_download_async(a2, p2)
    call gpufmm_array_download_async(a3, p3)
    call gpufmm_context_synchronize(ctx)
    call check(all(p1 == q1), t // ' async round trip rank 1')
    call check(all(p2 == q2), t // ' async round trip rank 2')
    call check(all(p3 == q3), t // ' async round trip rank 3')

    ! only the element count must match: a rank-1 host array fills a rank-3 array
    call gpufmm_array_upload(a3, reshape(h3, [size(h3)]))
    g3 = h3 - h3
    call gpufmm_array_download(a3, g3)
    call check(all(g3 == h3), t // ' rank-1 host into rank-3 array')

    ! fill
    v = 1.5_real64
    call gpufmm_array_fill(a2, v)
    call gpufmm_array_download(a2, g2)
    call check(all(g2 == v), t // ' fill')

    ! copy
    call gpufmm_array_create_like(ctx, h1, b1)
    call gpufmm_array_copy(a1, b1)            ! a1 holds q1 = reversed h1
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == q1), t // ' copy')

    ! copy_range, 1-based offsets: b1(2:4) = a1(5:7) (default integers) and
    ! b1(7) = a3(24) (int64 arguments; flat column-major index into rank 3)
    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_fill(b1, v)
    call gpufmm_array_copy_range(a1, 5, b1, 2, 3)
    call gpufmm_array_copy_range(a3, 24_int64, b1, 7_int64, 1_int64)
    call gpufmm_array_copy_range(a1, 1, b1, 1, 0)      ! count 0: nothing
    e1 = v
    e1(2:4) = h1(5:7)
    e1(7) = h3(3, 2, 4)
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == e1), t // ' copy_range')

    ! sum
    call gpufmm_array_sum(a3, r)
    call check(abs(r - sum(h3)) <= tol * sum(abs(h3)), t // ' sum')

    ! min and max (exact)
    call gpufmm_array_min(a3, r)
    call check(r == minval(h3), t // ' min')
    call gpufmm_array_max(a3, r)
    call check(r == maxval(h3), t // ' max')
    call gpufmm_array_min(a1, r)
    call check(r == minval(h1), t // ' min rank 1')
    call gpufmm_array_max(a1, r)
    call check(r == maxval(h1), t // ' max rank 1')

    call gpufmm_array_destroy(a1)
    call gpufmm_array_destroy(a2)
    call gpufmm_array_destroy(a3)
    call gpufmm_array_destroy(b1)
    call check(.not. gpufmm_array_associated(a1), t // ' destroy nulls the handle')
  end subroutine test_r8

  ! ==================================================================== complex(real32)
  ! Every kind: create_like and queries, sync and async round trips for ranks
  ! 1-3, a rank-1 host filling a rank-3 array, fill, copy, copy_range, sum.
  subroutine test_c4()
    character(len=*), parameter :: t = 'complex(real32)'
    real(real64), parameter :: tol = 1.0e-5_real64
    complex(real32) :: h1(7), h2(4, 5), h3(3, 2, 4), g1(7), g2(4, 5), g3(3, 2, 4), e1(7), v, r
    complex(real32), allocatable, target :: q1(:), q2(:, :), q3(:, :, :), p1(:), p2(:, :), p3(:, :, :)
    type(gpufmm_array) :: a1, a2, a3, b1

    h1 = mk_c4(7)
    h2 = reshape(mk_c4(20), shape(h2))
    h3 = reshape(mk_c4(24), shape(h3))

    call gpufmm_array_create_like(ctx, h1, a1)
    call gpufmm_array_create_like(ctx, h2, a2)
    call gpufmm_array_create_like(ctx, h3, a3)
    call check_shape(a1, GPUFMM_COMPLEX64, shape(h1), t // ' create_like rank 1')
    call check_shape(a2, GPUFMM_COMPLEX64, shape(h2), t // ' create_like rank 2')
    call check_shape(a3, GPUFMM_COMPLEX64, shape(h3), t // ' create_like rank 3')

    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_upload(a2, h2)
    call gpufmm_array_upload(a3, h3)
    call gpufmm_array_download(a1, g1)
    call gpufmm_array_download(a2, g2)
    call gpufmm_array_download(a3, g3)
    call check(all(g1 == h1), t // ' upload/download rank 1')
    call check(all(g2 == h2), t // ' upload/download rank 2')
    call check(all(g3 == h3), t // ' upload/download rank 3')

    ! async: the host arrays have TARGET and stay alive until synchronize
    q1 = h1(7:1:-1)
    q2 = h2(4:1:-1, :)
    q3 = h3(3:1:-1, :, :)
    allocate(p1, mold=q1)
    allocate(p2, mold=q2)
    allocate(p3, mold=q3)
    call gpufmm_array_upload_async(a1, q1)
    call gpufmm_array_upload_async(a2, q2)
    call gpufmm_array_upload_async(a3, q3)
    call gpufmm_array_download_async(a1, p1)
    call gpufmm_array_download_async(a2, p2)
    call gpufmm_array_download_async(a3, p3)
    call gpufmm_context_synchronize(ctx)
    call check(all(p1 == q1), t // ' async round trip rank 1')
    call check(all(p2 == q2), t // ' async round trip rank 2')
    call check(all(p3 == q3), t // ' async round trip rank 3')

    ! only the element count must match: a rank-1 host array fills a rank-3 array
    call gpufmm_array_upload(a3, reshape(h3, [size(h3)]))
    g3 = h3 - h3
    call gpufmm_array_download(a3, g3)
    call check(all(g3 == h3), t // ' rank-1 host into rank-3 array')

    ! fill
    v = (1.5_real32, -2.0_real32)
    call gpufmm_array_fill(a2, v)
    call gpufmm_array_download(a2, g2)
    call check(all(g2 == v), t // ' fill')

    ! copy
    call gpufmm_array_create_like(ctx, h1, b1)
    call gpufmm_array_copy(a1, b1)            ! a1 holds q1 = reversed h1
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == q1), t // ' copy')

    ! copy_range, 1-based offsets: b1(2:4) = a1(5:7) (default integers) and
    ! b1(7) = a3(24) (int64 arguments; flat column-major index into rank 3)
    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_fill(b1, v)
    call gpufmm_array_copy_range(a1, 5, b1, 2, 3)
    call gpufmm_array_copy_range(a3, 24_int64, b1, 7_int64, 1_int64)
    call gpufmm_array_copy_range(a1, 1, b1, 1, 0)      ! count 0: nothing
    e1 = v
    e1(2:4) = h1(5:7)
    e1(7) = h3(3, 2, 4)
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == e1), t // ' copy_range')

    ! sum
    call gpufmm_array_sum(a3, r)
    call check(abs(r - sum(h3)) <= tol * sum(abs(h3)), t // ' sum')

    call gpufmm_array_destroy(a1)
    call gpufmm_array_destroy(a2)
    call gpufmm_array_destroy(a3)
    call gpufmm_array_destroy(b1)
    call check(.not. gpufmm_array_associated(a1), t // ' destroy nulls the handle')
  end subroutine test_c4

  ! ==================================================================== complex(real64)
  ! Every kind: create_like and queries, sync and async round trips for ranks
  ! 1-3, a rank-1 host filling a rank-3 array, fill, copy, copy_range, sum.
  subroutine test_c8()
    character(len=*), parameter :: t = 'complex(real64)'
    real(real64), parameter :: tol = 1.0e-13_real64
    complex(real64) :: h1(7), h2(4, 5), h3(3, 2, 4), g1(7), g2(4, 5), g3(3, 2, 4), e1(7), v, r
    complex(real64), allocatable, target :: q1(:), q2(:, :), q3(:, :, :), p1(:), p2(:, :), p3(:, :, :)
    type(gpufmm_array) :: a1, a2, a3, b1

    h1 = mk_c8(7)
    h2 = reshape(mk_c8(20), shape(h2))
    h3 = reshape(mk_c8(24), shape(h3))

    call gpufmm_array_create_like(ctx, h1, a1)
    call gpufmm_array_create_like(ctx, h2, a2)
    call gpufmm_array_create_like(ctx, h3, a3)
    call check_shape(a1, GPUFMM_COMPLEX128, shape(h1), t // ' create_like rank 1')
    call check_shape(a2, GPUFMM_COMPLEX128, shape(h2), t // ' create_like rank 2')
    call check_shape(a3, GPUFMM_COMPLEX128, shape(h3), t // ' create_like rank 3')

    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_upload(a2, h2)
    call gpufmm_array_upload(a3, h3)
    call gpufmm_array_download(a1, g1)
    call gpufmm_array_download(a2, g2)
    call gpufmm_array_download(a3, g3)
    call check(all(g1 == h1), t // ' upload/download rank 1')
    call check(all(g2 == h2), t // ' upload/download rank 2')
    call check(all(g3 == h3), t // ' upload/download rank 3')

    ! async: the host arrays have TARGET and stay alive until synchronize
    q1 = h1(7:1:-1)
    q2 = h2(4:1:-1, :)
    q3 = h3(3:1:-1, :, :)
    allocate(p1, mold=q1)
    allocate(p2, mold=q2)
    allocate(p3, mold=q3)
    call gpufmm_array_upload_async(a1, q1)
    call gpufmm_array_upload_async(a2, q2)
    call gpufmm_array_upload_async(a3, q3)
    call gpufmm_array_download_async(a1, p1)
    call gpufmm_array_download_async(a2, p2)
    call gpufmm_array_download_async(a3, p3)
    call gpufmm_context_synchronize(ctx)
    call check(all(p1 == q1), t // ' async round trip rank 1')
    call check(all(p2 == q2), t // ' async round trip rank 2')
    call check(all(p3 == q3), t // ' async round trip rank 3')

    ! only the element count must match: a rank-1 host array fills a rank-3 array
    call gpufmm_array_upload(a3, reshape(h3, [size(h3)]))
    g3 = h3 - h3
    call gpufmm_array_download(a3, g3)
    call check(all(g3 == h3), t // ' rank-1 host into rank-3 array')

    ! fill
    v = (1.5_real64, -2.0_real64)
    call gpufmm_array_fill(a2, v)
    call gpufmm_array_download(a2, g2)
    call check(all(g2 == v), t // ' fill')

    ! copy
    call gpufmm_array_create_like(ctx, h1, b1)
    call gpufmm_array_copy(a1, b1)            ! a1 holds q1 = reversed h1
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == q1), t // ' copy')

    ! copy_range, 1-based offsets: b1(2:4) = a1(5:7) (default integers) and
    ! b1(7) = a3(24) (int64 arguments; flat column-major index into rank 3)
    call gpufmm_array_upload(a1, h1)
    call gpufmm_array_fill(b1, v)
    call gpufmm_array_copy_range(a1, 5, b1, 2, 3)
    call gpufmm_array_copy_range(a3, 24_int64, b1, 7_int64, 1_int64)
    call gpufmm_array_copy_range(a1, 1, b1, 1, 0)      ! count 0: nothing
    e1 = v
    e1(2:4) = h1(5:7)
    e1(7) = h3(3, 2, 4)
    call gpufmm_array_download(b1, g1)
    call check(all(g1 == e1), t // ' copy_range')

    ! sum
    call gpufmm_array_sum(a3, r)
    call check(abs(r - sum(h3)) <= tol * sum(abs(h3)), t // ' sum')

    call gpufmm_array_destroy(a1)
    call gpufmm_array_destroy(a2)
    call gpufmm_array_destroy(a3)
    call gpufmm_array_destroy(b1)
    call check(.not. gpufmm_array_associated(a1), t // ' destroy nulls the handle')
  end subroutine test_c8

  ! BLAS on real(real32) arrays against intrinsics (matmul, dot_product).
  subroutine blas_r4()
    character(len=*), parameter :: t = 'real(real32)'
    real(real64), parameter :: tol = 1.0e-5_real64
    real(real32) :: x(6), y(6), e(6), ma(4, 3), mat(3, 4), mb(3, 5), mbt(5, 3), mc(4, 5), g(4, 5), ec(4, 5)
    real(real32) :: v3(3), v4(4), w3(3), w4(4), m2(4, 3), alpha, beta, r
    real(real32) :: nr
    type(gpufmm_array) :: dx, dy, da, dat, db, dbt, dc, d3, d4, dm

    x = mk_r4(6)
    y = mk_r4(6)
    ma = reshape(mk_r4(12), shape(ma))
    mb = reshape(mk_r4(15), shape(mb))
    mc = reshape(mk_r4(20), shape(mc))
    v3 = mk_r4(3)
    v4 = mk_r4(4)
    mat = ht_r4(ma)
    mbt = ht_r4(mb)
    alpha = 0.75_real32
    beta = -1.25_real32
    call gpufmm_array_create_like(ctx, x, dx)
    call gpufmm_array_create_like(ctx, y, dy)
    call gpufmm_array_create_like(ctx, ma, da)
    call gpufmm_array_create_like(ctx, mat, dat)
    call gpufmm_array_create_like(ctx, mb, db)
    call gpufmm_array_create_like(ctx, mbt, dbt)
    call gpufmm_array_create_like(ctx, mc, dc)
    call gpufmm_array_create_like(ctx, v3, d3)
    call gpufmm_array_create_like(ctx, v4, d4)
    call gpufmm_array_upload(dx, x)
    call gpufmm_array_upload(dy, y)
    call gpufmm_array_upload(da, ma)
    call gpufmm_array_upload(dat, mat)
    call gpufmm_array_upload(db, mb)
    call gpufmm_array_upload(dbt, mbt)
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_upload(d3, v3)
    call gpufmm_array_upload(d4, v4)

    ! axpy: y = y + alpha*x
    call gpufmm_array_axpy(alpha, dx, dy)
    call gpufmm_array_download(dy, e)
    call check(close(e, y + alpha * x, tol), t // ' axpy')
    ! axpy on rank-2 arrays (vectors may have any rank)
    call gpufmm_array_create_like(ctx, ma, dm)
    call gpufmm_array_upload(dm, ma)
    call gpufmm_array_axpy(alpha, da, dm)
    call gpufmm_array_download(dm, m2)
    call check(close([m2], [ma + alpha * ma], tol), t // ' axpy rank 2')

    ! scal: x = alpha*x
    call gpufmm_array_scal(alpha, dx)
    call gpufmm_array_download(dx, e)
    call check(close(e, alpha * x, tol), t // ' scal')

    ! dot (conjugates x when complex, like dot_product) and nrm2
    call gpufmm_array_upload(dx, x)
    call gpufmm_array_upload(dy, y)
    call gpufmm_array_dot(dx, dy, r)
    call check(abs(r - dot_product(x, y)) <= tol * sum(abs(x) * abs(y)), t // ' dot')
    call gpufmm_array_nrm2(dx, nr)
    call check(abs(nr - sqrt(sum(abs(x)**2))) <= tol * nr, t // ' nrm2')

    ! gemv: w4 = alpha*A*v3 + beta*w4 ; w3 = alpha*op(A)*v4 + beta*w3
    call gpufmm_array_gemv('N', alpha, da, d3, beta, d4)
    call gpufmm_array_download(d4, w4)
    call check(close(w4, alpha * matmul(ma, v3) + beta * v4, tol), t // ' gemv N')
    call gpufmm_array_gemv('T', alpha, da, d4, beta, d3)
    call gpufmm_array_download(d3, w3)
    call check(close(w3, alpha * matmul(transpose(ma), w4) + beta * v3, tol), t // ' gemv T')
    call gpufmm_array_upload(d3, v3)
    call gpufmm_array_gemv('c', alpha, da, d4, beta, d3)
    call gpufmm_array_download(d3, w3)
    call check(close(w3, alpha * matmul(ht_r4(ma), w4) + beta * v3, tol), t // ' gemv C')

    ! gemm: C = alpha*op(A)*op(B) + beta*C, with op(A) = A and op(B) = B each time
    ec = alpha * matmul(ma, mb) + beta * mc
    call gpufmm_array_gemm('N', 'N', alpha, da, db, beta, dc)
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm N N')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('C', 'n', alpha, dat, db, beta, dc)   ! op(mat) = ma
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm C N')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('N', 'C', alpha, da, dbt, beta, dc)   ! op(mbt) = mb
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm N C')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('T', 'T', alpha, dat, dbt, beta, dc)
    call gpufmm_array_download(dc, g)
    call check(close([g], [alpha * matmul(transpose(mat), transpose(mbt)) + beta * mc], tol), &
         t // ' gemm T T')

    call gpufmm_array_destroy(dx)
    call gpufmm_array_destroy(dy)
    call gpufmm_array_destroy(da)
    call gpufmm_array_destroy(dat)
    call gpufmm_array_destroy(db)
    call gpufmm_array_destroy(dbt)
    call gpufmm_array_destroy(dc)
    call gpufmm_array_destroy(d3)
    call gpufmm_array_destroy(d4)
    call gpufmm_array_destroy(dm)
  end subroutine blas_r4

  ! BLAS on real(real64) arrays against intrinsics (matmul, dot_product).
  subroutine blas_r8()
    character(len=*), parameter :: t = 'real(real64)'
    real(real64), parameter :: tol = 1.0e-13_real64
    real(real64) :: x(6), y(6), e(6), ma(4, 3), mat(3, 4), mb(3, 5), mbt(5, 3), mc(4, 5), g(4, 5), ec(4, 5)
    real(real64) :: v3(3), v4(4), w3(3), w4(4), m2(4, 3), alpha, beta, r
    real(real64) :: nr
    type(gpufmm_array) :: dx, dy, da, dat, db, dbt, dc, d3, d4, dm

    x = mk_r8(6)
    y = mk_r8(6)
    ma = reshape(mk_r8(12), shape(ma))
    mb = reshape(mk_r8(15), shape(mb))
    mc = reshape(mk_r8(20), shape(mc))
    v3 = mk_r8(3)
    v4 = mk_r8(4)
    mat = ht_r8(ma)
    mbt = ht_r8(mb)
    alpha = 0.75_real64
    beta = -1.25_real64
    call gpufmm_array_create_like(ctx, x, dx)
    call gpufmm_array_create_like(ctx, y, dy)
    call gpufmm_array_create_like(ctx, ma, da)
    call gpufmm_array_create_like(ctx, mat, dat)
    call gpufmm_array_create_like(ctx, mb, db)
    call gpufmm_array_create_like(ctx, mbt, dbt)
    call gpufmm_array_create_like(ctx, mc, dc)
    call gpufmm_array_create_like(ctx, v3, d3)
    call gpufmm_array_create_like(ctx, v4, d4)
    call gpufmm_array_upload(dx, x)
    call gpufmm_array_upload(dy, y)
    call gpufmm_array_upload(da, ma)
    call gpufmm_array_upload(dat, mat)
    call gpufmm_array_upload(db, mb)
    call gpufmm_array_upload(dbt, mbt)
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_upload(d3, v3)
    call gpufmm_array_upload(d4, v4)

    ! axpy: y = y + alpha*x
    call gpufmm_array_axpy(alpha, dx, dy)
    call gpufmm_array_download(dy, e)
    call check(close(e, y + alpha * x, tol), t // ' axpy')
    ! axpy on rank-2 arrays (vectors may have any rank)
    call gpufmm_array_create_like(ctx, ma, dm)
    call gpufmm_array_upload(dm, ma)
    call gpufmm_array_axpy(alpha, da, dm)
    call gpufmm_array_download(dm, m2)
    call check(close([m2], [ma + alpha * ma], tol), t // ' axpy rank 2')

    ! scal: x = alpha*x
    call gpufmm_array_scal(alpha, dx)
    call gpufmm_array_download(dx, e)
    call check(close(e, alpha * x, tol), t // ' scal')

    ! dot (conjugates x when complex, like dot_product) and nrm2
    call gpufmm_array_upload(dx, x)
    call gpufmm_array_upload(dy, y)
    call gpufmm_array_dot(dx, dy, r)
    call check(abs(r - dot_product(x, y)) <= tol * sum(abs(x) * abs(y)), t // ' dot')
    call gpufmm_array_nrm2(dx, nr)
    call check(abs(nr - sqrt(sum(abs(x)**2))) <= tol * nr, t // ' nrm2')

    ! gemv: w4 = alpha*A*v3 + beta*w4 ; w3 = alpha*op(A)*v4 + beta*w3
    call gpufmm_array_gemv('N', alpha, da, d3, beta, d4)
    call gpufmm_array_download(d4, w4)
    call check(close(w4, alpha * matmul(ma, v3) + beta * v4, tol), t // ' gemv N')
    call gpufmm_array_gemv('T', alpha, da, d4, beta, d3)
    call gpufmm_array_download(d3, w3)
    call check(close(w3, alpha * matmul(transpose(ma), w4) + beta * v3, tol), t // ' gemv T')
    call gpufmm_array_upload(d3, v3)
    call gpufmm_array_gemv('c', alpha, da, d4, beta, d3)
    call gpufmm_array_download(d3, w3)
    call check(close(w3, alpha * matmul(ht_r8(ma), w4) + beta * v3, tol), t // ' gemv C')

    ! gemm: C = alpha*op(A)*op(B) + beta*C, with op(A) = A and op(B) = B each time
    ec = alpha * matmul(ma, mb) + beta * mc
    call gpufmm_array_gemm('N', 'N', alpha, da, db, beta, dc)
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm N N')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('C', 'n', alpha, dat, db, beta, dc)   ! op(mat) = ma
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm C N')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('N', 'C', alpha, da, dbt, beta, dc)   ! op(mbt) = mb
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm N C')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('T', 'T', alpha, dat, dbt, beta, dc)
    call gpufmm_array_download(dc, g)
    call check(close([g], [alpha * matmul(transpose(mat), transpose(mbt)) + beta * mc], tol), &
         t // ' gemm T T')

    call gpufmm_array_destroy(dx)
    call gpufmm_array_destroy(dy)
    call gpufmm_array_destroy(da)
    call gpufmm_array_destroy(dat)
    call gpufmm_array_destroy(db)
    call gpufmm_array_destroy(dbt)
    call gpufmm_array_destroy(dc)
    call gpufmm_array_destroy(d3)
    call gpufmm_array_destroy(d4)
    call gpufmm_array_destroy(dm)
  end subroutine blas_r8

  ! BLAS on complex(real32) arrays against intrinsics (matmul, dot_product).
  subroutine blas_c4()
    character(len=*), parameter :: t = 'complex(real32)'
    real(real64), parameter :: tol = 1.0e-5_real64
    complex(real32) :: x(6), y(6), e(6), ma(4, 3), mat(3, 4), mb(3, 5), mbt(5, 3), mc(4, 5), g(4, 5), ec(4, 5)
    complex(real32) :: v3(3), v4(4), w3(3), w4(4), m2(4, 3), alpha, beta, r
    real(real32) :: nr
    type(gpufmm_array) :: dx, dy, da, dat, db, dbt, dc, d3, d4, dm

    x = mk_c4(6)
    y = mk_c4(6)
    ma = reshape(mk_c4(12), shape(ma))
    mb = reshape(mk_c4(15), shape(mb))
    mc = reshape(mk_c4(20), shape(mc))
    v3 = mk_c4(3)
    v4 = mk_c4(4)
    mat = ht_c4(ma)
    mbt = ht_c4(mb)
    alpha = (0.75_real32, 0.5_real32)
    beta = (-1.25_real32, 0.25_real32)
    call gpufmm_array_create_like(ctx, x, dx)
    call gpufmm_array_create_like(ctx, y, dy)
    call gpufmm_array_create_like(ctx, ma, da)
    call gpufmm_array_create_like(ctx, mat, dat)
    call gpufmm_array_create_like(ctx, mb, db)
    call gpufmm_array_create_like(ctx, mbt, dbt)
    call gpufmm_array_create_like(ctx, mc, dc)
    call gpufmm_array_create_like(ctx, v3, d3)
    call gpufmm_array_create_like(ctx, v4, d4)
    call gpufmm_array_upload(dx, x)
    call gpufmm_array_upload(dy, y)
    call gpufmm_array_upload(da, ma)
    call gpufmm_array_upload(dat, mat)
    call gpufmm_array_upload(db, mb)
    call gpufmm_array_upload(dbt, mbt)
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_upload(d3, v3)
    call gpufmm_array_upload(d4, v4)

    ! axpy: y = y + alpha*x
    call gpufmm_array_axpy(alpha, dx, dy)
    call gpufmm_array_download(dy, e)
    call check(close(e, y + alpha * x, tol), t // ' axpy')
    ! axpy on rank-2 arrays (vectors may have any rank)
    call gpufmm_array_create_like(ctx, ma, dm)
    call gpufmm_array_upload(dm, ma)
    call gpufmm_array_axpy(alpha, da, dm)
    call gpufmm_array_download(dm, m2)
    call check(close([m2], [ma + alpha * ma], tol), t // ' axpy rank 2')

    ! scal: x = alpha*x
    call gpufmm_array_scal(alpha, dx)
    call gpufmm_array_download(dx, e)
    call check(close(e, alpha * x, tol), t // ' scal')

    ! dot (conjugates x when complex, like dot_product) and nrm2
    call gpufmm_array_upload(dx, x)
    call gpufmm_array_upload(dy, y)
    call gpufmm_array_dot(dx, dy, r)
    call check(abs(r - dot_product(x, y)) <= tol * sum(abs(x) * abs(y)), t // ' dot')
    call gpufmm_array_nrm2(dx, nr)
    call check(abs(nr - sqrt(sum(abs(x)**2))) <= tol * nr, t // ' nrm2')

    ! gemv: w4 = alpha*A*v3 + beta*w4 ; w3 = alpha*op(A)*v4 + beta*w3
    call gpufmm_array_gemv('N', alpha, da, d3, beta, d4)
    call gpufmm_array_download(d4, w4)
    call check(close(w4, alpha * matmul(ma, v3) + beta * v4, tol), t // ' gemv N')
    call gpufmm_array_gemv('T', alpha, da, d4, beta, d3)
    call gpufmm_array_download(d3, w3)
    call check(close(w3, alpha * matmul(transpose(ma), w4) + beta * v3, tol), t // ' gemv T')
    call gpufmm_array_upload(d3, v3)
    call gpufmm_array_gemv('c', alpha, da, d4, beta, d3)
    call gpufmm_array_download(d3, w3)
    call check(close(w3, alpha * matmul(ht_c4(ma), w4) + beta * v3, tol), t // ' gemv C')

    ! gemm: C = alpha*op(A)*op(B) + beta*C, with op(A) = A and op(B) = B each time
    ec = alpha * matmul(ma, mb) + beta * mc
    call gpufmm_array_gemm('N', 'N', alpha, da, db, beta, dc)
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm N N')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('C', 'n', alpha, dat, db, beta, dc)   ! op(mat) = ma
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm C N')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('N', 'C', alpha, da, dbt, beta, dc)   ! op(mbt) = mb
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm N C')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('T', 'T', alpha, dat, dbt, beta, dc)
    call gpufmm_array_download(dc, g)
    call check(close([g], [alpha * matmul(transpose(mat), transpose(mbt)) + beta * mc], tol), &
         t // ' gemm T T')

    call gpufmm_array_destroy(dx)
    call gpufmm_array_destroy(dy)
    call gpufmm_array_destroy(da)
    call gpufmm_array_destroy(dat)
    call gpufmm_array_destroy(db)
    call gpufmm_array_destroy(dbt)
    call gpufmm_array_destroy(dc)
    call gpufmm_array_destroy(d3)
    call gpufmm_array_destroy(d4)
    call gpufmm_array_destroy(dm)
  end subroutine blas_c4

  ! BLAS on complex(real64) arrays against intrinsics (matmul, dot_product).
  subroutine blas_c8()
    character(len=*), parameter :: t = 'complex(real64)'
    real(real64), parameter :: tol = 1.0e-13_real64
    complex(real64) :: x(6), y(6), e(6), ma(4, 3), mat(3, 4), mb(3, 5), mbt(5, 3), mc(4, 5), g(4, 5), ec(4, 5)
    complex(real64) :: v3(3), v4(4), w3(3), w4(4), m2(4, 3), alpha, beta, r
    real(real64) :: nr
    type(gpufmm_array) :: dx, dy, da, dat, db, dbt, dc, d3, d4, dm

    x = mk_c8(6)
    y = mk_c8(6)
    ma = reshape(mk_c8(12), shape(ma))
    mb = reshape(mk_c8(15), shape(mb))
    mc = reshape(mk_c8(20), shape(mc))
    v3 = mk_c8(3)
    v4 = mk_c8(4)
    mat = ht_c8(ma)
    mbt = ht_c8(mb)
    alpha = (0.75_real64, 0.5_real64)
    beta = (-1.25_real64, 0.25_real64)
    call gpufmm_array_create_like(ctx, x, dx)
    call gpufmm_array_create_like(ctx, y, dy)
    call gpufmm_array_create_like(ctx, ma, da)
    call gpufmm_array_create_like(ctx, mat, dat)
    call gpufmm_array_create_like(ctx, mb, db)
    call gpufmm_array_create_like(ctx, mbt, dbt)
    call gpufmm_array_create_like(ctx, mc, dc)
    call gpufmm_array_create_like(ctx, v3, d3)
    call gpufmm_array_create_like(ctx, v4, d4)
    call gpufmm_array_upload(dx, x)
    call gpufmm_array_upload(dy, y)
    call gpufmm_array_upload(da, ma)
    call gpufmm_array_upload(dat, mat)
    call gpufmm_array_upload(db, mb)
    call gpufmm_array_upload(dbt, mbt)
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_upload(d3, v3)
    call gpufmm_array_upload(d4, v4)

    ! axpy: y = y + alpha*x
    call gpufmm_array_axpy(alpha, dx, dy)
    call gpufmm_array_download(dy, e)
    call check(close(e, y + alpha * x, tol), t // ' axpy')
    ! axpy on rank-2 arrays (vectors may have any rank)
    call gpufmm_array_create_like(ctx, ma, dm)
    call gpufmm_array_upload(dm, ma)
    call gpufmm_array_axpy(alpha, da, dm)
    call gpufmm_array_download(dm, m2)
    call check(close([m2], [ma + alpha * ma], tol), t // ' axpy rank 2')

    ! scal: x = alpha*x
    call gpufmm_array_scal(alpha, dx)
    call gpufmm_array_download(dx, e)
    call check(close(e, alpha * x, tol), t // ' scal')

    ! dot (conjugates x when complex, like dot_product) and nrm2
    call gpufmm_array_upload(dx, x)
    call gpufmm_array_upload(dy, y)
    call gpufmm_array_dot(dx, dy, r)
    call check(abs(r - dot_product(x, y)) <= tol * sum(abs(x) * abs(y)), t // ' dot')
    call gpufmm_array_nrm2(dx, nr)
    call check(abs(nr - sqrt(sum(abs(x)**2))) <= tol * nr, t // ' nrm2')

    ! gemv: w4 = alpha*A*v3 + beta*w4 ; w3 = alpha*op(A)*v4 + beta*w3
    call gpufmm_array_gemv('N', alpha, da, d3, beta, d4)
    call gpufmm_array_download(d4, w4)
    call check(close(w4, alpha * matmul(ma, v3) + beta * v4, tol), t // ' gemv N')
    call gpufmm_array_gemv('T', alpha, da, d4, beta, d3)
    call gpufmm_array_download(d3, w3)
    call check(close(w3, alpha * matmul(transpose(ma), w4) + beta * v3, tol), t // ' gemv T')
    call gpufmm_array_upload(d3, v3)
    call gpufmm_array_gemv('c', alpha, da, d4, beta, d3)
    call gpufmm_array_download(d3, w3)
    call check(close(w3, alpha * matmul(ht_c8(ma), w4) + beta * v3, tol), t // ' gemv C')

    ! gemm: C = alpha*op(A)*op(B) + beta*C, with op(A) = A and op(B) = B each time
    ec = alpha * matmul(ma, mb) + beta * mc
    call gpufmm_array_gemm('N', 'N', alpha, da, db, beta, dc)
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm N N')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('C', 'n', alpha, dat, db, beta, dc)   ! op(mat) = ma
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm C N')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('N', 'C', alpha, da, dbt, beta, dc)   ! op(mbt) = mb
    call gpufmm_array_download(dc, g)
    call check(close([g], [ec], tol), t // ' gemm N C')
    call gpufmm_array_upload(dc, mc)
    call gpufmm_array_gemm('T', 'T', alpha, dat, dbt, beta, dc)
    call gpufmm_array_download(dc, g)
    call check(close([g], [alpha * matmul(transpose(mat), transpose(mbt)) + beta * mc], tol), &
         t // ' gemm T T')

    call gpufmm_array_destroy(dx)
    call gpufmm_array_destroy(dy)
    call gpufmm_array_destroy(da)
    call gpufmm_array_destroy(dat)
    call gpufmm_array_destroy(db)
    call gpufmm_array_destroy(dbt)
    call gpufmm_array_destroy(dc)
    call gpufmm_array_destroy(d3)
    call gpufmm_array_destroy(d4)
    call gpufmm_array_destroy(dm)
  end subroutine blas_c8

  ! ==================================================================== library and context

  subroutine test_library_and_context(device)
    integer, intent(in) :: device
    integer :: major, minor, patch, st, n
    character(len=32) :: buf
    type(gpufmm_device_info) :: info
    type(c_ptr) :: stream

    ! version, build, status strings, dtypes
    call check(len(gpufmm_version()) > 0, 'version string')
    buf = gpufmm_version(major, minor, patch)
    call check(gpufmm_version() == itoa(major) // '.' // itoa(minor) // '.' // itoa(patch), &
         'version parts match the string')
    n = gpufmm_device_count(st)
    call expect(st, GPUFMM_SUCCESS, 'device_count')
    if (.not. gpufmm_cuda_built()) call check(n == 0, 'no CUDA: device_count is 0')
    call check(index(gpufmm_status_string(GPUFMM_ERROR_SIZE_MISMATCH), 'GPUFMM_ERROR_SIZE_MISMATCH') == 1, &
         'status_string')
    call check(index(gpufmm_status_string(GPUFMM_SUCCESS), 'GPUFMM_SUCCESS') == 1, 'status_string success')
    call check(gpufmm_dtype_size(GPUFMM_INT32) == 4 .and. gpufmm_dtype_size(GPUFMM_INT64) == 8 .and. &
         gpufmm_dtype_size(GPUFMM_FLOAT32) == 4 .and. gpufmm_dtype_size(GPUFMM_FLOAT64) == 8 .and. &
         gpufmm_dtype_size(GPUFMM_COMPLEX64) == 8 .and. gpufmm_dtype_size(GPUFMM_COMPLEX128) == 16 .and. &
         gpufmm_dtype_size(99) == 0, 'dtype_size')
    call check(gpufmm_dtype_name(GPUFMM_COMPLEX128) == 'GPUFMM_COMPLEX128', 'dtype_name')

    ! the public status helper: with status present it only reports
    call gpufmm_check_status(GPUFMM_ERROR_INTERNAL, st, 'test', 'a message from Fortran')
    call expect(st, GPUFMM_ERROR_INTERNAL, 'gpufmm_check_status')
    call check(gpufmm_last_error_message() == 'test: a message from Fortran', 'check_status message')
    call gpufmm_check_status(GPUFMM_SUCCESS)   ! absent status, success: returns

    ! context creation errors leave ctx untouched
    call gpufmm_context_create(ctx, -5, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'context_create(-5)')
    call check(.not. gpufmm_context_associated(ctx), 'failed context_create leaves ctx null')
    if (.not. gpufmm_cuda_built()) then
       call gpufmm_context_create(ctx, 0, st)
       call expect(st, GPUFMM_ERROR_NOT_SUPPORTED, 'context_create(GPU 0) without CUDA')
       call check(.not. gpufmm_context_associated(ctx), 'ctx still null')
    end if
    call check(gpufmm_context_backend(ctx, st) == -1, 'backend of a null context')
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'backend of a null context')

    ! the context used by every test
    call gpufmm_context_create(ctx, device, st)
    call expect(st, GPUFMM_SUCCESS, 'context_create(test device)')
    if (st /= GPUFMM_SUCCESS) then
       write (output_unit, '(a)') gpufmm_last_error_message()
       error stop 'test_fortran_arrays: cannot create the test context'
    end if
    call check(gpufmm_context_associated(ctx), 'context_associated')
    call check(c_associated(gpufmm_context_c_ptr(ctx)), 'context_c_ptr')
    info = gpufmm_context_device_info(ctx, st)
    call expect(st, GPUFMM_SUCCESS, 'device_info')
    write (output_unit, '(a, i0, a, a, a, i0, a)') 'test device ', device, ': ', trim(info%name), &
         ' (backend ', info%backend, ')'
    call check(len_trim(info%name) > 0 .and. info%multiprocessors > 0 .and. info%total_memory > 0, &
         'device_info fields')
    call check(gpufmm_context_backend(ctx) == info%backend, 'backend matches device_info')
    if (device == GPUFMM_DEVICE_CPU) then
       call check(info%backend == GPUFMM_BACKEND_CPU .and. info%device == GPUFMM_DEVICE_CPU, &
            'CPU device info')
       stream = gpufmm_context_stream(ctx, st)
       call expect(st, GPUFMM_SUCCESS, 'context_stream')
       call check(.not. c_associated(stream), 'no stream on the CPU backend')
    else if (device >= 0) then
       call check(info%backend == GPUFMM_BACKEND_CUDA .and. info%device == device, 'GPU device info')
       stream = gpufmm_context_stream(ctx)
    end if
    call gpufmm_context_synchronize(ctx, st)
    call expect(st, GPUFMM_SUCCESS, 'context_synchronize')
  end subroutine test_library_and_context

  ! ==================================================================== create, wrap, data, empty arrays

  subroutine test_create_wrap_empty()
    type(gpufmm_array) :: a, w, z1, z2
    real(real64), target :: h(3, 4), g(3, 4)
    real(real64), target :: e1(0), e2(3, 0)
    real(real64) :: r
    integer(int32) :: iz(0), ir
    type(gpufmm_array) :: zi
    integer :: st

    ! create by dtype and dims (default-integer and int64 dims)
    call gpufmm_array_create(ctx, GPUFMM_FLOAT64, [3, 4], a)
    call check_shape(a, GPUFMM_FLOAT64, [3, 4], 'create int32 dims')
    call gpufmm_array_destroy(a)
    call gpufmm_array_create(ctx, GPUFMM_COMPLEX64, [2_int64, 3_int64, 4_int64], a, st)
    call expect(st, GPUFMM_SUCCESS, 'create int64 dims')
    call check_shape(a, GPUFMM_COMPLEX64, [2, 3, 4], 'create int64 dims')
    call gpufmm_array_destroy(a, st)
    call expect(st, GPUFMM_SUCCESS, 'destroy')
    call gpufmm_array_destroy(a, st)
    call expect(st, GPUFMM_SUCCESS, 'destroying a null handle is a no-op')

    ! raw data pointer and wrap: a second handle over the same memory
    call random_number(h)
    call gpufmm_array_create(ctx, GPUFMM_FLOAT64, [3, 4], a)
    call gpufmm_array_upload(a, h)
    call check(c_associated(gpufmm_array_data(a)), 'array_data')
    call check(c_associated(gpufmm_array_c_ptr(a)), 'array_c_ptr')
    call gpufmm_array_wrap(ctx, GPUFMM_FLOAT64, [12_int64], gpufmm_array_data(a), w, st)
    call expect(st, GPUFMM_SUCCESS, 'wrap')
    call check_shape(w, GPUFMM_FLOAT64, [12], 'wrap')
    g = 0
    call gpufmm_array_download(w, g)
    call check(all(g == h), 'wrap sees the data')
    call gpufmm_array_fill(w, 2.0_real64)
    call gpufmm_array_download(a, g)
    call check(all(g == 2.0_real64), 'writes through wrap reach the array')
    call gpufmm_array_destroy(w)                ! does not free a's memory
    call gpufmm_array_upload(a, h)
    call gpufmm_array_download(a, g)
    call check(all(g == h), 'array intact after its wrap is destroyed')
    call gpufmm_array_wrap(ctx, GPUFMM_FLOAT64, [3, 4], c_null_ptr, w, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'wrap NULL data')
    call gpufmm_array_destroy(a)

    ! zero-sized arrays: c_null_ptr and count 0 reach C
    call gpufmm_array_create_like(ctx, e1, z1)
    call gpufmm_array_create_like(ctx, e2, z2)
    call check_shape(z1, GPUFMM_FLOAT64, [0], 'empty rank 1')
    call check_shape(z2, GPUFMM_FLOAT64, [3, 0], 'empty rank 2')
    call gpufmm_array_upload(z1, e1, st)
    call expect(st, GPUFMM_SUCCESS, 'upload empty')
    call gpufmm_array_download(z2, e2, st)
    call expect(st, GPUFMM_SUCCESS, 'download empty')
    call gpufmm_array_upload_async(z2, e2, st)
    call expect(st, GPUFMM_SUCCESS, 'upload_async empty')
    r = 5
    call gpufmm_array_sum(z1, r)
    call check(r == 0, 'sum of empty is 0')
    call gpufmm_array_dot(z1, z1, r)
    call check(r == 0, 'dot of empty is 0')
    call gpufmm_array_nrm2(z2, r)
    call check(r == 0, 'nrm2 of empty is 0')
    call gpufmm_array_fill(z1, 1.0_real64, st)
    call expect(st, GPUFMM_SUCCESS, 'fill empty')
    r = 5
    call gpufmm_array_min(z1, r, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'min of empty')
    call check(r == 5, 'failed min leaves result unchanged')
    call gpufmm_array_upload(z1, h, st)
    call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'upload 12 elements into an empty array')
    call gpufmm_array_create_like(ctx, iz, zi)
    ir = 3
    call gpufmm_array_sum(zi, ir)
    call check(ir == 0, 'int32 sum of empty is 0')
    call gpufmm_array_destroy(z1)
    call gpufmm_array_destroy(z2)
    call gpufmm_array_destroy(zi)
  end subroutine test_create_wrap_empty

  ! ==================================================================== error paths

  subroutine test_errors()
    type(gpufmm_array) :: a, b, stale, a4, c8, c2, i1, m1, m2, m3
    real(real64), target :: h(6), g(6), big(7), small(5), hm(2, 3), gm(2, 3), sect(12)
    real(real32) :: h4(6), r4
    real(real64) :: r8
    complex(real64) :: z(6), zr
    integer(int32) :: iv(4)
    integer(int64) :: dims(3)
    type(gpufmm_context) :: ctx2
    integer :: st

    call random_number(h)
    g = -1
    call gpufmm_array_create_like(ctx, h, a)
    call gpufmm_array_upload(a, h)

    ! ---- destroyed handles: the nulled one and a stale copy
    stale = a
    call gpufmm_array_create_like(ctx, h, b)
    call gpufmm_array_upload(b, h)
    stale = b
    call gpufmm_array_destroy(b)
    call check(.not. gpufmm_array_associated(b), 'destroy nulls the handle')
    call check(gpufmm_array_associated(stale), 'a stale copy still looks associated')
    call gpufmm_array_upload(b, h, st)
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'upload to a destroyed (null) handle')
    call gpufmm_array_download(stale, g, st)
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'download from a stale handle')
    call check(all(g == -1), 'failed download leaves host unchanged')
    call gpufmm_array_fill(stale, 1.0_real64, st)
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'fill stale')
    call gpufmm_array_copy(a, stale, st)
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'copy to stale')
    call gpufmm_array_axpy(1.0_real64, a, stale, st)
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'axpy stale')
    r8 = -3
    call gpufmm_array_sum(stale, r8, st)
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'sum stale')
    call check(r8 == -3, 'failed sum leaves result unchanged')
    call check(gpufmm_array_size(stale, st) == -1, 'size of stale is -1')
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'size stale')
    call check(gpufmm_array_dtype(stale, st) == -1, 'dtype of stale is -1')
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'dtype stale')
    call check(gpufmm_array_rank(stale, st) == 0, 'rank of stale is 0')
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'rank stale')
    dims = gpufmm_array_dims(stale, st)
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'dims stale')
    call check(.not. c_associated(gpufmm_array_data(stale, st)), 'data of stale is null')
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'data stale')
    call gpufmm_array_destroy(stale, st)
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'destroy stale')

    ! ---- size mismatch on transfers: nothing changes
    big = 7
    small = 5
    call gpufmm_array_upload(a, big, st)
    call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'upload 7 elements into 6')
    call expect_message('host', 'upload size mismatch')
    call gpufmm_array_upload(a, small, st)
    call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'upload 5 elements into 6')
    call gpufmm_array_upload_async(a, big, st)
    call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'upload_async 7 into 6')
    call gpufmm_array_download(a, g)
    call check(all(g == h), 'array unchanged after failed uploads')
    big = 7
    call gpufmm_array_download(a, big, st)
    call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'download 6 into 7')
    call gpufmm_array_download_async(a, big, st)
    call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'download_async 6 into 7')
    call check(all(big == 7), 'host unchanged after failed downloads')

    ! ---- non-contiguous host sections: fine when synchronous, refused when async
    sect = 0
    call gpufmm_array_download(a, sect(1:12:2))
    call check(all(sect(1:12:2) == h) .and. all(sect(2:12:2) == 0), 'download into a strided section')
    call gpufmm_array_upload(a, sect(1:12:2))
    call gpufmm_array_download(a, g)
    call check(all(g == h), 'upload from a strided section')
    call gpufmm_array_download_async(a, sect(1:12:2), st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'download_async into a strided section')
    call expect_message('contiguous', 'async strided')
    call gpufmm_array_upload_async(a, sect(2:12:2), st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'upload_async from a strided section')
    call gpufmm_array_download(a, g)
    call check(all(g == h), 'array unchanged after refused async upload')

    ! ---- dtype mismatches
    h4 = 1
    call gpufmm_array_upload(a, h4, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'upload real32 host into a float64 array')
    call expect_message('real(real32)', 'upload type mismatch')
    call gpufmm_array_download(a, h4, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'download float64 array into real32 host')
    call check(all(h4 == 1), 'host unchanged after a type mismatch')
    call gpufmm_array_create_like(ctx, h4, a4)
    call gpufmm_array_upload(a4, h4)
    call gpufmm_array_copy(a4, a, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'copy float32 -> float64')
    call gpufmm_array_copy_range(a4, 1, a, 1, 2, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'copy_range float32 -> float64')
    call gpufmm_array_axpy(2.0_real64, a4, a, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'axpy float32 x, float64 y')
    call gpufmm_array_dot(a, a4, r8, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'dot float64 x, float32 y')
    call gpufmm_array_fill(a, 1.0_real32, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'fill a float64 array with a real32 value')
    call gpufmm_array_scal(2.0_real32, a, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'scal a float64 array by a real32 alpha')
    r4 = -1
    call gpufmm_array_sum(a, r4, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'sum of a float64 array into real32')
    call gpufmm_array_nrm2(a, r4, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'nrm2 of a float64 array into real32')
    call check(r4 == -1, 'result unchanged after a type mismatch')
    call gpufmm_array_download(a, g)
    call check(all(g == h), 'array unchanged after type mismatches')
    iv = [1, 2, 3, 4]
    call gpufmm_array_create_like(ctx, iv, i1)
    call gpufmm_array_upload(i1, iv)
    call gpufmm_array_scal(2.0_real32, i1, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'scal on an int32 array')
    call gpufmm_array_create(ctx, 99, [3], b, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'create with dtype 99')
    call check(.not. gpufmm_array_associated(b), 'failed create leaves the handle null')

    ! ---- min / max on complex
    z = cmplx(h, -h, real64)
    call gpufmm_array_create_like(ctx, z, c8)
    call gpufmm_array_upload(c8, z)
    r8 = 42
    call gpufmm_array_min(c8, r8, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'min on complex128')
    call gpufmm_array_max(c8, r8, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'max on complex128')
    call check(r8 == 42, 'result unchanged after min on complex')
    zr = (1, 1)
    call gpufmm_array_sum(c8, zr, st)
    call expect(st, GPUFMM_SUCCESS, 'sum on complex128 is fine')
    call check(abs(zr - sum(z)) < 1e-13_real64, 'complex sum value')
    call gpufmm_array_nrm2(c8, r8, st)   ! complex128 -> real64 norm
    call expect(st, GPUFMM_SUCCESS, 'nrm2 complex128 into real64')

    ! ---- copy_range out of range (1-based offsets): dst unchanged
    call gpufmm_array_create_like(ctx, h, b)
    g = -2
    call gpufmm_array_upload(b, g)
    call gpufmm_array_copy_range(a, 0, b, 1, 2, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'copy_range src_offset 0')
    call expect_message('1-based', 'copy_range offset 0')
    call gpufmm_array_copy_range(a, 1, b, 0, 2, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'copy_range dst_offset 0')
    call gpufmm_array_copy_range(a, 5, b, 1, 3, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'copy_range past the end of src')
    call gpufmm_array_copy_range(a, 1_int64, b, 6_int64, 2_int64, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'copy_range past the end of dst')
    call gpufmm_array_copy_range(a, 1, b, 1, -1, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'copy_range negative count')
    call gpufmm_array_copy_range(b, 1, b, 2, 3, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'copy_range overlapping within one array')
    call gpufmm_array_download(b, g)
    call check(all(g == -2), 'dst unchanged after failed copy_range')
    call gpufmm_array_copy_range(a, 5, b, 1, 2, st)    ! the last elements: fine
    call expect(st, GPUFMM_SUCCESS, 'copy_range up to the end')
    call gpufmm_array_copy_range(b, 1, b, 4, 3, st)    ! adjacent, not overlapping
    call expect(st, GPUFMM_SUCCESS, 'copy_range adjacent ranges in one array')
    call gpufmm_array_download(b, g)
    call check(all(g == [h(5:6), -2.0_real64, h(5:6), -2.0_real64]), 'copy_range values')

    ! ---- gemv / gemm: bad trans, shape mismatch; outputs unchanged
    call random_number(hm)
    call gpufmm_array_create_like(ctx, hm, m1)
    call gpufmm_array_upload(m1, hm)
    call gpufmm_array_create(ctx, GPUFMM_FLOAT64, [2, 2], m2)
    call gpufmm_array_create(ctx, GPUFMM_FLOAT64, [2, 3], m3)
    gm = 9
    call gpufmm_array_upload(m3, gm)
    call gpufmm_array_gemm('X', 'N', 1.0_real64, m1, m2, 0.0_real64, m3, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'gemm transa X')
    call expect_message('transa', 'gemm transa X')
    call gpufmm_array_gemm('N', '', 1.0_real64, m1, m2, 0.0_real64, m3, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'gemm empty transb')
    call gpufmm_array_gemm('N', 'N', 1.0_real64, m1, m2, 0.0_real64, m3, st)   ! 2x3 * 2x2
    call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'gemm inner dimensions')
    call gpufmm_array_gemm('N', 'N', 1.0_real32, m1, m2, 0.0_real32, m3, st)
    call expect(st, GPUFMM_ERROR_TYPE_MISMATCH, 'gemm real32 alpha on float64')
    call gpufmm_array_gemv('Q', 1.0_real64, m1, a, 0.0_real64, b, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'gemv trans Q')
    call gpufmm_array_gemv('N', 1.0_real64, m1, a, 0.0_real64, m3, st)          ! x has 6, needs 3
    call expect(st, GPUFMM_ERROR_SIZE_MISMATCH, 'gemv x size')
    call gpufmm_array_download(m3, gm)
    call check(all(gm == 9), 'C unchanged after failed gemm/gemv')

    ! ---- create: rank and dims
    call gpufmm_array_create(ctx, GPUFMM_FLOAT64, [2, 2, 2, 2], c2, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'create rank 4')
    call expect_message('rank', 'create rank 4')
    call gpufmm_array_create(ctx, GPUFMM_FLOAT64, [integer ::], c2, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'create rank 0')
    call gpufmm_array_create(ctx, GPUFMM_FLOAT64, [3, -1], c2, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'create negative dims')
    call check(.not. gpufmm_array_associated(c2), 'handle null after failed creates')
    call gpufmm_array_create(ctx2, GPUFMM_FLOAT64, [3], c2, st)
    call expect(st, GPUFMM_ERROR_INVALID_HANDLE, 'create on a null context')

    ! ---- a context with live arrays refuses to be destroyed, and stays usable
    call gpufmm_context_create(ctx2, GPUFMM_DEVICE_CPU)
    call gpufmm_array_create(ctx2, GPUFMM_FLOAT64, [6], c2)
    call gpufmm_context_destroy(ctx2, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'destroy a context with a live array')
    call check(gpufmm_context_associated(ctx2), 'context kept after refused destroy')
    call gpufmm_array_copy(a, c2, st)
    call expect(st, GPUFMM_ERROR_INVALID_ARGUMENT, 'copy between arrays of different contexts')
    call gpufmm_array_upload(c2, h)
    call gpufmm_array_destroy(c2)
    call gpufmm_context_destroy(ctx2, st)
    call expect(st, GPUFMM_SUCCESS, 'destroy the context after its arrays')
    call check(.not. gpufmm_context_associated(ctx2), 'context handle nulled')
    call gpufmm_context_destroy(ctx2, st)
    call expect(st, GPUFMM_SUCCESS, 'destroying a null context is a no-op')

    call gpufmm_array_destroy(a)
    call gpufmm_array_destroy(b)
    call gpufmm_array_destroy(a4)
    call gpufmm_array_destroy(c8)
    call gpufmm_array_destroy(i1)
    call gpufmm_array_destroy(m1)
    call gpufmm_array_destroy(m2)
    call gpufmm_array_destroy(m3)
  end subroutine test_errors

end module test_fortran_arrays_support

program test_fortran_arrays
  use test_fortran_arrays_support
  implicit none
  integer :: device

  device = test_device()
  call test_library_and_context(device)
  call test_i4()
  call test_i8()
  call test_r4()
  call test_r8()
  call test_c4()
  call test_c8()
  call blas_r4()
  call blas_r8()
  call blas_c4()
  call blas_c8()
  call test_create_wrap_empty()
  call test_errors()
  call gpufmm_context_destroy(ctx)

  call finish_checks('test_fortran_arrays')
end program test_fortran_arrays
