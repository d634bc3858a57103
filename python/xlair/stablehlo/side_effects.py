"""Converters of tokens and side effects: after_all, create_token, infeed, outfeed, send, recv,
custom_call (and what xlair's CustomCall does not take).
"""
from __future__ import annotations

from xlair.dialect.checks import XlaError
from xlair.dialect.ir import ir
from xlair.dialect.types import Shape

from ..builder import Op
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


@xla_lacks("stablehlo.custom_call")
def _custom_call_lacks(op):
    api = ir.IntegerAttr(op.attributes["api_version"]).value if "api_version" in op.attributes else 1
    if api not in (0, 1):
        return (f"has api_version {api} ({_CUSTOM_CALL_APIS.get(api, 'unknown')}); xlair's CustomCall calls "
                "its targets with the original convention void f(void* out, void** in) (api_version 1), "
                "which passes no status, backend_config or typed FFI buffers")
    for name in ("called_computations", "output_operand_aliases"):
        if name in op.attributes and len(ir.ArrayAttr(op.attributes[name])):
            return f"has {name}; XLA's CustomCall(target_name, args, shape) takes none"
    for name, values in (("operand_layouts", op.operands), ("result_layouts", op.results)):
        if name not in op.attributes:
            continue
        for i, (lay, v) in enumerate(zip(ir.ArrayAttr(op.attributes[name]), values)):
            got = _ints(lay)
            if got != tuple(range(len(got) - 1, -1, -1)):
                return (f"has {name}[{i}] = {list(got)}; xlair passes custom-call buffers in the default "
                        "row-major layout only (minor-to-major [rank-1, ..., 0])")
    return None


@converter("stablehlo.custom_call")
def _c_custom_call(s, op):
    # backend_config is not passed to an api_version 1 target (as in XLA); has_side_effect:
    # xlair keeps every custom call and runs them in program order either way
    shapes = [_result_shape(op, i) for i in range(len(op.results))]
    r = s.emit("custom_call", target_name=_str(op, "call_target_name"), args=[s.get(v) for v in op.operands],
               shape=_pack_shapes(shapes))
    return s.unpack(r, len(shapes))
