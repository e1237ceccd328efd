#!/usr/bin/env python3
"""Generate bindings/fortran/gpufmm_array.f90 (module gpufmm_array_mod).

The Fortran device-array module has generic interfaces over six kinds
(int32, int64, real32, real64, complex(real32), complex(real64)) and ranks
1-3 of host arrays. The specific procedures are short stubs that differ only
in the type of one dummy argument; this script writes them, together with
the hand-written part of the module kept below as text.

The generated file is checked in, so building gpufmm never needs Python.
After editing this script, regenerate and commit both:

    python3 tools/gen_fortran_arrays.py            # writes the module
    python3 tools/gen_fortran_arrays.py --check    # exit 1 if it is stale
"""

import argparse
import os
import sys
import textwrap

OUT = os.path.join("bindings", "fortran", "gpufmm_array.f90")

# tag, Fortran type, dtype constant, category
KINDS = [
    ("i4", "integer(int32)", "GPUFMM_INT32", "int"),
    ("i8", "integer(int64)", "GPUFMM_INT64", "int"),
    ("r4", "real(real32)", "GPUFMM_FLOAT32", "real"),
    ("r8", "real(real64)", "GPUFMM_FLOAT64", "real"),
    ("c4", "complex(real32)", "GPUFMM_COMPLEX64", "complex"),
    ("c8", "complex(real64)", "GPUFMM_COMPLEX128", "complex"),
]
FLOATS = [k for k in KINDS if k[3] != "int"]
ORDERED = [k for k in KINDS if k[3] != "complex"]  # have min / max
RANKS = [1, 2, 3]
# nrm2 results: real kind -> the dtypes whose norm has that kind
NRM2 = [("r4", "real(real32)", ["GPUFMM_FLOAT32", "GPUFMM_COMPLEX64"]),
        ("r8", "real(real64)", ["GPUFMM_FLOAT64", "GPUFMM_COMPLEX128"])]
INTS = [("i4", "integer(int32)"), ("i8", "integer(int64)")]


def shape(rank):
    return "(" + ",".join([":"] * rank) + ")"


def generic(name, specifics):
    lines = ["  interface %s" % name]
    for i in range(0, len(specifics), 3):
        lines.append("     module procedure " + ", ".join(specifics[i:i + 3]))
    lines.append("  end interface %s" % name)
    return "\n".join(lines)


def specifics_kr(prefix, kinds=KINDS):
    return ["%s_%s_%d" % (prefix, k[0], r) for k in kinds for r in RANKS]


def specifics_k(prefix, kinds):
    return ["%s_%s" % (prefix, k[0]) for k in kinds]


# --------------------------------------------------------------------------- stubs

def stub_create_like(tag, ftype, dtype, rank):
    return f"""
  subroutine create_like_{tag}_{rank}(ctx, host, a, status)
    type(gpufmm_context), intent(in) :: ctx
    {ftype}, intent(in) :: host{shape(rank)}
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, {dtype}, shape(host, kind=c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create_like')
  end subroutine create_like_{tag}_{rank}
"""


def stub_transfer(op, tag, ftype, dtype, rank):
    # Sync transfers take contiguous dummies (a non-contiguous actual is
    # copied in/out by the compiler, which is correct for a blocking call).
    # Async ones must not see a compiler temporary: no `contiguous`, and the
    # common routine rejects a non-contiguous actual.
    upload = op.startswith("upload")
    is_async = op.endswith("async")
    intent = "in" if upload else "inout"
    attrs = "target" if is_async else "contiguous, target"
    name = f"{op}_{tag}_{rank}"
    if is_async:
        pick = """    if (.not. is_contiguous(host)) then
       n = -1   ! rejected by do_transfer
    else if (n > 0) then
       p = c_loc(host)
    end if"""
    else:
        pick = "    if (n > 0) p = c_loc(host)"
    return f"""
  subroutine {name}(a, host, status)
    type(gpufmm_array), intent(in) :: a
    {ftype}, {attrs}, intent({intent}) :: host{shape(rank)}
    integer, optional, intent(out) :: status
    type(c_ptr) :: p
    integer(int64) :: n
    p = c_null_ptr   ! c_loc of a zero-sized array is not allowed
    n = size(host, kind=int64)
{pick}
    call do_transfer(OP_{op.upper()}, a, p, n, {dtype}, '{ftype}', status)
  end subroutine {name}
"""


def stub_fill(tag, ftype, dtype):
    return f"""
  subroutine fill_{tag}(a, value, status)
    type(gpufmm_array), intent(in) :: a
    {ftype}, target, intent(in) :: value
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_FILL, a, c_loc(value), [{dtype}], '{ftype}', status)
  end subroutine fill_{tag}
"""


def stub_reduce(op, tag, ftype, dtype):
    return f"""
  subroutine {op}_{tag}(a, result, status)
    type(gpufmm_array), intent(in) :: a
    {ftype}, target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_{op.upper()}, a, c_loc(result), [{dtype}], '{ftype}', status)
  end subroutine {op}_{tag}
"""


