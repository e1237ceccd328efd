! gpufmm_f77 - FORTRAN 77-style entry points to the Laplace FMM, its direct
! sum and the barycentric Lagrange treecode: external subroutines (no module
! needed to call them), explicit-shape arrays, default INTEGER and DOUBLE
! PRECISION arguments, integer flags and an error code `ier` last. A legacy
! code just writes
!
!       call gpufmm_lfmm3d(eps, ns, src, 1, q, 0, dum, 0, dum, 1, pot, 1, grad, ier)
!       if (ier .ne. 0) then
!          call gpufmm_errmsg(msg)
!          ...
!
! and links with -lgpufmm_fortran -lgpufmm.
!
! Conventions (all routines)
!   sources(3, ns)        source coordinates (x, y, z per column)
!   ifcharge = 1          the sources carry charges(ns);       0: charges not referenced
!   ifdipole = 1          the sources carry dipoles(3, ns);    0: dipoles not referenced
!                         (at least one of ifcharge, ifdipole is 1; the
!                         treecode takes charges(ns) only, no flags)
!   nt > 0                targets(3, nt) are the evaluation points;
!   nt = 0                evaluate at the sources: targets not referenced, and
!                         pot / grad hold ns entries / columns (no self term)
!   ifpot = 1             compute pot(nt) (pot(ns) when nt = 0); 0: pot not referenced
!   ifgrad = 1            compute grad(3, nt) (grad(3, ns));    0: grad not referenced
!                         (at least one of ifpot, ifgrad is 1)
!   ier                   0 on success, else a GPUFMM_ERROR_* code (gpufmm.h,
!                         gpufmm_core): 1 invalid argument (a flag not 0/1, a
!                         negative count, NaN/Inf input, eps not in (0,1),
!                         nothing in or nothing out, a kernel type or
!                         parameter out of range), 3 out of memory,
!                         5 device error, ...; pot and grad are then
!                         unchanged. gpufmm_errmsg(msg) returns the message.
! An array that is "not referenced" may be any array of the type (a
! one-element dum(1) will do; gfortran >= 10 rejects a scalar in one call and
! an array in another of the same routine in one file).
!
! The treecode of any pair kernel (papers/001):
!
!       call gpufmm_treecode3d(ktype, nparams, params, eps, ns, sources, charges, &
!                              nt, targets, ifpot, pot, ifgrad, grad, ier)
!
!   ktype, nparams,       the kernel: 0 Coulomb 1/r (nparams = 0), 1 Yukawa
!   params(nparams)       exp(-kappa r)/r (params = kappa), 2 regularized
!                         Coulomb 1/sqrt(r^2 + delta^2) (params = delta),
!                         3 regularized Yukawa (params = kappa, delta); the
!                         GPUFMM_KERNEL_* constants of gpufmm_core. params is
!                         not referenced when nparams = 0.
!   eps                   requested relative L2 error of pot and grad, in (0, 1)
!   the rest              as above (charges(ns) always given)
! It runs the library's default treecode options (particle-cluster, theta
! and degree from eps, leaf and batch sizes from the cost model).
!
! Each call runs on GPUFMM_DEVICE_DEFAULT (the first GPU if there is one,
! else the OpenMP CPU backend), in double precision, and cleans up after
! itself (plan and context are created and destroyed inside the call).
! Codes that evaluate the same geometry many times should use the module
! interface (use gpufmm; gpufmm_laplace_plan_create + gpufmm_laplace_evaluate,
! gpufmm_treecode_plan_create + gpufmm_treecode_evaluate) to keep the plan.

!> The shared body of the F77 entry points below (a module, so that the
!> pointer targets get an explicit interface). Not for users.
module gpufmm_f77_impl
  use, intrinsic :: iso_fortran_env, only: real64
  use gpufmm_core
  use gpufmm_fmm
  use gpufmm_kernels_mod, only: gpufmm_kernel
  use gpufmm_treecode_mod, only: gpufmm_treecode
  implicit none
  private
  public :: gpufmm_f77_sum
  !> What gpufmm_f77_sum computes: the Laplace FMM with eps, the Laplace
  !> direct sum (eps unused), the treecode of `kernel` with eps.
  integer, parameter, public :: F77_LFMM = 1, F77_LDIRECT = 2, F77_TREECODE = 3
