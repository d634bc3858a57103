"""The one door to the MLIR Python bindings that ship inside iree-base-compiler.

Every other module of xlair reaches MLIR through this file (rule 0 of DESIGN.md), so the
binding surface we depend on is listed in one place.  The bindings are imported when first
used, not when this file is: the run side imports the dialect without the compiler.  The process has one MLIR context:
types and attributes are uniqued there and modules built by different Builders can be
spliced into each other (sub-computations become regions).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types

from .errors import XlaError

__all__ = ["ir", "passmanager", "rewrite", "arith", "func", "linalg", "math", "memref", "scf",
           "tensor", "complex_d", "context", "lock", "compiler_present", "MISSING_COMPILER"]

#: what to install where the compile side is asked for and only the runtime is here
MISSING_COMPILER = ("compiling needs the package iree-base-compiler (pip install iree-base-compiler==3.13.0); "
                    "this environment has only the run side (iree-base-runtime): it can load and run "
                    "artifacts (xla.load, xlair-run), not build or compile programs")


class _Bindings(types.ModuleType):
    """One module of IREE's MLIR bindings, imported when first used.  The run side (loading an
    artifact, calling it) imports the dialect's records, types and checks and never touches MLIR
    (DESIGN.md rule 9): a machine with iree-base-runtime alone imports xlair, and the first use
    of the bindings there is an XlaError naming the missing package.  Each attribute, once read,
    is kept in the instance, so later reads are plain attribute reads."""

    def __init__(self, name: str):
        super().__init__(name)
        self._real = None

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        real = self._real or _load(self.__name__)
        self._real = real
        value = getattr(real, attr)
        setattr(self, attr, value)
        return value

    def __repr__(self) -> str:
        return f"<MLIR bindings {self.__name__} ({'loaded' if self._real else 'not loaded yet'})>"


_loaded = False


def _load(name: str):
    global _loaded
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        if not (e.name or "").startswith("iree"):
            raise
        raise XlaError(MISSING_COMPILER) from None
    if not _loaded:
        _loaded = True
        _answer_dialect_lookups()
    return module


def compiler_present() -> bool:
    """Whether IREE's compiler (and its MLIR bindings) is installed here; nothing is imported."""
    if _loaded:
        return True
    try:
        return importlib.util.find_spec("iree.compiler") is not None
    except ImportError:
        return False


ir = _Bindings("iree.compiler.ir")
passmanager = _Bindings("iree.compiler.passmanager")
rewrite = _Bindings("iree.compiler.rewrite")
arith = _Bindings("iree.compiler.dialects.arith")
func = _Bindings("iree.compiler.dialects.func")
linalg = _Bindings("iree.compiler.dialects.linalg")
math = _Bindings("iree.compiler.dialects.math")
memref = _Bindings("iree.compiler.dialects.memref")
scf = _Bindings("iree.compiler.dialects.scf")
tensor = _Bindings("iree.compiler.dialects.tensor")
complex_d = _Bindings("iree.compiler.dialects.complex")

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
