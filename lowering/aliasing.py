"""Which parameters of a lowered program IREE may update in place.

IREE 3.13 writes into the buffer of an argument when the argument is the destination of an
in-place op: `tensor.insert_slice %u into %arg0` (a DynamicUpdateSlice of a parameter)
stores into the caller's buffer (iree-org/iree#16168, "Exported I/O buffer views improperly
alias with tied ops"; measured: DynamicUpdateSlice of f32[8] and f32[512,512] parameters).
Arguments that the runtime hands to a program without a copy (device-resident `xla.Array`s)
must not be such destinations, so the runtime copies exactly those that are.

`written_parameters(func)` (and `parameter_aliases(func)`, which also names the results that
may be an argument's buffer as it is) follows each argument of the lowered function through the ops
that pass it on as the same tensor (casts, reshapes, slices, barriers, the branches of an
scf.if, a function's return) and reports it written when it reaches anything else than a
read it knows: the destination of a linalg or iree_linalg_ext op, of tensor.insert_slice or
tensor.insert, the initial value of a loop, or any op not listed here.  A call of a function
of the module is followed into the function (and on through the results that return the
argument); a call of a declared function is a host call, which reads its operands
(python/xlair/host.py hands them to MPI's collectives as they are and copies them for
everything else).  Unknown means written: a missed read costs a copy, a missed write would
corrupt the caller's array.
"""
from __future__ import annotations

from xlair.dialect.core import find_function
from xlair.dialect.ir import ir
from xlair.dialect.types import is_tensor

#: ops whose result is the operand seen as another type or shape: the same buffer to IREE
ALIASES = frozenset({
    "tensor.cast", "tensor.expand_shape", "tensor.collapse_shape", "tensor.bitcast",
    "tensor.reshape", "tensor.extract_slice", "util.optimization_barrier",
    "flow.tensor.reshape", "flow.tensor.bitcast",
})
#: ops that only read their tensor operands
READS = frozenset({
    "tensor.extract", "tensor.dim", "tensor.pad", "tensor.concat",
    "tensor.from_elements", "tensor.splat", "flow.tensor.load",
})
#: families whose tensor operands are read (element-wise ops on whole tensors)
READ_DIALECTS = ("arith.", "math.", "complex.")
#: destination-passing ops: their leading operands are read, the inits (the last operands,
#: one per result) are written
DPS_DIALECTS = ("linalg.", "iree_linalg_ext.")


def written_parameters(func: ir.Operation) -> list[int]:
    """The indices of `func`'s tensor arguments that IREE may write in place."""
    return parameter_aliases(func)[0]


def parameter_aliases(func: ir.Operation) -> tuple[list[int], list[int]]:
    """(the indices of `func`'s tensor arguments that IREE may write in place, the positions
    of its results that may be the buffer of an argument it does not write, or a view of one).
    IREE returns such an argument's buffer view itself, or a view of its buffer, as the result
    (measured: `return %arg0`, and a reshape of it): the runtime copies those results of
    device-resident arrays, so that a result never shares an argument's memory, as XLA's
    results do not (JAX's lax_numpy_test testArrayCopy: `jax.jit(jnp.copy)(x)` has a buffer
    of its own)."""
    written, returned = [], set()
    for i, arg in enumerate(func.regions[0].blocks[0].arguments):
        if is_tensor(arg.type):
            w, passed = _uses(arg)
            if w:
                written.append(i)
            else:
                returned |= passed
    return written, sorted(returned)


#: calls followed into callees, at most this deep (deeper: written)
MAX_DEPTH = 16


def _uses(value: ir.Value, depth: int = 0) -> tuple[bool, set]:
    """(whether `value` may be written, the positions of its function's return that pass it
    on as it is)."""
    seen = set()
    returned = set()
    todo = [value]
    while todo:
        v = todo.pop()
        for use in v.uses:
            op = use.owner
            name = op.name
            key = (op, use.operand_number)
            if key in seen:
                continue
            seen.add(key)
            if name in ALIASES:
                todo.extend(op.results)
            elif name == "func.return":
                returned.add(use.operand_number)
            elif name in READS or name.startswith(READ_DIALECTS):
                continue
            elif name in ("tensor.insert_slice", "tensor.insert"):
                if use.operand_number == 1:      # the destination (operand 0 is what is inserted)
                    return True, returned
            elif name == "scf.yield" and op.parent is not None and op.parent.name == "scf.if":
                todo.append(op.parent.results[use.operand_number])
            elif name == "func.call":
                callee = _callee(op)
                if callee is None:
                    continue        # a host call: it reads its operands (python/xlair/host.py)
                if depth >= MAX_DEPTH:
                    return True, returned
                # what the callee does with its argument, and the results that are that argument
                written, passed = _uses(callee.regions[0].blocks[0].arguments[use.operand_number], depth + 1)
                if written:
                    return True, returned
                todo.extend(op.results[k] for k in passed)
            elif name.startswith(DPS_DIALECTS):
                if use.operand_number >= _inputs(op):
                    return True, returned
            else:
                return True, returned
    return False, returned


def _callee(call: ir.Operation) -> ir.Operation | None:
    """The func.func with a body that a func.call calls, in the same module (None for a
    declaration: a host call)."""
    f = find_function(call, ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
    return f if f is not None and len(f.regions[0].blocks) else None


def _inputs(op: ir.Operation) -> int:
    """How many leading operands of a destination-passing op on tensors are inputs (read
    only): its inits come last, one per result."""
    return len(op.operands) - len(op.results)
