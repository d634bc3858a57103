"""Converters of tokens and side effects: after_all, create_token, infeed, outfeed, send, recv,
custom_call (and what xlair's CustomCall does not take).
"""
from __future__ import annotations

import json

from xlair.dialect.checks import XlaError
from xlair.dialect.ir import ir
from xlair.dialect.types import Shape

from ..builder import Op
from ..lapack import routine_of
from .attrs import Unsupported, _channel_handle, _ints, _result_shape, _str
from .scope import converter, xla_lacks


# -- tokens and side effects ------------------------------------------------------------------
def _pack_shapes(shapes: list) -> Shape:
    """One shape as itself; none or several as a (flat) tuple, as `_Scope.pack` packs values."""
    return shapes[0] if len(shapes) == 1 else Shape.tuple(shapes)


@converter("stablehlo.after_all")
def _c_after_all(s, op):
    return [s.emit("after_all", operands=[s.get(v) for v in op.operands])]


@converter("stablehlo.create_token")
def _c_create_token(s, op):
    # create_token is StableHLO's older spelling of after_all with no operands
    return [s.emit("after_all", operands=[])]


def _data_and_token(s, r: Op, data: list) -> list:
    """The results of an xla op with a token operand, (data, token), as StableHLO's
    (data..., token): data of one value is itself, of several a tuple."""
    d = s.emit("get_tuple_element", tuple_data=r, index=0)
    return s.unpack(d, len(data)) + [s.emit("get_tuple_element", tuple_data=r, index=1)]


@converter("stablehlo.infeed")
def _c_infeed(s, op):
    # infeed_config and layout only describe the transfer; xlair's infeed items are numpy values
    data = [_result_shape(op, i) for i in range(len(op.results) - 1)]
    r = s.emit("infeed", shape=_pack_shapes(data), token=[s.get(op.operands[0])])
    return _data_and_token(s, r, data)


@converter("stablehlo.outfeed")
def _c_outfeed(s, op):
    vals = [s.get(v) for v in op.operands[:-1]]
    return [s.emit("outfeed", operand=s.pack(vals), shape_with_layout=None,
                   outfeed_config=_str(op, "outfeed_config"), token=[s.get(op.operands[-1])])]


def _send_recv_channel(op, values: int, what: str) -> int:
    if values != 1:
        raise Unsupported(f"{what} {values} values; XLA's {'Send' if 'send' in op.name else 'Recv'} "
                          "carries one array")
    handle = _channel_handle(op)
    if handle is None:
        raise XlaError("channel_handle is required")
    return handle


@converter("stablehlo.send")
def _c_send(s, op):
    # is_host_transfer: xlair's channels always pass through the host (a FIFO per handle shared
    # by the computations running at the same time), whichever side is the host
    handle = _send_recv_channel(op, len(op.operands) - 1, "sends")
    return [s.emit("send", operand=s.get(op.operands[0]), channel_handle=handle,
                   token=[s.get(op.operands[-1])])]


@converter("stablehlo.recv")
def _c_recv(s, op):
    handle = _send_recv_channel(op, len(op.results) - 1, "receives")
    r = s.emit("recv", shape=_result_shape(op, 0), channel_handle=handle, token=[s.get(op.operands[0])])
    return _data_and_token(s, r, [None])


#: CustomCall API versions (XLA's CustomCallApiVersion): xlair calls its C targets with the
#: original convention void f(void* out, void** in), which does not pass backend_config.
_CUSTOM_CALL_APIS = {0: "API_VERSION_UNSPECIFIED", 1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                     3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}


def _lapack_layout(rank: int, batch: int) -> tuple:
    """The minor-to-major layout jaxlib's LAPACK kernels read a leaf in: a matrix (two dims past
    the batch dims) column-major with the batch dims major; anything else row-major."""
    if rank - batch == 2:
        return (rank - 2, rank - 1) + tuple(range(rank - 3, -1, -1))
    return tuple(range(rank - 1, -1, -1))


