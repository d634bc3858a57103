"""StableHLO types and printed attributes, read as xla's: shapes of types, integers, enums and
`#stablehlo.*<...>` structs of attributes (regex over their printed text), convolution dimension
numbers, the values of constants, the source locations of ops.

Only the MLIR bindings and xlair.dialect are needed here: no Builder, no converter.
"""
from __future__ import annotations

import re

import numpy as np

from xlair.dialect.attrs import ConvolutionDimensionNumbers, literal_value
from xlair.dialect.checks import XlaError
from xlair.dialect.ir import ir
from xlair.dialect.types import Shape, from_mlir_element, is_tuple_type


class Unsupported(XlaError):
    """A StableHLO construct that xlair has no counterpart for (an op, a type, a feature)."""


# ----------------------------------------------------------------------------------------
# types
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


def _result_shape(op, i=0) -> Shape:
    return shape_of(op.results[i].type, f"result {i}")


# ----------------------------------------------------------------------------------------
# attributes
# ----------------------------------------------------------------------------------------
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


def _attr(op, name, default=None):
    return op.attributes[name] if name in op.attributes else default


def _bool(op, name, default):
    return bool(ir.BoolAttr(op.attributes[name]).value) if name in op.attributes else default


def _str(op, name, default=""):
    return ir.StringAttr(op.attributes[name]).value if name in op.attributes else default


def _channel_handle(op) -> int | None:
    """The handle of the op's channel_handle (None without one)."""
    if "channel_handle" not in op.attributes:
        return None
    return _struct(op.attributes["channel_handle"], "channel_handle").get("handle", 0)


def _groups(op, name: str = "replica_groups") -> tuple:
    """replica_groups as tuples of ids (StableHLO pads uneven groups with -1)."""
    if name not in op.attributes:
        return ()
    arr = np.array(ir.DenseIntElementsAttr(op.attributes[name]))
    if arr.size == 0:
        return ()
    return tuple(tuple(int(x) for x in row if x != -1) for row in arr.reshape(arr.shape[0], -1))


# ----------------------------------------------------------------------------------------
# constants
# ----------------------------------------------------------------------------------------
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
# locations
# ----------------------------------------------------------------------------------------
def _loc(op) -> tuple[str, int] | None:
    m = re.search(r'loc\("([^"]*)":(\d+):\d+\)', str(op.location))
    if not m:
        return None
    return ("stablehlo" if m.group(1) in ("-", "") else m.group(1)), int(m.group(2))

