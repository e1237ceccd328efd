!> gpufmm - the umbrella module: `use gpufmm` gives the whole Fortran API.
!>
!>   gpufmm_core       status and dtype constants, contexts, device info,
!>                     version, error messages, the error-stop convention
!>   gpufmm_array_mod  device arrays: transfers, copy, fill, BLAS, reductions
!>   gpufmm_fmm        the Laplace FMM and direct sum
!>   gpufmm_tree_mod   octrees: sorted points, boxes, interaction lists
!>   gpufmm_kernels_mod  pair kernels (Laplace, Yukawa, regularized) and
!>                     the direct sum of any kernel
!>   gpufmm_treecode_mod  the barycentric Lagrange treecode (any kernel)
!>   gpufmm_fft        the FMM-accelerated FFT (papers/002)
!>
!> Every procedure takes `integer, optional, intent(out) :: status` last;
!> without it, a failure ends the program with `error stop` and the
!> library's message (see gpufmm_core). Handles are destroyed explicitly.
!> User guide: docs/fortran.md.
module gpufmm
  use gpufmm_core
  use gpufmm_array_mod
  use gpufmm_fmm
  use gpufmm_tree_mod
  use gpufmm_kernels_mod
  use gpufmm_treecode_mod
  use gpufmm_fft
  implicit none
  public
end module gpufmm
