"""The numpy reference interpreter: runs any xla module op by op with each record's
`reference`.  It is the oracle of the tests and `--interpret` for users."""
from __future__ import annotations

import numpy as np

from xlair.dialect.checks import XlaError
from xlair.dialect.core import RETURN, location_str, lookup
from xlair.dialect.ir import context, ir, lock
from xlair.dialect.ops.dynamic import DynamicContext, DynamicError, propagate
from xlair.dialect.types import Shape

from .computation import Computation
from .effects import _GLOBAL_CHANNELS, HostContext, ReplicaRun
from .values import check_args


def interpret(comp: Computation, *args, host=None):
    """Evaluate a computation on host values; tuples come back as Python tuples.  `host` (an
    `xlair.host.HostContext`) holds the infeed and outfeed queues the side effects use (by
    default a new one; then Infeed has nothing to read)."""
    sig = comp.program_shape
    vals = check_args(sig.params, args, f"computation {comp.name}")
    host = HostContext(0, comp.name) if host is None else host
    host.run = ReplicaRun(1, None if host.run is None else host.run.timeout, lock=lock,
                          channels=_GLOBAL_CHANNELS)
    with lock, context():
        return _Interp(comp.module, host).call("main", vals)


def interpret_replicated(comp: Computation, args_per_replica, hosts=None, timeout: float | None = None):
    """Evaluate a computation as N replicas (N = len(args_per_replica)), each in a thread, their
    collectives meeting as in `Executable.run_replicated`; returns their results.  `hosts`:
    one `xlair.host.HostContext` per replica (for infeed/outfeed), made when not given."""
    import threading
    n = len(args_per_replica)
    sig = comp.program_shape
    vals = [check_args(sig.params, a, f"computation {comp.name} replica {r}") for r, a in enumerate(args_per_replica)]
    hosts = [HostContext(r, comp.name) for r in range(n)] if hosts is None else list(hosts)
    run = ReplicaRun(n, timeout, lock=lock)     # waits release the MLIR lock the replicas share
    results, errors = [None] * n, [None] * n

    def work(r):
        hosts[r].run = run
        try:
            with lock, context():
                results[r] = _Interp(comp.module, hosts[r]).call("main", vals[r])
        except BaseException as e:      # noqa: BLE001
            errors[r] = e
            run.fail(r, str(e))

    threads = [threading.Thread(target=work, args=(r,), daemon=True) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(run.timeout + 30)
        if t.is_alive():
            raise XlaError(f"interpreted replicas of {comp.name} did not finish")
    for r, e in enumerate(errors):
        if e is not None:
            first = run.failed[0] if run.failed and errors[run.failed[0]] is not None else r
            raise XlaError(f"replicated run of {comp.name} failed on replica {first}: {errors[first]}")
    return results


class _Interp:
    def __init__(self, module: ir.Module, host=None):
        self.funcs = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
                      for op in module.body.operations if op.operation.name == "func.func"}
        self.host = host
        self.site = None
        self._sites: dict = {}

    def site_of(self, op) -> int:
        """A number for each op of the module (the same in every replica's interpretation)."""
        if not self._sites:
            n = 0
            for f in self.funcs.values():
                def visit(o):
                    nonlocal n
                    self._sites[o.operation if hasattr(o, "operation") else o] = n
                    n += 1
                    return ir.WalkResult.ADVANCE
                f.walk(visit)
        return self._sites.get(op, -1)

    def call(self, name: str, args):
        f = self.funcs.get(name)
        if f is None:
            raise XlaError(f"no function @{name} in the module")
        return self.block(f.regions[0].blocks[0], args)

    def function(self, name: str):
        def run(*args):
            return self.call(name, list(args))
        return run

    def region(self, region: ir.Region):
        """A computation region as a Python callable.  With `batch=dims`, a scalar computation
        runs on arrays of shape `dims` at once (every value gains those leading dimensions)."""
        def run(*args, batch=()):
            return self.block(region.blocks[0], list(args), tuple(batch))
        return run

    def block(self, block: ir.Block, args, batch=()):
        env = {a: v for a, v in zip(block.arguments, args)}
        dyn: dict = {}            # value -> {dimension: dynamic size} (dialect/ops/dynamic.py)
        for op in block.operations:
            op = op.operation
            name = op.name
            if name in (RETURN, "func.return"):
                outs = [env[v] for v in op.operands]
                return outs[0] if len(outs) == 1 else tuple(outs)
            env[op.results[0]] = self.op(op, env, batch, dyn)
        raise XlaError("block has no terminator")

    def op(self, op: ir.Operation, env, batch=(), dyn=None):
        opdef = lookup(op.name)
        if opdef is None:
            raise XlaError(f"the interpreter does not know '{op.name}'", location=location_str(op.location))
        if opdef.reference is None:
            raise XlaError(f"'{op.name}' has no reference semantics", location=location_str(op.location))
        args = opdef.unpack(op)
        kw = {}
        for p in opdef.params:
            v = args[p.name]
            if p.is_operand:
                kw[p.name] = [env[x] for x in v] if p.variadic else env[v]
            elif p.is_region:
                kw[p.name] = [self.region(r) for r in v] if p.variadic else self.region(v)
            elif p.is_callee:
                kw[p.name] = self.function(v)
            else:
                kw[p.name] = v
        extra = {}
        if opdef.reference_takes_interp:
            extra = {"interp": self}
            self.site = self.site_of(op)
        result = _batched(Shape.from_mlir(op.results[0].type), batch)
        try:
            if dyn is not None:
                special = _dynamic(opdef, op, args, kw, dyn)
                if special is not None:
                    return _conform(special, result)
            out = opdef.reference(**kw, result=result, **extra)
        except XlaError as e:
            raise e.at(location_str(op.location)) from None
        return _conform(out, result)


