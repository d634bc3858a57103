"""The StableHLO conformance suites as xlair test cases.

Two suites, read from $XLAIR_CONFORMANCE_DIR (default /work/shared/conformance/stablehlo),
never copied into the repository (Apache-2.0, see their LICENSE):

- `interpret/*.mlir`: StableHLO's reference-interpreter tests, cases split by `// -----`;
  a test function checks values with `check.expect_eq_const`, `check.expect_almost_eq_const`,
  `check.expect_eq`, `check.expect_almost_eq`, `check.expect_close`.
- `testdata/*.mlir`: JAX-generated programs; `@main` computes from `@inputs()` and checks
  against `@expected()` with `stablehlo.custom_call @check.expect_close|expect_eq|expect_almost_eq`.

A case becomes a Computation whose results are the checked values: the check ops are taken
out (the `check` dialect has no Python parser, so the interpret suite's checks are first
rewritten into generic unregistered ops), the test function returns what they checked, and
the expected values are computed apart, by xlair's numpy reference interpreter on the
expected constants / `@expected()`.  testdata's `@inputs()` become parameters, so the
compiled program computes at run time instead of folding constants.

`interpreter.run_parallel` (the interpret suite's multi-process tests) runs its processes as
xlair replicas when every process runs the same program with one partition
(`Executable.run_replicated`, the replica count also given to the importer as
`mhlo.num_replicas`), or as executables called at the same time from threads when each
process has its own program without collectives (Send/Recv meet in the host); the
arguments are computed by the reference interpreter, `infeed=` items go to every replica's
infeed queue.  Several partitions per replica are unsupported (xlair runs one).

The comparisons are the StableHLO interpreter's own: expect_eq exact (NaN equal to NaN),
expect_almost_eq(_const) within an absolute tolerance (default 1e-4; 1e-3 for testdata's
custom_call), same sign, NaN equal to NaN; expect_close at most 3 ULP apart.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import pathlib
import re
import time

import numpy as np

import xlair
from xlair.dialect.checks import XlaError
from xlair.dialect.ir import context, ir, lock
from xlair.stablehlo import Unsupported, import_module

SUITE_DIR = pathlib.Path(os.environ.get("XLAIR_CONFORMANCE_DIR", "/work/shared/conformance/stablehlo"))
SUITES = ("interpret", "testdata")


def suite_files(suite: str) -> list[str]:
    """Files of a suite, relative to its directory, sorted: interpret/ with its chlo/ tests;
    testdata/'s top level (its dynamic/ and quantized/ folders are serialization tests of
    shape-polymorphic and quantized programs, without value checks or outside XLA's types)."""
    root = SUITE_DIR / suite
    if not root.is_dir():
        return []
    files = root.rglob("*.mlir") if suite == "interpret" else root.glob("*.mlir")
    return sorted(str(p.relative_to(root)) for p in files)


@dataclasses.dataclass
class Check:
    kind: str                  # "eq" | "almost_eq" | "close" | "run"
    index: int                 # which result of the case's computation is checked
    expected: object = None    # numpy value (or tuple) ...
    expected_index: int | None = None     # ... or another result of the computation
    tolerance: float = 1e-4
    max_ulp: int = 3
    min_ulp: int = 0


@dataclasses.dataclass
class Case:
    suite: str
    file: str
    name: str                  # file, or file:function for the interpret suite
    status: str = "pending"    # pass | fail | unsupported | pending
    reason: str = ""
    stage: str = ""            # import | compile | run | compare
    comp: object = None
    args: list = dataclasses.field(default_factory=list)
    checks: list = dataclasses.field(default_factory=list)
    nresults: int = 1          # results of the computation (a tuple when more than one)
    op: str = ""               # the op named by an Unsupported / XlaError, if any
    seconds: float = 0.0
    parallel: "Parallel | None" = None     # a case of interpreter.run_parallel (run on its own)

    def done(self, status: str, reason: str = "", stage: str = "") -> "Case":
        self.status, self.reason, self.stage = status, reason, stage
        self.comp = None
        self.args = []
        self.parallel = None
        return self

    def record(self) -> dict:
        return {"suite": self.suite, "file": self.file, "name": self.name, "status": self.status,
                "reason": self.reason, "stage": self.stage, "op": self.op, "seconds": round(self.seconds, 3)}


