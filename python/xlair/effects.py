"""The host state that side effects and collectives act on, shared by the interpreter and
compiled executables (whose IREE host module, host.py, calls into it).

CustomCall targets registered by name; `Feed`, a FIFO (an infeed, an outfeed, a Send/Recv
channel); `ReplicaRun`, one run of N replicas in threads: the rendezvous of their collectives
(keyed by call site and per-replica call count), their channels and the record of the first
failure (xlair.replicas has the same interface over MPI); `HostContext`, what one replica sees:
its id, its infeed and outfeed queues and the current run.  The op records' references (the
same code the interpreter and the host module run) call the HostContext's entry points.  Every
wait has a timeout (`DEFAULT_TIMEOUT`, 60 s, or XLAIR_HOST_TIMEOUT, or `Executable.timeout`).
"""
from __future__ import annotations

import collections
import ctypes
import inspect
import os
import threading
import time
from typing import Callable

import numpy as np

from xlair.dialect.checks import Check, XlaError
from xlair.dialect.types import Shape

from .values import check_arg

DEFAULT_TIMEOUT = float(os.environ.get("XLAIR_HOST_TIMEOUT", "60"))


# ----------------------------------------------------------------------------------------
# custom call targets
# ----------------------------------------------------------------------------------------
_TARGETS: dict[str, "CustomCallTarget"] = {}
_targets_lock = threading.Lock()


class CustomCallTarget:
    """A registered CustomCall target: a Python callable, or a C function of a library.  A
    Python callable with keyword parameters `opaque` (the op's backend configuration string)
    or `result` (its result xla.Shape) receives them."""

    def __init__(self, name: str, fn: Callable | None = None, library: str | None = None,
                 symbol: str | None = None):
        self.name, self.fn, self.library = name, fn, library
        self.cfn = None
        self.extras: tuple = ()
        if fn is not None:
            try:
                params = inspect.signature(fn).parameters
            except (TypeError, ValueError):     # builtins without a signature take positionals
                params = {}
            self.extras = tuple(k for k in ("opaque", "result") if k in params)
        if library is not None:
            try:
                lib = ctypes.CDLL(os.fspath(library))
                self.cfn = getattr(lib, symbol or name)
            except (OSError, AttributeError) as e:
                raise XlaError(f"custom call target {name!r}: cannot load {symbol or name!r} from "
                               f"{library}: {e}") from None
            self.cfn.restype = None
            self.cfn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]

    def __call__(self, args: list, result: Shape, opaque: str = ""):
        if self.cfn is not None:
            return self._call_c(args, result)
        extra = {k: v for k, v in (("opaque", opaque), ("result", result)) if k in self.extras}
        try:
            out = self.fn(*args, **extra)
        except XlaError:
            raise
        except Exception as e:
            raise XlaError(f"'xla.custom_call' target {self.name!r} raised {type(e).__name__}: {e}") from None
        try:
            return check_arg(result, out, f"'xla.custom_call' target {self.name!r} result")
        except XlaError as e:
            raise XlaError(str(e).replace(" result must be", " must return")) from None

    def _call_c(self, args: list, result: Shape):
        keep: list = []         # the arrays and pointer tables the C function reads, alive until it returns
        ins = (ctypes.c_void_p * max(len(args), 1))(*[_pointer(a, _shape_of(a), keep) for a in args])
        out = _zeros_like_shape(result)
        self.cfn(_pointer(out, result, keep), ins)
        return out


# module-level recursions, not nested functions calling themselves: such a closure is a reference
# cycle that would hold every call's arrays until the cyclic garbage collector runs
def _pointer(value, shape: Shape, keep: list):
    """A C pointer to `value` laid out as XLA passes it: an array's data, or for a tuple a table
    of its elements' pointers; what the pointers point into is appended to `keep`."""
    if shape.is_tuple:
        table = (ctypes.c_void_p * max(len(shape.tuple_shapes), 1))(
            *[_pointer(v, s, keep) for v, s in zip(value, shape.tuple_shapes)])
        keep.append(table)
        return ctypes.cast(table, ctypes.c_void_p).value
    a = np.ascontiguousarray(value)
    keep.append(a)
    return a.ctypes.data if a.size else None


def _zeros_like_shape(shape: Shape):
    if shape.is_tuple:
        return tuple(_zeros_like_shape(s) for s in shape.tuple_shapes)
    return np.zeros(shape.dims, shape.dtype)


def _shape_of(v) -> Shape:
    if isinstance(v, tuple):
        return Shape.tuple([_shape_of(x) for x in v])
    a = np.asarray(v)
    from xlair.dialect.types import element_type
    return Shape(element_type(a.dtype), a.shape)


