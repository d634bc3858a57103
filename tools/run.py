"""xlair-run: run a computation (`.mlir`, compiled on the fly, or a `.vmfb` from xlair-compile)
on numpy inputs and print or save its results.

    xlair-run prog.mlir 2.0 x.npy "[1, 2, 3]"          # inputs: .npy files or literals
    xlair-run prog.vmfb --input=x.npy --input=4xf32=1,2,3,4 -o out.npy
    xlair-run prog.vmfb --sha256=$(cat prog.vmfb.sha256) x.npy   # only that artifact
    xlair-run prog.mlir --target=vulkan x.npy
    xlair-run prog.mlir x.npy --benchmark 100           # median time of 100 calls
    xlair-run prog.mlir x.npy --interpret               # the numpy reference interpreter

An input is a `.npy` file, a Python literal (`2.5`, `[[1, 2], [3, 4]]`, `(x, y)` for a tuple
parameter; nan and inf allowed) or IREE's `DIMSxTYPE=values` form (`2x2xi32=1,2,3,4`).  Literals
are converted to the parameter's element type when no value changes kind (an int for a float
parameter is fine, a float for an int parameter is not).  Results are printed, or written with
`-o out.npy` (once per result leaf, or once: out_0.npy, out_1.npy, ... for a tuple).  With
`--replicas N` every replica gets the same inputs; the results are replica 0's leaves, then
replica 1's, ... (result[k * leaves + i]).
Exit status 1 with a diagnostic on any error.
"""
from __future__ import annotations

import argparse
import ast
import math
import pathlib
import re
import statistics
import sys
import time

import numpy as np


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="xlair-run", description=__doc__.splitlines()[0],
                 formatter_class=argparse.RawDescriptionHelpFormatter,
                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("program", help="a .mlir computation or a .vmfb artifact")
    ap.add_argument("inputs", nargs="*", help="one per parameter: a .npy file or a literal")
    ap.add_argument("--input", action="append", default=[], help="another input (after the positional ones)")
    ap.add_argument("--target", help="cpu | vulkan | cuda | rocm (default: cpu for .mlir, the artifact's "
                                     "own for .vmfb)")
    ap.add_argument("--arch", help="chip to compile a .mlir for (--cpu / --vulkan-target / --cuda-arch / "
                                   "--rocm-arch of xlair-compile)")
    ap.add_argument("--replicas", type=int, default=None, help="number of replicas (default: the artifact's, 1)")
    ap.add_argument("-o", "--output", action="append", default=[], metavar="OUT.npy",
                    help="write the results to .npy files instead of printing them")
    ap.add_argument("--benchmark", type=int, default=0, metavar="N",
                    help="after one checked call, time N calls and print the median")
    ap.add_argument("--interpret", action="store_true", help="run the numpy reference interpreter (.mlir only)")
    ap.add_argument("--no-cache", action="store_true", help="do not use the on-disk compile cache")
    ap.add_argument("--sha256", metavar="DIGEST", help="refuse a .vmfb whose sha256 (as sha256sum prints it) is "
                                                       "not DIGEST: an artifact is code, load only one you trust")
    return ap


# ----------------------------------------------------------------------------------------
# inputs
# ----------------------------------------------------------------------------------------
_NAMES = {"nan": math.nan, "inf": math.inf, "true": True, "false": False, "True": True, "False": False}
_IREE = re.compile(r"^((?:\d+x)*)([a-z]+\d*(?:<[a-z0-9]+>)?)=(.*)$", re.S)
_IREE_TYPES = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
               "si8": np.int8, "si16": np.int16, "si32": np.int32, "si64": np.int64,
               "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64,
               "f16": np.float16, "f32": np.float32, "f64": np.float64,
               "complex<f32>": np.complex64, "complex<f64>": np.complex128}


def _literal(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex, bool)):
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal(node.operand)
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        a, b = _literal(node.left), _literal(node.right)
        return a + b if isinstance(node.op, ast.Add) else a - b
    if isinstance(node, ast.List):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e) for e in node.elts)
    raise ValueError(f"not a literal: {ast.unparse(node)}")


