"""The host module of compiled programs: the host side of side effects and replicas.

A side-effecting op (CustomCall, Infeed, Outfeed, Send, Recv, AllReduce, CrossReplicaSum,
AllGather, AllToAll, CollectivePermute) lowers to a call of `@xlair_host.<op>_<k>`, a function
of the host module with one function per call site k (lowering/side_effects.py).  The
executable's signature lists the call sites (`"host"`: op, attributes, operand and result
shapes), so a `.vmfb` loaded from disk can be run with nothing else.  Each VM context (one per
executable and replica) gets its own instance of the host module, bound to a `HostContext`
(xlair.effects, with the rest of the host state the interpreter shares): the replica's id,
its infeed and outfeed queues and the current run.

A call converts its buffer operands to numpy, runs the op's numpy reference semantics (the op
record's `reference`, the same code the interpreter runs) against the HostContext, and returns
new buffers.  Collectives meet in the run's `exchange` (threads: `ReplicaRun`, a rendezvous
keyed by call site and per-replica call count; MPI: xlair.replicas).  Every wait has a
timeout (`DEFAULT_TIMEOUT`, 60 s, or XLAIR_HOST_TIMEOUT, or `Executable.timeout`).
"""
from __future__ import annotations

import numpy as np

from xlair.dialect.checks import Check, XlaError
from xlair.dialect.core import lookup
from xlair.dialect.ir import MISSING_COMPILER, compiler_present, context, ir, lock

from .device import from_device_all, host_array, iree_runtime, to_device_all
# the host state the calls act on (xlair.effects), also reachable here as before
from .effects import (DEFAULT_TIMEOUT, CustomCallTarget, Feed, HostContext, ReplicaRun,  # noqa: F401
                      custom_call_target, register_custom_call, unregister_custom_call)
from .interpreter import _Interp
from .values import flatten, parse_shape, unflatten

MODULE = "xlair_host"


class _Site:
    """What an op record's reference sees as `interp` when the host runs it."""

    def __init__(self, host: HostContext, site):
        self.host, self.site = host, site


# ----------------------------------------------------------------------------------------
# call sites of a compiled program
# ----------------------------------------------------------------------------------------
def decode_attr(v):
    """An attribute of a call site's description (encoded by lowering/side_effects.py)."""
    if isinstance(v, dict) and "$shape" in v:
        return parse_shape(v["$shape"])
    if isinstance(v, list):
        return tuple(decode_attr(x) for x in v)
    return v


class CallSite:
    """One host call of a compiled program, from the executable's signature."""

    def __init__(self, desc: dict):
        self.desc = desc
        self.op = desc["op"]
        self.name = desc["name"]
        self.opdef = lookup("xla." + self.op)
        self.attrs = {k: decode_attr(v) for k, v in desc.get("attrs", {}).items()}
        self.operands = [(p, [parse_shape(s) for s in shapes] if isinstance(shapes, list)
                          else parse_shape(shapes)) for p, shapes in desc["operands"]]
        self.result = parse_shape(desc["result"])
        self.in_leaves = [leaf for _, s in self.operands for x in (s if isinstance(s, list) else [s])
                          for leaf in x.leaves()]
        self.out_leaves = self.result.leaves()
        self.reducer = _reducer(desc.get("computation"))

    @property
    def cconv(self) -> str:
        return "0" + ("r" * len(self.in_leaves) or "v") + "_" + ("r" * len(self.out_leaves) or "v")

    def check(self, replicas: int) -> None:
        """Errors a program can be known to have once its replica count is known."""
        if self.op == "custom_call":
            custom_call_target(self.attrs["target_name"])
        groups = self.attrs.get("replica_groups")
        if groups:
            from xlair.dialect.ops.collectives import groups_for
            groups_for(Check(self.op), groups, replicas)
        for param in ("shard_count", "split_count"):
            size = self.attrs.get(param)
            if size is not None and not groups and size != replicas:
                Check(self.op).fail(param, f"must be the number of replicas ({replicas}) when replica_groups "
                                    "is empty", size)
        pairs = self.attrs.get("source_target_pairs")
        if pairs and any(max(p) >= replicas for p in pairs):
            Check(self.op).fail("source_target_pairs", f"must name replicas in [0, {replicas})",
                                [list(p) for p in pairs])

    def _kwargs(self, leaves: list) -> dict:
        it = iter(leaves)
        kw = {}
        for p, s in self.operands:
            if isinstance(s, list):
                kw[p] = [unflatten([next(it) for _ in x.leaves()], x) for x in s]
            else:
                kw[p] = unflatten([next(it) for _ in s.leaves()], s)
        kw.update(self.attrs)
        if self.reducer is not None:
            kw["computation"] = self.reducer
        return kw

    def run(self, host: HostContext, leaves: list, views: bool = False) -> list:
        """This call site's results (numpy leaves) from its operands (numpy leaves).  `views`:
        the leaves are views of the program's buffers, valid during the call only: the run's
        fast path (MPI's collectives) reads them in place, anything else gets copies."""
        fast = getattr(host.run, "fast", None)
        out = fast(self, host, self._kwargs(leaves)) if fast is not None else None
        if out is None:
            if views:
                leaves = [np.array(a) for a in leaves]
            out = self.opdef.reference(**self._kwargs(leaves), result=self.result, interp=_Site(host, self.name))
        return [np.asarray(v, s.dtype if not s.is_token else np.bool_)
                for v, s in zip(flatten(out, self.result), self.out_leaves)]


