"""XLA element types and shapes, and their MLIR spelling.

An XLA array shape `f32[2,3]` is the MLIR type `tensor<2x3xf32>`; unsigned integers keep
their signedness in the `xla` dialect (`ui32`) and become signless (`i32`) only when
lowered; a tuple shape is the builtin `tuple<...>`; a token is the opaque `!xla.token`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np

from .errors import XlaError
from .ir import context, ir

MAX_DIM = 1 << 48


@dataclass(frozen=True)
class ElementType:
    """One XLA primitive type (`PrimitiveType` in xla_data.proto)."""
    name: str          # XLA spelling in shapes: pred, s32, u8, bf16, c64 ...
    mlir: str          # type in the xla dialect: i1, i32, ui8, bf16, complex<f32>
    builtin: str       # type after lowering: unsigned become signless
    numpy: str         # numpy dtype of a host array of this type, by name ('bfloat16': ml_dtypes')
    bits: int          # width of one element
    kind: str          # 'pred' | 'sint' | 'uint' | 'float' | 'complex'

    @cached_property
    def dtype(self) -> np.dtype:
        """The numpy dtype of a host array of this type.  BF16's comes from ml_dtypes, imported
        when first asked for: its import takes about a second (numpy registers its casts one by
        one), which every `xlair-opt` would pay otherwise."""
        return np.dtype(_ml_dtype(self.numpy) if self.numpy in _ML_DTYPES else self.numpy)

    def __repr__(self) -> str:
        return self.name.upper()

    __str__ = __repr__

    @property
    def is_float(self) -> bool: return self.kind == "float"

    @property
    def is_complex(self) -> bool: return self.kind == "complex"

    @property
    def is_integer(self) -> bool: return self.kind in ("sint", "uint")

    @property
    def is_signed(self) -> bool: return self.kind == "sint"

    @property
    def is_unsigned(self) -> bool: return self.kind == "uint"

    @property
    def is_pred(self) -> bool: return self.kind == "pred"

    @property
    def is_floating(self) -> bool:
        """Real or complex floating point."""
        return self.kind in ("float", "complex")

    @property
    def component(self) -> "ElementType":
        """The real type of a complex type (C64 -> F32); itself otherwise."""
        return {"c64": F32, "c128": F64}.get(self.name, self)

    def mlir_type(self) -> ir.Type:
        return _parse_type(self.mlir)

    def builtin_type(self) -> ir.Type:
        return _parse_type(self.builtin)


#: the element types whose numpy dtype ml_dtypes defines
_ML_DTYPES = ("bfloat16",)


def _ml_dtype(name: str):
    import ml_dtypes
    return getattr(ml_dtypes, name)


def _et(name, mlir, dtype, bits, kind, builtin=None):
    return ElementType(name, mlir, builtin or mlir, dtype if isinstance(dtype, str) else np.dtype(dtype).name,
                       bits, kind)


PRED = _et("pred", "i1", np.bool_, 1, "pred")
S8 = _et("s8", "i8", np.int8, 8, "sint")
S16 = _et("s16", "i16", np.int16, 16, "sint")
S32 = _et("s32", "i32", np.int32, 32, "sint")
S64 = _et("s64", "i64", np.int64, 64, "sint")
U8 = _et("u8", "ui8", np.uint8, 8, "uint", "i8")
U16 = _et("u16", "ui16", np.uint16, 16, "uint", "i16")
U32 = _et("u32", "ui32", np.uint32, 32, "uint", "i32")
U64 = _et("u64", "ui64", np.uint64, 64, "uint", "i64")
F16 = _et("f16", "f16", np.float16, 16, "float")
BF16 = _et("bf16", "bf16", "bfloat16", 16, "float")
F32 = _et("f32", "f32", np.float32, 32, "float")
F64 = _et("f64", "f64", np.float64, 64, "float")
C64 = _et("c64", "complex<f32>", np.complex64, 64, "complex")
C128 = _et("c128", "complex<f64>", np.complex128, 128, "complex")

ALL_TYPES = (PRED, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128)
SIGNED = (S8, S16, S32, S64)
UNSIGNED = (U8, U16, U32, U64)
INTEGERS = SIGNED + UNSIGNED
FLOATS = (F16, BF16, F32, F64)
COMPLEX = (C64, C128)
_BY_NAME = {t.name: t for t in ALL_TYPES}
_BY_MLIR = {t.mlir: t for t in ALL_TYPES}
_BY_NUMPY = {t.numpy: t for t in ALL_TYPES}
_BY_DTYPE = {t.dtype: t for t in ALL_TYPES if t.numpy not in _ML_DTYPES}   # (BF16: by name, below)
#: longest spelling first (`i16` before `i1`), for Shape.parse
_BY_LENGTH = sorted(ALL_TYPES, key=lambda t: -len(t.mlir))


def element_type(x) -> ElementType:
    """An ElementType from an ElementType, a numpy dtype (or scalar type), or a name ('f32', 'F32')."""
    if isinstance(x, ElementType):
        return x
    if isinstance(x, str) and x.lower() in _BY_NAME:
        return _BY_NAME[x.lower()]
    if isinstance(x, str) and x in _ML_DTYPES:
        x = _ml_dtype(x)
    try:
        dt = np.dtype(x)
    except TypeError:
        dt = None
    if dt is not None and dt in _BY_DTYPE:
        return _BY_DTYPE[dt]
    if dt is not None and dt.name in _ML_DTYPES and dt == _BY_NUMPY[dt.name].dtype:
        return _BY_NUMPY[dt.name]
    raise TypeError(f"not an XLA element type: {x!r}")


def from_mlir_element(t: ir.Type) -> ElementType:
    s = str(t)
    if s in _BY_MLIR:
        return _BY_MLIR[s]
    raise TypeError(f"not an XLA element type: {s}")


_type_cache: dict[str, ir.Type] = {}


def is_tensor(t: ir.Type) -> bool:
    return t.typeid == ir.RankedTensorType.static_typeid


def is_tuple_type(t: ir.Type) -> bool:
    return t.typeid == ir.TupleType.static_typeid


def _parse_type(s: str) -> ir.Type:
    t = _type_cache.get(s)
    if t is None:
        with context():
            t = _type_cache[s] = ir.Type.parse(s)
    return t


#: Shape.from_mlir's results by the type's text (a Shape is a value: never changed once made;
#: the lowering asks for the shapes of the same few types tens of thousands of times)
_SHAPES: dict = {}
_MAX_SHAPES = 1 << 16


class Shape:
    """An XLA shape: an array (element type and dimensions), a tuple of shapes, or a token."""
    __slots__ = ("element_type", "dims", "tuple_shapes", "_token")

    def __init__(self, element_type, dims: Iterable[int] = ()):
        self.element_type = element_type if element_type is None else globals()["element_type"](element_type)
        try:
            self.dims = tuple(int(d) for d in dims)
        except (TypeError, ValueError):
            raise XlaError(f"Shape dimensions must be integers; got {dims!r}") from None
        if any(abs(d) >= MAX_DIM for d in self.dims):    # (negative sizes are left to the shape rules)
            raise XlaError(f"Shape dimensions must be smaller than 2^48; got {list(self.dims)}")
        self.tuple_shapes = None
        self._token = False

    @staticmethod
    def tuple(shapes: Sequence["Shape"]) -> "Shape":
        s = Shape(None)
        s.tuple_shapes = tuple(shapes)
        for x in s.tuple_shapes:
            if not isinstance(x, Shape):
                raise TypeError(f"Shape.tuple takes Shapes; got {x!r}")
        return s

    @staticmethod
    def token() -> "Shape":
        s = Shape(None)
        s._token = True
        return s

    @staticmethod
    def scalar(element_type) -> "Shape":
        return Shape(element_type, ())

    # -- kinds ------------------------------------------------------------------------
    @property
    def is_tuple(self) -> bool: return self.tuple_shapes is not None

    @property
    def is_token(self) -> bool: return self._token

    @property
    def is_array(self) -> bool: return self.element_type is not None

    @property
    def rank(self) -> int: return len(self.dims)

    @property
    def is_scalar(self) -> bool: return self.is_array and not self.dims

    @property
    def size(self) -> int:
        return int(np.prod(self.dims, dtype=np.int64)) if self.dims else 1

    @property
    def dtype(self) -> np.dtype: return self.element_type.dtype

    def with_dims(self, dims) -> "Shape": return Shape(self.element_type, dims)

    def with_type(self, et) -> "Shape": return Shape(et, self.dims)

    def leaves(self) -> list["Shape"]:
        """Array and token shapes in depth-first order (the flattened tuple)."""
        if self.is_tuple:
            return [leaf for s in self.tuple_shapes for leaf in s.leaves()]
        return [self]

    # -- MLIR -------------------------------------------------------------------------
    def to_mlir(self) -> ir.Type:
        return _parse_type(self.mlir_str())

    def builtin_mlir(self) -> ir.Type:
        """The array's type after lowering (unsigned element types become signless; a token
        becomes a `tensor<i1>` that side-effecting calls pass along, see lowering/side_effects.py)."""
        if self.is_token:
            return _parse_type("tensor<i1>")
        return _parse_type("tensor<" + "".join(f"{d}x" for d in self.dims) + self.element_type.builtin + ">")

    def mlir_str(self) -> str:
        if self.is_token:
            return "!xla.token"
        if self.is_tuple:
            return "tuple<" + ", ".join(s.mlir_str() for s in self.tuple_shapes) + ">"
        return "tensor<" + "".join(f"{d}x" for d in self.dims) + self.element_type.mlir + ">"

    @staticmethod
    def from_mlir(t: ir.Type) -> "Shape":
        s = str(t)
        shape = _SHAPES.get(s)
        if shape is None:
            if len(_SHAPES) >= _MAX_SHAPES:
                _SHAPES.clear()
            shape = _SHAPES[s] = Shape._from_mlir(t, s)
        return shape

    @staticmethod
    def _from_mlir(t: ir.Type, s: str) -> "Shape":
        if s == "!xla.token":
            return Shape.token()
        if is_tuple_type(t):
            tt = ir.TupleType(t)
            return Shape.tuple([Shape.from_mlir(tt.get_type(i)) for i in range(tt.num_types)])
        if is_tensor(t):
            rt = ir.RankedTensorType(t)
            if not rt.has_static_shape:
                raise TypeError(f"xla shapes are static; got {s}")
            return Shape(from_mlir_element(rt.element_type), rt.shape)
        raise TypeError(f"not an xla shape: {s}")

    @staticmethod
    def parse(text: str) -> "Shape":
        """The Shape of a type as `mlir_str` (and MLIR's printer) writes it, read without the
        MLIR bindings: an executable's signature is read on the run side, where only IREE's
        runtime may be installed.  TypeError on any other text."""
        shape = _SHAPES.get(text)
        if shape is None:
            shape, end = _parse_shape(text.strip(), 0)
            if end != len(text.strip()):
                raise TypeError(f"not an xla shape: {text}")
            if len(_SHAPES) >= _MAX_SHAPES:
                _SHAPES.clear()
            _SHAPES[text] = shape
        return shape

    # -- value semantics ----------------------------------------------------------------
    def _key(self):
        if self.is_tuple:
            return ("tuple", tuple(s._key() for s in self.tuple_shapes))
        if self.is_token:
            return ("token",)
        return (self.element_type.name, self.dims)

    def __eq__(self, other):
        return isinstance(other, Shape) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self) -> str:
        if self.is_token:
            return "token[]"
        if self.is_tuple:
            return "(" + ", ".join(repr(s) for s in self.tuple_shapes) + ")"
        return f"{self.element_type.name}[{','.join(map(str, self.dims))}]"

    __str__ = __repr__


def _parse_shape(text: str, i: int) -> tuple["Shape", int]:
    """(the shape starting at text[i], the index past it) for Shape.parse."""
    if text.startswith("!xla.token", i):
        return Shape.token(), i + len("!xla.token")
    if text.startswith("tuple<", i):
        i += len("tuple<")
        parts = []
        while not text.startswith(">", i):
            if parts:
                if not text.startswith(",", i):
                    raise TypeError(f"not an xla shape: {text}")
                i += 1
                while text.startswith(" ", i):
                    i += 1
            part, i = _parse_shape(text, i)
            parts.append(part)
        return Shape.tuple(parts), i + 1
    if text.startswith("tensor<", i):
        i += len("tensor<")
        dims = []
        while True:
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            if j == i or not text.startswith("x", j):
                break
            dims.append(int(text[i:j]))
            i = j + 1
        for et in _BY_LENGTH:
            if text.startswith(et.mlir + ">", i):
                return Shape(et, dims), i + len(et.mlir) + 1
    raise TypeError(f"not an xla shape: {text}")


def shape_of_array(a: np.ndarray) -> Shape:
    return Shape(element_type(a.dtype), a.shape)