def parse_input(text: str):
    """A numpy value (or a tuple of them) from a .npy path or a literal."""
    if text.endswith(".npy") or (pathlib.Path(text).suffix == ".npy"):
        try:
            return np.load(text, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot read {text}: {e}") from None
    m = _IREE.match(text.strip())
    if m and m.group(2) in _IREE_TYPES:
        dims = [int(d) for d in m.group(1).split("x") if d]
        dtype = np.dtype(_IREE_TYPES[m.group(2)])
        body = m.group(3).replace(",", " ").split()
        try:
            vals = [complex(v) if dtype.kind == "c" else float(v) if dtype.kind == "f"
                    else (v.lower() in ("1", "true")) if dtype.kind == "b" else int(v, 0) for v in body]
        except ValueError as e:
            raise UsageError(f"bad value in input {text!r}: {e}") from None
        n = math.prod(dims)
        if len(vals) == 1 and n != 1:
            vals = vals * n                 # IREE's splat form: 4xf32=0
        if len(vals) != n:
            raise UsageError(f"input {text!r} has {len(vals)} values for shape {dims}")
        return np.array(vals).astype(dtype).reshape(dims)
    try:
        return _literal(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, TypeError) as e:
        raise UsageError(f"input {text!r} is neither a .npy file, a literal nor DIMSxTYPE=values "
                         f"({e.msg if isinstance(e, SyntaxError) else e})") from None


def coerce(value, shape, what: str):
    """An array input (.npy, DIMSxTYPE=...) of another dtype than its parameter is converted
    when the conversion keeps every value (i32 bits for a u32 parameter, f32 for f64, ...)."""
    if shape.is_tuple and isinstance(value, (tuple, list)) and len(value) == len(shape.tuple_shapes):
        return tuple(coerce(v, s, f"{what}[{i}]") for i, (v, s) in enumerate(zip(value, shape.tuple_shapes)))
    if not isinstance(value, np.ndarray) or not shape.is_array or value.dtype == shape.dtype:
        return value
    with np.errstate(all="ignore"):
        conv = value.astype(shape.dtype)
        back = conv.astype(value.dtype)
    same = np.array_equal(back, value, equal_nan=value.dtype.kind in "fc")
    if not same or (value.dtype.kind in "fc" and shape.dtype.kind not in "fc"):
        raise UsageError(f"{what}: {value.dtype} values do not all fit {shape}")
    return conv


# ----------------------------------------------------------------------------------------
# outputs
# ----------------------------------------------------------------------------------------
def _leaves(value, shape):
    if shape.is_tuple:
        return [leaf for v, s in zip(value, shape.tuple_shapes) for leaf in _leaves(v, s)]
    return [(np.asarray(value), shape)]


def print_results(result, shape, out) -> None:
    leaves = _leaves(result, shape)
    with np.printoptions(linewidth=100):
        for i, (a, s) in enumerate(leaves):
            label = "result" if len(leaves) == 1 and not shape.is_tuple else f"result[{i}]"
            body = np.array2string(a, separator=", ") if a.ndim else repr(a.item())
            out.write(f"{label}: {s} = {body}\n")


def write_results(result, shape, paths: list[str]) -> list[str]:
    leaves = _leaves(result, shape)
    if len(paths) == 1 and len(leaves) > 1:
        p = pathlib.Path(paths[0])
        paths = [str(p.with_name(f"{p.stem}_{i}{p.suffix or '.npy'}")) for i in range(len(leaves))]
    if len(paths) != len(leaves):
        raise UsageError(f"{len(paths)} -o files for {len(leaves)} results {shape}")
    for p, (a, _) in zip(paths, leaves):
        try:
            np.save(p, a, allow_pickle=False)
        except OSError as e:
            raise UsageError(f"cannot write {p}: {e.strerror or e}") from None
    return paths


# ----------------------------------------------------------------------------------------
def _program(args):
    """(callable, parameter shapes, result shape, replica count) of the program."""
    import xlair as xla
    from xlair.tools.compile import UsageError as CompileUsage, read_computation
    path = args.program
    if path.endswith(".vmfb"):
        if args.interpret:
            raise UsageError("--interpret needs the .mlir computation, not a .vmfb")
        if args.arch:
            raise UsageError("--arch applies when compiling a .mlir; a .vmfb is already compiled")
        exe = xla.load(path, target=args.target, expected_sha256=args.sha256)
        return _replicated(exe, exe.replicas), exe.parameter_shapes, exe.result_shape, exe.replicas
    if args.sha256 is not None:
        raise UsageError("--sha256 checks a .vmfb artifact; a .mlir is compiled here")
    try:
        comp = read_computation(path)
    except CompileUsage as e:
        raise UsageError(str(e)) from None
    replicas = args.replicas or 1
    if args.interpret:
        if replicas > 1:
            fn = lambda *a: tuple(xla.interpret_replicated(comp, [list(a)] * replicas))  # noqa: E731
        else:
            fn = lambda *a: xla.interpret(comp, *a)  # noqa: E731
        return fn, comp.parameter_shapes, comp.result_shape, replicas
    exe = xla.compile(comp, target=args.target or "cpu", arch=args.arch, replicas=replicas,
                      cache=not args.no_cache)
    return _replicated(exe, exe.replicas), exe.parameter_shapes, exe.result_shape, exe.replicas


def _replicated(exe, replicas: int):
    """The executable, or for several replicas a call running them all on the same inputs
    (in threads, `Executable.run_replicated`) and returning their results in replica order."""
    if replicas == 1:
        return exe
    return lambda *a: tuple(exe.run_replicated([list(a)] * replicas))


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    from xlair import XlaError
    try:
        if args.benchmark < 0:
            raise UsageError(f"--benchmark takes a number of calls >= 1; got {args.benchmark}")
        if args.replicas is not None and args.replicas < 1:
            raise UsageError(f"--replicas must be at least 1; got {args.replicas}")
        values = [parse_input(t) for t in list(args.inputs) + list(args.input)]
        fn, params, result_shape, replicas = _program(args)
        if args.replicas is not None and args.replicas != replicas:
            raise UsageError(f"the artifact was compiled for {replicas} replica(s); --replicas says {args.replicas}")
        if len(values) != len(params):
            raise UsageError(f"the program takes {len(params)} input(s) "
                             f"({', '.join(map(str, params)) or 'none'}); got {len(values)}")
        values = [coerce(v, s, f"input {i}") for i, (v, s) in enumerate(zip(values, params))]
        result = fn(*values)
        if replicas > 1:                         # one result per replica: replica k's leaves
            from xlair import Shape
            result_shape = Shape.tuple([result_shape] * replicas)
        if args.output:
            written = write_results(result, result_shape, args.output)
            sys.stderr.write("".join(f"wrote {p}\n" for p in written))
        else:
            print_results(result, result_shape, sys.stdout)
        if args.benchmark:
            times = []
            for _ in range(args.benchmark):
                t0 = time.perf_counter()
                fn(*values)
                times.append(time.perf_counter() - t0)
            med = statistics.median(times)
            sys.stdout.write(f"benchmark: {args.benchmark} calls, median {med * 1e3:.4f} ms "
                             f"(min {min(times) * 1e3:.4f} ms, max {max(times) * 1e3:.4f} ms)\n")
    except (UsageError, XlaError) as e:
        sys.stderr.write(f"xlair-run: error: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
