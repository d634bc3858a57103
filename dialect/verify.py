"""The module verifier: every `xla.*` op is checked against its record's shape rule."""
from __future__ import annotations

from .checks import XlaError, cite
from .core import RETURN, Sig, find_function, function_sig, functions, location_str, lookup
from .ir import ir, lock
from .types import Shape


def _error(message: str, cid: str, location=None) -> XlaError:
    """An error of the IR form, citing its `ir:` constraint (checks.IR_CONSTRAINTS)."""
    return XlaError(cite(message, cid), location=location, constraint=cid)


def region_sig(region: ir.Region, owner: str, loc=None) -> Sig:
    """The program shape of a computation region: its block's arguments and returned value."""
    blocks = list(region.blocks)
    if len(blocks) != 1:
        raise _error(f"'{owner}' computation must be one block; got {len(blocks)}", "ir:computation",
                     loc)
    block = blocks[0]
    ops = list(block.operations)
    if not ops or ops[-1].name != RETURN:
        raise _error(f"'{owner}' computation must end in xla.return", "ir:computation", loc)
    ret = ops[-1]
    if len(ret.operands) != 1:
        raise _error(f"'{owner}' computation must return one value; got {len(ret.operands)}",
                     "ir:computation", loc)
    try:
        params = tuple(Shape.from_mlir(a.type) for a in block.arguments)
        return Sig(params, Shape.from_mlir(ret.operands[0].type))
    except TypeError as e:
        raise _error(f"'{owner}' computation {e}", "ir:computation", loc) from None


def infer_op(op: ir.Operation) -> Shape:
    """Run the op's shape rule on an MLIR op; returns the inferred result shape."""
    opdef = lookup(op.name)
    loc = location_str(op.location)
    if opdef is None:
        raise _error(f"'{op.name}' is not an op of the xla dialect", "ir:op", loc)
    chk = opdef.check(loc)
    args = opdef.unpack(op, chk)
    kw = {}
    for p in opdef.params:
        v = args[p.name]
        try:
            if p.is_operand:
                kw[p.name] = [Shape.from_mlir(x.type) for x in v] if p.variadic else Shape.from_mlir(v.type)
            elif p.is_region:
                kw[p.name] = [region_sig(r, op.name, loc) for r in v] if p.variadic else region_sig(v, op.name, loc)
            elif p.is_callee:
                f = find_function(op, v)
                if f is None:
                    chk.fail(p.name, "must name a function of the module", f"@{v}", cid="ir:callee")
                kw[p.name] = function_sig(f)
            else:
                kw[p.name] = p.attr.normalize(chk, p.name, v) if v is not None else None
        except TypeError as e:
            chk.fail(p.name, "must have an xla type", str(e), cid="ir:types")
    return opdef.infer(chk, **kw)


def verify_op(op: ir.Operation) -> None:
    if op.name == RETURN:
        parent = op.parent
        if parent is None or not parent.name.startswith("xla."):
            raise _error("'xla.return' must end the computation region of an xla op", "ir:return",
                         location_str(op.location))
        return
    try:
        inferred = infer_op(op)
    except XlaError as e:
        raise e.at(location_str(op.location)) from None
    except TypeError as e:      # an attribute the MLIR bindings cannot read (array<ui8: ...>, ...)
        raise _error(f"'{op.name}' has an attribute of a kind xla ops do not take: {e}", "ir:attributes",
                     location_str(op.location)) from None
    if len(op.results) != 1:
        raise _error(f"'{op.name}' must have one result; got {len(op.results)}", "ir:result",
                     location_str(op.location))
    try:
        declared = Shape.from_mlir(op.results[0].type)
    except TypeError as e:
        raise _error(f"'{op.name}' result {e}", "ir:types", location_str(op.location)) from None
    if declared != inferred:
        raise _error(f"'{op.name}' result type must be {inferred} by the op's shape rule; "
                     f"got {declared}", "ir:result", location_str(op.location))


def verify(module_or_op, ops: bool = True) -> None:
    """Verify MLIR structure, then every xla op (XlaError on the first broken rule); with
    `ops=False` the MLIR structure and the module's calls only (for a module whose ops were
    all made through their shape rules: xlair.Builder's)."""
    top = module_or_op.operation if hasattr(module_or_op, "operation") else module_or_op
    with lock:
        try:
            top.verify()
        except ir.MLIRError as e:
            raise _error(f"invalid MLIR: {_diag(e)}", "ir:mlir") from None
        errors: list[XlaError] = []

        def visit(op):
            op = op.operation if hasattr(op, "operation") else op
            if op.name.startswith("xla.") and not errors:
                try:
                    verify_op(op)
                except XlaError as e:
                    errors.append(e)
                    return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        if ops:
            top.walk(visit)
        if errors:
            raise errors[0]
        if top.name == "builtin.module":
            _check_no_recursion(top)


def _check_no_recursion(module: ir.Operation) -> None:
    """No cycle among the module's functions through the symbols their ops name (func.call's
    callee, an xla op's callee): IREE 3.13's iree-compile ran without end on a function calling
    itself."""
    funcs = functions(module)
    calls: dict[str, list[str]] = {}
    for name, f in funcs.items():
        out: list[str] = []

        def visit(op, out=out):
            attrs = op.operation.attributes
            for k in range(len(attrs)):
                a = attrs[k].attr
                if isinstance(a, ir.FlatSymbolRefAttr) and a.value in funcs:
                    out.append(a.value)
            return ir.WalkResult.ADVANCE
        for region in f.regions:
            for block in region.blocks:
                for o in block.operations:
                    o.operation.walk(visit)
        calls[name] = out
    done: set[str] = set()
    for root in funcs:
        if root in done:
            continue
        path, on_path, stack = [root], {root}, [iter(calls[root])]     # depth-first, without recursion
        while stack:
            callee = next(stack[-1], None)
            if callee is None:
                stack.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
            elif callee in on_path:
                cycle = path[path.index(callee):] + [callee]
                raise _error(f"function @{callee} calls itself (" + " -> ".join(f"@{n}" for n in cycle)
                             + "); XLA computations do not recurse", "ir:recursion")
            elif callee not in done:
                path.append(callee)
                on_path.add(callee)
                stack.append(iter(calls[callee]))


def _diag(e: ir.MLIRError) -> str:
    parts = [str(d) for d in getattr(e, "error_diagnostics", [])] or [str(e)]
    return "; ".join(parts)
