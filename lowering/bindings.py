"""Element-wise trees that read too many tensors, cut in pieces (run at the end of xla-to-linalg).

IREE 3.13 fuses a tree of element-wise ops into one dispatch however many tensors its leaves
read, and its HALs run a dispatch with at most the target's `max_bindings` buffer bindings
(lowering/targets.py: the CPU 32, CUDA and ROCm 16).  iree-compile takes such a module; loading
it fails: "binding count 35 > 32; while invoking native function hal.command_buffer.dispatch"
on the CPU (a loop body adding 34 arrays to its state), "exports[80] binding_flags count 25
exceeds maximum of 16" on CUDA (an optax AdamW step).  So the result of an element-wise op
whose tree would read more than the target's `max_reads` tensors is passed on through
`util.optimization_barrier`, which IREE does not fuse across: what is past the barrier reads
one tensor, the barrier's result.
"""
from __future__ import annotations

from xlair.dialect.ir import ir
from xlair.dialect.types import is_tensor

from .registry import barrier, defining_op, options


def element_wise(op: ir.Operation) -> bool:
    """A linalg.generic with one result and no reduction loop."""
    return op.name == "linalg.generic" and len(op.results) == 1 and \
        "reduction" not in str(op.attributes["iterator_types"])


def _reads(v: ir.Value, owner: ir.Operation, trees: dict) -> set | None:
    """What reading `v` adds to a tree: the tensors its element-wise tree reads, when an
    element-wise op of the same block makes it (IREE fuses it in), else `v` itself (None for
    what IREE makes in the dispatch: a tensor.empty, a constant)."""
    d = defining_op(v)
    if d is not None and d.name in ("tensor.empty", "arith.constant"):
        return None
    if d is not None and d.parent == owner and v in trees:
        return trees[v]
    return {v}


def _split_block(block: ir.Block, trees: dict, max_reads: int) -> None:
    for op in list(block.operations):
        op = op.operation
        if op.name == "flow.dispatch.region":
            continue
        for region in op.regions:
            for b in region.blocks:
                _split_block(b, trees, max_reads)
        if not element_wise(op):
            continue
        parts = {}
        for k, v in enumerate(op.operands):
            s = _reads(v, block.owner, trees) if is_tensor(v.type) else None
            if s:
                parts[k] = s
        while len(set().union(*parts.values())) > max_reads:
            k = max((k for k in parts if len(parts[k]) > 1), key=lambda k: len(parts[k]), default=None)
            if k is None:
                break
            with ir.InsertionPoint(op), op.location:
                cut = barrier(op.operands[k])
            op.operands[k] = cut
            parts[k] = {cut}
        trees[op.results[0]] = set().union(*parts.values())


def split_wide_fusions(module: ir.Module) -> None:
    """Cut every element-wise tree of the module's functions that would read more than the
    target's max_reads tensors (see the module docstring)."""
    max_reads = options().desc.max_reads
    for f in module.body.operations:
        if f.operation.name == "func.func" and len(f.operation.regions[0].blocks):
            _split_block(f.operation.regions[0].blocks[0], {}, max_reads)
