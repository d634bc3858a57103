"""xlair-opt: verify `.mlir` holding xla ops and run xlair and upstream MLIR passes on it.

    xlair-opt in.mlir                          # parse, verify, print
    xlair-opt in.mlir -p xla-to-linalg
    xlair-opt in.mlir --pass-pipeline='builtin.module(xla-simplify,xla-to-linalg{target=cpu},canonicalize,cse)'
    xlair-opt in.mlir --split-input-file --verify-diagnostics
    xlair-opt --list-passes
    xlair-opt --import-stablehlo jax_export.mlir -p xla-to-linalg

The input holds `xla.*` ops in MLIR's generic form beside ops of any dialect IREE's MLIR
registers (func, arith, linalg, ...).  It is verified with MLIR's structural rules and every
xla op with its record's shape rule; then the passes run in order: xlair's own by name, and
runs of upstream passes through MLIR's pass manager.

Bad input (a parse error, a broken rule, a failing pass, a file that is not text) gives the
diagnostic `file:line:col: error: message` on stderr and exit status 1, never a traceback.
"""
from __future__ import annotations

import argparse
import dataclasses
import re
import sys

from xlair.dialect.checks import XlaError
from xlair.lowering.pipeline import plan, run_steps, split_pipeline

SPLIT = re.compile(r"^// -----.*$", re.M)
SEPARATOR = "// -----"
KINDS = ("error", "warning", "remark", "note")
_EXPECTED = re.compile(r"expected-(error|warning|remark|note)\s*(?:@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}")


class UsageError(Exception):
    """A bad command line or an unreadable input: reported once, exit status 1.  `located`
    messages already start with `file:line: error:`."""

    def __init__(self, message: str, located: bool = False):
        super().__init__(message)
        self.located = located


@dataclasses.dataclass
class Diag:
    kind: str               # error | note
    message: str
    line: int | None = None
    col: int | None = None

    def render(self, name: str) -> str:
        where = name if self.line is None else f"{name}:{self.line}" + (f":{self.col}" if self.col else "")
        return f"{where}: {self.kind}: {self.message}\n"


class _Failed(Exception):
    def __init__(self, diags: list[Diag]):
        super().__init__("; ".join(d.message for d in diags))
        self.diags = diags


# ----------------------------------------------------------------------------------------
# diagnostics
# ----------------------------------------------------------------------------------------
_LOC = re.compile(r'loc\("[^"]*":(\d+):(\d+)')


def _line_col(loc) -> tuple[int | None, int | None]:
    if loc is None:
        return None, None
    m = _LOC.search(str(loc))
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.search(r":(\d+)(?::(\d+))?\)?$", str(loc))
    if m:
        return int(m.group(1)), int(m.group(2)) if m.group(2) else None
    return None, None


def _mlir_diags(e) -> list[Diag]:
    """The diagnostics an MLIRError carries (with their notes), or its text."""
    out = []
    for d in getattr(e, "error_diagnostics", None) or []:
        out.extend(_from_info(d, "error"))
    return out or [Diag("error", " ".join(str(e).split()))]


def _from_info(d, kind) -> list[Diag]:
    line, col = _line_col(d.location)
    out = [Diag(kind, str(d.message), line, col)]
    for n in getattr(d, "notes", None) or []:
        out.extend(_from_info(n, "note"))
    return out


def _xla_diag(e) -> Diag:
    line, col = _line_col(getattr(e, "location", None))
    return Diag("error", e.message if hasattr(e, "message") else str(e), line, col)


def expected_diags(chunk: str, first_line: int) -> list[tuple[str, int, str]]:
    """expected-<kind>[@offset] {{message}} annotations as (kind, line, message), line numbers
    of the whole file."""
    out = []
    for i, line in enumerate(chunk.splitlines()):
        for m in _EXPECTED.finditer(line):
            off = m.group(2)
            delta = 0 if off is None else -1 if off == "above" else 1 if off == "below" else int(off)
            out.append((m.group(1), first_line + i + delta, m.group(3)))
    return out


