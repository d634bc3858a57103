"""The op record and the registry.

One `OpDef` per op of the spec: its seed name and argument list (`params`, in the seed's
order), its shape rule (`infer`, which also checks every constraint), and its numpy
reference semantics (`reference`).  The builder, the verifier, the interpreter, the text
parser path, the lowering and docs/status.md all read these records.

How an op sits in MLIR (generic form, one result):

    %r = "xla.<name>"(operands...) ({region per computation}) {attributes} : (...) -> type

Operands keep the order of the seed's array parameters; when an op has several variadic
operand groups the attribute `operandSegmentSizes` gives their lengths.  Computations are
regions whose single block takes the computation's parameters and ends in `xla.return`.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Sequence

from .attrs import AttrKind
from .checks import Check, XlaError
from .ir import ir
from .types import Shape

REQUIRED = object()


@dataclasses.dataclass(frozen=True)
class Param:
    """One argument of an op, in the seed's order.

    kind: 'operand' (one XlaOp), 'operands' (a sequence of XlaOps), 'attr' (a compile-time
    value of `attr` kind), 'computation' (an XlaComputation, inlined as a region),
    'computations' (a sequence of them), 'callee' (an XlaComputation called by name: a private
    function of the module, referenced by a symbol attribute).
    """
    name: str
    kind: str
    attr: AttrKind | None = None
    default: Any = REQUIRED
    doc: str = ""

    @property
    def is_operand(self) -> bool: return self.kind in ("operand", "operands")

    @property
    def is_region(self) -> bool: return self.kind in ("computation", "computations")

    @property
    def is_callee(self) -> bool: return self.kind == "callee"

    @property
    def variadic(self) -> bool: return self.kind in ("operands", "computations")

    @property
    def optional(self) -> bool: return self.default is not REQUIRED


def Operand(name, doc=""): return Param(name, "operand", doc=doc)
def Operands(name, doc=""): return Param(name, "operands", doc=doc)
def Attr(name, kind, default=REQUIRED, doc=""): return Param(name, "attr", kind, default, doc)
def Comp(name, doc=""): return Param(name, "computation", doc=doc)
def Comps(name, doc=""): return Param(name, "computations", doc=doc)
def Callee(name, doc=""): return Param(name, "callee", doc=doc)


@dataclasses.dataclass(frozen=True)
class Sig:
    """The program shape of a computation: parameter shapes and result shape."""
    params: tuple
    result: Shape

    def __repr__(self):
        return "(" + ", ".join(map(repr, self.params)) + f") -> {self.result!r}"


def snake(seed: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", seed).lower()


@dataclasses.dataclass
class OpDef:
    """The declarative record of one op."""
    seed: str                          # name in the spec / XlaBuilder: "DotGeneral"
    params: Sequence[Param]            # the seed's arguments, in order
    infer: Callable                    # infer(chk, **args) -> Shape; raises XlaError
    reference: Callable | None         # reference(**args, result=Shape) -> numpy value(s)
    family: str                        # file in dialect/ops/ that holds it
    section: str                       # heading of the spec section that defines it
    name: str = ""                     # snake_case name: "dot_general" -> op "xla.dot_general"
    doc: str = ""
    bind: Callable | None = None       # custom mapping of a Python call onto params
    side_effecting: bool = False
    takes_builder: bool = False        # no array operand: the python function takes the Builder first
    #: the reference reads the running replica's state (side effects, collectives): the
    #: interpreter passes itself as `interp=`
    reference_takes_interp: bool = False
    #: how dynamic (bounded) dimension sizes flow through the op: dynamic(ctx) -> {result
    #: dimension: size}, ctx a dialect.ops.dynamic.DynamicContext (the interpreter's on ints,
    #: the lowering's on IR values); None: an operand with a dynamic dimension is an error
    dynamic: Callable | None = None
    #: the constraints the shape rule checks, {id: one-line rule}: StableHLO's ids (`gather_c5`)
    #: where the op maps to a StableHLO op, the spec section's (`spec:Gather`) otherwise; every
    #: XlaError of the rule cites one of them or one of checks.IR_CONSTRAINTS
    constraints: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if not self.name:
            self.name = snake(self.seed)
        self.params = tuple(self.params)

    @property
    def mlir_name(self) -> str:
        return "xla." + self.name

    @property
    def operand_params(self): return [p for p in self.params if p.is_operand]

    @property
    def region_params(self): return [p for p in self.params if p.is_region]

    @property
    def attr_params(self): return [p for p in self.params if p.kind == "attr"]

    @property
    def callee_params(self): return [p for p in self.params if p.is_callee]

    def check(self, location=None) -> Check:
        return Check(self.name, location)

    # -- MLIR encoding of operand groups and regions ---------------------------------------
    def segment_attr(self, groups: dict) -> ir.Attribute | None:
        ops = self.operand_params
        if sum(p.variadic for p in ops) <= 1:
            return None
        sizes = [len(groups[p.name]) if p.variadic else 1 for p in ops]
        return ir.DenseI32ArrayAttr.get(sizes)

    def unpack(self, op: ir.Operation, chk: Check | None = None) -> dict:
        """Split an MLIR op into {param name: Value | [Value] | python attr | Region | [Region]}."""
        chk = chk or self.check()
        out: dict[str, Any] = {}
        operands = list(op.operands)
        ops = self.operand_params
        nvar = sum(p.variadic for p in ops)
        if nvar > 1 and "operandSegmentSizes" not in op.attributes and nvar == len(ops) == 2 \
                and len(operands) % 2 == 0:
            sizes = [len(operands) // 2] * 2          # two equal groups (operands, init_values)
        elif nvar > 1:
            if "operandSegmentSizes" not in op.attributes:
                chk.fail("operandSegmentSizes", "must be present for an op with several operand groups",
                         None, show_got=False, cid="ir:operands")
            sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
            if len(sizes) != len(ops) or sum(sizes) != len(operands):
                chk.fail("operandSegmentSizes", f"must give {len(ops)} sizes adding to {len(operands)}", sizes,
                         cid="ir:operands")
        else:
            fixed = len(ops) - nvar
            if (nvar == 0 and len(operands) != fixed) or len(operands) < fixed:
                chk.fail("operands", f"must number {fixed}{' or more' if nvar else ''}", len(operands),
                         cid="ir:operands")
            sizes = [len(operands) - fixed if p.variadic else 1 for p in ops]
        i = 0
        for p, n in zip(ops, sizes):
            vals = operands[i:i + n]
            i += n
            if not p.variadic and n != 1:
                chk.fail(p.name, "must be one operand", n, cid="ir:operands")
            out[p.name] = list(vals) if p.variadic else vals[0]
        regions = list(op.regions)
        rps = self.region_params
        fixed = sum(not p.variadic for p in rps)
        nvar = len(regions) - fixed
        if (nvar != 0 and not any(p.variadic for p in rps)) or nvar < 0:
            chk.fail("regions", f"must number {fixed}", len(regions), cid="ir:regions")
        i = 0
        for p in rps:
            n = nvar if p.variadic else 1
            out[p.name] = regions[i:i + n] if p.variadic else regions[i]
            i += n
        attrs = op.attributes
        for p in self.callee_params:
            if p.name not in attrs:
                chk.fail(p.name, "is required (a symbol naming a function of the module)", None,
                         show_got=False, cid="ir:callee")
            try:
                out[p.name] = ir.FlatSymbolRefAttr(attrs[p.name]).value
            except (ValueError, TypeError):
                chk.fail(p.name, "must be a symbol naming a function of the module", _attr_text(attrs, p.name),
                         cid="ir:callee")
        for p in self.attr_params:
            if p.name in attrs:
                try:
                    out[p.name] = p.attr.from_attr(attrs[p.name])
                except (ValueError, TypeError, KeyError) as e:
                    chk.fail(p.name, f"must be {p.attr.what}", _attr_text(attrs, p.name), cid="ir:attributes")
            elif p.optional:
                out[p.name] = p.default
            else:
                chk.fail(p.name, "is required", None, show_got=False, cid="ir:attributes")
        return out


def _attr_text(attrs, name: str) -> str:
    """The text of an attribute, also of kinds the bindings cannot represent in Python (reading
    `array<ui8: ...>` raises TypeError)."""
    try:
        return str(attrs[name])
    except (TypeError, ValueError) as e:
        m = re.search(r"Attribute\((.*?)\)\)?\s*$", str(e))
        return m.group(1) if m else "an attribute of a kind the MLIR bindings cannot read"


# ----------------------------------------------------------------------------------------
# registry
# ----------------------------------------------------------------------------------------
REGISTRY: dict[str, OpDef] = {}

#: ops that are part of the IR's structure rather than of the spec.
RETURN = "xla.return"


def register(*defs: OpDef) -> None:
    for d in defs:
        if d.name in REGISTRY:
            raise RuntimeError(f"op {d.name} registered twice")
        REGISTRY[d.name] = d


def lookup(mlir_name: str) -> OpDef | None:
    if not mlir_name.startswith("xla."):
        return None
    return REGISTRY.get(mlir_name[4:])


def all_ops() -> list[OpDef]:
    """Every op record, by name (the package xlair.dialect imports every family's module, so
    the registry is whole once any module of the dialect is imported)."""
    return sorted(REGISTRY.values(), key=lambda d: d.name)


def enclosing_module(op: ir.Operation) -> ir.Operation | None:
    """The builtin.module at the top of `op`'s parents (None when `op` is not in one)."""
    top = op
    while top.parent is not None:
        top = top.parent
    return top if top.name == "builtin.module" else None


