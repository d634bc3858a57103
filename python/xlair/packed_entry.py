"""The compile side of packed parameters (packing.py says what a pack is): which programs are
worth packing, the computation that takes a run of leaves packed, and the second entry point
of the lowered module."""
from __future__ import annotations

from xlair.dialect.checks import XlaError
from xlair.dialect.core import functions
from xlair.dialect.ir import context, ir, lock
from xlair.dialect.types import Shape
from xlair.lowering.cost import heaviest_work

from . import ops
from .builder import Builder
from .packing import PACKED_FN, groups


#: nor the leaves of a program whose heaviest op does more multiply-adds (lowering/cost.py):
#: its run dwarfs the ~0.5 us a leaf, and a second compile (xlair.jit compiles again when it
#: first meets a pack) costs more than it saves
MAX_WORK = 1 << 22


def worth(comp) -> bool:
    """Whether a program is light enough for its leaves to be worth packing (MAX_WORK)."""
    with lock, context():
        return heaviest_work(comp.module) <= MAX_WORK


def out_run(comp, first: int, count: int) -> int | None:
    """Where the program returns leaves of the packed run's shapes, in order: the first index
    c of its result tuple whose elements [c, c + count) are arrays of the shapes of its
    parameters [first, first + count) (a training step's new state), or None."""
    sig = comp.program_shape
    res = sig.result
    if not res.is_tuple or any(r.is_tuple or r.is_token for r in res.tuple_shapes):
        return None
    run, outs = tuple(sig.params[first:first + count]), tuple(res.tuple_shapes)
    for c in range(len(outs) - count + 1):
        if outs[c:c + count] == run:
            return c
    return None


def packed_computation(comp, first: int, count: int, out_first: int | None = None):
    """The computation whose parameters are comp's leaves [0, first), then the packed groups of
    the leaves [first, first + count), then the rest; it slices each leaf out of its group and
    calls comp.  comp's parameters must be arrays (no tuples: jax programs' are).  With
    `out_first` (out_run), its results [out_first, out_first + count) are returned packed the
    same way, one group each in their place."""
    params = list(comp.program_shape.params)
    if any(p.is_tuple or p.is_token for p in params):
        raise XlaError(f"pack: the parameters of {comp.name} must be arrays to be packed")
    if not (0 <= first and count >= 1 and first + count <= len(params)):
        raise XlaError(f"pack: the run [{first}, {first + count}) is not within the {len(params)} "
                       f"parameters of {comp.name}")
    run = tuple(params[first:first + count])
    b = Builder(comp.name)
    number = 0

    def parameter(shape):
        nonlocal number
        number += 1
        return b.parameter(number - 1, shape, f"p{number - 1}")

    args = [parameter(s) for s in params[:first]]
    leaves = [None] * count
    for et, total, members in groups(run):
        g = parameter(Shape(et, (total,)))
        for i, offset, n in members:
            piece = g if n == total else ops.slice(g, [offset], [offset + n], [1])
            leaves[i] = ops.reshape(piece, new_sizes=list(run[i].dims))
    args += leaves
    args += [parameter(s) for s in params[first + count:]]
    out = ops.call(comp, args)
    if out_first is None:
        return b.build(out)
    res = [ops.get_tuple_element(out, k) for k in range(len(comp.program_shape.result.tuple_shapes))]
    packed = []
    for et, total, members in groups(run):
        pieces = [ops.reshape(res[out_first + i], new_sizes=[n]) for i, _, n in members]
        packed.append(pieces[0] if len(pieces) == 1 else ops.concatenate(pieces, 0))
    return b.build(ops.tuple(b, [*res[:out_first], *packed, *res[out_first + count:]]))


def _leaf_types(run: tuple, layout: tuple, group_types: list) -> list:
    """The lowered tensor types of the run's leaves, from their groups' types."""
    types = [None] * len(run)
    for (et, total, members), gt in zip(layout, group_types):
        elt = gt[gt.rindex("x") + 1:-1]              # tensor<Nxelt>
        for i, _, _ in members:
            types[i] = f"tensor<{''.join(f'{d}x' for d in run[i].dims)}{elt}>"
    return types


