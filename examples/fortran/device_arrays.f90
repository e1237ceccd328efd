! device_arrays - gpufmm device arrays from Fortran.
!
! Creates a context on the default device (the first GPU if there is one,
! the CPU backend otherwise), uploads two vectors and two matrices, computes
! y = y + alpha*x, dot(x, y) and C = A*B on the device, downloads the
! results and compares them with Fortran intrinsics (dot_product, matmul).
! Stops with a non-zero exit code if an error exceeds the tolerance.
program device_arrays
  use, intrinsic :: iso_fortran_env, only: real64
  use gpufmm
  implicit none

  integer, parameter :: dp = real64
  integer, parameter :: n = 1000              ! vector length
  integer, parameter :: m = 64, k = 48, p = 80 ! A is m x k, B is k x p
  real(dp), parameter :: tol = 1e-12_dp       ! relative tolerance

  type(gpufmm_context) :: ctx
  type(gpufmm_device_info) :: info
  type(gpufmm_array) :: dx, dy, da, db, dc
  real(dp) :: x(n), y(n), y_ref(n), a(m, k), b(k, p), c(m, p), c_ref(m, p)
  real(dp) :: alpha, d, d_ref, err_axpy, err_dot, err_gemm

  ! ---- context and device
  call gpufmm_context_create(ctx, GPUFMM_DEVICE_DEFAULT)   ! no status: errors stop the program
  info = gpufmm_context_device_info(ctx)
  print '(a, a)', 'gpufmm ', gpufmm_version()
  if (info%backend == GPUFMM_BACKEND_CUDA) then
     print '(a, a, a, i0, a, i0, a, i0, a)', 'device: ', trim(info%name), ' (CUDA ', &
          info%compute_major, '.', info%compute_minor, ', ', info%multiprocessors, ' SMs)'
  else
     print '(a, a, a, i0, a)', 'device: CPU backend, ', trim(info%name), ' (', &
          info%multiprocessors, ' cores)'
  end if
  print '(a, f0.1, a)', 'memory: ', real(info%total_memory, dp) / 2.0_dp**30, ' GiB'

  ! ---- host data
  call random_number(x)
  call random_number(y)
  call random_number(a)
  call random_number(b)
  alpha = 0.5_dp

  ! ---- device arrays shaped like the host arrays, then upload
  call gpufmm_array_create_like(ctx, x, dx)
  call gpufmm_array_create_like(ctx, y, dy)
  call gpufmm_array_create_like(ctx, a, da)
  call gpufmm_array_create_like(ctx, b, db)
  call gpufmm_array_create(ctx, GPUFMM_FLOAT64, [m, p], dc)  ! same thing, by dtype and dims
  call gpufmm_array_upload(dx, x)
  call gpufmm_array_upload(dy, y)
  call gpufmm_array_upload(da, a)
  call gpufmm_array_upload(db, b)

  ! ---- compute on the device
  call gpufmm_array_axpy(alpha, dx, dy)                        ! y = y + alpha*x
  call gpufmm_array_dot(dx, dy, d)                             ! d = x . y
  call gpufmm_array_gemm('N', 'N', 1.0_dp, da, db, 0.0_dp, dc) ! C = A*B

  ! ---- download and compare with the intrinsics
  y_ref = y + alpha * x
  d_ref = dot_product(x, y_ref)
  c_ref = matmul(a, b)
  call gpufmm_array_download(dy, y)
  call gpufmm_array_download(dc, c)
  err_axpy = maxval(abs(y - y_ref)) / maxval(abs(y_ref))
  err_dot = abs(d - d_ref) / abs(d_ref)
  err_gemm = maxval(abs(c - c_ref)) / maxval(abs(c_ref))
  print '(a, es9.2)', 'axpy  max relative error: ', err_axpy
  print '(a, es9.2)', 'dot   relative error:     ', err_dot
  print '(a, es9.2)', 'gemm  max relative error: ', err_gemm

  ! ---- free: arrays first, then the context
  call gpufmm_array_destroy(dx)
  call gpufmm_array_destroy(dy)
  call gpufmm_array_destroy(da)
  call gpufmm_array_destroy(db)
  call gpufmm_array_destroy(dc)
  call gpufmm_context_destroy(ctx)

  if (max(err_axpy, err_dot, err_gemm) > tol) error stop 'device_arrays: error above tolerance'
  print '(a)', 'OK'
end program device_arrays
