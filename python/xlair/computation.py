"""`Computation`: a built XLA computation, held as an MLIR module of `xla.*` ops.

The module has one public function, `@main` (the entry computation); computations that the
entry calls by name (`xla.call`) are private functions beside it.  Computations passed to
ops such as Reduce become regions of those ops.
"""
from __future__ import annotations

import hashlib

from xlair.dialect.checks import XlaError
from xlair.dialect.core import Sig
from xlair.dialect.ir import context, ir, lock
from xlair.dialect.types import Shape
from xlair.dialect.verify import verify


class Computation:
    """An XlaComputation.  `comp.module` is the ir.Module; `str(comp)` its text."""

    def __init__(self, module: ir.Module, name: str = "main"):
        self.module = module
        self.name = name
        self._sig: Sig | None = None
        self._text: str | None = None

    # -- structure ---------------------------------------------------------------------------
    @property
    def main(self) -> ir.Operation:
        for op in self.module.body.operations:
            if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
                return op.operation
        raise XlaError("computation has no @main function")

    @property
    def program_shape(self) -> Sig:
        """Parameter shapes and result shape (XLA's ProgramShape)."""
        if self._sig is None:
            with context():
                ft = ir.FunctionType(ir.TypeAttr(self.main.attributes["function_type"]).value)
                if len(ft.results) != 1:
                    raise XlaError(f"computation {self.name} must return one value; got {len(ft.results)}")
                self._sig = Sig(tuple(Shape.from_mlir(t) for t in ft.inputs), Shape.from_mlir(ft.results[0]))
        return self._sig

    @property
    def parameter_shapes(self) -> tuple:
        return self.program_shape.params

    @property
    def result_shape(self) -> Shape:
        return self.program_shape.result

    # -- text ---------------------------------------------------------------------------------
    def __str__(self) -> str:
        if self._text is None:
            with lock, context():
                self._text = str(self.module)
        return self._text

    def to_text(self, debug_info: bool = False) -> str:
        with lock, context():
            return self.module.operation.get_asm(enable_debug_info=debug_info)

    def __repr__(self) -> str:
        return f"<xla.Computation {self.name} {self.program_shape}>"

    def fingerprint(self) -> str:
        """Content hash of the computation's text (the compile cache key's first part)."""
        return hashlib.sha256(str(self).encode()).hexdigest()

    def __eq__(self, other):
        return isinstance(other, Computation) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    @staticmethod
    def from_text(text: str, name: str = "main") -> "Computation":
        """Parse MLIR text holding xla ops (generic form) and verify it."""
        with lock, context():
            try:
                module = ir.Module.parse(text)
            except ir.MLIRError as e:
                diags = "; ".join(str(d) for d in getattr(e, "error_diagnostics", [])) or str(e)
                raise XlaError(f"cannot parse the computation: {diags}") from None
        comp = Computation(module, name)
        with lock, context():
            comp.main  # noqa: B018  (must exist)
            verify(module)      # in the context: attribute readers need it
        return comp
