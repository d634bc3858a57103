"""Running N replicas of one program.

* Threads in one process: `exe.run_replicated([args_0, ..., args_{N-1}])` (exe compiled with
  `replicas=N`).  Each replica is its own IREE invocation in its own VM context (thread
  `xlair-replica-<r>`); their collectives meet in an `effects.ReplicaRun` (a rendezvous keyed by
  call site and per-replica call count), Send/Recv channels are the run's own.
* MPI: under `mpirun -n N python prog.py`, `comm = xlair.replicas.mpi()` and
  `exe.run_on_rank(comm, args)` run the rank's replica (replica id = rank).  The first call of
  an executable on a communicator sets up its session (collectively: a barrier, a Dup of the
  communicator, one sub-communicator per replica group), which later calls reuse: a call costs
  what its collectives cost (one AllReduce of f32[1024] ~40 us a call on 2 ranks, was 1.5 ms).
  Collectives use MPI's own where they match: Allreduce where MPI's result is bit for bit the
  thread replicas' left fold (add, mul, max, min, and, or, xor of integers; and, or, xor of
  PRED; add and mul of two floating-point values), Allgather then the fold for the other
  add/mul/max/min/and/or/xor reductions, Allgather (AllGather), Alltoall (AllToAll), on the
  operands in the program's own buffers and into new program buffers on the CPU (no copies);
  CollectivePermute is an Isend / Irecv of the same buffers; other computations exchange
  pickled values point to point.  Every MPI wait is non-blocking and polled, with the
  timeout.  A rank that fails tells the others (a message on a reserved tag) before raising;
  they raise at their wait, naming it.  A call ends by posting a barrier the next call waits
  for, so a rank that failed after its last collective is named at the others' next call.  A
  rank whose process exits tells the others too (atexit): a wait that still needs it raises,
  naming it.  After a failure every rank starts a new session.  Send/Recv: a channel whose
  Send is in one rank's program and whose Recv is in another's is MPI point to point between
  them (tagged by the channel; in order), whether the ranks run the same program or different
  ones; a channel with both ends in one rank's program stays in-process.

A run that fails raises `XlaError` naming the failed replica; no wait lasts longer than the
timeout (Executable.timeout, default 60 s).

`Executable.run_replicated` and `Executable.run_on_rank` are set here (at the end), as xlair.ops
sets the operators of `Op`: this module runs the replicas of an Executable, the runtime knows
nothing of it.
"""
from __future__ import annotations

import os
import pickle
import threading
import time
import typing

import numpy as np

from xlair.dialect.checks import Check, XlaError

from .device import device_lost
from .effects import ReplicaRun
from .runtime import Executable
from .values import check_args

_JOIN_MARGIN = 30.0
_yield = getattr(os, "sched_yield", lambda: time.sleep(0))
#: MPI waits: how often other ranks' failures are polled for, and how long the core is only
#: yielded between tests of the requests before the wait sleeps between them (seconds)
_POLL = 0.0005
_YIELD_FOR = 0.05
#: how long a wait goes on after a rank's exit notice before it raises, naming that rank
_EXIT_GRACE = 0.5


def run_threads(exe, args_per_replica, timeout: float) -> list:
    n = exe.replicas
    if not isinstance(args_per_replica, (list, tuple)) or len(args_per_replica) != n:
        got = len(args_per_replica) if isinstance(args_per_replica, (list, tuple)) else type(args_per_replica).__name__
        raise XlaError(f"run_replicated takes one argument list per replica ({n}); got {got}")
    vals = []
    for r, args in enumerate(args_per_replica):
        if not isinstance(args, (list, tuple)):
            raise XlaError(f"run_replicated: the arguments of replica {r} must be a list or tuple; "
                           f"got {type(args).__name__}")
        vals.append(check_args(exe.parameter_shapes, args, f"executable {exe.name} replica {r}", arrays=True))
    run = ReplicaRun(n, timeout)
    results: list = [None] * n
    errors: list = [None] * n
    finished = threading.Semaphore(0)

    def work(r):
        try:
            results[r] = exe._invoke(r, vals[r], run)
        except BaseException as e:      # noqa: BLE001  (reported below, naming the replica)
            errors[r] = e
            run.fail(r, _message(e))
        finally:
            finished.release()

    pool = _pool(exe)
    for r in range(n):
        pool.submit(r, work)
    deadline = time.monotonic() + timeout + _JOIN_MARGIN
    for k in range(n):
        if not finished.acquire(timeout=max(0.0, deadline - time.monotonic())):
            stuck = [r for r in range(n) if results[r] is None and errors[r] is None]
            run.fail(stuck[0] if stuck else 0, "did not finish")
            exe._replica_pool = None        # its threads may stay blocked: the next run gets new ones
            raise XlaError(f"replicated run of {exe.name}: replica(s) {stuck} did not finish within "
                           f"{timeout + _JOIN_MARGIN:g} s")
    if any(e is not None for e in errors):
        first = run.failed[0] if run.failed is not None and errors[run.failed[0]] is not None else \
            next(r for r, e in enumerate(errors) if e is not None)
        message = f"replicated run of {exe.name} failed on replica {first}: {_message(errors[first])}"
        if any(e is not None and device_lost(e) for e in errors):
            exe._renew_device([])           # (not run again: replicas share their rendezvous)
            raise exe._lost(message)
        raise XlaError(message)
    return results


