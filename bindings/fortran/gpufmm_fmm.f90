! ============================================================================
! GENERATED FILE - DO NOT EDIT BY HAND.
! Made from bindings/fortran/gpufmm_fmm.fypp by tools/gen-fortran; edit the template, run
!     tools/gen-fortran
! from the repository root and commit both (building does not need fypp:
! this file is checked in; the CTest fortran_generated_up_to_date fails when
! it is stale).
! ============================================================================
!> gpufmm_fmm - the Laplace fast multipole method and direct sum for Fortran
!> (see docs/fortran.md, section "Laplace FMM").
!>
!> Computes, at targets y_i, the potential
!>     phi(y_i) = sum_j q_j / |y_i - x_j|  +  d_j . (y_i - x_j) / |y_i - x_j|^3
!> of charges q_j and/or dipoles d_j at sources x_j, and/or its gradient
!> (kernel 1/r, no 1/(4 pi); a target on a source gets no self term).
!>
!> Shapes (host arrays, real(real64), column-major as everywhere in gpufmm):
!>     sources(3, nsrc)   targets(3, ntrg)
!>     charges(nsrc)      dipoles(3, nsrc)
!>     pot(ntrg)          grad(3, ntrg)
!> The sizes are checked (GPUFMM_ERROR_SIZE_MISMATCH naming the argument).
!> Any array may be a non-contiguous section (it is then copied).
!>
!> "Absent" and "not wanted": charges, dipoles, pot and grad are OPTIONAL
!> arguments. Leave out charges or dipoles when the sources do not carry them
!> (not both), and pot or grad when you do not want it (not both); pass them
!> by keyword (charges=q, grad=g). A disassociated pointer or an unallocated
!> allocatable passed to one of them counts as absent too (Fortran 2008), so
!> a code can decide at run time what to pass. targets absent means "at the
!> sources": ntrg = nsrc, pot(nsrc), grad(3, nsrc).
!>
!> Plan once, evaluate many times: gpufmm_laplace_plan_create builds the
!> octree, lists and translation data of one geometry; every
!> gpufmm_laplace_evaluate takes new charges/dipoles. Destroy the plan with
!> gpufmm_laplace_plan_destroy before its context.
!>
!> Errors: every procedure takes `integer, optional, intent(out) :: status`
!> last; absent, a failure stops the program (error stop with the message),
!> present, it receives the code (see gpufmm_core). Outputs (pot, grad, the
!> plan handle) are unchanged by a failed call.
!>
!> For FORTRAN 77-style codes, bindings/fortran/gpufmm_f77.f90 has
!> gpufmm_lfmm3d and gpufmm_ldirect3d: external subroutines with explicit-shape
!> arrays, 0/1 flags and an `ier` argument, callable without any module.
module gpufmm_fmm
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_double, c_ptr, c_null_ptr, c_associated
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use gpufmm_core, itoa => gpufmm_itoa
  use gpufmm_array_mod
  implicit none
  private

  ! The constants (GPUFMM_STENCIL_*, GPUFMM_LAPLACE_MAX_P, GPUFMM_STRATEGY_*) are in gpufmm_core,
  ! generated from gpufmm.h.

  ! ------------------------------------------------------------------ types

  !> A Laplace FMM plan (opaque): one geometry, evaluated many times.
  type, public, extends(gpufmm_handle) :: gpufmm_laplace_plan
  end type gpufmm_laplace_plan

  !> Options of gpufmm_laplace_plan_create: the C struct
  !> gpufmm_laplace_options_t itself (its members in order, from gpufmm.h).
  !> The default values below are the library's defaults, from gpufmm.h's
  !> GPUFMM_LAPLACE_OPTIONS_DEFAULT (what gpufmm_laplace_options_init sets).
  type, bind(c), public :: gpufmm_laplace_options
     real(c_double) :: eps = 1e-6_c_double         !< requested relative L2 error, 0 < eps < 1 (>= 1e-5 with GPUFMM_FLOAT32)
     integer(c_int) :: precision = GPUFMM_FLOAT64  !< arithmetic: GPUFMM_FLOAT64 or GPUFMM_FLOAT32
     integer(c_int) :: p = 0                       !< 0: from eps; else force 1..GPUFMM_LAPLACE_MAX_P
     integer(c_int) :: l_max = -1                  !< -1: cost model; else the octree depth
     integer(c_int) :: s_max = -1                  !< -1: cost model; else points per finest box
     integer(c_int) :: stencil = GPUFMM_STENCIL_MODIFIED  !< GPUFMM_STENCIL_MODIFIED or _STANDARD
     integer(c_int) :: variable_truncation = 1     !< 1: p' of eq. 24 per translation; 0: p everywhere
     integer(c_int) :: table_cache = 1             !< 1: tables from the process / device caches; 0: own
     ! GPU context only: kernel strategy per stage (GPUFMM_STRATEGY_*)
     integer(c_int) :: gpu_p2m = GPUFMM_STRATEGY_BPB  !< BPB, WPB or TPB
     integer(c_int) :: gpu_m2m = GPUFMM_STRATEGY_AUTO  !< AUTO, BPB, GEMM, GPB or TPB
     integer(c_int) :: gpu_m2l = GPUFMM_STRATEGY_AUTO  !< AUTO, GEMM, GRP, BPB, WPB or TPB
     integer(c_int) :: gpu_l2l = GPUFMM_STRATEGY_BPB  !< BPB or TPB
     integer(c_int) :: gpu_l2p = GPUFMM_STRATEGY_TPT  !< TPT, BPB or TPB
     integer(c_int) :: gpu_p2p = GPUFMM_STRATEGY_BPB  !< BPB or TPT
     integer(c_int) :: gpu_overlap = 1             !< 1: near field on a second stream; 0: after the far field
     integer(c_int) :: gpu_graph = 1               !< 1: evaluates replayed as one CUDA graph; 0: kernel by kernel
     integer(c_int) :: tree = GPUFMM_LAPLACE_TREE_AUTO  !< GPUFMM_LAPLACE_TREE_AUTO, _UNIFORM or _ADAPTIVE
     integer(c_int) :: calibrate = 1               !< with p = 0: 1: p from test evaluates of the plan; 0: from the error model
     integer(c_int) :: densities = GPUFMM_LAPLACE_DENSITIES_ANY  !< _ANY, _CHARGES or _DIPOLES: what evaluates pass
     real(c_double) :: cube_padding = 0.0_c_double  !< uniform tree's cube / the points' cube: 0: cost model; or in [1, 2)
  end type gpufmm_laplace_options

  !> What gpufmm_laplace_plan_info returns: truncation number, depth, sizes,
  !> plan time and the per-stage times of the last evaluate (seconds), in the
  !> columns of papers/000 Table 8: t_p2m "S exp", t_upward "up trans",
  !> t_downward "down trans", t_l2p "R eval", t_p2p "sparse", t_total.
  type, public :: gpufmm_laplace_info
     integer :: p = 0, l_max = 0, precision = 0, backend = 0
     integer(int64) :: nsrc = 0, ntrg = 0
     integer(int64) :: source_boxes = 0, target_boxes = 0
     integer(int64) :: m2l_translations = 0, p2p_pairs = 0
     real(real64) :: plan_seconds = 0
     real(real64) :: t_p2m = 0, t_upward = 0, t_downward = 0, t_l2p = 0, t_p2p = 0, t_total = 0
     logical :: adaptive = .false.  !< the octree is adaptive (options%tree)
     integer :: calibration_evaluates = 0  !< test evaluates of options%calibrate (0: none)
     real(real64) :: measured_eps = 0      !< the relative L2 error they measured at p (0: none; > eps/2.2 only at the largest p)
     real(real64) :: cube_padding = 1      !< the tree's cube against the points' bounding cube (1: adaptive)
  end type gpufmm_laplace_info

  ! The C struct gpufmm_laplace_info_t (its members in order, from gpufmm.h).
  type, bind(c) :: c_laplace_info
     integer(c_int) :: p
     integer(c_int) :: l_max
     integer(c_int) :: precision
     integer(c_int) :: backend
     integer(c_int64_t) :: nsrc
     integer(c_int64_t) :: ntrg
     integer(c_int64_t) :: source_boxes
     integer(c_int64_t) :: target_boxes
     integer(c_int64_t) :: m2l_translations
     integer(c_int64_t) :: p2p_pairs
     real(c_double) :: plan_seconds
     real(c_double) :: t_p2m
     real(c_double) :: t_upward
     real(c_double) :: t_downward
     real(c_double) :: t_l2p
     real(c_double) :: t_p2p
     real(c_double) :: t_total
     integer(c_int) :: adaptive
     integer(c_int) :: calibration_evaluates
     real(c_double) :: measured_eps
     real(c_double) :: cube_padding
  end type c_laplace_info

  public :: gpufmm_laplace_options_init, gpufmm_laplace_plan_create, gpufmm_laplace_plan_destroy
  public :: gpufmm_laplace_evaluate, gpufmm_laplace_evaluate_arrays, gpufmm_laplace_plan_info
  public :: gpufmm_laplace_direct, gpufmm_laplace
  public :: gpufmm_laplace_evaluate_nd, gpufmm_laplace_direct_nd
  public :: gpufmm_laplace_plan_associated, gpufmm_laplace_plan_c_ptr

  ! ------------------------------------------------------------------ raw C interfaces (private)
  ! Optional array dummies of a bind(c) interface pass NULL when absent.
  interface
     function c_options_init(opt) bind(c, name='gpufmm_laplace_options_init') result(s)
       import :: c_int, gpufmm_laplace_options
       type(gpufmm_laplace_options), intent(inout) :: opt
       integer(c_int) :: s
     end function c_options_init
     function c_plan_create(ctx, opt, nsrc, sources, ntrg, targets, plan) &
          bind(c, name='gpufmm_laplace_plan_create') result(s)
       import :: c_int, c_int64_t, c_double, c_ptr, gpufmm_laplace_options
       type(c_ptr), value :: ctx
       type(gpufmm_laplace_options), intent(in) :: opt
       integer(c_int64_t), value :: nsrc, ntrg
       real(c_double), intent(in) :: sources(*)
       real(c_double), intent(in), optional :: targets(*)
       type(c_ptr), intent(out) :: plan
       integer(c_int) :: s
     end function c_plan_create
     function c_plan_destroy(plan) bind(c, name='gpufmm_laplace_plan_destroy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int) :: s
     end function c_plan_destroy
     function c_evaluate(plan, charges, dipoles, pot, grad) bind(c, name='gpufmm_laplace_evaluate') result(s)
       import :: c_int, c_double, c_ptr
       type(c_ptr), value :: plan
       real(c_double), intent(in), optional :: charges(*), dipoles(*)
       real(c_double), intent(inout), optional :: pot(*), grad(*)
       integer(c_int) :: s
     end function c_evaluate
     function c_evaluate_arrays(plan, charges, dipoles, pot, grad) &
          bind(c, name='gpufmm_laplace_evaluate_arrays') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: plan, charges, dipoles, pot, grad
       integer(c_int) :: s
     end function c_evaluate_arrays
     function c_plan_info(plan, info) bind(c, name='gpufmm_laplace_plan_info') result(s)
       import :: c_int, c_ptr, c_laplace_info
       type(c_ptr), value :: plan
       type(c_laplace_info), intent(out) :: info
       integer(c_int) :: s
     end function c_plan_info
     function c_laplace(ctx, eps, nsrc, sources, charges, dipoles, ntrg, targets, pot, grad) &
          bind(c, name='gpufmm_laplace') result(s)
       import :: c_int, c_int64_t, c_double, c_ptr
       type(c_ptr), value :: ctx
       real(c_double), value :: eps
       integer(c_int64_t), value :: nsrc, ntrg
       real(c_double), intent(in) :: sources(*)
       real(c_double), intent(in), optional :: charges(*), dipoles(*), targets(*)
       real(c_double), intent(inout), optional :: pot(*), grad(*)
       integer(c_int) :: s
     end function c_laplace
     function c_direct(ctx, precision, nsrc, sources, charges, dipoles, ntrg, targets, pot, grad) &
          bind(c, name='gpufmm_laplace_direct') result(s)
       import :: c_int, c_int64_t, c_double, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int), value :: precision
       integer(c_int64_t), value :: nsrc, ntrg
       real(c_double), intent(in) :: sources(*)
       real(c_double), intent(in), optional :: charges(*), dipoles(*), targets(*)
       real(c_double), intent(inout), optional :: pot(*), grad(*)
       integer(c_int) :: s
     end function c_direct
     function c_evaluate_nd(plan, nd, charges, dipoles, pot, grad, hess) &
          bind(c, name='gpufmm_laplace_evaluate_nd') result(s)
       import :: c_int, c_double, c_ptr
       type(c_ptr), value :: plan
       integer(c_int), value :: nd
       real(c_double), intent(in), optional :: charges(*), dipoles(*)
       real(c_double), intent(inout), optional :: pot(*), grad(*), hess(*)
       integer(c_int) :: s
     end function c_evaluate_nd
     function c_direct_nd(ctx, precision, nd, nsrc, sources, charges, dipoles, ntrg, targets, pot, grad, hess) &
          bind(c, name='gpufmm_laplace_direct_nd') result(s)
       import :: c_int, c_int64_t, c_double, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int), value :: precision, nd
       integer(c_int64_t), value :: nsrc, ntrg
       real(c_double), intent(in) :: sources(*)
       real(c_double), intent(in), optional :: charges(*), dipoles(*), targets(*)
       real(c_double), intent(inout), optional :: pot(*), grad(*), hess(*)
       integer(c_int) :: s
     end function c_direct_nd
  end interface

  !> The handle queries of gpufmm_core under this type's names.
  interface gpufmm_laplace_plan_associated
     module procedure gpufmm_associated
  end interface gpufmm_laplace_plan_associated
  interface gpufmm_laplace_plan_c_ptr
     module procedure gpufmm_c_ptr
  end interface gpufmm_laplace_plan_c_ptr

