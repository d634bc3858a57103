"""The StableHLO bridge: a StableHLO module (text) becomes an xla `Computation`.

    comp = xlair.from_stablehlo(text)             # @main, or the only public function
    comp = xlair.from_stablehlo(text, entry="f")

The text is parsed by the MLIR bindings (the stablehlo and chlo dialects are registered in
IREE's context).  chlo ops are first decomposed into stablehlo ops by StableHLO's own
`chlo-legalize-to-stablehlo` pass, as XLA does.  Every function reached from the entry is
then walked op by op and rebuilt through the `Builder`, so each xla op runs its shape rule as
it is made; the result type each xla op gets is checked against the StableHLO result type.

How StableHLO's structure maps onto XLA's:
- an op with several results becomes an xla op with a tuple result and `get_tuple_element`s;
- a function with several results returns a tuple; `func.call` becomes `xla.call`;
- regions of reduce/sort/scatter/map/... become computations of scalar parameters;
- `stablehlo.while` carries its N values (and any value its regions use from the enclosing
  scope) as one tuple; `stablehlo.if`/`case` branches receive the values they use from the
  enclosing scope as their operand (a tuple, possibly empty); constants are re-made inside;
- `compare` with compare_type TOTALORDER becomes the `*_total_order` ops;
- `convert` from complex to a real type is `real` then `convert_element_type` (the imaginary
  part is dropped, as StableHLO says); complex constants are `complex(real, imag)`;
- the `dynamic_*` ops whose result type is static and whose shape operands are constants
  become their static counterparts;
- `!stablehlo.token` is the xla token; after_all/create_token are `after_all`; infeed, outfeed,
  send and recv take their token operand (XLA's *WithToken forms) and return (data..., token);
- custom_call (api_version 1, default layouts) is `custom_call` of its call_target_name, the
  results a tuple when several (a target registered with `xlair.register_custom_call`);
- variadic collectives are one xla collective per operand; a program runs as one partition
  of each replica (a positive channel_handle of all_reduce/all_gather/reduce_scatter groups
  replicas with their one partition; partition_id is 0); reduce_scatter is all_reduce then
  the replica's block (dynamic_slice), collective_broadcast an all_reduce keeping the group's
  first value: XLA's operation set has neither.

Constructs xlair has no counterpart for raise `Unsupported` (an `XlaError`) naming the op
or the type: element types outside XLA's set (i2, i4, f8 ...), dynamic shapes, quantized
types, ops with no xla counterpart, custom calls of other API versions or layouts,
cross-partition collectives, Send/Recv of several values.  Other bad input raises `XlaError`.
"""
from __future__ import annotations

import re
from typing import Callable

import numpy as np

from xlair.dialect.attrs import (ConvolutionDimensionNumbers, DotDimensionNumbers, FftType,
                                 GatherDimensionNumbers, PaddingConfig, RandomAlgorithm,
                                 ScatterDimensionNumbers, Transpose, literal_value)
from xlair.dialect.checks import XlaError
from xlair.dialect.core import REGISTRY, lookup
from xlair.dialect.ir import context, ir, lock, passmanager
from xlair.dialect.types import S32, Shape, from_mlir_element, is_tuple_type

from .builder import Builder, Op
from .computation import Computation

__all__ = ["from_stablehlo", "import_module", "Unsupported", "SUPPORTED", "UNSUPPORTED"]


class Unsupported(XlaError):
    """A StableHLO construct that xlair has no counterpart for (an op, a type, a feature)."""


# ----------------------------------------------------------------------------------------
# entry points
# ----------------------------------------------------------------------------------------
def from_stablehlo(text: str, entry: str | None = None) -> Computation:
    """The xla Computation of a StableHLO module given as text.  `entry` names the function
    to take: by default `main`, else the module's only public function."""
    if not isinstance(text, str):
        raise XlaError(f"from_stablehlo takes the module's text (a str); got {type(text).__name__}")
    with lock, context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise XlaError(f"cannot parse the StableHLO module: {_diag(e)}") from None
        return import_module(module, entry)


def import_module(module: ir.Module, entry: str | None = None) -> Computation:
    """Like `from_stablehlo`, for a module parsed in xlair's context (it is modified: chlo
    ops are decomposed in place)."""
    with lock, context():
        _legalize_chlo(module)
        funcs = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func":
                funcs[ir.StringAttr(op.attributes["sym_name"]).value] = op
        return _Importer(funcs, _module_int(module, "mhlo.num_partitions", 1),
                         _module_int(module, "mhlo.num_replicas", None)).function(_entry_name(funcs, entry))


def _module_int(module: ir.Module, name: str, default: int | None) -> int | None:
    """An integer attribute of the module (JAX writes mhlo.num_replicas, mhlo.num_partitions)."""
    attrs = module.operation.attributes
    return ir.IntegerAttr(attrs[name]).value if name in attrs else default


def _entry_name(funcs: dict, entry: str | None) -> str:
    if entry is not None:
        if entry not in funcs:
            raise XlaError(f"the StableHLO module has no function @{entry}; it has "
                           f"{', '.join('@' + n for n in funcs) or 'none'}")
        return entry
    if "main" in funcs:
        return "main"
    public = [n for n, f in funcs.items() if "sym_visibility" not in f.attributes
              or ir.StringAttr(f.attributes["sym_visibility"]).value == "public"]
    if len(public) != 1:
        raise XlaError("the StableHLO module has no @main and "
                       f"{'no' if not public else len(public)} public functions "
                       f"({', '.join('@' + n for n in public)}); name the entry with entry=")
    return public[0]


def _diag(e) -> str:
    return "; ".join(str(d) for d in getattr(e, "error_diagnostics", [])) or str(e)


def _legalize_chlo(module: ir.Module) -> None:
    """Decompose chlo ops into stablehlo ops with StableHLO's own pass."""
    if not _any_op(module.operation, lambda n: n.startswith("chlo.")):
        return
    try:
        passmanager.PassManager.parse("builtin.module(func.func(chlo-legalize-to-stablehlo))").run(
            module.operation)
    except ir.MLIRError as e:
        raise XlaError(f"cannot decompose the chlo ops: {_diag(e)}") from None
    left = []
    _any_op(module.operation, lambda n: n.startswith("chlo.") and left.append(n) and False)
    if left:
        raise Unsupported(f"'{left[0]}' has no decomposition into stablehlo ops (chlo-legalize-to-stablehlo "
                          "leaves it), and xla has no counterpart", op=left[0])


def _any_op(top: ir.Operation, pred: Callable[[str], bool]) -> bool:
    found = []

    def visit(op):
        if pred((op.operation if hasattr(op, "operation") else op).name):
            found.append(True)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    top.walk(visit)
    return bool(found)


# ----------------------------------------------------------------------------------------
# types and attributes
# ----------------------------------------------------------------------------------------
def shape_of(t: ir.Type, what: str = "value") -> Shape:
    """The xla Shape of a StableHLO type (StableHLO's `i32` is signed, `ui32` unsigned, as
    in the xla dialect; `!stablehlo.token` is a token)."""
    s = str(t)
    if s == "!stablehlo.token":
        return Shape.token()
    if is_tuple_type(t):
        tt = ir.TupleType(t)
        return Shape.tuple([shape_of(tt.get_type(i), what) for i in range(tt.num_types)])
    if t.typeid == ir.RankedTensorType.static_typeid:
        rt = ir.RankedTensorType(t)
        if not rt.has_static_shape:
            raise Unsupported(f"{what} has the dynamic shape {s}; xlair's shapes are static")
        if rt.encoding is not None:
            raise Unsupported(f"{what} has a tensor encoding ({s}); xlair's arrays are dense and static")
        try:
            et = from_mlir_element(rt.element_type)
        except TypeError:
            raise Unsupported(f"{what} has element type {rt.element_type}, which is not an XLA element type "
                              "(PRED, S8-S64, U8-U64, F16, BF16, F32, F64, C64, C128)") from None
        return Shape(et, rt.shape)
    if t.typeid == ir.UnrankedTensorType.static_typeid:
        raise Unsupported(f"{what} has the unranked type {s}; xlair's shapes are static")
    raise Unsupported(f"{what} has type {s}, which is not a tensor, tuple or token")