class _Pool:
    """One long-lived thread per replica (a thread's first IREE invocation costs ~0.4 ms more
    than later ones, so threads are kept between runs)."""

    def __init__(self, n: int, name: str):
        import queue
        self.queues = [queue.SimpleQueue() for _ in range(n)]
        for r in range(n):
            threading.Thread(target=self._serve, args=(self.queues[r],), daemon=True,
                             name=f"xlair-{name}-replica-{r}").start()

    @staticmethod
    def _serve(q):
        while True:
            job = q.get()
            if job is None:
                return
            fn, r = job
            fn(r)
            del fn, job

    def submit(self, r: int, fn) -> None:
        self.queues[r].put((fn, r))

    def close(self) -> None:
        for q in self.queues:
            q.put(None)


def _pool(exe) -> _Pool:
    pool = getattr(exe, "_replica_pool", None)
    if pool is None:
        pool = exe._replica_pool = _Pool(exe.replicas, exe.name)
        import weakref
        weakref.finalize(exe, pool.close)
    return pool


def _message(e: BaseException) -> str:
    return e.message if isinstance(e, XlaError) else f"{type(e).__name__}: {e}"


# ----------------------------------------------------------------------------------------
# MPI
# ----------------------------------------------------------------------------------------
_ERROR_TAG = 32000
_P2P_TAG = 32001
_PERMUTE_TAG = 32002


class MpiComm:
    """This process's place among the MPI ranks (`rank`, `size`); `comm` is the mpi4py
    communicator."""

    def __init__(self, comm):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    def __repr__(self):
        return f"<xlair MPI rank {self.rank} of {self.size}>"