def _error_case(case: Case, e: Exception, stage: str) -> Case:
    if isinstance(e, Unsupported):
        case.op = e.op or ""
        return case.done("unsupported", _one_line(str(e)), stage)
    if isinstance(e, XlaError):
        case.op = getattr(e, "op", "") or ""
        return case.done("fail", _one_line(str(e)), stage)
    return case.done("fail", f"{type(e).__name__}: {_one_line(str(e))}", stage)


def _one_line(s: str, limit: int = 400) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[:limit - 3] + "..."


# ----------------------------------------------------------------------------------------
# evaluating constants with the reference interpreter
# ----------------------------------------------------------------------------------------
def _literals(literals: list[tuple[str, str]]) -> list:
    """numpy values of StableHLO literals [(`dense<...>`, type)], through the importer and
    xlair's numpy reference interpreter (never the compiled path)."""
    if not literals:
        return []
    body = "\n".join(f"  %c{i} = stablehlo.constant {lit} : {t}" for i, (lit, t) in enumerate(literals))
    ret = ", ".join(f"%c{i}" for i in range(len(literals)))
    types = ", ".join(t for _, t in literals)
    text = f"func.func @expected() -> ({types}) {{\n{body}\n  return {ret} : {types}\n}}\n"
    comp = xlair.from_stablehlo(text)
    out = xlair.interpret(comp)
    return list(out) if len(literals) > 1 else [out]


# ----------------------------------------------------------------------------------------
# the interpret suite
# ----------------------------------------------------------------------------------------
_OPEN, _CLOSE = "<[({", ">])}"


def _statement_end(text: str, start: int) -> int:
    """End of the check statement starting at `start`: the first newline at bracket depth 0
    after its top-level ` : ` (the type separator)."""
    depth, seen_colon, i, n = 0, False, start, len(text)
    in_str = False
    while i < n:
        ch = text[i]
        if in_str:
            in_str = ch != '"'
        elif ch == '"':
            in_str = True
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
        elif ch == ":" and depth == 0:
            seen_colon = True
        elif ch == "\n" and depth == 0 and seen_colon:
            return i
        i += 1
    return n


def _split_top(s: str, sep: str) -> list[str]:
    """Split at `sep` characters outside brackets and strings."""
    out, depth, cur, in_str = [], 0, "", False
    for i, ch in enumerate(s):
        if in_str:
            in_str = ch != '"'
        elif ch == '"':
            in_str = True
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE and not (ch == ">" and i and s[i - 1] == "-"):
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(cur)
            cur = ""
            continue
        cur += ch
    out.append(cur)
    return [x.strip() for x in out]


@dataclasses.dataclass
class _CheckStmt:
    kind: str            # expect_eq_const, expect_almost_eq, ...
    operands: list
    literal: str | None
    types: list
    attrs: dict


def _parse_check(stmt: str) -> _CheckStmt:
    m = re.match(r"check\.(\w+)\s+", stmt)
    kind, rest = m.group(1), stmt[m.end():]
    attrs = {}
    dict_m = re.search(r"\{([^{}]*)\}\s*$", rest)
    if dict_m and rest[:dict_m.start()].rstrip().endswith(">"):      # trailing {tolerance = ...}
        for item in _split_top(dict_m.group(1), ","):
            k, v = item.split("=", 1)
            attrs[k.strip()] = v.split(":")[0].strip()
        rest = rest[:dict_m.start()]
    parts = _split_top(rest, ":")
    pre, post = parts[0], re.sub(r"//[^\n]*", "", ":".join(parts[1:]))      # a trailing comment
    operands, literal = [], None
    for item in _split_top(pre, ","):
        if item.startswith("%"):
            operands.append(item)
        elif item.startswith("dense<"):
            literal = item
        elif "=" in item:
            k, v = item.split("=", 1)
            attrs[k.strip()] = v.strip()
    return _CheckStmt(kind, operands, literal, _split_top(post, ","), attrs)


_KINDS = {"expect_eq_const": "eq", "expect_eq": "eq", "expect_almost_eq_const": "almost_eq",
          "expect_almost_eq": "almost_eq", "expect_close": "close"}