class _NumpyDynamic(DynamicContext):
    """The dynamic-size rules (dialect/ops/dynamic.py) on ints and numpy arrays: sizes are
    ints, masks copy the reference's arguments `kw`, a replaced result is kept in `value`."""

    def __init__(self, opdef, op, args, kw, dyn):
        super().__init__(opdef, op, args, dyn)
        self.kw, self.value = kw, None

    def clamp_sub(self, size, start, bound):
        return min(max(size - start, 0), bound)

    def size_operand(self, name):
        return int(self.kw[name])

    def mask(self, name, i, dim, size, fill):
        xs = self.kw[name] = list(self.kw[name])
        x = np.array(xs[i], copy=True)
        index = [slice(None)] * x.ndim
        index[dim] = slice(size, None)
        x[tuple(index)] = self.kw[fill][i]
        xs[i] = x

    def replace_result(self, size):
        self.value = np.int32(size)


def _dynamic(opdef, op, args, kw, dyn):
    """Apply the op's dynamic-size rule around its reference.  Records the result's dynamic
    sizes in `dyn`; returns a value when it replaces the reference's."""
    ctx = _NumpyDynamic(opdef, op, args, kw, dyn)
    try:
        out = propagate(opdef, ctx)
    except DynamicError as e:
        raise XlaError(f"'{op.name}' {e.args[0]} {e.args[1]}") from None
    if out:
        dyn[op.results[0]] = out
    return ctx.value


def _batched(shape: Shape, batch) -> Shape:
    if not batch:
        return shape
    if shape.is_tuple:
        return Shape.tuple([_batched(s, batch) for s in shape.tuple_shapes])
    return shape if shape.is_token else Shape(shape.element_type, tuple(batch) + shape.dims)


def _conform(v, shape: Shape):
    if shape.is_tuple:
        return tuple(_conform(x, s) for x, s in zip(v, shape.tuple_shapes))
    if shape.is_token:
        return np.zeros((), np.bool_)
    a = np.asarray(v, dtype=shape.dtype)
    if a.shape == shape.dims:
        return a
    if a.size == shape.size:
        return a.reshape(shape.dims)
    return np.broadcast_to(a, shape.dims)   # a constant in a batched scalar computation