def mpi(comm=None) -> MpiComm:
    """The MPI world (or `comm`) for `Executable.run_on_rank`; needs mpi4py."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise XlaError(f"xlair.replicas.mpi needs mpi4py (pip install mpi4py; and an MPI such as "
                       f"OpenMPI): {e}") from None
    return MpiComm(comm if comm is not None else MPI.COMM_WORLD)


#: the tags of channels between ranks: _CHANNEL_TAG0 + channel handle
_CHANNEL_TAG0 = 1000
_CHANNEL_TAGS = 30000


class _MpiChannel:
    """One channel between this rank and the other rank at its other end: a Send is an MPI Isend
    to it, a Recv an MPI receive from it (MPI keeps the messages of one sender, tag and
    communicator in order: the channel stays a FIFO).  The same interface as effects.Feed."""

    def __init__(self, run, handle: int, peers: list):
        self.run, self.handle, self.peers = run, handle, peers
        self.what = f"channel {handle}"

    def _peer(self, doing: str) -> int:
        if len(self.peers) != 1:
            raise XlaError(f"'xla.{doing}' channel_handle {self.handle} on rank {self.run.rank}: the other end "
                           f"of the channel must be on one rank; ranks {self.peers} have it")
        if self.handle >= _CHANNEL_TAGS:
            raise XlaError(f"'xla.{doing}' channel_handle {self.handle}: a channel between MPI ranks must have "
                           f"a handle below {_CHANNEL_TAGS}")
        return self.peers[0]

    def put(self, value) -> None:
        run = self.run
        data = np.frombuffer(pickle.dumps(np.asarray(value)), np.uint8)
        req = run.comm.Isend([data, run.MPI.BYTE], dest=self._peer("send"), tag=_CHANNEL_TAG0 + self.handle)
        run._sends.append((req, data))

    def get(self, timeout: float, abort=None):
        peer = self._peer("recv")
        return self.run.receive(peer, _CHANNEL_TAG0 + self.handle, timeout, abort,
                                f"{self.what} is empty: nothing arrived from rank {peer} within {timeout:g} s")


def _pause(start: float, now: float) -> None:
    """Between two tests of MPI requests or messages: the core yielded for _YIELD_FOR s, then
    a short sleep (time.sleep(0) sleeps for the timer slack, ~50-80 us, not a yield)."""
    if now - start < _YIELD_FOR:
        _yield()
    else:
        time.sleep(0.0002)


class _Plan(typing.NamedTuple):
    """How one call site runs on MPI: the op; for the reductions and gathers the group's
    sub-communicator, its size and the reduction kind (None: a gather); for CollectivePermute
    `peers`, (the rank this one sends to, the rank it receives from), either None."""
    op: str
    sub: object = None
    size: int = 0
    kind: str | None = None
    peers: tuple = (None, None)


class _MpiWaits:
    """Failures and waits of one rank on one communicator: what a session set-up needs before
    the session exists (MpiRun, below, is the rest)."""

    def __init__(self, comm, timeout: float):
        from mpi4py import MPI
        self.MPI = MPI
        self.comm = comm
        self.n = comm.Get_size()
        self.rank = comm.Get_rank()
        self.timeout = float(timeout)
        self.failed = None
        self.exited: dict = {}      # rank -> message: ranks whose process ended
        self.reason = None          # (rank, message) of the failure a wait last raised for
        self._sends: list = []      # messages in flight, with their buffers (kept alive)

    # failures -------------------------------------------------------------------------------
    def fail(self, replica: int, message: str, exited: bool = False) -> None:
        """Record a failure; this rank's own is sent to every other rank.  `exited`: this
        rank's process is ending (the others raise only if they still wait for it)."""
        if self.failed is None and not exited:
            self.failed = (replica, message)
        if replica == self.rank:
            data = np.frombuffer(pickle.dumps((replica, message[:2000], exited)), np.uint8)
            self._sends += [(self.comm.Isend([data, self.MPI.BYTE], dest=r, tag=_ERROR_TAG), data)
                            for r in range(self.n) if r != self.rank]

    def _poll_error(self, exits: bool = True):
        """The failure of another rank reported so far, or None; `exits`: also a rank whose
        process ended (for a wait that still needs it)."""
        st = self.MPI.Status()
        while self.comm.Iprobe(source=self.MPI.ANY_SOURCE, tag=_ERROR_TAG, status=st):
            buf = np.empty(st.Get_count(self.MPI.BYTE), np.uint8)
            self.comm.Recv([buf, self.MPI.BYTE], source=st.Get_source(), tag=_ERROR_TAG)
            r, msg, exited = pickle.loads(buf.tobytes())
            if exited:
                self.exited.setdefault(r, msg)
            elif self.failed is None:
                self.failed = (r, msg)
        if self.failed is not None and self.failed[0] != self.rank:
            return self.failed
        if exits and self.exited:
            return next(iter(self.exited.items()))
        return None

    def check_failed(self, replica: int, what: str, exits: bool = True) -> None:
        f = self._poll_error(exits)
        if f is not None:
            self.reason = f
            raise XlaError(f"{what} on replica {replica} stopped: replica {f[0]} failed: {f[1]}")

    def wait(self, reqs, what: str, keep=()) -> None:
        """`wait_for`, and if it raises, the requests and `keep` (their buffers) are held to the
        end of the process: MPI cannot cancel a collective, and would write into freed memory
        (a segfault, when the buffer was the program's) once the missing rank's part arrives or
        MPI_Finalize cleans up."""
        try:
            self.wait_for(reqs, what)
        except BaseException:
            _IN_FLIGHT.append((reqs, keep))
            raise

    def wait_for(self, reqs, what: str) -> None:
        """Wait for MPI requests up to the timeout, polling for failures of other ranks every
        `_POLL` s: testing the requests (MPI progresses a non-blocking collective only when it
        is tested) and yielding the core in between, for `_YIELD_FOR` s; then sleeping between
        tests."""
        reqs = [r for r in reqs if r is not None]
        Testall = self.MPI.Request.Testall
        if Testall(reqs):
            return
        start = time.monotonic()
        deadline = start + self.timeout
        poll = start + _POLL
        exit_seen = None
        while not Testall(reqs):
            now = time.monotonic()
            if now >= poll:
                # a failure raises at once; a rank whose process ended only if the requests do not
                # complete within _EXIT_GRACE s of the notice (its part may have been sent already)
                self.check_failed(self.rank, what, exits=exit_seen is not None and now - exit_seen > _EXIT_GRACE)
                if exit_seen is None and self.exited:
                    exit_seen = now
                if now > deadline:
                    msg = f"{what} on replica {self.rank} timed out after {self.timeout:g} s"
                    self.fail(self.rank, msg)
                    raise XlaError(msg)
                poll = now + _POLL
            _pause(start, now)

    def receive(self, source: int, tag: int, timeout: float, check, timeout_message: str):
        """The next pickled value `source` sent with `tag`, calling `check()` while none has
        arrived; XlaError(timeout_message) after `timeout` s."""
        st = self.MPI.Status()
        start = time.monotonic()
        while not self.comm.Iprobe(source=source, tag=tag, status=st):
            if check is not None:
                check()
            now = time.monotonic()
            if now > start + timeout:
                raise XlaError(timeout_message)
            _pause(start, now)
        buf = np.empty(st.Get_count(self.MPI.BYTE), np.uint8)
        self.comm.Recv([buf, self.MPI.BYTE], source=source, tag=tag)
        return pickle.loads(buf.tobytes())

