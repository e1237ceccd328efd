!> gpufmm_treecode_mod - the barycentric Lagrange treecode for Fortran
!> (papers/001; see docs/fortran.md, section "Barycentric Lagrange treecode").
!>
!> Computes, at targets y_i, the potential
!>     phi(y_i) = sum_j q_j G(y_i, x_j)
!> of charges q_j at sources x_j for any pair kernel G of gpufmm_kernels_mod
!> (Coulomb 1/r, Yukawa exp(-kappa r)/r, the regularized ones), and/or its
!> gradient, to a requested relative L2 error eps: source clusters are
!> approximated by barycentric Lagrange interpolation at Chebyshev points.
!>
!> Shapes (host arrays, real(real64), column-major as everywhere in gpufmm):
!>     sources(3, nsrc)   targets(3, ntrg)   charges(nsrc)
!>     pot(ntrg)          grad(3, ntrg)
!> The sizes are checked (GPUFMM_ERROR_SIZE_MISMATCH naming the argument).
!> targets absent means "at the sources": ntrg = nsrc (a singular kernel
!> leaves out each point's own term, as gpufmm_direct does). pot and grad
!> are OPTIONAL: pass what you want, by keyword (not neither).
!>
!> Plan once, evaluate many times: gpufmm_treecode_plan_create builds the
!> trees, the interaction lists and the proxies of one geometry; every
!> gpufmm_treecode_evaluate takes new charges. Destroy the plan with
!> gpufmm_treecode_plan_destroy before its context.
!>
!> Errors: every procedure takes `integer, optional, intent(out) :: status`
!> last; absent, a failure stops the program (error stop with the message),
!> present, it receives the code (see gpufmm_core). Outputs (pot, grad, the
!> plan handle) are unchanged by a failed call.
!>
!> For FORTRAN 77-style codes, bindings/fortran/gpufmm_f77.f90 has
!> gpufmm_treecode3d: an external subroutine with explicit-shape arrays, 0/1
!> flags and an `ier` argument, callable without any module.
module gpufmm_treecode_mod
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_double, c_ptr, c_null_ptr
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use gpufmm_core
  use gpufmm_array_mod
  use gpufmm_kernels_mod, only: gpufmm_kernel
  implicit none
  private

  ! The constants (GPUFMM_TREECODE_PC, _CP, _CC, GPUFMM_TREECODE_MAX_DEGREE)
  ! are in gpufmm_core, generated from gpufmm.h.

  ! ------------------------------------------------------------------ types

  !> A treecode plan (opaque): one geometry, evaluated many times.
  type, public, extends(gpufmm_handle) :: gpufmm_treecode_plan
  end type gpufmm_treecode_plan

  !> Options of gpufmm_treecode_plan_create: the C struct
  !> gpufmm_treecode_options_t itself. The default values below are the
  !> library's defaults; gpufmm_treecode_options_init sets them from the
  !> library.
  type, bind(c), public :: gpufmm_treecode_options
     type(gpufmm_kernel) :: kernel             !< the pair kernel (default: Laplace, i.e. Coulomb 1/r)
     real(c_double) :: eps = 1.0e-6_c_double   !< requested relative L2 error, 0 < eps < 1
     real(c_double) :: theta = 0               !< MAC parameter in (0, 1); 0: from eps
     integer(c_int) :: degree = -1             !< interpolation degree 0..GPUFMM_TREECODE_MAX_DEGREE; -1: from eps
     integer(c_int) :: leaf_size = 0           !< N_L, most points of a source leaf; 0: cost model
     integer(c_int) :: batch_size = 0          !< N_B, most targets of a batch; 0: cost model
     integer(c_int) :: type = GPUFMM_TREECODE_PC  !< GPUFMM_TREECODE_PC, _CP or _CC
     integer(c_int) :: precision = GPUFMM_FLOAT64  !< arithmetic: GPUFMM_FLOAT64 or GPUFMM_FLOAT32
     integer(c_int) :: grad = 1                !< 1: eps holds for the gradient too; 0: for the potential only
     integer(c_int) :: calibrate = 0           !< 1: theta, degree from this plan's measured error (test evaluates)
  end type gpufmm_treecode_options

  !> What gpufmm_treecode_plan_info returns: the C struct
  !> gpufmm_treecode_info_t itself. The parameters the plan runs with, its
  !> sizes, the plan time with its parts, and the per-stage times of the
  !> last evaluate (seconds).
  type, bind(c), public :: gpufmm_treecode_info
     real(c_double) :: theta = 0                    !< MAC parameter
     integer(c_int) :: degree = 0                   !< interpolation degree n
     integer(c_int) :: leaf_size = 0, batch_size = 0  !< N_L, N_B
     integer(c_int) :: type = 0, precision = 0, backend = 0
     integer(c_int64_t) :: nsrc = 0, ntrg = 0
     integer(c_int64_t) :: source_clusters = 0, target_clusters = 0, batches = 0
     integer(c_int64_t) :: source_proxy_clusters = 0, target_proxy_clusters = 0  !< clusters with proxies
     integer(c_int64_t) :: list_entries = 0         !< entries of the batch/cluster interaction lists
     integer(c_int64_t) :: approx_interactions = 0  !< kernel evaluations through proxies per evaluate
     integer(c_int64_t) :: direct_interactions = 0  !< kernel evaluations point to point
     real(c_double) :: predicted_error = 0          !< the calibration's error for theta and degree
     real(c_double) :: plan_seconds = 0             !< time to build the plan, of which:
     real(c_double) :: t_plan_tree = 0              !<   the trees
     real(c_double) :: t_plan_lists = 0             !<   the traversal and the interaction lists
     real(c_double) :: t_plan_setup = 0             !<   coordinates, proxies, device copies
     real(c_double) :: t_precompute = 0             !< last evaluate: modified charges
     real(c_double) :: t_compute = 0                !< last evaluate: the near field and the approximation
     real(c_double) :: t_downward = 0               !< last evaluate: interpolation to the targets (CP, CC)
     real(c_double) :: t_total = 0                  !< last evaluate, transfers included
     ! Plans over MPI ranks (module gpufmm_mpi): this rank's view; nsrc and
     ! ntrg above are the rank's own points. A single-process plan: nranks 1,
     ! rank 0, owned and global counts = nsrc and ntrg, zeros below.
     integer(c_int) :: nranks = 1, rank = 0
     integer(c_int64_t) :: nsrc_owned = 0, ntrg_owned = 0    !< points this rank owns after the RCB
     integer(c_int64_t) :: nsrc_global = 0, ntrg_global = 0  !< points of all ranks
     integer(c_int64_t) :: let_boxes = 0           !< box arrays of other ranks got
     integer(c_int64_t) :: let_clusters = 0        !< other ranks' proxy clusters in this rank's lists
     integer(c_int64_t) :: let_points = 0          !< other ranks' points in this rank's lists
     integer(c_int64_t) :: let_bytes_plan = 0      !< bytes got from other ranks by the create
     integer(c_int64_t) :: let_bytes_evaluate = 0  !< bytes got from other ranks per evaluate
     real(c_double) :: t_rcb = 0                   !< create: recursive coordinate bisection
     real(c_double) :: t_redistribute = 0          !< create: points to their owners
     real(c_double) :: t_let_tree = 0              !< create: other ranks' box arrays, the lists
     real(c_double) :: t_let_data = 0              !< create: other ranks' points, the set-up
     real(c_double) :: t_route = 0                 !< last evaluate: charges to owners, results back
     real(c_double) :: t_exchange = 0              !< last evaluate: other ranks' charges (one-sided)
     integer(c_int) :: calibration_evaluates = 0   !< test evaluates of options%calibrate (0: none)
     real(c_double) :: measured_eps = 0          !< the error they measured (0: not measured)
  end type gpufmm_treecode_info

  public :: gpufmm_treecode_options_init, gpufmm_treecode_plan_create, gpufmm_treecode_plan_destroy
  public :: gpufmm_treecode_evaluate, gpufmm_treecode_evaluate_arrays, gpufmm_treecode_plan_info
  public :: gpufmm_treecode
  public :: gpufmm_treecode_plan_associated, gpufmm_treecode_plan_c_ptr

  ! ------------------------------------------------------------------ raw C interfaces (private)
  ! Optional array dummies of a bind(c) interface pass NULL when absent.
  interface
     function c_options_init(opt) bind(c, name='gpufmm_treecode_options_init') result(s)
       import :: c_int, gpufmm_treecode_options
       type(gpufmm_treecode_options), intent(inout) :: opt
       integer(c_int) :: s
     end function c_options_init
     function c_plan_create(ctx, opt, nsrc, sources, ntrg, targets, plan) &
          bind(c, name='gpufmm_treecode_plan_create') result(s)
       import :: c_int, c_int64_t, c_double, c_ptr, gpufmm_treecode_options
       type(c_ptr), value :: ctx
       type(gpufmm_treecode_options), intent(in) :: opt
       integer(c_int64_t), value :: nsrc, ntrg
       real(c_double), intent(in) :: sources(*)
       real(c_double), intent(in), optional :: targets(*)
       type(c_ptr), intent(out) :: plan
       integer(c_int) :: s
     end function c_plan_create
     function c_plan_destroy(plan) bind(c, name='gpufmm_treecode_plan_destroy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int) :: s
     end function c_plan_destroy
     function c_evaluate(plan, charges, pot, grad) bind(c, name='gpufmm_treecode_evaluate') result(s)
       import :: c_int, c_double, c_ptr
       type(c_ptr), value :: plan
       real(c_double), intent(in) :: charges(*)
       real(c_double), intent(inout), optional :: pot(*), grad(*)
       integer(c_int) :: s
     end function c_evaluate
     function c_evaluate_arrays(plan, charges, pot, grad) bind(c, name='gpufmm_treecode_evaluate_arrays') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: plan, charges, pot, grad
       integer(c_int) :: s
     end function c_evaluate_arrays
     function c_plan_info(plan, info) bind(c, name='gpufmm_treecode_plan_info') result(s)
       import :: c_int, c_ptr, gpufmm_treecode_info
       type(c_ptr), value :: plan
       type(gpufmm_treecode_info), intent(out) :: info
       integer(c_int) :: s
     end function c_plan_info
     function c_treecode(ctx, kernel, eps, nsrc, sources, charges, ntrg, targets, pot, grad) &
          bind(c, name='gpufmm_treecode') result(s)
       import :: c_int, c_int64_t, c_double, c_ptr, gpufmm_kernel
       type(c_ptr), value :: ctx
       type(gpufmm_kernel), intent(in) :: kernel
       real(c_double), value :: eps
       integer(c_int64_t), value :: nsrc, ntrg
       real(c_double), intent(in) :: sources(*), charges(*)
       real(c_double), intent(in), optional :: targets(*)
       real(c_double), intent(inout), optional :: pot(*), grad(*)
       integer(c_int) :: s
     end function c_treecode
  end interface

  !> The handle queries of gpufmm_core under this type's names.
  interface gpufmm_treecode_plan_associated
     module procedure gpufmm_associated
  end interface gpufmm_treecode_plan_associated
  interface gpufmm_treecode_plan_c_ptr
     module procedure gpufmm_c_ptr
  end interface gpufmm_treecode_plan_c_ptr

contains

  !> Sets opts to the library's defaults (Coulomb kernel, eps 1e-6, theta and
  !> degree from eps, N_L and N_B from the cost model, particle-cluster,
  !> double precision, eps for the gradient too).
  subroutine gpufmm_treecode_options_init(opts, status)
    type(gpufmm_treecode_options), intent(inout) :: opts
    integer, optional, intent(out) :: status
    type(gpufmm_treecode_options) :: o
    integer(c_int) :: s
    s = c_options_init(o)
    if (s == GPUFMM_SUCCESS) opts = o
    call gpufmm_check_status(s, status, 'gpufmm_treecode_options_init')
  end subroutine gpufmm_treecode_options_init

  !> Builds a plan for sources(3, nsrc) and targets(3, ntrg) (targets absent:
  !> at the sources) on ctx with the given options. On failure plan is
  !> unchanged. Errors: those of the C function (an options field out of
  !> range - kernel, eps, theta, degree, leaf_size, batch_size, type,
  !> precision, grad - named; NaN/Inf coordinates named with their index),
  !> and SIZE_MISMATCH when sources or targets do not have 3 rows.
  subroutine gpufmm_treecode_plan_create(ctx, opts, sources, plan, targets, status)
    type(gpufmm_context), intent(in) :: ctx
    type(gpufmm_treecode_options), intent(in) :: opts
    real(real64), intent(in) :: sources(:, :)
    type(gpufmm_treecode_plan), intent(inout) :: plan
    real(real64), intent(in), optional :: targets(:, :)
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_treecode_plan_create'
    character(len=:), allocatable :: msg
    type(c_ptr) :: p
    integer(int64) :: ntrg
    integer(c_int) :: s
    msg = gpufmm_points_error(sources, targets)
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    ntrg = 0
    if (present(targets)) ntrg = size(targets, 2, kind=int64)
    p = c_null_ptr
    s = c_plan_create(gpufmm_context_c_ptr(ctx), opts, size(sources, 2, kind=int64), sources, ntrg, targets, p)
    if (s == GPUFMM_SUCCESS) call gpufmm_handle_set(plan, p)
    call gpufmm_check_status(s, status, where)
  end subroutine gpufmm_treecode_plan_create

  !> Frees the plan and nulls the handle (a null handle is a no-op).
  subroutine gpufmm_treecode_plan_destroy(plan, status)
    type(gpufmm_treecode_plan), intent(inout) :: plan
    integer, optional, intent(out) :: status
    call gpufmm_handle_destroyed(plan, c_plan_destroy(gpufmm_c_ptr(plan)), status, 'gpufmm_treecode_plan_destroy')
  end subroutine gpufmm_treecode_plan_destroy

  !> The parameters the plan runs with (theta, degree, N_L, N_B), its sizes,
  !> the plan time with its parts and the per-stage times of its last
  !> evaluate (default values on failure).
  function gpufmm_treecode_plan_info(plan, status) result(info)
    type(gpufmm_treecode_plan), intent(in) :: plan
    integer, optional, intent(out) :: status
    type(gpufmm_treecode_info) :: info
    type(gpufmm_treecode_info) :: ci
    integer(c_int) :: s
    s = c_plan_info(gpufmm_c_ptr(plan), ci)
    if (s == GPUFMM_SUCCESS) info = ci
    call gpufmm_check_status(s, status, 'gpufmm_treecode_plan_info')
  end function gpufmm_treecode_plan_info

  !> Evaluates the plan with host arrays: charges(nsrc) into pot(ntrg)
  !> and/or grad(3, ntrg) (leave out what is not wanted, not both); outputs
  !> are overwritten. Errors: INVALID_HANDLE (plan), INVALID_ARGUMENT (no
  !> output, a NaN/Inf charge named with its 0-based index), SIZE_MISMATCH
  !> (naming charges, pot or grad).
  subroutine gpufmm_treecode_evaluate(plan, charges, pot, grad, status)
    type(gpufmm_treecode_plan), intent(in) :: plan
    real(real64), intent(in) :: charges(:)
    real(real64), intent(inout), optional :: pot(:), grad(:, :)
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_treecode_evaluate'
    type(gpufmm_treecode_info) :: ci
    integer(c_int) :: s
    s = c_plan_info(gpufmm_c_ptr(plan), ci)  ! the plan's sizes (and a live handle)
    if (.not. gpufmm_plan_io_ok(s, ci%nsrc, ci%ntrg, status, where, charges, pot=pot, grad=grad)) return
    call gpufmm_check_status(c_evaluate(gpufmm_c_ptr(plan), charges, pot, grad), status, where)
  end subroutine gpufmm_treecode_evaluate

  !> The same with gpufmm arrays on the plan's context (the data stay on the
  !> device): dtype = the plan's precision, charges nsrc elements, pot ntrg
  !> and grad 3*ntrg (any rank). Leave out what is not wanted.
  subroutine gpufmm_treecode_evaluate_arrays(plan, charges, pot, grad, status)
    type(gpufmm_treecode_plan), intent(in) :: plan
    type(gpufmm_array), intent(in) :: charges
    type(gpufmm_array), intent(in), optional :: pot, grad
    integer, optional, intent(out) :: status
    call gpufmm_check_status(c_evaluate_arrays(gpufmm_c_ptr(plan), gpufmm_array_c_ptr(charges), &
         gpufmm_optional_c_ptr(pot), gpufmm_optional_c_ptr(grad)), status, 'gpufmm_treecode_evaluate_arrays')
  end subroutine gpufmm_treecode_evaluate_arrays

  !> One shot: a plan with the default options, this kernel and eps, one
  !> evaluate, destroy. Arguments as plan_create + evaluate.
  subroutine gpufmm_treecode(ctx, kernel, eps, sources, charges, targets, pot, grad, status)
    type(gpufmm_context), intent(in) :: ctx
    type(gpufmm_kernel), intent(in) :: kernel
    real(real64), intent(in) :: eps
    real(real64), intent(in) :: sources(:, :), charges(:)
    real(real64), intent(in), optional :: targets(:, :)
    real(real64), intent(inout), optional :: pot(:), grad(:, :)
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_treecode'
    character(len=:), allocatable :: msg
    integer(int64) :: nsrc, ntrg
    msg = gpufmm_sum_shapes(sources, targets, charges, pot=pot, grad=grad, nsrc=nsrc, ntrg=ntrg)
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    call gpufmm_check_status(c_treecode(gpufmm_context_c_ptr(ctx), kernel, real(eps, c_double), nsrc, sources, &
         charges, ntrg, targets, pot, grad), status, where)
  end subroutine gpufmm_treecode

end module gpufmm_treecode_mod