def stub_nrm2(tag, ftype, dtypes):
    return f"""
  subroutine nrm2_{tag}(x, result, status)
    type(gpufmm_array), intent(in) :: x
    {ftype}, target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_NRM2, x, c_loc(result), [{', '.join(dtypes)}], &
         '{ftype}', status)
  end subroutine nrm2_{tag}
"""


def stub_scal(tag, ftype, dtype):
    return f"""
  subroutine scal_{tag}(alpha, x, status)
    {ftype}, target, intent(in) :: alpha
    type(gpufmm_array), intent(in) :: x
    integer, optional, intent(out) :: status
    call do_scalar_op(OP_SCAL, x, c_loc(alpha), [{dtype}], '{ftype}', status)
  end subroutine scal_{tag}
"""


def stub_axpy(tag, ftype, dtype):
    return f"""
  subroutine axpy_{tag}(alpha, x, y, status)
    {ftype}, target, intent(in) :: alpha
    type(gpufmm_array), intent(in) :: x, y
    integer, optional, intent(out) :: status
    call do_pair_op(OP_AXPY, x, y, c_loc(alpha), {dtype}, '{ftype}', status)
  end subroutine axpy_{tag}
"""


def stub_dot(tag, ftype, dtype):
    return f"""
  subroutine dot_{tag}(x, y, result, status)
    type(gpufmm_array), intent(in) :: x, y
    {ftype}, target, intent(inout) :: result
    integer, optional, intent(out) :: status
    call do_pair_op(OP_DOT, x, y, c_loc(result), {dtype}, '{ftype}', status)
  end subroutine dot_{tag}
"""


def stub_gemv(tag, ftype, dtype):
    return f"""
  subroutine gemv_{tag}(trans, alpha, a, x, beta, y, status)
    character(len=*), intent(in) :: trans
    {ftype}, target, intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, x, y
    integer, optional, intent(out) :: status
    call do_gemv(trans, c_loc(alpha), a, x, c_loc(beta), y, &
         {dtype}, '{ftype}', status)
  end subroutine gemv_{tag}
"""


def stub_gemm(tag, ftype, dtype):
    return f"""
  subroutine gemm_{tag}(transa, transb, alpha, a, b, beta, c, status)
    character(len=*), intent(in) :: transa, transb
    {ftype}, target, intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, b, c
    integer, optional, intent(out) :: status
    call do_gemm(transa, transb, c_loc(alpha), a, b, c_loc(beta), c, &
         {dtype}, '{ftype}', status)
  end subroutine gemm_{tag}
"""


def stub_dims(proc, itag, itype):
    if proc == "create":
        return f"""
  subroutine create_{itag}(ctx, dtype, dims, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer, intent(in) :: dtype
    {itype}, intent(in) :: dims(:)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, dtype, int(dims, c_int64_t), .false., c_null_ptr, a, status, &
         'gpufmm_array_create')
  end subroutine create_{itag}
"""
    return f"""
  subroutine wrap_{itag}(ctx, dtype, dims, data, a, status)
    type(gpufmm_context), intent(in) :: ctx
    integer, intent(in) :: dtype
    {itype}, intent(in) :: dims(:)
    type(c_ptr), intent(in) :: data
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    call do_create(ctx, dtype, int(dims, c_int64_t), .true., data, a, status, 'gpufmm_array_wrap')
  end subroutine wrap_{itag}
"""


def stub_copy_range(itag, itype):
    return f"""
  subroutine copy_range_{itag}(src, src_offset, dst, dst_offset, count, status)
    type(gpufmm_array), intent(in) :: src, dst
    {itype}, intent(in) :: src_offset, dst_offset, count
    integer, optional, intent(out) :: status
    call do_copy_range(src, int(src_offset, int64), dst, int(dst_offset, int64), &
         int(count, int64), status)
  end subroutine copy_range_{itag}
"""


# --------------------------------------------------------------------------- fixed text

HEADER = """\
! ============================================================================
! GENERATED FILE - DO NOT EDIT BY HAND.
! Written by tools/gen_fortran_arrays.py; to change it, edit the script and run
!     python3 tools/gen_fortran_arrays.py
! from the repository root, then commit both files. (CI does not run Python:
! this file is checked in.)
! ============================================================================
"""

