c     A program written for FMM3D, built against the installed
c     libgpufmm_fmm3d (tests/install/run.sh): two unit charges at
c     distance 1, so pot = 1/(4 pi) at each in FMM3D's normalization.
      program fmm3d_user
      implicit none
      integer *8 ns, ier
      parameter (ns = 2)
      double precision eps, source(3,ns), charge(ns), pot(ns), want
      eps = 1d-6
      source = 0
      source(1,2) = 1
      charge = 1
      call lfmm3d_s_c_p(eps, ns, source, charge, pot, ier)
      want = 1/(16*atan(1d0))
      if (ier .ne. 0 .or. abs(pot(1) - want) .gt. 1d-14*want) stop 1
      print '(a,es22.15)', 'fmm3d drop-in: pot ', pot(1)
      end
