"""`Builder` and `Op` (XlaBuilder and XlaOp).

Each op call runs the op's shape rule at once, so errors point at the line that made the
bad op; `build()` emits the MLIR module of `xla.*` ops, one `func.func @main` whose
arguments are the parameters and whose result is the root.
"""
from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

import xlair.dialect as _dialect_pkg
import xlair.lowering as _lowering_pkg
from xlair.dialect.attrs import Optional
from xlair.dialect.checks import Check, XlaError
from xlair.dialect.core import RETURN, OpDef, Sig
from xlair.dialect.ir import context, func, ir, lock
from xlair.dialect.types import Shape
from xlair.dialect.verify import verify

from .computation import Computation

_OWN_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                  for m in (_dialect_pkg, _lowering_pkg, sys.modules[__package__]))


#: whether a code object's file is outside xlair, by its name (co_filename)
_FOREIGN: dict[str, bool] = {}


def caller_location() -> tuple[str, int] | None:
    """File and line of the first caller outside xlair."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        foreign = _FOREIGN.get(fn)
        if foreign is None:
            foreign = _FOREIGN[fn] = not os.path.abspath(fn).startswith(_OWN_DIRS)
        if foreign:
            return fn, f.f_lineno
        f = f.f_back
    return None


class Op:
    """A handle to a value in a computation being built (XlaOp)."""
    __slots__ = ("builder", "index", "shape")

    def __init__(self, builder: "Builder", index: int, shape: Shape):
        self.builder, self.index, self.shape = builder, index, shape

    def __repr__(self):
        node = self.builder._nodes[self.index]
        return f"<xla.Op {node.label} : {self.shape}>"

    # operator sugar (+, -, *, /, %, &, |, ^, <<, >>, unary - and ~), as XlaOp has in C++: set by
    # xlair.ops over its op functions (_opgen.attach_operators), which are made above this module

    __hash__ = object.__hash__


class _Node:
    __slots__ = ("opdef", "args", "shape", "loc", "number", "name")

    def __init__(self, opdef, args, shape, loc, number=None, name=""):
        self.opdef, self.args, self.shape, self.loc = opdef, args, shape, loc
        self.number, self.name = number, name

    @property
    def label(self):
        return f"parameter({self.number})" if self.opdef is None else self.opdef.mlir_name


class Builder:
    """Builds one computation (XlaBuilder).  The last op built is the root unless `build`
    is given one."""

    def __init__(self, name: str = "computation"):
        self.name = name
        self._nodes: list[_Node] = []
        self._params: dict[int, int] = {}

    def __repr__(self):
        return f"<xla.Builder {self.name}: {len(self._nodes)} values>"

    # -- values --------------------------------------------------------------------------------
    def parameter(self, number: int, shape: Shape, name: str = "") -> Op:
        loc = caller_location()
        chk = Check("parameter", _loc_str(loc))
        if not isinstance(number, (int, np.integer)) or isinstance(number, bool) or number < 0:
            chk.fail("parameter_number", "must be a non-negative integer", number)
        if not isinstance(shape, Shape):
            chk.fail("shape", "must be an xla.Shape", shape)
        if any(d < 0 for s in shape.leaves() if s.is_array for d in s.dims):
            chk.fail("shape", "must not have negative dimensions", shape)
        if int(number) in self._params:
            chk.fail("parameter_number", "must be unique in the computation", int(number))
        self._nodes.append(_Node(None, {}, shape, loc, int(number), name))
        self._params[int(number)] = len(self._nodes) - 1
        return Op(self, len(self._nodes) - 1, shape)

    def add(self, opdef: OpDef, args: dict[str, Any]) -> Op:
        """Add one op: check its arguments, run its shape rule, return its handle."""
        loc = caller_location()
        chk = opdef.check(_loc_str(loc))
        norm: dict[str, Any] = {}
        shapes: dict[str, Any] = {}
        for p in opdef.params:
            v = args.get(p.name, p.default)
            if v is p.default and not p.optional and p.name not in args:
                chk.fail(p.name, "is required", None, show_got=False, cid="ir:attributes")
            if p.kind == "operand":
                self._own(chk, p.name, v)
                norm[p.name], shapes[p.name] = v, v.shape
            elif p.kind == "operands":
                vs = list(v) if isinstance(v, (list, tuple)) else [v]
                for i, x in enumerate(vs):
                    self._own(chk, f"{p.name}[{i}]", x)
                norm[p.name], shapes[p.name] = vs, [x.shape for x in vs]
            elif p.kind in ("computation", "callee"):
                c = _comp(chk, p.name, v)
                norm[p.name], shapes[p.name] = c, c.program_shape
            elif p.kind == "computations":
                vs = list(v) if isinstance(v, (list, tuple)) else [v]
                cs = [_comp(chk, f"{p.name}[{i}]", x) for i, x in enumerate(vs)]
                norm[p.name], shapes[p.name] = cs, [c.program_shape for c in cs]
            else:
                if v is None and not isinstance(p.attr, Optional):
                    chk.fail(p.name, f"must be {p.attr.what}", None, cid="ir:attributes")
                val = None if v is None else p.attr.normalize(chk, p.name, v)
                norm[p.name] = shapes[p.name] = val
        shape = opdef.infer(chk, **shapes)
        self._nodes.append(_Node(opdef, norm, shape, loc))
        return Op(self, len(self._nodes) - 1, shape)

    def _own(self, chk: Check, param: str, v):
        if not isinstance(v, Op):
            chk.fail(param, "must be an XlaOp (an xla.Op of this builder)", v, cid="ir:operands")
        if v.builder is not self:
            chk.fail(param, f"must come from builder '{self.name}', not '{v.builder.name}'", v,
                     cid="ir:operands")

    # -- build ---------------------------------------------------------------------------------
    def build(self, root: Op | None = None, *, verify_ops: bool = True) -> Computation:
        """The computation of the ops added so far (its result: `root`, by default the last
        op).  The module is verified; `verify_ops=False` skips running each op's shape rule a
        second time (`add` ran it; the StableHLO importer, where it was a third of the time)."""
        chk = Check("build", _loc_str(caller_location()))
        if root is None:
            ops = [i for i, n in enumerate(self._nodes) if n.opdef is not None]
            if not ops and not self._nodes:
                chk.fail("root", "needs at least one value in the computation", self.name)
            root_index = ops[-1] if ops else len(self._nodes) - 1
        else:
            self._own(chk, "root", root)
            root_index = root.index
        numbers = sorted(self._params)
        if numbers != list(range(len(numbers))):
            chk.fail("parameters", "must be numbered 0..N-1 without gaps", numbers)
        with lock, context():
            module = self._emit(root_index, numbers)
            verify(module, verify_ops)
        return Computation(module, self.name)

    def _emit(self, root_index: int, numbers: list[int]) -> ir.Module:
        with _location(None):
            module = ir.Module.create()
            params = [self._nodes[self._params[n]] for n in numbers]
            ftype = ir.FunctionType.get([p.shape.to_mlir() for p in params],
                                        [self._nodes[root_index].shape.to_mlir()])
            with ir.InsertionPoint(module.body):
                f = func.FuncOp("main", ftype)
            entry = f.add_entry_block()
        values: dict[int, ir.Value] = {}
        for n, arg in zip(numbers, entry.arguments):
            values[self._params[n]] = arg
        with ir.InsertionPoint(entry):
            for i, node in enumerate(self._nodes):
                if node.opdef is None:
                    continue
                with _location(node.loc):
                    values[i] = emit_op(module, node.opdef, node.args, node.shape, values)
            with _location(None):
                func.ReturnOp([values[root_index]])
        return module


def emit_op(module: ir.Module, opdef: OpDef, args: dict, shape: Shape, values: dict) -> ir.Value:
    """Create one xla op at the current insertion point; `values` maps handles to ir.Values."""
    operands: list[ir.Value] = []
    groups = {}
    for p in opdef.operand_params:
        v = args[p.name]
        vals = [values[x.index] for x in v] if p.variadic else [values[v.index]]
        groups[p.name] = vals
        operands.extend(vals)
    attrs = {}
    for p in opdef.attr_params:
        if args.get(p.name) is not None:
            attrs[p.name] = p.attr.to_attr(args[p.name])
    for p in opdef.callee_params:
        attrs[p.name] = ir.FlatSymbolRefAttr.get(import_computation(module, args[p.name]))
    seg = opdef.segment_attr(groups)
    if seg is not None:
        attrs["operandSegmentSizes"] = seg
    comps = []
    for p in opdef.region_params:
        comps.extend(args[p.name] if p.variadic else [args[p.name]])
    op = ir.Operation.create(opdef.mlir_name, results=[shape.to_mlir()], operands=operands,
                             attributes=attrs, regions=len(comps))
    for region, comp in zip(op.regions, comps):
        inline_computation(module, region, comp)
    return op.result


def _symbol(comp: Computation) -> str:
    base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in comp.name) or "computation"
    return f"{base}_{comp.fingerprint()[:12]}"


def _functions(module: ir.Module) -> set[str]:
    return {ir.StringAttr(op.attributes["sym_name"]).value
            for op in module.body.operations if op.operation.name == "func.func"}


def _import_callees(module: ir.Module, comp: Computation) -> None:
    """Copy the functions `comp` calls into `module` (content-named, so equal names are equal)."""
    existing = _functions(module)
    with ir.InsertionPoint(module.body):
        for op in comp.module.body.operations:
            op = op.operation
            sym = ir.StringAttr(op.attributes["sym_name"]).value if op.name == "func.func" else None
            if sym and sym != "main" and sym not in existing:
                op.clone()
                existing.add(sym)


def import_computation(module: ir.Module, comp: Computation) -> str:
    """Make `comp` a private function of `module` and return its symbol.  Functions are named
    by their content hash, so a computation called twice (or from two places, or nested) is
    one function, and merging the functions it calls in turn never clashes."""
    name = _symbol(comp)
    if name in _functions(module):
        return name
    _import_callees(module, comp)
    with ir.InsertionPoint(module.body):
        f = comp.main.clone()
        f.attributes["sym_name"] = ir.StringAttr.get(name)
        f.attributes["sym_visibility"] = ir.StringAttr.get("private")
    return name


def inline_computation(module: ir.Module, region: ir.Region, comp: Computation) -> None:
    """Copy a computation's @main body into an op's region, ending in xla.return."""
    _import_callees(module, comp)
    clone = comp.main.clone()
    block = clone.regions[0].blocks[0]
    block.append_to(region)
    term = list(block.operations)[-1]
    with ir.InsertionPoint(term), term.location:
        ir.Operation.create(RETURN, operands=list(term.operands))
    term.erase()
    clone.erase()


def _comp(chk: Check, param: str, v) -> Computation:
    if not isinstance(v, Computation):
        chk.fail(param, "must be an xla.Computation (built by another Builder)", v, cid="ir:regions")
    return v


def _loc_str(loc) -> str | None:
    return f"{loc[0]}:{loc[1]}" if loc else None


def _location(loc):
    if loc is None:
        return ir.Location.unknown()
    return ir.Location.file(loc[0], loc[1], 0)