class MpiRun(_MpiWaits):
    """The `ReplicaRun` of one rank over MPI: the same interface, and a session kept between the
    calls of one executable on one communicator (`session`).  The set-up is collective and made
    once: a barrier on the user's communicator, a `Dup` of it (the run's own message space) and
    one sub-communicator per replica group.  A call then costs what its collectives cost: the
    run ends by posting a non-blocking barrier that the next call waits for (long complete by
    then), so a rank that failed after its last collective is still reported, at the next call."""

    def __init__(self, base, sites, timeout: float):
        super().__init__(base.Dup(), timeout)
        self.channels: dict = {}
        self._subcomms: dict = {}
        self._sites: dict = {}
        self._end = None
        self.prepare(sites)
        self._routes = self._channel_routes(sites)
        _LIVE[id(self)] = self      # (for the exit notice: held until closed, past its executable)

    # the session -----------------------------------------------------------------------------
    def begin(self, timeout: float) -> None:
        """The start of a call: the previous call's end reached by every rank (or a failure
        named), the call's own state fresh."""
        self.timeout = float(timeout)
        self.failed = self.reason = None
        self.channels = dict(self._routes)      # channels to other ranks; the rest in-process
        if self._end is not None:
            self.wait([self._end], "the end of the previous run")
            self._end = None
        self._sends = [(q, d) for q, d in self._sends if not q.Test()]

    def end(self) -> None:
        """The end of a call: a barrier posted, not waited for (the next call waits), and a
        failure another rank has already reported raised now."""
        self._end = self.comm.Ibarrier()
        self.check_failed(self.rank, "the run", exits=False)

    def close(self) -> None:
        """The end of a session (after a failure).  Its communicators are not freed: a
        collective it abandoned may still be pending on them, and MPI progresses it (at the
        latest in MPI_Finalize) through the communicator (freed, a segfault)."""
        _LIVE.pop(id(self), None)
        self.comm = None

    # collectives ------------------------------------------------------------------------------
    def prepare(self, sites) -> None:
        """Communicators for the replica groups of the program's collectives, made by every rank
        at the start of the session (MPI_Comm_split is collective: made later, a rank that failed
        before reaching a collective would leave the others blocked in it)."""
        from xlair.dialect.ops.collectives import groups_for
        done = set()
        for site in sites:
            groups = site.attrs.get("replica_groups") or ()
            if site.op not in ("all_reduce", "cross_replica_sum", "all_gather", "all_to_all") or not groups:
                continue
            groups = groups_for(Check(site.op), groups, self.n)
            key = tuple(tuple(g) for g in groups)
            if key in done:
                continue
            done.add(key)
            color = next(i for i, g in enumerate(groups) if self.rank in g)
            group = groups[color]
            sub = self.comm.Split(color, group.index(self.rank))
            self._subcomms.setdefault(tuple(group), sub)

    def _channel_routes(self, sites) -> dict:
        """{channel handle: _MpiChannel} for the channels this rank shares with another rank.
        Every rank tells the others (allgather, at the set-up) which channels its program sends
        on and receives on.  A Send on a channel this rank does not receive on goes to the one
        other rank that does; a Recv on a channel this rank does not send on comes from the one
        other rank that does; a channel with both ends on this rank stays in-process (XLA's
        FIFO, as in one process).  More than one candidate rank is an error at the Send or Recv."""
        mine = ({s.attrs["channel_handle"] for s in sites if s.op == "send"},
                {s.attrs["channel_handle"] for s in sites if s.op == "recv"})
        every = self.comm.allgather(mine)
        routes = {}
        for c in mine[0] | mine[1]:
            if c in mine[0] and c in mine[1]:
                continue
            end = 1 if c in mine[0] else 0          # where the other end is: Recvs, or Sends
            peers = [r for r, ends in enumerate(every) if r != self.rank and c in ends[end]]
            if peers:
                routes[c] = _MpiChannel(self, c, peers)
        return routes

    def _subcomm(self, group):
        if list(group) == list(range(self.n)):
            return self.comm
        return self._subcomms[tuple(group)]

    def exchange(self, replica: int, op: str, site, groups: list, value, timeout=None):
        """All values of the group, point to point (pickled; any value, any computation)."""
        group = next(g for g in groups if replica in g)
        data = np.frombuffer(pickle.dumps(value), np.uint8)
        sends = [self.comm.Isend([data, self.MPI.BYTE], dest=r, tag=_P2P_TAG) for r in group if r != replica]
        values = {replica: value}
        for r in group:
            if r != replica:
                msg = f"'xla.{op}' on replica {replica} timed out after {self.timeout:g} s waiting for replica {r}"
                try:
                    values[r] = self.receive(r, _P2P_TAG, self.timeout,
                                             lambda: self.check_failed(replica, f"'xla.{op}'"), msg)
                except XlaError as e:
                    if e.message == msg:
                        self.fail(replica, msg)
                    raise
        self.wait(sends, f"'xla.{op}'", data)
        return [values[r] for r in group], group.index(replica)

    def _plan(self, site, kw):
        """How a call site runs on MPI (a _Plan), worked out at its first call, or None for the
        point-to-point exchange of pickled values."""
        from xlair.dialect.ops.collectives import groups_for, permute_source
        op = site.op
        if op == "collective_permute":
            pairs = kw["source_target_pairs"]
            target = next((t for s, t in pairs if s == self.rank), None)
            return _Plan(op, peers=(target, permute_source(pairs, self.rank)))
        if op not in ("all_reduce", "cross_replica_sum", "all_gather", "all_to_all"):
            return None
        groups = groups_for(Check(op), kw.get("replica_groups", ()), self.n)
        group = next(g for g in groups if self.rank in g)
        kind = None
        if op in ("all_reduce", "cross_replica_sum"):
            kind = "add" if op == "cross_replica_sum" else getattr(kw.get("computation"), "kind", None)
            if kind is None:
                return None
        return _Plan(op, self._subcomm(group), len(group), kind)

    def _mpi_op(self, kind: str, dtype: np.dtype, size: int):
        """MPI's own reduction for `kind` on `dtype` when its result is bit for bit the thread
        replicas' left fold in group order: every integer reduction; and, or, xor of PRED; a
        floating-point sum or product of two values (commutative).  None: gather, then fold."""
        M = self.MPI
        if dtype.kind in "iu":
            return {"add": M.SUM, "mul": M.PROD, "max": M.MAX, "min": M.MIN, "and": M.BAND, "or": M.BOR,
                    "xor": M.BXOR}.get(kind)
        if dtype.kind == "b":
            return {"and": M.LAND, "or": M.LOR, "xor": M.LXOR, "max": M.LOR, "min": M.LAND}.get(kind)
        if dtype.kind in "fc" and size == 2:
            return {"add": M.SUM, "mul": M.PROD}.get(kind)
        return None

    def fast(self, site, hctx, kw):
        """MPI's own collective for a call site when one matches, else None."""
        from xlair.dialect.ops.collectives import NUMPY_REDUCERS, fold
        plan = self._sites.get(site, False)
        if plan is False:
            plan = self._sites[site] = self._plan(site, kw)
        if plan is None:
            return None
        op, sub, size, kind = plan.op, plan.sub, plan.size, plan.kind
        x = kw["operand"]
        if isinstance(x, tuple):
            return None
        x = np.ascontiguousarray(x)
        mpi_type = self.MPI._typedict.get(x.dtype.char)
        if mpi_type is None:
            return None
        what = f"'xla.{op}'"
        if op == "collective_permute":        # point to point, on the program's buffers
            target, source = plan.peers
            out = (hctx.new_array or np.empty_like)(x)
            reqs = []
            if source is None:
                out[...] = 0
            else:
                reqs.append(self.comm.Irecv([out, mpi_type], source=source, tag=_PERMUTE_TAG))
            if target is not None:
                reqs.append(self.comm.Isend([x, mpi_type], dest=target, tag=_PERMUTE_TAG))
            self.wait(reqs, what, (x, out))
            return out
        if kind is not None:
            mop = self._mpi_op(kind, x.dtype, size)
            if mop is not None:
                out = (hctx.new_array or np.empty_like)(x)     # (the program's own buffer, on the CPU)
                self.wait([sub.Iallreduce([x, mpi_type], [out, mpi_type], op=mop)], what, (x, out))
                return out
            parts = np.empty((size,) + x.shape, x.dtype)        # gather, then the left fold
            self.wait([sub.Iallgather([x, mpi_type], [parts, mpi_type])], what, (x, parts))
            return fold(list(parts), NUMPY_REDUCERS[kind])
        if op == "all_gather":
            dim = kw["all_gather_dim"]
            if dim == 0 and hctx.new_array is not None:    # the parts land in the result as they are
                parts = hctx.new_array(np.empty((size * x.shape[0],) + x.shape[1:], x.dtype))
                self.wait([sub.Iallgather([x, mpi_type], [parts, mpi_type])], what, (x, parts))
                return parts
            parts = np.empty((size,) + x.shape, x.dtype)
            self.wait([sub.Iallgather([x, mpi_type], [parts, mpi_type])], what, (x, parts))
            return np.concatenate(list(parts), axis=dim)
        if op == "all_to_all":
            k = kw["split_count"]
            blocks = np.ascontiguousarray(np.stack(np.split(x, k, axis=kw["split_dimension"])))
            recv = np.empty_like(blocks)
            self.wait([sub.Ialltoall([blocks, mpi_type], [recv, mpi_type])], what, (blocks, recv))
            return np.concatenate(list(recv), axis=kw["concat_dimension"])
        return None


