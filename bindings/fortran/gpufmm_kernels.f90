!> gpufmm_kernels_mod - pair kernels and the direct sum of any kernel.
!>
!>   type(gpufmm_kernel) :: k
!>   call gpufmm_kernel_init(k, GPUFMM_KERNEL_YUKAWA, [0.5_real64])   ! kappa
!>   call gpufmm_direct(ctx, k, sources, charges, pot=pot, grad=grad)  ! at the sources
!>   call gpufmm_direct_arrays(k, d_src, d_q, pot=d_pot)               ! device arrays
!>
!> Kernels (docs/kernels.md): GPUFMM_KERNEL_LAPLACE (1/r, no parameters),
!> GPUFMM_KERNEL_YUKAWA (exp(-kappa r)/r, [kappa]),
!> GPUFMM_KERNEL_REGULARIZED_LAPLACE (1/sqrt(r^2+delta^2), [delta]),
!> GPUFMM_KERNEL_REGULARIZED_YUKAWA ([kappa, delta]), GPUFMM_KERNEL_USER (a
!> radial g(r; p) given at run time: gpufmm_kernel_init_user). Coordinates
!> are sources(3, nsrc) and targets(3, ntrg), gradients grad(3, ntrg).
!>
!> A user kernel for both backends (docs/kernels.md): the GPU compiles the
!> expressions, the CPU calls the bind(c) functions.
!>
!>   real(c_double) function yuk(r, p) bind(c)
!>     real(c_double), value :: r
!>     real(c_double), intent(in) :: p(GPUFMM_KERNEL_MAX_PARAMS)
!>     yuk = exp(-p(1) * r) / r
!>   end function
!>   call gpufmm_kernel_init_user(k, [0.5_real64], value_expr='exp(-p[0] * r) / r', &
!>        deriv_expr='-exp(-p[0] * r) * (1 + p[0] * r) / (r * r)', &
!>        value_fn=c_funloc(yuk), deriv_fn=c_funloc(dyuk))
module gpufmm_kernels_mod
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_double, c_ptr, c_null_ptr, c_char, c_null_char, &
       c_funptr, c_null_funptr
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use gpufmm_core
  use gpufmm_array_mod
  implicit none
  private

  !> A kernel (the C struct gpufmm_kernel_t): fill it with gpufmm_kernel_init
  !> or gpufmm_kernel_init_user.
  type, bind(c), public :: gpufmm_kernel
     integer(c_int) :: type = GPUFMM_KERNEL_LAPLACE
     integer(c_int) :: nparams = 0
     real(c_double) :: params(GPUFMM_KERNEL_MAX_PARAMS) = 0
     integer(c_int) :: r0 = GPUFMM_KERNEL_R0_LEFT_OUT
     character(kind=c_char) :: value_expr(GPUFMM_KERNEL_MAX_EXPR) = c_null_char
     character(kind=c_char) :: deriv_expr(GPUFMM_KERNEL_MAX_EXPR) = c_null_char
     type(c_funptr) :: value_fn = c_null_funptr
     type(c_funptr) :: deriv_fn = c_null_funptr
  end type gpufmm_kernel

  public :: gpufmm_kernel_init, gpufmm_kernel_init_user, gpufmm_direct, gpufmm_direct_arrays

  interface
     function c_kernel_init(kernel, type, nparams, params) bind(c, name='gpufmm_kernel_init') result(s)
       import :: c_int, c_double, gpufmm_kernel
       type(gpufmm_kernel), intent(inout) :: kernel
       integer(c_int), value :: type, nparams
       real(c_double), intent(in), optional :: params(*)
       integer(c_int) :: s
     end function c_kernel_init
     function c_kernel_init_user(kernel, nparams, params, value_expr, deriv_expr, value_fn, deriv_fn, r0) &
          bind(c, name='gpufmm_kernel_init_user') result(s)
       import :: c_int, c_double, c_char, c_funptr, gpufmm_kernel
       type(gpufmm_kernel), intent(inout) :: kernel
       integer(c_int), value :: nparams, r0
       real(c_double), intent(in), optional :: params(*)
       character(kind=c_char), intent(in) :: value_expr(*), deriv_expr(*)
       type(c_funptr), value :: value_fn, deriv_fn
       integer(c_int) :: s
     end function c_kernel_init_user
     function c_direct(ctx, kernel, precision, nsrc, sources, charges, ntrg, targets, pot, grad) &
          bind(c, name='gpufmm_direct') result(s)
       import :: c_int, c_int64_t, c_double, c_ptr, gpufmm_kernel
       type(c_ptr), value :: ctx
       type(gpufmm_kernel), intent(in) :: kernel
       integer(c_int), value :: precision
       integer(c_int64_t), value :: nsrc, ntrg
       real(c_double), intent(in) :: sources(*), charges(*)
       real(c_double), intent(in), optional :: targets(*)
       real(c_double), intent(inout), optional :: pot(*), grad(*)
       integer(c_int) :: s
     end function c_direct
     function c_direct_arrays(kernel, precision, sources, charges, targets, pot, grad) &
          bind(c, name='gpufmm_direct_arrays') result(s)
       import :: c_int, c_ptr, gpufmm_kernel
       type(gpufmm_kernel), intent(in) :: kernel
       integer(c_int), value :: precision
       type(c_ptr), value :: sources, charges, targets, pot, grad
       integer(c_int) :: s
     end function c_direct_arrays
  end interface