def _reducer(comp):
    """AllReduce's computation on whole arrays: numpy for the recognised ones, else the
    interpreter on the computation's text."""
    if comp is None:
        return None
    from xlair.dialect.ops.collectives import NUMPY_REDUCERS
    if comp in NUMPY_REDUCERS:
        ufunc = NUMPY_REDUCERS[comp]

        def reduce(a, b, batch=()):
            return ufunc(a, b)
        reduce.kind = comp
        return reduce
    if not compiler_present():
        raise XlaError(f"'xla.all_reduce' computation is not one the run side reduces with numpy "
                       f"({', '.join(NUMPY_REDUCERS)}) and the host interprets it with MLIR: {MISSING_COMPILER}; "
                       f"got the computation {comp[:200]!r}")
    with lock, context():
        module = ir.Module.parse(comp)
    interp = _Interp(module)

    def run(a, b, batch=()):
        with lock, context():
            return interp.block(interp.funcs["main"].regions[0].blocks[0], [a, b], tuple(batch))
    run.kind = None
    run.module = module         # keeps the parsed module (and so interp's functions) alive
    return run


def parse_sites(signature: dict) -> list[CallSite]:
    return [CallSite(d) for d in signature.get("host", [])]


def host_module(sites: list[CallSite], host: HostContext, device, mapped: bool = False):
    """An IREE host module instance for one VM context, bound to `host`.  `mapped`: the device
    works in host memory (the CPU): operands the run's fast path reads are views of the
    program's buffers and results it makes are written into new device buffers (`new_array`),
    without copies.  Other results are copied: the program may update a buffer a host call
    returned in place, and a target's own array must not change under it."""
    rt = iree_runtime()

    class Instance:
        def __init__(self, iface):
            self.host = host

    def make(site: CallSite):
        def call(inst, *refs):
            h = inst.host
            try:
                views = mapped and getattr(h.run, "fast", None) is not None
                leaves = from_device_all(device, [(r.deref(rt.HalBufferView), s)
                                                  for r, s in zip(refs, site.in_leaves)], copy=not views)
                made = {}
                if mapped:
                    def new_array(like):
                        a, bv = host_array(device, like)
                        made[id(a)] = (a, bv)
                        return a
                    h.new_array = new_array
                try:
                    outs = site.run(h, leaves, views)
                finally:
                    h.new_array = None
                # the results the host made in the program's buffers as they are, the others copied
                # in (one batch of copies on a GPU)
                own = [made[id(a)][1] if made.get(id(a), (None,))[0] is a else None for a in outs]
                copied = iter(to_device_all(device, [(a, s, None) for a, s, bv in zip(outs, site.out_leaves, own)
                                                     if bv is None]))
                bufs = [(bv if bv is not None else next(copied)).ref for bv in own]
            except BaseException as e:      # noqa: BLE001  (reported by the executable)
                if h.error is None:
                    h.error = e
                if h.run is not None and h.run.failed is None:
                    h.run.fail(h.replica_id, str(e))
                raise
            if not bufs:
                return None
            return bufs[0] if len(bufs) == 1 else tuple(bufs)
        return call

    iface = rt.PyModuleInterface(MODULE, Instance)
    for site in sites:
        iface.export(site.name, site.cconv, make(site))
    return iface.create()



# Executables holding host modules drop their VM contexts at exit: a host module instance still
# alive when the interpreter shuts down makes nanobind report leaked objects.
import atexit  # noqa: E402
import weakref  # noqa: E402

_HOSTED: "weakref.WeakSet" = weakref.WeakSet()


def track(exe) -> None:
    _HOSTED.add(exe)


@atexit.register
def _drop_contexts() -> None:
    import gc
    for exe in list(_HOSTED):
        exe._contexts.clear()
        exe._ctx = None
        for h in exe._hosts:
            h.error = None
    gc.collect()
