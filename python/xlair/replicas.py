"""Running N replicas of one program.

* Threads in one process: `exe.run_replicated([args_0, ..., args_{N-1}])` (exe compiled with
  `replicas=N`).  Each replica is its own IREE invocation in its own VM context (thread
  `xlair-replica-<r>`); their collectives meet in an `effects.ReplicaRun` (a rendezvous keyed by
  call site and per-replica call count), Send/Recv channels are the run's own.
* MPI: under `mpirun -n N python prog.py`, `comm = xlair.replicas.mpi()` and
  `exe.run_on_rank(comm, args)` run the rank's replica (replica id = rank).  Collectives use
  MPI's own where they match: Allreduce (SUM / PROD / MAX / MIN computations), Allgather
  (AllGather), Alltoall (AllToAll), on a communicator split by replica group; other
  computations and CollectivePermute go point to point (Isend / Irecv).  Every MPI wait is
  non-blocking and polled, with the timeout.  A rank that fails tells the others (a message on
  a reserved tag) before raising; they raise at their next wait, naming it, and every rank
  checks at the end of the run, so all ranks raise.  Send/Recv channels stay within a
  process (a rank's own channel namespace).

A run that fails raises `XlaError` naming the failed replica; no wait lasts longer than the
timeout (Executable.timeout, default 60 s).

`Executable.run_replicated` and `Executable.run_on_rank` are set here (at the end), as xlair.ops
sets the operators of `Op`: this module runs the replicas of an Executable, the runtime knows
nothing of it.
"""
from __future__ import annotations

import pickle
import threading
import time

import numpy as np

from xlair.dialect.checks import Check, XlaError

from .effects import ReplicaRun
from .runtime import Executable
from .values import check_args

_JOIN_MARGIN = 30.0


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
        vals.append(check_args(exe.parameter_shapes, args, f"executable {exe.name} replica {r}"))
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
        raise XlaError(f"replicated run of {exe.name} failed on replica {first}: {_message(errors[first])}")
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