def check_expected(diags: list[Diag], expected, name: str) -> str:
    """mlir-opt's --verify-diagnostics: every produced diagnostic expected (same kind, line and
    message containing the text) and every expectation produced.  Returns the complaints."""
    complaints = []
    used = [False] * len(expected)
    for d in diags:
        hit = next((i for i, (k, ln, msg) in enumerate(expected)
                    if not used[i] and k == d.kind and ln == d.line and msg in d.message), None)
        if hit is None:
            if d.kind == "note":        # notes need no expectation (as in mlir-opt)
                continue
            complaints.append(f"{name}:{d.line or '?'}: error: unexpected {d.kind}: {d.message}\n")
        else:
            used[hit] = True
    for (k, ln, msg), u in zip(expected, used):
        if not u:
            complaints.append(f"{name}:{ln}: error: expected {k} \"{msg}\" was not produced\n")
    return "".join(complaints)


# ----------------------------------------------------------------------------------------
# one input
# ----------------------------------------------------------------------------------------
def process(chunk: str, first_line: int, steps, args) -> tuple[str | None, list[Diag]]:
    """(output text, []) or (None, diagnostics) for one chunk of the input."""
    from xlair.dialect.ir import context, ir, lock
    from xlair.dialect.verify import verify

    padded = "\n" * (first_line - 1) + chunk        # diagnostics carry the file's line numbers
    try:
        with lock, context():
            try:
                module = ir.Module.parse(padded)
            except ir.MLIRError as e:
                raise _Failed(_mlir_diags(e)) from None
            try:
                module.operation.verify()
            except ir.MLIRError as e:
                raise _Failed(_mlir_diags(e)) from None
            if getattr(args, "import_stablehlo", False):     # StableHLO in: xla ops out
                from xlair.stablehlo import import_module
                module = import_module(module).module
            verify(module)
        run_steps(module, steps)
        with lock, context():
            try:
                module.operation.verify()
            except ir.MLIRError as e:
                raise _Failed([Diag("error", "the passes left invalid IR")] + _mlir_diags(e)) from None
            text = module.operation.get_asm(enable_debug_info=args.mlir_print_debuginfo,
                                            pretty_debug_info=args.mlir_pretty_debuginfo,
                                            print_generic_op_form=args.mlir_print_op_generic,
                                            large_elements_limit=args.mlir_elide_elementsattrs_if_larger)
        return text, []
    except _Failed as e:
        return None, e.diags
    except XlaError as e:
        return None, [_xla_diag(e)]
    except Exception as e:  # noqa: BLE001  (MLIR errors from passes, bugs: a diagnostic, not a traceback)
        from xlair.dialect.ir import ir as _ir
        if isinstance(e, _ir.MLIRError):
            return None, _mlir_diags(e)
        return None, [Diag("error", f"internal error ({type(e).__name__}): {e}")]