def _rewrite_checks(chunk: str) -> tuple[str, list[_CheckStmt]]:
    """The chunk with each check statement as a generic op `"xlair_check.<kind>"(operands)
    {xlair.check = N}` (IREE's context registers a `check` dialect of its own), keeping the
    line count; and the parsed statements."""
    out, stmts, pos = [], [], 0
    for m in re.finditer(r"^[ \t]*(check\.\w+)", chunk, re.M):
        start = m.start(1)
        if start < pos:
            continue
        end = _statement_end(chunk, start)
        stmt = _parse_check(chunk[start:end])
        n = len(stmts)
        stmts.append(stmt)
        if stmt.literal is not None:
            in_types = [stmt.types[0]] * len(stmt.operands)
        elif len(stmt.types) == len(stmt.operands):
            in_types = stmt.types
        else:
            in_types = [stmt.types[0]] * len(stmt.operands)
        generic = (f'"xlair_check.{stmt.kind}"({", ".join(stmt.operands)}) {{xlair.check = {n} : i64}} : '
                   f'({", ".join(in_types)}) -> ()')
        out.append(chunk[pos:start])
        out.append(generic + "\n" * chunk[start:end].count("\n"))
        pos = end
    out.append(chunk[pos:])
    return "".join(out), stmts


def _func_name(f: ir.Operation) -> str:
    return ir.StringAttr(f.attributes["sym_name"]).value


def _funcs(module: ir.Module) -> list:
    return [op.operation for op in module.body.operations if op.operation.name == "func.func"]


def _contains(op: ir.Operation, prefix: str | tuple) -> str | None:
    """The name of the first op nested in `op` whose name starts with `prefix` (or is one of
    the names in a tuple)."""
    found = []
    match = (lambda n: n in prefix) if isinstance(prefix, tuple) else (lambda n: n.startswith(prefix))

    def visit(o):
        o = o.operation if hasattr(o, "operation") else o
        if match(o.name):
            found.append(o.name)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op.walk(visit)
    return found[0] if found else None


def _set_results(f: ir.Operation, values: list) -> None:
    """Make function `f` return `values` (replacing its return op) and fix its type."""
    block = f.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    with ir.InsertionPoint(ret), ret.location:
        ir.Operation.create("func.return", operands=values)
    ret.erase()
    ft = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments] or list(ft.inputs), [v.type for v in values]))
    for name in ("res_attrs", "arg_attrs"):
        if name in f.attributes:
            del f.attributes[name]


_RUN_PARALLEL = "interpreter.run_parallel"


