"""Named passes and pipelines (runnable from Python and from xlair-opt by their kebab-case
names):

  xla-simplify         inline private functions called once, fold get_tuple_element(tuple(...)),
                       drop dead tuples and dead effect-free While loops, and compute a transposed dot product directly
                       (transpose(dot_general(a, b)) as dot_general(b, a), also through an
                       element-wise op of the product)
  xla-flatten-tuples   function arguments and results of tuple type become their leaves
  xla-elementwise-loops  (CPU-targeted modules) element-wise While loops as one linalg.generic
                       per element (lowering/loops.py); run by xla-to-linalg
  xla-device-loops     (on linalg) a loop whose tensors are small, or a small function body,
                       runs as one dispatch region (CPU) or in one linalg.generic's threads (CUDA,
                       ROCm) (lowering/device_loops.py); run by xla-to-linalg{target=...}
  xla-to-linalg        every xla op to linalg/tensor/scf/arith/math/complex; unsigned
                       element types become signless; fails if an xla op is left; element-wise
                       trees reading more tensors than a dispatch binds are cut
                       (lowering/bindings.py)
  xla-expand-linalg    linear-algebra custom calls (JAX's LAPACK calls, XLA's Qr, Eigh, ...) as
                       xla ops, where the target has no host LAPACK (lowering/linalg_expand.py)
  xla-to-iree-input    xla-simplify, xla-expand-linalg, xla-flatten-tuples, xla-to-linalg, in
                       order: what IREE is given

Every xlair pass takes the option `target` (`xla-to-linalg{target=cpu}`: cpu, vulkan, cuda or
rocm; left out, the lowering is for no target in particular), `counted` (on, the default,
or off: counted While loops kept in the general form) and `loops` (device, the default, or
host: no loop moved onto the device by xla-device-loops), `vectors` (512 or 256), `barriers`
(all, or outside-loops: the target's reduction barriers left out of loop bodies), `linalg`
(auto, device or host: which linear-algebra custom calls xla-expand-linalg expands) and
`products` (auto, f32 or bf16x3: how F32 matrix products are computed).  Its patterns read them through
`registry.options()`.  A textual pipeline mixes xlair passes and upstream MLIR passes
(`builtin.module(xla-simplify,xla-to-linalg{target=cpu},canonicalize,cse)`): `plan` parses it
into steps, `run_steps` runs them; xlair-opt is a CLI over the two.
"""
from __future__ import annotations

import re
from typing import Callable

from xlair.dialect.checks import XlaError
from xlair.dialect.core import all_ops, functions, location_str
from xlair.dialect.ir import context, ir, lock, passmanager, rewrite
from xlair.dialect.types import is_tensor, Shape

from . import libm, linalg_expand, patterns, registry  # noqa: F401  (patterns: registers every family's lowerings)
from .contraction import fold_transpose_of_dot, mark_own_products
from .control_flow import (chunk_host_loops, even_out_loops, mark_counted_loops, mark_select_conditionals,
                           uneven_loops_to_cfg, unwrap_read_loop_results)
from .bindings import split_wide_fusions
from .device_loops import device_loops
from .dynamic import dynamic_sizes as run_dynamic
from .host_scalars import fold_host_scalars
from .loops import elementwise_loops as run_loops
from .registry import (Options, TARGET_NAMES, builtin_type, cast, has_effects, inline_body, running_with,
                       tuple_leaves, tuple_rebuild)

PASSES: dict[str, Callable[[ir.Module], None]] = {}
#: the options every xlair pass takes, with their values
OPTIONS = {"target": TARGET_NAMES, "counted": ("on", "off"), "loops": ("device", "host"), "vectors": ("512", "256"),
           "barriers": ("all", "outside-loops"),
           "linalg": ("auto", "device", "host"), "products": ("auto", "f32", "bf16x3")}


def register_pass(name: str):
    def deco(fn):
        PASSES[name] = fn
        return fn
    return deco