contains

  !> Sets kernel to `type` (a GPUFMM_KERNEL_* constant) with the parameters
  !> params (absent: none). On failure (an unknown type, a parameter count
  !> that is not the type's, a parameter out of range) kernel is unchanged.
  subroutine gpufmm_kernel_init(kernel, type, params, status)
    type(gpufmm_kernel), intent(inout) :: kernel
    integer, intent(in) :: type
    real(real64), intent(in), optional :: params(:)
    integer, optional, intent(out) :: status
    integer(c_int) :: np
    np = 0
    if (present(params)) np = int(size(params), c_int)
    call gpufmm_check_status(c_kernel_init(kernel, int(type, c_int), np, params), status, 'gpufmm_kernel_init')
  end subroutine gpufmm_kernel_init

  !> Sets kernel to a user kernel g(r; p) with the parameters params (at most
  !> GPUFMM_KERNEL_MAX_PARAMS; absent: none), p[0] being params(1): for the
  !> GPU the C expressions value_expr and deriv_expr of g and dg/dr in r and
  !> p[0] .. p[7], for the CPU the bind(c) functions value_fn and deriv_fn
  !> (c_funloc of real(c_double) function g(r, p) bind(c), r by value, p
  !> an array of GPUFMM_KERNEL_MAX_PARAMS), at least one pair; r0 a
  !> GPUFMM_KERNEL_R0_* rule for coincident points (default: left out). On
  !> failure kernel is unchanged.
  subroutine gpufmm_kernel_init_user(kernel, params, value_expr, deriv_expr, value_fn, deriv_fn, r0, status)
    type(gpufmm_kernel), intent(inout) :: kernel
    real(real64), intent(in), optional :: params(:)
    character(len=*), intent(in), optional :: value_expr, deriv_expr
    type(c_funptr), intent(in), optional :: value_fn, deriv_fn
    integer, intent(in), optional :: r0
    integer, optional, intent(out) :: status
    integer(c_int) :: np, rule
    type(c_funptr) :: f, df
    character(len=:), allocatable :: ve, de
    np = 0
    if (present(params)) np = int(size(params), c_int)
    rule = GPUFMM_KERNEL_R0_LEFT_OUT
    if (present(r0)) rule = int(r0, c_int)
    f = c_null_funptr
    df = c_null_funptr
    if (present(value_fn)) f = value_fn
    if (present(deriv_fn)) df = deriv_fn
    ve = ''  ! "": no expression
    de = ''
    if (present(value_expr)) ve = value_expr
    if (present(deriv_expr)) de = deriv_expr
    call gpufmm_check_status(c_kernel_init_user(kernel, np, params, c_string(ve), c_string(de), f, df, rule), &
         status, 'gpufmm_kernel_init_user')
  end subroutine gpufmm_kernel_init_user

  !> s as a NUL-terminated C string (a character array).
  pure function c_string(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char) :: c(len(s) + 1)
    integer :: i
    do i = 1, len(s)
       c(i) = s(i:i)
    end do
    c(len(s) + 1) = c_null_char
  end function c_string

  !> Direct sum of kernel k with charges(nsrc) at sources(3, nsrc), on the
  !> targets(3, ntrg) (absent: at the sources, singular kernels leaving out
  !> each point's own term): pot(ntrg) and/or grad(3, ntrg). precision:
  !> GPUFMM_FLOAT64 (default) or GPUFMM_FLOAT32, the arithmetic. On failure
  !> the outputs are unchanged.
  subroutine gpufmm_direct(ctx, kernel, sources, charges, targets, pot, grad, precision, status)
    type(gpufmm_context), intent(in) :: ctx
    type(gpufmm_kernel), intent(in) :: kernel
    real(real64), intent(in) :: sources(:, :), charges(:)
    real(real64), intent(in), optional :: targets(:, :)
    real(real64), intent(inout), optional :: pot(:), grad(:, :)
    integer, intent(in), optional :: precision
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_direct'
    character(len=:), allocatable :: msg
    integer(int64) :: nsrc, ntrg
    integer(c_int) :: prec
    prec = GPUFMM_FLOAT64
    if (present(precision)) prec = int(precision, c_int)
    msg = gpufmm_sum_shapes(sources, targets, charges, pot=pot, grad=grad, nsrc=nsrc, ntrg=ntrg)
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    call gpufmm_check_status(c_direct(gpufmm_context_c_ptr(ctx), kernel, prec, nsrc, sources, charges, ntrg, &
         targets, pot, grad), status, where)
  end subroutine gpufmm_direct

  !> The same on float64 device arrays of one context (the data stay on the
  !> device): sources (3 nsrc elements), charges (nsrc), targets (3 ntrg;
  !> absent: at the sources), pot (ntrg) and/or grad (3 ntrg).
  subroutine gpufmm_direct_arrays(kernel, sources, charges, targets, pot, grad, precision, status)
    type(gpufmm_kernel), intent(in) :: kernel
    type(gpufmm_array), intent(in) :: sources, charges
    type(gpufmm_array), intent(in), optional :: targets, pot, grad
    integer, intent(in), optional :: precision
    integer, optional, intent(out) :: status
    integer(c_int) :: prec
    prec = GPUFMM_FLOAT64
    if (present(precision)) prec = int(precision, c_int)
    call gpufmm_check_status(c_direct_arrays(kernel, prec, gpufmm_array_c_ptr(sources), &
         gpufmm_array_c_ptr(charges), gpufmm_optional_c_ptr(targets), gpufmm_optional_c_ptr(pot), &
         gpufmm_optional_c_ptr(grad)), status, 'gpufmm_direct_arrays')
  end subroutine gpufmm_direct_arrays

end module gpufmm_kernels_mod
