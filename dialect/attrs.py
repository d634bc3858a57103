"""Attribute kinds (how a Python argument becomes an MLIR attribute and back) and the typed
records of the spec: DotDimensionNumbers, PaddingConfig, Padding, ... each with
to_attr/from_attr.  An op record names the kind of each attribute parameter; the builder,
the verifier, the interpreter and the lowering all decode attributes through these kinds.
"""
from __future__ import annotations

import dataclasses
import enum
import numbers
import re
from typing import Any, Sequence

import numpy as np

from .checks import Check, XlaError
from .ir import ir
from .types import BF16, ElementType, Shape, element_type, from_mlir_element


# ----------------------------------------------------------------------------------------
# attribute kinds
# ----------------------------------------------------------------------------------------
class AttrKind:
    """How one attribute parameter is checked, stored and read back."""
    what = "a value"

    def normalize(self, chk: Check, param: str, v):
        return v

    def to_attr(self, v) -> ir.Attribute:
        raise NotImplementedError

    def from_attr(self, a: ir.Attribute):
        raise NotImplementedError

    def _bad(self, chk: Check, param: str, v):
        chk.fail(param, f"must be {self.what}", v, cid="ir:attributes")


def _is_int(v) -> bool:
    """An integer that fits a 64-bit attribute."""
    return (isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))
            and -(1 << 63) <= int(v) < (1 << 63))


class Int(AttrKind):
    what = "an integer"

    def normalize(self, chk, param, v):
        if not _is_int(v):
            self._bad(chk, param, v)
        return int(v)

    def to_attr(self, v):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)

    def from_attr(self, a):
        return ir.IntegerAttr(a).value


class Bool(AttrKind):
    what = "a bool"

    def normalize(self, chk, param, v):
        if not isinstance(v, (bool, np.bool_)):
            self._bad(chk, param, v)
        return bool(v)

    def to_attr(self, v):
        return ir.BoolAttr.get(v)

    def from_attr(self, a):
        return ir.BoolAttr(a).value


class Float(AttrKind):
    what = "a number"

    def normalize(self, chk, param, v):
        if not isinstance(v, (numbers.Real, np.floating, np.integer)) or isinstance(v, bool):
            self._bad(chk, param, v)
        return float(v)

    def to_attr(self, v):
        return ir.FloatAttr.get(ir.F64Type.get(), v)

    def from_attr(self, a):
        return ir.FloatAttr(a).value


class Str(AttrKind):
    what = "a string"

    def normalize(self, chk, param, v):
        if not isinstance(v, str):
            self._bad(chk, param, v)
        return v

    def to_attr(self, v):
        return ir.StringAttr.get(v)

    def from_attr(self, a):
        return ir.StringAttr(a).value


class Ints(AttrKind):
    what = "a sequence of integers"

    def normalize(self, chk, param, v):
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if _is_int(v):
            v = [v]
        if not isinstance(v, (list, tuple)) or not all(_is_int(x) for x in v):
            self._bad(chk, param, v)
        return tuple(int(x) for x in v)

    def to_attr(self, v):
        return ir.DenseI64ArrayAttr.get(list(v))

    def from_attr(self, a):
        return tuple(ir.DenseI64ArrayAttr(a))


class IntLists(AttrKind):
    """A sequence of integer sequences (replica groups, padding pairs)."""
    what = "a sequence of integer sequences"

    def __init__(self, inner_len: int | None = None):
        self.inner_len = inner_len
        if inner_len == 2:
            self.what = "a sequence of (low, high) pairs"

    def normalize(self, chk, param, v):
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if not isinstance(v, (list, tuple)):
            self._bad(chk, param, v)
        out = []
        for x in v:
            if isinstance(x, np.ndarray):
                x = x.tolist()
            if not isinstance(x, (list, tuple)) or not all(_is_int(y) for y in x) or (
                    self.inner_len is not None and len(x) != self.inner_len):
                self._bad(chk, param, v)
            out.append(tuple(int(y) for y in x))
        return tuple(out)

    def to_attr(self, v):
        return ir.ArrayAttr.get([ir.DenseI64ArrayAttr.get(list(x)) for x in v])

    def from_attr(self, a):
        return tuple(tuple(ir.DenseI64ArrayAttr(x)) for x in ir.ArrayAttr(a))