def read_input(path: str) -> tuple[str, str]:
    """(display name, text); UsageError when unreadable or not UTF-8 text."""
    name = "<stdin>" if path == "-" else path
    try:
        data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    except OSError as e:
        raise UsageError(f"cannot read {name}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise UsageError(f"{name}:{line}: error: not UTF-8 text (byte 0x{data[e.start]:02x} "
                         f"at offset {e.start})", located=True) from None
    if "\0" in text:
        line = text[:text.index("\0")].count("\n") + 1
        raise UsageError(f"{name}:{line}: error: NUL byte in the input (not MLIR text)", located=True)
    return name, text


def _chunks(text: str, split: bool) -> list[tuple[str, int]]:
    """(chunk, first line) pieces of the input."""
    if not split:
        return [(text, 1)]
    out, start, line = [], 0, 1
    for m in SPLIT.finditer(text):
        piece = text[start:m.start()]
        out.append((piece, line))
        line += piece.count("\n")
        start = m.end()
    out.append((text[start:], line))
    return out


def _with_name(text: str, name: str) -> str:
    """Locations printed by --mlir-print-debuginfo name the input (the parser calls it "-")."""
    return text.replace('loc("-":', f'loc({_quote(name)}:')


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ----------------------------------------------------------------------------------------
# command line
# ----------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    def error(self, message):           # usage errors: exit status 1, like mlir-opt
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def pass_descriptions() -> dict[str, str]:
    """name -> one line: the pass function's docstring, else its line in the pipeline module's."""
    from xlair.lowering import pipeline
    table = {}
    for line in (pipeline.__doc__ or "").splitlines():
        m = re.match(r"\s+([a-z][\w-]*)\s{2,}(\S.*)$", line)
        if m:
            table[m.group(1)] = m.group(2).strip()
    out = {}
    for n, fn in sorted(pipeline.PASSES.items()):
        doc = (fn.__doc__ or "").strip().splitlines()
        out[n] = doc[0] if doc else table.get(n, "")
    return out


def list_passes(out) -> None:
    out.write("xlair passes (they run on the whole module):\n")
    for n, doc in pass_descriptions().items():
        out.write(f"  {n:22s} {doc}\n")
    out.write("\nUpstream MLIR passes (any pass registered in IREE's compiler: canonicalize, cse,\n"
              "symbol-dce, inline, func.func(linalg-fuse-elementwise-ops), ...) mix with them in\n"
              "-p / --pass-pipeline; `iree-opt --help` lists them.\n")


def main(argv=None) -> int:
    ap = _Parser(prog="xlair-opt", description=__doc__.splitlines()[0],
                 formatter_class=argparse.RawDescriptionHelpFormatter,
                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' or nothing: stdin)")
    ap.add_argument("-p", "--passes", action="append", default=[],
                    help="passes to run: comma-separated names or a builtin.module(...) pipeline (repeatable)")
    ap.add_argument("--pass-pipeline", help="textual pipeline, e.g. 'builtin.module(xla-to-linalg,cse)'")
    ap.add_argument("-o", "--output", default="-", help="output file ('-': stdout)")
    ap.add_argument("--split-input-file", action="store_true",
                    help="process each '// -----'-separated piece of the input on its own")
    ap.add_argument("--verify-diagnostics", action="store_true",
                    help="check the diagnostics against expected-error {{...}} comments")
    ap.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    ap.add_argument("--mlir-pretty-debuginfo", action="store_true", help="print locations inline")
    ap.add_argument("--mlir-print-op-generic", action="store_true", help="print every op in generic form")
    ap.add_argument("--mlir-elide-elementsattrs-if-larger", type=int, default=None, metavar="N",
                    help="elide constants with more than N elements")
    ap.add_argument("--list-passes", action="store_true", help="list the xlair passes and exit")
    ap.add_argument("--import-stablehlo", action="store_true",
                    help="the input is StableHLO: convert it to xla ops (@main, or the only public function) "
                         "before verifying and running passes")
    args = ap.parse_args(argv)
    try:
        if args.list_passes:
            list_passes(sys.stdout)
            return 0
        try:       # the library's pipeline parser (lowering/pipeline.py)
            items = split_pipeline(args.pass_pipeline) if args.pass_pipeline else []
            for p in args.passes:
                items += split_pipeline(p)
            steps = plan(items)
        except XlaError as e:
            raise UsageError(str(e)) from None
        name, text = read_input(args.input)
    except UsageError as e:
        sys.stderr.write(f"{e}\n" if e.located else f"xlair-opt: error: {e}\n")
        return 1

    status, outs = 0, []
    for chunk, first in _chunks(text, args.split_input_file):
        out, diags = process(chunk, first, steps, args)
        if args.verify_diagnostics:
            complaints = check_expected(diags, expected_diags(chunk, first), name)
            if complaints:
                status = 1
                sys.stderr.write(complaints)
        elif diags:
            status = 1
            sys.stderr.write("".join(d.render(name) for d in diags))
        if out is not None:
            outs.append(_with_name(out, name) if args.mlir_print_debuginfo or args.mlir_pretty_debuginfo
                        else out)
    result = ("\n" + SEPARATOR + "\n").join(o.rstrip("\n") + "\n" for o in outs) if outs else ""
    try:
        if args.output == "-":
            sys.stdout.write(result)
            sys.stdout.flush()
        else:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(result)
    except OSError as e:
        sys.stderr.write(f"xlair-opt: error: cannot write {args.output}: {e.strerror or e}\n")
        return 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