#: the MPI sessions of each executable on this rank: {communicator handle: MpiRun}
_SESSIONS: "weakref.WeakKeyDictionary" = None
#: a start barrier on a user communicator that timed out, still pending: the next session
#: set-up on that communicator waits for it rather than posting another (MPI matches collectives
#: in order; a second one would pair with the other ranks' next barrier)
_PENDING_START: dict = {}


def _session(exe, comm: "MpiComm", timeout: float) -> MpiRun:
    global _SESSIONS
    import weakref
    if _SESSIONS is None:
        _SESSIONS = weakref.WeakKeyDictionary()
        import atexit
        atexit.register(_notify_exit)     # (runs before mpi4py's own MPI_Finalize, registered earlier)
    mine = _SESSIONS.setdefault(exe, {})
    key = comm.comm.py2f()
    run = mine.get(key)
    if run is not None:
        return run
    start = _PENDING_START.pop(key, None) or comm.comm.Ibarrier()
    try:        # all ranks present before the collective set-up (which cannot time out)
        _MpiWaits(comm.comm, timeout).wait([start], "the start of the run")
    except XlaError:
        _PENDING_START[key] = start
        raise XlaError(f"replicated run of {exe.name}: not every rank started the run within {timeout:g} s "
                       f"(replica {comm.rank})") from None
    run = mine[key] = MpiRun(comm.comm, exe._sites, timeout)
    return run