class ETypeKind(AttrKind):
    what = "an XLA element type"

    def normalize(self, chk, param, v):
        try:
            return element_type(v)
        except TypeError:
            self._bad(chk, param, v)

    def to_attr(self, v: ElementType):
        return ir.TypeAttr.get(v.mlir_type())

    def from_attr(self, a):
        return from_mlir_element(ir.TypeAttr(a).value)


class ShapeKind(AttrKind):
    what = "an xla.Shape"

    def normalize(self, chk, param, v):
        if not isinstance(v, Shape):
            self._bad(chk, param, v)
        return v

    def to_attr(self, v: Shape):
        return ir.TypeAttr.get(v.to_mlir())

    def from_attr(self, a):
        return Shape.from_mlir(ir.TypeAttr(a).value)


class EnumKind(AttrKind):
    def __init__(self, cls):
        self.cls = cls
        self.what = f"a {cls.__name__} ({', '.join(m.name for m in cls)})"

    def normalize(self, chk, param, v):
        if isinstance(v, self.cls):
            return v
        if isinstance(v, str) and v.upper() in self.cls.__members__:
            return self.cls[v.upper()]
        self._bad(chk, param, v)

    def to_attr(self, v):
        return ir.StringAttr.get(v.name)

    def from_attr(self, a):
        return self.cls[ir.StringAttr(a).value]


class Literal(AttrKind):
    """An array literal (the value of a Constant), stored as a dense elements attribute."""
    what = "an array literal"

    def normalize(self, chk, param, v):
        if not isinstance(v, np.ndarray):
            self._bad(chk, param, v)
        return v

    def to_attr(self, v: np.ndarray):
        et = element_type(v.dtype)
        t = Shape(et, v.shape).mlir_str()
        data = np.asarray(v, order="C")
        if et.is_pred:
            data = data.astype(np.uint8)
        return ir.Attribute.parse(f'dense<"0x{data.tobytes().hex()}"> : {t}')

    def from_attr(self, a):
        return literal_value(a)


_NUMBER = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")


def literal_value(a: ir.Attribute) -> np.ndarray:
    """The numpy array of a dense elements attribute of any XLA element type."""
    t = ir.ShapedType(a.type)
    shape = Shape(from_mlir_element(t.element_type), t.shape)
    if shape.element_type is BF16:
        bfloat16 = BF16.dtype
        # numpy cannot read bf16 from the bindings: read the text.  MLIR prints raw data as
        # "0x..." bytes, or elements as decimals that round-trip and special values (inf, nan,
        # subnormals) as hex bit patterns (0x7F80).
        text = str(a)
        body = text[text.index("<") + 1:text.rindex(" : ")].strip()[:-1].strip()
        if body.startswith('"'):
            bits = np.frombuffer(bytes.fromhex(body.strip('"')[2:]), dtype=np.uint16)
        else:
            bits = np.array([int(x, 16) if x.startswith("0x") else
                             np.float32(x).astype(bfloat16).view(np.uint16)
                             for x in _NUMBER.findall(body)], dtype=np.uint16)
        vals = bits.view(bfloat16)
        return np.full(shape.dims, vals[0]) if vals.size == 1 else vals.reshape(shape.dims).copy()
    arr = np.array(ir.DenseElementsAttr(a))
    return arr.astype(shape.dtype, copy=False).reshape(shape.dims)


class Optional(AttrKind):
    """An attribute that may be absent (None)."""

    def __init__(self, inner: AttrKind):
        self.inner = inner
        self.what = inner.what + " or None"

    def normalize(self, chk, param, v):
        return None if v is None else self.inner.normalize(chk, param, v)

    def to_attr(self, v):
        return self.inner.to_attr(v)

    def from_attr(self, a):
        return self.inner.from_attr(a)


