"""The one door to the MLIR Python bindings that ship inside iree-base-compiler.

Every other module of xlair reaches MLIR through this file (rule 0 of DESIGN.md), so the
binding surface we depend on is listed in one place.  The process has one MLIR context:
types and attributes are uniqued there and modules built by different Builders can be
spliced into each other (sub-computations become regions).
"""
from __future__ import annotations

import threading

from iree.compiler import ir, passmanager, rewrite  # noqa: F401  (re-exported)
from iree.compiler.dialects import arith, func, linalg, math, memref, scf, tensor  # noqa: F401
from iree.compiler.dialects import complex as complex_d  # noqa: F401

__all__ = ["ir", "passmanager", "rewrite", "arith", "func", "linalg", "math", "memref", "scf",
           "tensor", "complex_d", "context", "lock"]

_ctx: ir.Context | None = None
#: MLIR objects are not safe to mutate from several Python threads at once; builders,
#: the verifier and the lowering take this lock around IR work.
lock = threading.RLock()


def context() -> ir.Context:
    """The process-wide MLIR context (unregistered `xla.*` ops allowed, dialects loaded)."""
    global _ctx
    if _ctx is None:
        with lock:
            if _ctx is None:
                c = ir.Context()
                c.allow_unregistered_dialects = True
                c.load_all_available_dialects()
                _ctx = c
    return _ctx
