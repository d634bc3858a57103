"""The `xla` dialect: op records, types, attributes, checks and the verifier."""
from .checks import XlaError  # noqa: F401
from .core import REGISTRY, OpDef, Param, Sig, all_ops, lookup  # noqa: F401
from .types import Shape  # noqa: F401
from . import ops  # noqa: F401,E402  (registers every op family)