contains
  !> The body of gpufmm_lfmm3d, gpufmm_ldirect3d and gpufmm_treecode3d
  !> (`method`, one of F77_*), named `where` in messages. Not for users.
  subroutine gpufmm_f77_sum(where, method, eps, ns, sources, ifcharge, charges, ifdipole, dipoles, nt, targets, &
       ifpot, pot, ifgrad, grad, ier, kernel)
    character(len=*), intent(in) :: where
    integer, intent(in) :: method
    real(real64), intent(in) :: eps
    integer, intent(in) :: ns, ifcharge, ifdipole, nt, ifpot, ifgrad
    real(real64), intent(in), target :: sources(3, *), charges(*), dipoles(3, *), targets(3, *)
    real(real64), intent(inout), target :: pot(*), grad(3, *)
    integer, intent(out) :: ier
    type(gpufmm_kernel), intent(in), optional :: kernel
    real(real64), pointer :: q(:), d(:, :), t(:, :), p(:), g(:, :)
    type(gpufmm_context) :: ctx
    integer :: m, st

    call gpufmm_f77_check_args(where, ns, ifcharge, ifdipole, nt, ifpot, ifgrad, ier)
    if (ier /= GPUFMM_SUCCESS) return
    m = ns
    if (nt > 0) m = nt
    ! Disassociated pointers are absent optional arguments (Fortran 2008).
    nullify (q, d, t, p, g)
    if (ifcharge == 1) q => charges(1:ns)
    if (ifdipole == 1) d => dipoles(:, 1:ns)
    if (nt > 0) t => targets(:, 1:nt)
    if (ifpot == 1) p => pot(1:m)
    if (ifgrad == 1) g => grad(:, 1:m)

    call gpufmm_context_create(ctx, GPUFMM_DEVICE_DEFAULT, ier)
    if (ier /= GPUFMM_SUCCESS) return
    select case (method)
    case (F77_LFMM)
       call gpufmm_laplace(ctx, eps, sources(:, 1:ns), charges=q, dipoles=d, targets=t, pot=p, grad=g, status=ier)
    case (F77_LDIRECT)
       call gpufmm_laplace_direct(ctx, sources(:, 1:ns), charges=q, dipoles=d, targets=t, pot=p, grad=g, &
            precision=GPUFMM_FLOAT64, status=ier)
    case (F77_TREECODE)
       call gpufmm_treecode(ctx, kernel, eps, sources(:, 1:ns), q, targets=t, pot=p, grad=g, status=ier)
    end select
    call gpufmm_context_destroy(ctx, st)
    if (ier == GPUFMM_SUCCESS) ier = st
  end subroutine gpufmm_f77_sum
end module gpufmm_f77_impl

!> pot/grad of charges and/or dipoles by the FMM with requested relative L2
!> error eps (papers/000 eq. 36). See the conventions above.
subroutine gpufmm_lfmm3d(eps, ns, sources, ifcharge, charges, ifdipole, dipoles, nt, targets, &
     ifpot, pot, ifgrad, grad, ier)
  use, intrinsic :: iso_fortran_env, only: real64
  use gpufmm_f77_impl
  implicit none
  real(real64), intent(in) :: eps
  integer, intent(in) :: ns, ifcharge, ifdipole, nt, ifpot, ifgrad
  real(real64), intent(in) :: sources(3, *), charges(*), dipoles(3, *), targets(3, *)
  real(real64), intent(inout) :: pot(*), grad(3, *)
  integer, intent(out) :: ier
  call gpufmm_f77_sum('gpufmm_lfmm3d', F77_LFMM, eps, ns, sources, ifcharge, charges, ifdipole, dipoles, nt, targets, &
       ifpot, pot, ifgrad, grad, ier)
end subroutine gpufmm_lfmm3d

!> The same sums by direct summation, O(ns * nt), in double precision (the
!> reference for accuracy checks). See the conventions above.
subroutine gpufmm_ldirect3d(ns, sources, ifcharge, charges, ifdipole, dipoles, nt, targets, &
     ifpot, pot, ifgrad, grad, ier)
  use, intrinsic :: iso_fortran_env, only: real64
  use gpufmm_f77_impl
  implicit none
  integer, intent(in) :: ns, ifcharge, ifdipole, nt, ifpot, ifgrad
  real(real64), intent(in) :: sources(3, *), charges(*), dipoles(3, *), targets(3, *)
  real(real64), intent(inout) :: pot(*), grad(3, *)
  integer, intent(out) :: ier
  call gpufmm_f77_sum('gpufmm_ldirect3d', F77_LDIRECT, 0.0_real64, ns, sources, ifcharge, charges, ifdipole, dipoles, &
       nt, targets, ifpot, pot, ifgrad, grad, ier)