#: the sessions not closed, by id (the exit notice reaches their peers)
_LIVE: dict = {}
#: MPI requests that may still be in flight, with their buffers: error messages of dropped
#: sessions and collectives abandoned by a failure (the buffers must outlive them)
_IN_FLIGHT: list = []


def _notify_exit() -> None:
    """At the exit of this process: every peer of a live session is told, so that a rank still
    waiting for this one in a collective raises an XlaError naming it rather than timing out."""
    sends = []
    for run in list(_LIVE.values()):
        if run.comm is not None and run.failed is None:
            run.fail(run.rank, f"the process of rank {run.rank} exited", exited=True)
            sends += run._sends
    deadline = time.monotonic() + 1.0
    while sends and time.monotonic() < deadline:
        sends = [(q, d) for q, d in sends if not q.Test()]
        time.sleep(0.001)
    # Requests still in flight (collectives abandoned by a failure) hold buffers of the program:
    # MPI is finalized now, and they are released while IREE's runtime is alive (released in the
    # interpreter's teardown, after it, they crashed the exit).  Without such requests mpi4py
    # finalizes MPI itself, after this.
    _IN_FLIGHT[:] = [(q, d) for q, d in _IN_FLIGHT if not all(r.Test() for r in q)]
    if _IN_FLIGHT:
        from mpi4py import MPI
        if not MPI.Is_finalized():
            MPI.Finalize()
        _IN_FLIGHT.clear()