contains

  ! ================================================================== argument checks (Fortran side)

  ! ================================================================== options and plans

  !> Sets opts to the library's defaults (eps 1e-6, double precision, p and
  !> depth from the cost model, modified stencil, variable truncation).
  subroutine gpufmm_laplace_options_init(opts, status)
    type(gpufmm_laplace_options), intent(inout) :: opts
    integer, optional, intent(out) :: status
    type(gpufmm_laplace_options) :: o
    integer(c_int) :: s
    s = c_options_init(o)
    if (s == GPUFMM_SUCCESS) opts = o
    call gpufmm_check_status(s, status, 'gpufmm_laplace_options_init')
  end subroutine gpufmm_laplace_options_init

  !> Builds a plan for sources(3, nsrc) and targets(3, ntrg) (targets absent:
  !> at the sources) on ctx with the given options. On failure plan is
  !> unchanged. Errors: those of the C function (bad options, NaN/Inf
  !> coordinates named with their index, ...), and SIZE_MISMATCH when sources
  !> or targets do not have 3 rows.
  subroutine gpufmm_laplace_plan_create(ctx, opts, sources, plan, targets, status)
    type(gpufmm_context), intent(in) :: ctx
    type(gpufmm_laplace_options), intent(in) :: opts
    real(real64), intent(in) :: sources(:, :)
    type(gpufmm_laplace_plan), intent(inout) :: plan
    real(real64), intent(in), optional :: targets(:, :)
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_laplace_plan_create'
    type(c_ptr) :: p
    integer(int64) :: nsrc, ntrg
    integer(c_int) :: s
    nsrc = size(sources, 2, kind=int64)
    if (size(sources, 1) /= 3) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, gpufmm_shape3_error('sources', &
            size(sources, 1, kind=int64), nsrc, nsrc, 'one column per source'))
       return
    end if
    ntrg = 0
    if (present(targets)) then
       ntrg = size(targets, 2, kind=int64)
       if (size(targets, 1) /= 3) then
          call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, gpufmm_shape3_error('targets', &
               size(targets, 1, kind=int64), ntrg, ntrg, 'one column per target'))
          return
       end if
    end if
    p = c_null_ptr
    s = c_plan_create(gpufmm_context_c_ptr(ctx), opts, nsrc, sources, ntrg, targets, p)
    if (s == GPUFMM_SUCCESS) call gpufmm_handle_set(plan, p)
    call gpufmm_check_status(s, status, where)
  end subroutine gpufmm_laplace_plan_create

  !> Frees the plan and nulls the handle (a null handle is a no-op).
  subroutine gpufmm_laplace_plan_destroy(plan, status)
    type(gpufmm_laplace_plan), intent(inout) :: plan
    integer, optional, intent(out) :: status
    call gpufmm_handle_destroyed(plan, c_plan_destroy(gpufmm_c_ptr(plan)), status, 'gpufmm_laplace_plan_destroy')
  end subroutine gpufmm_laplace_plan_destroy

  !> The plan's truncation number, depth, sizes and the per-stage times of
  !> its last evaluate (default values on failure).
  function gpufmm_laplace_plan_info(plan, status) result(info)
    type(gpufmm_laplace_plan), intent(in) :: plan
    integer, optional, intent(out) :: status
    type(gpufmm_laplace_info) :: info
    type(c_laplace_info) :: ci
    integer(c_int) :: s
    s = c_plan_info(gpufmm_c_ptr(plan), ci)
    if (s == GPUFMM_SUCCESS) then
       info%p = ci%p
       info%l_max = ci%l_max
       info%precision = ci%precision
       info%backend = ci%backend
       info%nsrc = ci%nsrc
       info%ntrg = ci%ntrg
       info%source_boxes = ci%source_boxes
       info%target_boxes = ci%target_boxes
       info%m2l_translations = ci%m2l_translations
       info%p2p_pairs = ci%p2p_pairs
       info%plan_seconds = ci%plan_seconds
       info%t_p2m = ci%t_p2m
       info%t_upward = ci%t_upward
       info%t_downward = ci%t_downward
       info%t_l2p = ci%t_l2p
       info%t_p2p = ci%t_p2p
       info%t_total = ci%t_total
       info%adaptive = ci%adaptive /= 0
       info%calibration_evaluates = ci%calibration_evaluates
       info%measured_eps = ci%measured_eps
       info%cube_padding = ci%cube_padding
    end if
    call gpufmm_check_status(s, status, 'gpufmm_laplace_plan_info')
  end function gpufmm_laplace_plan_info

  !> Evaluates the plan with host arrays: charges(nsrc) and/or
  !> dipoles(3, nsrc) (leave out what the sources do not carry), into
  !> pot(ntrg) and/or grad(3, ntrg) (leave out what is not wanted); outputs
  !> are overwritten. Errors: INVALID_HANDLE (plan), INVALID_ARGUMENT (no
  !> input, no output, a NaN/Inf charge or dipole), SIZE_MISMATCH.
  subroutine gpufmm_laplace_evaluate(plan, charges, dipoles, pot, grad, status)
    type(gpufmm_laplace_plan), intent(in) :: plan
    real(real64), intent(in), optional :: charges(:), dipoles(:, :)
    real(real64), intent(inout), optional :: pot(:), grad(:, :)
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_laplace_evaluate'
    type(c_laplace_info) :: ci
    integer(c_int) :: s
    s = c_plan_info(gpufmm_c_ptr(plan), ci)  ! the plan's sizes (and a live handle)
    if (.not. gpufmm_plan_io_ok(s, ci%nsrc, ci%ntrg, status, where, charges, dipoles, pot, grad)) return
    s = c_evaluate(gpufmm_c_ptr(plan), charges, dipoles, pot, grad)
    call gpufmm_check_status(s, status, where)
  end subroutine gpufmm_laplace_evaluate

  !> The same with gpufmm arrays on the plan's context (data stay on the
  !> device): dtype = the plan's precision, charges and pot nsrc / ntrg
  !> elements, dipoles and grad 3*nsrc / 3*ntrg (any rank). Leave out what is
  !> absent or not wanted.
  subroutine gpufmm_laplace_evaluate_arrays(plan, charges, dipoles, pot, grad, status)
    type(gpufmm_laplace_plan), intent(in) :: plan
    type(gpufmm_array), intent(in), optional :: charges, dipoles, pot, grad
    integer, optional, intent(out) :: status
    call gpufmm_check_status(c_evaluate_arrays(gpufmm_c_ptr(plan), gpufmm_optional_c_ptr(charges), &
         gpufmm_optional_c_ptr(dipoles), gpufmm_optional_c_ptr(pot), gpufmm_optional_c_ptr(grad)), status, &
         'gpufmm_laplace_evaluate_arrays')
  end subroutine gpufmm_laplace_evaluate_arrays

  !> The shapes of the nd-density arrays (FMM3D's layout): charges(nd, nsrc),
  !> dipoles(nd, 3, nsrc), pot(nd, ntrg), grad(nd, 3, ntrg), hess(nd, 6,
  !> ntrg); nd from the first input present. '' when they agree, else what
  !> does not.
  function nd_shapes(nsrc, ntrg, nd, charges, dipoles, pot, grad, hess) result(msg)
    integer(int64), intent(in) :: nsrc, ntrg
    integer, intent(out) :: nd
    real(real64), intent(in), optional :: charges(:, :), dipoles(:, :, :), pot(:, :), grad(:, :, :), hess(:, :, :)
    character(len=:), allocatable :: msg
    msg = ''
    nd = 0
    if (present(charges)) nd = size(charges, 1)
    if (nd == 0 .and. present(dipoles)) nd = size(dipoles, 1)
    if (present(charges)) call want('charges', shape(charges, kind=int64), [int(nd, int64), nsrc])
    if (present(dipoles)) call want('dipoles', shape(dipoles, kind=int64), [int(nd, int64), 3_int64, nsrc])
    if (present(pot)) call want('pot', shape(pot, kind=int64), [int(nd, int64), ntrg])
    if (present(grad)) call want('grad', shape(grad, kind=int64), [int(nd, int64), 3_int64, ntrg])
    if (present(hess)) call want('hess', shape(hess, kind=int64), [int(nd, int64), 6_int64, ntrg])
  contains
    subroutine want(name, got, expected)
      character(len=*), intent(in) :: name
      integer(int64), intent(in) :: got(:), expected(:)
      if (len(msg) > 0 .or. all(got == expected)) return
      msg = 'argument ''' // name // ''' has shape ' // dims(got) // ', not ' // dims(expected) // &
           ' (nd from the first input)'
    end subroutine want
    function dims(v) result(t)
      integer(int64), intent(in) :: v(:)
      character(len=:), allocatable :: t
      integer :: k
      t = '('
      do k = 1, size(v)
         t = t // itoa(v(k))
         if (k < size(v)) t = t // ', '
      end do
      t = t // ')'
    end function dims
  end function nd_shapes

  !> Several densities on the plan's geometry in one call, and the Hessian
  !> (gpufmm_laplace_evaluate_nd): charges(nd, nsrc) and/or dipoles(nd, 3,
  !> nsrc) in, pot(nd, ntrg), grad(nd, 3, ntrg) and/or hess(nd, 6, ntrg)
  !> out (FMM3D's layouts; the Hessian's order xx, yy, zz, xy, xz, yz).
  !> Leave out what is absent or not wanted. Errors as
  !> gpufmm_laplace_evaluate; SIZE_MISMATCH when the shapes disagree.
  subroutine gpufmm_laplace_evaluate_nd(plan, charges, dipoles, pot, grad, hess, status)
    type(gpufmm_laplace_plan), intent(in) :: plan
    real(real64), intent(in), optional, contiguous :: charges(:, :), dipoles(:, :, :)
    real(real64), intent(inout), optional, contiguous :: pot(:, :), grad(:, :, :), hess(:, :, :)
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_laplace_evaluate_nd'
    type(c_laplace_info) :: ci
    character(len=:), allocatable :: msg
    integer(c_int) :: s
    integer :: nd
    s = c_plan_info(gpufmm_c_ptr(plan), ci)  ! the plan's sizes (and a live handle)
    if (s /= GPUFMM_SUCCESS) then
       call gpufmm_check_status(s, status, where)
       return
    end if
    msg = nd_shapes(ci%nsrc, ci%ntrg, nd, charges, dipoles, pot, grad, hess)
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    s = c_evaluate_nd(gpufmm_c_ptr(plan), int(max(nd, 1), c_int), charges, dipoles, pot, grad, hess)
    call gpufmm_check_status(s, status, where)
  end subroutine gpufmm_laplace_evaluate_nd

  ! ================================================================== one-shot FMM and direct sum

  !> One shot: plan with default options and this eps, evaluate once,
  !> destroy. Arguments as plan_create + evaluate.
  subroutine gpufmm_laplace(ctx, eps, sources, charges, dipoles, targets, pot, grad, status)
    type(gpufmm_context), intent(in) :: ctx
    real(real64), intent(in) :: eps
    real(real64), intent(in) :: sources(:, :)
    real(real64), intent(in), optional :: charges(:), dipoles(:, :), targets(:, :)
    real(real64), intent(inout), optional :: pot(:), grad(:, :)
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_laplace'
    character(len=:), allocatable :: msg
    integer(int64) :: nsrc, ntrg
    msg = gpufmm_sum_shapes(sources, targets, charges, dipoles, pot, grad, nsrc=nsrc, ntrg=ntrg)
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    call gpufmm_check_status(c_laplace(gpufmm_context_c_ptr(ctx), real(eps, c_double), nsrc, sources, &
         charges, dipoles, ntrg, targets, pot, grad), status, where)
  end subroutine gpufmm_laplace

  !> Direct summation of the same sums, O(nsrc * ntrg), on ctx's backend (the
  !> accuracy reference of the FMM): precision GPUFMM_FLOAT64 (default) or
  !> GPUFMM_FLOAT32 is the arithmetic; the arrays are real(real64) either way.
  subroutine gpufmm_laplace_direct(ctx, sources, charges, dipoles, targets, pot, grad, precision, status)
    type(gpufmm_context), intent(in) :: ctx
    real(real64), intent(in) :: sources(:, :)
    real(real64), intent(in), optional :: charges(:), dipoles(:, :), targets(:, :)
    real(real64), intent(inout), optional :: pot(:), grad(:, :)
    integer, intent(in), optional :: precision
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_laplace_direct'
    character(len=:), allocatable :: msg
    integer(int64) :: nsrc, ntrg
    integer(c_int) :: prec
    prec = GPUFMM_FLOAT64
    if (present(precision)) prec = int(precision, c_int)
    msg = gpufmm_sum_shapes(sources, targets, charges, dipoles, pot, grad, nsrc=nsrc, ntrg=ntrg)
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    call gpufmm_check_status(c_direct(gpufmm_context_c_ptr(ctx), prec, nsrc, sources, charges, dipoles, &
         ntrg, targets, pot, grad), status, where)
  end subroutine gpufmm_laplace_direct

  !> gpufmm_laplace_direct for nd densities and with the Hessian, in the
  !> layouts of gpufmm_laplace_evaluate_nd; sources(3, nsrc), targets(3,
  !> ntrg) (leave out: at the sources).
  subroutine gpufmm_laplace_direct_nd(ctx, sources, charges, dipoles, targets, pot, grad, hess, precision, status)
    type(gpufmm_context), intent(in) :: ctx
    real(real64), intent(in), contiguous :: sources(:, :)
    real(real64), intent(in), optional, contiguous :: charges(:, :), dipoles(:, :, :), targets(:, :)
    real(real64), intent(inout), optional, contiguous :: pot(:, :), grad(:, :, :), hess(:, :, :)
    integer, intent(in), optional :: precision
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_laplace_direct_nd'
    character(len=:), allocatable :: msg
    integer(int64) :: nsrc, ntrg
    integer(c_int) :: prec
    integer :: nd
    prec = GPUFMM_FLOAT64
    if (present(precision)) prec = int(precision, c_int)
    nsrc = size(sources, 2, kind=int64)
    ntrg = nsrc
    if (present(targets)) ntrg = size(targets, 2, kind=int64)
    msg = ''
    if (size(sources, 1) /= 3) msg = 'argument sources is not 3 x nsrc'
    if (present(targets)) then
       if (size(targets, 1) /= 3) msg = 'argument targets is not 3 x ntrg'
    end if
    if (len(msg) == 0) msg = nd_shapes(nsrc, ntrg, nd, charges, dipoles, pot, grad, hess)
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    call gpufmm_check_status(c_direct_nd(gpufmm_context_c_ptr(ctx), prec, int(max(nd, 1), c_int), nsrc, sources, &
         charges, dipoles, ntrg, targets, pot, grad, hess), status, where)
  end subroutine gpufmm_laplace_direct_nd

  ! ================================================================== handles

end module gpufmm_fmm
