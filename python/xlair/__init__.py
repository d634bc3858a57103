"""xlair: XLA's operation set as an MLIR dialect, lowered through linalg and run by IREE.

    import xlair as xla
    b = xla.Builder("axpy")
    a = b.parameter(0, xla.Shape(xla.F32, ()), "a")
    ...
    exe = xla.compile(b.build(), target="cpu")

Two halves (DESIGN.md rule 9, docs/architecture.md): the run side (types, errors, artifacts,
Executable, Array, host calls, replicas) needs iree-base-runtime alone; the compile side
(Builder, ops, compile, the interpreter, the StableHLO importer, jit) needs iree-base-compiler.
Where the compiler is not installed, importing xlair loads the run side only, and the compile
side's names are imported when first read (building works; lowering and compiling raise an
XlaError naming the missing package).
"""
import importlib as _importlib

from xlair.dialect.attrs import (ConvolutionDimensionNumbers, DotDimensionNumbers,  # noqa: F401
                                 FftType, GatherDimensionNumbers, Padding, PaddingConfig,
                                 PaddingConfigDimension, RandomAlgorithm, ScatterDimensionNumbers,
                                 Transpose)
from xlair.dialect.errors import XlaError  # noqa: F401
from xlair.dialect.ir import compiler_present as _compiler_present
from xlair.dialect.types import (BF16, C64, C128, F16, F32, F64, PRED, S8, S16, S32, S64,  # noqa: F401
                                 U8, U16, U32, U64, ElementType, Shape)

from .arrays import Array  # noqa: F401
from . import host, replicas  # noqa: F401  (side effects and replicas)
from .host import register_custom_call, unregister_custom_call  # noqa: F401
from . import lapack  # noqa: F401  (the built-in linear-algebra CustomCall targets)
from .runtime import Executable, device_put, load  # noqa: F401

#: the compile side's names: imported with xlair where the compiler is installed, else each from
#: its module when first read
_COMPILE_SIDE = {
    "ops": ("xlair.ops", None),
    "Builder": ("xlair.builder", "Builder"), "Op": ("xlair.builder", "Op"),
    "compile": ("xlair.compile", "compile"),
    "Computation": ("xlair.computation", "Computation"),
    "interpret": ("xlair.interpreter", "interpret"),
    "interpret_replicated": ("xlair.interpreter", "interpret_replicated"),
    "from_stablehlo": ("xlair.stablehlo", "from_stablehlo"),
    "from_jax": ("xlair.jax_bridge", "from_jax"),      # (JAX itself is imported only when called)
    "jit": ("xlair.jax_bridge", "jit"),
}


def __getattr__(name: str):
    try:
        module, attr = _COMPILE_SIDE[name]
    except KeyError:
        raise AttributeError(f"module 'xlair' has no attribute {name!r}") from None
    _importlib.import_module("xlair.ops")         # (attaches the operator methods to Op)
    value = _importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_COMPILE_SIDE))


if _compiler_present():
    # (read now, not on first use: the import of a submodule sets its name on the package, and
    # `xlair.compile` must stay the function, not the module xlair/compile.py)
    for _name in _COMPILE_SIDE:
        __getattr__(_name)


__version__ = "0.1.0"
