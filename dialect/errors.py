"""The one exception type of xlair (imported by everything, importing nothing)."""
from __future__ import annotations


class XlaError(ValueError):
    """A program or an argument breaks a rule of XLA's operation semantics."""

    def __init__(self, message: str, *, op: str | None = None, param: str | None = None,
                 location: str | None = None, constraint: str | None = None):
        self.op, self.param, self.location = op, param, location
        #: the id of the rule broken: StableHLO's (`gather_c5`), the spec section's
        #: (`spec:RngBitGenerator`) or the IR's (`ir:operands`); it also ends `message`
        self.constraint = constraint
        self.message = message
        super().__init__(message + (f" (at {location})" if location else ""))

    def at(self, location: str | None) -> "XlaError":
        """The same error, pointing at a source location (when it has none yet)."""
        if location and not self.location:
            return XlaError(self.message, op=self.op, param=self.param, location=location,
                            constraint=self.constraint)
        return self
