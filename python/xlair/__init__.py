"""xlair: XLA's operation set as an MLIR dialect, lowered through linalg and run by IREE.

    import xlair as xla
    b = xla.Builder("axpy")
    a = b.parameter(0, xla.Shape(xla.F32, ()), "a")
    ...
    exe = xla.compile(b.build(), target="cpu")
"""
from xlair.dialect.attrs import (ConvolutionDimensionNumbers, DotDimensionNumbers,  # noqa: F401
                                 FftType, GatherDimensionNumbers, Padding, PaddingConfig,
                                 PaddingConfigDimension, RandomAlgorithm, ScatterDimensionNumbers,
                                 Transpose)
from xlair.dialect.checks import XlaError  # noqa: F401
from xlair.dialect.types import (BF16, C64, C128, F16, F32, F64, PRED, S8, S16, S32, S64,  # noqa: F401
                                 U8, U16, U32, U64, ElementType, Shape)

from . import ops  # noqa: F401
from .arrays import Array  # noqa: F401
from .builder import Builder, Op  # noqa: F401
from .compile import compile  # noqa: F401
from .computation import Computation  # noqa: F401
from .interpreter import interpret, interpret_replicated  # noqa: F401
from . import host, replicas  # noqa: F401  (side effects and replicas)
from .host import register_custom_call, unregister_custom_call  # noqa: F401
from . import lapack  # noqa: F401  (the built-in linear-algebra CustomCall targets)
from .runtime import Executable, device_put, load  # noqa: F401
from .stablehlo import from_stablehlo  # noqa: F401
from .jax_bridge import from_jax, jit  # noqa: F401  (JAX itself is imported only when called)

__version__ = "0.1.0"
