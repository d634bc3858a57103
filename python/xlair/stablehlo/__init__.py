"""The StableHLO bridge: a StableHLO module (text) becomes an xla `Computation`.

    comp = xlair.from_stablehlo(text)             # @main, or the only public function
    comp = xlair.from_stablehlo(text, entry="f")

The text is parsed by the MLIR bindings (the stablehlo and chlo dialects are registered in
IREE's context).  chlo ops are first decomposed into stablehlo ops by StableHLO's own
`chlo-legalize-to-stablehlo` pass, as XLA does.  Every function reached from the entry is
then walked op by op and rebuilt through the `Builder`, so each xla op runs its shape rule as
it is made; the result type each xla op gets is checked against the StableHLO result type.

How StableHLO's structure maps onto XLA's:
- an op with several results becomes an xla op with a tuple result and `get_tuple_element`s;
- a function with several results returns a tuple; `func.call` becomes `xla.call`;
- regions of reduce/sort/scatter/map/... become computations of scalar parameters;
- `stablehlo.while` carries its N values (and any value its regions use from the enclosing
  scope) as one tuple; `stablehlo.if`/`case` branches receive the values they use from the
  enclosing scope as their operand (a tuple, possibly empty); constants are re-made inside;
- `compare` with compare_type TOTALORDER becomes the `*_total_order` ops;
- `convert` from complex to a real type is `real` then `convert_element_type` (the imaginary
  part is dropped, as StableHLO says); complex constants are `complex(real, imag)`;
- the `dynamic_*` ops whose result type is static and whose shape operands are constants
  become their static counterparts;
- `!stablehlo.token` is the xla token; after_all/create_token are `after_all`; infeed, outfeed,
  send and recv take their token operand (XLA's *WithToken forms) and return (data..., token);
- custom_call (api_version 1, default layouts) is `custom_call` of its call_target_name, the
  results a tuple when several (a target registered with `xlair.register_custom_call`);
- variadic collectives are one xla collective per operand; a program runs as one partition
  of each replica (a positive channel_handle of all_reduce/all_gather/reduce_scatter groups
  replicas with their one partition; partition_id is 0); reduce_scatter is all_reduce then
  the replica's block (dynamic_slice), collective_broadcast an all_reduce keeping the group's
  first value: XLA's operation set has neither.

Constructs xlair has no counterpart for raise `Unsupported` (an `XlaError`) naming the op
or the type: element types outside XLA's set (i2, i4, f8 ...), dynamic shapes, quantized
types, ops with no xla counterpart, custom calls of other API versions or layouts,
cross-partition collectives, Send/Recv of several values.  Other bad input raises `XlaError`.

The package: `attrs` reads StableHLO types and printed attributes; `scope` holds the importer
(`_Importer`, `_Scope`) and the converter registry; one module per family of dialect/ops/
(elementwise, shape, dynamic, contraction, reduction, indexing, control_flow, linalg_ops, random,
side_effects, collectives) registers the converters of its ops; this module holds the entry points.
"""
from __future__ import annotations

import re
from typing import Callable

from xlair.dialect.checks import XlaError
from xlair.dialect.ir import context, ir, lock, passmanager

from ..computation import Computation
# the converter modules register their converters in scope.CONVERTERS when imported
from . import (collectives, contraction, control_flow, dynamic, elementwise, indexing,  # noqa: F401
               linalg_ops, random, reduction, shape, side_effects)
from .attrs import Unsupported, constant_value, shape_of  # noqa: F401
from .elementwise import BINARY, UNARY  # noqa: F401
from .scope import (CONVERTERS, NO_COUNTERPART, XLA_LACKS, Converter, _Importer, converter,  # noqa: F401
                    free_values)

__all__ = ["from_stablehlo", "import_module", "Unsupported", "SUPPORTED", "UNSUPPORTED"]


# ----------------------------------------------------------------------------------------
# entry points
# ----------------------------------------------------------------------------------------
def from_stablehlo(text: str, entry: str | None = None) -> Computation:
    """The xla Computation of a StableHLO module given as text.  `entry` names the function
    to take: by default `main`, else the module's only public function."""
    if not isinstance(text, str):
        raise XlaError(f"from_stablehlo takes the module's text (a str); got {type(text).__name__}")
    if "sdy." in text:
        text = _without_shardy(text)
    with lock, context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise XlaError(f"cannot parse the StableHLO module: {_diag(e)}") from None
        return import_module(module, entry)