# ----------------------------------------------------------------------------------------
# typed records of the spec
# ----------------------------------------------------------------------------------------
class RecordKind(AttrKind):
    """A dataclass record stored as a dictionary attribute, one entry per field."""

    def __init__(self, cls):
        self.cls = cls
        self.what = f"a {cls.__name__}"

    def normalize(self, chk, param, v):
        if isinstance(v, self.cls):
            return v
        conv = getattr(self.cls, "coerce", None)
        if conv is not None:
            try:
                return conv(v)
            except (TypeError, ValueError):
                pass
        self._bad(chk, param, v)

    def to_attr(self, v):
        entries = {}
        for f in dataclasses.fields(self.cls):
            kind = f.metadata["kind"]
            val = getattr(v, f.name)
            if val is not None:
                entries[f.name] = kind.to_attr(val)
        return ir.DictAttr.get(entries)

    def from_attr(self, a):
        d = ir.DictAttr(a)
        kw = {}
        for f in dataclasses.fields(self.cls):
            if f.name in d:
                kw[f.name] = f.metadata["kind"].from_attr(d[f.name])
        return self.cls(**kw)


def _field(kind: AttrKind, default=dataclasses.MISSING):
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata={"kind": kind})
    return dataclasses.field(default=default, metadata={"kind": kind})


def _ints(v, name):
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if _is_int(v):
        v = [v]
    if not isinstance(v, (list, tuple)) or not all(_is_int(x) for x in v):
        raise XlaError(f"{name} must be a sequence of integers; got {v!r}")
    return tuple(int(x) for x in v)


class _IntRecord:
    """Records whose fields are integer sequences: coerce them on construction."""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(f.metadata["kind"], Ints) and v is not None:
                object.__setattr__(self, f.name, _ints(v, f"{type(self).__name__}.{f.name}"))
            elif isinstance(f.metadata["kind"], Int) and v is not None:
                if not _is_int(v):
                    raise XlaError(f"{type(self).__name__}.{f.name} must be an integer; got {v!r}")
                object.__setattr__(self, f.name, int(v))


@dataclasses.dataclass(frozen=True)
class DotDimensionNumbers(_IntRecord):
    lhs_contracting_dimensions: tuple = _field(Ints())
    rhs_contracting_dimensions: tuple = _field(Ints())
    lhs_batch_dimensions: tuple = _field(Ints(), ())
    rhs_batch_dimensions: tuple = _field(Ints(), ())

    @classmethod
    def coerce(cls, v):
        if isinstance(v, dict):
            return cls(**v)
        raise TypeError


@dataclasses.dataclass(frozen=True)
class PaddingConfigDimension(_IntRecord):
    edge_padding_low: int = _field(Int(), 0)
    edge_padding_high: int = _field(Int(), 0)
    interior_padding: int = _field(Int(), 0)


@dataclasses.dataclass(frozen=True)
class PaddingConfig:
    """`PaddingConfig` of the spec: one PaddingConfigDimension per operand dimension.
    Also built from a list of (low, high, interior) triples."""
    dimensions: tuple = ()

    def __post_init__(self):
        dims = []
        for d in self.dimensions:
            if isinstance(d, PaddingConfigDimension):
                dims.append(d)
            elif isinstance(d, (list, tuple)) and len(d) == 3:
                dims.append(PaddingConfigDimension(*d))
            else:
                raise XlaError("PaddingConfig.dimensions must be PaddingConfigDimensions or "
                               f"(low, high, interior) triples; got {d!r}")
        object.__setattr__(self, "dimensions", tuple(dims))

    @classmethod
    def coerce(cls, v):
        if isinstance(v, (list, tuple)):
            return cls(tuple(v))
        raise TypeError

    def triples(self):
        return [(d.edge_padding_low, d.edge_padding_high, d.interior_padding) for d in self.dimensions]