def _num_batch_dims(op) -> int | None:
    """The batch dimensions of a LAPACK call: JAX's num_batch_dims frontend attribute, or, where
    JAX gives none (its shape-polymorphic lowering: shape_poly_test's eigh harnesses), every
    dimension of the first operand but its matrix when that operand's layout says so."""
    fa = ir.DictAttr(op.attributes["mhlo.frontend_attributes"]) if "mhlo.frontend_attributes" in op.attributes \
        else None
    if fa is not None and "num_batch_dims" in fa:
        return int(ir.StringAttr(fa["num_batch_dims"]).value)
    if not _str(op, "call_target_name").startswith("lapack_") or "operand_layouts" not in op.attributes \
            or not op.operands:
        return None
    rank = ir.RankedTensorType(op.operands[0].type).rank
    lay = ir.ArrayAttr(op.attributes["operand_layouts"])
    return rank - 2 if rank >= 2 and len(lay) and _ints(lay[0]) == _lapack_layout(rank, rank - 2) else None


@xla_lacks("stablehlo.custom_call")
def _custom_call_lacks(op):
    target = _str(op, "call_target_name")
    builtin = routine_of(target) is not None
    api = ir.IntegerAttr(op.attributes["api_version"]).value if "api_version" in op.attributes else 1
    if api not in (0, 1) and not (builtin and target.startswith("lapack_")):
        return (f"has api_version {api} ({_CUSTOM_CALL_APIS.get(api, 'unknown')}); xlair's CustomCall calls "
                "its targets with the original convention void f(void* out, void** in) (api_version 1), "
                "which passes no status, backend_config or typed FFI buffers")
    if target == APPROX_TOP_K:
        return _approx_top_k_lacks(op)
    if "called_computations" in op.attributes and len(ir.ArrayAttr(op.attributes["called_computations"])):
        return "has called_computations; XLA's CustomCall(target_name, args, shape) takes none"
    if not builtin and "output_operand_aliases" in op.attributes and \
            len(ir.ArrayAttr(op.attributes["output_operand_aliases"])):
        # xlair's built-in targets compute new values, so an alias (a buffer reuse) changes nothing
        return "has output_operand_aliases; XLA's CustomCall(target_name, args, shape) takes none"
    batch = _num_batch_dims(op) if target.startswith("lapack_") else None
    for name, values in (("operand_layouts", op.operands), ("result_layouts", op.results)):
        if name not in op.attributes:
            continue
        for i, (lay, v) in enumerate(zip(ir.ArrayAttr(op.attributes[name]), values)):
            got = _ints(lay)
            rank = len(got)
            if batch is not None and builtin:
                want, what = _lapack_layout(rank, batch), (f"{target} reads in jaxlib's layout (matrices "
                                                           "column-major, batch dimensions major)")
            else:
                want, what = tuple(range(rank - 1, -1, -1)), ("xlair passes custom-call buffers in the default "
                                                              "row-major layout only")
            if got != want:
                return f"has {name}[{i}] = {list(got)}; {what}: minor-to-major {list(want)}"
    return None


def _attr_value(a: ir.Attribute):
    for kind in (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr, ir.StringAttr):
        try:
            return kind(a).value
        except (TypeError, ValueError):
            continue
    raise Unsupported(f"custom_call backend attribute {a} is not a bool, integer, float or string")


def _config(op) -> dict:
    """The attributes of a typed-FFI call's mhlo.backend_config / backend_config dictionary."""
    cfg = {}
    for name in ("mhlo.backend_config", "backend_config"):
        if name in op.attributes and isinstance(op.attributes[name], ir.DictAttr):
            d = ir.DictAttr(op.attributes[name])
            cfg.update({d[i].name: _attr_value(d[i].attr) for i in range(len(d))})
    return cfg


def _opaque(op) -> str:
    """XLA's backend_config string, or (typed FFI) the attributes of mhlo.backend_config and the
    number of batch dimensions as a JSON object: the xla.custom_call's `opaque`."""
    text = _str(op, "backend_config") if "backend_config" in op.attributes and \
        isinstance(op.attributes["backend_config"], ir.StringAttr) else ""
    cfg = _config(op)
    batch = _num_batch_dims(op)
    if batch is not None:
        cfg["num_batch_dims"] = batch
    if text and cfg:
        cfg["text"] = text
    return json.dumps(cfg, sort_keys=True) if cfg else text


