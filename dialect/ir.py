"""The one door to the MLIR Python bindings that ship inside iree-base-compiler.

Every other module of xlair reaches MLIR through this file (rule 0 of DESIGN.md), so the
binding surface we depend on is listed in one place.  The process has one MLIR context:
types and attributes are uniqued there and modules built by different Builders can be
spliced into each other (sub-computations become regions).
"""
from __future__ import annotations

import sys
import threading
import types

from iree.compiler import ir, passmanager, rewrite  # noqa: F401  (re-exported)
from iree.compiler.dialects import arith, func, linalg, math, memref, scf, tensor  # noqa: F401
from iree.compiler.dialects import complex as complex_d  # noqa: F401

__all__ = ["ir", "passmanager", "rewrite", "arith", "func", "linalg", "math", "memref", "scf",
           "tensor", "complex_d", "context", "lock"]

#: Where MLIR's bindings look for the Python module of a dialect without one of IREE's: empty
#: modules, one per namespace below.  The bindings import a dialect's module each time they wrap
#: one of its ops and remember only the imports that succeed: xla's own ops and IREE's LinalgExt
#: have none, and the lowering of gpt_adamw_step made 27,037 failed imports (4.6 s of its 13 s
#: under cProfile).  A namespace that has a module of IREE's keeps it (IREE's prefix is first).
_STUBS = "xlair.dialect._namespaces"
_NAMESPACES = ("xla", "iree_linalg_ext", "flow", "hal", "stream", "util", "sdy", "stablehlo", "chlo",
               "iree_codegen", "iree_encoding", "iree_gpu", "iree_tensor_ext", "vm", "cf")


def _answer_dialect_lookups() -> None:
    from iree.compiler._mlir_libs import _mlir
    package = types.ModuleType(_STUBS)
    package.__path__ = []
    sys.modules.setdefault(_STUBS, package)
    for name in _NAMESPACES:
        sys.modules.setdefault(f"{_STUBS}.{name}", types.ModuleType(f"{_STUBS}.{name}"))
    if _STUBS not in _mlir.globals.dialect_search_modules:
        _mlir.globals.append_dialect_search_prefix(_STUBS)


_answer_dialect_lookups()

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
