"""While loops run per element: an element-wise loop becomes one linalg.generic.

The portable lowering of While (control_flow.py) keeps the loop on the host: IREE runs each
trip's ops as dispatches and reads the condition back, ~15-30 us a trip on the CPU (a
1000-trip loop adding 1 to f32[10]: 15-30 ms; XLA:CPU 13 us).  Many loops are element-wise
maps in disguise: the state is scalars and arrays of one shape D, the body computes each
array element from the same element of the state arrays and from scalars, the scalars from
scalars only, and the condition from scalars.  Such a loop is the same as running, for every
index of D, a loop over scalars: `out[i] = while(cond, body_i, (s, x[i]))`.  The lowering
emits exactly that: one linalg.generic over D whose body is an scf.while over scalars (the
scalars' results are taken from element 0).  The whole loop is then one dispatch with no
host round trip per trip.

The condition reads scalars only and the scalars are computed from scalars only, so every
element's loop makes the same trips.  One element's loop is a chain of dependent operations
(x + 1, 1000 times: 1000 additions' latency) that leaves the CPU's pipelines idle, so the
loops of k elements (JAM) run as one: the generic's point p reads element p of each of k
rows of the array, the while carries the scalars once and the k elements' values, each
updated by its own copy of the body (the scalars' copies are one after LLVM's CSE), and the
array is put back together from the rows.  Measured (AMD Zen 4): x + 1 on f32[10] x1000
a call's IREE invoke 10.7 -> 4.2 us; 200 trips on f32[3000] 530 -> 94 us.

The rewrite is exact (the same scalar operations in the same order per element).  It is
taken on the CPU target only (the pass option `target=cpu`), and for small arrays
(at most MAX_ELEMENTS elements): the per-element loop is scalar code, while the host loop
runs vectorized dispatches, which win on large arrays.  It runs as the pass
`xla-elementwise-loops` at the start of xla-to-linalg, on the xla ops of the loop's
computations (the While pattern sees them already lowered).
"""
from __future__ import annotations

import numpy as np

from xlair.dialect.attrs import literal_value
from xlair.dialect.core import RETURN, lookup
from xlair.dialect.ir import ir, scf, tensor
from xlair.dialect.types import Shape

from . import patterns  # noqa: F401  (registers the scalar emitters of the element-wise ops)
from .device_loops import MAX_BYTES
from .registry import (Lower, options, affine_map, builtin_leaves, empty, from_builtin_leaves, generic, in_scalar_region,
                       index, insert_slice, reshape)
from .scalar import SCALAR, SCALAR_IDENTITY, emit_region

#: the largest array state (elements) a loop is run per element for
MAX_ELEMENTS = 4096
#: The loops of up to this many elements run together, as one loop whose state holds each
#: element's (the largest divisor of the elements' count up to JAM; the scalars shared): one
#: element's loop is a chain of dependent operations that leaves the CPU's pipelines idle.
JAM = 16
#: arrays of at least this many elements whose state a device loop can hold (two copies within
#: its MAX_BYTES) are left to the device loops instead: their scalar loops over the arrays are
#: vectorized, where the per-element While is not.  Measured (Xeon, AVX-512), per call:
#: fori_loop_newton f32[100] x30 15.4 -> 12.4 us, a data-dependent While of sin on f32[64]
#: 132 -> 18.5 us; but x + 1 on f32[10] x1000 14.6 -> 30 us (the device loop copies its state
#: twice a trip), hence the floor.  With JAM (AMD Zen 4): fori_loop_newton 9.7 us as a device
#: loop, 11.7 per element; x + 1 on f32[10] x1000 28 as a device loop, 8 per element.
DEVICE_LOOP_ELEMENTS = 32

_BROADCASTS = {"xla.broadcast", "xla.broadcast_in_dim"}


def _shape(v) -> Shape:
    return Shape.from_mlir(v.type)


def _elementwise_region(region: ir.Region, dims: tuple) -> bool:
    """Whether every op of a While computation works element by element on values of shape
    `dims` and rank-0 values (see the module docstring)."""
    for op in region.blocks[0].operations:
        op = op.operation
        name = op.name
        if len(op.regions):
            return False
        if name in (RETURN, "xla.tuple", "xla.get_tuple_element"):
            continue
        if len(op.results) != 1:
            return False
        out = _shape(op.results[0])
        if out.is_tuple or out.is_token or out.dims not in ((), dims):
            return False
        ins = [_shape(v) for v in op.operands]
        if name == "xla.constant":
            vals = literal_value(op.attributes["value"])
            if vals.size == 0 or not np.all(vals == vals.flat[0]) or np.any(np.isnan(vals.astype(np.complex128))):
                return False                                   # only splats (one scalar)
        elif name in SCALAR_IDENTITY:
            if not (ins[0].rank == 0 and (out.rank == 0 or name in _BROADCASTS)):
                return False
        elif name in SCALAR:
            if any(s.is_tuple or s.is_token or s.dims != out.dims for s in ins):
                return False
        else:
            return False
    return True