MODULE_HEAD = """\
!> gpufmm_array_mod - device arrays for Fortran (see docs/fortran.md).
!>
!> type(gpufmm_array) is an opaque handle to an array of rank 1-3 that lives
!> on the context's device (host memory on the CPU backend). Data stays on
!> the device between calls; gpufmm_array_data gives the raw device pointer
!> for your own kernels.
!>
!> Kinds. Host arrays, scalars and results are integer(int32),
!> integer(int64), real(real32), real(real64), complex(real32) and
!> complex(real64) (iso_fortran_env), which are the dtypes GPUFMM_INT32,
!> GPUFMM_INT64, GPUFMM_FLOAT32, GPUFMM_FLOAT64, GPUFMM_COMPLEX64 and
!> GPUFMM_COMPLEX128. The kind of a host array, scalar or result must be
!> the array's dtype exactly: nothing is converted, and a wrong kind fails
!> with GPUFMM_ERROR_TYPE_MISMATCH (so 2.0 does not fit a GPUFMM_FLOAT64
!> array: write 2.0_real64). nrm2 returns the real kind of the array's
!> precision.
!>
!> Shapes. Arrays are column-major like Fortran arrays. Transfers check the
!> element count only (GPUFMM_ERROR_SIZE_MISMATCH): a rank-1 host array may
!> fill a rank-2 device array, as with sequence association.
!>
!> Offsets. copy_range takes 1-BASED element offsets, counted over the
!> array's elements in column-major order (src_offset = 1 is the first
!> element), and converts them to the C library's 0-based offsets.
!>
!> Errors. Every procedure takes `integer, optional, intent(out) :: status`
!> last. Absent, a failure stops the program (error stop with the message);
!> present, it receives the GPUFMM_* code and gpufmm_last_error_message()
!> says what went wrong. A failed call leaves its outputs (handles, host
!> arrays, results, device arrays) unchanged. See gpufmm_core.
!>
!> Async transfers. gpufmm_array_upload_async / _download_async queue the
!> copy on the context's stream. The host array must be contiguous (a
!> non-contiguous section fails with GPUFMM_ERROR_INVALID_ARGUMENT), should
!> have the TARGET attribute, and must stay alive (and, for uploads,
!> unchanged) until gpufmm_context_synchronize. On the CPU backend they are
!> synchronous.
!>
!> Handles are freed with gpufmm_array_destroy, before their context is
!> destroyed; there are no finalizers.
module gpufmm_array_mod
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_ptr, c_null_ptr, c_loc, c_associated
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use gpufmm_core
  implicit none
  private

  !> A device array handle (opaque). Default-initialised to the null state.
  type, public :: gpufmm_array
     private
     type(c_ptr) :: p = c_null_ptr
  end type gpufmm_array

  public :: gpufmm_array_create, gpufmm_array_create_like, gpufmm_array_wrap, gpufmm_array_destroy
  public :: gpufmm_array_upload, gpufmm_array_download
  public :: gpufmm_array_upload_async, gpufmm_array_download_async
  public :: gpufmm_array_copy, gpufmm_array_copy_range, gpufmm_array_fill
  public :: gpufmm_array_axpy, gpufmm_array_scal, gpufmm_array_dot, gpufmm_array_nrm2
  public :: gpufmm_array_gemv, gpufmm_array_gemm
  public :: gpufmm_array_sum, gpufmm_array_min, gpufmm_array_max
  public :: gpufmm_array_dtype, gpufmm_array_rank, gpufmm_array_dims, gpufmm_array_size
  public :: gpufmm_array_data, gpufmm_array_associated, gpufmm_array_c_ptr

  ! Operation codes of the common (kind-agnostic) routines.
  integer, parameter :: OP_UPLOAD = 1, OP_DOWNLOAD = 2, OP_UPLOAD_ASYNC = 3, &
       OP_DOWNLOAD_ASYNC = 4, OP_FILL = 5, OP_SUM = 6, OP_MIN = 7, OP_MAX = 8, &
       OP_NRM2 = 9, OP_SCAL = 10, OP_AXPY = 11, OP_DOT = 12
"""

C_INTERFACES = """
  ! ------------------------------------------------------------------ raw C interfaces (private)
  interface
     function c_array_create(ctx, dtype, rank, dims, a) bind(c, name='gpufmm_array_create') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int), value :: dtype, rank
       integer(c_int64_t), intent(in) :: dims(*)
       type(c_ptr), intent(out) :: a
       integer(c_int) :: s
     end function c_array_create
     function c_array_wrap(ctx, dtype, rank, dims, data, a) bind(c, name='gpufmm_array_wrap') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int), value :: dtype, rank
       integer(c_int64_t), intent(in) :: dims(*)
       type(c_ptr), value :: data
       type(c_ptr), intent(out) :: a
       integer(c_int) :: s
     end function c_array_wrap
     function c_array_destroy(a) bind(c, name='gpufmm_array_destroy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a
       integer(c_int) :: s
     end function c_array_destroy
     function c_array_dtype(a, dtype) bind(c, name='gpufmm_array_dtype') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a
       integer(c_int), intent(out) :: dtype
       integer(c_int) :: s
     end function c_array_dtype
     function c_array_rank(a, rank) bind(c, name='gpufmm_array_rank') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a
       integer(c_int), intent(out) :: rank
       integer(c_int) :: s
     end function c_array_rank
     function c_array_dims(a, dims) bind(c, name='gpufmm_array_dims') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: a
       integer(c_int64_t), intent(out) :: dims(*)
       integer(c_int) :: s
     end function c_array_dims
     function c_array_size(a, count) bind(c, name='gpufmm_array_size') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: a
       integer(c_int64_t), intent(out) :: count
       integer(c_int) :: s
     end function c_array_size
     function c_array_data(a, data) bind(c, name='gpufmm_array_data') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a
       type(c_ptr), intent(out) :: data
       integer(c_int) :: s
     end function c_array_data
     function c_array_copy(src, dst) bind(c, name='gpufmm_array_copy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: src, dst
       integer(c_int) :: s
     end function c_array_copy
     function c_array_copy_range(src, src_offset, dst, dst_offset, count) &
          bind(c, name='gpufmm_array_copy_range') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: src, dst
       integer(c_int64_t), value :: src_offset, dst_offset, count
       integer(c_int) :: s
     end function c_array_copy_range
     function c_array_axpy(alpha, x, y) bind(c, name='gpufmm_array_axpy') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: alpha, x, y
       integer(c_int) :: s
     end function c_array_axpy
     function c_array_scal(alpha, x) bind(c, name='gpufmm_array_scal') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: alpha, x
       integer(c_int) :: s
     end function c_array_scal
     function c_array_dot(x, y, result) bind(c, name='gpufmm_array_dot') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: x, y, result
       integer(c_int) :: s
     end function c_array_dot
     function c_array_gemv(trans, alpha, a, x, beta, y) bind(c, name='gpufmm_array_gemv') result(s)
       import :: c_int, c_ptr
       integer(c_int), value :: trans
       type(c_ptr), value :: alpha, a, x, beta, y
       integer(c_int) :: s
     end function c_array_gemv
     function c_array_gemm(transa, transb, alpha, a, b, beta, c) &
          bind(c, name='gpufmm_array_gemm') result(s)
       import :: c_int, c_ptr
       integer(c_int), value :: transa, transb
       type(c_ptr), value :: alpha, a, b, beta, c
       integer(c_int) :: s
     end function c_array_gemm
  end interface
"""

