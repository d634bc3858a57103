"""How much work the heaviest op of a program does, estimated on its `xla` ops.

The runtime chooses IREE's CPU driver by it (python/xlair/runtime.py): a program whose every
op is small runs its dispatches inline on the calling thread (local-sync), where handing each
dispatch to a worker thread (local-task) would cost more than the worker saves.  Measured
(bench/NOTES.md section 10): the task system pays off from about a 320x320x320 matmul
(2^26 multiply-adds x 2) or a 2^22-element element-wise op up.

The unit is a multiply-add of a contraction: a DotGeneral costs its result's elements times
the contracted size, a convolution its result's elements times the kernel's window and input
features; any other op costs ELEMENT_COST per element of its largest operand or result (an
element-wise op does several instructions per element and moves its bytes, where a
vectorised contraction does a multiply-add in a fraction of one), a Sort that times log2 of
the length it sorts along.  Ops in loop bodies count
once: the driver's cost is per dispatch, not per program.
"""
from __future__ import annotations

import math

from xlair.dialect.core import lookup
from xlair.dialect.ir import ir
from xlair.dialect.types import Shape

#: multiply-adds of a contraction that one element of an element-wise op is worth
ELEMENT_COST = 16


def _elements(t: ir.Type) -> int:
    try:
        return sum(s.size for s in Shape.from_mlir(t).leaves())
    except Exception:  # noqa: BLE001  (tokens, opaque types: no elements)
        return 0


#: The largest matrix dimension of a linear-algebra custom call (JAX's LAPACK calls), per
#: routine, that the CPU runs as device code (lowering/linalg_expand.py) rather than by calling
#: LAPACK on the host, under the pass option linalg=auto.  A host LAPACK call costs 40-100 us
#: whatever the size; the device forms cost a few us at n = 4-8 and grow faster.  Measured
#: (bench/NOTES.md section 28, AMD EPYC, f32, bench/bench_linalg_device.py), device / LAPACK:
#: cholesky 0.13 at n = 8, 0.44 at 32, 2.0 at 64; solve 0.06, 0.53, 23; det 0.12, 0.95, 13; qr
#: 0.12, 0.71, 4.0; eigh 0.27 at 8, 6.7 at 16; svd 0.33 at 8, 1.5 at 16.  The Jacobi methods
#: (syevd, gesdd) stay on LAPACK all the same: their vectors' signs are not LAPACK's, and a
#: program compared with jax.jit on the CPU would see them change with the size.
LINALG_DEVICE_MAX = {"potrf": 32, "trsm": 32, "getrf": 32, "geqrf": 32, "orgqr": 32, "LuDecomposition": 32}


#: the contractions (whose work is counted in multiply-adds)
CONTRACTIONS = ("xla.dot", "xla.dot_general", "xla.conv", "xla.conv_with_general_padding",
                "xla.conv_general_dilated")


def op_work(op: ir.Operation) -> int:
    """The estimated work of one `xla` op (see the module's docstring)."""
    name = op.name
    if name in CONTRACTIONS:
        from xlair.lowering.registry import Lower
        lw = Lower(op, None, lookup(name))
        out = lw.result_shape.size
        lhs, rhs = lw.shape("lhs"), lw.shape("rhs")
        if name == "xla.dot":
            return out * lhs.dims[-1]
        if name == "xla.dot_general":
            return out * math.prod(lhs.dims[d] for d in lw.attr("dimension_numbers").lhs_contracting_dimensions)
        from xlair.dialect.ops.contraction import default_conv_numbers
        dn = (lw.attr("dimension_numbers") if name == "xla.conv_general_dilated"
              else default_conv_numbers(lhs.rank))
        return out * rhs.size // max(1, rhs.dims[dn.kernel_output_feature_dimension])
    sizes = [_elements(v.type) for v in list(op.operands) + list(op.results)]
    work = ELEMENT_COST * max(sizes, default=0)
    if name == "xla.sort" and op.operands:
        # a sort passes over its elements about log2(n) times (lowering/sort.py splits a long
        # row over the task system's workers): f32[1M] on local-sync took 8.7-12.8 ms, on
        # local-task 4.7-5.2 (bench/NOTES.md section 16)
        dims = Shape.from_mlir(op.operands[0].type).dims
        k = int(ir.IntegerAttr(op.attributes["dimension"]).value) if "dimension" in op.attributes else len(dims) - 1
        n = dims[k] if dims else 1
        work *= max(1, math.ceil(math.log2(max(n, 1))))
    return work


def heaviest_work(module: ir.Module, ops: tuple | None = None) -> int:
    """The largest `op_work` over the module's `xla` ops (or those named in `ops`: e.g.
    CONTRACTIONS), loop bodies included."""
    best = 0

    def visit(op):
        nonlocal best
        name = op.operation.name
        if name.startswith("xla.") and (ops is None or name in ops):
            best = max(best, op_work(op.operation))
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return best