def _ints(a: ir.Attribute) -> tuple:
    """Integers of an i64 dense array, an integer elements attribute or an array of integers."""
    if isinstance(a, (ir.DenseI64ArrayAttr, ir.DenseI32ArrayAttr)):
        return tuple(int(x) for x in a)
    if isinstance(a, ir.ArrayAttr):
        return tuple(ir.IntegerAttr(x).value for x in a)
    return tuple(int(x) for x in np.array(ir.DenseIntElementsAttr(a)).reshape(-1))


def _int_matrix(a: ir.Attribute) -> list:
    arr = np.array(ir.DenseIntElementsAttr(a))
    return [tuple(int(x) for x in row) for row in arr.reshape(-1, 2)]


def _bools(a: ir.Attribute) -> tuple:
    if isinstance(a, ir.DenseBoolArrayAttr):
        return tuple(bool(x) for x in a)
    return tuple(bool(x) for x in np.array(ir.DenseElementsAttr(a)).reshape(-1))


def _enum(a: ir.Attribute) -> str:
    """`#stablehlo<comparison_direction EQ>` -> "EQ"."""
    m = re.fullmatch(r"#stablehlo<\s*\w+\s+(\w+)\s*>", str(a))
    if not m:
        raise XlaError(f"expected a StableHLO enum attribute; got {a}")
    return m.group(1)


def _struct(a: ir.Attribute, kind: str) -> dict:
    """`#stablehlo.gather<offset_dims = [1], index_vector_dim = 1>` -> {name: ints or int}."""
    text = str(a)
    m = re.fullmatch(rf"#stablehlo\.{kind}<(.*)>", text, re.S)
    if not m:
        raise XlaError(f"expected a #stablehlo.{kind} attribute; got {text}")
    out = {}
    for key, val in re.findall(r"(\w+)\s*=\s*(\[[^\]]*\]|[^,\s>]+)", m.group(1)):
        if val.startswith("["):
            out[key] = tuple(int(x) for x in re.findall(r"-?\d+", val))
        elif val in ("true", "false"):
            out[key] = val == "true"
        else:
            out[key] = int(val)
    return out


def _conv_numbers(a: ir.Attribute) -> ConvolutionDimensionNumbers:
    """`#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>` (also the raw keyed form)."""
    text = str(a)
    m = re.fullmatch(r"#stablehlo\.conv<\s*\[([^\]]*)\]\s*x\s*\[([^\]]*)\]\s*->\s*\[([^\]]*)\]\s*>", text)
    if m:
        def layout(s, letters):
            items = [x.strip() for x in s.split(",") if x.strip()]
            fixed = {c: items.index(c) for c in letters}
            spatial = sorted((int(x), i) for i, x in enumerate(items) if x.isdigit())
            return fixed, tuple(i for _, i in spatial)
        (li, ls), (ki, ks), (oi, os_) = layout(m.group(1), "bf"), layout(m.group(2), "io"), layout(m.group(3), "bf")
        return ConvolutionDimensionNumbers(li["b"], li["f"], ls, ki["i"], ki["o"], ks, oi["b"], oi["f"], os_)
    d = _struct(a, "conv")
    return ConvolutionDimensionNumbers(
        d["input_batch_dimension"], d["input_feature_dimension"], d.get("input_spatial_dimensions", ()),
        d["kernel_input_feature_dimension"], d["kernel_output_feature_dimension"],
        d.get("kernel_spatial_dimensions", ()), d["output_batch_dimension"], d["output_feature_dimension"],
        d.get("output_spatial_dimensions", ()))