# Entry points with the same C signature: one bind(c) interface each.
ALIASES = [
    ("c_array_upload", "gpufmm_array_upload", "transfer"),
    ("c_array_download", "gpufmm_array_download", "transfer"),
    ("c_array_upload_async", "gpufmm_array_upload_async", "transfer"),
    ("c_array_download_async", "gpufmm_array_download_async", "transfer"),
    ("c_array_fill", "gpufmm_array_fill", "ptr_op"),
    ("c_array_sum", "gpufmm_array_sum", "ptr_op"),
    ("c_array_min", "gpufmm_array_min", "ptr_op"),
    ("c_array_max", "gpufmm_array_max", "ptr_op"),
    ("c_array_nrm2", "gpufmm_array_nrm2", "ptr_op"),
]


def c_interfaces():
    text = C_INTERFACES
    extra = []
    for fname, cname, sig in ALIASES:
        if sig == "transfer":
            extra.append(f"""     function {fname}(a, host, count) bind(c, name='{cname}') result(s)
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: a, host
       integer(c_int64_t), value :: count
       integer(c_int) :: s
     end function {fname}""")
        else:
            extra.append(f"""     function {fname}(a, value) bind(c, name='{cname}') result(s)
       import :: c_int, c_ptr
       type(c_ptr), value :: a, value
       integer(c_int) :: s
     end function {fname}""")
    return text.replace("  end interface\n", "\n".join(extra) + "\n  end interface\n")