def register_custom_call(name: str, fn: Callable | None = None, *, library=None, symbol: str | None = None):
    """Register a CustomCall target by name: `fn(*numpy_args) -> numpy array (or tuple)`, or
    the C function `symbol` (default: `name`) of the shared library `library`, with XLA's ABI
    `void f(void* out, void** in)`.  Registering a name again replaces the target."""
    if not isinstance(name, str) or not name:
        raise XlaError(f"register_custom_call: name must be a non-empty string; got {name!r}")
    if (fn is None) == (library is None):
        raise XlaError("register_custom_call: give either a Python callable or library=")
    if fn is not None and not callable(fn):
        raise XlaError(f"register_custom_call: {name!r} target must be callable; got {fn!r}")
    t = CustomCallTarget(name, fn, library, symbol)
    with _targets_lock:
        _TARGETS[name] = t
    return t


def unregister_custom_call(name: str) -> None:
    with _targets_lock:
        _TARGETS.pop(name, None)


def custom_call_target(name: str) -> CustomCallTarget:
    t = _TARGETS.get(name)
    if t is None:
        raise XlaError(f"'xla.custom_call' target_name {name!r} is not registered "
                       "(xlair.register_custom_call); got " + repr(name))
    return t


# ----------------------------------------------------------------------------------------
# queues
# ----------------------------------------------------------------------------------------
class Feed:
    """A FIFO of host values (an infeed, an outfeed or a channel)."""

    def __init__(self, what: str):
        self.what = what
        self._items: collections.deque = collections.deque()
        self._cond = threading.Condition()

    def put(self, value) -> None:
        with self._cond:
            self._items.append(value)
            self._cond.notify_all()

    def get(self, timeout: float | None = None, abort: Callable | None = None):
        """The oldest item; waits up to `timeout` seconds (None: DEFAULT_TIMEOUT), then XlaError."""
        timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._items:
                if abort is not None:
                    abort()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise XlaError(f"{self.what} is empty: nothing arrived within {timeout:g} s")
                self._cond.wait(min(left, 0.05 if abort is not None else left))
            return self._items.popleft()

    def __len__(self):
        return len(self._items)

    def clear(self) -> None:
        with self._cond:
            self._items.clear()

    def drain(self) -> list:
        with self._cond:
            out = list(self._items)
            self._items.clear()
            return out


_GLOBAL_CHANNELS: dict[int, Feed] = {}
_channels_lock = threading.Lock()


def _channel(table: dict, handle: int) -> Feed:
    with _channels_lock:
        f = table.get(handle)
        if f is None:
            f = table[handle] = Feed(f"channel {handle}")
        return f


# ----------------------------------------------------------------------------------------
# runs of replicas
# ----------------------------------------------------------------------------------------
class ReplicaRun:
    """One run of N replicas in threads of this process: the rendezvous of their collectives,
    their Send/Recv channels and the record of the first failure."""

    def __init__(self, n: int, timeout: float | None = None, lock=None, channels: dict | None = None):
        self.n = n
        self.timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
        self._cond = threading.Condition(lock if lock is not None else threading.Lock())
        self.outer_lock = lock      # the interpreter's MLIR lock: released while waiting on a queue
        self._slots: dict = {}
        self._counts: dict = {}
        self.failed: tuple[int, str] | None = None
        self.channels = {} if channels is None else channels

    def fail(self, replica: int, message: str) -> None:
        with self._cond:
            if self.failed is None:
                self.failed = (replica, message)
            self._cond.notify_all()

    def check_failed(self, replica: int, what: str) -> None:
        if self.failed is not None and self.failed[0] != replica:
            r, msg = self.failed
            raise XlaError(f"{what} on replica {replica} stopped: replica {r} failed: {msg}")

    def exchange(self, replica: int, op: str, site, groups: list, value, timeout=None):
        """The values of every member of `replica`'s group (in group order) for one call of
        collective `site`."""
        timeout = self.timeout if timeout is None else timeout
        group = next(g for g in groups if replica in g)
        with self._cond:
            seq = self._counts.get((replica, site), 0)
            self._counts[(replica, site)] = seq + 1
            key = (site, seq, tuple(group))
            slot = self._slots.setdefault(key, {"values": {}, "left": len(group)})
            slot["values"][replica] = value
            self._cond.notify_all()
            deadline = time.monotonic() + timeout
            while len(slot["values"]) < len(group):
                self.check_failed(replica, f"'xla.{op}'")
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = [r for r in group if r not in slot["values"]]
                    msg = (f"'xla.{op}' on replica {replica} timed out after {timeout:g} s waiting for "
                           f"replica(s) {missing} of group {group}")
                    if self.failed is None:
                        self.failed = (replica, msg)
                    self._cond.notify_all()
                    raise XlaError(msg)
                self._cond.wait(left)
            values = [slot["values"][r] for r in group]
            slot["left"] -= 1
            if slot["left"] == 0:
                del self._slots[key]
        return values, group.index(replica)