# ----------------------------------------------------------------------------------------
# xla-simplify
# ----------------------------------------------------------------------------------------
def _fold_gte(op, rewriter):
    if not any(True for _ in op.results[0].uses):
        rewriter.erase_op(op)
        return False
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


def _erase_dead_code(op, rewriter):
    """An op nothing reads and that has no effect is dropped (MLIR cannot tell for xla ops, as
    they are not registered with it).  For a While this is XLA's while-loop simplifier: JAX's
    LU (lu_factor, det, slogdet) computes a permutation it never reads, and xlair runs a While
    on the host, one synchronisation per iteration."""
    if any(True for r in op.results for _ in r.uses) or has_effects(op):
        return True
    rewriter.erase_op(op)
    return False


def _dead_code_patterns(ps: rewrite.RewritePatternSet) -> None:
    for d in all_ops():
        if not (d.side_effecting or d.family == "collectives") and d.mlir_name not in ("xla.tuple",
                                                                                      "xla.get_tuple_element"):
            ps.add(d.mlir_name, _erase_dead_code)


def _simplify_patterns(ps: rewrite.RewritePatternSet):
    ps.add("xla.get_tuple_element", _fold_gte)
    ps.add("xla.tuple", _erase_dead)


def _greedy(module: ir.Module, ps: rewrite.RewritePatternSet):
    rewrite.apply_patterns_and_fold_greedily(module, ps.freeze())


def _symbol_refs(attr, name: str, out: list, op) -> None:
    if isinstance(attr, ir.FlatSymbolRefAttr):
        out.append((attr.value, op, name))
    elif isinstance(attr, ir.ArrayAttr):
        for a in attr:
            _symbol_refs(a, name, out, op)
    elif isinstance(attr, ir.DictAttr):
        for i in range(len(attr)):
            _symbol_refs(attr[i].attr, name, out, op)


def _private_body(f: ir.Operation) -> ir.Block | None:
    """The body of a private function of one block (every caller is in the module), or None."""
    if "sym_visibility" not in f.attributes or ir.StringAttr(f.attributes["sym_visibility"]).value != "private" \
            or len(f.regions[0].blocks) != 1:
        return None
    return f.regions[0].blocks[0]