_SDY_CONSTRAINT = re.compile(r"^(\s*%[\w.#:-]+ = )sdy\.sharding_constraint (%[\w.#-]+) <.*> : (tensor<.*>)$")
_SDY_ATTR = re.compile(r"sdy\.sharding(?:_per_value)? = #sdy\.sharding(?:_per_value)?<[^>]*>")


def _without_shardy(text: str) -> str:
    """The module without Shardy's sharding annotations (the `sdy` dialect, which xlair's
    context does not register), which JAX writes for typed PRNG keys and sharded arguments: a
    program runs as one partition of each replica, where a mesh declaration says nothing, a
    sharding constraint is the identity (a same-shape reshape) and a sharding attribute of
    an argument or result is dropped."""
    lines = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("sdy.mesh "):
            continue
        m = _SDY_CONSTRAINT.match(line)
        if m:
            line = f"{m.group(1)}stablehlo.reshape {m.group(2)} : ({m.group(3)}) -> {m.group(3)}"
        elif "sdy.sharding" in line:
            line = _SDY_ATTR.sub("", line).replace("{, ", "{").replace(", }", "}").replace(", , ", ", ")
        lines.append(line)
    return "\n".join(lines)


def import_module(module: ir.Module, entry: str | None = None) -> Computation:
    """Like `from_stablehlo`, for a module parsed in xlair's context (it is modified: chlo
    ops are decomposed in place)."""
    with lock, context():
        _legalize_chlo(module)
        funcs = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func":
                funcs[ir.StringAttr(op.attributes["sym_name"]).value] = op
        return _Importer(funcs, _module_int(module, "mhlo.num_partitions", 1),
                         _module_int(module, "mhlo.num_replicas", None)).function(_entry_name(funcs, entry))


def _module_int(module: ir.Module, name: str, default: int | None) -> int | None:
    """An integer attribute of the module (JAX writes mhlo.num_replicas, mhlo.num_partitions)."""
    attrs = module.operation.attributes
    return ir.IntegerAttr(attrs[name]).value if name in attrs else default


def _entry_name(funcs: dict, entry: str | None) -> str:
    if entry is not None:
        if entry not in funcs:
            raise XlaError(f"the StableHLO module has no function @{entry}; it has "
                           f"{', '.join('@' + n for n in funcs) or 'none'}")
        return entry
    if "main" in funcs:
        return "main"
    public = [n for n, f in funcs.items() if "sym_visibility" not in f.attributes
              or ir.StringAttr(f.attributes["sym_visibility"]).value == "public"]
    if len(public) != 1:
        raise XlaError("the StableHLO module has no @main and "
                       f"{'no' if not public else len(public)} public functions "
                       f"({', '.join('@' + n for n in public)}); name the entry with entry=")
    return public[0]


def _diag(e) -> str:
    return "; ".join(str(d) for d in getattr(e, "error_diagnostics", [])) or str(e)


def _legalize_chlo(module: ir.Module) -> None:
    """Decompose chlo ops into stablehlo ops with StableHLO's own pass."""
    if not _any_op(module.operation, lambda n: n.startswith("chlo.")):
        return
    try:
        passmanager.PassManager.parse("builtin.module(func.func(chlo-legalize-to-stablehlo))").run(
            module.operation)
    except ir.MLIRError as e:
        raise XlaError(f"cannot decompose the chlo ops: {_diag(e)}") from None
    left = []
    _any_op(module.operation, lambda n: n.startswith("chlo.") and left.append(n) and False)
    if left:
        raise Unsupported(f"'{left[0]}' has no decomposition into stablehlo ops (chlo-legalize-to-stablehlo "
                          "leaves it), and xla has no counterpart", op=left[0])


def _any_op(top: ir.Operation, pred: Callable[[str], bool]) -> bool:
    found = []

    def visit(op):
        if pred((op.operation if hasattr(op, "operation") else op).name):
            found.append(True)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    top.walk(visit)
    return bool(found)


#: the StableHLO (and func) ops the importer maps, for the docs and the tests.
SUPPORTED = tuple(sorted(CONVERTERS))
UNSUPPORTED = tuple(sorted("stablehlo." + n for n in NO_COUNTERPART))
