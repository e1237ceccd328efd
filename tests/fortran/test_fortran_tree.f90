! test_fortran_tree - the Fortran octree API (module gpufmm_tree_mod): build
! from host coordinates and from device arrays, the invariants of what the
! accessors return (sorted points, level offsets, boxes, CSR lists, class
! codes) against the statistics, and the error paths through `status`,
! checking that a failed call leaves its outputs unchanged.
!
! Runs on the CPU backend (CI); GPUFMM_TEST_DEVICE picks another device.
! Exits with a non-zero code (error stop) if any check fails.
program test_fortran_tree
  use, intrinsic :: iso_fortran_env, only: int32, int64, real64
  use gpufmm
  use gpufmm_test_support, expect => expect_status
  implicit none
  integer, parameter :: n = 3000, m = 1200
  type(gpufmm_context) :: ctx
  type(gpufmm_tree) :: tree, rtree, atree, stale
  type(gpufmm_tree_options) :: opts, defaults
  type(gpufmm_tree_statistics) :: st
  type(gpufmm_array) :: dsrc
  real(real64) :: src(3, n), recv(3, m), bad(2, n), off(3), eta1
  integer(int64), allocatable :: loff(:), keys(:), bkeys(:), offsets(:)
  integer(int32), allocatable :: perm(:), iperm(:), aperm(:), parent(:), child(:), pb(:), pe(:)
  integer(int32), allocatable :: idx(:), cls(:)
  real(real64), allocatable :: centers(:, :), eta(:)
  integer(int64) :: rows, entries, i, b, nc, no
  integer :: l, s
  logical :: to_parent

  call random_number(src)
  call random_number(recv)
  recv = 2 * recv - 0.5_real64
  call gpufmm_context_create(ctx, test_device())

  ! ---------------------------------------------------------------- options
  call gpufmm_tree_options_init(opts)
  call check(opts%l_max == defaults%l_max .and. opts%s_max == defaults%s_max .and. &
       opts%max_level == defaults%max_level .and. opts%cube_given == defaults%cube_given .and. &
       opts%lists == defaults%lists .and. opts%kind == defaults%kind, 'options_init = the default-initialised options')
  call check(opts%kind == GPUFMM_TREE_UNIFORM, 'default options: a uniform tree')
  call check(opts%lists == GPUFMM_TREE_LISTS_ALL .and. opts%max_level == GPUFMM_TREE_MAX_LEVEL, &
       'default options: every list, depth cap GPUFMM_TREE_MAX_LEVEL')

  ! ---------------------------------------------------------------- receivers = sources
  opts%s_max = 32
  call gpufmm_tree_build(ctx, src, tree, options=opts)
  call check(gpufmm_tree_associated(tree), 'build gives a handle')
  st = gpufmm_tree_stats(tree)
  call check(st%num_sources == n .and. st%num_receivers == n .and. st%same_sets == 1, 'stats: sizes')
  call check(st%l_max >= 2 .and. st%source_leaf_max <= opts%s_max, 'stats: depth from s_max')
  call check(sum(st%source_boxes) == st%total_source_boxes .and. st%source_boxes(0) == 1, &
       'stats: boxes per level')
  call check(st%lists(GPUFMM_TREE_NEIGHBORS)%built == 1 .and. st%lists(GPUFMM_TREE_M2L)%max <= 189, &
       'stats: lists')

  call gpufmm_tree_level_offsets(tree, GPUFMM_TREE_SOURCES, loff)
  call check(lbound(loff, 1) == 0 .and. ubound(loff, 1) == st%l_max + 1, 'level offsets: 0 .. l_max + 1')
  call check(loff(0) == 0 .and. all(loff(1:) - loff(:st%l_max) == st%source_boxes(0:st%l_max)), &
       'level offsets: boxes per level')

  call gpufmm_tree_get_points(tree, GPUFMM_TREE_SOURCES, keys, perm, iperm)
  call check(size(perm) == n .and. lbound(perm, 1) == 0, 'points: n, from 0')
  call check(all(keys(1:) >= keys(:n - 2)), 'points: keys sorted')
  call check(all(iperm(perm) == [(int(i, int32), i = 0, n - 1)]), 'points: iperm inverts perm')

  call gpufmm_tree_get_boxes(tree, GPUFMM_TREE_SOURCES, bkeys, parent, child, pb, pe, centers)
  call check(size(parent) == st%total_source_boxes .and. size(child) == size(parent) + 1, 'boxes: sizes')
  call check(parent(0) == -1 .and. all(parent(1:) >= 0), 'boxes: the root alone has no parent')
  call check(all(abs(centers(:, 0) - st%cube_center) <= 1.0e-12_real64), 'boxes: root centre = cube centre')
  ! the leaves (level l_max) partition the sorted points, in order
  call check(pb(loff(st%l_max)) == 0 .and. pe(loff(st%l_max + 1) - 1) == n .and. &
       all(pb(loff(st%l_max) + 1:loff(st%l_max + 1) - 1) == pe(loff(st%l_max):loff(st%l_max + 1) - 2)), &
       'boxes: leaves partition the points')
  b = loff(1)   ! a box of level 1: its children are boxes of level 2 whose parent it is
  call check(all(parent(child(b):child(b + 1) - 1) == b), 'boxes: children and parent agree')
  call check(all(keys(pb(b):pe(b) - 1) / 2_int64**(3 * (GPUFMM_TREE_MAX_LEVEL - 1)) == bkeys(b)), &
       'boxes: point keys fall in their box')

  call gpufmm_tree_list_size(tree, GPUFMM_TREE_NEIGHBORS, rows, entries)
  call gpufmm_tree_get_list(tree, GPUFMM_TREE_NEIGHBORS, offsets, idx)
  call check(rows == st%total_receiver_boxes .and. offsets(0) == 0 .and. offsets(rows) == entries .and. &
       size(idx) == entries, 'neighbours: CSR sizes')
  call check(all([(any(idx(offsets(i):offsets(i + 1) - 1) == i), i = 0, rows - 1)]), &
       'neighbours: every box touches itself')

  call gpufmm_tree_get_list(tree, GPUFMM_TREE_M2L, offsets, idx, cls, eta)
  call check(size(cls) == size(idx) .and. size(eta) == size(idx) .and. all(eta > 0 .and. eta < 1), &
       'M2L: classes and eta in (0, 1)')
  call gpufmm_tree_m2l_class_info(int(cls(0)), to_parent, off, eta1)
  call check(.not. to_parent .and. maxval(abs(off)) >= 2 .and. abs(eta1 - eta(0)) <= 1.0e-12_real64, &
       'M2L: class info of an entry')
  call gpufmm_tree_get_list(tree, GPUFMM_TREE_M2L_TYPE2, cls=cls)
  call gpufmm_tree_m2l_class_info(int(cls(0)), to_parent)
  call check(to_parent, 'M2L type 2: a class to the parent')

  ! ---------------------------------------------------------------- separate receivers; device arrays
  call gpufmm_tree_build(ctx, src, rtree, receivers=recv)
  st = gpufmm_tree_stats(rtree)
  call check(st%same_sets == 0 .and. st%num_receivers == m .and. st%source_leaf_max <= 64, &
       'receivers: sizes and default s_max')
  call gpufmm_tree_get_points(rtree, GPUFMM_TREE_RECEIVERS, perm=perm)
  call check(size(perm) == m, 'receivers: points')

  call gpufmm_array_create_like(ctx, src, dsrc)
  call gpufmm_array_upload(dsrc, src)
  call gpufmm_tree_build_arrays(ctx, dsrc, atree, options=opts)
  call gpufmm_tree_get_points(tree, GPUFMM_TREE_SOURCES, perm=perm)
  call gpufmm_tree_get_points(atree, GPUFMM_TREE_SOURCES, perm=aperm)
  call check(all(aperm == perm), 'build_arrays: the same sorted order as from host coordinates')

  ! ---------------------------------------------------------------- errors
  call gpufmm_tree_build(ctx, bad, stale, status=s)
  call expect(s, GPUFMM_ERROR_SIZE_MISMATCH, 'sources', 'sources with 2 rows')
  call check(.not. gpufmm_tree_associated(stale), 'failed build leaves the handle null')
  call gpufmm_tree_build(ctx, src, stale, receivers=bad(:, 1:m), status=s)
  call expect(s, GPUFMM_ERROR_SIZE_MISMATCH, 'receivers', 'receivers with 2 rows')
  opts%s_max = 0
  call gpufmm_tree_build(ctx, src, stale, options=opts, status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 's_max', 's_max = 0')
  opts%s_max = 32
  opts%lists = 2**GPUFMM_TREE_NEIGHBORS
  call gpufmm_tree_build(ctx, src, stale, options=opts)
  call gpufmm_tree_list_size(stale, GPUFMM_TREE_M2L, rows, entries, status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 'built', 'a list that was not built')
  call gpufmm_tree_destroy(stale)

  nc = size(cls)
  no = size(offsets)
  call gpufmm_tree_get_list(tree, GPUFMM_TREE_NEIGHBORS, offsets, cls=cls, status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 'cls', 'classes of the neighbour list')
  call check(size(cls) == nc .and. size(offsets) == no, 'failed get_list leaves its outputs')
  call gpufmm_tree_get_points(tree, 7, perm=perm, status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 'set', 'set 7')
  call check(size(perm) == n, 'failed get_points leaves its outputs')
  to_parent = .true.
  call gpufmm_tree_m2l_class_info(-1, to_parent, status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 'cls', 'class -1')
  call check(to_parent, 'failed class info leaves its outputs')

  stale = tree
  call gpufmm_tree_destroy(tree)
  call check(.not. gpufmm_tree_associated(tree), 'destroy nulls the handle')
  call gpufmm_tree_destroy(tree)   ! a null handle: no-op
  st = gpufmm_tree_stats(stale, status=s)
  call expect(s, GPUFMM_ERROR_INVALID_HANDLE, 'tree', 'stats of a destroyed tree')

  ! An adaptive tree: leaves of variable depth, every point in one leaf.
  call gpufmm_tree_options_init(opts)
  opts%kind = GPUFMM_TREE_ADAPTIVE
  opts%s_max = 16
  call gpufmm_tree_build(ctx, src, tree, options=opts)
  st = gpufmm_tree_stats(tree)
  call check(st%num_sources == n .and. st%source_leaf_max <= 16, 'adaptive tree: leaves of at most s_max points')
  call gpufmm_tree_destroy(tree)
  opts%l_max = 3
  call gpufmm_tree_build(ctx, src, tree, options=opts, status=s)
  call expect(s, GPUFMM_ERROR_INVALID_ARGUMENT, 'l_max', 'adaptive with a fixed depth refused')

  call gpufmm_tree_destroy(rtree)
  call gpufmm_tree_destroy(atree)
  call gpufmm_array_destroy(dsrc)
  call gpufmm_context_destroy(ctx)
  ! Free what the accessors allocated (LeakSanitizer checks at exit).
  deallocate (loff, keys, bkeys, offsets, perm, iperm, aperm, parent, child, pb, pe, idx, cls, centers, eta)
  call finish_checks('test_fortran_tree')

end program test_fortran_tree