COMMON = r"""
  ! ================================================================== common routines

  !> Integer to text, for messages.
  pure function itoa(i) result(str)
    integer(int64), intent(in) :: i
    character(len=:), allocatable :: str
    character(len=24) :: buf
    write (buf, '(i0)') i
    str = trim(buf)
  end function itoa

  !> Ends a call: hands s to gpufmm_check_status, with the Fortran-side
  !> message when there is one.
  subroutine finish(s, msg, status, where)
    integer(c_int), intent(in) :: s
    character(len=:), allocatable, intent(in) :: msg
    integer, optional, intent(out) :: status
    character(len=*), intent(in) :: where
    if (allocated(msg)) then
       call gpufmm_check_status(s, status, where, msg)
    else
       call gpufmm_check_status(s, status, where)
    end if
  end subroutine finish

  !> s = SUCCESS if array a's dtype is one of `allowed`; else TYPE_MISMATCH
  !> with a message saying that `what` (of Fortran type ftype) does not fit;
  !> or the C status if a is not a live handle.
  subroutine check_dtype(a, aname, allowed, what, ftype, s, msg)
    type(gpufmm_array), intent(in) :: a
    character(len=*), intent(in) :: aname, what, ftype
    integer(c_int), intent(in) :: allowed(:)
    integer(c_int), intent(out) :: s
    character(len=:), allocatable, intent(inout) :: msg
    integer(c_int) :: dt
    dt = -1
    s = c_array_dtype(a%p, dt)
    if (s /= GPUFMM_SUCCESS) return
    if (any(allowed == dt)) return
    s = GPUFMM_ERROR_TYPE_MISMATCH
    msg = what // ' is ' // ftype // ', which does not fit array ''' // aname // ''' of dtype ' // &
         gpufmm_dtype_name(dt)
  end subroutine check_dtype

  !> 'N' / 'T' / 'C' (either case) to GPUFMM_OP_*; -1 if not one of them.
  pure integer(c_int) function op_code(trans)
    character(len=*), intent(in) :: trans
    op_code = -1
    if (len(trans) < 1) return
    select case (trans(1:1))
    case ('N', 'n'); op_code = GPUFMM_OP_N
    case ('T', 't'); op_code = GPUFMM_OP_T
    case ('C', 'c'); op_code = GPUFMM_OP_C
    end select
  end function op_code

  !> create (wrap = .false.) or wrap (wrap = .true.: over `data`)
  subroutine do_create(ctx, dtype, dims, wrap, data, a, status, where)
    type(gpufmm_context), intent(in) :: ctx
    integer, intent(in) :: dtype
    integer(c_int64_t), intent(in) :: dims(:)
    logical, intent(in) :: wrap
    type(c_ptr), intent(in) :: data
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    character(len=*), intent(in) :: where
    integer(c_int64_t) :: d(GPUFMM_MAX_RANK)
    type(c_ptr) :: p
    integer(c_int) :: s
    character(len=:), allocatable :: msg
    if (size(dims) < 1 .or. size(dims) > GPUFMM_MAX_RANK) then
       s = GPUFMM_ERROR_INVALID_ARGUMENT
       msg = 'dims has ' // itoa(int(size(dims), int64)) // ' entries; the rank must be 1 to 3'
    else
       d = 1
       d(1:size(dims)) = dims
       p = c_null_ptr
       if (wrap) then
          s = c_array_wrap(gpufmm_context_c_ptr(ctx), int(dtype, c_int), int(size(dims), c_int), &
               d, data, p)
       else
          s = c_array_create(gpufmm_context_c_ptr(ctx), int(dtype, c_int), int(size(dims), c_int), &
               d, p)
       end if
       if (s == GPUFMM_SUCCESS) a%p = p
    end if
    call finish(s, msg, status, where)
  end subroutine do_create

  subroutine do_transfer(op, a, host, count, dtype, ftype, status)
    integer, intent(in) :: op
    type(gpufmm_array), intent(in) :: a
    type(c_ptr), intent(in) :: host
    integer(int64), intent(in) :: count   ! -1: a non-contiguous async host array
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(in) :: ftype
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    integer(c_int64_t) :: n
    character(len=:), allocatable :: msg, where
    select case (op)
    case (OP_UPLOAD);         where = 'gpufmm_array_upload'
    case (OP_DOWNLOAD);       where = 'gpufmm_array_download'
    case (OP_UPLOAD_ASYNC);   where = 'gpufmm_array_upload_async'
    case default;             where = 'gpufmm_array_download_async'
    end select
    call check_dtype(a, 'a', [dtype], 'host', ftype, s, msg)
    if (s == GPUFMM_SUCCESS .and. count < 0) then
       s = GPUFMM_ERROR_INVALID_ARGUMENT
       msg = 'host must be a contiguous array for an asynchronous transfer'
    end if
    if (s == GPUFMM_SUCCESS) then
       n = -1
       s = c_array_size(a%p, n)
       if (s == GPUFMM_SUCCESS .and. n /= count) then
          s = GPUFMM_ERROR_SIZE_MISMATCH
          msg = 'host has ' // itoa(count) // ' elements but array ''a'' has ' // itoa(n)
       end if
    end if
    if (s == GPUFMM_SUCCESS) then
       select case (op)
       case (OP_UPLOAD);         s = c_array_upload(a%p, host, count)
       case (OP_DOWNLOAD);       s = c_array_download(a%p, host, count)
       case (OP_UPLOAD_ASYNC);   s = c_array_upload_async(a%p, host, count)
       case default;             s = c_array_download_async(a%p, host, count)
       end select
    end if
    call finish(s, msg, status, where)
  end subroutine do_transfer

  !> Operations on one array and one host scalar (in or out).
  subroutine do_scalar_op(op, a, value, allowed, ftype, status)
    integer, intent(in) :: op
    type(gpufmm_array), intent(in) :: a
    type(c_ptr), intent(in) :: value
    integer(c_int), intent(in) :: allowed(:)
    character(len=*), intent(in) :: ftype
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    character(len=:), allocatable :: msg, where, what, aname
    aname = 'a'
    what = 'result'
    select case (op)
    case (OP_FILL); where = 'gpufmm_array_fill'; what = 'value'
    case (OP_SUM);  where = 'gpufmm_array_sum'
    case (OP_MIN);  where = 'gpufmm_array_min'
    case (OP_MAX);  where = 'gpufmm_array_max'
    case (OP_NRM2); where = 'gpufmm_array_nrm2'; aname = 'x'
    case default;   where = 'gpufmm_array_scal'; what = 'alpha'; aname = 'x'
    end select
    call check_dtype(a, aname, allowed, what, ftype, s, msg)
    if (s == GPUFMM_SUCCESS) then
       select case (op)
       case (OP_FILL); s = c_array_fill(a%p, value)
       case (OP_SUM);  s = c_array_sum(a%p, value)
       case (OP_MIN);  s = c_array_min(a%p, value)
       case (OP_MAX);  s = c_array_max(a%p, value)
       case (OP_NRM2); s = c_array_nrm2(a%p, value)
       case default;   s = c_array_scal(value, a%p)
       end select
    end if
    call finish(s, msg, status, where)
  end subroutine do_scalar_op

  !> axpy (value = alpha, checked against y) and dot (value = result,
  !> checked against x); the C library checks x against y.
  subroutine do_pair_op(op, x, y, value, dtype, ftype, status)
    integer, intent(in) :: op
    type(gpufmm_array), intent(in) :: x, y
    type(c_ptr), intent(in) :: value
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(in) :: ftype
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    character(len=:), allocatable :: msg
    if (op == OP_AXPY) then
       call check_dtype(y, 'y', [dtype], 'alpha', ftype, s, msg)
       if (s == GPUFMM_SUCCESS) s = c_array_axpy(value, x%p, y%p)
       call finish(s, msg, status, 'gpufmm_array_axpy')
    else
       call check_dtype(x, 'x', [dtype], 'result', ftype, s, msg)
       if (s == GPUFMM_SUCCESS) s = c_array_dot(x%p, y%p, value)
       call finish(s, msg, status, 'gpufmm_array_dot')
    end if
  end subroutine do_pair_op

  subroutine do_gemv(trans, alpha, a, x, beta, y, dtype, ftype, status)
    character(len=*), intent(in) :: trans
    type(c_ptr), intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, x, y
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(in) :: ftype
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    character(len=:), allocatable :: msg
    if (op_code(trans) < 0) then
       s = GPUFMM_ERROR_INVALID_ARGUMENT
       msg = 'trans = ''' // trans // ''' must be ''N'', ''T'' or ''C'''
    else
       call check_dtype(y, 'y', [dtype], 'alpha', ftype, s, msg)
       if (s == GPUFMM_SUCCESS) s = c_array_gemv(op_code(trans), alpha, a%p, x%p, beta, y%p)
    end if
    call finish(s, msg, status, 'gpufmm_array_gemv')
  end subroutine do_gemv

  subroutine do_gemm(transa, transb, alpha, a, b, beta, c, dtype, ftype, status)
    character(len=*), intent(in) :: transa, transb
    type(c_ptr), intent(in) :: alpha, beta
    type(gpufmm_array), intent(in) :: a, b, c
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(in) :: ftype
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    character(len=:), allocatable :: msg
    if (op_code(transa) < 0) then
       s = GPUFMM_ERROR_INVALID_ARGUMENT
       msg = 'transa = ''' // transa // ''' must be ''N'', ''T'' or ''C'''
    else if (op_code(transb) < 0) then
       s = GPUFMM_ERROR_INVALID_ARGUMENT
       msg = 'transb = ''' // transb // ''' must be ''N'', ''T'' or ''C'''
    else
       call check_dtype(c, 'c', [dtype], 'alpha', ftype, s, msg)
       if (s == GPUFMM_SUCCESS) s = c_array_gemm(op_code(transa), op_code(transb), alpha, a%p, &
            b%p, beta, c%p)
    end if
    call finish(s, msg, status, 'gpufmm_array_gemm')
  end subroutine do_gemm

  !> 1-based offsets, checked here so that messages speak of them; the C
  !> library gets 0-based ones and checks dtypes and overlap.
  subroutine do_copy_range(src, src_offset, dst, dst_offset, count, status)
    type(gpufmm_array), intent(in) :: src, dst
    integer(int64), intent(in) :: src_offset, dst_offset, count
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    integer(c_int64_t) :: nsrc, ndst
    character(len=:), allocatable :: msg
    nsrc = 0
    ndst = 0
    s = c_array_size(src%p, nsrc)
    if (s == GPUFMM_SUCCESS) s = c_array_size(dst%p, ndst)
    if (s == GPUFMM_SUCCESS) then
       if (count < 0) then
          msg = 'count = ' // itoa(count) // ' must be >= 0'
       else if (src_offset < 1) then
          msg = 'src_offset = ' // itoa(src_offset) // ' must be >= 1 (offsets are 1-based)'
       else if (dst_offset < 1) then
          msg = 'dst_offset = ' // itoa(dst_offset) // ' must be >= 1 (offsets are 1-based)'
       else if (count > nsrc - (src_offset - 1)) then
          msg = 'src_offset = ' // itoa(src_offset) // ', count = ' // itoa(count) // &
               ': elements ' // itoa(src_offset) // ' to ' // itoa(src_offset + count - 1) // &
               ' are outside src, which has ' // itoa(nsrc) // ' elements'
       else if (count > ndst - (dst_offset - 1)) then
          msg = 'dst_offset = ' // itoa(dst_offset) // ', count = ' // itoa(count) // &
               ': elements ' // itoa(dst_offset) // ' to ' // itoa(dst_offset + count - 1) // &
               ' are outside dst, which has ' // itoa(ndst) // ' elements'
       end if
       if (allocated(msg)) then
          s = GPUFMM_ERROR_INVALID_ARGUMENT
       else
          s = c_array_copy_range(src%p, src_offset - 1, dst%p, dst_offset - 1, count)
       end if
    end if
    call finish(s, msg, status, 'gpufmm_array_copy_range')
  end subroutine do_copy_range

  ! ================================================================== non-generic public procedures

  !> Frees the array (device memory unless it was wrapped) and nulls the
  !> handle. Destroying a null handle is a no-op.
  subroutine gpufmm_array_destroy(a, status)
    type(gpufmm_array), intent(inout) :: a
    integer, optional, intent(out) :: status
    integer(c_int) :: s
    s = c_array_destroy(a%p)
    if (s == GPUFMM_SUCCESS) a%p = c_null_ptr
    call gpufmm_check_status(s, status, 'gpufmm_array_destroy')
  end subroutine gpufmm_array_destroy

  !> dst = src: same dtype, same element count, same context.
  subroutine gpufmm_array_copy(src, dst, status)
    type(gpufmm_array), intent(in) :: src, dst
    integer, optional, intent(out) :: status
    call gpufmm_check_status(c_array_copy(src%p, dst%p), status, 'gpufmm_array_copy')
  end subroutine gpufmm_array_copy

  !> The array's dtype (GPUFMM_INT32 ... GPUFMM_COMPLEX128; -1 on failure).
  function gpufmm_array_dtype(a, status) result(dtype)
    type(gpufmm_array), intent(in) :: a
    integer, optional, intent(out) :: status
    integer :: dtype
    integer(c_int) :: s, d
    d = -1
    s = c_array_dtype(a%p, d)
    dtype = -1
    if (s == GPUFMM_SUCCESS) dtype = d
    call gpufmm_check_status(s, status, 'gpufmm_array_dtype')
  end function gpufmm_array_dtype

  !> The array's rank, 1 to 3 (0 on failure).
  function gpufmm_array_rank(a, status) result(rank)
    type(gpufmm_array), intent(in) :: a
    integer, optional, intent(out) :: status
    integer :: rank
    integer(c_int) :: s, r
    r = 0
    s = c_array_rank(a%p, r)
    rank = 0
    if (s == GPUFMM_SUCCESS) rank = r
    call gpufmm_check_status(s, status, 'gpufmm_array_rank')
  end function gpufmm_array_rank

  !> The extents dims(1:3); those beyond the rank are 1 (all 0 on failure).
  function gpufmm_array_dims(a, status) result(dims)
    type(gpufmm_array), intent(in) :: a
    integer, optional, intent(out) :: status
    integer(int64) :: dims(GPUFMM_MAX_RANK)
    integer(c_int64_t) :: d(GPUFMM_MAX_RANK)
    integer(c_int) :: s
    d = 0
    s = c_array_dims(a%p, d)
    dims = 0
    if (s == GPUFMM_SUCCESS) dims = d
    call gpufmm_check_status(s, status, 'gpufmm_array_dims')
  end function gpufmm_array_dims

  !> The number of elements (-1 on failure).
  function gpufmm_array_size(a, status) result(n)
    type(gpufmm_array), intent(in) :: a
    integer, optional, intent(out) :: status
    integer(int64) :: n
    integer(c_int64_t) :: c
    integer(c_int) :: s
    c = -1
    s = c_array_size(a%p, c)
    n = -1
    if (s == GPUFMM_SUCCESS) n = c
    call gpufmm_check_status(s, status, 'gpufmm_array_size')
  end function gpufmm_array_size

  !> The raw data pointer: device memory on a GPU context (pass it to your
  !> own kernels, with gpufmm_context_stream), host memory on the CPU
  !> backend. Valid until the array is destroyed. c_null_ptr on failure, and
  !> possibly for an empty array.
  function gpufmm_array_data(a, status) result(data)
    type(gpufmm_array), intent(in) :: a
    integer, optional, intent(out) :: status
    type(c_ptr) :: data
    type(c_ptr) :: p
    integer(c_int) :: s
    p = c_null_ptr
    s = c_array_data(a%p, p)
    data = c_null_ptr
    if (s == GPUFMM_SUCCESS) data = p
    call gpufmm_check_status(s, status, 'gpufmm_array_data')
  end function gpufmm_array_data

  !> .true. if the handle is not null (a stale copy of a destroyed handle
  !> still reports .true.).
  pure logical function gpufmm_array_associated(a)
    type(gpufmm_array), intent(in) :: a
    gpufmm_array_associated = c_associated(a%p)
  end function gpufmm_array_associated

  !> The C handle (gpufmm_array_t) inside a, for C entry points without a
  !> Fortran wrapper. Do not destroy it through C.
  pure function gpufmm_array_c_ptr(a) result(p)
    type(gpufmm_array), intent(in) :: a
    type(c_ptr) :: p
    p = a%p
  end function gpufmm_array_c_ptr
"""