def elementwise_while(lw):
    """The per-element lowering of an element-wise While, or None when the loop is not one."""
    state = lw.result_shape
    leaves = state.leaves()
    if any(s.is_token for s in leaves):
        return None
    arrays = {s.dims for s in leaves if s.rank}
    if len(arrays) > 1:
        return None
    dims = arrays.pop() if arrays else ()
    size = int(np.prod(dims, dtype=np.int64))
    if size == 0 or size > MAX_ELEMENTS or 2 * len(leaves) > options().desc.max_bindings:   # (each leaf: in and out)
        return None
    if options().loops == "device" and size >= DEVICE_LOOP_ELEMENTS and \
            2 * sum(int(np.prod(s.dims, dtype=np.int64)) * np.dtype(s.dtype).itemsize for s in leaves) <= MAX_BYTES:
        return None             # a device loop (lowering/device_loops.py), vectorized
    cond, body = lw.args["condition"], lw.args["body"]
    if not (_elementwise_region(cond, dims) and _elementwise_region(body, dims)):
        return None
    inits = builtin_leaves(lw.args["init"], state)
    # k elements' loops run together, as one loop (see JAM)
    k = max(d for d in range(1, min(JAM, size) + 1) if size % d == 0) if dims else 1
    m = size // k
    arr = [bool(s.rank) for s in leaves]
    point = affine_map(1, [0])
    ins, maps = [], []
    for x, a in zip(inits, arr):
        if a:
            rows = reshape(x, [k, m])
            ins += [rows] * k
            maps += [affine_map(1, [ir.AffineConstantExpr.get(j), 0]) for j in range(k)]
        else:
            ins.append(x)
            maps.append(affine_map(1, []))
    outs = [empty(Shape(s.element_type, (m,))) for s, a in zip(leaves, arr) for _ in range(k if a else 1)]

    def lanes(values):
        """the state of each of the k loops from the jammed state (scalars shared)"""
        out, it = [[] for _ in range(k)], iter(values)
        for a in arr:
            vs = [next(it) for _ in range(k)] if a else [next(it)] * k
            for j in range(k):
                out[j].append(vs[j])
        return out

    def per_point(*scalars):
        xs = list(scalars[:len(ins)])
        types = [x.type for x in xs]
        w = scf.WhileOp(types, xs)
        before = w.before.blocks.append(*types)
        with ir.InsertionPoint(before):   # the condition reads scalars only: the same in every loop
            (go,) = emit_region(cond, lanes(list(before.arguments))[0], "xla.while", elementwise=True)
            scf.ConditionOp(go, list(before.arguments))
        after = w.after.blocks.append(*types)
        with ir.InsertionPoint(after):
            new = [emit_region(body, lane, "xla.while", elementwise=True) for lane in lanes(list(after.arguments))]
            scf.YieldOp([v for i, a in enumerate(arr) for v in ([r[i] for r in new] if a else [new[0][i]])])
        return list(w.results)
    results = iter(generic(ins, maps, outs, [point] * len(outs), ["parallel"], per_point))
    final = []
    for s, a in zip(leaves, arr):
        if a:
            whole = empty(Shape(s.element_type, (k, m)))
            for j in range(k):
                whole = insert_slice(reshape(next(results), [1, m]), whole, [j, 0])
            final.append(reshape(whole, list(dims)))
        else:
            r = next(results)
            et = ir.RankedTensorType(r.type).element_type
            # an integer the host may hold (host_scalars.py); the others reshaped: a boolean's
            # tensor<1xi1> (IREE stores i1 tensors as i8 and left the from_elements of an i1 as
            # it was: "'tensor.from_elements' op failed to verify that operand types match
            # result element type", test_iree_from_elements_of_a_boolean_loop_result), and a
            # float or complex one, which the host computes nothing with: its from_elements was
            # a read back (and a C128 one "'stream.async.splat' op operand #0 must be 8-bit ...
            # or 64-bit signless integer", test_c128_scan_of_an_inner_loop_splat_of_128_bits)
            host = et.typeid == ir.IntegerType.static_typeid and et != ir.IntegerType.get_signless(1)
            final.append(tensor.from_elements(ir.RankedTensorType.get([], et), [tensor.extract(r, [index(0)])])
                         if host else reshape(r, []))
    return from_builtin_leaves(final, state)


def elementwise_loops(module: ir.Module) -> None:
    """Rewrite every element-wise While of a CPU-targeted module (see the module docstring)."""
    loops = []

    def visit(op):
        op = op.operation if hasattr(op, "operation") else op
        if op.name == "xla.while":
            loops.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    if not loops or options().desc.device_loops != "dispatch":
        return
    opdef = lookup("xla.while")
    for op in loops:
        if in_scalar_region(op):
            continue
        with ir.InsertionPoint(op), op.location:
            new = elementwise_while(Lower(op, None, opdef))
        if new is not None:
            op.results[0].replace_all_uses_with(new)
            op.erase()