def _chunk_cases(file: str, chunk: str, first_line: int) -> list[Case]:
    if "func.func" not in chunk:
        return []          # an empty module: not a case
    names = re.findall(r"func\.func\s+(?:public\s+|private\s+)?@([\w$.-]+)", chunk)
    label = f"{file}:{names[0]}" if names else file
    # any interpreter op but run_parallel (print and probe, also inside run_parallel's programs)
    interp = [op for op in re.findall(r'"?(interpreter\.\w+)', chunk) if op != _RUN_PARALLEL]
    if interp:
        case = Case("interpret", file, label)
        case.op = interp[0]
        return [case.done("unsupported", f"'{interp[0]}' belongs to StableHLO's reference interpreter "
                                         "(probe/print), not to StableHLO programs", "import")]
    if "check.expect_serialized_eq" in chunk:
        return [Case("interpret", file, label).done("unsupported", "check.expect_serialized_eq compares "
                                                    "against files written by interpreter.probe", "import")]
    text, stmts = _rewrite_checks(chunk)
    padded = "\n" * (first_line - 1) + text
    with lock, context():
        try:
            module = ir.Module.parse(padded)
        except ir.MLIRError as e:
            msg = "; ".join(str(d) for d in getattr(e, "error_diagnostics", [])) or str(e)
            return [Case("interpret", file, label).done("fail", f"the case does not parse: {_one_line(msg)}",
                                                        "import")]
        tests = [f for f in _funcs(module) if _contains(f, "xlair_check.")]
        if not tests:
            return _run_only_cases(file, chunk, module)
        cases = []
        plans = []
        for f in tests:
            name = _func_name(f)
            case = Case("interpret", file, f"{file}:{name}")
            cases.append(case)
            block = f.regions[0].blocks[0]
            top = [op.operation for op in block.operations if op.operation.name.startswith("xlair_check.")]
            nested = _count_checks(f) - len(top)
            if nested:
                case.done("unsupported", "a check op sits inside a region; checks are read at the top of the "
                                         "test function", "import")
                continue
            values, checks, literals = [], [], []
            for op in top:
                st = stmts[ir.IntegerAttr(op.attributes["xlair.check"]).value]
                kind = _KINDS.get(st.kind)
                if kind is None:
                    case.done("unsupported", f"check.{st.kind} is not a value check this runner reads", "import")
                    break
                tol = float(st.attrs.get("tolerance", 1e-4))
                if st.literal is not None:
                    checks.append(Check(kind, len(values), tolerance=tol))
                    literals.append((len(checks) - 1, st.literal, st.types[0]))
                    values.append(op.operands[0])
                else:
                    checks.append(Check(kind, len(values), expected_index=len(values) + 1, tolerance=tol,
                                        max_ulp=int(st.attrs.get("max_ulp_difference", 3)),
                                        min_ulp=int(st.attrs.get("min_ulp_difference", 0))))
                    values.extend([op.operands[0], op.operands[1]])
            if case.status != "pending":
                continue
            for op in top:
                op.erase()
            if _contains(f, _RUN_PARALLEL):
                case.checks = checks
                try:
                    _parallel_case(case, module, f, values, literals)
                except Exception as e:      # noqa: BLE001  (recorded per case)
                    _error_case(case, e, "import")
                continue
            _set_results(f, values)
            case.checks = checks
            case.nresults = len(values)
            plans.append((case, name, literals))
        for case, name, literals in plans:
            try:
                case.comp = import_module(module, name)
                vals = _literals([(lit, t) for _, lit, t in literals])
                for (ci, _, _), v in zip(literals, vals):
                    case.checks[ci].expected = v
            except Exception as e:          # noqa: BLE001  (recorded per case)
                _error_case(case, e, "import")
        return cases


@dataclasses.dataclass
class Parallel:
    """What an `interpreter.run_parallel` runs: one program per process (one partition per
    replica), their arguments and infeed items, and which process result each checked value
    is."""
    comps: list                # Computation of each process, in replica order
    args: list                 # argument values of each process
    nresults: list             # results of each process's function
    picks: list                # (process, result) of each checked value
    infeed: list = dataclasses.field(default_factory=list)

    @property
    def replicated(self) -> bool:
        return all(c is self.comps[0] for c in self.comps)


_COLLECTIVE_OPS = ("stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.all_to_all",
                   "stablehlo.reduce_scatter", "stablehlo.collective_permute", "stablehlo.collective_broadcast",
                   "stablehlo.replica_id", "stablehlo.partition_id")


def _symbols(attr) -> list:
    """[[@f, @g], [@h]] -> [["f", "g"], ["h"]] (an array of arrays of symbols, or a flat array)."""
    text = str(attr)
    rows = re.findall(r"\[([^\[\]]*)\]", text)
    return [re.findall(r"@([\w$.-]+)", r) for r in rows] if rows else [re.findall(r"@([\w$.-]+)", text)]


