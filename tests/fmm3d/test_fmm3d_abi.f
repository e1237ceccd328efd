c     The Fortran ABI of libgpufmm_fmm3d (docs/fmm3d.md): FMM3D's
c     own calls with FMM3D's declarations (integer *8 counts, flags
c     and ier; double precision arrays in FMM3D's layouts), in fixed
c     form as FMM3D writes them, compiled by gfortran and linked
c     against libgpufmm_fmm3d (not FMM3D). Results are checked against
c     a direct sum in FMM3D's normalization, written out here:
c       pot(x) = sum_j c_j/(4 pi |x-x_j|) + v_j.(x-x_j)/(4 pi |x-x_j|^3)
c       grad(x) = its gradient in x
c     (the self pair x = x_j left out). Exit status 1 on any failure.
      program test_fmm3d_abi
      implicit none
      integer *8 ns, nt, nd, ier, iper, ifcharge, ifdipole
      integer *8 ifpgh, ifpghtarg, i, nfail
      parameter (ns = 1500, nt = 700)
      double precision eps, err
      double precision source(3,ns), charge(ns), dipvec(3,ns)
      double precision targ(3,nt)
      double precision pot(ns), grad(3,ns), hess(6,ns)
      double precision pottarg(nt), gradtarg(3,nt), hesstarg(6,nt)
      double precision potex(ns), gradex(3,ns)
      double precision pottex(nt), gradtex(3,nt)
      double precision rel
      external rel

      nfail = 0
      call random_number(source)
      call random_number(targ)
      call random_number(charge)
      call random_number(dipvec)
      do i = 1, ns
        charge(i) = charge(i) - 0.5d0
        dipvec(1,i) = dipvec(1,i) - 0.5d0
      enddo

c     lfmm3d_s_c_g: charges, potential and gradient at the sources
      eps = 1d-9
      ier = -1
      call lfmm3d_s_c_g(eps, ns, source, charge, pot, grad, ier)
      call direct(ns, source, 1, charge, 0, dipvec, ns, source,
     1     potex, gradex)
      err = max(rel(ns, pot, potex), rel(3*ns, grad, gradex))
      print '(a,i0,a,es9.2)', 'lfmm3d_s_c_g: ier ', ier,
     1     ', relative L2 error ', err
      if (ier .ne. 0 .or. err .gt. eps) nfail = nfail + 1

c     lfmm3d itself: charges and dipoles, potential and gradient at the
c     sources and at the targets (iper is accepted and not used)
      nd = 1
      ifcharge = 1
      ifdipole = 1
      iper = 0
      ifpgh = 2
      ifpghtarg = 2
      ier = -1
      call lfmm3d(nd, eps, ns, source, ifcharge, charge, ifdipole,
     1     dipvec, iper, ifpgh, pot, grad, hess, nt, targ, ifpghtarg,
     2     pottarg, gradtarg, hesstarg, ier)
      call direct(ns, source, 1, charge, 1, dipvec, ns, source,
     1     potex, gradex)
      call direct(ns, source, 1, charge, 1, dipvec, nt, targ,
     1     pottex, gradtex)
      err = max(rel(ns, pot, potex), rel(3*ns, grad, gradex),
     1     rel(nt, pottarg, pottex), rel(3*nt, gradtarg, gradtex))
      print '(a,i0,a,es9.2)', 'lfmm3d: ier ', ier,
     1     ', relative L2 error ', err
      if (ier .ne. 0 .or. err .gt. eps) nfail = nfail + 1

c     A bad argument FMM3D does not check: eps = 2. ier = 1001 (1000 +
c     GPUFMM_ERROR_INVALID_ARGUMENT) and the outputs unchanged.
      eps = 2
      pot(1) = 12345d0
      call lfmm3d_s_c_g(eps, ns, source, charge, pot, grad, ier)
      print '(a,i0)', 'lfmm3d_s_c_g with eps = 2: ier ', ier
      if (ier .ne. 1001 .or. pot(1) .ne. 12345d0) nfail = nfail + 1

      if (nfail .ne. 0) then
        print '(i0,a)', nfail, ' check(s) failed'
        stop 1
      endif
      print '(a)', 'all checks passed'
      end

c     Direct sum in FMM3D's normalization at m points x (the sources
c     themselves when x = source: the self pair is skipped by r = 0).
      subroutine direct(ns, source, ifc, charge, ifd, dipvec, m, x,
     1     pot, grad)
      implicit none
      integer *8 ns, m, i, j
      integer ifc, ifd
      double precision source(3,ns), charge(ns), dipvec(3,ns), x(3,m)
      double precision pot(m), grad(3,m)
      double precision r(3), r2, rinv, rinv3, vr, pi4
      pi4 = 16*atan(1d0)
      do i = 1, m
        pot(i) = 0
        grad(1,i) = 0
        grad(2,i) = 0
        grad(3,i) = 0
        do j = 1, ns
          r(1) = x(1,i) - source(1,j)
          r(2) = x(2,i) - source(2,j)
          r(3) = x(3,i) - source(3,j)
          r2 = r(1)**2 + r(2)**2 + r(3)**2
          if (r2 .gt. 0) then
            rinv = 1/sqrt(r2)
            rinv3 = rinv**3
            if (ifc .eq. 1) then
              pot(i) = pot(i) + charge(j)*rinv
              grad(:,i) = grad(:,i) - charge(j)*r*rinv3
            endif
            if (ifd .eq. 1) then
              vr = dipvec(1,j)*r(1) + dipvec(2,j)*r(2)
     1             + dipvec(3,j)*r(3)
              pot(i) = pot(i) + vr*rinv3
              grad(:,i) = grad(:,i) + dipvec(:,j)*rinv3
     1             - 3*vr*r*rinv3/r2
            endif
          endif
        enddo
        pot(i) = pot(i)/pi4
        grad(:,i) = grad(:,i)/pi4
      enddo
      end

c     Relative L2 error of a against the reference b.
      double precision function rel(n, a, b)
      implicit none
      integer *8 n, i
      double precision a(n), b(n), e, r
      e = 0
      r = 0
      do i = 1, n
        e = e + (a(i) - b(i))**2
        r = r + b(i)**2
      enddo
      rel = sqrt(e/r)
      end
