"""Hand-written dispatches: for ops whose best algorithm is sequential or irregular (Sort), the
lowering can emit the kernel itself as scf/memref code in a `stream.executable`, called from
the program with `flow.dispatch`.  IREE compiles it like any other executable (llvm-cpu), so
the artifact stays self-contained.  Workgroups run in parallel on IREE's task system; each
knows its index through `workgroup_id(dim)`.

Only CPU targets take this road; other targets use the portable lowering of the op.
"""
from __future__ import annotations

import itertools
from typing import Callable, Sequence

from xlair.dialect.ir import ir

from .registry import module_of

_counter = itertools.count()


def memref_type(t: ir.Type) -> str:
    rt = ir.RankedTensorType(t)
    return "memref<" + "".join(f"{d}x" for d in rt.shape) + str(rt.element_type) + ">"


def dispatch(anchor_op: ir.Operation, name: str, inputs: Sequence[ir.Value], result_types: Sequence[ir.Type],
             workgroups: Sequence[int], body: Callable) -> list[ir.Value]:
    """Emit a kernel and dispatch it at the current insertion point.

    `body(ins, outs)` runs with the insertion point inside the kernel function and receives
    memrefs for the inputs and for the results (results are written, not read).
    """
    sym = f"xlair_{name}_{next(_counter)}"
    types = [v.type for v in inputs] + list(result_types)
    wg = list(workgroups) + [1] * (3 - len(workgroups))
    args = ", ".join(f"%b{i}: !stream.binding" for i in range(len(types)))
    subspans = "\n".join(f"      %m{i} = stream.binding.subspan %b{i}[%c0] : !stream.binding -> {memref_type(t)}"
                         for i, t in enumerate(types))
    text = f"""
stream.executable private @{sym} {{
  stream.executable.export public @{sym} workgroups() -> (index, index, index) {{
    %x = arith.constant {wg[0]} : index
    %y = arith.constant {wg[1]} : index
    %z = arith.constant {wg[2]} : index
    stream.return %x, %y, %z : index, index, index
  }}
  builtin.module {{
    func.func @{sym}({args}) {{
      %c0 = arith.constant 0 : index
{subspans}
      return
    }}
  }}
}}"""
    skeleton = ir.Module.parse(text)
    top = module_of(anchor_op)
    with ir.InsertionPoint.at_block_begin(top.regions[0].blocks[0]):
        exe = skeleton.body.operations[0].operation.clone()
    inner = exe.regions[0].blocks[0].operations
    kernel_module = [op.operation for op in inner if op.operation.name == "builtin.module"][0]
    kernel = kernel_module.regions[0].blocks[0].operations[0].operation
    block = kernel.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    memrefs = [op.results[0] for op in ops if op.name == "stream.binding.subspan"]
    with ir.InsertionPoint(ops[-1]), anchor_op.location:
        body(memrefs[:len(inputs)], memrefs[len(inputs):], kernel_module)
    i32 = ir.IntegerType.get_signless(32)
    idx = ir.IndexType.get()
    d = ir.Operation.create(
        "flow.dispatch", results=list(result_types), operands=list(inputs),
        attributes={
            "entry_points": ir.ArrayAttr.get([ir.SymbolRefAttr.get([sym, sym])]),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(inputs), 0, 0]),
            "tied_operands": ir.ArrayAttr.get([ir.IntegerAttr.get(idx, -1) for _ in result_types]),
        })
    del i32
    return list(d.results)


def workgroup_id(dim: int) -> ir.Value:
    return ir.Operation.create("stream.dispatch.workgroup.id", results=[ir.IndexType.get()],
                               attributes={"dimension": ir.IntegerAttr.get(ir.IndexType.get(), dim)}).result
