! fft - the FMM-accelerated FFT from Fortran, on gpufmm arrays.
!
! N random complex numbers in [-1, 1]^2 are transformed forward,
!     X(k) = sum_{j=1}^{N} x(j) exp(-2 pi i (j-1)(k-1) / N),
! in complex(real64) to the default accuracy (relative L2 error 2e-14),
! with the data in gpufmm arrays (on the GPU, when there is one, between
! upload and download). The plan factors N = P M_L 2^L and picks P, M_L,
! the base level B and the expansion order Q from eps and the roofline
! model of the device: the transform is P - 1 periodic 1D FMMs and an
! M x P 2D FFT (papers/002). The inverse brings back N x. Sixteen sampled
! outputs are checked against a direct DFT, and the time of each stage is
! printed beside the model's.
!
! Usage: fft_f [N]   (N also from the environment variable GPUFMM_EXAMPLE_N;
! default 2^20). N must be an admitted size (every multiple of 4 from 8
! whose odd part is at most 65535 is one; the plan's message names the
! nearest ones otherwise). Runs on the first GPU if there is one, else on
! the CPU backend. Stops with a non-zero exit code if an error exceeds eps.
program fft
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use gpufmm
  implicit none

  integer, parameter :: dp = real64, nsample = 16

  type(gpufmm_context) :: ctx
  type(gpufmm_device_info) :: dev
  type(gpufmm_fft_plan) :: plan
  type(gpufmm_fft_info) :: info
  type(gpufmm_array) :: dx, dy
  complex(dp), allocatable :: x(:), y(:), ref(:)
  real(dp), allocatable :: re(:), im(:)
  integer(int64), allocatable :: k(:)
  real(dp) :: err, err_inverse, total
  character(len=10) :: name
  integer :: n, i, s

  n = problem_size()
  call gpufmm_context_create(ctx, GPUFMM_DEVICE_DEFAULT)  ! no status: errors stop the program
  dev = gpufmm_context_device_info(ctx)
  print '(a, i0, a, a)', 'FMM-FFT, N = ', n, ', complex(real64), on ', trim(dev%name)

  allocate (re(n), im(n), y(n))
  call random_number(re)
  call random_number(im)
  x = cmplx(2 * re - 1, 2 * im - 1, kind=dp)

  ! ---- plan once: complex128 and eps 2e-14 by default (dtype=, eps=, p=,
  !      ml=, b=, q=, direction=, tune= set them); any number of transforms
  call gpufmm_fft_plan_create(ctx, n, plan)

  ! ---- the data in gpufmm arrays; run twice (the first run warms up)
  call gpufmm_array_create_like(ctx, x, dx)
  call gpufmm_array_create_like(ctx, x, dy)
  call gpufmm_array_upload(dx, x)
  call gpufmm_fft_execute(plan, dx, dy, GPUFMM_FFT_FORWARD)
  call gpufmm_fft_execute(plan, dx, dy, GPUFMM_FFT_FORWARD)
  call gpufmm_array_download(dy, y)
  info = gpufmm_fft_plan_info(plan)  ! read before the inverse: the profile of the forward
  print '(a, i0, a, i0, a, i0, a, i0, a, i0, a, i0, a, es8.1, a, f5.3, a)', 'parameters: P ', info%p, &
       ', M_L ', info%ml, ', L ', info%levels, ' (M = ', info%m, '), B ', info%base, ', Q ', info%q, &
       '; predicted error ', info%predicted_error, '; plan ', info%plan_seconds, ' s'

  ! ---- the direct DFT at nsample outputs spread over 1..N
  k = [(mod(int(i, int64) * n / nsample + i, int(n, int64)) + 1, i = 0, nsample - 1)]
  ref = [(direct_dft(x, k(i)), i = 1, nsample)]
  err = sqrt(sum(abs(y(k) - ref)**2) / sum(abs(ref)**2))
  print '(a, i0, a, es9.2, a, es7.1, a)', 'relative L2 error on ', nsample, ' sampled outputs: ', err, &
       ' (eps ', info%eps, ')'

  ! ---- the stage profile of the forward against the roofline model
  total = sum(info%time)
  print '(a10, a11, a8, a11)', 'stage     ', 'ms', '%', 'model ms'
  do s = 0, GPUFMM_FFT_STAGES - 1
     name = gpufmm_fft_stage_name(s)             ! blank-padded to the left-aligned column
     print '(a10, f11.4, f8.1, f11.4)', name, 1e3_dp * info%time(s), &
          100 * info%time(s) / max(total, tiny(total)), 1e3_dp * info%model(s)
  end do
  print '(a10, f11.4)', 'total     ', 1e3_dp * total

  ! ---- the inverse in place (in and out the same array) gives N x back
  call gpufmm_fft_execute(plan, dy, dy, GPUFMM_FFT_INVERSE)
  call gpufmm_array_download(dy, y)
  err_inverse = sqrt(sum(abs(y / n - x)**2) / sum(abs(x)**2))
  print '(a, es9.2)', 'inverse(forward(x)) / N against x: relative L2 error ', err_inverse

  call gpufmm_array_destroy(dx)                 ! arrays and plans first,
  call gpufmm_array_destroy(dy)
  call gpufmm_fft_plan_destroy(plan)
  call gpufmm_context_destroy(ctx)              ! then the context
  deallocate (x, y, ref, re, im, k)
  if (err > info%eps .or. err_inverse > 2 * info%eps) error stop 'fft: error above eps'
  print '(a)', 'OK'

contains

  !> Output k (1-based) of the forward DFT of x, with the twiddle of the
  !> exact index (j-1)(k-1) mod N, summed in blocks of 1024 terms (the
  !> rounding of the sum stays near that of the transform).
  complex(dp) function direct_dft(x, k) result(v)
    complex(dp), intent(in) :: x(:)
    integer(int64), intent(in) :: k
    real(dp), parameter :: two_pi = 2 * acos(-1.0_dp)
    complex(dp) :: block
    integer(int64) :: n, j, idx
    n = size(x, kind=int64)
    v = 0
    block = 0
    idx = 0                                      ! (j-1)(k-1) mod N
    do j = 1, n
       block = block + x(j) * cmplx(cos(two_pi * idx / n), -sin(two_pi * idx / n), kind=dp)
       idx = mod(idx + k - 1, n)
       if (mod(j, 1024_int64) == 0 .or. j == n) then
          v = v + block
          block = 0
       end if
    end do
  end function direct_dft

  !> N from the first command-line argument, else GPUFMM_EXAMPLE_N, else 2^20.
  integer function problem_size() result(n)
    character(len=32) :: arg
    integer :: length, ios, m
    n = 2**20
    call get_environment_variable('GPUFMM_EXAMPLE_N', arg, length)
    if (length > 0) then
       read (arg, *, iostat=ios) m
       if (ios /= 0) error stop 'fft: GPUFMM_EXAMPLE_N is not an integer'
       n = m
    end if
    if (command_argument_count() >= 1) then
       call get_command_argument(1, arg)
       read (arg, *, iostat=ios) m
       if (ios /= 0) error stop 'usage: fft_f [N]'
       n = m
    end if
    if (n < 1) error stop 'fft: N must be positive'
  end function problem_size

end program fft