end subroutine gpufmm_ldirect3d

!> pot/grad of charges by the barycentric Lagrange treecode of kernel ktype
!> (with params(nparams)) with requested relative L2 error eps (papers/001
!> eq. 16). See the conventions above.
subroutine gpufmm_treecode3d(ktype, nparams, params, eps, ns, sources, charges, nt, targets, &
     ifpot, pot, ifgrad, grad, ier)
  use, intrinsic :: iso_fortran_env, only: real64
  use gpufmm_core, only: GPUFMM_SUCCESS, GPUFMM_ERROR_INVALID_ARGUMENT, gpufmm_check_status, gpufmm_itoa
  use gpufmm_kernels_mod, only: gpufmm_kernel, gpufmm_kernel_init
  use gpufmm_f77_impl
  implicit none
  integer, intent(in) :: ktype, nparams, ns, nt, ifpot, ifgrad
  real(real64), intent(in) :: params(*), eps, sources(3, *), charges(*), targets(3, *)
  real(real64), intent(inout) :: pot(*), grad(3, *)
  integer, intent(out) :: ier
  real(real64) :: dum(3, 1) = 0  ! the dipoles, not referenced
  type(gpufmm_kernel) :: kernel
  if (nparams < 0) then
     call gpufmm_check_status(GPUFMM_ERROR_INVALID_ARGUMENT, ier, 'gpufmm_treecode3d', &
          'argument ''nparams'' = ' // gpufmm_itoa(nparams) // ' is negative')
     return
  end if
  call gpufmm_kernel_init(kernel, ktype, params(1:nparams), ier)  ! checks ktype and the parameters
  if (ier /= GPUFMM_SUCCESS) return
  call gpufmm_f77_sum('gpufmm_treecode3d', F77_TREECODE, eps, ns, sources, 1, charges, 0, dum, nt, targets, &
       ifpot, pot, ifgrad, grad, ier, kernel)
end subroutine gpufmm_treecode3d

!> The message of the last failed gpufmm call on this thread (blank if none),
!> truncated to len(msg).
subroutine gpufmm_errmsg(msg)
  use gpufmm_core, only: gpufmm_last_error_message
  implicit none
  character(len=*), intent(out) :: msg
  msg = gpufmm_last_error_message()
end subroutine gpufmm_errmsg

!> Checks the integer arguments shared by the F77 routines; ier = 0 or
!> GPUFMM_ERROR_INVALID_ARGUMENT (with the message set). Not for users.
subroutine gpufmm_f77_check_args(where, ns, ifcharge, ifdipole, nt, ifpot, ifgrad, ier)
  use gpufmm_core, itoa => gpufmm_itoa
  implicit none
  character(len=*), intent(in) :: where
  integer, intent(in) :: ns, ifcharge, ifdipole, nt, ifpot, ifgrad
  integer, intent(out) :: ier
  ier = GPUFMM_SUCCESS
  if (ns < 0) then
     call fail('argument ''ns'' = ' // itoa(ns) // ' is negative')
  else if (nt < 0) then
     call fail('argument ''nt'' = ' // itoa(nt) // ' is negative (0 means: at the sources)')
  else if (ifcharge /= 0 .and. ifcharge /= 1) then
     call fail('argument ''ifcharge'' = ' // itoa(ifcharge) // ' is neither 0 nor 1')
  else if (ifdipole /= 0 .and. ifdipole /= 1) then
     call fail('argument ''ifdipole'' = ' // itoa(ifdipole) // ' is neither 0 nor 1')
  else if (ifpot /= 0 .and. ifpot /= 1) then
     call fail('argument ''ifpot'' = ' // itoa(ifpot) // ' is neither 0 nor 1')
  else if (ifgrad /= 0 .and. ifgrad /= 1) then
     call fail('argument ''ifgrad'' = ' // itoa(ifgrad) // ' is neither 0 nor 1')
  else if (ifcharge == 0 .and. ifdipole == 0) then
     call fail('arguments ''ifcharge'' and ''ifdipole'' are both 0: the sources carry nothing')
  else if (ifpot == 0 .and. ifgrad == 0) then
     call fail('arguments ''ifpot'' and ''ifgrad'' are both 0: nothing to compute')
  end if
contains
  subroutine fail(message)
    character(len=*), intent(in) :: message
    call gpufmm_check_status(GPUFMM_ERROR_INVALID_ARGUMENT, ier, where, message)
  end subroutine fail
end subroutine gpufmm_f77_check_args
