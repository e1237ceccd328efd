program f_user
  use gpufmm
  implicit none
  print *, 'gpufmm ', gpufmm_version()
end program f_user
