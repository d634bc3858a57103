"""Named passes and pipelines (runnable from Python and from xlair-opt by their kebab-case
names):

  xla-simplify         fold get_tuple_element(tuple(...)), drop dead tuples
  xla-flatten-tuples   function arguments and results of tuple type become their leaves
  xla-elementwise-loops  (CPU-targeted modules) element-wise While loops as one linalg.generic
                       per element (lowering/loops.py); run by xla-to-linalg
  xla-to-linalg        every xla op to linalg/tensor/scf/arith/math/complex; unsigned
                       element types become signless; fails if an xla op is left
  xla-to-iree-input    the three above, in order: what IREE is given
"""
from __future__ import annotations

from typing import Callable

from xlair.dialect.checks import XlaError
from xlair.dialect.core import location_str
from xlair.dialect.ir import context, ir, lock, passmanager, rewrite
from xlair.dialect.types import is_tensor, Shape

from . import libm, registry
from .registry import builtin_type, cast, tuple_leaves, tuple_rebuild

PASSES: dict[str, Callable[[ir.Module], None]] = {}


def register_pass(name: str):
    def deco(fn):
        PASSES[name] = fn
        return fn
    return deco


# ----------------------------------------------------------------------------------------
# xla-simplify
# ----------------------------------------------------------------------------------------
def _fold_gte(op, rewriter):
    src = op.operands[0].owner
    if not isinstance(src, ir.OpView) and not isinstance(src, ir.Operation):
        return True
    src = src.operation if hasattr(src, "operation") else src
    if src.name != "xla.tuple":
        return True
    idx = ir.IntegerAttr(op.attributes["index"]).value
    rewriter.replace_op(op, [src.operands[idx]])
    return False


def _erase_dead(op, rewriter):
    if any(True for r in op.results for _ in r.uses):
        return True
    rewriter.erase_op(op)
    return False


def _simplify_patterns(ps: rewrite.RewritePatternSet):
    ps.add("xla.get_tuple_element", _fold_gte)
    ps.add("xla.tuple", _erase_dead)


def _greedy(module: ir.Module, ps: rewrite.RewritePatternSet):
    rewrite.apply_patterns_and_fold_greedily(module, ps.freeze())


@register_pass("xla-simplify")
def simplify(module: ir.Module) -> None:
    ps = rewrite.RewritePatternSet()
    _simplify_patterns(ps)
    _greedy(module, ps)


# ----------------------------------------------------------------------------------------
# xla-flatten-tuples
# ----------------------------------------------------------------------------------------
def _funcs(module: ir.Module):
    return [op.operation for op in module.body.operations if op.operation.name == "func.func"]


@register_pass("xla-flatten-tuples")
def flatten_tuples(module: ir.Module) -> None:
    for f in _funcs(module):
        ft = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        in_shapes = [Shape.from_mlir(t) for t in ft.inputs]
        out_shapes = [Shape.from_mlir(t) for t in ft.results]
        if not any(s.is_tuple for s in in_shapes + out_shapes):
            continue
        if len(f.regions[0].blocks) == 0:
            continue
        block = f.regions[0].blocks[0]
        old_args = list(block.arguments)
        new_args = [block.add_argument(leaf.to_mlir(), f.location)
                    for s in in_shapes for leaf in s.leaves()]
        new_types = [a.type for a in new_args]
        leaves = iter(new_args)
        with ir.InsertionPoint.at_block_begin(block), f.location:
            for a, s in zip(old_args, in_shapes):
                a.replace_all_uses_with(tuple_rebuild(s, leaves))
        for _ in old_args:
            block.erase_argument(0)
        for ret in [op for op in block.operations if op.operation.name == "func.return"]:
            ret = ret.operation
            with ir.InsertionPoint(ret), ret.location:
                flat = []
                for v, s in zip(list(ret.operands), out_shapes):
                    flat.extend(tuple_leaves(v, s))
                ir.Operation.create("func.return", operands=flat)
            ret.erase()
        outs = [l.to_mlir() for s in out_shapes for l in s.leaves()]
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(new_types, outs))
    simplify(module)