def add_leaf_entry(module: ir.Module, run: tuple, first: int, out_first: int | None = None) -> None:
    """Rename the lowered module's `main` (packed parameters, see packed_computation) to
    PACKED_FN, and add a `main` of one parameter a leaf that packs them, calls it and (with
    `out_first`) slices the leaves out of its packed results.  `run`: the Shapes of the packed
    leaves."""
    with lock, context():
        packed = functions(module)["main"]
        ft = ir.FunctionType(ir.TypeAttr(packed.attributes["function_type"]).value)
        layout = groups(run)
        ins, results = [str(t) for t in ft.inputs], [str(t) for t in ft.results]
        n_groups = len(layout)
        group_types = ins[first:first + n_groups]
        leaf_types = _leaf_types(run, layout, group_types)
        params = ins[:first] + leaf_types + ins[first + n_groups:]
        out_types = results if out_first is None else \
            results[:out_first] + _leaf_types(run, layout, results[out_first:out_first + n_groups]) + \
            results[out_first + n_groups:]
        lines = [f"func.func @main({', '.join(f'%a{k}: {t}' for k, t in enumerate(params))}) -> "
                 f"({', '.join(out_types)}) {{"]
        call_args = [f"%a{k}" for k in range(first)]
        for g, ((et, total, members), gt) in enumerate(zip(layout, group_types)):
            acc = f"%e{g}"
            # (built as a 1xN tensor: CSE would merge an empty N tensor with the body's empty
            # tensors of that type, whose dispatches would then read it)
            wide = f"tensor<1x{gt[len('tensor<'):]}"
            lines.append(f"  {acc} = tensor.empty() : {wide}")
            for i, offset, n in members:
                src, t = f"%a{first + i}", leaf_types[i]
                flat = f"tensor<{n}x{gt[gt.rindex('x') + 1:]}"
                rank = len(run[i].dims)
                if rank == 0:
                    lines.append(f"  %f{i} = tensor.expand_shape {src} [] output_shape [1] : {t} into {flat}")
                    src = f"%f{i}"
                elif rank > 1:
                    lines.append(f"  %f{i} = tensor.collapse_shape {src} [[{', '.join(map(str, range(rank)))}]] "
                                 f": {t} into {flat}")
                    src = f"%f{i}"
                lines.append(f"  %s{i} = tensor.insert_slice {src} into {acc}[0, {offset}] [1, {n}] [1, 1] : "
                             f"{flat} into {wide}")
                acc = f"%s{i}"
            # (behind a barrier IREE forms the body's dispatches as in main_packed, where the
            # groups are arguments, and compiles each once: identical executables are merged)
            lines.append(f"  %c{g} = tensor.collapse_shape {acc} [[0, 1]] : {wide} into {gt}")
            lines.append(f"  %b{g} = util.optimization_barrier %c{g} : {gt}")
            call_args.append(f"%b{g}")
        call_args += [f"%a{k}" for k in range(first + len(run), len(params))]
        n_res = len(results)
        res = "%r" + (f":{n_res}" if n_res > 1 else "") if n_res else ""
        outs = [f"%r#{k}" for k in range(n_res)] if n_res > 1 else ["%r"]
        lines.append(f"  {res}{' = ' if res else ''}func.call @{PACKED_FN}({', '.join(call_args)}) : "
                     f"({', '.join(ins)}) -> ({', '.join(results)})")
        if out_first is not None:          # the leaves sliced out of the packed results
            leaves = [None] * len(run)
            for g, (et, total, members) in enumerate(layout):
                gt = results[out_first + g]
                for i, offset, n in members:
                    flat, t = f"tensor<{n}x{gt[gt.rindex('x') + 1:]}", out_types[out_first + i]
                    lines.append(f"  %o{i} = tensor.extract_slice {outs[out_first + g]}[{offset}] [{n}] [1] : "
                                 f"{gt} to {flat}")
                    rank = len(run[i].dims)
                    if rank == 0:
                        lines.append(f"  %u{i} = tensor.collapse_shape %o{i} [] : {flat} into {t}")
                    elif rank > 1:
                        dims = ", ".join(map(str, run[i].dims))
                        lines.append(f"  %u{i} = tensor.expand_shape %o{i} [[{', '.join(map(str, range(rank)))}]] "
                                     f"output_shape [{dims}] : {flat} into {t}")
                    leaves[i] = f"%u{i}" if rank != 1 else f"%o{i}"
            outs = outs[:out_first] + leaves + outs[out_first + n_groups:]
        lines += [f"  return {', '.join(outs)} : {', '.join(out_types)}" if n_res else "  return", "}"]
        # (the callee declared for the parser; only the new `main` moves into the module).
        # IREE inlines it; its dispatches, formed alike in both entry points (the barriers
        # above), are merged.  A body that both call without inlining (a private `noinline`
        # function) is refused by IREE 3.13 when one caller passes its arguments and the other
        # buffers it made (docs/iree-limits.md)
        lines.append(f"func.func private @{PACKED_FN}({', '.join(ins)}) -> ({', '.join(results)})")
        wrapper = ir.Module.parse("\n".join(lines))
        packed.attributes["sym_name"] = ir.StringAttr.get(PACKED_FN)
        wrapper.body.operations[0].operation.move_before(packed)