def _parallel_case(case: Case, module: ir.Module, f: ir.Operation, values: list, literals: list) -> None:
    """A test function checking the results of `interpreter.run_parallel`: its processes
    become xlair replicas (one program on every replica: `Executable.run_replicated`), or,
    when each process runs its own program without collectives, executables called at the
    same time from threads (their Send/Recv channels meet in the host)."""
    case.op = _RUN_PARALLEL
    block = f.regions[0].blocks[0]
    rps = [op.operation for op in block.operations if op.operation.name == _RUN_PARALLEL]
    if len(rps) != 1:
        raise Unsupported(f"the test function runs interpreter.run_parallel {len(rps)} times; the runner reads one")
    rp = rps[0]
    programs = _symbols(rp.attributes["programs"])
    if any(len(row) != 1 for row in programs):
        raise Unsupported(f"runs {max(len(r) for r in programs)} partitions per replica (interpreter.run_parallel "
                          f"programs {programs}); xlair runs one partition per replica")
    names = [row[0] for row in programs]
    funcs = {_func_name(g): g for g in _funcs(module)}
    if len(set(names)) > 1:
        for n in sorted(set(names)):
            op = _contains(funcs[n], _COLLECTIVE_OPS)
            if op:
                raise Unsupported(f"runs different programs on its replicas ({', '.join('@' + x for x in names)}) and "
                                  f"@{n} uses '{op}'; xlair's replicas run one program")
    picks = []
    for v in values:
        owner = v.owner
        if not (isinstance(owner, (ir.OpView, ir.Operation)) and owner.operation == rp):
            raise Unsupported("checks a value computed outside interpreter.run_parallel")
        picks.append(v.result_number)
    nres, arity = {}, {}
    for n in set(names):
        ft = ir.FunctionType(ir.TypeAttr(funcs[n].attributes["function_type"]).value)
        nres[n], arity[n] = len(ft.results), len(ft.inputs)
    where = [(p, j) for p, n in enumerate(names) for j in range(nres[n])]
    operands = list(rp.operands)
    if len(operands) != sum(arity[n] for n in names):
        raise XlaError(f"interpreter.run_parallel has {len(operands)} operands; its programs take "
                       f"{sum(arity[n] for n in names)}")
    infeed = _symbols(rp.attributes["infeed"])[0] if "infeed" in rp.attributes else []
    rp.erase()
    # the replica count, for collectives whose groups leave replicas out (as JAX records it)
    module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32),
                                                                         len(names))
    inputs = []
    if operands:                # the test function, up to run_parallel, computes the processes' arguments
        _set_results(f, operands)
        inputs = xlair.interpret(import_module(module, _func_name(f)))
        inputs = list(inputs) if len(operands) > 1 else [inputs]
    comps = {n: import_module(module, n) for n in set(names)}
    args, k = [], 0
    for n in names:
        args.append(inputs[k:k + arity[n]])
        k += arity[n]
    items = [xlair.interpret(import_module(module, q)) for q in infeed]
    case.parallel = Parallel([comps[n] for n in names], args, [nres[n] for n in names],
                             [where[i] for i in picks], items)
    vals = _literals([(lit, t) for _, lit, t in literals])
    for (ci, _, _), v in zip(literals, vals):
        case.checks[ci].expected = v
    case.nresults = len(values)


def _count_checks(f: ir.Operation) -> int:
    n = []

    def visit(o):
        o = o.operation if hasattr(o, "operation") else o
        if o.name.startswith("xlair_check."):
            n.append(1)
        return ir.WalkResult.ADVANCE
    f.walk(visit)
    return len(n)


def _run_only_cases(file: str, chunk: str, module: ir.Module) -> list[Case]:
    """Chunks without check ops (their RUN lines compare printed output, or nothing): the
    functions that return values are compared against their `CHECK-DENSE:` literals when
    there are some; otherwise the case passes when it compiles and runs (a function returning
    nothing returns the values nothing uses).  Functions with parameters take the `--args`
    of the RUN line."""
    dense = re.findall(r"//\s*CHECK-DENSE(?:\{LITERAL\})?:\s*(dense<.*>)\s*:\s*(\S.*)$", chunk, re.M)
    args_m = re.search(r'--args="\[(.*)\]"', chunk)
    cases = []
    for f in _funcs(module):
        vis = ir.StringAttr(f.attributes["sym_visibility"]).value if "sym_visibility" in f.attributes else "public"
        if vis != "public":
            continue
        name = _func_name(f)
        case = Case("interpret", file, f"{file}:{name}")
        cases.append(case)
        try:
            ft = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
            nres = len(ft.results)
            if nres == 0:           # it only has to run: return the values nothing uses
                block = f.regions[0].blocks[0]
                unused = [r for op in list(block.operations)[:-1] for r in op.operation.results
                          if not list(r.uses)]
                if not unused:
                    raise Unsupported("the test function computes nothing it could return")
                _set_results(f, unused)
                nres = len(unused)
                dense = []
            case.comp = import_module(module, name)
            if ft.inputs:
                if not args_m:
                    raise Unsupported("the test function takes arguments but the RUN line gives none")
                items = _split_top(args_m.group(1), ",")
                lits = [tuple(x.strip() for x in it.rsplit(":", 1)) for it in items]
                case.args = _literals(lits)
            if len(dense) >= nres:
                vals = _literals([(lit, t.strip()) for lit, t in dense[:nres]])
                case.checks = [Check("eq", i, v) for i, v in enumerate(vals)]
            else:
                case.checks = [Check("run", 0)]
            case.nresults = nres
        except Exception as e:                  # noqa: BLE001
            _error_case(case, e, "import")
    return cases


