! ============================================================================
! GENERATED FILE - DO NOT EDIT BY HAND.
! Made from bindings/fortran/gpufmm_fft.fypp by tools/gen-fortran; edit the template, run
!     tools/gen-fortran
! from the repository root and commit both (building does not need fypp:
! this file is checked in; the CTest fortran_generated_up_to_date fails when
! it is stale).
! ============================================================================

!> gpufmm_fft - the FMM-accelerated FFT for Fortran (papers/002; see
!> docs/fortran.md, section "FMM-accelerated FFT", and docs/fmmfft_usage.md).
!>
!> Computes the 1D DFT of N complex numbers
!>     X(k) = sum_{n=0}^{N-1} x(n) exp(sign 2 pi i n k / N),  k = 0..N-1
!> (sign -1: GPUFMM_FFT_FORWARD, +1: GPUFMM_FFT_INVERSE; unnormalized like
!> FFTW and cuFFT: inverse(forward(x)) = N x) as P - 1 periodic cotangent
!> FMMs and an M x P 2D FFT, N = P M_L 2^L, to a requested relative L2
!> error eps. Arrays are 1-based in Fortran: x(j) is x[j - 1] above.
!>
!> Plan once, execute many times: gpufmm_fft_plan_create picks (P, M_L, B,
!> Q) from eps and the roofline model (or takes them), builds the operators,
!> the FFT plans and the workspace; every gpufmm_fft_execute transforms new
!> data, on gpufmm arrays of the plan's context (the data stay on the
!> device) or, gpufmm_fft_execute_host, on host arrays. Destroy the plan
!> with gpufmm_fft_plan_destroy before its context.
!>
!> Kinds. A plan is GPUFMM_COMPLEX128 (default) or GPUFMM_COMPLEX64; its
!> arrays are complex(real64) or complex(real32) (iso_fortran_env; the same
!> kinds as complex(c_double_complex), complex(c_float_complex)), of N
!> elements. A host array of
!> the other kind fails with GPUFMM_ERROR_TYPE_MISMATCH, one of another
!> size with GPUFMM_ERROR_SIZE_MISMATCH, both naming the argument.
!>
!> Errors: every procedure takes `integer, optional, intent(out) :: status`
!> last; absent, a failure stops the program (error stop with the message),
!> present, it receives the code (see gpufmm_core). Outputs (the
!> transform, the plan handle, the info) are unchanged by a failed call.
module gpufmm_fft
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_double, c_ptr, c_null_ptr, c_loc
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use gpufmm_core
  use gpufmm_array_mod, only: gpufmm_array
  implicit none
  private

  ! The constants (GPUFMM_FFT_FORWARD, _INVERSE, GPUFMM_FFT_MAX_Q, the
  ! stage indices GPUFMM_FFT_STAGE_* and GPUFMM_FFT_STAGES) are in
  ! gpufmm_core, generated from gpufmm.h.

  ! ------------------------------------------------------------------ types

  !> An FMM-FFT plan (opaque): one N, one precision, transformed many times.
  type, public, extends(gpufmm_handle) :: gpufmm_fft_plan
  end type gpufmm_fft_plan

  !> Options of gpufmm_fft_plan_create: the C struct gpufmm_fft_options_t
  !> itself. The default values below are the library's defaults (n must be
  !> set); gpufmm_fft_options_init sets them from the library.
  type, bind(c), public :: gpufmm_fft_options
     integer(c_int64_t) :: n = 0                   !< the transform length N (required)
     integer(c_int) :: dtype = GPUFMM_COMPLEX128   !< GPUFMM_COMPLEX128 or GPUFMM_COMPLEX64
     real(c_double) :: eps = 0                     !< relative L2 error; 0: 2e-14 (complex128), 1e-6 (complex64)
     integer(c_int) :: p = 0, ml = 0               !< P and M_L; 0, 0: from the model (set both or neither)
     integer(c_int) :: b = 0                       !< base level B >= 2; 0: from the model
     integer(c_int) :: q = 0                       !< expansion order Q in 2..GPUFMM_FFT_MAX_Q; 0: from eps
     integer(c_int) :: direction = 0               !< 0: both; GPUFMM_FFT_FORWARD or _INVERSE only
     integer(c_int) :: tune = 0                    !< time this many best-predicted parameter sets (0: model)
     integer(c_int) :: post = GPUFMM_FFT_POST_FUSED !< or GPUFMM_FFT_POST_CALLBACK (POST in cuFFT's load; GPU)
  end type gpufmm_fft_options

  !> What gpufmm_fft_plan_info returns: the C struct gpufmm_fft_info_t
  !> itself. The per-stage arrays are indexed by the stage constants,
  !> 0-based: info%time(GPUFMM_FFT_STAGE_M2L), s = 0..GPUFMM_FFT_STAGES-1.
  type, bind(c), public :: gpufmm_fft_info
     integer(c_int64_t) :: n = 0, m = 0             !< N and M = N / P
     integer(c_int) :: p = 0, ml = 0                !< P, M_L
     integer(c_int) :: levels = 0, base = 0, q = 0  !< L, B, Q
     integer(c_int) :: dtype = 0, backend = 0
     real(c_double) :: eps = 0                      !< the eps the plan was made for
     real(c_double) :: predicted_error = 0          !< the calibration's error for Q
     real(c_double) :: gamma = 0, beta = 0          !< the roofline: flop/s of a batched GEMM, bytes/s
     real(c_double) :: flops(0:GPUFMM_FFT_STAGES - 1) = 0  !< per stage
     real(c_double) :: bytes(0:GPUFMM_FFT_STAGES - 1) = 0  !< moved, per stage
     real(c_double) :: model(0:GPUFMM_FFT_STAGES - 1) = 0  !< roofline time, seconds (papers/002 eq. 3)
     real(c_double) :: time(0:GPUFMM_FFT_STAGES - 1) = 0   !< last execute, seconds
     real(c_double) :: t_total = 0                  !< last execute, transfers included
     real(c_double) :: plan_seconds = 0
     !> A plan over MPI ranks (module gpufmm_mpi; docs/fmmfft_mpi.md); a
     !> single-process plan: ranks 1, rank 0, n_local n, the rest 0.
     integer(c_int) :: ranks = 0, rank = 0          !< G and this rank
     integer(c_int64_t) :: n_local = 0              !< the elements this rank passes and gets: N / G
     integer(c_int64_t) :: sent_input = 0           !< reals sent in the last transform: the input's halo
     integer(c_int64_t) :: sent_multipoles = 0      !< the multipoles' halos
     integer(c_int64_t) :: sent_base = 0            !< this rank's block of the base level
     real(c_double) :: t_wait = 0                   !< seconds the last transform waited for messages
     !> GPUs of this process the plan spans: G of gpufmm_fft_plan_create_multi,
     !> else 1 (execute_host then takes n_local * parts elements).
     integer(c_int) :: parts = 0
     !> How the messages travel: 0 none, 1 MPI (GPU ranks: through host
     !> memory), 2 NCCL between the GPUs' memories.
     integer(c_int) :: messages = 0
  end type gpufmm_fft_info

  public :: gpufmm_fft_options_init, gpufmm_fft_plan_create, gpufmm_fft_plan_destroy
  public :: gpufmm_fft_execute, gpufmm_fft_execute_host, gpufmm_fft_plan_info, gpufmm_fft_stage_name
  public :: gpufmm_fft_plan_associated, gpufmm_fft_plan_c_ptr
  public :: gpufmm_fft_plan_create_multi, gpufmm_fft_execute_multi

  ! ------------------------------------------------------------------ generic interfaces

  !> plan_create(ctx, n, plan [, dtype, eps, p, ml, b, q, direction, tune, post] [, status]):
  !>   n of kind int32 or int64, the options by keyword (the C defaults when absent);
  !> plan_create(ctx, opts, plan [, status]): the options in a gpufmm_fft_options.
  interface gpufmm_fft_plan_create
     module procedure plan_create_i4, plan_create_i8, plan_create_opts
  end interface gpufmm_fft_plan_create

  !> execute_host(plan, in, out, direction [, status]): out = DFT(in);
  !> execute_host(plan, x, direction [, status]): x = DFT(x), in place.
  !> Rank-1 complex(c_double_complex) or complex(c_float_complex) arrays of N elements
  !> (a plan over MPI ranks: this rank's N / G, info%n_local; collective).
  interface gpufmm_fft_execute_host
     module procedure execute_host_c4, execute_host_inplace_c4
     module procedure execute_host_c8, execute_host_inplace_c8
  end interface gpufmm_fft_execute_host

  !> The handle queries of gpufmm_core under this type's names.
  interface gpufmm_fft_plan_associated
     module procedure gpufmm_associated
  end interface gpufmm_fft_plan_associated
  interface gpufmm_fft_plan_c_ptr
     module procedure gpufmm_c_ptr
  end interface gpufmm_fft_plan_c_ptr

  ! ------------------------------------------------------------------ raw C interfaces (private)
  interface
     function c_options_init(opt) bind(c, name='gpufmm_fft_options_init') result(s)
       import :: c_int, gpufmm_fft_options
       type(gpufmm_fft_options), intent(inout) :: opt
       integer(c_int) :: s
     end function c_options_init
     function c_plan_create(ctx, opt, plan) bind(c, name='gpufmm_fft_plan_create') result(s)
       import :: c_int, c_ptr, gpufmm_fft_options
       type(c_ptr), value :: ctx
       type(gpufmm_fft_options), intent(in) :: opt
       type(c_ptr), intent(out) :: plan
       integer(c_int) :: s
     end function c_plan_create
     function c_plan_create_multi(ctxs, count, opt, plan) bind(c, name='gpufmm_fft_plan_create_multi') result(s)
       import :: c_int, c_ptr, gpufmm_fft_options
       type(c_ptr), intent(in) :: ctxs(*)
       integer(c_int), value :: count
       type(gpufmm_fft_options), intent(in) :: opt
       type(c_ptr), intent(out) :: plan
       integer(c_int) :: s
     end function c_plan_create_multi
     function c_execute_multi(plan, in, out, direction) bind(c, name='gpufmm_fft_execute_multi') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), intent(in) :: in(*), out(*)
       integer(c_int), value :: direction
       integer(c_int) :: s
     end function c_execute_multi
     function c_plan_destroy(plan) bind(c, name='gpufmm_fft_plan_destroy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int) :: s
     end function c_plan_destroy
     function c_execute(plan, in, out, direction) bind(c, name='gpufmm_fft_execute') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: plan, in, out
       integer(c_int), value :: direction
       integer(c_int) :: s
     end function c_execute
     function c_execute_host(plan, in, out, direction) bind(c, name='gpufmm_fft_execute_host') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: plan, in, out
       integer(c_int), value :: direction
       integer(c_int) :: s
     end function c_execute_host
     function c_plan_info(plan, info) bind(c, name='gpufmm_fft_plan_info') result(s)
       import :: c_int, c_ptr, gpufmm_fft_info
       type(c_ptr), value :: plan
       type(gpufmm_fft_info), intent(out) :: info
       integer(c_int) :: s
     end function c_plan_info
     function c_stage_name(stage) bind(c, name='gpufmm_fft_stage_name') result(p)
       import :: c_int, c_ptr
       integer(c_int), value :: stage
       type(c_ptr) :: p
     end function c_stage_name
  end interface

contains

  !> Sets opts to the library's defaults (n = 0: set it; complex128, eps
  !> from the precision, P, M_L, B from the model, Q from eps, both
  !> directions, no tuning).
  subroutine gpufmm_fft_options_init(opts, status)
    type(gpufmm_fft_options), intent(inout) :: opts
    integer, optional, intent(out) :: status
    type(gpufmm_fft_options) :: o
    integer(c_int) :: s
    s = c_options_init(o)
    if (s == GPUFMM_SUCCESS) opts = o
    call gpufmm_check_status(s, status, 'gpufmm_fft_options_init')
  end subroutine gpufmm_fft_options_init

  !> Builds a plan for the options opts on ctx. On failure plan is
  !> unchanged. Errors: INVALID_HANDLE (ctx); INVALID_ARGUMENT (n not
  !> admitted - the message names the nearest admitted sizes -, a field out
  !> of range, named, p and ml that do not factor n); TYPE_MISMATCH
  !> (dtype); ACCURACY (eps below what the precision reaches);
  !> OUT_OF_MEMORY; DEVICE.
  subroutine plan_create_opts(ctx, opts, plan, status)
    type(gpufmm_context), intent(in) :: ctx
    type(gpufmm_fft_options), intent(in) :: opts
    type(gpufmm_fft_plan), intent(inout) :: plan
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(c_int) :: s
    p = c_null_ptr
    s = c_plan_create(gpufmm_context_c_ptr(ctx), opts, p)
    if (s == GPUFMM_SUCCESS) call gpufmm_handle_set(plan, p)
    call gpufmm_check_status(s, status, 'gpufmm_fft_plan_create')
  end subroutine plan_create_opts

  !> Builds a plan of length n with the options given by keyword, the
  !> library's defaults for those absent (see gpufmm_fft_options).
  subroutine plan_create_i8(ctx, n, plan, dtype, eps, p, ml, b, q, direction, tune, post, status)
    type(gpufmm_context), intent(in) :: ctx
    integer(int64), intent(in) :: n
    type(gpufmm_fft_plan), intent(inout) :: plan
    integer, intent(in), optional :: dtype, p, ml, b, q, direction, tune, post
    real(c_double), intent(in), optional :: eps
    integer, optional, intent(out) :: status
    type(gpufmm_fft_options) :: o
    integer(c_int) :: s
    s = c_options_init(o)
    if (s /= GPUFMM_SUCCESS) then
       call gpufmm_check_status(s, status, 'gpufmm_fft_plan_create')
       return
    end if
    o%n = n
    if (present(dtype)) o%dtype = dtype
    if (present(eps)) o%eps = eps
    if (present(p)) o%p = p
    if (present(ml)) o%ml = ml
    if (present(b)) o%b = b
    if (present(q)) o%q = q
    if (present(direction)) o%direction = direction
    if (present(tune)) o%tune = tune
    if (present(post)) o%post = post
    call plan_create_opts(ctx, o, plan, status)
  end subroutine plan_create_i8

  subroutine plan_create_i4(ctx, n, plan, dtype, eps, p, ml, b, q, direction, tune, post, status)
    type(gpufmm_context), intent(in) :: ctx
    integer(int32), intent(in) :: n
    type(gpufmm_fft_plan), intent(inout) :: plan
    integer, intent(in), optional :: dtype, p, ml, b, q, direction, tune, post
    real(c_double), intent(in), optional :: eps
    integer, optional, intent(out) :: status
    call plan_create_i8(ctx, int(n, int64), plan, dtype, eps, p, ml, b, q, direction, tune, post, status)
  end subroutine plan_create_i4

  !> Frees the plan and nulls the handle (a null handle is a no-op).
  !> Builds a plan over the GPUs of the contexts ctxs (a power of two of
  !> them, each on a different GPU): part g works on elements
  !> [g N/G, (g+1) N/G) on ctxs(g+1), the parts exchanging their data
  !> through NCCL (loaded at run time), one thread per GPU. Then
  !> gpufmm_fft_execute_host takes all N elements and
  !> gpufmm_fft_execute_multi an array per GPU. One context: a plain plan.
  !> Errors: those of gpufmm_fft_plan_create; INVALID_ARGUMENT (no
  !> context; a CPU context or two contexts on one GPU, among several);
  !> NOT_SUPPORTED (not a power of two; a build without CUDA or NCCL's
  !> header; libnccl.so.2 not found); a part's error as "GPU part g: ...".
  subroutine gpufmm_fft_plan_create_multi(ctxs, opts, plan, status)
    type(gpufmm_context), intent(in) :: ctxs(:)
    type(gpufmm_fft_options), intent(in) :: opts
    type(gpufmm_fft_plan), intent(inout) :: plan
    integer, optional, intent(out) :: status
    type(c_ptr) :: cs(max(1, size(ctxs)))
    type(c_ptr) :: p
    integer(c_int) :: s
    integer :: i
    cs = c_null_ptr
    do i = 1, size(ctxs)
       cs(i) = gpufmm_context_c_ptr(ctxs(i))
    end do
    p = c_null_ptr
    s = c_plan_create_multi(cs, int(size(ctxs), c_int), opts, p)
    if (s == GPUFMM_SUCCESS) call gpufmm_handle_set(plan, p)
    call gpufmm_check_status(s, status, 'gpufmm_fft_plan_create_multi')
  end subroutine gpufmm_fft_plan_create_multi

  !> out(g) = part g's block of DFT(in) on a plan over several GPUs: in(g)
  !> and out(g) arrays of the g-th context, N / G elements each (they may
  !> be the same arrays); one array each for a plain plan. Errors: as
  !> gpufmm_fft_execute, a part's named "GPU part g: ..."; SIZE_MISMATCH
  !> (not one array per GPU).
  subroutine gpufmm_fft_execute_multi(plan, in, out, direction, status)
    type(gpufmm_fft_plan), intent(in) :: plan
    type(gpufmm_array), intent(in) :: in(:), out(:)
    integer, intent(in) :: direction
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_fft_execute_multi'
    type(gpufmm_fft_info) :: ci
    type(c_ptr) :: pin(max(1, size(in))), pout(max(1, size(out)))
    character(len=:), allocatable :: msg
    integer(c_int) :: s
    integer :: i
    s = c_plan_info(gpufmm_c_ptr(plan), ci)
    if (s /= GPUFMM_SUCCESS) then
       call gpufmm_check_status(s, status, where)
       return
    end if
    msg = gpufmm_size_error('in', size(in, kind=int64), int(ci%parts, int64), 'one array per GPU')
    if (len(msg) == 0) msg = gpufmm_size_error('out', size(out, kind=int64), int(ci%parts, int64), 'one array per GPU')
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    do i = 1, size(in)
       pin(i) = gpufmm_c_ptr(in(i))
       pout(i) = gpufmm_c_ptr(out(i))
    end do
    call gpufmm_check_status(c_execute_multi(gpufmm_c_ptr(plan), pin, pout, int(direction, c_int)), status, where)
  end subroutine gpufmm_fft_execute_multi

  subroutine gpufmm_fft_plan_destroy(plan, status)
    type(gpufmm_fft_plan), intent(inout) :: plan
    integer, optional, intent(out) :: status
    call gpufmm_handle_destroyed(plan, c_plan_destroy(gpufmm_c_ptr(plan)), status, 'gpufmm_fft_plan_destroy')
  end subroutine gpufmm_fft_plan_destroy

  !> The parameters the plan runs with (P, M_L, L, B, Q), the roofline model
  !> (flops, bytes and time of each stage) and the stage times of its last
  !> execute (default values on failure).
  function gpufmm_fft_plan_info(plan, status) result(info)
    type(gpufmm_fft_plan), intent(in) :: plan
    integer, optional, intent(out) :: status
    type(gpufmm_fft_info) :: info
    type(gpufmm_fft_info) :: ci
    integer(c_int) :: s
    s = c_plan_info(gpufmm_c_ptr(plan), ci)
    if (s == GPUFMM_SUCCESS) info = ci
    call gpufmm_check_status(s, status, 'gpufmm_fft_plan_info')
  end function gpufmm_fft_plan_info

  !> The name of stage s (GPUFMM_FFT_STAGE_*: "S2M", "M2L-B", "S2T+POST",
  !> "FFT-P", ...), "?" when out of range.
  function gpufmm_fft_stage_name(stage) result(name)
    integer, intent(in) :: stage
    character(len=:), allocatable :: name
    name = gpufmm_c_string(c_stage_name(int(stage, c_int)))
  end function gpufmm_fft_stage_name

  !> out = DFT(in) in the given direction on gpufmm arrays of the plan's
  !> context (the data stay on the device): dtype the plan's, N elements
  !> each (any rank); in and out may be the same array. Errors:
  !> INVALID_HANDLE; TYPE_MISMATCH; SIZE_MISMATCH; INVALID_ARGUMENT
  !> (direction; an array of another context; a NaN or Inf input, named
  !> with its 0-based index: out is then untouched).
  subroutine gpufmm_fft_execute(plan, in, out, direction, status)
    type(gpufmm_fft_plan), intent(in) :: plan
    type(gpufmm_array), intent(in) :: in, out
    integer, intent(in) :: direction
    integer, optional, intent(out) :: status
    call gpufmm_check_status(c_execute(gpufmm_c_ptr(plan), gpufmm_c_ptr(in), gpufmm_c_ptr(out), &
         int(direction, c_int)), status, 'gpufmm_fft_execute')
  end subroutine gpufmm_fft_execute

  ! ------------------------------------------------------------------ host arrays

  !> The host transform behind the specifics: checks that the plan lives,
  !> that in and out (nin, nout elements; named in_name, out_name: 'in',
  !> 'out', or 'x' twice in place) have N elements and the plan's dtype
  !> (`ftype` names their kind), then calls the C function with their
  !> addresses.
  subroutine do_execute_host(plan, pin, nin, in_name, pout, nout, out_name, dtype, ftype, direction, status)
    type(gpufmm_fft_plan), intent(in) :: plan
    type(c_ptr), intent(in) :: pin, pout
    integer(int64), intent(in) :: nin, nout
    character(len=*), intent(in) :: in_name, out_name, ftype
    integer(c_int), intent(in) :: dtype
    integer, intent(in) :: direction
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_fft_execute_host'
    type(gpufmm_fft_info) :: ci
    character(len=:), allocatable :: msg
    integer(c_int) :: s, ignored
    s = c_plan_info(gpufmm_c_ptr(plan), ci)  ! the plan's size and dtype (and a live handle)
    if (s /= GPUFMM_SUCCESS) then
       call gpufmm_check_status(s, status, where)
       return
    end if
    if (ci%dtype /= dtype) then
       s = GPUFMM_ERROR_TYPE_MISMATCH
       msg = 'argument ''' // in_name // ''' is ' // ftype // ' but the plan is ' // gpufmm_dtype_name(int(ci%dtype))
    else
       s = GPUFMM_ERROR_SIZE_MISMATCH  ! N elements (N / G on a plan over MPI ranks)
       msg = gpufmm_size_error(in_name, nin, ci%n_local * ci%parts, 'the plan''s N')
       if (len(msg) == 0) msg = gpufmm_size_error(out_name, nout, ci%n_local * ci%parts, 'the plan''s N')
    end if
    if (len(msg) > 0) then
       ! Over MPI ranks the call is collective: this rank still takes part,
       ! with no input (so every rank fails), then reports its own error.
       if (ci%ranks > 1 .and. ci%parts == 1) ignored = c_execute_host(gpufmm_c_ptr(plan), c_null_ptr, pout, int(direction, c_int))
       call gpufmm_check_status(s, status, where, msg)
       return
    end if
    call gpufmm_check_status(c_execute_host(gpufmm_c_ptr(plan), pin, pout, int(direction, c_int)), status, where)
  end subroutine do_execute_host

  !> out = DFT(in) on complex(real32) host arrays of N elements (a complex64 plan).
  subroutine execute_host_c4(plan, in, out, direction, status)
    type(gpufmm_fft_plan), intent(in) :: plan
    complex(real32), contiguous, target, intent(in) :: in(:)
    complex(real32), contiguous, target, intent(inout) :: out(:)
    integer, intent(in) :: direction
    integer, optional, intent(out) :: status
    call do_execute_host(plan, host_ptr_c4(in), size(in, kind=int64), 'in', host_ptr_c4(out), &
         size(out, kind=int64), 'out', GPUFMM_COMPLEX64, 'complex(real32)', direction, status)
  end subroutine execute_host_c4

  !> x = DFT(x) in place on a complex(real32) host array of N elements.
  subroutine execute_host_inplace_c4(plan, x, direction, status)
    type(gpufmm_fft_plan), intent(in) :: plan
    complex(real32), contiguous, target, intent(inout) :: x(:)
    integer, intent(in) :: direction
    integer, optional, intent(out) :: status
    call do_execute_host(plan, host_ptr_c4(x), size(x, kind=int64), 'x', host_ptr_c4(x), &
         size(x, kind=int64), 'x', GPUFMM_COMPLEX64, 'complex(real32)', direction, status)
  end subroutine execute_host_inplace_c4

  !> The address of a host array (c_null_ptr when empty: c_loc of a
  !> zero-sized array is not allowed).
  function host_ptr_c4(a) result(p)
    complex(real32), contiguous, target, intent(in) :: a(:)
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
  end function host_ptr_c4

  !> out = DFT(in) on complex(real64) host arrays of N elements (a complex128 plan).
  subroutine execute_host_c8(plan, in, out, direction, status)
    type(gpufmm_fft_plan), intent(in) :: plan
    complex(real64), contiguous, target, intent(in) :: in(:)
    complex(real64), contiguous, target, intent(inout) :: out(:)
    integer, intent(in) :: direction
    integer, optional, intent(out) :: status
    call do_execute_host(plan, host_ptr_c8(in), size(in, kind=int64), 'in', host_ptr_c8(out), &
         size(out, kind=int64), 'out', GPUFMM_COMPLEX128, 'complex(real64)', direction, status)
  end subroutine execute_host_c8

  !> x = DFT(x) in place on a complex(real64) host array of N elements.
  subroutine execute_host_inplace_c8(plan, x, direction, status)
    type(gpufmm_fft_plan), intent(in) :: plan
    complex(real64), contiguous, target, intent(inout) :: x(:)
    integer, intent(in) :: direction
    integer, optional, intent(out) :: status
    call do_execute_host(plan, host_ptr_c8(x), size(x, kind=int64), 'x', host_ptr_c8(x), &
         size(x, kind=int64), 'x', GPUFMM_COMPLEX128, 'complex(real64)', direction, status)
  end subroutine execute_host_inplace_c8

  !> The address of a host array (c_null_ptr when empty: c_loc of a
  !> zero-sized array is not allowed).
  function host_ptr_c8(a) result(p)
    complex(real64), contiguous, target, intent(in) :: a(:)
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
  end function host_ptr_c8

end module gpufmm_fft
