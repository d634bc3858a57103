"""Scalar arithmetic on values the host already holds stays on the host.

Inside a counted loop (lowering/control_flow.py) the counter is a host value; JAX computes
indices from it with rank-0 ops: `select(i < 0, i + n, i)` before every dynamic index, `n - 1
- i` in a reversed scan.  Each such op lowers to a linalg.generic over rank-0 tensors, which
IREE runs as a dispatch of its own, and the DynamicSlice that uses the result then reads it
back from the device (a wait per loop trip).  `fold_host_scalars` replaces a rank-0
linalg.generic of integers whose every input is a `tensor.from_elements` of a scalar, a
constant, or an element sliced from a constant (the peeled first trip of a counted loop reads
a table at the counter's first value; left as a dispatch without operands, IREE 3.13 refused
it: docs/iree-limits.md) by its body's scalar ops on those scalars: the result is again a `tensor.from_elements`, so
chains fold in one walk, and canonicalization then folds `tensor.extract` of it to the
scalar.  Nothing that lives on the device is moved to the host: the folding takes only
inputs the host holds.
"""
from __future__ import annotations

import math

from xlair.dialect.ir import arith, ir, tensor

from .registry import defining_op


def _constant_element(v: ir.Value) -> ir.Attribute | None:
    """The element of a rank-0 tensor sliced (at static offsets) and reshaped from an
    arith.constant of integers, or None: the peeled first trip of a counted loop reads a
    table at the counter's first value (threefry's rotation amounts, `32 - r[0]`)."""
    flat = 0                                  # of the element, in row-major order in `v`
    while (op := defining_op(v)) is not None:
        if op.name in ("tensor.collapse_shape", "tensor.expand_shape"):
            v = op.operands[0]                # (a reshape keeps the row-major order)
        elif op.name == "tensor.extract_slice" and len(op.operands) == 1 \
                and math.prod(ir.RankedTensorType(op.results[0].type).shape) == 1:
            shape = ir.RankedTensorType(op.operands[0].type).shape
            flat = 0
            for o, d in zip(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]), shape):
                flat = flat * d + o
            v = op.operands[0]
        elif op.name == "arith.constant":
            attr = op.attributes["value"]
            return ir.IntegerAttr.get(ir.RankedTensorType(v.type).element_type, int(attr[flat])) \
                if isinstance(attr, ir.DenseIntElementsAttr) else None
        else:
            return None
    return None


def _host_value(v: ir.Value):
    """What the host holds of a rank-0 tensor, or None: the scalar of a tensor.from_elements,
    the splat attribute of an arith.constant, or an element of a constant (_constant_element;
    attributes are made scalar constants only when folding)."""
    op = defining_op(v)
    if op is None:
        return None
    if op.name == "tensor.from_elements" and len(op.operands) == 1:
        return op.operands[0]
    if op.name == "arith.constant":
        attr = op.attributes["value"]
        if isinstance(attr, ir.DenseElementsAttr) and attr.is_splat:
            return attr
    return _constant_element(v)


def _scalar(v: ir.Value, held) -> ir.Value:
    """The scalar value of what `_host_value` found."""
    if isinstance(held, ir.Value):
        return held
    if isinstance(held, ir.IntegerAttr):
        return arith.ConstantOp(held.type, held).result
    return arith.ConstantOp(ir.RankedTensorType(v.type).element_type, held.get_splat_value()).result


def _rank0(v: ir.Value) -> bool:
    """A rank-0 tensor of integers (i1 to i64: index arithmetic and its predicates; IREE
    cannot splat a complex128 host scalar, "operand #0 must be ... 64-bit signless integer,
    but got 'i128'")."""
    if not isinstance(v.type, ir.RankedTensorType):
        return False
    t = ir.RankedTensorType(v.type)
    return t.rank == 0 and isinstance(t.element_type, ir.IntegerType) and ir.IntegerType(t.element_type).width <= 64


def _foldable(op: ir.Operation):
    """What the host holds of the inputs of a rank-0 linalg.generic it can compute, or None."""
    if op.name != "linalg.generic" or not all(_rank0(v) for v in list(op.operands) + list(op.results)):
        return None
    n_in = len(op.operands) - len(op.results)
    block = op.regions[0].blocks[0]
    if any(True for a in list(block.arguments)[n_in:] for _ in a.uses):
        return None                              # the body reads its output: not element-wise
    held = [_host_value(v) for v in list(op.operands)[:n_in]]
    return None if any(h is None for h in held) else held


def fold_host_scalars(module: ir.Module) -> None:
    """Rank-0 linalg.generic ops of host scalars become scalar ops (see the module's docstring)."""
    found = []

    def visit(op):
        op = op.operation if isinstance(op, ir.OpView) else op
        if op.name == "linalg.generic":
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)            # in program order: a chain's producers come first
    for op in found:
        held = _foldable(op)
        if held is None:
            continue
        with ir.InsertionPoint(op):
            scalars = [_scalar(v, h) for v, h in zip(op.operands, held)]
        block = op.regions[0].blocks[0]
        for a, s in zip(block.arguments, scalars):
            a.replace_all_uses_with(s)
        body = [o.operation if isinstance(o, ir.OpView) else o for o in block.operations]
        for o in body[:-1]:
            o.move_before(op)
        with ir.InsertionPoint(op):
            outs = [tensor.from_elements(r.type, [y]) for r, y in zip(op.results, body[-1].operands)]
        for r, v in zip(op.results, outs):
            r.replace_all_uses_with(v)
        op.erase()