#: XLA's ApproxTopK, as JAX's approx_max_k / approx_min_k lower it (a custom call with the
#: comparator as its called computation) for backends without a TPU-style partial reduction
APPROX_TOP_K = "ApproxTopK"




def _approx_top_k_lacks(op):
    n, cfg = len(op.operands) // 2, _config(op)
    comps = ir.ArrayAttr(op.attributes["called_computations"]) if "called_computations" in op.attributes else []
    if len(op.operands) % 2 or n < 1 or len(op.results) != n:
        return f"({APPROX_TOP_K}) takes operands and as many init values, and returns one result per operand; " \
               f"got {len(op.operands)} operands and {len(op.results)} results"
    if len(comps) != 1:
        return f"({APPROX_TOP_K}) needs one comparator in called_computations; got {len(comps)}"
    for key in ("top_k", "reduction_dim"):
        if type(cfg.get(key)) is not int:
            return f"({APPROX_TOP_K}) needs the integer {key} in mhlo.backend_config; got {cfg.get(key)!r}"
    rank = ir.RankedTensorType(op.operands[0].type).rank
    dim = cfg["reduction_dim"]
    if not 0 <= dim < rank:
        return f"({APPROX_TOP_K}) reduction_dim must be in [0, {rank}); got {dim}"
    size = ir.RankedTensorType(op.operands[0].type).shape[dim]
    out = ir.RankedTensorType(op.results[0].type).shape[dim]
    if not cfg["top_k"] <= out <= size:
        return f"({APPROX_TOP_K}) the results' reduction dimension must be in [top_k, {size}] = " \
               f"[{cfg['top_k']}, {size}]; got {out}"
    return None


def _approx_top_k(s, op) -> list:
    """ApproxTopK as its exact answer, which every recall_target admits: the operands sorted
    (stably) by the comparator along reduction_dim, each sliced to the results' size there
    (top_k when aggregate_to_topk; the init values pad a partial reduction XLA does not
    make here).  XLA's CPU and GPU fallback (is_fallback) compute the same sort and slice."""
    n, cfg = len(op.operands) // 2, _config(op)
    comp = s.importer.function(ir.FlatSymbolRefAttr(ir.ArrayAttr(op.attributes["called_computations"])[0]).value)
    dim = cfg["reduction_dim"]
    r = s.unpack(s.emit("sort", operands=[s.get(v) for v in op.operands[:n]], comparator=comp, dimension=dim,
                        is_stable=True), n)
    out = []
    for x, res in zip(r, op.results):
        limit = list(ir.RankedTensorType(res.type).shape)
        out.append(s.emit("slice", operand=x, start_indices=[0] * len(limit), limit_indices=limit,
                          strides=[1] * len(limit)))
    return out


#: JAX's annotation of the memory a value lives in (jax.memory / compute_on: "device",
#: "pinned_host"): xlair's one device has one memory, so the value as it is
ANNOTATIONS = ("annotate_device_placement",)
#: JAX's lax.dce_sink(x, prevent_mlir_dce=True): a use of x that keeps XLA from removing what
#: computes it, and computes nothing (no results); xlair removes nothing a program returns
SINKS = ("dce_sink",)


@converter("stablehlo.custom_call")
def _c_custom_call(s, op):
    target = _str(op, "call_target_name")
    if target == APPROX_TOP_K:
        return _approx_top_k(s, op)
    if target in ANNOTATIONS and len(op.operands) == len(op.results) and \
            all(a.type == r.type for a, r in zip(op.operands, op.results)):
        return [s.get(v) for v in op.operands]
    if target in SINKS and not op.results:
        for v in op.operands:
            s.get(v)
        return []
    # has_side_effect: xlair keeps every custom call and runs them in program order either way;
    # backend_config (or a typed-FFI call's attributes) becomes the op's opaque string, which
    # the built-in targets (xlair.lapack) and Python targets that take `opaque` read
    shapes = [_result_shape(op, i) for i in range(len(op.results))]
    r = s.emit("custom_call", target_name=_str(op, "call_target_name"), args=[s.get(v) for v in op.operands],
               shape=_pack_shapes(shapes), opaque=_opaque(op))
    return s.unpack(r, len(shapes))