# ----------------------------------------------------------------------------------------
# what one replica's side effects see
# ----------------------------------------------------------------------------------------
class HostContext:
    """The host state of one replica of one executable (or of one interpretation)."""

    def __init__(self, replica: int = 0, name: str = "executable"):
        self.replica_id = replica
        self.name = name
        self.infeed_queue = Feed(f"the infeed of {name} (replica {replica})")
        self.outfeed_queue = Feed(f"the outfeed of {name} (replica {replica})")
        self.run: ReplicaRun | None = None
        self.error: BaseException | None = None
        #: during a host call on a CPU device: new_array(like) -> a numpy array in a new device
        #: buffer, which becomes the call's result without a copy (host.host_module)
        self.new_array = None

    def _run(self) -> ReplicaRun:
        if self.run is None:
            self.run = ReplicaRun(1, channels=_GLOBAL_CHANNELS)
        return self.run

    @property
    def timeout(self) -> float:
        return self._run().timeout

    # the entry points of the op records' references ------------------------------------------
    def custom_call(self, target_name: str, args: list, result: Shape, opaque: str = ""):
        return custom_call_target(target_name)(args, result, opaque)

    def infeed(self, shape: Shape, site=None):
        if shape.is_tuple and not shape.tuple_shapes:
            return ()
        run = self._run()
        try:
            with _released(run):
                item = self.infeed_queue.get(run.timeout, lambda: run.check_failed(self.replica_id, "'xla.infeed'"))
        except XlaError as e:
            if "is empty" in e.message:
                raise XlaError(f"'xla.infeed' on replica {self.replica_id}: the infeed queue of {self.name} is "
                               f"empty: nothing arrived within {run.timeout:g} s", op="infeed") from None
            raise
        try:
            return check_arg(shape, item, f"'xla.infeed' item (replica {self.replica_id})")
        except XlaError as e:
            raise XlaError(f"{e.message}") from None

    def outfeed(self, value) -> None:
        self.outfeed_queue.put(_copy(value))

    def send(self, channel: int, value) -> None:
        _channel(self._run().channels, channel).put(np.array(value))

    def recv(self, channel: int, shape: Shape):
        run = self._run()
        feed = _channel(run.channels, channel)
        try:
            with _released(run):
                item = feed.get(run.timeout, lambda: run.check_failed(self.replica_id, "'xla.recv'"))
        except XlaError as e:
            if "is empty" in e.message:
                raise XlaError(f"'xla.recv' channel_handle {channel}: no Send arrived within {run.timeout:g} s "
                               f"(replica {self.replica_id})") from None
            raise
        if item.shape != shape.dims or item.dtype != shape.dtype:
            raise XlaError(f"'xla.recv' channel_handle {channel} must carry {shape}; got "
                           f"{_shape_of(item)} from its Send")
        return item

    def exchange(self, op: str, site, replica_groups, value, size=None, size_param=None, pairs=None):
        from xlair.dialect.ops.collectives import groups_for
        run = self._run()
        chk = Check(op)
        groups = groups_for(chk, replica_groups, run.n)
        if size is not None:
            for g in groups:
                if len(g) != size:
                    chk.fail(size_param, f"must be the size of each replica group ({len(g)} of {run.n} "
                             "replicas)", size)
        if pairs is not None:
            for s, t in pairs:
                if s >= run.n or t >= run.n:
                    chk.fail("source_target_pairs", f"must name replicas in [0, {run.n})",
                             [list(p) for p in pairs])
        return run.exchange(self.replica_id, op, site, groups, value)


class _released:
    """Release the run's outer (re-entrant) lock while waiting, if this thread holds it."""

    def __init__(self, run):
        self.lock = getattr(run, "outer_lock", None)
        self.state = None

    def __enter__(self):
        if self.lock is not None and self.lock._is_owned():
            self.state = self.lock._release_save()

    def __exit__(self, *exc):
        if self.state is not None:
            self.lock._acquire_restore(self.state)


def _copy(value):
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return np.array(value)