def _complex_literal(op: ir.Operation, shape: Shape) -> np.ndarray:
    """The value of a complex `stablehlo.constant` (the bindings cannot hand out complex
    elements attributes): its text, re-read by MLIR as (real, imag) pairs of components."""
    if shape.size == 0:
        return np.zeros(shape.dims, shape.dtype)
    text = op.get_asm(print_generic_op_form=True)
    start = text.index("value = dense<") + len("value = dense")
    depth, i = 0, start
    while True:
        depth += {"<": 1, ">": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            break
    body = text[start + 1:i - 1].strip()
    comp = shape.element_type.component
    lead = "".join(f"{d}x" for d in shape.dims)
    if body.startswith('"'):                       # raw hex: real and imaginary parts interleaved
        nbytes = (len(body) - 4) // 2
        t = f"tensor<2x{comp.mlir}>" if nbytes == 2 * comp.dtype.itemsize else f"tensor<{lead}2x{comp.mlir}>"
    elif body.startswith("("):                     # a splat (re, im)
        t = f"tensor<2x{comp.mlir}>"
    else:
        t = f"tensor<{lead}2x{comp.mlir}>"
    pairs = ir.Attribute.parse(f"dense<{body.replace('(', '[').replace(')', ']')}> : {t}")
    arr = np.array(ir.DenseElementsAttr(pairs)).astype(comp.dtype).reshape(-1, 2)
    vals = np.empty(arr.shape[0], shape.dtype)
    vals.real, vals.imag = arr[:, 0], arr[:, 1]
    return np.full(shape.dims, vals[0], shape.dtype) if vals.size == 1 else vals.reshape(shape.dims)


def constant_value(op: ir.Operation) -> np.ndarray:
    """The numpy value of a `stablehlo.constant` op."""
    shape = shape_of(op.results[0].type, "'stablehlo.constant' result")
    if shape.element_type.is_complex:
        return _complex_literal(op, shape)
    if shape.size == 0:
        return np.zeros(shape.dims, shape.dtype)
    return literal_value(op.attributes["value"])


# ----------------------------------------------------------------------------------------
# the importer
# ----------------------------------------------------------------------------------------
def _loc(op) -> tuple[str, int] | None:
    m = re.search(r'loc\("([^"]*)":(\d+):\d+\)', str(op.location))
    if not m:
        return None
    return ("stablehlo" if m.group(1) in ("-", "") else m.group(1)), int(m.group(2))


class _Importer:
    """Turns the functions of one module into Computations (each function once)."""

    def __init__(self, funcs: dict, num_partitions: int = 1, num_replicas: int | None = None):
        self.funcs = funcs
        self.num_partitions = num_partitions
        self.num_replicas = num_replicas
        self.done: dict[str, Computation] = {}
        self.active: list[str] = []

    def function(self, name: str) -> Computation:
        if name in self.done:
            return self.done[name]
        if name in self.active:
            raise Unsupported(f"@{name} calls itself (through {' -> '.join('@' + n for n in self.active)}); "
                              "XLA computations cannot recurse")
        f = self.funcs.get(name)
        if f is None:
            raise XlaError(f"func.call: no function @{name} in the module")
        if not f.regions[0].blocks:
            raise XlaError(f"@{name} is only declared (no body); xlair needs its definition")
        self.active.append(name)
        try:
            ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
            block = f.regions[0].blocks[0]
            b = Builder(name)
            try:
                shapes = [shape_of(t, f"@{name} argument {i}") for i, t in enumerate(ftype.inputs)]
            except XlaError as e:
                loc = _loc(f)
                raise type(e)(e.message, op=e.op, location=f"{loc[0]}:{loc[1]}" if loc else None) from None
            params = [b.parameter(i, s) for i, s in enumerate(shapes)]
            scope = _Scope(self, b, dict(zip(block.arguments, params)), f"@{name}")
            results = scope.run(block)
            if not results:
                raise Unsupported(f"@{name} returns no value; an XLA computation returns one "
                                  "(a tuple for several)")
            root = results[0] if len(results) == 1 else scope.emit("tuple", elements=results)
            comp = b.build(root)
        finally:
            self.active.pop()
        self.done[name] = comp
        return comp


class _Scope:
    """One block being rebuilt into one Builder: StableHLO values -> xla Op handles."""

    def __init__(self, importer: _Importer, builder: Builder, env: dict, what: str,
                 parent: "_Scope | None" = None, inline_calls: bool = False):
        self.importer, self.b, self.env, self.what = importer, builder, env, what
        self.parent = parent
        # in a scalar computation, calls are inlined: xlair lowers those computations to
        # straight-line scalar code inside the op that uses them
        self.inline_calls = inline_calls

    # -- values --------------------------------------------------------------------------
    def get(self, v: ir.Value) -> Op:
        op = self.env.get(v)
        if op is not None:
            return op
        owner = v.owner
        if isinstance(owner, ir.OpView) or isinstance(owner, ir.Operation):
            if owner.operation.name == "stablehlo.constant":   # re-made where it is used
                out = self._constant(owner.operation)
                self.env[v] = out
                return out
        raise Unsupported(f"a value defined outside the region of '{self.what}' is used inside it; "
                          "XLA's scalar computations cannot capture values", op=self.what)

    def emit(self, name: str, **args) -> Op:
        opdef = REGISTRY.get(name)
        if opdef is None:
            raise Unsupported(f"xla.{name} does not exist in xlair (yet)", op=name)
        return self.b.add(opdef, args)

    def unpack(self, op: Op, n: int) -> list:
        if n == 0:
            return []
        if n == 1:
            return [op]
        return [self.emit("get_tuple_element", tuple_data=op, index=i) for i in range(n)]

    def pack(self, ops: list) -> Op:
        """One value as itself; none or several as a tuple."""
        return ops[0] if len(ops) == 1 else self.emit("tuple", elements=list(ops))

    # -- blocks --------------------------------------------------------------------------
    def run(self, block: ir.Block) -> list:
        """Convert the block's ops; returns the Op handles of its terminator's operands."""
        for op in block.operations:
            op = op.operation
            if op.name in ("func.return", "stablehlo.return"):
                return [self.get(v) for v in op.operands]
            self.convert(op)
        raise XlaError(f"the block of {self.what} has no terminator")

    def convert(self, op: ir.Operation) -> None:
        name = op.name
        fn = CONVERTERS.get(name)
        start = len(self.b._nodes)
        try:
            if fn is None:
                raise Unsupported(_unsupported_reason(name), op=name)
            lacks = XLA_LACKS.get(name)
            why = lacks(op) if lacks else None
            if why:
                raise Unsupported(f"'{name}' {why}", op=name)
            outs = fn(self, op)
            if len(outs) != len(op.results):
                raise XlaError(f"made {len(outs)} values for {len(op.results)} results")
            for i, (res, out) in enumerate(zip(op.results, outs)):
                want = shape_of(res.type, f"result {i}")
                if out.shape != want:
                    raise XlaError(f"result {i} is {want} in StableHLO but {out.shape} by the xla op's "
                                   "shape rule")
                self.env[res] = out
        except XlaError as e:
            if getattr(e, "located", False):       # raised (and located) by an op nested in a region
                raise
            cls = Unsupported if isinstance(e, Unsupported) else XlaError
            loc = _loc(op)
            err = cls(_prefix(name, e.message), op=name if cls is Unsupported else (e.op or name),
                      param=e.param, location=f"{loc[0]}:{loc[1]}" if loc else None)
            err.located = True
            raise err from None
        loc = _loc(op)
        if loc:
            for node in self.b._nodes[start:]:
                node.loc = loc

    def _constant(self, op: ir.Operation) -> Op:
        value = constant_value(op)
        if value.dtype.kind == "c":
            return self.emit("complex", lhs=self.emit("constant", value=np.array(value.real)),
                             rhs=self.emit("constant", value=np.array(value.imag)))
        return self.emit("constant", value=value)

    def constant_operand(self, v: ir.Value, what: str) -> np.ndarray:
        """The value of an operand that must be a constant (shape operands of dynamic ops)."""
        owner = v.owner
        if (isinstance(owner, (ir.OpView, ir.Operation)) and owner.operation.name == "stablehlo.constant"):
            return constant_value(owner.operation)
        raise Unsupported(f"{what} is not a constant; xlair's shapes are static")

    # -- regions -------------------------------------------------------------------------
    def scalar_computation(self, region: ir.Region, what: str) -> Computation:
        """A region of scalar parameters (reduce, sort, scatter, map ...) as a Computation."""
        block = _single_block(region, what)
        b = Builder(what.replace("stablehlo.", ""))
        params = [b.parameter(i, shape_of(a.type, f"{what} region argument {i}"))
                  for i, a in enumerate(block.arguments)]
        sub = _Scope(self.importer, b, dict(zip(block.arguments, params)), what, self, inline_calls=True)
        res = sub.run(block)
        if not res:
            raise XlaError(f"the region of {what} returns no value")
        return b.build(sub.pack(res))

    def threaded_computation(self, region: ir.Region, what: str, state: list, captures: list,
                             pack_result: Callable | None) -> Computation:
        """A region whose parameter is one value: `state` shapes (bound to the block's
        arguments) then `captures` (values of the enclosing scope), a tuple unless one value.
        `pack_result(sub, results, params)` makes the root from the returned values."""
        block = _single_block(region, what)
        b = Builder(what.replace("stablehlo.", ""))
        shapes = [s for s in state] + [self.get(v).shape for v in captures]
        single = len(shapes) == 1
        p = b.parameter(0, shapes[0] if single else Shape.tuple(shapes))
        sub = _Scope(self.importer, b, {}, what, self)
        items = [p] if single else [sub.emit("get_tuple_element", tuple_data=p, index=i)
                                    for i in range(len(shapes))]
        if len(block.arguments) != len(state):
            raise XlaError(f"the region of {what} takes {len(block.arguments)} arguments; expected {len(state)}")
        for a, it in zip(block.arguments, items):
            sub.env[a] = it
        for v, it in zip(captures, items[len(state):]):
            sub.env[v] = it
        res = sub.run(block)
        root = pack_result(sub, res, items) if pack_result else sub.pack(res)
        return b.build(root)


def _single_block(region: ir.Region, what: str) -> ir.Block:
    blocks = list(region.blocks)
    if len(blocks) != 1:
        raise XlaError(f"a region of {what} must have one block; got {len(blocks)}")
    return blocks[0]


def _prefix(name: str, msg: str) -> str:
    return msg if msg.startswith(f"'{name}'") else f"'{name}': {msg}"


def free_values(regions) -> list:
    """Values used inside `regions` but defined outside them (constants excluded: they are
    re-made where they are used), in order of first use."""
    defined, used, order = set(), set(), []

    def walk_region(r):
        for blk in r.blocks:
            for a in blk.arguments:
                defined.add(a)
            for op in blk.operations:
                op = op.operation
                for v in op.operands:
                    if v not in used:
                        used.add(v)
                        order.append(v)
                for res in op.results:
                    defined.add(res)
                for sub in op.regions:
                    walk_region(sub)
    for r in regions:
        walk_region(r)
    out = []
    for v in order:
        if v in defined:
            continue
        owner = v.owner
        if isinstance(owner, (ir.OpView, ir.Operation)) and owner.operation.name == "stablehlo.constant":
            continue
        out.append(v)
    return out


# ----------------------------------------------------------------------------------------
# converters: one function per StableHLO op (tables for the simple ones)
# ----------------------------------------------------------------------------------------
Converter = Callable[[_Scope, ir.Operation], list]
CONVERTERS: dict[str, Converter] = {}

UNARY = {   # stablehlo op -> xla op, operand -> operand
    "abs": "abs", "cbrt": "cbrt", "ceil": "ceil", "cosine": "cos", "count_leading_zeros": "clz",
    "exponential": "exp", "exponential_minus_one": "expm1", "floor": "floor", "imag": "imag",
    "is_finite": "is_finite", "log": "log", "log_plus_one": "log1p", "logistic": "logistic",
    "negate": "neg", "not": "not", "popcnt": "population_count", "real": "real",
    "round_nearest_afz": "round_nearest_afz", "round_nearest_even": "round_nearest_even",
    "rsqrt": "rsqrt", "sign": "sign", "sine": "sin", "sqrt": "sqrt", "tan": "tan", "tanh": "tanh",
}
BINARY = {  # stablehlo op -> xla op, (lhs, rhs) -> (lhs, rhs)
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "remainder": "rem",
    "maximum": "max", "minimum": "min", "power": "pow", "atan2": "atan2", "and": "and", "or": "or",
    "xor": "xor", "shift_left": "shift_left", "shift_right_arithmetic": "shift_right_arithmetic",
    "shift_right_logical": "shift_right_logical", "complex": "complex",
}


def _table(table: dict, fn):
    for sh, xla_name in table.items():
        CONVERTERS["stablehlo." + sh] = fn(xla_name)


_table(UNARY, lambda x: lambda s, op: [s.emit(x, operand=s.get(op.operands[0]))])
_table(BINARY, lambda x: lambda s, op: [s.emit(x, lhs=s.get(op.operands[0]), rhs=s.get(op.operands[1]))])


def converter(*names):
    def deco(fn):
        for n in names:
            CONVERTERS[n] = fn
        return fn
    return deco


def _attr(op, name, default=None):
    return op.attributes[name] if name in op.attributes else default


def _result_shape(op, i=0) -> Shape:
    return shape_of(op.results[i].type, f"result {i}")


# -- data: constants, iota, shapes ---------------------------------------------------------
@converter("stablehlo.constant")
def _c_constant(s, op):
    return [s._constant(op)]


@converter("stablehlo.iota")
def _c_iota(s, op):
    return [s.emit("iota", shape=_result_shape(op), iota_dimension=ir.IntegerAttr(op.attributes["iota_dimension"]).value)]


@converter("stablehlo.broadcast_in_dim")
def _c_bid(s, op):
    return [s.emit("broadcast_in_dim", operand=s.get(op.operands[0]), out_dim_size=_result_shape(op).dims,
                   broadcast_dimensions=_ints(op.attributes["broadcast_dimensions"]))]


@converter("stablehlo.broadcast")
def _c_broadcast(s, op):
    return [s.emit("broadcast", operand=s.get(op.operands[0]), broadcast_sizes=_ints(op.attributes["broadcast_sizes"]))]


@converter("stablehlo.reshape")
def _c_reshape(s, op):
    return [s.emit("reshape", operand=s.get(op.operands[0]), dimensions=None, new_sizes=_result_shape(op).dims)]


@converter("stablehlo.transpose")
def _c_transpose(s, op):
    return [s.emit("transpose", operand=s.get(op.operands[0]), permutation=_ints(op.attributes["permutation"]))]


@converter("stablehlo.reverse")
def _c_reverse(s, op):
    return [s.emit("rev", operand=s.get(op.operands[0]), dimensions=_ints(op.attributes["dimensions"]))]


@converter("stablehlo.slice")
def _c_slice(s, op):
    x = s.get(op.operands[0])
    strides = _attr(op, "strides")
    return [s.emit("slice", operand=x, start_indices=_ints(op.attributes["start_indices"]),
                   limit_indices=_ints(op.attributes["limit_indices"]),
                   strides=_ints(strides) if strides is not None else None)]


@converter("stablehlo.concatenate")
def _c_concat(s, op):
    return [s.emit("concatenate", operands=[s.get(v) for v in op.operands],
                   dimension=ir.IntegerAttr(op.attributes["dimension"]).value)]


@converter("stablehlo.pad")
def _c_pad(s, op):
    triples = zip(_ints(op.attributes["edge_padding_low"]), _ints(op.attributes["edge_padding_high"]),
                  _ints(op.attributes["interior_padding"]))
    return [s.emit("pad", operand=s.get(op.operands[0]), padding_value=s.get(op.operands[1]),
                   padding_config=PaddingConfig(tuple(triples)))]


@converter("stablehlo.tuple")
def _c_tuple(s, op):
    return [s.emit("tuple", elements=[s.get(v) for v in op.operands])]


@converter("stablehlo.get_tuple_element")
def _c_gte(s, op):
    return [s.emit("get_tuple_element", tuple_data=s.get(op.operands[0]),
                   index=ir.IntegerAttr(op.attributes["index"]).value)]


@converter("stablehlo.dynamic_slice")
def _c_dynamic_slice(s, op):
    return [s.emit("dynamic_slice", operand=s.get(op.operands[0]), start_indices=[s.get(v) for v in op.operands[1:]],
                   size_indices=_ints(op.attributes["slice_sizes"]))]


@converter("stablehlo.dynamic_update_slice")
def _c_dus(s, op):
    return [s.emit("dynamic_update_slice", operand=s.get(op.operands[0]), update=s.get(op.operands[1]),
                   start_indices=[s.get(v) for v in op.operands[2:]])]


@converter("stablehlo.get_dimension_size")
def _c_gds(s, op):
    return [s.emit("get_dimension_size", operand=s.get(op.operands[0]),
                   dimension=ir.IntegerAttr(op.attributes["dimension"]).value)]


@converter("stablehlo.optimization_barrier")
def _c_barrier(s, op):
    # An identity on values; it only fences optimizations, which the xla ops never move across.
    return [s.get(v) for v in op.operands]


# -- element-wise with attributes ------------------------------------------------------------
@converter("stablehlo.compare")
def _c_compare(s, op):
    direction = _enum(op.attributes["comparison_direction"])
    ctype = _enum(op.attributes["compare_type"]) if "compare_type" in op.attributes else None
    if direction not in ("EQ", "NE", "GE", "GT", "LE", "LT"):
        raise XlaError(f"comparison_direction {direction} is not one of EQ, NE, GE, GT, LE, LT")
    name = direction.lower() + ("_total_order" if ctype == "TOTALORDER" else "")
    return [s.emit(name, lhs=s.get(op.operands[0]), rhs=s.get(op.operands[1]))]


@converter("stablehlo.select")
def _c_select(s, op):
    p, t, f = (s.get(v) for v in op.operands)
    return [s.emit("select", pred=p, on_true=t, on_false=f)]


@converter("stablehlo.clamp")
def _c_clamp(s, op):
    lo, x, hi = (s.get(v) for v in op.operands)
    return [s.emit("clamp", min=lo, operand=x, max=hi)]


@converter("stablehlo.convert")
def _c_convert(s, op):
    x = s.get(op.operands[0])
    dst = _result_shape(op).element_type
    if x.shape.element_type.is_complex and not dst.is_complex:
        x = s.emit("real", operand=x)          # complex -> real types drop the imaginary part
        if x.shape.element_type == dst:
            return [x]
    return [s.emit("convert_element_type", operand=x, new_element_type=dst)]


@converter("stablehlo.bitcast_convert")
def _c_bitcast(s, op):
    return [s.emit("bitcast_convert_type", operand=s.get(op.operands[0]),
                   new_element_type=_result_shape(op).element_type)]


@converter("stablehlo.reduce_precision")
def _c_reduce_precision(s, op):
    return [s.emit("reduce_precision", operand=s.get(op.operands[0]),
                   exponent_bits=ir.IntegerAttr(op.attributes["exponent_bits"]).value,
                   mantissa_bits=ir.IntegerAttr(op.attributes["mantissa_bits"]).value)]


# -- contractions ---------------------------------------------------------------------------
def _preferred(lhs: Op, rhs: Op, result: Shape):
    et = result.element_type
    if et != lhs.shape.element_type or lhs.shape.element_type != rhs.shape.element_type:
        return et
    return None


@converter("stablehlo.dot_general")
def _c_dot_general(s, op):
    lhs, rhs = s.get(op.operands[0]), s.get(op.operands[1])
    d = _struct(op.attributes["dot_dimension_numbers"], "dot")
    dn = DotDimensionNumbers(d.get("lhs_contracting_dimensions", ()), d.get("rhs_contracting_dimensions", ()),
                             d.get("lhs_batching_dimensions", ()), d.get("rhs_batching_dimensions", ()))
    # precision_config and algorithm do not change results on xlair's targets; DotGeneral
    # (as XlaBuilder's) carries the preferred element type only.
    return [s.emit("dot_general", lhs=lhs, rhs=rhs, dimension_numbers=dn,
                   preferred_element_type=_preferred(lhs, rhs, _result_shape(op)))]


@converter("stablehlo.dot")
def _c_dot(s, op):
    lhs, rhs = s.get(op.operands[0]), s.get(op.operands[1])
    return [s.emit("dot", lhs=lhs, rhs=rhs, preferred_element_type=_preferred(lhs, rhs, _result_shape(op)))]


def _conv(s, op, padding):
    lhs, rhs = s.get(op.operands[0]), s.get(op.operands[1])
    dn = _conv_numbers(op.attributes["dimension_numbers"])
    n = len(dn.input_spatial_dimensions)
    ones = (1,) * n
    strides = _ints(op.attributes["window_strides"]) if "window_strides" in op.attributes else ones
    lhs_dil = _ints(op.attributes["lhs_dilation"]) if "lhs_dilation" in op.attributes else ones
    rhs_dil = _ints(op.attributes["rhs_dilation"]) if "rhs_dilation" in op.attributes else ones
    if "window_reversal" in op.attributes:
        rev = [d for d, r in zip(dn.kernel_spatial_dimensions, _bools(op.attributes["window_reversal"])) if r]
        if rev:          # a reversed window is the convolution with the kernel reversed
            rhs = s.emit("rev", operand=rhs, dimensions=tuple(rev))
    precision = None
    if "precision_config" in op.attributes:
        precision = tuple(_enum(a) for a in ir.ArrayAttr(op.attributes["precision_config"])) or None
    return [s.emit("conv_general_dilated", lhs=lhs, rhs=rhs, window_strides=strides, padding=padding,
                   lhs_dilation=lhs_dil, rhs_dilation=rhs_dil, dimension_numbers=dn,
                   feature_group_count=ir.IntegerAttr(op.attributes["feature_group_count"]).value,
                   batch_group_count=ir.IntegerAttr(op.attributes["batch_group_count"]).value,
                   precision_config=precision,
                   preferred_element_type=_preferred(lhs, rhs, _result_shape(op)))]


@converter("stablehlo.convolution")
def _c_convolution(s, op):
    n = _result_shape(op).rank - 2
    pad = _int_matrix(op.attributes["padding"]) if "padding" in op.attributes else [(0, 0)] * n
    return _conv(s, op, tuple(pad))


@converter("stablehlo.dynamic_conv")
def _c_dynamic_conv(s, op):
    pad = s.constant_operand(op.operands[2], "the padding operand")
    return _conv(s, op, tuple(tuple(int(x) for x in row) for row in np.asarray(pad).reshape(-1, 2)))


# -- reductions and windows -------------------------------------------------------------
@converter("stablehlo.reduce")
def _c_reduce(s, op):
    vals = [s.get(v) for v in op.operands]
    n = len(vals) // 2
    comp = s.scalar_computation(op.regions[0], "stablehlo.reduce")
    r = s.emit("reduce", operands=vals[:n], init_values=vals[n:], computation=comp,
               dimensions=_ints(op.attributes["dimensions"]))
    return s.unpack(r, n)


@converter("stablehlo.reduce_window")
def _c_reduce_window(s, op):
    vals = [s.get(v) for v in op.operands]
    n = len(vals) // 2
    rank = vals[0].shape.rank
    comp = s.scalar_computation(op.regions[0], "stablehlo.reduce_window")
    opt = {k: _ints(op.attributes[k]) if k in op.attributes else None
           for k in ("window_strides", "base_dilations", "window_dilations")}
    pad = _int_matrix(op.attributes["padding"]) if "padding" in op.attributes else [(0, 0)] * rank
    r = s.emit("reduce_window", operands=vals[:n], init_values=vals[n:], computation=comp,
               window_dimensions=_ints(op.attributes["window_dimensions"]),
               window_strides=opt["window_strides"] or (1,) * rank, padding=tuple(pad),
               base_dilations=opt["base_dilations"], window_dilations=opt["window_dilations"])
    return s.unpack(r, n)


@converter("stablehlo.select_and_scatter")
def _c_select_and_scatter(s, op):
    x, src, init = (s.get(v) for v in op.operands)
    rank = x.shape.rank
    dims = _ints(op.attributes["window_dimensions"]) if "window_dimensions" in op.attributes else (1,) * rank
    strides = _ints(op.attributes["window_strides"]) if "window_strides" in op.attributes else (1,) * rank
    pad = _int_matrix(op.attributes["padding"]) if "padding" in op.attributes else [(0, 0)] * rank
    select = s.scalar_computation(op.regions[0], "stablehlo.select_and_scatter")
    scatter = s.scalar_computation(op.regions[1], "stablehlo.select_and_scatter")
    return [s.emit("select_and_scatter", operand=x, select=select, window_dimensions=dims, window_strides=strides,
                   padding=tuple(pad), source=src, init_value=init, scatter=scatter)]


# -- indexing -------------------------------------------------------------------------------
def _gather(s, op, slice_sizes):
    d = _struct(op.attributes["dimension_numbers"], "gather")
    dn = GatherDimensionNumbers(d.get("offset_dims", ()), d.get("collapsed_slice_dims", ()),
                                d.get("start_index_map", ()), d.get("index_vector_dim", 0),
                                d.get("operand_batching_dims", ()), d.get("start_indices_batching_dims", ()))
    sorted_ = _attr(op, "indices_are_sorted")
    return [s.emit("gather", operand=s.get(op.operands[0]), start_indices=s.get(op.operands[1]),
                   dimension_numbers=dn, slice_sizes=tuple(slice_sizes),
                   indices_are_sorted=bool(ir.BoolAttr(sorted_).value) if sorted_ is not None else False)]


@converter("stablehlo.gather")
def _c_gather(s, op):
    return _gather(s, op, _ints(op.attributes["slice_sizes"]))


@converter("stablehlo.dynamic_gather")
def _c_dynamic_gather(s, op):
    sizes = s.constant_operand(op.operands[2], "the slice_sizes operand")
    return _gather(s, op, [int(x) for x in np.asarray(sizes).reshape(-1)])


@converter("stablehlo.scatter")
def _c_scatter(s, op):
    vals = [s.get(v) for v in op.operands]
    n = (len(vals) - 1) // 2
    d = _struct(op.attributes["scatter_dimension_numbers"], "scatter")
    dn = ScatterDimensionNumbers(d.get("update_window_dims", ()), d.get("inserted_window_dims", ()),
                                 d.get("scatter_dims_to_operand_dims", ()), d.get("index_vector_dim", 0),
                                 d.get("input_batching_dims", ()), d.get("scatter_indices_batching_dims", ()))
    comp = s.scalar_computation(op.regions[0], "stablehlo.scatter")
    flags = {k: bool(ir.BoolAttr(op.attributes[k]).value) if k in op.attributes else False
             for k in ("indices_are_sorted", "unique_indices")}
    r = s.emit("scatter", operands=vals[:n], scatter_indices=vals[n], updates=vals[n + 1:],
               update_computation=comp, dimension_numbers=dn, **flags)
    return s.unpack(r, n)


# -- control flow -----------------------------------------------------------------------------
@converter("stablehlo.sort")
def _c_sort(s, op):
    vals = [s.get(v) for v in op.operands]
    comp = s.scalar_computation(op.regions[0], "stablehlo.sort")
    dim = ir.IntegerAttr(op.attributes["dimension"]).value if "dimension" in op.attributes else -1
    stable = bool(ir.BoolAttr(op.attributes["is_stable"]).value) if "is_stable" in op.attributes else False
    r = s.emit("sort", operands=vals, comparator=comp, dimension=dim, is_stable=stable)
    return s.unpack(r, len(vals))


@converter("stablehlo.map")
def _c_map(s, op):
    comp = s.scalar_computation(op.regions[0], "stablehlo.map")
    return [s.emit("map", operands=[s.get(v) for v in op.operands], computation=comp,
                   dimensions=_ints(op.attributes["dimensions"]), static_operands=[])]


@converter("stablehlo.while")
def _c_while(s, op):
    init = [s.get(v) for v in op.operands]
    n = len(init)
    caps = free_values([op.regions[0], op.regions[1]])
    state = [x.shape for x in init]

    def cond_root(sub, res, items):
        return res[0]

    def body_root(sub, res, items):
        return sub.pack(list(res) + items[n:])      # the captured values ride along unchanged
    cond = s.threaded_computation(op.regions[0], "stablehlo.while", state, caps, cond_root)
    body = s.threaded_computation(op.regions[1], "stablehlo.while", state, caps, body_root)
    r = s.emit("while", condition=cond, body=body, init=s.pack(init + [s.get(v) for v in caps]))
    total = n + len(caps)
    if total == 1:
        return [r]
    return [s.emit("get_tuple_element", tuple_data=r, index=i) for i in range(n)]


def _branches(s, op, index: Op, what: str):
    comps, operands = [], []
    for region in op.regions:
        caps = free_values([region])
        comps.append(s.threaded_computation(region, what, [], caps, None) if caps else
                     _no_arg_branch(s, region, what))
        operands.append(s.pack([s.get(v) for v in caps]) if caps else s.emit("tuple", elements=[]))
    r = s.emit("conditional", branch_index=index, branch_computations=comps, branch_operands=operands)
    return s.unpack(r, len(op.results))


def _no_arg_branch(s, region, what) -> Computation:
    block = _single_block(region, what)
    b = Builder(what.replace("stablehlo.", ""))
    b.parameter(0, Shape.tuple([]))
    sub = _Scope(s.importer, b, {}, what, s)
    res = sub.run(block)
    return b.build(sub.pack(res))


@converter("stablehlo.if")
def _c_if(s, op):
    return _branches(s, op, s.get(op.operands[0]), "stablehlo.if")


@converter("stablehlo.case")
def _c_case(s, op):
    return _branches(s, op, s.get(op.operands[0]), "stablehlo.case")


def _call(s, op, name: str):
    if s.inline_calls:
        return _inline(s, op, name)
    comp = s.importer.function(name)
    r = s.emit("call", computation=comp, args=[s.get(v) for v in op.operands])
    return s.unpack(r, len(op.results))


def _inline(s, op, name: str):
    imp = s.importer
    f = imp.funcs.get(name)
    if f is None or not f.regions[0].blocks:
        raise XlaError(f"func.call: no function @{name} with a body in the module")
    if name in imp.active:
        raise Unsupported(f"@{name} calls itself; XLA computations cannot recurse")
    block = f.regions[0].blocks[0]
    imp.active.append(name)
    try:
        sub = _Scope(imp, s.b, dict(zip(block.arguments, [s.get(v) for v in op.operands])), f"@{name}", s,
                     inline_calls=True)
        return sub.run(block)
    finally:
        imp.active.pop()


@converter("func.call")
def _c_call(s, op):
    return _call(s, op, ir.FlatSymbolRefAttr(op.attributes["callee"]).value)


@converter("stablehlo.composite")
def _c_composite(s, op):
    # A composite means its decomposition function.
    return _call(s, op, ir.FlatSymbolRefAttr(op.attributes["decomposition"]).value)


# -- numerical library -------------------------------------------------------------------------
def _bool(op, name, default):
    return bool(ir.BoolAttr(op.attributes[name]).value) if name in op.attributes else default


@converter("stablehlo.triangular_solve")
def _c_trsolve(s, op):
    return [s.emit("triangular_solve", a=s.get(op.operands[0]), b=s.get(op.operands[1]),
                   left_side=_bool(op, "left_side", False), lower=_bool(op, "lower", False),
                   unit_diagonal=_bool(op, "unit_diagonal", False),
                   transpose_a=Transpose[_enum(op.attributes["transpose_a"])])]


@converter("stablehlo.cholesky")
def _c_cholesky(s, op):
    return [s.emit("cholesky", a=s.get(op.operands[0]), lower=_bool(op, "lower", False))]


@converter("stablehlo.fft")
def _c_fft(s, op):
    return [s.emit("fft", operand=s.get(op.operands[0]), fft_type=FftType[_enum(op.attributes["fft_type"])],
                   fft_length=_ints(op.attributes["fft_length"]))]


def _bn_attrs(op):
    return dict(epsilon=ir.FloatAttr(op.attributes["epsilon"]).value,
                feature_index=ir.IntegerAttr(op.attributes["feature_index"]).value)


@converter("stablehlo.batch_norm_training")
def _c_bn_training(s, op):
    x, scale, offset = (s.get(v) for v in op.operands)
    return s.unpack(s.emit("batch_norm_training", operand=x, scale=scale, offset=offset, **_bn_attrs(op)), 3)


@converter("stablehlo.batch_norm_inference")
def _c_bn_inference(s, op):
    x, scale, offset, mean, var = (s.get(v) for v in op.operands)
    return [s.emit("batch_norm_inference", operand=x, scale=scale, offset=offset, mean=mean, variance=var,
                   **_bn_attrs(op))]


@converter("stablehlo.batch_norm_grad")
def _c_bn_grad(s, op):
    x, scale, mean, var, grad = (s.get(v) for v in op.operands)
    return s.unpack(s.emit("batch_norm_grad", operand=x, scale=scale, mean=mean, variance=var, grad_output=grad,
                           **_bn_attrs(op)), 3)


@converter("stablehlo.rng")
def _c_rng(s, op):
    a, b = s.get(op.operands[0]), s.get(op.operands[1])
    dist = _enum(op.attributes["rng_distribution"])
    shape = _result_shape(op)
    if dist == "UNIFORM":
        return [s.emit("rng_uniform", a=a, b=b, shape=shape)]
    if dist == "NORMAL":
        return [s.emit("rng_normal", mu=a, sigma=b, shape=shape)]
    raise XlaError(f"rng_distribution must be UNIFORM or NORMAL; got {dist}")


@converter("stablehlo.rng_bit_generator")
def _c_rbg(s, op):
    algo = {"DEFAULT": RandomAlgorithm.RNG_DEFAULT, "THREE_FRY": RandomAlgorithm.RNG_THREE_FRY,
            "PHILOX": RandomAlgorithm.RNG_PHILOX}[_enum(op.attributes["rng_algorithm"])]
    r = s.emit("rng_bit_generator", algorithm=algo, initial_state=s.get(op.operands[0]), shape=_result_shape(op, 1))
    return s.unpack(r, 2)


# -- dynamic ops whose shapes are constants -------------------------------------------------
def _check_shape_operand(s, v, shape: Shape, what: str):
    owner = v.owner
    if isinstance(owner, (ir.OpView, ir.Operation)) and owner.operation.name == "stablehlo.constant":
        got = tuple(int(x) for x in np.asarray(constant_value(owner.operation)).reshape(-1))
        if got != shape.dims:
            raise XlaError(f"{what} {list(got)} does not match the result type {shape}")


@converter("stablehlo.dynamic_broadcast_in_dim")
def _c_dyn_bid(s, op):
    shape = _result_shape(op)
    _check_shape_operand(s, op.operands[1], shape, "output_dimensions")
    return [s.emit("broadcast_in_dim", operand=s.get(op.operands[0]), out_dim_size=shape.dims,
                   broadcast_dimensions=_ints(op.attributes["broadcast_dimensions"]))]


@converter("stablehlo.dynamic_reshape")
def _c_dyn_reshape(s, op):
    shape = _result_shape(op)
    _check_shape_operand(s, op.operands[1], shape, "output_shape")
    return [s.emit("reshape", operand=s.get(op.operands[0]), dimensions=None, new_sizes=shape.dims)]


@converter("stablehlo.dynamic_iota")
def _c_dyn_iota(s, op):
    shape = _result_shape(op)
    _check_shape_operand(s, op.operands[0], shape, "output_shape")
    return [s.emit("iota", shape=shape, iota_dimension=ir.IntegerAttr(op.attributes["iota_dimension"]).value)]


@converter("stablehlo.dynamic_pad")
def _c_dyn_pad(s, op):
    lo, hi, it = (np.asarray(s.constant_operand(v, name)).reshape(-1)
                  for v, name in zip(op.operands[2:], ("edge_padding_low", "edge_padding_high", "interior_padding")))
    cfg = PaddingConfig(tuple((int(a), int(b), int(c)) for a, b, c in zip(lo, hi, it)))
    return [s.emit("pad", operand=s.get(op.operands[0]), padding_value=s.get(op.operands[1]), padding_config=cfg)]


@converter("stablehlo.real_dynamic_slice")
def _c_real_dyn_slice(s, op):
    start, limit, strides = (tuple(int(x) for x in np.asarray(s.constant_operand(v, n)).reshape(-1))
                             for v, n in zip(op.operands[1:], ("start_indices", "limit_indices", "strides")))
    return [s.emit("slice", operand=s.get(op.operands[0]), start_indices=start, limit_indices=limit,
                   strides=strides)]


# -- tokens and side effects ------------------------------------------------------------------
def _str(op, name, default=""):
    return ir.StringAttr(op.attributes[name]).value if name in op.attributes else default


def _pack_shapes(shapes: list) -> Shape:
    """One shape as itself; none or several as a (flat) tuple, as `_Scope.pack` packs values."""
    return shapes[0] if len(shapes) == 1 else Shape.tuple(shapes)


@converter("stablehlo.after_all")
def _c_after_all(s, op):
    return [s.emit("after_all", operands=[s.get(v) for v in op.operands])]


@converter("stablehlo.create_token")
def _c_create_token(s, op):
    # create_token is StableHLO's older spelling of after_all with no operands
    return [s.emit("after_all", operands=[])]


def _data_and_token(s, r: Op, data: list) -> list:
    """The results of an xla op with a token operand, (data, token), as StableHLO's
    (data..., token): data of one value is itself, of several a tuple."""
    d = s.emit("get_tuple_element", tuple_data=r, index=0)
    return s.unpack(d, len(data)) + [s.emit("get_tuple_element", tuple_data=r, index=1)]


@converter("stablehlo.infeed")
def _c_infeed(s, op):
    # infeed_config and layout only describe the transfer; xlair's infeed items are numpy values
    data = [_result_shape(op, i) for i in range(len(op.results) - 1)]
    r = s.emit("infeed", shape=_pack_shapes(data), token=[s.get(op.operands[0])])
    return _data_and_token(s, r, data)


@converter("stablehlo.outfeed")
def _c_outfeed(s, op):
    vals = [s.get(v) for v in op.operands[:-1]]
    return [s.emit("outfeed", operand=s.pack(vals), shape_with_layout=None,
                   outfeed_config=_str(op, "outfeed_config"), token=[s.get(op.operands[-1])])]


def _channel_handle(op) -> int | None:
    """The handle of the op's channel_handle (None without one)."""
    if "channel_handle" not in op.attributes:
        return None
    return _struct(op.attributes["channel_handle"], "channel_handle").get("handle", 0)


def _send_recv_channel(op, values: int, what: str) -> int:
    if values != 1:
        raise Unsupported(f"{what} {values} values; XLA's {'Send' if 'send' in op.name else 'Recv'} "
                          "carries one array")
    handle = _channel_handle(op)
    if handle is None:
        raise XlaError("channel_handle is required")
    return handle


@converter("stablehlo.send")
def _c_send(s, op):
    # is_host_transfer: xlair's channels always pass through the host (a FIFO per handle shared
    # by the computations running at the same time), whichever side is the host
    handle = _send_recv_channel(op, len(op.operands) - 1, "sends")
    return [s.emit("send", operand=s.get(op.operands[0]), channel_handle=handle,
                   token=[s.get(op.operands[-1])])]


@converter("stablehlo.recv")
def _c_recv(s, op):
    handle = _send_recv_channel(op, len(op.results) - 1, "receives")
    r = s.emit("recv", shape=_result_shape(op, 0), channel_handle=handle, token=[s.get(op.operands[0])])
    return _data_and_token(s, r, [None])


#: CustomCall API versions (XLA's CustomCallApiVersion): xlair calls its C targets with the
#: original convention void f(void* out, void** in), which does not pass backend_config.
_CUSTOM_CALL_APIS = {0: "API_VERSION_UNSPECIFIED", 1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                     3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}


def _custom_call_lacks(op):
    api = ir.IntegerAttr(op.attributes["api_version"]).value if "api_version" in op.attributes else 1
    if api not in (0, 1):
        return (f"has api_version {api} ({_CUSTOM_CALL_APIS.get(api, 'unknown')}); xlair's CustomCall calls "
                "its targets with the original convention void f(void* out, void** in) (api_version 1), "
                "which passes no status, backend_config or typed FFI buffers")
    for name in ("called_computations", "output_operand_aliases"):
        if name in op.attributes and len(ir.ArrayAttr(op.attributes[name])):
            return f"has {name}; XLA's CustomCall(target_name, args, shape) takes none"
    for name, values in (("operand_layouts", op.operands), ("result_layouts", op.results)):
        if name not in op.attributes:
            continue
        for i, (lay, v) in enumerate(zip(ir.ArrayAttr(op.attributes[name]), values)):
            got = _ints(lay)
            if got != tuple(range(len(got) - 1, -1, -1)):
                return (f"has {name}[{i}] = {list(got)}; xlair passes custom-call buffers in the default "
                        "row-major layout only (minor-to-major [rank-1, ..., 0])")
    return None


@converter("stablehlo.custom_call")
def _c_custom_call(s, op):
    # backend_config is not passed to an api_version 1 target (as in XLA); has_side_effect:
    # xlair keeps every custom call and runs them in program order either way
    shapes = [_result_shape(op, i) for i in range(len(op.results))]
    r = s.emit("custom_call", target_name=_str(op, "call_target_name"), args=[s.get(v) for v in op.operands],
               shape=_pack_shapes(shapes))
    return s.unpack(r, len(shapes))


# -- replicas and collectives ----------------------------------------------------------------
def _groups(op, name: str = "replica_groups") -> tuple:
    """replica_groups as tuples of ids (StableHLO pads uneven groups with -1)."""
    if name not in op.attributes:
        return ()
    arr = np.array(ir.DenseIntElementsAttr(op.attributes[name]))
    if arr.size == 0:
        return ()
    return tuple(tuple(int(x) for x in row if x != -1) for row in arr.reshape(arr.shape[0], -1))


def _cross_replica_channel(s, op, partition_groups: bool) -> int | None:
    """The channel_id of a collective, after checking that its process groups are replicas.

    StableHLO reads a positive channel handle as: all_reduce, all_gather, reduce_scatter
    group replicas with all their partitions (or flattened ids with use_global_device_ids),
    which with xlair's one partition per replica are the replicas; all_to_all,
    collective_permute and collective_broadcast (`partition_groups`) group partitions."""
    handle = _channel_handle(op)
    if handle is None or handle <= 0:
        return handle
    if partition_groups:
        raise Unsupported(f"with channel_handle {handle} (> 0) works across partitions; xlair runs one "
                          "partition per replica and has no cross-partition collectives")
    if s.importer.num_partitions > 1:
        raise Unsupported(f"with channel_handle {handle} groups replicas with their partitions; the module "
                          f"has mhlo.num_partitions = {s.importer.num_partitions} and xlair runs one partition "
                          "per replica")
    return handle


@converter("stablehlo.replica_id")
def _c_replica_id(s, op):
    return [s.emit("replica_id")]


@converter("stablehlo.partition_id")
def _c_partition_id(s, op):
    if s.importer.num_partitions > 1:
        raise Unsupported(f"the module has mhlo.num_partitions = {s.importer.num_partitions}; xlair runs one "
                          "partition per replica (XLA has no PartitionId in its operation set)")
    # one partition: every program runs as partition 0
    return [s.emit("constant", value=np.array(0, np.uint32))]


@converter("stablehlo.all_reduce")
def _c_all_reduce(s, op):
    comp = s.scalar_computation(op.regions[0], "stablehlo.all_reduce")
    channel = _cross_replica_channel(s, op, False)
    # a variadic all_reduce reduces each operand on its own: one xla.all_reduce per operand
    return [s.emit("all_reduce", operand=s.get(v), computation=comp, replica_groups=_groups(op),
                   channel_id=channel) for v in op.operands]


@converter("stablehlo.all_gather")
def _c_all_gather(s, op):
    channel = _cross_replica_channel(s, op, False)
    dim = ir.IntegerAttr(op.attributes["all_gather_dim"]).value
    outs = []
    for i, v in enumerate(op.operands):
        x, want = s.get(v), _result_shape(op, i)
        outs.append(s.emit("all_gather", operand=x, all_gather_dim=dim,
                           shard_count=_shard_count(op, x.shape, want, dim), replica_groups=_groups(op),
                           channel_id=channel))
    return outs


def _shard_count(op, small: Shape, big: Shape, dim: int) -> int:
    """How many shards make `big` of `small` along `dim` (the replica group size)."""
    groups = _groups(op)
    if groups:
        return len(groups[0])
    if 0 <= dim < min(small.rank, big.rank) and small.dims[dim]:
        return big.dims[dim] // small.dims[dim]
    raise Unsupported("has empty replica_groups and an empty dimension: the group size (all replicas) is "
                      "not known when the program is imported")


@converter("stablehlo.all_to_all")
def _c_all_to_all(s, op):
    _cross_replica_channel(s, op, True)
    a = {k: ir.IntegerAttr(op.attributes[k]).value for k in ("split_dimension", "concat_dimension", "split_count")}
    return [s.emit("all_to_all", operand=s.get(v), replica_groups=_groups(op), **a) for v in op.operands]


@converter("stablehlo.collective_permute")
def _c_collective_permute(s, op):
    _cross_replica_channel(s, op, True)
    return [s.emit("collective_permute", operand=s.get(op.operands[0]),
                   source_target_pairs=_groups(op, "source_target_pairs"))]


@converter("stablehlo.reduce_scatter")
def _c_reduce_scatter(s, op):
    # XLA's operation set has no ReduceScatter: AllReduce over the group, then each replica's
    # block along scatter_dimension (block i for the i-th member of its group), exactly
    # StableHLO's definition.
    comp = s.scalar_computation(op.regions[0], "stablehlo.reduce_scatter")
    channel = _cross_replica_channel(s, op, False)
    x, want = s.get(op.operands[0]), _result_shape(op)
    dim = ir.IntegerAttr(op.attributes["scatter_dimension"]).value
    groups = _groups(op)
    total = s.emit("all_reduce", operand=x, computation=comp, replica_groups=groups, channel_id=channel)
    me = s.emit("replica_id")
    if groups:          # the replica's position in its group, from a table indexed by replica id
        table = np.zeros(max(r for g in groups for r in g) + 1, np.int32)
        for g in groups:
            table[list(g)] = np.arange(len(g), dtype=np.int32)
        me = _lookup(s, table, me)
    else:
        me = s.emit("convert_element_type", operand=me, new_element_type=S32)
    block = want.dims[dim] if 0 <= dim < want.rank else 0
    zero = s.emit("constant", value=np.array(0, np.int32))
    start = s.emit("mul", lhs=me, rhs=s.emit("constant", value=np.array(block, np.int32)), broadcast_dimensions=())
    starts = [start if d == dim else zero for d in range(x.shape.rank)]
    return [s.emit("dynamic_slice", operand=total, start_indices=starts, size_indices=want.dims)]


def _first_of_two(et) -> Computation:
    """(a, b) -> a over scalars of `et`: a fold of it over a group is the group's first value."""
    b = Builder("first")
    first = b.parameter(0, Shape(et, ()))
    b.parameter(1, Shape(et, ()))
    return b.build(first)


def _zeros(s, shape: Shape) -> Op:
    et = shape.element_type
    if et.is_complex:
        zero = s.emit("constant", value=np.zeros((), et.component.dtype))
        zero = s.emit("complex", lhs=zero, rhs=zero)
    else:
        zero = s.emit("constant", value=np.zeros((), shape.dtype))
    return s.emit("broadcast_in_dim", operand=zero, out_dim_size=shape.dims, broadcast_dimensions=())


def _lookup(s, table: np.ndarray, index: Op) -> Op:
    """table[index] of a constant 1-D table, as a scalar."""
    idx = s.emit("convert_element_type", operand=index, new_element_type=S32)
    one = s.emit("dynamic_slice", operand=s.emit("constant", value=table), start_indices=[idx], size_indices=(1,))
    return s.emit("reshape", operand=one, dimensions=None, new_sizes=())


@converter("stablehlo.collective_broadcast")
def _c_collective_broadcast(s, op):
    # XLA's operation set has no CollectiveBroadcast.  Each member of a group gets the value
    # of the group's first member (with has_dynamic_root: of the member root[i] for operand i),
    # a replica in no group zeros.
    _cross_replica_channel(s, op, True)
    n = len(op.results)
    data, groups = [s.get(v) for v in op.operands[:n]], _groups(op)
    if "has_dynamic_root" in op.attributes:
        return _broadcast_from_root(s, data, s.get(op.operands[n]), groups)
    # an AllReduce whose computation keeps its left operand: xlair folds a group's values left
    # to right in group order (docs/semantics.md), so every member gets the first value
    member = None
    covered = sorted(r for g in groups for r in g)
    nrep = s.importer.num_replicas
    if groups and nrep is not None and covered != list(range(nrep)):
        missing = [r for r in range(nrep) if r not in covered]
        member = np.zeros(max(nrep, covered[-1] + 1), np.bool_)
        member[covered] = True
        groups = tuple(groups) + tuple((r,) for r in missing)
    outs = []
    for x in data:
        r = s.emit("all_reduce", operand=x, computation=_first_of_two(x.shape.element_type), replica_groups=groups,
                   channel_id=None)
        if member is not None:
            pred = _lookup(s, member, s.emit("replica_id"))
            r = s.emit("select", pred=pred, on_true=r, on_false=_zeros(s, x.shape))
        outs.append(r)
    return outs


def _broadcast_from_root(s, data, root: Op, groups) -> list:
    """collective_broadcast with has_dynamic_root: AllGather of the group's values along a new
    leading dimension, then the slice of member root[i] for operand i."""
    sizes = {len(g) for g in groups}
    if len(sizes) != 1:
        raise Unsupported("with has_dynamic_root needs replica_groups of one size (xla.all_gather gathers "
                          f"equal groups); got {[list(g) for g in groups] or 'all replicas (size unknown)'}")
    k = sizes.pop()
    outs = []
    for i, x in enumerate(data):
        dims = x.shape.dims
        one = s.emit("reshape", operand=x, dimensions=None, new_sizes=(1,) + dims)
        every = s.emit("all_gather", operand=one, all_gather_dim=0, shard_count=k, replica_groups=groups,
                       channel_id=None)
        ri = s.emit("reshape", operand=s.emit("dynamic_slice", operand=root,
                                              start_indices=[s.emit("constant", value=np.array(i, np.int32))],
                                              size_indices=(1,)), dimensions=None, new_sizes=())
        zero = s.emit("constant", value=np.zeros((), ri.shape.dtype))
        got = s.emit("dynamic_slice", operand=every, start_indices=[ri] + [zero] * len(dims),
                     size_indices=(1,) + dims)
        outs.append(s.emit("reshape", operand=got, dimensions=None, new_sizes=dims))
    return outs


# ----------------------------------------------------------------------------------------
# what is not (yet) supported, and why
# ----------------------------------------------------------------------------------------
#: StableHLO ops with no XLA counterpart at all.
NO_COUNTERPART = {
    "uniform_quantize": "quantized types are not XLA element types",
    "uniform_dequantize": "quantized types are not XLA element types",
    "einsum": "removed from StableHLO; XLA has no Einsum op (use dot_general)",
    "unary_einsum": "removed from StableHLO; XLA has no Einsum op",
    "torch_index_select": "removed from StableHLO; use gather",
    "trace": "removed from StableHLO",
    "cross-replica-sum": "removed from StableHLO",
    "compute_reshape_shape": "a shape computation on dynamic shapes",
    "cstr_reshapable": "a shape constraint on dynamic shapes",
}


def _cbrt_lacks(op):
    if shape_of(op.operands[0].type, "operand").element_type.is_complex:
        return "of complex values: XLA's Cbrt takes floating-point types only"
    return None


def _bitcast_lacks(op):
    src, dst = shape_of(op.operands[0].type, "operand"), _result_shape(op)
    s, d = src.element_type, dst.element_type
    if (s.is_pred or d.is_pred) and src.dims != dst.dims:
        return ("with i1 changing the shape: StableHLO packs i1 as one bit, XLA's BitcastConvertType "
                "stores PRED in a byte")
    if (s.is_complex or d.is_complex) and (s.is_complex != d.is_complex or s.bits != d.bits):
        return f"from {s} to {d}: XLA bitcasts complex values only to complex values of the same width"
    return None


#: StableHLO ops valid for operands that XLA's counterpart does not take (-> Unsupported).
XLA_LACKS = {"stablehlo.cbrt": _cbrt_lacks, "stablehlo.bitcast_convert": _bitcast_lacks,
             "stablehlo.custom_call": _custom_call_lacks}


def _unsupported_reason(name: str) -> str:
    short = name.split(".", 1)[1] if name.startswith("stablehlo.") else None
    if short in NO_COUNTERPART:
        return f"'{name}' has no XLA counterpart: {NO_COUNTERPART[short]}"
    if name.startswith("interpreter."):
        return f"'{name}' belongs to StableHLO's reference interpreter, not to StableHLO programs"
    return f"'{name}' has no counterpart in xlair's xla dialect"


#: the StableHLO (and func) ops the importer maps, for the docs and the tests.
SUPPORTED = tuple(sorted(CONVERTERS))
UNSUPPORTED = tuple(sorted("stablehlo." + n for n in NO_COUNTERPART))
