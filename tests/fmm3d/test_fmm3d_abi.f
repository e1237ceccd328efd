c     The Fortran ABI of libgpufmm_fmm3d (docs/fmm3d.md): FMM3D's
c     own calls with FMM3D's declarations (integer *8 counts, flags
c     and ier; double precision arrays in FMM3D's layouts), in fixed
c     form as FMM3D writes them, compiled by gfortran and linked
c     against libgpufmm_fmm3d (not FMM3D). Results are checked against
c     a direct sum in FMM3D's normalization, written out here:
c       pot(x) = sum_j c_j/(4 pi |x-x_j|) + v_j.(x-x_j)/(4 pi |x-x_j|^3)
c     with its gradient and Hessian (xx yy zz xy xz yz) in x (the self
c     pair x = x_j left out). Exit status 1 on any failure.
      program test_fmm3d_abi
      implicit none
      integer *8 ns, nt, nd, ier, iper, ifcharge, ifdipole
      integer *8 ifpgh, ifpghtarg, i, nfail
      parameter (ns = 1500, nt = 700, nd = 2)
      double precision eps, err
c     lfmm3d_s_c_g (one density)
      double precision source(3,ns), charge(ns), pot(ns), grad(3,ns)
      double precision potex(ns), gradex(3,ns), hessex(6,ns)
c     lfmm3d (nd densities)
      double precision charge2(nd,ns), dipvec2(nd,3,ns), targ(3,nt)
      double precision pot2(nd,ns), grad2(nd,3,ns), hess2(nd,6,ns)
      double precision pottarg2(nd,nt), gradtarg2(nd,3,nt)
      double precision hesstarg2(nd,6,nt)
      double precision pot2ex(nd,ns), grad2ex(nd,3,ns)
      double precision hess2ex(nd,6,ns), pott2ex(nd,nt)
      double precision gradt2ex(nd,3,nt), hesst2ex(nd,6,nt)
      double precision rel
      external rel

      nfail = 0
      call random_number(source)
      call random_number(targ)
      call random_number(charge)
      call random_number(charge2)
      call random_number(dipvec2)
      do i = 1, ns
        charge(i) = charge(i) - 0.5d0
        charge2(1,i) = charge2(1,i) - 0.5d0
        dipvec2(2,3,i) = dipvec2(2,3,i) - 0.5d0
      enddo

c     lfmm3d_s_c_g: charges, potential and gradient at the sources
      eps = 1d-9
      ier = -1
      call lfmm3d_s_c_g(eps, ns, source, charge, pot, grad, ier)
      call direct(1_8, ns, source, 1, charge, 0, charge, ns, source,
     1     potex, gradex, hessex)
      err = max(rel(ns, pot, potex), rel(3*ns, grad, gradex))
      print '(a,i0,a,es9.2)', 'lfmm3d_s_c_g: ier ', ier,
     1     ', relative L2 error ', err
      if (ier .ne. 0 .or. err .gt. eps) nfail = nfail + 1

c     lfmm3d itself: two densities of charges and dipoles, potential,
c     gradient and Hessian at the sources and at the targets (iper is
c     accepted and not used)
      ifcharge = 1
      ifdipole = 1
      iper = 0
      ifpgh = 3
      ifpghtarg = 3
      ier = -1
      call lfmm3d(nd, eps, ns, source, ifcharge, charge2, ifdipole,
     1     dipvec2, iper, ifpgh, pot2, grad2, hess2, nt, targ,
     2     ifpghtarg, pottarg2, gradtarg2, hesstarg2, ier)
      call direct(nd, ns, source, 1, charge2, 1, dipvec2, ns, source,
     1     pot2ex, grad2ex, hess2ex)
      call direct(nd, ns, source, 1, charge2, 1, dipvec2, nt, targ,
     1     pott2ex, gradt2ex, hesst2ex)
      err = max(rel(nd*ns, pot2, pot2ex), rel(3*nd*ns, grad2, grad2ex),
     1     rel(6*nd*ns, hess2, hess2ex), rel(nd*nt, pottarg2, pott2ex),
     2     rel(3*nd*nt, gradtarg2, gradt2ex),
     3     rel(6*nd*nt, hesstarg2, hesst2ex))
      print '(a,i0,a,es9.2)', 'lfmm3d (nd 2, hessians): ier ', ier,
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

c     Direct sum of nd densities in FMM3D's normalization and layouts
c     (charge(nd,ns), dipvec(nd,3,ns), pot(nd,m), grad(nd,3,m),
c     hess(nd,6,m)) at m points x; a pair at r = 0 is left out.
      subroutine direct(nd, ns, source, ifc, charge, ifd, dipvec, m, x,
     1     pot, grad, hess)
      implicit none
      integer *8 nd, ns, m, i, j, k, a, b, c
      integer ifc, ifd
      double precision source(3,ns), charge(nd,*), dipvec(nd,3,*)
      double precision x(3,m), pot(nd,m), grad(nd,3,m), hess(nd,6,m)
      double precision r(3), r2, r1, r3, r5, vr, dab, q, pi4
      integer ia(6), ib(6)
      data ia /1, 2, 3, 1, 1, 2/, ib /1, 2, 3, 2, 3, 3/
      pi4 = 16*atan(1d0)
      pot = 0
      grad = 0
      hess = 0
      do i = 1, m
        do j = 1, ns
          r(:) = x(:,i) - source(:,j)
          r2 = r(1)**2 + r(2)**2 + r(3)**2
          if (r2 .gt. 0) then
            r1 = 1/sqrt(r2)
            r3 = r1**3
            r5 = r3/r2
            do k = 1, nd
              q = 0
              if (ifc .eq. 1) q = charge(k,j)
              vr = 0
              if (ifd .eq. 1) vr = dipvec(k,1,j)*r(1)
     1             + dipvec(k,2,j)*r(2) + dipvec(k,3,j)*r(3)
              pot(k,i) = pot(k,i) + (q*r1 + vr*r3)/pi4
              do a = 1, 3
                grad(k,a,i) = grad(k,a,i) + (-q*r(a)*r3
     1               - 3*vr*r(a)*r5)/pi4
                if (ifd .eq. 1) grad(k,a,i) = grad(k,a,i)
     1               + dipvec(k,a,j)*r3/pi4
              enddo
              do c = 1, 6
                a = ia(c)
                b = ib(c)
                dab = 0
                if (a .eq. b) dab = 1
                hess(k,c,i) = hess(k,c,i) + (q*(3*r(a)*r(b)*r5
     1               - dab*r3) - 3*vr*dab*r5
     2               + 15*vr*r(a)*r(b)*r5/r2)/pi4
                if (ifd .eq. 1) hess(k,c,i) = hess(k,c,i)
     1               - 3*(dipvec(k,a,j)*r(b) + dipvec(k,b,j)*r(a))
     2               *r5/pi4
              enddo
            enddo
          endif
        enddo
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