class MpiRun:
    """The `ReplicaRun` of one rank: the same interface, over MPI."""

    def __init__(self, comm, timeout: float):
        from mpi4py import MPI
        self.MPI = MPI
        self.comm = comm
        self.n = comm.Get_size()
        self.rank = comm.Get_rank()
        self.timeout = float(timeout)
        self.failed = None
        self.channels: dict = {}
        self._subcomms: dict = {}
        self._counts: dict = {}

    # failures -------------------------------------------------------------------------------
    def fail(self, replica: int, message: str) -> None:
        if self.failed is None:
            self.failed = (replica, message)
        if replica == self.rank:
            data = pickle.dumps((replica, message[:2000]))
            for r in range(self.n):
                if r != self.rank:
                    self.comm.Isend([np.frombuffer(data, np.uint8), self.MPI.BYTE], dest=r, tag=_ERROR_TAG)

    def _poll_error(self):
        st = self.MPI.Status()
        if self.comm.Iprobe(source=self.MPI.ANY_SOURCE, tag=_ERROR_TAG, status=st):
            buf = np.empty(st.Get_count(self.MPI.BYTE), np.uint8)
            self.comm.Recv([buf, self.MPI.BYTE], source=st.Get_source(), tag=_ERROR_TAG)
            r, msg = pickle.loads(buf.tobytes())
            if self.failed is None:
                self.failed = (r, msg)
        if self.failed is not None and self.failed[0] != self.rank:
            return self.failed
        return None

    def check_failed(self, replica: int, what: str) -> None:
        f = self._poll_error()
        if f is not None:
            raise XlaError(f"{what} on replica {replica} stopped: replica {f[0]} failed: {f[1]}")

    def wait(self, reqs, what: str) -> None:
        """Wait for MPI requests, polling for failures of other ranks, up to the timeout."""
        deadline = time.monotonic() + self.timeout
        reqs = [r for r in reqs if r is not None]
        while not self.MPI.Request.Testall(reqs):
            self.check_failed(self.rank, what)
            if time.monotonic() > deadline:
                msg = f"{what} on replica {self.rank} timed out after {self.timeout:g} s"
                self.fail(self.rank, msg)
                raise XlaError(msg)
            time.sleep(0.0002)

    # collectives ------------------------------------------------------------------------------
    def prepare(self, sites) -> None:
        """Communicators for the replica groups of the program's collectives, made by every rank
        at the start of the run (MPI_Comm_split is collective: made later, a rank that failed
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

    def _subcomm(self, group):
        if list(group) == list(range(self.n)):
            return self.comm
        return self._subcomms[tuple(group)]

    def exchange(self, replica: int, op: str, site, groups: list, value, timeout=None):
        """All values of the group, point to point (pickled; any value, any computation)."""
        group = next(g for g in groups if replica in g)
        seq = self._counts.get(site, 0)
        self._counts[site] = seq + 1
        data = np.frombuffer(pickle.dumps(value), np.uint8)
        sends = [self.comm.Isend([data, self.MPI.BYTE], dest=r, tag=_P2P_TAG) for r in group if r != replica]
        values = {replica: value}
        for r in group:
            if r == replica:
                continue
            st = self.MPI.Status()
            deadline = time.monotonic() + self.timeout
            while not self.comm.Iprobe(source=r, tag=_P2P_TAG, status=st):
                self.check_failed(replica, f"'xla.{op}'")
                if time.monotonic() > deadline:
                    msg = f"'xla.{op}' on replica {replica} timed out after {self.timeout:g} s waiting for replica {r}"
                    self.fail(replica, msg)
                    raise XlaError(msg)
                time.sleep(0.0002)
            buf = np.empty(st.Get_count(self.MPI.BYTE), np.uint8)
            self.comm.Recv([buf, self.MPI.BYTE], source=r, tag=_P2P_TAG)
            values[r] = pickle.loads(buf.tobytes())
        self.wait(sends, f"'xla.{op}'")
        return [values[r] for r in group], group.index(replica)

    def fast(self, site, hctx, kw):
        """MPI's own collective for a call site when one matches, else None."""
        from xlair.dialect.ops.collectives import groups_for
        op = site.op
        if op not in ("all_reduce", "cross_replica_sum", "all_gather", "all_to_all"):
            return None
        groups = groups_for(Check(op), kw.get("replica_groups", ()), self.n)
        group = next(g for g in groups if self.rank in g)
        x = kw["operand"]
        if isinstance(x, tuple):
            return None
        x = np.ascontiguousarray(x)
        mpi_type = self.MPI._typedict.get(x.dtype.char)
        if mpi_type is None or x.dtype == np.bool_:
            return None
        sub = self._subcomm(group)
        if op in ("all_reduce", "cross_replica_sum"):
            kind = "add" if op == "cross_replica_sum" else getattr(kw.get("computation"), "kind", None)
            mop = {"add": self.MPI.SUM, "mul": self.MPI.PROD, "max": self.MPI.MAX, "min": self.MPI.MIN}.get(kind)
            if mop is None or x.dtype.kind == "c" and kind in ("max", "min"):
                return None
            out = np.empty_like(x)
            self.wait([sub.Iallreduce([x, mpi_type], [out, mpi_type], op=mop)], f"'xla.{op}'")
            return out
        if op == "all_gather":
            dim = kw["all_gather_dim"]
            parts = np.empty((len(group),) + x.shape, x.dtype)
            self.wait([sub.Iallgather([x, mpi_type], [parts, mpi_type])], f"'xla.{op}'")
            return np.concatenate(list(parts), axis=dim)
        if op == "all_to_all":
            k = kw["split_count"]
            blocks = np.ascontiguousarray(np.stack(np.split(x, k, axis=kw["split_dimension"])))
            recv = np.empty_like(blocks)
            self.wait([sub.Ialltoall([blocks, mpi_type], [recv, mpi_type])], f"'xla.{op}'")
            return np.concatenate(list(recv), axis=kw["concat_dimension"])
        return None

    def finish(self) -> None:
        """A barrier that also reports a failure of any rank."""
        self.wait([self.comm.Ibarrier()], "the end of the run")
        self.check_failed(self.rank, "the run")


def run_mpi(exe, comm, args, timeout: float):
    if not isinstance(comm, MpiComm):
        comm = mpi(comm)
    if comm.size != exe.replicas:
        raise XlaError(f"executable {exe.name} was compiled for {exe.replicas} replicas; the MPI "
                       f"communicator has {comm.size} ranks")
    if not isinstance(args, (list, tuple)):
        raise XlaError(f"run_on_rank takes the rank's arguments as a list or tuple; got {type(args).__name__}")
    vals = check_args(exe.parameter_shapes, args, f"executable {exe.name} replica {comm.rank}")
    start = MpiRun(comm.comm, timeout)
    try:        # all ranks present before the collective set-up (which cannot time out)
        start.wait([comm.comm.Ibarrier()], "the start of the run")
    except XlaError:
        raise XlaError(f"replicated run of {exe.name}: not every rank started the run within {timeout:g} s "
                       f"(replica {comm.rank})") from None
    run = MpiRun(comm.comm.Dup(), timeout)
    run.prepare(exe._sites)
    try:
        out = exe._invoke(comm.rank, vals, run)
    except BaseException as e:      # noqa: BLE001
        f = run._poll_error()
        if f is not None and f[0] != comm.rank:
            raise XlaError(f"replicated run of {exe.name} failed on replica {f[0]}: {f[1]}") from None
        run.fail(comm.rank, _message(e))
        raise XlaError(f"replicated run of {exe.name} failed on replica {comm.rank}: {_message(e)}") from None
    try:
        run.finish()
    except XlaError:
        r, msg = run.failed
        raise XlaError(f"replicated run of {exe.name} failed on replica {r}: {msg}") from None
    for c in run._subcomms.values():
        c.Free()
    run.comm.Free()
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
