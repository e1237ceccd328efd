!> gpufmm_core - status codes, dtypes, contexts, device information and
!> the library's identity, for Fortran callers of gpufmm.
!>
!> This module wraps the C interface in bindings/c/gpufmm.h. The raw
!> bind(c) interfaces are private; the public names are Fortran procedures.
!>
!> Error handling (applies to every gpufmm Fortran procedure)
!> ----------------------------------------------------------
!> Every procedure that can fail takes `integer, optional, intent(out) ::
!> status` as its LAST argument.
!>  - status present: it receives GPUFMM_SUCCESS (0) or one of the
!>    GPUFMM_ERROR_* codes, and the program carries on; outputs are left
!>    unchanged when the call fails. gpufmm_last_error_message() then says
!>    what went wrong and names the offending argument.
!>  - status absent: a failure ends the program with
!>        error stop "gpufmm: GPUFMM_ERROR_<name>: <procedure>: <message>"
!>    (the message goes to stderr and the exit code is non-zero; with
!>    coarrays all images stop). There is no way to catch an error stop:
!>    codes that must survive bad input pass `status` and test it.
!>
!> Handles (type(gpufmm_context), type(gpufmm_array), ...) are destroyed
!> explicitly with the matching *_destroy procedure; there are no
!> finalizers. Destroy sets the handle to the null state, so destroying
!> twice is harmless. A copy of a handle (b = a) refers to the same object;
!> after one of them is destroyed the other is stale and every call on it
!> fails with GPUFMM_ERROR_INVALID_HANDLE.
!>
!> Thread safety: the C library keeps the last error message per thread.
!> Messages raised by the Fortran layer itself (e.g. a wrong kind of host
!> array) are kept in a module variable that is shared by all threads.
module gpufmm_core
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_int64_t, c_float, c_double, &
       c_float_complex, c_double_complex, c_char, c_ptr, c_null_ptr, c_null_char, &
       c_associated, c_f_pointer, c_size_t
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  implicit none
  private

  ! ------------------------------------------------------------------ constants
  ! Every GPUFMM_* constant of gpufmm.h (status codes, devices and backends,
  ! dtypes, BLAS operations, tree and Laplace enums and limits), generated
  ! from the header by tools/gen-fortran. The dtypes' Fortran kinds: int32,
  ! int64, real32, real64, complex(real32), complex(real64) (iso_fortran_env).
  include 'gpufmm_constants.inc'

  ! Compile-time checks that the iso_fortran_env kinds used in the public
  ! interface are the C types of gpufmm.h, and that default integers (status,
  ! dtype and device arguments) are C ints (a zero divisor fails to compile).
  integer, parameter :: kinds_ok = 1 / merge(1, 0, kind(0) == c_int &
       .and. int32 == c_int32_t .and. int64 == c_int64_t &
       .and. real32 == c_float .and. real64 == c_double .and. real32 == c_float_complex &
       .and. real64 == c_double_complex)

  ! ------------------------------------------------------------------ handles and records
  !> A gpufmm context: one backend (the CPU, or one GPU with its stream and
  !> library handles). Create with gpufmm_context_create, free with
  !> gpufmm_context_destroy after every array made on it is destroyed.
  !> The opaque handle every gpufmm object type extends (context, array,
  !> plan, tree): the C handle, null until the object is created.
  type, public :: gpufmm_handle
     private
     type(c_ptr) :: p = c_null_ptr
  end type gpufmm_handle

  type, public, extends(gpufmm_handle) :: gpufmm_context
  end type gpufmm_context

  !> What gpufmm_context_device_info returns. Character name is blank-padded:
  !> use trim(info%name).
  type, public :: gpufmm_device_info
     character(len=256) :: name = ''          !< GPU model, or the CPU's name
     integer :: backend = GPUFMM_BACKEND_CPU   !< GPUFMM_BACKEND_CPU or _CUDA
     integer :: device = GPUFMM_DEVICE_CPU     !< CUDA ordinal, or GPUFMM_DEVICE_CPU
     integer :: multiprocessors = 0            !< SMs on a GPU; logical cores on the CPU
     integer :: compute_major = 0              !< compute capability (0 on the CPU)
     integer :: compute_minor = 0
     integer(int64) :: total_memory = 0        !< bytes of device (or host) memory
     integer(int64) :: free_memory = 0         !< bytes free now
     integer(int64) :: shared_mem_per_block_optin = 0  !< bytes (0 on the CPU)
     integer(int64) :: l2_cache_bytes = 0      !< bytes (0 on the CPU)
  end type gpufmm_device_info

  ! The C struct gpufmm_device_info_t.
  type, bind(c) :: c_device_info
     character(kind=c_char) :: name(256)
     integer(c_int) :: backend
     integer(c_int) :: device
     integer(c_int) :: multiprocessors
     integer(c_int) :: compute_major
     integer(c_int) :: compute_minor
     integer(c_int64_t) :: total_memory
     integer(c_int64_t) :: free_memory
     integer(c_int64_t) :: shared_mem_per_block_optin
     integer(c_int64_t) :: l2_cache_bytes
  end type c_device_info

  ! ------------------------------------------------------------------ public procedures
  public :: gpufmm_version, gpufmm_cuda_built, gpufmm_device_count
  public :: gpufmm_status_string, gpufmm_last_error_message, gpufmm_dtype_name, gpufmm_dtype_size
  public :: gpufmm_context_create, gpufmm_context_destroy, gpufmm_context_backend
  public :: gpufmm_context_device_info, gpufmm_context_synchronize, gpufmm_context_stream
  public :: gpufmm_context_associated, gpufmm_context_c_ptr
  public :: gpufmm_associated, gpufmm_c_ptr, gpufmm_handle_set, gpufmm_handle_destroyed

  !> Per-type names of the handle queries (the same procedures for every handle).
  interface gpufmm_context_associated
     module procedure gpufmm_associated
  end interface gpufmm_context_associated
  interface gpufmm_context_c_ptr
     module procedure gpufmm_c_ptr
  end interface gpufmm_context_c_ptr
  ! For the other gpufmm modules (and for wrapping further C entry points):
  public :: gpufmm_check_status, gpufmm_c_string, gpufmm_itoa, gpufmm_shape3_error, gpufmm_size_error
  public :: gpufmm_io_sizes_error, gpufmm_points_error, gpufmm_sum_shapes, gpufmm_plan_io_ok
  public :: gpufmm_optional_c_ptr

  !> Integer (int32 or int64) to text, "-42", for messages.
  interface gpufmm_itoa
     module procedure itoa_i4, itoa_i8
  end interface gpufmm_itoa

  ! Message of the last failure detected by the Fortran layer itself, and
  ! whether the last failure seen by gpufmm_check_status was one of those
  ! (otherwise the C library's thread-local message is the current one).
  character(len=:), allocatable, save :: fortran_message
  logical, save :: fortran_message_current = .false.

  ! ------------------------------------------------------------------ raw C interfaces (private)
  interface
     function c_strlen(s) bind(c, name='strlen') result(n)
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
       integer(c_size_t) :: n
     end function c_strlen
     function c_gpufmm_status_string(s) bind(c, name='gpufmm_status_string') result(p)
       import :: c_int, c_ptr
       integer(c_int), value :: s
       type(c_ptr) :: p
     end function c_gpufmm_status_string
     function c_gpufmm_last_error_message() bind(c, name='gpufmm_last_error_message') result(p)
       import :: c_ptr
       type(c_ptr) :: p
     end function c_gpufmm_last_error_message
     function c_gpufmm_version(major, minor, patch) bind(c, name='gpufmm_version') result(p)
       import :: c_int, c_ptr
       integer(c_int), intent(out) :: major, minor, patch
       type(c_ptr) :: p
     end function c_gpufmm_version
     function c_gpufmm_cuda_built() bind(c, name='gpufmm_cuda_built') result(r)
       import :: c_int
       integer(c_int) :: r
     end function c_gpufmm_cuda_built
     function c_gpufmm_device_count(count) bind(c, name='gpufmm_device_count') result(s)
       import :: c_int
       integer(c_int), intent(out) :: count
       integer(c_int) :: s
     end function c_gpufmm_device_count
     function c_gpufmm_dtype_size(dtype) bind(c, name='gpufmm_dtype_size') result(n)
       import :: c_int, c_int64_t
       integer(c_int), value :: dtype
       integer(c_int64_t) :: n
     end function c_gpufmm_dtype_size
     function c_gpufmm_context_create(device, ctx) bind(c, name='gpufmm_context_create') result(s)
       import :: c_int, c_ptr
       integer(c_int), value :: device
       type(c_ptr), intent(out) :: ctx
       integer(c_int) :: s
     end function c_gpufmm_context_create
     function c_gpufmm_context_destroy(ctx) bind(c, name='gpufmm_context_destroy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int) :: s
     end function c_gpufmm_context_destroy
     function c_gpufmm_context_backend(ctx, backend) bind(c, name='gpufmm_context_backend') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int), intent(out) :: backend
       integer(c_int) :: s
     end function c_gpufmm_context_backend
     function c_gpufmm_context_device_info(ctx, info) bind(c, name='gpufmm_context_device_info') result(s)
       import :: c_int, c_ptr, c_device_info
       type(c_ptr), value :: ctx
       type(c_device_info), intent(out) :: info
       integer(c_int) :: s
     end function c_gpufmm_context_device_info
     function c_gpufmm_context_synchronize(ctx) bind(c, name='gpufmm_context_synchronize') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int) :: s
     end function c_gpufmm_context_synchronize
     function c_gpufmm_context_stream(ctx, stream) bind(c, name='gpufmm_context_stream') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       type(c_ptr), intent(out) :: stream
       integer(c_int) :: s
     end function c_gpufmm_context_stream
  end interface

