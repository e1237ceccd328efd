!> gpufmm_test_support - what every Fortran test program shares: counted
!> checks, the device to run on, a fixed random seed, and the closing
!> summary.
module gpufmm_test_support
  use, intrinsic :: iso_fortran_env, only: output_unit
  use gpufmm, only: GPUFMM_DEVICE_CPU, GPUFMM_SUCCESS, gpufmm_last_error_message, gpufmm_itoa
  implicit none
  private
  public :: check, expect_status, test_device, seed_random, finish_checks

  integer, save :: nchecks = 0, nfailed = 0

contains

  !> Counts a check; prints `what` if it failed.
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    nchecks = nchecks + 1
    if (.not. ok) then
       nfailed = nfailed + 1
       write (output_unit, '(a, a)') 'FAILED: ', what
    end if
  end subroutine check

  !> The last call returned status `got` = `want`; for an error, the message
  !> mentions `word`.
  subroutine expect_status(got, want, word, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: word, what
    character(len=:), allocatable :: msg
    call check(got == want, what // ' (status ' // gpufmm_itoa(got) // ', expected ' // gpufmm_itoa(want) // ')')
    if (want /= GPUFMM_SUCCESS) then
       msg = gpufmm_last_error_message()
       call check(index(msg, word) > 0, what // ': message "' // msg // '" does not mention ' // word)
    end if
  end subroutine expect_status

  !> GPUFMM_TEST_DEVICE if set (0, 1, ... a GPU; -2 the default device; -1
  !> the CPU), else the CPU backend.
  integer function test_device()
    character(len=32) :: buf
    integer :: n, st, ios
    test_device = GPUFMM_DEVICE_CPU
    call get_environment_variable('GPUFMM_TEST_DEVICE', buf, length=n, status=st)
    if (st /= 0 .or. n == 0) return
    read (buf, *, iostat=ios) test_device
    if (ios /= 0) error stop 'GPUFMM_TEST_DEVICE must be an integer (-1 CPU, -2 default, >= 0 a GPU)'
  end function test_device

  !> Seeds random_number from `base`, so that every run checks the same data.
  subroutine seed_random(base)
    integer, intent(in) :: base
    integer, allocatable :: s(:)
    integer :: k, i
    call random_seed(size=k)
    allocate (s(k))
    s = base + [(i, i = 1, k)]
    call random_seed(put=s)
  end subroutine seed_random

  !> Prints how many checks passed; error stop (non-zero exit) if any failed.
  subroutine finish_checks(name)
    character(len=*), intent(in) :: name
    write (output_unit, '(a, a, i0, a, i0, a)') name, ': ', nchecks - nfailed, ' of ', nchecks, &
         ' checks passed'
    if (nfailed > 0) error stop 'FAILED'
  end subroutine finish_checks

end module gpufmm_test_support