def _drop(exe, comm: "MpiComm") -> None:
    run = (_SESSIONS or {}).get(exe, {}).pop(comm.comm.py2f(), None)
    if run is not None:
        _IN_FLIGHT[:] = [(q, d) for q, d in _IN_FLIGHT + [([q], d) for q, d in run._sends]
                            if not all(r.Test() for r in q)]
        run.close()


def run_mpi(exe, comm, args, timeout: float):
    if not isinstance(comm, MpiComm):
        comm = mpi(comm)
    if comm.size != exe.replicas:
        raise XlaError(f"executable {exe.name} was compiled for {exe.replicas} replicas; the MPI "
                       f"communicator has {comm.size} ranks")
    if not isinstance(args, (list, tuple)):
        raise XlaError(f"run_on_rank takes the rank's arguments as a list or tuple; got {type(args).__name__}")
    vals = check_args(exe.parameter_shapes, args, f"executable {exe.name} replica {comm.rank}", arrays=True)
    run = _session(exe, comm, timeout)
    try:
        run.begin(timeout)
    except XlaError:
        _drop(exe, comm)
        r, msg = run.reason or (comm.rank, "timed out")
        raise XlaError(f"replicated run of {exe.name} failed on replica {r} (in its previous run): {msg}") from None
    try:
        out = exe._invoke(comm.rank, vals, run)
    except BaseException as e:      # noqa: BLE001
        f = run.reason or run._poll_error()
        if f is None or f[0] == comm.rank:
            run.fail(comm.rank, _message(e))
        _drop(exe, comm)
        if f is not None and f[0] != comm.rank:
            raise XlaError(f"replicated run of {exe.name} failed on replica {f[0]}: {f[1]}") from None
        raise XlaError(f"replicated run of {exe.name} failed on replica {comm.rank}: {_message(e)}") from None
    try:
        run.end()
    except XlaError:
        _drop(exe, comm)
        r, msg = run.reason
        raise XlaError(f"replicated run of {exe.name} failed on replica {r}: {msg}") from None
    return out


# ----------------------------------------------------------------------------------------
# the Executable's methods
# ----------------------------------------------------------------------------------------
def run_replicated(self, args_per_replica, timeout: float | None = None) -> list:
    """Run the N replicas the executable was compiled for (`replicas=N`), each in its own
    thread and VM context; returns the list of their results.  If a replica fails, the
    call raises XlaError naming it (the others stop at their next wait); no wait lasts
    longer than `timeout` (default `self.timeout`)."""
    return run_threads(self, args_per_replica, self.timeout if timeout is None else timeout)


def run_on_rank(self, comm, args, timeout: float | None = None):
    """Run this MPI rank's replica (replica id = rank) with `args`; collectives go through
    MPI (xlair.replicas.mpi()).  Every rank raises if any rank fails."""
    return run_mpi(self, comm, args, self.timeout if timeout is None else timeout)


for _method in (run_replicated, run_on_rank):
    _method.__qualname__ = f"Executable.{_method.__name__}"
    setattr(Executable, _method.__name__, _method)
del _method
