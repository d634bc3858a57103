"""Side effects: AfterAll (tokens), CustomCall, Infeed, Outfeed, Send, Recv.

Tokens.  `!xla.token` orders side-effecting ops: Infeed, Outfeed, Send and Recv take an
optional `token` operand (XLA's *WithToken forms) and then also produce one; AfterAll joins
tokens.  Independently of tokens, side-effecting ops of one computation run in the order they
were built (their lowerings are calls of host functions, which neither MLIR nor IREE reorders
or removes); a token adds a data dependence on top of that (e.g. across computations).

How they run (python/xlair/host.py): each op lowers to a call of a function of the host
module `xlair_host` (one function per call site, described in the executable's signature),
so an executable needs nothing but its `.vmfb` and, for CustomCall, its registered targets.

* CustomCall(target_name, args, shape): the target is registered by name in Python
  (`xlair.register_custom_call`): a Python callable over numpy arrays (returns an array, or a
  tuple of arrays for a tuple shape), or a C function `void f(void* out, void** in)` from a
  shared library.  C layout as XLA's CPU runtime: in[i] points at argument i's row-major data
  (a tuple argument: at a table of pointers to its elements); out points at the result's data
  (a tuple result: at a table of pointers to one buffer per element).  An unregistered target
  is an error when the executable is made (compile or load) or interpreted.  `opaque` (default
  "") is XlaBuilder's backend configuration string: a Python target whose signature has an
  `opaque` parameter receives it; C targets and other Python targets do not (XLA's original
  API).  xlair's built-in targets (python/xlair/lapack.py: JAX's CPU LAPACK targets and XLA's
  decomposition targets) read their attributes from it.
* Infeed(shape): the next item of the executable's infeed queue (per executable and replica),
  checked against `shape` (an array, or a flat tuple of arrays; nested tuples are not allowed;
  the empty tuple reads nothing).  An empty queue waits up to the executable's timeout, then
  raises XlaError.  With a token: the result is the tuple (data, token) (InfeedWithToken).
* Outfeed(operand, shape_with_layout, outfeed_config): appends the operand to the outfeed
  queue; returns a token.  shape_with_layout, when given, must be the operand's shape.
* Send(operand, channel_handle) / Recv(shape, channel_handle): a channel is a FIFO between
  computations running at the same time (the replicas of one replicated run, or executables
  called from different threads).  Send does not wait for the receiver (SendDone completes
  once the data is queued); Recv waits for the data up to the timeout (Recv before Send before
  RecvDone: a Recv may start before its Send).  Send returns a token; Recv returns the data,
  or (data, token) with a token.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Int, Optional, ShapeKind, Str
from ..core import Attr, OpDef, Operand, Operands, register
from ..types import Shape


def _tokens(chk, param, tokens, most=None, *, cid: str):
    for i, t in enumerate(tokens):
        chk.token(f"{param}[{i}]" if most != 1 else param, t, cid=cid)
    if most is not None and len(tokens) > most:
        chk.fail(param, f"must be at most {most} token", len(tokens), cid=cid)


def _host(interp, what):
    host = getattr(interp, "host", None)
    if host is None:
        raise RuntimeError(f"{what} needs a host (xlair.interpreter provides one)")
    return host


def _opt_token_bind(*names):
    """bind(...) mapping an optional `token=` (an XlaOp or None) onto the 'token' operand group."""
    def bind(*args, **kw):
        v = dict(zip(names, args))
        if len(args) > len(names):
            raise TypeError(f"takes at most {len(names)} positional arguments plus token=")
        v.update(kw)
        t = v.pop("token", None)
        v["token"] = [] if t is None else (list(t) if isinstance(t, (list, tuple)) else [t])
        return v
    return bind


# -- AfterAll --------------------------------------------------------------------------------
def _after_all_infer(chk, operands):
    _tokens(chk, "operands", operands, cid="after_all_i1")
    return Shape.token()


def _after_all_bind(operands=()):
    return {"operands": list(operands) if isinstance(operands, (list, tuple)) else [operands]}


register(OpDef("AfterAll", (Operands("operands"),), _after_all_infer,
               lambda operands, *, result: np.zeros((), np.bool_), "side_effects", "AfterAll",
               bind=_after_all_bind, takes_builder=True,
               doc="a token that comes after all the given tokens (no operands: a new token)",
               constraints={
                   "after_all_i1": "operands are tokens",
               }))


# -- CustomCall ------------------------------------------------------------------------------
def _flat_arrays(chk, param, s: Shape, what="an array or a tuple of arrays", *, cid: str):
    if s.is_token:
        chk.fail(param, f"must be {what}", s, cid=cid)
    if s.is_tuple:
        for x in s.tuple_shapes:
            if not x.is_array:
                chk.fail(param, f"must be {what} (tuples do not nest here)", s, cid=cid)
    chk.non_negative(param, [d for x in s.leaves() for d in x.dims], cid=cid)


def _custom_call_infer(chk, target_name, args, shape, opaque=""):
    if not target_name or not target_name.replace("_", "a").replace(".", "a").isalnum():
        chk.fail("target_name", "must be a non-empty name of letters, digits, '_' and '.'", target_name,
                 cid="custom_call_i2")
    for i, a in enumerate(args):
        _flat_arrays(chk, f"args[{i}]", a, cid="custom_call_i1")
    _flat_arrays(chk, "shape", shape, cid="spec:CustomCall")
    return shape


def _custom_call_ref(target_name, args, shape, opaque="", *, result, interp):
    return _host(interp, "CustomCall").custom_call(target_name, list(args), result, opaque)


def _custom_call_bind(target_name, args, shape, opaque=""):
    return {"target_name": target_name, "args": list(args) if isinstance(args, (list, tuple)) else [args],
            "shape": shape, "opaque": opaque}


register(OpDef("CustomCall", (Attr("target_name", Str()), Operands("args"), Attr("shape", ShapeKind()),
                              Attr("opaque", Str(), "")),
               _custom_call_infer, _custom_call_ref, "side_effects", "CustomCall",
               bind=_custom_call_bind, side_effecting=True,
               reference_takes_interp=True,
               doc="call a target registered by name (xlair.register_custom_call): a Python "
                   "callable or a C function void f(void* out, void** in); opaque is XlaBuilder's "
                   "backend configuration string, given to Python targets that take it",
               constraints={
                   "custom_call_i1": "args are arrays or flat tuples of arrays (non-negative "
                                     "dimensions)",
                   "custom_call_i2": "target_name is a non-empty name of letters, digits, '_' and '.'",
                   "spec:CustomCall": "shape is an array or a flat tuple of arrays with non-negative "
                                      "dimensions",
               }))


# -- Infeed ----------------------------------------------------------------------------------
def _infeed_infer(chk, shape, token=()):
    _flat_arrays(chk, "shape", shape, "an array or a flat tuple of arrays", cid="infeed_c2")
    _tokens(chk, "token", token, 1, cid="infeed_i1")
    return Shape.tuple([shape, Shape.token()]) if token else shape


def _infeed_ref(shape, token=(), *, result, interp):
    data = _host(interp, "Infeed").infeed(shape, interp.site)
    return (data, np.zeros((), np.bool_)) if token else data


register(OpDef("Infeed", (Attr("shape", ShapeKind()), Operands("token")), _infeed_infer, _infeed_ref,
               "side_effects", "Infeed", bind=_opt_token_bind("shape"), takes_builder=True,
               side_effecting=True,
               reference_takes_interp=True,
               doc="the next item of the executable's infeed queue (with token=: (data, token))",
               constraints={
                   "infeed_i1": "token (optional) is one token",
                   "infeed_c2": "shape is an array or a flat tuple of arrays with non-negative "
                                "dimensions",
               }))


# -- Outfeed ---------------------------------------------------------------------------------
def _outfeed_infer(chk, operand, shape_with_layout=None, outfeed_config="", token=()):
    _flat_arrays(chk, "operand", operand, "an array or a flat tuple of arrays", cid="outfeed_i1")
    if shape_with_layout is not None and shape_with_layout != operand:
        chk.fail("shape_with_layout", f"must be the operand's shape ({operand})", shape_with_layout,
                 cid="spec:Outfeed")
    _tokens(chk, "token", token, 1, cid="outfeed_i2")
    return Shape.token()


def _outfeed_ref(operand, shape_with_layout=None, outfeed_config="", token=(), *, result, interp):
    _host(interp, "Outfeed").outfeed(operand)
    return np.zeros((), np.bool_)


register(OpDef("Outfeed", (Operand("operand"), Attr("shape_with_layout", Optional(ShapeKind()), None),
                           Attr("outfeed_config", Str(), ""), Operands("token")),
               _outfeed_infer, _outfeed_ref, "side_effects", "Outfeed",
               bind=_opt_token_bind("operand", "shape_with_layout", "outfeed_config"), side_effecting=True,
               reference_takes_interp=True,
               doc="append the operand to the executable's outfeed queue; returns a token",
               constraints={
                   "outfeed_i1": "operand is an array or a flat tuple of arrays",
                   "outfeed_i2": "token (optional) is one token",
                   "spec:Outfeed": "shape_with_layout (when given) is the operand's shape",
               }))


# -- Send / Recv -----------------------------------------------------------------------------
def _channel(chk, channel_handle, *, cid: str):
    if channel_handle < 0:
        chk.fail("channel_handle", "must not be negative", channel_handle, cid=cid)


def _send_infer(chk, operand, channel_handle, token=()):
    chk.array("operand", operand, cid="send_i1")
    chk.non_negative("operand", operand.dims, cid="send_i1")
    _channel(chk, channel_handle, cid="send_i3")
    _tokens(chk, "token", token, 1, cid="send_i2")
    return Shape.token()


def _send_ref(operand, channel_handle, token=(), *, result, interp):
    _host(interp, "Send").send(channel_handle, np.asarray(operand))
    return np.zeros((), np.bool_)


register(OpDef("Send", (Operand("operand"), Attr("channel_handle", Int()), Operands("token")),
               _send_infer, _send_ref, "side_effects", "Send",
               bind=_opt_token_bind("operand", "channel_handle"), side_effecting=True,
               reference_takes_interp=True,
               doc="queue the operand on a channel for a Recv of the same handle; returns a token",
               constraints={
                   "send_i1": "operand is an array",
                   "send_i2": "token (optional) is one token",
                   "send_i3": "channel_handle is not negative",
               }))


def _recv_infer(chk, shape, channel_handle, token=()):
    chk.array("shape", shape, cid="spec:Recv")
    chk.non_negative("shape", shape.dims, cid="spec:Recv")
    _channel(chk, channel_handle, cid="recv_i2")
    _tokens(chk, "token", token, 1, cid="recv_i1")
    return Shape.tuple([shape, Shape.token()]) if token else shape


def _recv_ref(shape, channel_handle, token=(), *, result, interp):
    data = _host(interp, "Recv").recv(channel_handle, shape)
    return (data, np.zeros((), np.bool_)) if token else data


register(OpDef("Recv", (Attr("shape", ShapeKind()), Attr("channel_handle", Int()), Operands("token")),
               _recv_infer, _recv_ref, "side_effects", "Recv",
               bind=_opt_token_bind("shape", "channel_handle"), takes_builder=True, side_effecting=True,
               reference_takes_interp=True,
               doc="the next value a Send of the same channel queued (waits up to the timeout)",
               constraints={
                   "recv_i1": "token (optional) is one token",
                   "recv_i2": "channel_handle is not negative",
                   "spec:Recv": "shape is an array shape with non-negative dimensions",
               }))