# ----------------------------------------------------------------------------------------
# xla-to-linalg
# ----------------------------------------------------------------------------------------
def _legalize_signatures(module: ir.Module) -> None:
    """Function arguments and results of unsigned element type become signless."""
    for f in _funcs(module):
        if len(f.regions[0].blocks) == 0:
            continue
        block = f.regions[0].blocks[0]
        ft = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        ins = list(ft.inputs)
        first = list(block.operations)[0]
        for i, a in enumerate(block.arguments):
            if not is_tensor(a.type) and str(a.type) != "!xla.token":
                continue
            t = builtin_type(Shape.from_mlir(a.type))
            if t == a.type:
                continue
            xla_t = a.type
            a.set_type(t)
            with ir.InsertionPoint(first), f.location:
                c = ir.Operation.create("builtin.unrealized_conversion_cast", results=[xla_t], operands=[a])
            a.replace_all_uses_with(c.result)
            c.operands[0] = a
            ins[i] = t
        outs = list(ft.results)
        for ret in [op.operation for op in block.operations if op.operation.name == "func.return"]:
            for i, v in enumerate(list(ret.operands)):
                if is_tensor(v.type) or str(v.type) == "!xla.token":
                    t = builtin_type(Shape.from_mlir(v.type))
                    if t != v.type:
                        with ir.InsertionPoint(ret), ret.location:
                            ret.operands[i] = cast(v, t)
                        outs[i] = t
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(ins, outs))


def leftover_xla_ops(module: ir.Module) -> list[ir.Operation]:
    found = []

    def visit(op):
        op = op.operation if hasattr(op, "operation") else op
        if op.name.startswith("xla."):
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return found


@register_pass("xla-dynamic-sizes")
def dynamic_sizes(module: ir.Module) -> None:
    """Follow dynamic dimension sizes: mask reductions, resolve GetDimensionSize."""
    from .dynamic import dynamic_sizes as run_dynamic
    run_dynamic(module)


@register_pass("xla-elementwise-loops")
def elementwise_loops(module: ir.Module) -> None:
    """CPU-targeted modules: element-wise While loops run per element in one linalg.generic."""
    from .loops import elementwise_loops as run_loops
    run_loops(module)


@register_pass("xla-to-linalg")
def to_linalg(module: ir.Module) -> None:
    dynamic_sizes(module)
    elementwise_loops(module)
    _legalize_signatures(module)
    ps = rewrite.RewritePatternSet()
    _simplify_patterns(ps)
    for name, fn in _all_patterns().items():
        ps.add(name, registry._wrap(name, fn))
    frozen = ps.freeze()
    for _ in range(8):
        rewrite.apply_patterns_and_fold_greedily(module, frozen)
        if not leftover_xla_ops(module):
            break
    left = leftover_xla_ops(module)
    if left:
        op = left[0]
        names = sorted({o.name for o in left})
        raise XlaError(f"'{op.name}' has no lowering to linalg (left: {', '.join(names)})",
                       location=location_str(op.location))
    passmanager.PassManager.parse("builtin.module(func.func(convert-complex-to-standard))").run(module.operation)
    rewrite.apply_patterns_and_fold_greedily(module, libm.f64_patterns())
    pm = passmanager.PassManager.parse("builtin.module(reconcile-unrealized-casts,canonicalize,cse)")
    pm.run(module.operation)


def _all_patterns():
    from . import patterns  # noqa: F401  (imports every family of patterns)
    return registry.PATTERNS


@register_pass("xla-to-iree-input")
def to_iree_input(module: ir.Module) -> None:
    simplify(module)
    flatten_tuples(module)
    to_linalg(module)


def run(module: ir.Module, *names: str) -> ir.Module:
    """Run named xlair passes in order on a module (in place) and return it."""
    with lock, context(), ir.Location.unknown():
        for n in names:
            if n not in PASSES:
                raise XlaError(f"unknown pass {n!r}; known: {', '.join(sorted(PASSES))}")
            PASSES[n](module)
    return module