contains

  ! ================================================================== helpers

  !> Copies a NUL-terminated C string into a Fortran string ('' for NULL).
  function gpufmm_c_string(p) result(str)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: str
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(p)) then
       str = ''
       return
    end if
    n = int(c_strlen(p))
    allocate(character(len=n) :: str)
    if (n == 0) return
    call c_f_pointer(p, chars, [n])
    do i = 1, n
       str(i:i) = chars(i)
    end do
  end function gpufmm_c_string

  pure function itoa_i8(i) result(str)
    integer(int64), intent(in) :: i
    character(len=:), allocatable :: str
    character(len=24) :: buf
    write (buf, '(i0)') i
    str = trim(buf)
  end function itoa_i8

  pure function itoa_i4(i) result(str)
    integer(int32), intent(in) :: i
    character(len=:), allocatable :: str
    str = itoa_i8(int(i, int64))
  end function itoa_i4

  !> '' if coordinates x (3, n) have 3 rows and n columns, else the
  !> complaint, naming the argument and saying `what` the columns are.
  function gpufmm_shape3_error(name, rows, cols, n, what) result(msg)
    character(len=*), intent(in) :: name, what
    integer(int64), intent(in) :: rows, cols, n
    character(len=:), allocatable :: msg
    msg = ''
    if (rows /= 3 .or. cols /= n) msg = 'argument ''' // name // ''' has shape (' // gpufmm_itoa(rows) // &
         ', ' // gpufmm_itoa(cols) // '), expected (3, ' // gpufmm_itoa(n) // ') (' // what // ')'
  end function gpufmm_shape3_error

  !> '' if an argument has `n` elements (`got`), else the complaint, naming
  !> the argument and saying `what` the elements are.
  function gpufmm_size_error(name, got, n, what) result(msg)
    character(len=*), intent(in) :: name, what
    integer(int64), intent(in) :: got, n
    character(len=:), allocatable :: msg
    msg = ''
    if (got /= n) msg = 'argument ''' // name // ''' has ' // gpufmm_itoa(got) // ' elements, expected ' // &
         gpufmm_itoa(n) // ' (' // what // ')'
  end function gpufmm_size_error

  !> The first non-empty complaint about the optional inputs / outputs of
  !> nsrc sources and ntrg targets ('' if all fit).
  function gpufmm_io_sizes_error(nsrc, ntrg, charges, dipoles, pot, grad) result(msg)
    integer(int64), intent(in) :: nsrc, ntrg
    real(real64), intent(in), optional :: charges(:), dipoles(:, :), pot(:), grad(:, :)
    character(len=:), allocatable :: msg
    msg = ''
    if (present(charges)) msg = gpufmm_size_error('charges', size(charges, kind=int64), nsrc, 'one per source')
    if (len(msg) > 0) return
    if (present(dipoles)) msg = gpufmm_shape3_error('dipoles', size(dipoles, 1, kind=int64), &
         size(dipoles, 2, kind=int64), nsrc, 'one column per source')
    if (len(msg) > 0) return
    if (present(pot)) msg = gpufmm_size_error('pot', size(pot, kind=int64), ntrg, 'one per target')
    if (len(msg) > 0) return
    if (present(grad)) msg = gpufmm_shape3_error('grad', size(grad, 1, kind=int64), size(grad, 2, kind=int64), &
         ntrg, 'one column per target')
  end function gpufmm_io_sizes_error

  !> '' if sources (and targets, when present) have 3 rows.
  function gpufmm_points_error(sources, targets) result(msg)
    real(real64), intent(in) :: sources(:, :)
    real(real64), intent(in), optional :: targets(:, :)
    character(len=:), allocatable :: msg
    msg = gpufmm_shape3_error('sources', size(sources, 1, kind=int64), size(sources, 2, kind=int64), &
         size(sources, 2, kind=int64), 'one column per source')
    if (len(msg) == 0 .and. present(targets)) msg = gpufmm_shape3_error('targets', size(targets, 1, kind=int64), &
         size(targets, 2, kind=int64), size(targets, 2, kind=int64), 'one column per target')
  end function gpufmm_points_error

  !> The sizes of a sum over sources(3, nsrc) at targets(3, ntrg) (targets
  !> absent: at the sources, ntrg = nsrc), and '' or the complaint about the
  !> shapes of the points and of the optional inputs and outputs.
  function gpufmm_sum_shapes(sources, targets, charges, dipoles, pot, grad, nsrc, ntrg) result(msg)
    real(real64), intent(in) :: sources(:, :)
    real(real64), intent(in), optional :: targets(:, :), charges(:), dipoles(:, :), pot(:), grad(:, :)
    integer(int64), intent(out) :: nsrc, ntrg
    character(len=:), allocatable :: msg
    nsrc = size(sources, 2, kind=int64)
    ntrg = nsrc
    if (present(targets)) ntrg = size(targets, 2, kind=int64)
    msg = gpufmm_points_error(sources, targets)
    if (len(msg) == 0) msg = gpufmm_io_sizes_error(nsrc, ntrg, charges, dipoles, pot, grad)
  end function gpufmm_sum_shapes

  !> Before a plan of nsrc sources and ntrg targets is evaluated, after the
  !> query of its sizes returned `s`: .true. if s is GPUFMM_SUCCESS and the
  !> optional inputs and outputs fit (gpufmm_io_sizes_error); else reports
  !> the failure as procedure `where` (gpufmm_check_status: status or error
  !> stop) and returns .false.
  logical function gpufmm_plan_io_ok(s, nsrc, ntrg, status, where, charges, dipoles, pot, grad) result(ok)
    integer(c_int), intent(in) :: s
    integer(int64), intent(in) :: nsrc, ntrg
    integer, optional, intent(out) :: status
    character(len=*), intent(in) :: where
    real(real64), intent(in), optional :: charges(:), dipoles(:, :), pot(:), grad(:, :)
    character(len=:), allocatable :: msg
    ok = .false.
    if (s /= GPUFMM_SUCCESS) then
       call gpufmm_check_status(s, status, where)
       return
    end if
    msg = gpufmm_io_sizes_error(nsrc, ntrg, charges, dipoles, pot, grad)
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    ok = .true.
  end function gpufmm_plan_io_ok

  !> Handles the status `s` of a gpufmm call made by procedure `where`:
  !>  - `status` present: status = s (and nothing else happens);
  !>  - `status` absent and s /= GPUFMM_SUCCESS: error stop with the message.
  !> `message` is given when the Fortran layer itself detected the error
  !> (the C library's last error message then does not describe it); it
  !> becomes what gpufmm_last_error_message() returns.
  !> Every gpufmm Fortran procedure ends with a call to this helper; it is
  !> public so that code wrapping further C entry points can do the same.
  subroutine gpufmm_check_status(s, status, where, message)
    integer(c_int), intent(in) :: s
    integer, optional, intent(out) :: status
    character(len=*), optional, intent(in) :: where
    character(len=*), optional, intent(in) :: message
    character(len=:), allocatable :: text, name
    if (s /= GPUFMM_SUCCESS) then
       if (present(message)) then
          ! same form as the C library's messages: "<procedure>: <what>"
          if (present(where)) then
             fortran_message = where // ': ' // message
          else
             fortran_message = message
          end if
          fortran_message_current = .true.
       else
          fortran_message_current = .false.
       end if
    end if
    if (present(status)) then
       status = s
       return
    end if
    if (s == GPUFMM_SUCCESS) return
    name = gpufmm_status_string(s)            ! "GPUFMM_ERROR_...: description"
    if (index(name, ':') > 0) name = name(1:index(name, ':') - 1)
    text = gpufmm_last_error_message()
    if (present(where)) then
       if (index(text, where // ':') /= 1) text = where // ': ' // text
    end if
    error stop 'gpufmm: ' // name // ': ' // text
  end subroutine gpufmm_check_status

  ! ================================================================== library

  !> The library version "MAJOR.MINOR.PATCH"; optionally its parts.
  function gpufmm_version(major, minor, patch) result(v)
    integer, optional, intent(out) :: major, minor, patch
    character(len=:), allocatable :: v
    integer(c_int) :: ma, mi, pa
    v = gpufmm_c_string(c_gpufmm_version(ma, mi, pa))
    if (present(major)) major = ma
    if (present(minor)) minor = mi
    if (present(patch)) patch = pa
  end function gpufmm_version

  !> .true. if the library was built with the CUDA backend.
  logical function gpufmm_cuda_built()
    gpufmm_cuda_built = c_gpufmm_cuda_built() /= 0
  end function gpufmm_cuda_built

  !> Number of visible CUDA devices (0 without CUDA or without a driver).
  function gpufmm_device_count(status) result(n)
    integer, optional, intent(out) :: status
    integer :: n
    integer(c_int) :: s, cnt
    cnt = 0
    s = c_gpufmm_device_count(cnt)
    n = 0
    if (s == GPUFMM_SUCCESS) n = cnt
    call gpufmm_check_status(s, status, 'gpufmm_device_count')
  end function gpufmm_device_count

  !> A readable name of a status code ("GPUFMM_ERROR_SIZE_MISMATCH: ...").
  function gpufmm_status_string(s) result(str)
    integer, intent(in) :: s
    character(len=:), allocatable :: str
    str = gpufmm_c_string(c_gpufmm_status_string(int(s, c_int)))
  end function gpufmm_status_string

  !> The message of the last failed gpufmm call on this thread ('' if none).
  function gpufmm_last_error_message() result(str)
    character(len=:), allocatable :: str
    if (fortran_message_current) then
       str = fortran_message
    else
       str = gpufmm_c_string(c_gpufmm_last_error_message())
    end if
  end function gpufmm_last_error_message

  !> The name of a dtype constant ("GPUFMM_FLOAT64"), for messages.
  function gpufmm_dtype_name(dtype) result(str)
    integer, intent(in) :: dtype
    character(len=:), allocatable :: str
    select case (dtype)
    case (GPUFMM_INT32);      str = 'GPUFMM_INT32'
    case (GPUFMM_INT64);      str = 'GPUFMM_INT64'
    case (GPUFMM_FLOAT32);    str = 'GPUFMM_FLOAT32'
    case (GPUFMM_FLOAT64);    str = 'GPUFMM_FLOAT64'
    case (GPUFMM_COMPLEX64);  str = 'GPUFMM_COMPLEX64'
    case (GPUFMM_COMPLEX128); str = 'GPUFMM_COMPLEX128'
    case default;             str = 'unknown dtype'
    end select
  end function gpufmm_dtype_name

  !> Bytes of one element of dtype (0 for an unknown dtype).
  function gpufmm_dtype_size(dtype) result(n)
    integer, intent(in) :: dtype
    integer(int64) :: n
    n = c_gpufmm_dtype_size(int(dtype, c_int))
  end function gpufmm_dtype_size

  ! ================================================================== contexts

  !> Creates a context on `device`: a CUDA ordinal >= 0, GPUFMM_DEVICE_CPU,
  !> or GPUFMM_DEVICE_DEFAULT (the first GPU if any, else the CPU).
  !> Errors: NOT_SUPPORTED (GPU asked for, CUDA not built in), NO_DEVICE,
  !> INVALID_ARGUMENT (device < -2), DEVICE (CUDA init failed). On failure
  !> ctx is left unchanged.
  subroutine gpufmm_context_create(ctx, device, status)
    type(gpufmm_context), intent(inout) :: ctx
    integer, intent(in) :: device
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(c_int) :: s
    p = c_null_ptr
    s = c_gpufmm_context_create(int(device, c_int), p)
    if (s == GPUFMM_SUCCESS) ctx%p = p
    call gpufmm_check_status(s, status, 'gpufmm_context_create')
  end subroutine gpufmm_context_create

  !> Frees the context and nulls the handle. Destroy the arrays and plans
  !> made on it first. Destroying a null handle is a no-op.
  subroutine gpufmm_context_destroy(ctx, status)
    type(gpufmm_context), intent(inout) :: ctx
    integer, optional, intent(out) :: status
    call gpufmm_handle_destroyed(ctx, c_gpufmm_context_destroy(ctx%p), status, 'gpufmm_context_destroy')
  end subroutine gpufmm_context_destroy

  !> GPUFMM_BACKEND_CPU or GPUFMM_BACKEND_CUDA (-1 on failure).
  function gpufmm_context_backend(ctx, status) result(backend)
    type(gpufmm_context), intent(in) :: ctx
    integer, optional, intent(out) :: status
    integer :: backend
    integer(c_int) :: s, b
    b = -1
    s = c_gpufmm_context_backend(ctx%p, b)
    backend = -1
    if (s == GPUFMM_SUCCESS) backend = b
    call gpufmm_check_status(s, status, 'gpufmm_context_backend')
  end function gpufmm_context_backend

  !> Information on the context's device (default values on failure).
  function gpufmm_context_device_info(ctx, status) result(info)
    type(gpufmm_context), intent(in) :: ctx
    integer, optional, intent(out) :: status
    type(gpufmm_device_info) :: info
    type(c_device_info) :: ci
    integer(c_int) :: s
    integer :: i
    s = c_gpufmm_context_device_info(ctx%p, ci)
    if (s == GPUFMM_SUCCESS) then
       do i = 1, size(ci%name)
          if (ci%name(i) == c_null_char) exit
          info%name(i:i) = ci%name(i)
       end do
       info%backend = ci%backend
       info%device = ci%device
       info%multiprocessors = ci%multiprocessors
       info%compute_major = ci%compute_major
       info%compute_minor = ci%compute_minor
       info%total_memory = ci%total_memory
       info%free_memory = ci%free_memory
       info%shared_mem_per_block_optin = ci%shared_mem_per_block_optin
       info%l2_cache_bytes = ci%l2_cache_bytes
    end if
    call gpufmm_check_status(s, status, 'gpufmm_context_device_info')
  end function gpufmm_context_device_info

  !> Waits for all work queued on the context's stream (no-op on the CPU).
  subroutine gpufmm_context_synchronize(ctx, status)
    type(gpufmm_context), intent(in) :: ctx
    integer, optional, intent(out) :: status
    call gpufmm_check_status(c_gpufmm_context_synchronize(ctx%p), status, &
         'gpufmm_context_synchronize')
  end subroutine gpufmm_context_synchronize

  !> The context's cudaStream_t as a c_ptr (c_null_ptr on the CPU backend),
  !> for launching your own kernels on the same stream.
  function gpufmm_context_stream(ctx, status) result(stream)
    type(gpufmm_context), intent(in) :: ctx
    integer, optional, intent(out) :: status
    type(c_ptr) :: stream
    type(c_ptr) :: p
    integer(c_int) :: s
    p = c_null_ptr
    s = c_gpufmm_context_stream(ctx%p, p)
    stream = c_null_ptr
    if (s == GPUFMM_SUCCESS) stream = p
    call gpufmm_check_status(s, status, 'gpufmm_context_stream')
  end function gpufmm_context_stream

  !> .true. if the handle is not null (created and not destroyed through
  !> it; a stale copy of a destroyed handle still reports .true.).
  pure logical function gpufmm_associated(h)
    class(gpufmm_handle), intent(in) :: h
    gpufmm_associated = c_associated(h%p)
  end function gpufmm_associated

  !> The C handle inside h, for C entry points without a Fortran wrapper.
  !> Do not destroy it through C.
  pure function gpufmm_c_ptr(h) result(p)
    class(gpufmm_handle), intent(in) :: h
    type(c_ptr) :: p
    p = h%p
  end function gpufmm_c_ptr

  !> The C handle inside h, or c_null_ptr when h is absent (the optional
  !> handle arguments of the modules' procedures).
  pure function gpufmm_optional_c_ptr(h) result(p)
    class(gpufmm_handle), intent(in), optional :: h
    type(c_ptr) :: p
    p = c_null_ptr
    if (present(h)) p = h%p
  end function gpufmm_optional_c_ptr

  !> Sets the C handle of h (the modules' create procedures). Not for users.
  subroutine gpufmm_handle_set(h, p)
    class(gpufmm_handle), intent(inout) :: h
    type(c_ptr), intent(in) :: p
    h%p = p
  end subroutine gpufmm_handle_set

  !> After the C destroy of h returned s: nulls h on success, then reports s
  !> as procedure `where` (status / error stop). Not for users.
  subroutine gpufmm_handle_destroyed(h, s, status, where)
    class(gpufmm_handle), intent(inout) :: h
    integer(c_int), intent(in) :: s
    integer, optional, intent(out) :: status
    character(len=*), intent(in) :: where
    if (s == GPUFMM_SUCCESS) h%p = c_null_ptr
    call gpufmm_check_status(s, status, where)
  end subroutine gpufmm_handle_destroyed

end module gpufmm_core