def interpret_cases(file: str) -> list[Case]:
    """The cases of one file of the interpret suite, imported (or settled as unsupported/failed)."""
    text = (SUITE_DIR / "interpret" / file).read_text()
    cases, line = [], 1
    for chunk in re.split(r"^// -----\s*$", text, flags=re.M):
        t0 = time.perf_counter()
        got = _chunk_cases(file, chunk, line)
        dt = (time.perf_counter() - t0) / max(len(got), 1)
        for c in got:
            c.seconds += dt
        cases.extend(got)
        line += chunk.count("\n")
    seen: dict = {}
    for c in cases:                     # several chunks may test functions of one name
        seen[c.name] = seen.get(c.name, 0) + 1
    counts = dict(seen)
    seen.clear()
    for c in cases:
        if counts[c.name] > 1:
            seen[c.name] = seen.get(c.name, 0) + 1
            c.name = f"{c.name}#{seen[c.name]}"
    return cases


# ----------------------------------------------------------------------------------------
# the testdata suite
# ----------------------------------------------------------------------------------------
_TESTDATA_KINDS = {"check.expect_close": ("close", 0.0), "check.expect_eq": ("eq", 0.0),
                   "check.expect_almost_eq": ("almost_eq", 1e-3)}


def testdata_case(file: str) -> Case:
    t0 = time.perf_counter()
    case = Case("testdata", file, file)
    try:
        _testdata_prepare(case, (SUITE_DIR / "testdata" / file).read_text())
    except Exception as e:                      # noqa: BLE001
        _error_case(case, e, "import")
    case.seconds += time.perf_counter() - t0
    return case


def _testdata_prepare(case: Case, text: str) -> None:
    with lock, context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise XlaError("the program does not parse: " + "; ".join(
                str(d) for d in getattr(e, "error_diagnostics", []))) from None
        funcs = {_func_name(f): f for f in _funcs(module)}
        main = funcs.get("main")
        if main is None:
            raise XlaError("the program has no @main")
        block = main.regions[0].blocks[0]
        # @inputs() become parameters of @main
        n_inputs = 0
        for op in list(block.operations):
            op = op.operation
            if op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == "inputs":
                for r in op.results:
                    arg = block.add_argument(r.type, op.location)
                    r.replace_all_uses_with(arg)
                    n_inputs += 1
                op.erase()
        checks, values, expected_refs = [], [], []
        for op in list(block.operations):
            op = op.operation
            if op.name != "stablehlo.custom_call":
                continue
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if target not in _TESTDATA_KINDS:
                continue
            kind, tol = _TESTDATA_KINDS[target]
            actual, exp = op.operands[0], op.operands[1]
            owner = exp.owner
            if not (isinstance(owner, (ir.OpView, ir.Operation)) and owner.operation.name == "func.call" and
                    ir.FlatSymbolRefAttr(owner.operation.attributes["callee"]).value == "expected"):
                raise XlaError("the expected value of a check is not a result of @expected()")
            checks.append(Check(kind, len(values), tolerance=tol or 1e-4))
            expected_refs.append(exp.result_number)
            values.append(actual)
            op.erase()
        if not checks:
            raise XlaError("@main checks nothing")
        for op in list(block.operations):
            op = op.operation
            if op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == "expected" \
                    and all(not list(r.uses) for r in op.results):
                op.erase()
        _set_results(main, values)
        case.nresults = len(values)
        case.comp = import_module(module, "main")
        expected = xlair.interpret(import_module(module, "expected"))
        nexp = len(ir.FunctionType(ir.TypeAttr(funcs["expected"].attributes["function_type"]).value).results)
        expected = list(expected) if nexp > 1 else [expected]
        for chk, ref in zip(checks, expected_refs):
            chk.expected = expected[ref]
        if n_inputs:
            ins = xlair.interpret(import_module(module, "inputs"))
            case.args = list(ins) if n_inputs > 1 else [ins]
        case.checks = checks