class _PaddingConfigKind(AttrKind):
    what = "a PaddingConfig (or a list of (low, high, interior) triples)"

    def normalize(self, chk, param, v):
        if isinstance(v, PaddingConfig):
            return v
        try:
            return PaddingConfig.coerce(v)
        except (TypeError, XlaError):
            self._bad(chk, param, v)

    def to_attr(self, v: PaddingConfig):
        return IntLists(3).to_attr(v.triples())

    def from_attr(self, a):
        return PaddingConfig(IntLists(3).from_attr(a))


PADDING_CONFIG = _PaddingConfigKind()


@dataclasses.dataclass(frozen=True)
class ConvolutionDimensionNumbers(_IntRecord):
    """XLA's ConvolutionDimensionNumbers: where batch, feature and spatial dimensions sit in the
    input (lhs), the kernel (rhs) and the output."""
    input_batch_dimension: int = _field(Int(), 0)
    input_feature_dimension: int = _field(Int(), 1)
    input_spatial_dimensions: tuple = _field(Ints(), (2, 3))
    kernel_input_feature_dimension: int = _field(Int(), 1)
    kernel_output_feature_dimension: int = _field(Int(), 0)
    kernel_spatial_dimensions: tuple = _field(Ints(), (2, 3))
    output_batch_dimension: int = _field(Int(), 0)
    output_feature_dimension: int = _field(Int(), 1)
    output_spatial_dimensions: tuple = _field(Ints(), (2, 3))

    @classmethod
    def coerce(cls, v):
        if isinstance(v, dict):
            return cls(**v)
        raise TypeError


@dataclasses.dataclass(frozen=True)
class GatherDimensionNumbers(_IntRecord):
    offset_dims: tuple = _field(Ints(), ())
    collapsed_slice_dims: tuple = _field(Ints(), ())
    start_index_map: tuple = _field(Ints(), ())
    index_vector_dim: int = _field(Int(), 0)
    operand_batching_dims: tuple = _field(Ints(), ())
    start_indices_batching_dims: tuple = _field(Ints(), ())

    @classmethod
    def coerce(cls, v):
        if isinstance(v, dict):
            return cls(**v)
        raise TypeError


@dataclasses.dataclass(frozen=True)
class ScatterDimensionNumbers(_IntRecord):
    update_window_dims: tuple = _field(Ints(), ())
    inserted_window_dims: tuple = _field(Ints(), ())
    scatter_dims_to_operand_dims: tuple = _field(Ints(), ())
    index_vector_dim: int = _field(Int(), 0)
    input_batching_dims: tuple = _field(Ints(), ())
    scatter_indices_batching_dims: tuple = _field(Ints(), ())

    @classmethod
    def coerce(cls, v):
        if isinstance(v, dict):
            return cls(**v)
        raise TypeError


class Padding(enum.Enum):
    """`Padding::kSame` / `Padding::kValid` of Conv, ReduceWindow and SelectAndScatter."""
    SAME = "SAME"
    VALID = "VALID"


class FftType(enum.Enum):
    FFT = "FFT"
    IFFT = "IFFT"
    RFFT = "RFFT"
    IRFFT = "IRFFT"


class RandomAlgorithm(enum.Enum):
    RNG_DEFAULT = "RNG_DEFAULT"
    RNG_THREE_FRY = "RNG_THREE_FRY"
    RNG_PHILOX = "RNG_PHILOX"


class Transpose(enum.Enum):
    """`TriangularSolveOptions::Transpose`."""
    NO_TRANSPOSE = "NO_TRANSPOSE"
    TRANSPOSE = "TRANSPOSE"
    ADJOINT = "ADJOINT"


def kind_for(x: Any) -> AttrKind:
    """The kind of a record class or enum (for op tables)."""
    if isinstance(x, type) and issubclass(x, enum.Enum):
        return EnumKind(x)
    if x is PaddingConfig:
        return PADDING_CONFIG
    if dataclasses.is_dataclass(x):
        return RecordKind(x)
    raise TypeError(x)


def sequence(v) -> Sequence:
    return v if isinstance(v, (list, tuple)) else [v]
