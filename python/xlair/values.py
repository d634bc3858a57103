"""Checking host values against XLA shapes (shared by executables and the interpreter), and the
shapes of an executable's signature."""
from __future__ import annotations

import sys
from typing import Sequence

import numpy as np

from xlair.dialect.checks import XlaError, show
from xlair.dialect.types import Shape, element_type

from .arrays import Array


def is_prng_key(dtype) -> bool:
    """Whether `dtype` is a JAX typed PRNG key's (`jax.random.key`; not a numpy dtype).  JAX is
    not imported here: without it, nothing is a key."""
    if dtype is None or isinstance(dtype, np.dtype):
        return False
    jax = sys.modules.get("jax")
    return jax is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


def parse_shape(text: str) -> Shape:
    """The Shape of a type as a signature writes it (`Shape.mlir_str`), read without MLIR."""
    return Shape.parse(text)


def check_args(shapes: Sequence[Shape], args: Sequence, who: str, arrays: bool = False) -> list:
    """numpy values for `args`, one per parameter shape; XlaError on any mismatch.  With
    `arrays`, an `xla.Array` of a leaf's exact shape is kept as it is (an executable takes it
    without a copy); without, it is read back like any array-like."""
    if len(args) != len(shapes):
        raise XlaError(f"{who} takes {len(shapes)} argument(s) {list(shapes)}; got {len(args)}")
    return [check_arg(s, a, f"{who} argument {i}", arrays) for i, (s, a) in enumerate(zip(shapes, args))]


def check_arg(shape: Shape, a, what: str, arrays: bool = False):
    if shape.is_tuple:
        if not isinstance(a, (tuple, list)) or len(a) != len(shape.tuple_shapes):
            raise XlaError(f"{what} must be a tuple of {len(shape.tuple_shapes)} values {shape}; "
                           f"got {type(a).__name__}")
        return tuple(check_arg(s, x, f"{what}[{i}]", arrays) for i, (s, x) in enumerate(zip(shape.tuple_shapes, a)))
    if shape.is_token:
        return np.zeros((), np.bool_)
    if arrays and type(a) is Array:
        if a.xla_shape != shape:
            raise XlaError(f"{what} must be {shape}; got an xla.Array {a.xla_shape}")
        return a
    if isinstance(a, (np.ndarray, np.generic)):
        arr = np.asarray(a)
        if arr.dtype != shape.dtype:
            raise XlaError(f"{what} must be {shape}; got {_describe(arr)} (dtype {arr.dtype}, "
                           f"expected {shape.dtype})")
    else:
        try:
            raw = np.asarray(a)
        except (ValueError, TypeError) as e:
            raise XlaError(f"{what} must be {shape}; got {type(a).__name__} ({e})") from None
        if raw.dtype == object or raw.dtype.kind not in "biufc":
            raise XlaError(f"{what} must be {shape}; got {type(a).__name__} {show(a)}")
        if _lossy(raw.dtype, shape):
            raise XlaError(f"{what} must be {shape}; got {raw.dtype.name} values {show(raw)}")
        with np.errstate(all="ignore"):
            arr = raw.astype(shape.dtype)
    if arr.shape != shape.dims:
        raise XlaError(f"{what} must be {shape}; got {_describe(arr)}")
    return arr if arr.flags.c_contiguous else np.array(arr, order="C")


def _lossy(src: np.dtype, shape: Shape) -> bool:
    order = "biufc"
    dst = shape.dtype.kind if shape.element_type.kind != "float" else "f"
    return order.index(src.kind) > order.index(dst) and not (src.kind == "i" and dst == "u")


def _describe(arr: np.ndarray) -> str:
    try:
        et = element_type(arr.dtype).name
    except TypeError:
        et = str(arr.dtype)
    return f"{et}[{','.join(map(str, arr.shape))}]"


def flatten(value, shape: Shape) -> list:
    if shape.is_tuple:
        return [leaf for v, s in zip(value, shape.tuple_shapes) for leaf in flatten(v, s)]
    return [value]


def unflatten(leaves, shape: Shape):
    """The leaves rebuilt into the nesting of `shape`.  A module-level recursion, not a nested
    function calling itself: such a closure is a reference cycle holding the leaves, so every
    call's results (e.g. 16 MB arrays) lived until the cyclic garbage collector ran (RSS grew
    by each result: 1 GB after 60 calls of a 16 MB result)."""
    return _unflatten(iter(leaves), shape)


def _unflatten(it, s: Shape):
    if s.is_tuple:
        return tuple(_unflatten(it, x) for x in s.tuple_shapes)
    return next(it)
