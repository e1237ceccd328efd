#!/usr/bin/env python3
"""The GPUFMM_* constants of a C header (bindings/c/gpufmm.h), for the fypp
templates that tools/gen-fortran expands.

constants(path) reads the header, with every header it includes by
`#include "name"` put in place of the directive (looked up beside the
including header, then in HEADER_DIRS: gpufmm.h includes the core's
gpufmm_types.h), and returns its constants in groups, in the header's order: every member of every `enum` whose name starts with GPUFMM_
(a member without `= value` counts on from the one before, as in C), and
every object-like `#define GPUFMM_NAME value` (include guards without a value
and function-like macros are left out). A value may be any C constant
expression of integers and of constants defined before it; floating-point
values and string literals are kept too. A define whose value is none of
these stops the generator with a message, so that nothing is dropped
silently. The comment that starts on the line of a constant becomes its doc.
A `#define GPUFMM_NAME { ... }` is an initializer, not a constant.

fields(path, struct) returns the members of `struct <struct> { ... }` in
order, with their Fortran types (the bind(c) mirror of the struct), and
initializer(path, define, struct) the values of the initializer `define`
given to those members in order, as Fortran values (a GPUFMM_* constant by
its name), so that a Fortran derived type takes its default values from the
table the C library fills its options from (gpufmm_laplace_options_init:
GPUFMM_LAPLACE_OPTIONS_DEFAULT).

    python3 tools/gpufmm_h.py [HEADER]   # prints what it finds
    python3 tools/gpufmm_h.py --self-test
"""
import collections
import os
import re
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name; Fortran type; Fortran value; doc (list of lines, maybe empty)
Constant = collections.namedtuple("Constant", "name ftype value doc")
# source ("enum gpufmm_status_e" or "#define"); list of Constant
Group = collections.namedtuple("Group", "source constants")
# member of a struct: name; C type; Fortran type; doc (list of lines, maybe empty)
Field = collections.namedtuple("Field", "name ctype ftype doc")

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(GPUFMM_\w+)(?![\w(])[ \t]*((?:\\\n|[^\n])*)", re.M)
ENUM = re.compile(r"\benum\b\s*(\w*)\s*\{([^}]*)\}")
ITEM = re.compile(r"\s*(\w+)\s*(?:=\s*(.*\S))?\s*$", re.S)
INT_SUFFIX = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b")
INT_EXPR = re.compile(r"^[\s\d()+\-*/%<>|&^~xXa-fA-F]*$")
FLOAT = re.compile(r"^\(?\s*([+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)[fFlL]?\s*\)?$")
STRING = re.compile(r'^"((?:[^"\\]|\\.)*)"$')
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*$', re.M)
MEMBER = re.compile(r"^\s*((?:const\s+)?\w+)\s+(\w+(?:\s*,\s*\w+)*)\s*$")
# C types of struct members -> Fortran (iso_c_binding) types
FTYPES = {"double": "real(c_double)", "float": "real(c_float)", "int": "integer(c_int)",
          "int64_t": "integer(c_int64_t)", "int32_t": "integer(c_int32_t)"}
DOC_WIDTH = 90
# where the installed headers live in the repository (the include path of gpufmm.h)
HEADER_DIRS = ["bindings/c", "src/cxx/core"]


def _line_of(text, pos):
    return text.count("\n", 0, pos)


def _doc(text, comments, pos):
    """The comment that starts on the line of pos, after it, as doc lines."""
    line = _line_of(text, pos)
    for start, body in comments:
        if start > pos and _line_of(text, start) == line:
            words = " ".join(body.split())
            return textwrap.wrap(words, DOC_WIDTH) if words else []
    return []


def _value(name, expr, known):
    """(Fortran type, Fortran value) of a C constant expression."""
    expr = " ".join(expr.replace("\\\n", " ").split())
    m = STRING.match(expr)
    if m:
        return "character(len=*)", "'" + m.group(1).replace("'", "''") + "'"
    m = FLOAT.match(expr)
    if m and not re.fullmatch(r"[+-]?\d+", m.group(1)):
        return "real(c_double)", m.group(1) + "_c_double"
    py = re.sub(r"\bGPUFMM_\w+\b", lambda w: "(%d)" % known[w.group(0)] if w.group(0) in known
                else w.group(0), expr)
    py = INT_SUFFIX.sub(r"\1", py)
    if not INT_EXPR.match(py) or not py.strip():
        raise ValueError("%s: cannot read the value '%s' as a constant expression" % (name, expr))
    py = py.replace("/", "//")
    try:
        v = eval(py, {"__builtins__": {}}, {})  # only digits and operators reach here
    except Exception as exc:
        raise ValueError("%s: cannot evaluate '%s': %s" % (name, expr, exc)) from exc
    if not isinstance(v, int):
        raise ValueError("%s: '%s' is not an integer" % (name, expr))
    ftype = "integer(c_int)" if -2**31 <= v < 2**31 else "integer(c_int64_t)"
    return ftype, str(v) if ftype == "integer(c_int)" else "%d_c_int64_t" % v


def parse(text):
    """Groups of constants of header text (see the module doc)."""
    comments, code = _blank_comments(text)
    # (position, source, name, expression: None for "the enum's previous value + 1")
    found = []
    for m in DEFINE.finditer(code):
        if m.group(2).strip() and not m.group(2).lstrip().startswith("{"):  # an initializer: initializer()
            found.append((m.start(1), "#define", m.group(1), m.group(2)))
    for m in ENUM.finditer(code):
        offset = m.start(2)
        for i, item in enumerate(m.group(2).split(",")):
            im = ITEM.match(item)
            if im and im.group(1).startswith("GPUFMM_"):
                expr = im.group(2) if im.group(2) or i > 0 else "0"
                found.append((offset + im.start(1), "enum " + (m.group(1) or "(anonymous)"),
                              im.group(1), expr))
            offset += len(item) + 1
    found.sort()
    known, groups, next_value = {}, [], 0
    for pos, source, name, expr in found:
        if expr is None:
            ftype, value = "integer(c_int)", str(next_value)
        else:
            ftype, value = _value(name, expr, known)
        if ftype.startswith("integer"):
            known[name] = int(value.split("_")[0])
            next_value = known[name] + 1
        if not groups or groups[-1].source != source:
            groups.append(Group(source, []))
        groups[-1].constants.append(Constant(name, ftype, value, _doc(text, comments, pos)))
    return groups


def _read(path):
    """Text of the file at path (relative to the repository root), None if there is none."""
    try:
        with open(os.path.join(ROOT, path)) as f:
            return f.read()
    except FileNotFoundError:
        return None


def expand(path, read=_read):
    """Text of the header at path with its `#include "name"` directives replaced
    by the included headers (expanded likewise)."""
    def included(m):
        for d in [os.path.dirname(path)] + HEADER_DIRS:
            name = os.path.normpath(os.path.join(d, m.group(1)))
            if read(name) is not None:
                return expand(name, read)
        raise ValueError("%s: cannot find the included header '%s'" % (path, m.group(1)))
    return INCLUDE.sub(included, read(path))


def constants(path):
    """Groups of constants of the header at path (relative to the repository root)."""
    return parse(expand(path))


def _blank_comments(text):
    """(comments as (start, body), text with the comments blanked out, keeping
    every position and line break)."""
    comments = [(m.start(), m.group(0)[2:-2] if m.group(0).startswith("/*") else m.group(0)[2:])
                for m in COMMENT.finditer(text)]
    return comments, COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def parse_fields(text, struct):
    """The members of `struct <struct> { ... }` in header text (see the module doc)."""
    comments, code = _blank_comments(text)
    m = re.search(r"\bstruct\s+%s\s*\{([^}]*)\}" % re.escape(struct), code)
    if not m:
        raise ValueError("cannot find struct %s" % struct)
    out, offset = [], m.start(1)
    for decl in m.group(1).split(";"):
        if decl.strip():
            dm = MEMBER.match(decl)
            if not dm or dm.group(1) not in FTYPES:
                raise ValueError("struct %s: cannot read the member '%s' (types: %s)"
                                 % (struct, " ".join(decl.split()), ", ".join(FTYPES)))
            for name in dm.group(2).split(","):
                name = name.strip()
                pos = offset + decl.index(name)
                out.append(Field(name, dm.group(1), FTYPES[dm.group(1)], _doc(text, comments, pos)))
        offset += len(decl) + 1
    return out


def parse_initializer(text, define, struct):
    """[(Field, Fortran value)] of the initializer `define` of struct `struct`
    in header text (see the module doc)."""
    members = parse_fields(text, struct)
    _, code = _blank_comments(text)
    m = [d for d in DEFINE.finditer(code) if d.group(1) == define]
    if not m:
        raise ValueError("cannot find the initializer %s" % define)
    body = " ".join(m[0].group(2).replace("\\\n", " ").split())
    if not (body.startswith("{") and body.endswith("}")):
        raise ValueError("%s: '%s' is not an initializer { ... }" % (define, body))
    values = [v.strip() for v in body[1:-1].split(",")]
    if values and values[-1] == "":
        values.pop()
    if len(values) != len(members):
        raise ValueError("%s: %d values for the %d members of struct %s"
                         % (define, len(values), len(members), struct))
    known = {c.name for g in parse(text) for c in g.constants}
    out = []
    for f, v in zip(members, values):
        if re.fullmatch(r"GPUFMM_\w+", v):
            if v not in known:
                raise ValueError("%s: member %s: %s is not a constant of the header" % (define, f.name, v))
            out.append((f, v))
            continue
        ftype, value = _value("%s.%s" % (define, f.name), v, {})
        kind = f.ftype[f.ftype.index("(") + 1:-1]  # c_double, c_int, ...
        if f.ftype.startswith("real") and ftype.startswith("real"):
            value = value.split("_c_")[0] + "_" + kind
        elif f.ftype.startswith("real") and ftype.startswith("integer"):
            value = value.split("_c_")[0] + ".0_" + kind
        elif f.ftype.startswith("integer") and ftype.startswith("integer") and \
                (kind == "c_int64_t" or ftype == "integer(c_int)"):
            value = value.split("_c_")[0] + ("_c_int64_t" if kind == "c_int64_t" else "")
        else:
            raise ValueError("%s: member %s (%s): the value '%s' does not fit" % (define, f.name, f.ctype, v))
        out.append((f, value))
    return out


def fields(path, struct):
    """The members of struct `struct` of the header at path (relative to the repository root)."""
    return parse_fields(expand(path), struct)


def initializer(path, define, struct):
    """The values of the initializer `define` of struct `struct` of the header at path."""
    return parse_initializer(expand(path), define, struct)


SELF_TEST = r"""
#ifndef GPUFMM_H
#define GPUFMM_H
#define GPUFMM_A (-1)      /* minus one */
#define GPUFMM_B 0x10u
#define GPUFMM_C (GPUFMM_B << 2 | 1) /* uses B,
                                       on two lines */
#define GPUFMM_BIT(x) (1 << (x))
#define GPUFMM_BIG 4294967296LL
#define GPUFMM_EPS 1e-6
#define GPUFMM_NAME "it's"
typedef enum gpufmm_kernel_e {
  GPUFMM_KERNEL_LAPLACE,          /* 1/r */
  GPUFMM_KERNEL_YUKAWA = 4,
  GPUFMM_KERNEL_REG, GPUFMM_KERNEL_LAST = GPUFMM_KERNEL_REG + GPUFMM_B
} gpufmm_kernel_t;
typedef struct gpufmm_opts_s {
  double eps;         /* error */
  int kernel, n;
  int64_t big;
  double pad;
} gpufmm_opts_t;
#define GPUFMM_OPTS_DEFAULT {  /* an initializer, not a constant */ \
    1e-6,                      /* eps */                            \
    GPUFMM_KERNEL_YUKAWA, -1, 3, 2}
#endif
"""


def self_test():
    got = [(g.source, c.name, c.ftype, c.value, c.doc) for g in parse(SELF_TEST) for c in g.constants]
    want = [
        ("#define", "GPUFMM_A", "integer(c_int)", "-1", ["minus one"]),
        ("#define", "GPUFMM_B", "integer(c_int)", "16", []),
        ("#define", "GPUFMM_C", "integer(c_int)", "65", ["uses B, on two lines"]),
        ("#define", "GPUFMM_BIG", "integer(c_int64_t)", "4294967296_c_int64_t", []),
        ("#define", "GPUFMM_EPS", "real(c_double)", "1e-6_c_double", []),
        ("#define", "GPUFMM_NAME", "character(len=*)", "'it''s'", []),
        ("enum gpufmm_kernel_e", "GPUFMM_KERNEL_LAPLACE", "integer(c_int)", "0", ["1/r"]),
        ("enum gpufmm_kernel_e", "GPUFMM_KERNEL_YUKAWA", "integer(c_int)", "4", []),
        ("enum gpufmm_kernel_e", "GPUFMM_KERNEL_REG", "integer(c_int)", "5", []),
        ("enum gpufmm_kernel_e", "GPUFMM_KERNEL_LAST", "integer(c_int)", "21", []),
    ]
    bad = [(g, w) for g, w in zip(got, want) if g != w] + [(g, None) for g in got[len(want):]] + \
        [(None, w) for w in want[len(got):]]
    for g, w in bad:
        print("gpufmm_h self-test: got %s, want %s" % (g, w))
    files = {"a/top.h": '#include <stdint.h>\n#include "mid.h" /* x */\n#define GPUFMM_Z 3\n',
             "a/mid.h": '#include "low.h"\n#define GPUFMM_Y 2\n',
             "bindings/c/low.h": "#define GPUFMM_X 1\n"}
    got = [c.name for g in parse(expand("a/top.h", files.get)) for c in g.constants]
    if got != ["GPUFMM_X", "GPUFMM_Y", "GPUFMM_Z"]:
        print("gpufmm_h self-test: included headers gave %s" % got)
        bad.append(None)
    got = [(f.name, f.ftype, v, f.doc) for f, v in parse_initializer(SELF_TEST, "GPUFMM_OPTS_DEFAULT",
                                                                       "gpufmm_opts_s")]
    want = [("eps", "real(c_double)", "1e-6_c_double", ["error"]),
            ("kernel", "integer(c_int)", "GPUFMM_KERNEL_YUKAWA", []), ("n", "integer(c_int)", "-1", []),
            ("big", "integer(c_int64_t)", "3_c_int64_t", []), ("pad", "real(c_double)", "2.0_c_double", [])]
    if got != want:
        print("gpufmm_h self-test: the initializer gave %s, want %s" % (got, want))
        bad.append(None)
    for struct, define in [("gpufmm_opts_s", "GPUFMM_A"), ("gpufmm_none_s", "GPUFMM_OPTS_DEFAULT")]:
        try:
            parse_initializer(SELF_TEST, define, struct)
            print("gpufmm_h self-test: initializer %s of %s was not refused" % (define, struct))
            bad.append(None)
        except ValueError:
            pass
    try:
        parse("#define GPUFMM_X foo(3)\n")
        print("gpufmm_h self-test: an unreadable value was not reported")
        bad.append(None)
    except ValueError:
        pass
    print("gpufmm_h self-test: %s" % ("FAILED" if bad else "passed"))
    return 1 if bad else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    for g in constants(argv[1] if len(argv) > 1 else "bindings/c/gpufmm.h"):
        print(g.source)
        for c in g.constants:
            print("  %s %s = %s  %s" % (c.ftype, c.name, c.value, " ".join(c.doc)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