GENERIC_DOCS = {
    "gpufmm_array_create":
        "create(ctx, dtype, dims, a [, status]): new array, dims(1:rank) of kind int32 or int64; contents undefined",
    "gpufmm_array_wrap":
        "wrap(ctx, dtype, dims, data, a [, status]): array over memory you own (device pointer on a GPU); destroy does not free it",
    "gpufmm_array_create_like":
        "create_like(ctx, host, a [, status]): new array with the kind and shape of host (data not copied)",
    "gpufmm_array_upload": "upload(a, host [, status]): a = host (element counts must match)",
    "gpufmm_array_download": "download(a, host [, status]): host = a",
    "gpufmm_array_upload_async": "upload_async(a, host [, status]): queued upload; see the module header",
    "gpufmm_array_download_async": "download_async(a, host [, status]): queued download; see the module header",
    "gpufmm_array_copy_range":
        "copy_range(src, src_offset, dst, dst_offset, count [, status]): dst(dst_offset+i) = src(src_offset+i), "
        "i = 0..count-1; 1-BASED offsets over the elements in column-major order; integer arguments all int32 or all int64",
    "gpufmm_array_fill": "fill(a, value [, status]): every element = value",
    "gpufmm_array_axpy": "axpy(alpha, x, y [, status]): y = y + alpha*x",
    "gpufmm_array_scal": "scal(alpha, x [, status]): x = alpha*x",
    "gpufmm_array_dot": "dot(x, y, result [, status]): result = dot_product(x, y) (conjugates x when complex)",
    "gpufmm_array_nrm2": "nrm2(x, result [, status]): result = norm2(abs(x)), real of x's precision",
    "gpufmm_array_gemv": "gemv(trans, alpha, a, x, beta, y [, status]): y = alpha*op(a)*x + beta*y; trans 'N', 'T' or 'C'",
    "gpufmm_array_gemm": "gemm(transa, transb, alpha, a, b, beta, c [, status]): c = alpha*op(a)*op(b) + beta*c",
    "gpufmm_array_sum": "sum(a, result [, status]): result = sum(a) (integers wrap)",
    "gpufmm_array_min": "min(a, result [, status]): result = minval(a); not for complex; INVALID_ARGUMENT if empty",
    "gpufmm_array_max": "max(a, result [, status]): result = maxval(a); not for complex; INVALID_ARGUMENT if empty",
}