def inline_single_calls(module: ir.Module) -> None:
    """A private function whose one reference is one xla.call is moved into its caller (XLA's
    CallInliner inlines every call).  The simplifications then see across the call: JAX wraps
    library functions (its Cholesky, its LU pivot loop) in private functions, and a transpose
    inside one of a product computed outside it only folds once both are in one body.  One walk
    finds them all: inlining moves a body's ops (and the references they hold), so no other
    function's reference count changes."""
    refs: list = []

    def visit(op):
        for i in range(len(op.attributes)):
            na = op.attributes[i]
            if na.name != "sym_name":
                _symbol_refs(na.attr, na.name, refs, op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    by_name: dict = {}
    for name, op, attr in refs:
        by_name.setdefault(name, []).append((op, attr))
    funcs = functions(module)
    for name, uses in by_name.items():
        f = funcs.get(name)
        if f is None or len(uses) != 1 or uses[0][1] != "computation" or uses[0][0].name != "xla.call":
            continue
        block = _private_body(f)
        if block is None:
            continue
        call = uses[0][0]
        ops = [o.operation for o in block.operations]
        ret = ops[-1]
        if ret.name != "func.return" or len(ret.operands) != len(call.results):
            continue
        inline_body(call, block)
        f.erase()


def unread_call_operands(module: ir.Module) -> bool:
    """After canonicalization: a call's operand that its private callee never reads becomes a
    `tensor.empty` of its type; whether any did.  JAX's scans call
    `dynamic_update_index_in_dim` to write a row of a stacked result; when the stack has one
    row the write replaces it all, canonicalization drops the callee's read of the old value,
    and a While that passes its state only there never reads that state.  Seen through the
    call, xlair keeps such a loop even for IREE (even_out_loops); unseen, IREE 3.13's own
    inlining and canonicalization made the loop uneven past xlair's pipeline and its stream
    conversion crashed (ScfWhileOpConversion, "iree-compile crashed in ConvertToStreamPass":
    the second-order gradient of a `lax.scan(..., unroll=2)` over three steps, loops on the
    host; docs/iree-limits.md)."""
    unread: dict[str, list[int]] = {}
    for name, f in functions(module).items():
        block = _private_body(f)
        if block is not None:
            unread[name] = [i for i, a in enumerate(block.arguments) if not any(True for _ in a.uses)]
    calls = []

    def visit(op):
        op = op.operation if hasattr(op, "operation") else op
        if op.name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            for i in unread.get(callee, ()):
                t = op.operands[i].type
                if is_tensor(t) and ir.RankedTensorType(t).has_static_shape:
                    calls.append((op, i))
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    changed = False
    for op, i in calls:
        v = op.operands[i]
        if getattr(v.owner, "name", None) == "tensor.empty":
            continue
        with ir.InsertionPoint(op), op.location:
            op.operands[i] = registry.empty(v.type)
        changed = True
    return changed


@register_pass("xla-simplify")
def simplify(module: ir.Module) -> None:
    inline_single_calls(module)
    ps = rewrite.RewritePatternSet()
    _simplify_patterns(ps)
    # not in xla-to-linalg's set: there they would race the lowerings (an op half lowered
    # hides its effects, a transpose would be lowered before its product is)
    ps.add("xla.transpose", fold_transpose_of_dot)
    _dead_code_patterns(ps)
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
    run_dynamic(module)


@register_pass("xla-elementwise-loops")
def elementwise_loops(module: ir.Module) -> None:
    """With target=cpu: element-wise While loops run per element in one linalg.generic."""
    run_loops(module)


@register_pass("xla-to-linalg")
def to_linalg(module: ir.Module) -> None:
    dynamic_sizes(module)
    elementwise_loops(module)
    mark_counted_loops(module)
    mark_select_conditionals(module)
    mark_own_products(module)
    _legalize_signatures(module)
    ps = rewrite.RewritePatternSet()
    _simplify_patterns(ps)
    for name, fn in registry.PATTERNS.items():
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
    fold_host_scalars(module)
    registry.distinct_c128_fills(module)
    passmanager.PassManager.parse("builtin.module(func.func(convert-complex-to-standard))").run(module.operation)
    rewrite.apply_patterns_and_fold_greedily(module, libm.f64_patterns())
    if registry.options().desc.reduce_trig:
        libm.reduce_trig_arguments(module)
    pm = passmanager.PassManager.parse("builtin.module(reconcile-unrealized-casts,canonicalize,cse)")
    pm.run(module.operation)
    if unread_call_operands(module):
        pm.run(module.operation)
    unwrap_read_loop_results(module)
    copies = even_out_loops(module)
    if registry.options().desc.device_loops and registry.options().loops == "device":
        device_loops(module)
    chunk_host_loops(module)
    uneven_loops_to_cfg(module, copies)
    split_wide_fusions(module)


@register_pass("xla-device-loops")
def device_loops_pass(module: ir.Module) -> None:
    """(on linalg; run by xla-to-linalg{target=cpu}) loops with small tensors as one dispatch
    region each: lowering/device_loops.py."""
    device_loops(module)


@register_pass("xla-expand-linalg")
def expand_linalg(module: ir.Module) -> None:
    """Linear-algebra custom calls as xla ops: lowering/linalg_expand.py."""
    linalg_expand.expand(module)


@register_pass("xla-to-iree-input")
def to_iree_input(module: ir.Module) -> None:
    simplify(module)
    expand_linalg(module)
    flatten_tuples(module)
    to_linalg(module)


# ----------------------------------------------------------------------------------------
# pipelines: xlair passes with options, and runs of upstream MLIR passes
# ----------------------------------------------------------------------------------------
def pass_item(item: str) -> tuple[str, Options]:
    """`name` or `name{key=value ...}` (MLIR's option syntax) -> the xlair pass and its options."""
    m = re.fullmatch(r"\s*([\w.-]+)\s*(?:\{(.*)\})?\s*", item, re.S)
    if not m or m.group(1) not in PASSES:
        raise XlaError(f"unknown pass {item.split('{', 1)[0].strip()!r}; known: {', '.join(sorted(PASSES))}")
    name, body = m.group(1), (m.group(2) or "").strip()
    opts = {}
    for kv in body.split():
        key, eq, value = kv.partition("=")
        if key not in OPTIONS:
            known = ", ".join(f"{k}=<{'|'.join(v)}>" for k, v in OPTIONS.items())
            raise XlaError(f"pass {name!r} option {key!r} is not one it takes (its options: {known}); "
                           f"got {item!r}")
        if not eq or value not in OPTIONS[key]:
            raise XlaError(f"pass {name!r} option {key} must be one of {', '.join(OPTIONS[key])}; got {value!r}")
        opts[key] = value
    return name, Options(**opts)


def split_pipeline(text: str) -> list[str]:
    """Top-level pass items of a textual pipeline (an outer builtin.module(...) removed):
    'builtin.module(xla-to-linalg{target=cpu},func.func(cse))' -> ['xla-to-linalg{target=cpu}',
    'func.func(cse)']."""
    text = text.strip()
    m = re.fullmatch(r"builtin\.module\s*\((.*)\)", text, re.S)
    if m:
        text = m.group(1)
    items, depth, cur = [], 0, ""
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise XlaError(f"unbalanced parentheses in pass pipeline {text!r}")
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if depth != 0:
        raise XlaError(f"unbalanced parentheses in pass pipeline {text!r}")
    if cur.strip():
        items.append(cur.strip())
    if any(not it for it in items):
        raise XlaError(f"empty pass name in pass pipeline {text!r}")
    return items


def plan(items: list[str]) -> list[tuple]:
    """Pass items as steps: ('xlair', name, Options) or ('mlir', 'builtin.module(a,b)'), each
    upstream run checked by MLIR's pipeline parser now, before any input is read."""
    steps: list[tuple] = []
    run: list[str] = []

    def flush():
        if run:
            text = f"builtin.module({','.join(run)})"
            with lock, context():
                try:
                    passmanager.PassManager.parse(text)
                except (ValueError, RuntimeError) as e:
                    msg = " ".join(str(e).split())
                    m = re.search(r"'([^']+)' does not refer to a registered pass", msg)
                    if m:
                        raise XlaError(f"unknown pass {m.group(1)!r}: neither an xlair pass "
                                       f"({', '.join(sorted(PASSES))}) nor an MLIR pass registered "
                                       f"in IREE (see --list-passes)") from None
                    raise XlaError(f"bad pass pipeline {text!r}: {msg}") from None
            steps.append(("mlir", text))
            run.clear()

    for item in items:
        if item.split("{", 1)[0].strip() in PASSES:
            flush()
            steps.append(("xlair", *pass_item(item)))
        elif set(re.findall(r"[\w.-]+", item)) & set(PASSES):
            raise XlaError(f"xlair passes run on the whole module; they cannot be nested in {item!r}")
        else:
            run.append(item)
    flush()
    return steps


def run_steps(module: ir.Module, steps: list[tuple]) -> ir.Module:
    """Run planned steps in order on a module (in place) and return it."""
    for step in steps:
        if step[0] == "xlair":
            with lock, context(), ir.Location.unknown(), running_with(step[2]):
                PASSES[step[1]](module)
        else:
            with lock, context():
                passmanager.PassManager.parse(step[1]).run(module.operation)
    return module


def run(module: ir.Module, *items: str) -> ir.Module:
    """Run xlair passes, each `name` or `name{target=...}`, in order on a module (in place)
    and return it."""
    return run_steps(module, [("xlair", *pass_item(i)) for i in items])
