"""xlair-opt: verify `.mlir` holding xla ops and run xlair and upstream MLIR passes on it.

    xlair-opt in.mlir -p xla-to-linalg
    xlair-opt in.mlir --pass-pipeline='builtin.module(xla-simplify,xla-to-linalg,canonicalize,cse)'
    xlair-opt in.mlir --split-input-file --verify-diagnostics
    xlair-opt --list-passes

Exit status 1 with a diagnostic on bad input; never a traceback.
"""
from __future__ import annotations

import argparse
import re
import sys

SPLIT = "// -----"


def _split_pipeline(text: str) -> list[str]:
    """Top-level pass names of a textual pipeline (the builtin.module(...) wrapper removed)."""
    text = text.strip()
    m = re.fullmatch(r"builtin\.module\((.*)\)", text, re.S)
    if m:
        text = m.group(1)
    items, depth, cur = [], 0, ""
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        items.append(cur.strip())
    return items


def run_pipeline(module, items: list[str]) -> None:
    """Run pass items in order: xlair passes by name, runs of upstream passes through MLIR's
    pass manager."""
    from xlair.dialect.ir import context, ir, lock, passmanager
    from xlair.lowering.pipeline import PASSES, run

    upstream: list[str] = []

    def flush():
        if upstream:
            with lock, context():
                pm = passmanager.PassManager.parse(f"builtin.module({','.join(upstream)})")
                pm.run(module.operation)
            upstream.clear()

    for item in items:
        if item in PASSES:
            flush()
            run(module, item)
        else:
            upstream.append(item)
    flush()


def _expected(chunk: str, first_line: int):
    """expected-error annotations: (line, message) pairs (line numbers of the whole file)."""
    out = []
    for i, line in enumerate(chunk.splitlines()):
        for m in re.finditer(r"expected-error\s*(@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}", line):
            off = m.group(2)
            delta = 0 if off is None else (-1 if off == "above" else 1 if off == "below" else int(off))
            out.append((first_line + i + delta, m.group(3)))
    return out


def process(chunk: str, name: str, first_line: int, args) -> tuple[int, str]:
    """Returns (status, output text) for one chunk of input."""
    from xlair.dialect.checks import XlaError
    from xlair.dialect.ir import context, ir, lock
    from xlair.dialect.verify import verify

    padded = "\n" * (first_line - 1) + chunk        # keep the file's line numbers in locations
    expected = _expected(chunk, first_line) if args.verify_diagnostics else []
    try:
        with lock, context():
            try:
                module = ir.Module.parse(padded)
                module.operation.attributes  # noqa: B018
            except ir.MLIRError as e:
                diags = [(d.location, d.message) for d in getattr(e, "error_diagnostics", [])]
                raise _Diag(diags or [(None, str(e))]) from None
        with lock, context():
            _rename_locations(module, name)
        verify(module)
        items = []
        if args.pass_pipeline:
            items += _split_pipeline(args.pass_pipeline)
        for p in args.passes or []:
            items += _split_pipeline(p)
        run_pipeline(module, items)
        with lock, context():
            text = module.operation.get_asm(enable_debug_info=args.mlir_print_debuginfo)
        if expected:
            return 1, f"{name}: expected errors were not produced: {expected}\n"
        return 0, text
    except (XlaError, _Diag) as e:
        diags = e.diags if isinstance(e, _Diag) else [(e.location, e.message)]
        return _check_diags(diags, expected, name, args)
    except Exception as e:  # MLIR errors from passes, anything else: a diagnostic, not a traceback
        msg = "; ".join(str(d) for d in getattr(e, "error_diagnostics", [])) or str(e)
        return _check_diags([(None, msg)], expected, name, args)


class _Diag(Exception):
    def __init__(self, diags):
        self.diags = diags


def _line_of(loc) -> int | None:
    if loc is None:
        return None
    m = re.search(r":(\d+)(:\d+)?\)?$", str(loc).rstrip(")") + ")") or re.search(r":(\d+)", str(loc))
    return int(m.group(1)) if m else None


def _check_diags(diags, expected, name, args):
    text = "".join(f"{name}:{_line_of(loc) or '?'}: error: {msg}\n" for loc, msg in diags)
    if not args.verify_diagnostics:
        return 1, text
    if not expected:
        return 1, f"unexpected error: {text}"
    unmatched = []
    for line, want in expected:
        if not any(want in msg and (_line_of(loc) in (None, line)) for loc, msg in diags):
            unmatched.append((line, want))
    if unmatched:
        return 1, f"expected error(s) not produced: {unmatched}; got: {text}"
    return 0, ""


def _rename_locations(module, name):
    """Nothing to do: the parser names the buffer; kept for symmetry with file inputs."""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="xlair-opt", description=__doc__.splitlines()[0])
    ap.add_argument("input", nargs="?", default="-")
    ap.add_argument("-p", "--passes", action="append", help="comma-separated pass names")
    ap.add_argument("--pass-pipeline", help="textual pipeline, e.g. 'builtin.module(xla-to-linalg,cse)'")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--split-input-file", action="store_true")
    ap.add_argument("--verify-diagnostics", action="store_true")
    ap.add_argument("--mlir-print-debuginfo", action="store_true")
    ap.add_argument("--list-passes", action="store_true")
    args = ap.parse_args(argv)
    try:
        if args.list_passes:
            from xlair.lowering.pipeline import PASSES
            for n, fn in sorted(PASSES.items()):
                print(f"{n:22s} {(fn.__doc__ or '').strip().splitlines()[0] if fn.__doc__ else ''}")
            return 0
        src = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
    except OSError as e:
        print(f"xlair-opt: error: {e}", file=sys.stderr)
        return 1
    name = "<stdin>" if args.input == "-" else args.input
    chunks = src.split(SPLIT) if args.split_input_file else [src]
    status, outs, line = 0, [], 1
    for chunk in chunks:
        st, text = process(chunk, name, line, args)
        line += chunk.count("\n")
        status |= st
        if st and not args.verify_diagnostics:
            sys.stderr.write(text)
        elif st:
            sys.stderr.write(text)
        elif text:
            outs.append(text)
    out = ("\n" + SPLIT + "\n").join(outs)
    if args.output == "-":
        sys.stdout.write(out)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(out)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