def build():
    generics = [
        ("gpufmm_array_create", ["create_%s" % t for t, _ in INTS]),
        ("gpufmm_array_wrap", ["wrap_%s" % t for t, _ in INTS]),
        ("gpufmm_array_create_like", specifics_kr("create_like")),
        ("gpufmm_array_upload", specifics_kr("upload")),
        ("gpufmm_array_download", specifics_kr("download")),
        ("gpufmm_array_upload_async", specifics_kr("upload_async")),
        ("gpufmm_array_download_async", specifics_kr("download_async")),
        ("gpufmm_array_copy_range", ["copy_range_%s" % t for t, _ in INTS]),
        ("gpufmm_array_fill", specifics_k("fill", KINDS)),
        ("gpufmm_array_axpy", specifics_k("axpy", FLOATS)),
        ("gpufmm_array_scal", specifics_k("scal", FLOATS)),
        ("gpufmm_array_dot", specifics_k("dot", FLOATS)),
        ("gpufmm_array_nrm2", ["nrm2_%s" % t for t, _, _ in NRM2]),
        ("gpufmm_array_gemv", specifics_k("gemv", FLOATS)),
        ("gpufmm_array_gemm", specifics_k("gemm", FLOATS)),
        ("gpufmm_array_sum", specifics_k("sum", KINDS)),
        ("gpufmm_array_min", specifics_k("min", ORDERED)),
        ("gpufmm_array_max", specifics_k("max", ORDERED)),
    ]
    out = [HEADER, MODULE_HEAD, "\n  ! ------------------------------------------------------------------ generic interfaces\n"]
    for name, specs in generics:
        out.extend(textwrap.wrap(GENERIC_DOCS[name], 96, initial_indent="  !> ",
                                 subsequent_indent="  !>   "))
        out.append(generic(name, specs))
        out.append("")
    out.append(c_interfaces())
    out.append("contains\n")
    out.append(COMMON)
    out.append("\n  ! ================================================================== generated specifics\n")
    for t, ft in INTS:
        out.append(stub_dims("create", t, ft))
        out.append(stub_dims("wrap", t, ft))
        out.append(stub_copy_range(t, ft))
    for tag, ftype, dtype, _ in KINDS:
        for r in RANKS:
            out.append(stub_create_like(tag, ftype, dtype, r))
            for op in ("upload", "download", "upload_async", "download_async"):
                out.append(stub_transfer(op, tag, ftype, dtype, r))
    for tag, ftype, dtype, _ in KINDS:
        out.append(stub_fill(tag, ftype, dtype))
        out.append(stub_reduce("sum", tag, ftype, dtype))
    for tag, ftype, dtype, _ in ORDERED:
        out.append(stub_reduce("min", tag, ftype, dtype))
        out.append(stub_reduce("max", tag, ftype, dtype))
    for tag, ftype, dtypes in NRM2:
        out.append(stub_nrm2(tag, ftype, dtypes))
    for tag, ftype, dtype, _ in FLOATS:
        out.append(stub_scal(tag, ftype, dtype))
        out.append(stub_axpy(tag, ftype, dtype))
        out.append(stub_dot(tag, ftype, dtype))
        out.append(stub_gemv(tag, ftype, dtype))
        out.append(stub_gemm(tag, ftype, dtype))
    out.append("\nend module gpufmm_array_mod\n")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the checked-in file is stale")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                    help="repository root (default: the script's parent directory)")
    args = ap.parse_args()
    path = os.path.join(args.root, OUT)
    text = build()
    if args.check:
        try:
            with open(path) as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current != text:
            print("%s is stale: run python3 tools/gen_fortran_arrays.py" % OUT, file=sys.stderr)
            return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    print("wrote " + os.path.normpath(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
