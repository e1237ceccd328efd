! ============================================================================
! GENERATED FILE - DO NOT EDIT BY HAND.
! Made from bindings/fortran/gpufmm_array.fypp by tools/gen-fortran; edit the template, run
!     tools/gen-fortran
! from the repository root and commit both (building does not need fypp:
! this file is checked in; the CTest fortran_generated_up_to_date fails when
! it is stale).
! ============================================================================

!> gpufmm_array_mod - device arrays for Fortran (see docs/fortran.md).
!>
!> type(gpufmm_array) is an opaque handle to an array of rank 1-3 that lives
!> on the context's device (host memory on the CPU backend). Data stays on
!> the device between calls; gpufmm_array_data gives the raw device pointer
!> for your own kernels.
!>
!> Kinds. Host arrays, scalars and results are integer(int32),
!> integer(int64), real(real32), real(real64), complex(real32) and
!> complex(real64) (iso_fortran_env), which are the dtypes GPUFMM_INT32,
!> GPUFMM_INT64, GPUFMM_FLOAT32, GPUFMM_FLOAT64, GPUFMM_COMPLEX64 and
!> GPUFMM_COMPLEX128. The kind of a host array, scalar or result must be
!> the array's dtype exactly: nothing is converted, and a wrong kind fails
!> with GPUFMM_ERROR_TYPE_MISMATCH (so 2.0 does not fit a GPUFMM_FLOAT64
!> array: write 2.0_real64). nrm2 returns the real kind of the array's
!> precision.
!>
!> Shapes. Arrays are column-major like Fortran arrays. Transfers check the
!> element count only (GPUFMM_ERROR_SIZE_MISMATCH): a rank-1 host array may
!> fill a rank-2 device array, as with sequence association.
!>
!> Offsets. copy_range takes 1-BASED element offsets, counted over the
!> array's elements in column-major order (src_offset = 1 is the first
!> element), and converts them to the C library's 0-based offsets.
!>
!> Errors. Every procedure takes `integer, optional, intent(out) :: status`
!> last. Absent, a failure stops the program (error stop with the message);
!> present, it receives the GPUFMM_* code and gpufmm_last_error_message()
!> says what went wrong. A failed call leaves its outputs (handles, host
!> arrays, results, device arrays) unchanged. See gpufmm_core.
!>
!> Async transfers. gpufmm_array_upload_async / _download_async queue the
!> copy on the context's stream. The host array must be contiguous (a
!> non-contiguous section fails with GPUFMM_ERROR_INVALID_ARGUMENT), should
!> have the TARGET attribute, and must stay alive (and, for uploads,
!> unchanged) until gpufmm_context_synchronize. On the CPU backend they are
!> synchronous.
!>
!> Handles are freed with gpufmm_array_destroy, before their context is
!> destroyed; there are no finalizers.
module gpufmm_array_mod
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_ptr, c_null_ptr, c_loc, c_associated
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use gpufmm_core, itoa => gpufmm_itoa
  implicit none
  private

  !> A device array handle (opaque). Default-initialised to the null state.
  type, public, extends(gpufmm_handle) :: gpufmm_array
  end type gpufmm_array

  public :: gpufmm_array_create, gpufmm_array_create_like, gpufmm_array_wrap, gpufmm_array_destroy
  public :: gpufmm_array_upload, gpufmm_array_download
  public :: gpufmm_array_upload_async, gpufmm_array_download_async
  public :: gpufmm_array_copy, gpufmm_array_copy_range, gpufmm_array_fill
  public :: gpufmm_array_axpy, gpufmm_array_scal, gpufmm_array_dot, gpufmm_array_nrm2
  public :: gpufmm_array_gemv, gpufmm_array_gemm
  public :: gpufmm_array_sum, gpufmm_array_min, gpufmm_array_max
  public :: gpufmm_array_dtype, gpufmm_array_rank, gpufmm_array_dims, gpufmm_array_size
  public :: gpufmm_array_data, gpufmm_array_associated, gpufmm_array_c_ptr

  ! Operation codes of the common (kind-agnostic) routines.
  integer, parameter :: OP_UPLOAD = 1, OP_DOWNLOAD = 2, OP_UPLOAD_ASYNC = 3, &
       OP_DOWNLOAD_ASYNC = 4, OP_FILL = 5, OP_SUM = 6, OP_MIN = 7, OP_MAX = 8, &
       OP_NRM2 = 9, OP_SCAL = 10, OP_AXPY = 11, OP_DOT = 12

  ! ------------------------------------------------------------------ generic interfaces

  !> create(ctx, dtype, dims, a [, status]): new array, dims(1:rank) of kind int32 or int64;
  !>   contents undefined
  interface gpufmm_array_create
     module procedure create_i4, create_i8
  end interface gpufmm_array_create

  !> wrap(ctx, dtype, dims, data, a [, status]): array over memory you own (device pointer on a
  !>   GPU); destroy does not free it
  interface gpufmm_array_wrap
     module procedure wrap_i4, wrap_i8
  end interface gpufmm_array_wrap

  !> create_like(ctx, host, a [, status]): new array with the kind and shape of host (data not
  !>   copied)
  interface gpufmm_array_create_like
     module procedure create_like_i4_1, create_like_i4_2, create_like_i4_3
     module procedure create_like_i8_1, create_like_i8_2, create_like_i8_3
     module procedure create_like_r4_1, create_like_r4_2, create_like_r4_3
     module procedure create_like_r8_1, create_like_r8_2, create_like_r8_3
     module procedure create_like_c4_1, create_like_c4_2, create_like_c4_3
     module procedure create_like_c8_1, create_like_c8_2, create_like_c8_3
  end interface gpufmm_array_create_like

  !> upload(a, host [, status]): a = host (element counts must match)
  interface gpufmm_array_upload
     module procedure upload_i4_1, upload_i4_2, upload_i4_3
     module procedure upload_i8_1, upload_i8_2, upload_i8_3
     module procedure upload_r4_1, upload_r4_2, upload_r4_3
     module procedure upload_r8_1, upload_r8_2, upload_r8_3
     module procedure upload_c4_1, upload_c4_2, upload_c4_3
     module procedure upload_c8_1, upload_c8_2, upload_c8_3
  end interface gpufmm_array_upload

  !> download(a, host [, status]): host = a
  interface gpufmm_array_download
     module procedure download_i4_1, download_i4_2, download_i4_3
     module procedure download_i8_1, download_i8_2, download_i8_3
     module procedure download_r4_1, download_r4_2, download_r4_3
     module procedure download_r8_1, download_r8_2, download_r8_3
     module procedure download_c4_1, download_c4_2, download_c4_3
     module procedure download_c8_1, download_c8_2, download_c8_3
  end interface gpufmm_array_download

  !> upload_async(a, host [, status]): queued upload; see the module header
  interface gpufmm_array_upload_async
     module procedure upload_async_i4_1, upload_async_i4_2, upload_async_i4_3
     module procedure upload_async_i8_1, upload_async_i8_2, upload_async_i8_3
     module procedure upload_async_r4_1, upload_async_r4_2, upload_async_r4_3
     module procedure upload_async_r8_1, upload_async_r8_2, upload_async_r8_3
     module procedure upload_async_c4_1, upload_async_c4_2, upload_async_c4_3
     module procedure upload_async_c8_1, upload_async_c8_2, upload_async_c8_3
  end interface gpufmm_array_upload_async

  !> download_async(a, host [, status]): queued download; see the module header
  interface gpufmm_array_download_async
     module procedure download_async_i4_1, download_async_i4_2, download_async_i4_3
     module procedure download_async_i8_1, download_async_i8_2, download_async_i8_3
     module procedure download_async_r4_1, download_async_r4_2, download_async_r4_3
     module procedure download_async_r8_1, download_async_r8_2, download_async_r8_3
     module procedure download_async_c4_1, download_async_c4_2, download_async_c4_3
     module procedure download_async_c8_1, download_async_c8_2, download_async_c8_3
  end interface gpufmm_array_download_async

  !> copy_range(src, src_offset, dst, dst_offset, count [, status]): dst(dst_offset+i) =
  !>   src(src_offset+i), i = 0..count-1; 1-BASED offsets over the elements in column-major
  !>   order; integer arguments all int32 or all int64
  interface gpufmm_array_copy_range
     module procedure copy_range_i4, copy_range_i8
  end interface gpufmm_array_copy_range

  !> fill(a, value [, status]): every element = value
  interface gpufmm_array_fill
     module procedure fill_i4, fill_i8, fill_r4
     module procedure fill_r8, fill_c4, fill_c8
  end interface gpufmm_array_fill

  !> axpy(alpha, x, y [, status]): y = y + alpha*x
  interface gpufmm_array_axpy
     module procedure axpy_r4, axpy_r8, axpy_c4
     module procedure axpy_c8
  end interface gpufmm_array_axpy

  !> scal(alpha, x [, status]): x = alpha*x
  interface gpufmm_array_scal
     module procedure scal_r4, scal_r8, scal_c4
     module procedure scal_c8
  end interface gpufmm_array_scal

  !> dot(x, y, result [, status]): result = dot_product(x, y) (conjugates x when complex)
  interface gpufmm_array_dot
     module procedure dot_r4, dot_r8, dot_c4
     module procedure dot_c8
  end interface gpufmm_array_dot

  !> nrm2(x, result [, status]): result = norm2(abs(x)), real of x's precision
  interface gpufmm_array_nrm2
     module procedure nrm2_r4, nrm2_r8
  end interface gpufmm_array_nrm2

  !> gemv(trans, alpha, a, x, beta, y [, status]): y = alpha*op(a)*x + beta*y; trans 'N', 'T' or
  !>   'C'
  interface gpufmm_array_gemv
     module procedure gemv_r4, gemv_r8, gemv_c4
     module procedure gemv_c8
  end interface gpufmm_array_gemv

  !> gemm(transa, transb, alpha, a, b, beta, c [, status]): c = alpha*op(a)*op(b) + beta*c
  interface gpufmm_array_gemm
     module procedure gemm_r4, gemm_r8, gemm_c4
     module procedure gemm_c8
  end interface gpufmm_array_gemm

  !> sum(a, result [, status]): result = sum(a) (integers wrap)
  interface gpufmm_array_sum
     module procedure sum_i4, sum_i8, sum_r4
     module procedure sum_r8, sum_c4, sum_c8
  end interface gpufmm_array_sum

  !> min(a, result [, status]): result = minval(a); not for complex; INVALID_ARGUMENT if empty
  interface gpufmm_array_min
     module procedure min_i4, min_i8, min_r4
     module procedure min_r8
  end interface gpufmm_array_min

  !> max(a, result [, status]): result = maxval(a); not for complex; INVALID_ARGUMENT if empty
  interface gpufmm_array_max
     module procedure max_i4, max_i8, max_r4
     module procedure max_r8
  end interface gpufmm_array_max

  ! ------------------------------------------------------------------ raw C interfaces (private)
  interface
     function c_array_create(ctx, dtype, rank, dims, a) bind(c, name='gpufmm_array_create') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int), value :: dtype, rank
       integer(c_int64_t), intent(in) :: dims(*)
       type(c_ptr), intent(out) :: a
       integer(c_int) :: s
     end function c_array_create
     function c_array_wrap(ctx, dtype, rank, dims, data, a) bind(c, name='gpufmm_array_wrap') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int), value :: dtype, rank
       integer(c_int64_t), intent(in) :: dims(*)
       type(c_ptr), value :: data
       type(c_ptr), intent(out) :: a
       integer(c_int) :: s
     end function c_array_wrap
     function c_array_destroy(a) bind(c, name='gpufmm_array_destroy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a
       integer(c_int) :: s
     end function c_array_destroy
     function c_array_dtype(a, dtype) bind(c, name='gpufmm_array_dtype') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a
       integer(c_int), intent(out) :: dtype
       integer(c_int) :: s
     end function c_array_dtype
     function c_array_rank(a, rank) bind(c, name='gpufmm_array_rank') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a
       integer(c_int), intent(out) :: rank
       integer(c_int) :: s
     end function c_array_rank
     function c_array_dims(a, dims) bind(c, name='gpufmm_array_dims') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: a
       integer(c_int64_t), intent(out) :: dims(*)
       integer(c_int) :: s
     end function c_array_dims
     function c_array_size(a, count) bind(c, name='gpufmm_array_size') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: a
       integer(c_int64_t), intent(out) :: count
       integer(c_int) :: s
     end function c_array_size
     function c_array_data(a, data) bind(c, name='gpufmm_array_data') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a
       type(c_ptr), intent(out) :: data
       integer(c_int) :: s
     end function c_array_data
     function c_array_copy(src, dst) bind(c, name='gpufmm_array_copy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: src, dst
       integer(c_int) :: s
     end function c_array_copy
     function c_array_copy_range(src, src_offset, dst, dst_offset, count) &
          bind(c, name='gpufmm_array_copy_range') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: src, dst
       integer(c_int64_t), value :: src_offset, dst_offset, count
       integer(c_int) :: s
     end function c_array_copy_range
     function c_array_axpy(alpha, x, y) bind(c, name='gpufmm_array_axpy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: alpha, x, y
       integer(c_int) :: s
     end function c_array_axpy
     function c_array_scal(alpha, x) bind(c, name='gpufmm_array_scal') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: alpha, x
       integer(c_int) :: s
     end function c_array_scal
     function c_array_dot(x, y, result) bind(c, name='gpufmm_array_dot') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: x, y, result
       integer(c_int) :: s
     end function c_array_dot
     function c_array_gemv(trans, alpha, a, x, beta, y) bind(c, name='gpufmm_array_gemv') result(s)
       import :: c_int, c_ptr
       integer(c_int), value :: trans
       type(c_ptr), value :: alpha, a, x, beta, y
       integer(c_int) :: s
     end function c_array_gemv
     function c_array_gemm(transa, transb, alpha, a, b, beta, c) &
          bind(c, name='gpufmm_array_gemm') result(s)
       import :: c_int, c_ptr
       integer(c_int), value :: transa, transb
       type(c_ptr), value :: alpha, a, b, beta, c
       integer(c_int) :: s
     end function c_array_gemm
     ! Entry points with the same C signature: one bind(c) interface each.
     function c_array_upload(a, host, count) bind(c, name='gpufmm_array_upload') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: a, host
       integer(c_int64_t), value :: count
       integer(c_int) :: s
     end function c_array_upload
     function c_array_download(a, host, count) bind(c, name='gpufmm_array_download') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: a, host
       integer(c_int64_t), value :: count
       integer(c_int) :: s
     end function c_array_download
     function c_array_upload_async(a, host, count) bind(c, name='gpufmm_array_upload_async') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: a, host
       integer(c_int64_t), value :: count
       integer(c_int) :: s
     end function c_array_upload_async
     function c_array_download_async(a, host, count) bind(c, name='gpufmm_array_download_async') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: a, host
       integer(c_int64_t), value :: count
       integer(c_int) :: s
     end function c_array_download_async
     function c_array_fill(a, value) bind(c, name='gpufmm_array_fill') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a, value
       integer(c_int) :: s
     end function c_array_fill
     function c_array_sum(a, value) bind(c, name='gpufmm_array_sum') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a, value
       integer(c_int) :: s
     end function c_array_sum
     function c_array_min(a, value) bind(c, name='gpufmm_array_min') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a, value
       integer(c_int) :: s
     end function c_array_min
     function c_array_max(a, value) bind(c, name='gpufmm_array_max') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a, value
       integer(c_int) :: s
     end function c_array_max
     function c_array_nrm2(a, value) bind(c, name='gpufmm_array_nrm2') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a, value
       integer(c_int) :: s
     end function c_array_nrm2
  end interface

  !> The handle queries of gpufmm_core under this type's names.
  interface gpufmm_array_associated
     module procedure gpufmm_associated
  end interface gpufmm_array_associated
  interface gpufmm_array_c_ptr
     module procedure gpufmm_c_ptr
  end interface gpufmm_array_c_ptr

contains

  ! ================================================================== common routines

  !> Ends a call: hands s to gpufmm_check_status, with the Fortran-side
  !> message when there is one.
  subroutine finish(s, msg, status, where)
    integer(c_int), intent(in) :: s
    character(len=:), allocatable, intent(in) :: msg
    integer, optional, intent(out) :: status
    character(len=*), intent(in) :: where
    if (allocated(msg)) then
       call gpufmm_check_status(s, status, where, msg)
    else
       call gpufmm_check_status(s, status, where)
    end if
  end subroutine finish

  !> s = SUCCESS if array a's dtype is one of `allowed`; else TYPE_MISMATCH
  !> with a message saying that `what` (of Fortran type ftype) does not fit;
  !> or the C status if a is not a live handle.
  subroutine check_dtype(a, aname, allowed, what, ftype, s, msg)
    type(gpufmm_array), intent(in) :: a
    character(len=*), intent(in) :: aname, what, ftype
    integer(c_int), intent(in) :: allowed(:)
    integer(c_int), intent(out) :: s
    character(len=:), allocatable, intent(inout) :: msg
    integer(c_int) :: dt
    dt = -1
    s = c_array_dtype(gpufmm_c_ptr(a), dt)
    if (s /= GPUFMM_SUCCESS) return
    if (any(allowed == dt)) return
    s = GPUFMM_ERROR_TYPE_MISMATCH
    msg = what // ' is ' // ftype // ', which does not fit array ''' // aname // ''' of dtype ' // &
         gpufmm_dtype_name(dt)
  end subroutine check_dtype

  !> 'N' / 'T' / 'C' (either case) to GPUFMM_OP_*; -1 if not one of them.
  pure integer(c_int) function op_code(trans)
    character(len=*), intent(in) :: trans
    op_code = -1
    if (len(trans) < 1) return
    select case (trans(1:1))
    case ('N', 'n'); op_code = GPUFMM_OP_N
    case ('T', 't'); op_code = GPUFMM_OP_T
    case ('C', 'c'); op_code = GPUFMM_OP_C
    end select
  end function op_code

  !> create (wrap = .false.) or wrap (wrap = .true.: over `data`)
  subroutine do_create(ctx, dtype, dims, wrap, data, a, status, where)
    type(gpufmm_context), intent(in) :: ctx
    integer, intent(in) :: dtype
    integer(c_int64_t), intent(in) :: dims(:)
    logical, intent(in) :: wrap
    type(c_ptr), intent(in) :: data
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    character(len=*), intent(in) :: where
    integer(c_int64_t) :: d(GPUFMM_MAX_RANK)
    type(c_ptr) :: p
    integer(c_int) :: s
    character(len=:), allocatable :: msg
    if (size(dims) < 1 .or. size(dims) > GPUFMM_MAX_RANK) then
       s = GPUFMM_ERROR_INVALID_ARGUMENT
       msg = 'dims has ' // itoa(size(dims)) // ' entries; the rank must be 1 to 3'
    else
       d = 1
       d(1:size(dims)) = dims
       p = c_null_ptr
       if (wrap) then
          s = c_array_wrap(gpufmm_context_c_ptr(ctx), int(dtype, c_int), int(size(dims), c_int), &
               d, data, p)
       else
          s = c_array_create(gpufmm_context_c_ptr(ctx), int(dtype, c_int), int(size(dims), c_int), &
               d, p)
       end if
       if (s == GPUFMM_SUCCESS) call gpufmm_handle_set(a, p)
    end if
    call finish(s, msg, status, where)
  end subroutine do_create

  subroutine do_transfer(op, a, host, count, dtype, ftype, status)
    integer, intent(in) :: op
    type(gpufmm_array), intent(in) :: a
    type(c_ptr), intent(in) :: host
    integer(int64), intent(in) :: count   ! -1: a non-contiguous async host array
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(in) :: ftype
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    integer(c_int64_t) :: n
    character(len=:), allocatable :: msg, where
    select case (op)
    case (OP_UPLOAD);         where = 'gpufmm_array_upload'
    case (OP_DOWNLOAD);       where = 'gpufmm_array_download'
    case (OP_UPLOAD_ASYNC);   where = 'gpufmm_array_upload_async'
    case default;             where = 'gpufmm_array_download_async'
    end select
    call check_dtype(a, 'a', [dtype], 'host', ftype, s, msg)
    if (s == GPUFMM_SUCCESS .and. count < 0) then
       s = GPUFMM_ERROR_INVALID_ARGUMENT
       msg = 'host must be a contiguous array for an asynchronous transfer'
    end if
    if (s == GPUFMM_SUCCESS) then
       n = -1
       s = c_array_size(gpufmm_c_ptr(a), n)
       if (s == GPUFMM_SUCCESS .and. n /= count) then
          s = GPUFMM_ERROR_SIZE_MISMATCH
          msg = 'host has ' // itoa(count) // ' elements but array ''a'' has ' // itoa(n)
       end if
    end if
    if (s == GPUFMM_SUCCESS) then
       select case (op)
       case (OP_UPLOAD);         s = c_array_upload(gpufmm_c_ptr(a), host, count)
       case (OP_DOWNLOAD);       s = c_array_download(gpufmm_c_ptr(a), host, count)
       case (OP_UPLOAD_ASYNC);   s = c_array_upload_async(gpufmm_c_ptr(a), host, count)
       case default;             s = c_array_download_async(gpufmm_c_ptr(a), host, count)
       end select
    end if
    call finish(s, msg, status, where)
  end subroutine do_transfer

  !> Operations on one array and one host scalar (in or out).
  subroutine do_scalar_op(op, a, value, allowed, ftype, status)
    integer, intent(in) :: op
    type(gpufmm_array), intent(in) :: a
    type(c_ptr), intent(in) :: value
    integer(c_int), intent(in) :: allowed(:)
    character(len=*), intent(in) :: ftype
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    character(len=:), allocatable :: msg, where, what, aname
    aname = 'a'
    what = 'result'
    select case (op)
    case (OP_FILL); where = 'gpufmm_array_fill'; what = 'value'
    case (OP_SUM);  where = 'gpufmm_array_sum'
    case (OP_MIN);  where = 'gpufmm_array_min'
    case (OP_MAX);  where = 'gpufmm_array_max'
    case (OP_NRM2); where = 'gpufmm_array_nrm2'; aname = 'x'
    case default;   where = 'gpufmm_array_scal'; what = 'alpha'; aname = 'x'
    end select
    call check_dtype(a, aname, allowed, what, ftype, s, msg)
    if (s == GPUFMM_SUCCESS) then
       select case (op)
       case (OP_FILL); s = c_array_fill(gpufmm_c_ptr(a), value)
       case (OP_SUM);  s = c_array_sum(gpufmm_c_ptr(a), value)
       case (OP_MIN);  s = c_array_min(gpufmm_c_ptr(a), value)
       case (OP_MAX);  s = c_array_max(gpufmm_c_ptr(a), value)
       case (OP_NRM2); s = c_array_nrm2(gpufmm_c_ptr(a), value)
       case default;   s = c_array_scal(value, gpufmm_c_ptr(a))
       end select
    end if
    call finish(s, msg, status, where)
  end subroutine do_scalar_op

  !> axpy (value = alpha, checked against y) and dot (value = result,
  !> checked against x); the C library checks x against y.
  subroutine do_pair_op(op, x, y, value, dtype, ftype, status)
    integer, intent(in) :: op
    type(gpufmm_array), intent(in) :: x, y
    type(c_ptr), intent(in) :: value
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(in) :: ftype
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    character(len=:), allocatable :: msg
    if (op == OP_AXPY) then
       call check_dtype(y, 'y', [dtype], 'alpha', ftype, s, msg)
       if (s == GPUFMM_SUCCESS) s = c_array_axpy(value, gpufmm_c_ptr(x), gpufmm_c_ptr(y))
       call finish(s, msg, status, 'gpufmm_array_axpy')
    else
       call check_dtype(x, 'x', [dtype], 'result', ftype, s, msg)
       if (s == GPUFMM_SUCCESS) s = c_array_dot(gpufmm_c_ptr(x), gpufmm_c_ptr(y), value)
       call finish(s, msg, status, 'gpufmm_array_dot')
    end if
  end subroutine do_pair_op

  subroutine do_gemv(trans, alpha, a, x, beta, y, dtype, ftype, status)
    character(len=*), intent(in) :: trans
    type(c_ptr), intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, x, y
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(in) :: ftype
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    character(len=:), allocatable :: msg
    if (op_code(trans) < 0) then
       s = GPUFMM_ERROR_INVALID_ARGUMENT
       msg = 'trans = ''' // trans // ''' must be ''N'', ''T'' or ''C'''
    else
       call check_dtype(y, 'y', [dtype], 'alpha', ftype, s, msg)
       if (s == GPUFMM_SUCCESS) s = c_array_gemv(op_code(trans), alpha, gpufmm_c_ptr(a), gpufmm_c_ptr(x), beta, gpufmm_c_ptr(y))
    end if
    call finish(s, msg, status, 'gpufmm_array_gemv')
  end subroutine do_gemv

  subroutine do_gemm(transa, transb, alpha, a, b, beta, c, dtype, ftype, status)
    character(len=*), intent(in) :: transa, transb
    type(c_ptr), intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, b, c
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(in) :: ftype
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    character(len=:), allocatable :: msg
    if (op_code(transa) < 0) then
       s = GPUFMM_ERROR_INVALID_ARGUMENT
       msg = 'transa = ''' // transa // ''' must be ''N'', ''T'' or ''C'''
    else if (op_code(transb) < 0) then
       s = GPUFMM_ERROR_INVALID_ARGUMENT
       msg = 'transb = ''' // transb // ''' must be ''N'', ''T'' or ''C'''
    else
       call check_dtype(c, 'c', [dtype], 'alpha', ftype, s, msg)
       if (s == GPUFMM_SUCCESS) s = c_array_gemm(op_code(transa), op_code(transb), alpha, gpufmm_c_ptr(a), &
            gpufmm_c_ptr(b), beta, gpufmm_c_ptr(c))
    end if
    call finish(s, msg, status, 'gpufmm_array_gemm')
  end subroutine do_gemm

  !> 1-based offsets, checked here so that messages speak of them; the C
  !> library gets 0-based ones and checks dtypes and overlap.
  subroutine do_copy_range(src, src_offset, dst, dst_offset, count, status)
    type(gpufmm_array), intent(in) :: src, dst
    integer(int64), intent(in) :: src_offset, dst_offset, count
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    integer(c_int64_t) :: nsrc, ndst
    character(len=:), allocatable :: msg
    nsrc = 0
    ndst = 0
    s = c_array_size(gpufmm_c_ptr(src), nsrc)
    if (s == GPUFMM_SUCCESS) s = c_array_size(gpufmm_c_ptr(dst), ndst)
    if (s == GPUFMM_SUCCESS) then
       if (count < 0) then
          msg = 'count = ' // itoa(count) // ' must be >= 0'
       else if (src_offset < 1) then
          msg = 'src_offset = ' // itoa(src_offset) // ' must be >= 1 (offsets are 1-based)'
       else if (dst_offset < 1) then
          msg = 'dst_offset = ' // itoa(dst_offset) // ' must be >= 1 (offsets are 1-based)'
       else if (count > nsrc - (src_offset - 1)) then
          msg = 'src_offset = ' // itoa(src_offset) // ', count = ' // itoa(count) // &
               ': elements ' // itoa(src_offset) // ' to ' // itoa(src_offset + count - 1) // &
               ' are outside src, which has ' // itoa(nsrc) // ' elements'
       else if (count > ndst - (dst_offset - 1)) then
          msg = 'dst_offset = ' // itoa(dst_offset) // ', count = ' // itoa(count) // &
               ': elements ' // itoa(dst_offset) // ' to ' // itoa(dst_offset + count - 1) // &
               ' are outside dst, which has ' // itoa(ndst) // ' elements'
       end if
       if (allocated(msg)) then
          s = GPUFMM_ERROR_INVALID_ARGUMENT
       else
          s = c_array_copy_range(gpufmm_c_ptr(src), src_offset - 1, gpufmm_c_ptr(dst), dst_offset - 1, count)
       end if
    end if
    call finish(s, msg, status, 'gpufmm_array_copy_range')
  end subroutine do_copy_range

  ! ================================================================== non-generic public procedures

  !> Frees the array (device memory unless it was wrapped) and nulls the
  !> handle. Destroying a null handle is a no-op.
  subroutine gpufmm_array_destroy(a, status)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call gpufmm_handle_destroyed(a, c_array_destroy(gpufmm_c_ptr(a)), status, 'gpufmm_array_destroy')
  end subroutine gpufmm_array_destroy

  !> dst = src: same dtype, same element count, same context.
  subroutine gpufmm_array_copy(src, dst, status)
    type(gpufmm_array), intent(in) :: src, dst
    integer, optional, intent(out) :: status
    call gpufmm_check_status(c_array_copy(gpufmm_c_ptr(src), gpufmm_c_ptr(dst)), status, 'gpufmm_array_copy')
  end subroutine gpufmm_array_copy

  !> The array's dtype (GPUFMM_INT32 ... GPUFMM_COMPLEX128; -1 on failure).
  function gpufmm_array_dtype(a, status) result(dtype)
    type(gpufmm_array), intent(in) :: a
    integer, optional, intent(out) :: status
    integer :: dtype
    integer(c_int) :: s, d
    d = -1
    s = c_array_dtype(gpufmm_c_ptr(a), d)
    dtype = -1
    if (s == GPUFMM_SUCCESS) dtype = d
    call gpufmm_check_status(s, status, 'gpufmm_array_dtype')
  end function gpufmm_array_dtype

  !> The array's rank, 1 to 3 (0 on failure).
  function gpufmm_array_rank(a, status) result(rank)
    type(gpufmm_array), intent(in) :: a
    integer, optional, intent(out) :: status
    integer :: rank
    integer(c_int) :: s, r
    r = 0
    s = c_array_rank(gpufmm_c_ptr(a), r)
    rank = 0
    if (s == GPUFMM_SUCCESS) rank = r
    call gpufmm_check_status(s, status, 'gpufmm_array_rank')
  end function gpufmm_array_rank

  !> The extents dims(1:3); those beyond the rank are 1 (all 0 on failure).
  function gpufmm_array_dims(a, status) result(dims)
    type(gpufmm_array), intent(in) :: a
    integer, optional, intent(out) :: status
    integer(int64) :: dims(GPUFMM_MAX_RANK)
    integer(c_int64_t) :: d(GPUFMM_MAX_RANK)
    integer(c_int) :: s
    d = 0
    s = c_array_dims(gpufmm_c_ptr(a), d)
    dims = 0
    if (s == GPUFMM_SUCCESS) dims = d
    call gpufmm_check_status(s, status, 'gpufmm_array_dims')
  end function gpufmm_array_dims

  !> The number of elements (-1 on failure).
  function gpufmm_array_size(a, status) result(n)
    type(gpufmm_array), intent(in) :: a
    integer, optional, intent(out) :: status
    integer(int64) :: n
    integer(c_int64_t) :: c
    integer(c_int) :: s
    c = -1
    s = c_array_size(gpufmm_c_ptr(a), c)
    n = -1
    if (s == GPUFMM_SUCCESS) n = c
    call gpufmm_check_status(s, status, 'gpufmm_array_size')
  end function gpufmm_array_size

  !> The raw data pointer: device memory on a GPU context (pass it to your
  !> own kernels, with gpufmm_context_stream), host memory on the CPU
  !> backend. Valid until the array is destroyed. c_null_ptr on failure, and
  !> possibly for an empty array.
  function gpufmm_array_data(a, status) result(data)
    type(gpufmm_array), intent(in) :: a
    integer, optional, intent(out) :: status
    type(c_ptr) :: data
    type(c_ptr) :: p
    integer(c_int) :: s
    p = c_null_ptr
    s = c_array_data(gpufmm_c_ptr(a), p)
    data = c_null_ptr
    if (s == GPUFMM_SUCCESS) data = p
    call gpufmm_check_status(s, status, 'gpufmm_array_data')
  end function gpufmm_array_data

  ! ================================================================== generated specifics

  subroutine create_i4(ctx, dtype, dims, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer, intent(in) :: dtype
    integer(int32), intent(in) :: dims(:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, dtype, int(dims, c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create')
  end subroutine create_i4

  subroutine wrap_i4(ctx, dtype, dims, data, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer, intent(in) :: dtype
    integer(int32), intent(in) :: dims(:)
    type(c_ptr), intent(in) :: data
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, dtype, int(dims, c_int64_t), .true., data, a, status, 'gpufmm_array_wrap')
  end subroutine wrap_i4

  subroutine copy_range_i4(src, src_offset, dst, dst_offset, count, status)
    type(gpufmm_array), intent(in) :: src, dst
    integer(int32), intent(in) :: src_offset, dst_offset, count
    integer, optional, intent(out) :: status
    call do_copy_range(src, int(src_offset, int64), dst, int(dst_offset, int64), &
         int(count, int64), status)
  end subroutine copy_range_i4

  subroutine create_i8(ctx, dtype, dims, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer, intent(in) :: dtype
    integer(int64), intent(in) :: dims(:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, dtype, int(dims, c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create')
  end subroutine create_i8

  subroutine wrap_i8(ctx, dtype, dims, data, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer, intent(in) :: dtype
    integer(int64), intent(in) :: dims(:)
    type(c_ptr), intent(in) :: data
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, dtype, int(dims, c_int64_t), .true., data, a, status, 'gpufmm_array_wrap')
  end subroutine wrap_i8

  subroutine copy_range_i8(src, src_offset, dst, dst_offset, count, status)
    type(gpufmm_array), intent(in) :: src, dst
    integer(int64), intent(in) :: src_offset, dst_offset, count
    integer, optional, intent(out) :: status
    call do_copy_range(src, int(src_offset, int64), dst, int(dst_offset, int64), &
         int(count, int64), status)
  end subroutine copy_range_i8

  subroutine create_like_i4_1(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer(int32), intent(in) :: host(:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_INT32, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_i4_1

  subroutine upload_i4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), contiguous, target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine upload_i4_1

  subroutine download_i4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), contiguous, target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine download_i4_1

  subroutine upload_async_i4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine upload_async_i4_1

  subroutine download_async_i4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine download_async_i4_1

  subroutine create_like_i4_2(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer(int32), intent(in) :: host(:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_INT32, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_i4_2

  subroutine upload_i4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), contiguous, target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine upload_i4_2

  subroutine download_i4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), contiguous, target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine download_i4_2

  subroutine upload_async_i4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine upload_async_i4_2

  subroutine download_async_i4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine download_async_i4_2

  subroutine create_like_i4_3(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer(int32), intent(in) :: host(:,:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_INT32, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_i4_3

  subroutine upload_i4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), contiguous, target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine upload_i4_3

  subroutine download_i4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), contiguous, target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine download_i4_3

  subroutine upload_async_i4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine upload_async_i4_3

  subroutine download_async_i4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_INT32, 'integer(int32)', status)
  end subroutine download_async_i4_3

  subroutine create_like_i8_1(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer(int64), intent(in) :: host(:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_INT64, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_i8_1

  subroutine upload_i8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), contiguous, target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine upload_i8_1

  subroutine download_i8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), contiguous, target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine download_i8_1

  subroutine upload_async_i8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine upload_async_i8_1

  subroutine download_async_i8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine download_async_i8_1

  subroutine create_like_i8_2(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer(int64), intent(in) :: host(:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_INT64, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_i8_2

  subroutine upload_i8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), contiguous, target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine upload_i8_2

  subroutine download_i8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), contiguous, target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine download_i8_2

  subroutine upload_async_i8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine upload_async_i8_2

  subroutine download_async_i8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine download_async_i8_2

  subroutine create_like_i8_3(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer(int64), intent(in) :: host(:,:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_INT64, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_i8_3

  subroutine upload_i8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), contiguous, target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine upload_i8_3

  subroutine download_i8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), contiguous, target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine download_i8_3

  subroutine upload_async_i8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine upload_async_i8_3

  subroutine download_async_i8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_INT64, 'integer(int64)', status)
  end subroutine download_async_i8_3

  subroutine create_like_r4_1(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    real(real32), intent(in) :: host(:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_FLOAT32, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_r4_1

  subroutine upload_r4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), contiguous, target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine upload_r4_1

  subroutine download_r4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), contiguous, target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine download_r4_1

  subroutine upload_async_r4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine upload_async_r4_1

  subroutine download_async_r4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine download_async_r4_1

  subroutine create_like_r4_2(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    real(real32), intent(in) :: host(:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_FLOAT32, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_r4_2

  subroutine upload_r4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), contiguous, target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine upload_r4_2

  subroutine download_r4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), contiguous, target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine download_r4_2

  subroutine upload_async_r4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine upload_async_r4_2

  subroutine download_async_r4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine download_async_r4_2

  subroutine create_like_r4_3(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    real(real32), intent(in) :: host(:,:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_FLOAT32, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_r4_3

  subroutine upload_r4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), contiguous, target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine upload_r4_3

  subroutine download_r4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), contiguous, target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine download_r4_3

  subroutine upload_async_r4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine upload_async_r4_3

  subroutine download_async_r4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine download_async_r4_3

  subroutine create_like_r8_1(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    real(real64), intent(in) :: host(:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_FLOAT64, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_r8_1

  subroutine upload_r8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), contiguous, target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine upload_r8_1

  subroutine download_r8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), contiguous, target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine download_r8_1

  subroutine upload_async_r8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine upload_async_r8_1

  subroutine download_async_r8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine download_async_r8_1

  subroutine create_like_r8_2(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    real(real64), intent(in) :: host(:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_FLOAT64, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_r8_2

  subroutine upload_r8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), contiguous, target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine upload_r8_2

  subroutine download_r8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), contiguous, target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine download_r8_2

  subroutine upload_async_r8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine upload_async_r8_2

  subroutine download_async_r8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine download_async_r8_2

  subroutine create_like_r8_3(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    real(real64), intent(in) :: host(:,:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_FLOAT64, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_r8_3

  subroutine upload_r8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), contiguous, target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine upload_r8_3

  subroutine download_r8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), contiguous, target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine download_r8_3

  subroutine upload_async_r8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine upload_async_r8_3

  subroutine download_async_r8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine download_async_r8_3

  subroutine create_like_c4_1(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    complex(real32), intent(in) :: host(:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_COMPLEX64, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_c4_1

  subroutine upload_c4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), contiguous, target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine upload_c4_1

  subroutine download_c4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), contiguous, target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine download_c4_1

  subroutine upload_async_c4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine upload_async_c4_1

  subroutine download_async_c4_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine download_async_c4_1

  subroutine create_like_c4_2(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    complex(real32), intent(in) :: host(:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_COMPLEX64, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_c4_2

  subroutine upload_c4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), contiguous, target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine upload_c4_2

  subroutine download_c4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), contiguous, target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine download_c4_2

  subroutine upload_async_c4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine upload_async_c4_2

  subroutine download_async_c4_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine download_async_c4_2

  subroutine create_like_c4_3(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    complex(real32), intent(in) :: host(:,:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_COMPLEX64, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_c4_3

  subroutine upload_c4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), contiguous, target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine upload_c4_3

  subroutine download_c4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), contiguous, target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine download_c4_3

  subroutine upload_async_c4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine upload_async_c4_3

  subroutine download_async_c4_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine download_async_c4_3

  subroutine create_like_c8_1(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    complex(real64), intent(in) :: host(:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_COMPLEX128, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_c8_1

  subroutine upload_c8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), contiguous, target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine upload_c8_1

  subroutine download_c8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), contiguous, target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine download_c8_1

  subroutine upload_async_c8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), target, intent(in) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine upload_async_c8_1

  subroutine download_async_c8_1(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), target, intent(inout) :: host(:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine download_async_c8_1

  subroutine create_like_c8_2(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    complex(real64), intent(in) :: host(:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_COMPLEX128, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_c8_2

  subroutine upload_c8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), contiguous, target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine upload_c8_2

  subroutine download_c8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), contiguous, target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine download_c8_2

  subroutine upload_async_c8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), target, intent(in) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine upload_async_c8_2

  subroutine download_async_c8_2(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), target, intent(inout) :: host(:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine download_async_c8_2

  subroutine create_like_c8_3(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    complex(real64), intent(in) :: host(:,:,:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, GPUFMM_COMPLEX128, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_c8_3

  subroutine upload_c8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), contiguous, target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_UPLOAD, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine upload_c8_3

  subroutine download_c8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), contiguous, target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (n > 0) p = c_loc(host)
    call do_transfer(OP_DOWNLOAD, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine download_c8_3

  subroutine upload_async_c8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), target, intent(in) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_UPLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine upload_async_c8_3

  subroutine download_async_c8_3(a, host, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), target, intent(inout) :: host(:,:,:)
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if
    call do_transfer(OP_DOWNLOAD_ASYNC, a, p, n, GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine download_async_c8_3

  subroutine fill_i4(a, value, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), target, intent(in) :: value
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_FILL, a, c_loc(value), [GPUFMM_INT32], 'integer(int32)', status)
  end subroutine fill_i4

  subroutine sum_i4(a, result, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SUM, a, c_loc(result), [GPUFMM_INT32], 'integer(int32)', status)
  end subroutine sum_i4

  subroutine min_i4(a, result, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_MIN, a, c_loc(result), [GPUFMM_INT32], 'integer(int32)', status)
  end subroutine min_i4

  subroutine max_i4(a, result, status)
    type(gpufmm_array), intent(in) :: a
    integer(int32), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_MAX, a, c_loc(result), [GPUFMM_INT32], 'integer(int32)', status)
  end subroutine max_i4

  subroutine fill_i8(a, value, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), target, intent(in) :: value
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_FILL, a, c_loc(value), [GPUFMM_INT64], 'integer(int64)', status)
  end subroutine fill_i8

  subroutine sum_i8(a, result, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SUM, a, c_loc(result), [GPUFMM_INT64], 'integer(int64)', status)
  end subroutine sum_i8

  subroutine min_i8(a, result, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_MIN, a, c_loc(result), [GPUFMM_INT64], 'integer(int64)', status)
  end subroutine min_i8

  subroutine max_i8(a, result, status)
    type(gpufmm_array), intent(in) :: a
    integer(int64), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_MAX, a, c_loc(result), [GPUFMM_INT64], 'integer(int64)', status)
  end subroutine max_i8

  subroutine fill_r4(a, value, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), target, intent(in) :: value
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_FILL, a, c_loc(value), [GPUFMM_FLOAT32], 'real(real32)', status)
  end subroutine fill_r4

  subroutine sum_r4(a, result, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SUM, a, c_loc(result), [GPUFMM_FLOAT32], 'real(real32)', status)
  end subroutine sum_r4

  subroutine min_r4(a, result, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_MIN, a, c_loc(result), [GPUFMM_FLOAT32], 'real(real32)', status)
  end subroutine min_r4

  subroutine max_r4(a, result, status)
    type(gpufmm_array), intent(in) :: a
    real(real32), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_MAX, a, c_loc(result), [GPUFMM_FLOAT32], 'real(real32)', status)
  end subroutine max_r4

  subroutine fill_r8(a, value, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), target, intent(in) :: value
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_FILL, a, c_loc(value), [GPUFMM_FLOAT64], 'real(real64)', status)
  end subroutine fill_r8

  subroutine sum_r8(a, result, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SUM, a, c_loc(result), [GPUFMM_FLOAT64], 'real(real64)', status)
  end subroutine sum_r8

  subroutine min_r8(a, result, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_MIN, a, c_loc(result), [GPUFMM_FLOAT64], 'real(real64)', status)
  end subroutine min_r8

  subroutine max_r8(a, result, status)
    type(gpufmm_array), intent(in) :: a
    real(real64), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_MAX, a, c_loc(result), [GPUFMM_FLOAT64], 'real(real64)', status)
  end subroutine max_r8

  subroutine fill_c4(a, value, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), target, intent(in) :: value
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_FILL, a, c_loc(value), [GPUFMM_COMPLEX64], 'complex(real32)', status)
  end subroutine fill_c4

  subroutine sum_c4(a, result, status)
    type(gpufmm_array), intent(in) :: a
    complex(real32), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SUM, a, c_loc(result), [GPUFMM_COMPLEX64], 'complex(real32)', status)
  end subroutine sum_c4

  subroutine fill_c8(a, value, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), target, intent(in) :: value
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_FILL, a, c_loc(value), [GPUFMM_COMPLEX128], 'complex(real64)', status)
  end subroutine fill_c8

  subroutine sum_c8(a, result, status)
    type(gpufmm_array), intent(in) :: a
    complex(real64), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SUM, a, c_loc(result), [GPUFMM_COMPLEX128], 'complex(real64)', status)
  end subroutine sum_c8

  subroutine nrm2_r4(x, result, status)
    type(gpufmm_array), intent(in) :: x
    real(real32), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_NRM2, x, c_loc(result), [GPUFMM_FLOAT32, GPUFMM_COMPLEX64], &
         'real(real32)', status)
  end subroutine nrm2_r4

  subroutine nrm2_r8(x, result, status)
    type(gpufmm_array), intent(in) :: x
    real(real64), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_NRM2, x, c_loc(result), [GPUFMM_FLOAT64, GPUFMM_COMPLEX128], &
         'real(real64)', status)
  end subroutine nrm2_r8

  subroutine scal_r4(alpha, x, status)
    real(real32), target, intent(in) :: alpha
    type(gpufmm_array), intent(in) :: x
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SCAL, x, c_loc(alpha), [GPUFMM_FLOAT32], 'real(real32)', status)
  end subroutine scal_r4

  subroutine axpy_r4(alpha, x, y, status)
    real(real32), target, intent(in) :: alpha
    type(gpufmm_array), intent(in) :: x, y
    integer, optional, intent(out) :: status
    call do_pair_op(OP_AXPY, x, y, c_loc(alpha), GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine axpy_r4

  subroutine dot_r4(x, y, result, status)
    type(gpufmm_array), intent(in) :: x, y
    real(real32), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_pair_op(OP_DOT, x, y, c_loc(result), GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine dot_r4

  subroutine gemv_r4(trans, alpha, a, x, beta, y, status)
    character(len=*), intent(in) :: trans
    real(real32), target, intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, x, y
    integer, optional, intent(out) :: status
    call do_gemv(trans, c_loc(alpha), a, x, c_loc(beta), y, &
         GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine gemv_r4

  subroutine gemm_r4(transa, transb, alpha, a, b, beta, c, status)
    character(len=*), intent(in) :: transa, transb
    real(real32), target, intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, b, c
    integer, optional, intent(out) :: status
    call do_gemm(transa, transb, c_loc(alpha), a, b, c_loc(beta), c, &
         GPUFMM_FLOAT32, 'real(real32)', status)
  end subroutine gemm_r4

  subroutine scal_r8(alpha, x, status)
    real(real64), target, intent(in) :: alpha
    type(gpufmm_array), intent(in) :: x
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SCAL, x, c_loc(alpha), [GPUFMM_FLOAT64], 'real(real64)', status)
  end subroutine scal_r8

  subroutine axpy_r8(alpha, x, y, status)
    real(real64), target, intent(in) :: alpha
    type(gpufmm_array), intent(in) :: x, y
    integer, optional, intent(out) :: status
    call do_pair_op(OP_AXPY, x, y, c_loc(alpha), GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine axpy_r8

  subroutine dot_r8(x, y, result, status)
    type(gpufmm_array), intent(in) :: x, y
    real(real64), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_pair_op(OP_DOT, x, y, c_loc(result), GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine dot_r8

  subroutine gemv_r8(trans, alpha, a, x, beta, y, status)
    character(len=*), intent(in) :: trans
    real(real64), target, intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, x, y
    integer, optional, intent(out) :: status
    call do_gemv(trans, c_loc(alpha), a, x, c_loc(beta), y, &
         GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine gemv_r8

  subroutine gemm_r8(transa, transb, alpha, a, b, beta, c, status)
    character(len=*), intent(in) :: transa, transb
    real(real64), target, intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, b, c
    integer, optional, intent(out) :: status
    call do_gemm(transa, transb, c_loc(alpha), a, b, c_loc(beta), c, &
         GPUFMM_FLOAT64, 'real(real64)', status)
  end subroutine gemm_r8

  subroutine scal_c4(alpha, x, status)
    complex(real32), target, intent(in) :: alpha
    type(gpufmm_array), intent(in) :: x
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SCAL, x, c_loc(alpha), [GPUFMM_COMPLEX64], 'complex(real32)', status)
  end subroutine scal_c4

  subroutine axpy_c4(alpha, x, y, status)
    complex(real32), target, intent(in) :: alpha
    type(gpufmm_array), intent(in) :: x, y
    integer, optional, intent(out) :: status
    call do_pair_op(OP_AXPY, x, y, c_loc(alpha), GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine axpy_c4

  subroutine dot_c4(x, y, result, status)
    type(gpufmm_array), intent(in) :: x, y
    complex(real32), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_pair_op(OP_DOT, x, y, c_loc(result), GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine dot_c4

  subroutine gemv_c4(trans, alpha, a, x, beta, y, status)
    character(len=*), intent(in) :: trans
    complex(real32), target, intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, x, y
    integer, optional, intent(out) :: status
    call do_gemv(trans, c_loc(alpha), a, x, c_loc(beta), y, &
         GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine gemv_c4

  subroutine gemm_c4(transa, transb, alpha, a, b, beta, c, status)
    character(len=*), intent(in) :: transa, transb
    complex(real32), target, intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, b, c
    integer, optional, intent(out) :: status
    call do_gemm(transa, transb, c_loc(alpha), a, b, c_loc(beta), c, &
         GPUFMM_COMPLEX64, 'complex(real32)', status)
  end subroutine gemm_c4

  subroutine scal_c8(alpha, x, status)
    complex(real64), target, intent(in) :: alpha
    type(gpufmm_array), intent(in) :: x
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SCAL, x, c_loc(alpha), [GPUFMM_COMPLEX128], 'complex(real64)', status)
  end subroutine scal_c8

  subroutine axpy_c8(alpha, x, y, status)
    complex(real64), target, intent(in) :: alpha
    type(gpufmm_array), intent(in) :: x, y
    integer, optional, intent(out) :: status
    call do_pair_op(OP_AXPY, x, y, c_loc(alpha), GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine axpy_c8

  subroutine dot_c8(x, y, result, status)
    type(gpufmm_array), intent(in) :: x, y
    complex(real64), target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_pair_op(OP_DOT, x, y, c_loc(result), GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine dot_c8

  subroutine gemv_c8(trans, alpha, a, x, beta, y, status)
    character(len=*), intent(in) :: trans
    complex(real64), target, intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, x, y
    integer, optional, intent(out) :: status
    call do_gemv(trans, c_loc(alpha), a, x, c_loc(beta), y, &
         GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine gemv_c8

  subroutine gemm_c8(transa, transb, alpha, a, b, beta, c, status)
    character(len=*), intent(in) :: transa, transb
    complex(real64), target, intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, b, c
    integer, optional, intent(out) :: status
    call do_gemm(transa, transb, c_loc(alpha), a, b, c_loc(beta), c, &
         GPUFMM_COMPLEX128, 'complex(real64)', status)
  end subroutine gemm_c8

end module gpufmm_array_mod