# ----------------------------------------------------------------------------------------
# comparing
# ----------------------------------------------------------------------------------------
def _float_bits(x: np.ndarray):
    x = np.ascontiguousarray(x)
    return x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """StableHLO's ULP difference of two float arrays (0 for two NaNs; the maximum for a
    non-finite value against a different value)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "c":
        return np.maximum(ulp_distance(a.real, b.real), ulp_distance(a.imag, b.imag))
    ba, bb = _float_bits(a), _float_bits(b)
    bits = a.dtype.itemsize * 8
    sign = np.uint64(1 << (bits - 1))
    ma, mb = ba & ~sign, bb & ~sign
    neg_a, neg_b = (ba & sign) != 0, (bb & sign) != 0
    with np.errstate(all="ignore"):
        dist = np.where(neg_a != neg_b, ma + mb, np.where(ma > mb, ma - mb, mb - ma))
        fa, fb = np.isfinite(a.astype(np.float64)), np.isfinite(b.astype(np.float64))
        na, nb = np.isnan(a.astype(np.float64)), np.isnan(b.astype(np.float64))
    big = np.uint64(np.iinfo(np.uint64).max)
    dist = np.where(fa & fb, dist, big)
    dist = np.where(na & nb, 0, dist)
    dist = np.where(ba == bb, 0, dist)
    return dist.astype(np.uint64)


def _almost_equal(a, b, tol: float) -> np.ndarray:
    if a.dtype.kind == "c":
        return _almost_equal(a.real, b.real, tol) & _almost_equal(a.imag, b.imag, tol)
    x, y = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        eq = x == y
        nan = np.isnan(x) & np.isnan(y)
        fin = np.isfinite(x) & np.isfinite(y)
        close = fin & (np.signbit(x) == np.signbit(y)) & (np.abs(x - y) <= tol)
    return eq | nan | close


def compare(chk: Check, actual, expected) -> str | None:
    """None when the check holds; else what differs."""
    if chk.kind == "run":
        return None
    if isinstance(expected, tuple) or isinstance(actual, tuple):
        if not (isinstance(expected, tuple) and isinstance(actual, tuple) and len(actual) == len(expected)):
            return f"tuple structure differs: got {type(actual).__name__}, expected {type(expected).__name__}"
        for i, (x, y) in enumerate(zip(actual, expected)):
            msg = compare(chk, x, y)
            if msg:
                return f"element {i} of the tuple: {msg}"
        return None
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape:
        return f"shape {a.shape} differs from the expected {e.shape}"
    if a.dtype != e.dtype:
        return f"dtype {a.dtype} differs from the expected {e.dtype}"
    floating = a.dtype.kind in "fc" or a.dtype == xlair.BF16.dtype
    if chk.kind == "eq" or not floating:
        if floating:
            fa, fe = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), \
                e.astype(np.complex128 if e.dtype.kind == "c" else np.float64)
            ok = (fa == fe) | (np.isnan(fa) & np.isnan(fe))
        else:
            ok = a == e
        what = "exactly equal"
    elif chk.kind == "almost_eq":
        ok = _almost_equal(a, e, chk.tolerance)
        what = f"within {chk.tolerance:g}"
    else:
        d = ulp_distance(a, e)
        ok = (d <= chk.max_ulp) & (d >= chk.min_ulp)
        what = f"within {chk.max_ulp} ULP"
    ok = np.asarray(ok)
    if ok.all():
        return None
    bad = np.argwhere(~ok) if ok.ndim else [()]
    first = tuple(int(i) for i in bad[0])
    extra = ""
    if chk.kind == "close" and floating:
        extra = f", {int(ulp_distance(a, e)[first]) if ok.ndim else int(ulp_distance(a, e))} ULP"
    return (f"{int((~ok).sum())} of {ok.size} elements not {what}; first at {list(first)}: "
            f"got {a[first]!r}, expected {e[first]!r}{extra}")


def check_results(case: Case, out) -> Case:
    outs = list(out) if case.nresults > 1 else [out]
    problems = []
    for chk in case.checks:
        if chk.kind == "run":
            continue
        actual = outs[chk.index]
        exp = chk.expected if chk.expected_index is None else outs[chk.expected_index]
        msg = compare(chk, actual, exp)
        if msg:
            problems.append(f"check {chk.index}: {msg}")
    if problems:
        return case.done("fail", "wrong values: " + _one_line("; ".join(problems)), "compare")
    return case.done("pass")


# ----------------------------------------------------------------------------------------
# compiling and running, in batches
# ----------------------------------------------------------------------------------------
def batch_computation(cases: list[Case]):
    """One computation running several cases: each is an xla.call of its computation on its
    own parameters, the root a tuple of their results."""
    b = xlair.Builder("conformance_batch")
    outs, k = [], 0
    for c in cases:
        params = [b.parameter(k + i, s) for i, s in enumerate(c.comp.parameter_shapes)]
        k += len(params)
        outs.append(xlair.ops.call(b, c.comp, params))
    root = xlair.ops.tuple(b, outs)
    return b.build(root)


def run_cases(cases: list[Case], target: str = "cpu") -> None:
    """Compile and run cases together; a batch that fails to compile or run is split in
    halves until every failure belongs to one case."""
    ready = [c for c in cases if c.status == "pending"]
    parallel = [c for c in ready if c.parallel is not None]
    ready = [c for c in ready if c.parallel is None]
    for c in parallel:                  # each on its own: its own replica count
        t0 = time.perf_counter()
        _run_parallel(c, target)
        c.seconds += time.perf_counter() - t0
    if not ready:
        return
    t0 = time.perf_counter()
    if len(ready) == 1:
        _run_one(ready[0], target)
        ready[0].seconds += time.perf_counter() - t0
        return
    try:
        comp = batch_computation(ready)
        exe = xlair.compile(comp, target=target)
        args = [a for c in ready for a in c.args]
        outs = exe(*args)
    except Exception:                   # noqa: BLE001  (attributed case by case below)
        half = len(ready) // 2
        dt = (time.perf_counter() - t0) / len(ready)
        for c in ready:
            c.seconds += dt
        run_cases(ready[:half], target)
        run_cases(ready[half:], target)
        return
    dt = (time.perf_counter() - t0) / len(ready)
    for c, out in zip(ready, outs):
        c.seconds += dt
        try:
            check_results(c, out)
        except Exception as e:          # noqa: BLE001
            _error_case(c, e, "compare")


def _run_one(c: Case, target: str) -> None:
    try:
        exe = xlair.compile(c.comp, target=target)
    except Exception as e:              # noqa: BLE001
        _error_case(c, e, "compile")
        return
    try:
        out = exe(*c.args)
    except Exception as e:              # noqa: BLE001
        _error_case(c, e, "run")
        return
    try:
        check_results(c, out)
    except Exception as e:              # noqa: BLE001
        _error_case(c, e, "compare")


def _run_parallel(c: Case, target: str) -> None:
    """Run the processes of an interpreter.run_parallel case and check the values it picks."""
    par = c.parallel
    n = len(par.comps)
    try:
        if par.replicated:
            exes = [xlair.compile(par.comps[0], target=target, replicas=n)]
        else:
            exes = [xlair.compile(comp, target=target) for comp in par.comps]
    except Exception as e:              # noqa: BLE001
        _error_case(c, e, "compile")
        return
    try:
        for r in range(n):
            queue = exes[0].infeed_queue(r) if par.replicated else exes[r].infeed
            for item in par.infeed:
                queue.put(item)
        if par.replicated:
            outs = exes[0].run_replicated(par.args)
        else:                           # each its own program, at the same time (Send/Recv meet)
            with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
                futs = [pool.submit(exe, *a) for exe, a in zip(exes, par.args)]
                outs = [fut.result() for fut in futs]
    except Exception as e:              # noqa: BLE001
        _error_case(c, e, "run")
        return
    flat = [list(o) if k > 1 else [o] for o, k in zip(outs, par.nresults)]
    picked = tuple(flat[p][j] for p, j in par.picks)
    try:
        check_results(c, picked if c.nresults > 1 else picked[0])
    except Exception as e:              # noqa: BLE001
        _error_case(c, e, "compare")