def functions(module) -> dict[str, ir.Operation]:
    """The func.func ops of a module (an ir.Module or its builtin.module op), by name."""
    return {ir.StringAttr(f.attributes["sym_name"]).value: f.operation
            for f in module.operation.regions[0].blocks[0].operations if f.operation.name == "func.func"}


def find_function(op: ir.Operation, name: str) -> ir.Operation | None:
    """The func.func named `name` in the module enclosing `op`."""
    top = enclosing_module(op)
    return functions(top).get(name) if top is not None else None


def function_sig(f: ir.Operation) -> Sig:
    from .types import Shape
    ft = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    if len(ft.results) != 1:
        raise TypeError(f"a computation returns one value; @{ir.StringAttr(f.attributes['sym_name']).value} "
                        f"returns {len(ft.results)}")
    return Sig(tuple(Shape.from_mlir(t) for t in ft.inputs), Shape.from_mlir(ft.results[0]))


def location_str(loc: ir.Location) -> str | None:
    """`file:line` of an MLIR location, when it has one."""
    s = str(loc)
    m = re.search(r'loc\("([^"]+)":(\d+):\d+\)', s)
    return f"{m.group(1)}:{m.group(2)}" if m else None


def raise_at(e: XlaError, loc) -> None:
    raise e.at(location_str(loc) if isinstance(loc, ir.Location) else loc) from None
