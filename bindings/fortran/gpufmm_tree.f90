!> gpufmm_tree_mod - octrees for Fortran (see docs/fortran.md, section
!> "Octree", and docs/tree.md for the data layout).
!>
!> A uniform-depth octree over sources and receivers: the points of each set
!> sorted by Morton key, the non-empty boxes of every level, and the CSR
!> interaction lists (neighbours, M2L, modified M2L type 1 and type 2). Build
!> it with gpufmm_tree_build (host coordinates) or gpufmm_tree_build_arrays
!> (device arrays), read it with the accessors, free it with
!> gpufmm_tree_destroy before its context.
!>
!> Indices are the C library's, 0-based, and the accessors return arrays
!> whose lower bound is 0, so that an index found in one array subscripts
!> another directly: box b of a set has points point_begin(b) ..
!> point_end(b) - 1 in the sorted order, sorted point i is user point
!> perm(i) (so its coordinates are sources(:, perm(i) + 1)), list row r has
!> entries index(offsets(r) : offsets(r + 1) - 1). Sets and lists are the
!> constants GPUFMM_TREE_SOURCES / _RECEIVERS and GPUFMM_TREE_NEIGHBORS,
!> _M2L, _M2L_TYPE1, _M2L_TYPE2 (gpufmm_core).
!>
!> Accessors allocate their (optional, allocatable) outputs; a failed call
!> leaves every output unchanged. Every procedure takes `integer, optional,
!> intent(out) :: status` last (see gpufmm_core).
module gpufmm_tree_mod
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_int64_t, c_double, c_ptr, c_null_ptr, &
       c_associated
  use, intrinsic :: iso_fortran_env, only: int32, int64, real64
  use gpufmm_core
  use gpufmm_array_mod
  implicit none
  private

  !> An octree (opaque). Default-initialised to the null state.
  type, public, extends(gpufmm_handle) :: gpufmm_tree
  end type gpufmm_tree

  !> Options of gpufmm_tree_build: the C struct gpufmm_tree_options_t itself
  !> (a field added there is added here, in the same place). The values below
  !> are the library's defaults; gpufmm_tree_options_init sets them from the
  !> library.
  type, bind(c), public :: gpufmm_tree_options
     integer(c_int) :: l_max = -1       !< >= 0: the depth; -1: from s_max
     integer(c_int) :: s_max = 64       !< with l_max = -1: most points per leaf box
     integer(c_int) :: max_level = GPUFMM_TREE_MAX_LEVEL  !< cap on the derived depth
     integer(c_int) :: cube_given = 0   !< 1: use cube_center and cube_side
     real(c_double) :: cube_center(3) = 0
     real(c_double) :: cube_side = 0    !< > 0 when cube_given
     integer(c_int) :: lists = GPUFMM_TREE_LISTS_ALL  !< OR of 2**list for the lists to build
     integer(c_int) :: kind = GPUFMM_TREE_UNIFORM     !< or GPUFMM_TREE_ADAPTIVE (leaves of variable depth)
  end type gpufmm_tree_options

  !> Lengths of one list's rows (gpufmm_tree_list_stats_t).
  type, bind(c), public :: gpufmm_tree_list_statistics
     integer(c_int) :: built = 0              !< 0 if the list was not requested
     integer(c_int64_t) :: rows = 0, entries = 0
     integer(c_int64_t) :: min = 0, max = 0   !< row lengths (0 when rows = 0)
     real(c_double) :: mean = 0
  end type gpufmm_tree_list_statistics

  !> What gpufmm_tree_stats returns (gpufmm_tree_stats_t). Per-level arrays
  !> are indexed by level 0..GPUFMM_TREE_MAX_LEVEL, per-list ones by the list
  !> constant: lists(GPUFMM_TREE_M2L), list_levels(level, GPUFMM_TREE_M2L).
  type, bind(c), public :: gpufmm_tree_statistics
     integer(c_int) :: l_max = 0
     integer(c_int) :: same_sets = 0          !< 1 when the receivers are the sources
     integer(c_int) :: backend = 0            !< GPUFMM_BACKEND_CPU or _CUDA
     integer(c_int64_t) :: num_sources = 0, num_receivers = 0
     real(c_double) :: cube_center(3) = 0
     real(c_double) :: cube_side = 0
     !> non-empty boxes per level (0 beyond l_max) and in total
     integer(c_int64_t) :: source_boxes(0:GPUFMM_TREE_MAX_LEVEL) = 0
     integer(c_int64_t) :: receiver_boxes(0:GPUFMM_TREE_MAX_LEVEL) = 0
     integer(c_int64_t) :: total_source_boxes = 0, total_receiver_boxes = 0
     !> points per non-empty leaf box
     integer(c_int64_t) :: source_leaf_min = 0, source_leaf_max = 0
     real(c_double) :: source_leaf_mean = 0
     integer(c_int64_t) :: receiver_leaf_min = 0, receiver_leaf_max = 0
     real(c_double) :: receiver_leaf_mean = 0
     type(gpufmm_tree_list_statistics) :: lists(0:GPUFMM_TREE_NUM_LISTS - 1)
     type(gpufmm_tree_list_statistics) :: list_levels(0:GPUFMM_TREE_MAX_LEVEL, 0:GPUFMM_TREE_NUM_LISTS - 1)
     !> build time in seconds per phase, and in total
     real(c_double) :: time_upload = 0, time_keys = 0, time_sort = 0, time_hierarchy = 0
     real(c_double) :: time_lists = 0, time_total = 0
  end type gpufmm_tree_statistics

  public :: gpufmm_tree_options_init, gpufmm_tree_build, gpufmm_tree_build_arrays, gpufmm_tree_destroy
  public :: gpufmm_tree_stats, gpufmm_tree_level_offsets, gpufmm_tree_get_points
  public :: gpufmm_tree_get_boxes, gpufmm_tree_list_size, gpufmm_tree_get_list
  public :: gpufmm_tree_m2l_class_info, gpufmm_tree_associated, gpufmm_tree_c_ptr

  ! ------------------------------------------------------------------ raw C interfaces (private)
  ! Optional dummies of a bind(c) interface pass NULL when absent (and an
  ! unallocated allocatable actual argument is absent).
  interface
     function c_options_init(opt) bind(c, name='gpufmm_tree_options_init') result(s)
       import :: c_int, gpufmm_tree_options
       type(gpufmm_tree_options), intent(inout) :: opt
       integer(c_int) :: s
     end function c_options_init
     function c_build(ctx, opt, nsrc, src, nrecv, recv, tree) bind(c, name='gpufmm_tree_build') result(s)
       import :: c_int, c_int64_t, c_double, c_ptr, gpufmm_tree_options
       type(c_ptr), value :: ctx
       type(gpufmm_tree_options), intent(in), optional :: opt
       integer(c_int64_t), value :: nsrc, nrecv
       real(c_double), intent(in) :: src(*)
       real(c_double), intent(in), optional :: recv(*)
       type(c_ptr), intent(out) :: tree
       integer(c_int) :: s
     end function c_build
     function c_build_arrays(ctx, opt, src, recv, tree) bind(c, name='gpufmm_tree_build_arrays') result(s)
       import :: c_int, c_ptr, gpufmm_tree_options
       type(c_ptr), value :: ctx
       type(gpufmm_tree_options), intent(in), optional :: opt
       type(c_ptr), value :: src, recv
       type(c_ptr), intent(out) :: tree
       integer(c_int) :: s
     end function c_build_arrays
     function c_destroy(tree) bind(c, name='gpufmm_tree_destroy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: tree
       integer(c_int) :: s
     end function c_destroy
     function c_stats(tree, stats) bind(c, name='gpufmm_tree_stats') result(s)
       import :: c_int, c_ptr, gpufmm_tree_statistics
       type(c_ptr), value :: tree
       type(gpufmm_tree_statistics), intent(inout) :: stats
       integer(c_int) :: s
     end function c_stats
     function c_level_offsets(tree, set, count, offsets) bind(c, name='gpufmm_tree_level_offsets') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: tree
       integer(c_int), value :: set
       integer(c_int64_t), value :: count
       integer(c_int64_t), intent(inout) :: offsets(*)
       integer(c_int) :: s
     end function c_level_offsets
     function c_get_points(tree, set, n, keys, perm, iperm) bind(c, name='gpufmm_tree_get_points') result(s)
       import :: c_int, c_int32_t, c_int64_t, c_ptr
       type(c_ptr), value :: tree
       integer(c_int), value :: set
       integer(c_int64_t), value :: n
       integer(c_int64_t), intent(inout), optional :: keys(*)
       integer(c_int32_t), intent(inout), optional :: perm(*), iperm(*)
       integer(c_int) :: s
     end function c_get_points
     function c_get_boxes(tree, set, nboxes, keys, parent, child_offsets, point_begin, point_end, &
          centers) bind(c, name='gpufmm_tree_get_boxes') result(s)
       import :: c_int, c_int32_t, c_int64_t, c_double, c_ptr
       type(c_ptr), value :: tree
       integer(c_int), value :: set
       integer(c_int64_t), value :: nboxes
       integer(c_int64_t), intent(inout), optional :: keys(*)
       integer(c_int32_t), intent(inout), optional :: parent(*), child_offsets(*), point_begin(*), &
            point_end(*)
       real(c_double), intent(inout), optional :: centers(*)
       integer(c_int) :: s
     end function c_get_boxes
     function c_list_size(tree, list, rows, entries) bind(c, name='gpufmm_tree_list_size') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: tree
       integer(c_int), value :: list
       integer(c_int64_t), intent(out) :: rows, entries
       integer(c_int) :: s
     end function c_list_size
     function c_get_list(tree, list, rows, entries, offsets, index, cls, eta) &
          bind(c, name='gpufmm_tree_get_list') result(s)
       import :: c_int, c_int32_t, c_int64_t, c_double, c_ptr
       type(c_ptr), value :: tree
       integer(c_int), value :: list
       integer(c_int64_t), value :: rows, entries
       integer(c_int64_t), intent(inout), optional :: offsets(*)
       integer(c_int32_t), intent(inout), optional :: index(*), cls(*)
       real(c_double), intent(inout), optional :: eta(*)
       integer(c_int) :: s
     end function c_get_list
     function c_m2l_class_info(cls, to_parent, offset, eta) bind(c, name='gpufmm_tree_m2l_class_info') &
          result(s)
       import :: c_int, c_int32_t, c_double
       integer(c_int32_t), value :: cls
       integer(c_int), intent(out) :: to_parent
       real(c_double), intent(out) :: offset(3)
       real(c_double), intent(out) :: eta
       integer(c_int) :: s
     end function c_m2l_class_info
  end interface

  !> The handle queries of gpufmm_core under this type's names.
  interface gpufmm_tree_associated
     module procedure gpufmm_associated
  end interface gpufmm_tree_associated
  interface gpufmm_tree_c_ptr
     module procedure gpufmm_c_ptr
  end interface gpufmm_tree_c_ptr

contains

  !> Sets opts to the library's defaults (depth from s_max = 64, capped at
  !> GPUFMM_TREE_MAX_LEVEL, bounding cube from the points, every list).
  subroutine gpufmm_tree_options_init(opts, status)
    type(gpufmm_tree_options), intent(inout) :: opts
    integer, optional, intent(out) :: status
    type(gpufmm_tree_options) :: o
    integer(c_int) :: s
    s = c_options_init(o)
    if (s == GPUFMM_SUCCESS) opts = o
    call gpufmm_check_status(s, status, 'gpufmm_tree_options_init')
  end subroutine gpufmm_tree_options_init

  !> Builds the octree of sources(3, nsrc) and receivers(3, nrecv)
  !> (receivers absent: the receivers are the sources) on ctx; options
  !> absent: the defaults. On failure tree is unchanged. Errors: those of the
  !> C function (bad options, NaN/Inf coordinates named with their index,
  !> ...), and SIZE_MISMATCH when sources or receivers do not have 3 rows.
  subroutine gpufmm_tree_build(ctx, sources, tree, receivers, options, status)
    type(gpufmm_context), intent(in) :: ctx
    real(real64), intent(in) :: sources(:, :)
    type(gpufmm_tree), intent(inout) :: tree
    real(real64), intent(in), optional :: receivers(:, :)
    type(gpufmm_tree_options), intent(in), optional :: options
    integer, optional, intent(out) :: status
    character(len=*), parameter :: where = 'gpufmm_tree_build'
    character(len=:), allocatable :: msg
    integer(int64) :: nsrc, nrecv
    type(c_ptr) :: p
    integer(c_int) :: s
    nsrc = size(sources, 2, kind=int64)
    nrecv = nsrc
    msg = gpufmm_shape3_error('sources', size(sources, 1, kind=int64), nsrc, nsrc, 'one column per source')
    if (present(receivers)) then
       nrecv = size(receivers, 2, kind=int64)
       if (len(msg) == 0) msg = gpufmm_shape3_error('receivers', size(receivers, 1, kind=int64), nrecv, &
            nrecv, 'one column per receiver')
    end if
    if (len(msg) > 0) then
       call gpufmm_check_status(GPUFMM_ERROR_SIZE_MISMATCH, status, where, msg)
       return
    end if
    p = c_null_ptr
    s = c_build(gpufmm_context_c_ptr(ctx), options, nsrc, sources, nrecv, receivers, p)
    if (s == GPUFMM_SUCCESS) call gpufmm_handle_set(tree, p)
    call gpufmm_check_status(s, status, where)
  end subroutine gpufmm_tree_build

  !> As gpufmm_tree_build, with the coordinates in device arrays of ctx:
  !> float64, rank 2, dims (3, n). On a GPU context they are read on the
  !> device (no host copy).
  subroutine gpufmm_tree_build_arrays(ctx, sources, tree, receivers, options, status)
    type(gpufmm_context), intent(in) :: ctx
    type(gpufmm_array), intent(in) :: sources
    type(gpufmm_tree), intent(inout) :: tree
    type(gpufmm_array), intent(in), optional :: receivers
    type(gpufmm_tree_options), intent(in), optional :: options
    integer, optional, intent(out) :: status
    type(c_ptr) :: p, recv
    integer(c_int) :: s
    recv = c_null_ptr
    if (present(receivers)) recv = gpufmm_array_c_ptr(receivers)
    p = c_null_ptr
    s = c_build_arrays(gpufmm_context_c_ptr(ctx), options, gpufmm_array_c_ptr(sources), recv, p)
    if (s == GPUFMM_SUCCESS) call gpufmm_handle_set(tree, p)
    call gpufmm_check_status(s, status, 'gpufmm_tree_build_arrays')
  end subroutine gpufmm_tree_build_arrays

  !> Frees the tree and nulls the handle (a null handle is a no-op).
  subroutine gpufmm_tree_destroy(tree, status)
    type(gpufmm_tree), intent(inout) :: tree
    integer, optional, intent(out) :: status
    call gpufmm_handle_destroyed(tree, c_destroy(gpufmm_c_ptr(tree)), status, 'gpufmm_tree_destroy')
  end subroutine gpufmm_tree_destroy

  !> The tree's statistics: depth, sizes, boxes per level, leaf occupancy,
  !> list lengths, build times (default values on failure).
  function gpufmm_tree_stats(tree, status) result(stats)
    type(gpufmm_tree), intent(in) :: tree
    integer, optional, intent(out) :: status
    type(gpufmm_tree_statistics) :: stats
    type(gpufmm_tree_statistics) :: st
    integer(c_int) :: s
    s = c_stats(gpufmm_c_ptr(tree), st)
    if (s == GPUFMM_SUCCESS) stats = st
    call gpufmm_check_status(s, status, 'gpufmm_tree_stats')
  end function gpufmm_tree_stats

  !> The number of points (boxes = .false.) or boxes (all levels) of a set;
  !> 0 for a set that is neither GPUFMM_TREE_SOURCES nor _RECEIVERS (the C
  !> library then names the bad argument).
  function set_count(stats, set, boxes) result(n)
    type(gpufmm_tree_statistics), intent(in) :: stats
    integer, intent(in) :: set
    logical, intent(in) :: boxes
    integer(int64) :: n
    n = 0
    if (set == GPUFMM_TREE_SOURCES) n = merge(stats%total_source_boxes, stats%num_sources, boxes)
    if (set == GPUFMM_TREE_RECEIVERS) n = merge(stats%total_receiver_boxes, stats%num_receivers, boxes)
  end function set_count

  !> offsets(0:l_max+1): the boxes of level l of the set are the global box
  !> indices offsets(l) .. offsets(l+1) - 1.
  subroutine gpufmm_tree_level_offsets(tree, set, offsets, status)
    type(gpufmm_tree), intent(in) :: tree
    integer, intent(in) :: set
    integer(int64), allocatable, intent(inout) :: offsets(:)
    integer, optional, intent(out) :: status
    type(gpufmm_tree_statistics) :: st
    integer(int64), allocatable :: o(:)
    integer(c_int) :: s
    s = c_stats(gpufmm_c_ptr(tree), st)
    if (s == GPUFMM_SUCCESS) then
       allocate(o(0:st%l_max + 1))
       s = c_level_offsets(gpufmm_c_ptr(tree), int(set, c_int), size(o, kind=c_int64_t), o)
       if (s == GPUFMM_SUCCESS) call move_alloc(o, offsets)
    end if
    call gpufmm_check_status(s, status, 'gpufmm_tree_level_offsets')
  end subroutine gpufmm_tree_level_offsets

  !> The set's points in sorted order i = 0 .. n-1: Morton keys(i),
  !> perm(i) = user index (0-based) of sorted point i, iperm(j) = sorted
  !> position of user point j. Pass only the outputs you want.
  subroutine gpufmm_tree_get_points(tree, set, keys, perm, iperm, status)
    type(gpufmm_tree), intent(in) :: tree
    integer, intent(in) :: set
    integer(int64), allocatable, intent(inout), optional :: keys(:)
    integer(int32), allocatable, intent(inout), optional :: perm(:), iperm(:)
    integer, optional, intent(out) :: status
    type(gpufmm_tree_statistics) :: st
    integer(int64), allocatable :: k(:)
    integer(int32), allocatable :: p(:), ip(:)
    integer(int64) :: n
    integer(c_int) :: s
    s = c_stats(gpufmm_c_ptr(tree), st)
    if (s == GPUFMM_SUCCESS) then
       n = set_count(st, set, .false.)
       if (present(keys)) allocate(k(0:n - 1))
       if (present(perm)) allocate(p(0:n - 1))
       if (present(iperm)) allocate(ip(0:n - 1))
       s = c_get_points(gpufmm_c_ptr(tree), int(set, c_int), n, k, p, ip)
    end if
    if (s == GPUFMM_SUCCESS) then
       if (present(keys)) call move_alloc(k, keys)
       if (present(perm)) call move_alloc(p, perm)
       if (present(iperm)) call move_alloc(ip, iperm)
    end if
    call gpufmm_check_status(s, status, 'gpufmm_tree_get_points')
  end subroutine gpufmm_tree_get_points

  !> The set's boxes b = 0 .. nboxes-1 (all levels, level-major): Morton
  !> keys(b), parent(b) (-1 for the root), children child_offsets(b) ..
  !> child_offsets(b+1) - 1, sorted points point_begin(b) .. point_end(b) - 1,
  !> centers(1:3, b). Pass only the outputs you want.
  subroutine gpufmm_tree_get_boxes(tree, set, keys, parent, child_offsets, point_begin, point_end, &
       centers, status)
    type(gpufmm_tree), intent(in) :: tree
    integer, intent(in) :: set
    integer(int64), allocatable, intent(inout), optional :: keys(:)
    integer(int32), allocatable, intent(inout), optional :: parent(:), child_offsets(:), point_begin(:), &
         point_end(:)
    real(real64), allocatable, intent(inout), optional :: centers(:, :)
    integer, optional, intent(out) :: status
    type(gpufmm_tree_statistics) :: st
    integer(int64), allocatable :: k(:)
    integer(int32), allocatable :: pa(:), co(:), pb(:), pe(:)
    real(real64), allocatable :: c(:, :)
    integer(int64) :: n
    integer(c_int) :: s
    s = c_stats(gpufmm_c_ptr(tree), st)
    if (s == GPUFMM_SUCCESS) then
       n = set_count(st, set, .true.)
       if (present(keys)) allocate(k(0:n - 1))
       if (present(parent)) allocate(pa(0:n - 1))
       if (present(child_offsets)) allocate(co(0:n))
       if (present(point_begin)) allocate(pb(0:n - 1))
       if (present(point_end)) allocate(pe(0:n - 1))
       if (present(centers)) allocate(c(3, 0:n - 1))
       s = c_get_boxes(gpufmm_c_ptr(tree), int(set, c_int), n, k, pa, co, pb, pe, c)
    end if
    if (s == GPUFMM_SUCCESS) then
       if (present(keys)) call move_alloc(k, keys)
       if (present(parent)) call move_alloc(pa, parent)
       if (present(child_offsets)) call move_alloc(co, child_offsets)
       if (present(point_begin)) call move_alloc(pb, point_begin)
       if (present(point_end)) call move_alloc(pe, point_end)
       if (present(centers)) call move_alloc(c, centers)
    end if
    call gpufmm_check_status(s, status, 'gpufmm_tree_get_boxes')
  end subroutine gpufmm_tree_get_boxes

  !> Rows (= the receiver boxes, all levels) and entries of a list.
  subroutine gpufmm_tree_list_size(tree, list, rows, entries, status)
    type(gpufmm_tree), intent(in) :: tree
    integer, intent(in) :: list
    integer(int64), intent(inout) :: rows, entries
    integer, optional, intent(out) :: status
    integer(c_int64_t) :: r, e
    integer(c_int) :: s
    s = c_list_size(gpufmm_c_ptr(tree), int(list, c_int), r, e)
    if (s == GPUFMM_SUCCESS) then
       rows = r
       entries = e
    end if
    call gpufmm_check_status(s, status, 'gpufmm_tree_list_size')
  end subroutine gpufmm_tree_list_size

  !> A list in CSR form: row r (a receiver box) holds the source boxes
  !> index(offsets(r) .. offsets(r+1) - 1); for the M2L lists also each
  !> entry's translation class cls (see gpufmm_tree_m2l_class_info) and the
  !> ratio eta of eq. (20). Pass only the outputs you want (cls and eta not
  !> for GPUFMM_TREE_NEIGHBORS).
  subroutine gpufmm_tree_get_list(tree, list, offsets, index, cls, eta, status)
    type(gpufmm_tree), intent(in) :: tree
    integer, intent(in) :: list
    integer(int64), allocatable, intent(inout), optional :: offsets(:)
    integer(int32), allocatable, intent(inout), optional :: index(:), cls(:)
    real(real64), allocatable, intent(inout), optional :: eta(:)
    integer, optional, intent(out) :: status
    integer(int64), allocatable :: o(:)
    integer(int32), allocatable :: ix(:), c(:)
    real(real64), allocatable :: e(:)
    integer(c_int64_t) :: rows, entries
    integer(c_int) :: s
    s = c_list_size(gpufmm_c_ptr(tree), int(list, c_int), rows, entries)
    if (s == GPUFMM_SUCCESS) then
       if (present(offsets)) allocate(o(0:rows))
       if (present(index)) allocate(ix(0:entries - 1))
       if (present(cls)) allocate(c(0:entries - 1))
       if (present(eta)) allocate(e(0:entries - 1))
       s = c_get_list(gpufmm_c_ptr(tree), int(list, c_int), rows, entries, o, ix, c, e)
    end if
    if (s == GPUFMM_SUCCESS) then
       if (present(offsets)) call move_alloc(o, offsets)
       if (present(index)) call move_alloc(ix, index)
       if (present(cls)) call move_alloc(c, cls)
       if (present(eta)) call move_alloc(e, eta)
    end if
    call gpufmm_check_status(s, status, 'gpufmm_tree_get_list')
  end subroutine gpufmm_tree_get_list

  !> Decodes an M2L class code: to_parent (.false. for M2L and M2L_TYPE1
  !> entries, .true. for a type-2 class), offset (source-box centre minus the
  !> row box's centre, in source-box sizes) and eta. Outputs are unchanged
  !> on failure (INVALID_ARGUMENT: a code that no list holds).
  subroutine gpufmm_tree_m2l_class_info(cls, to_parent, offset, eta, status)
    integer, intent(in) :: cls
    logical, intent(inout), optional :: to_parent
    real(real64), intent(inout), optional :: offset(3), eta
    integer, optional, intent(out) :: status
    integer(c_int) :: tp, s
    real(c_double) :: o(3), e
    s = c_m2l_class_info(int(cls, c_int32_t), tp, o, e)
    if (s == GPUFMM_SUCCESS) then
       if (present(to_parent)) to_parent = tp /= 0
       if (present(offset)) offset = o
       if (present(eta)) eta = e
    end if
    call gpufmm_check_status(s, status, 'gpufmm_tree_m2l_class_info')
  end subroutine gpufmm_tree_m2l_class_info

end module gpufmm_tree_mod
