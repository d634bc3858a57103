"""Run by tests/e2e/test_mpi.py under `mpirun -n 2`: Send/Recv between ranks that run different
programs (rank 0: y = 2x, Send(y, 5), z = Recv(6), result z; rank 1: v = Recv(5), Send(v + 1, 6),
result v), three calls in a row (FIFO, in order); then one program on both ranks whose channel
has both ends in it (in-process, as in one process).  Values checked against hand-derived ones.
Prints `RANK <r> OK` or `RANK <r> FAIL <why>`."""
import sys

import numpy as np

import xlair as xla
from xlair import F32, Shape
from xlair import ops as O


def stage_a():
    b = xla.Builder("stage_a")
    x = b.parameter(0, Shape(F32, (3,)))
    tok = O.send(O.mul(x, O.constant(b, np.float32(2)), broadcast_dimensions=()), 5)
    O.recv(b, Shape(F32, (3,)), 6, token=tok)          # after the Send (the token orders them)
    return b.build()


def stage_b():
    b = xla.Builder("stage_b")
    b.parameter(0, Shape(F32, (3,)))
    v = O.recv(b, Shape(F32, (3,)), 5)
    tok = O.send(O.add(v, O.constant(b, np.float32(1)), broadcast_dimensions=()), 6)
    O.tuple([v, tok])
    return b.build()


def check(comm):
    r = comm.rank
    exe = xla.compile(stage_a() if r == 0 else stage_b(), "cpu", replicas=2)
    exe.timeout = 30
    for k in range(3):
        x = np.array([1, 2, 3], np.float32) + 10 * k
        got = exe.run_on_rank(comm, [x])
        got = got[0] if isinstance(got, tuple) else got
        want = 2 * x + 1 if r == 0 else 2 * x
        if not np.array_equal(np.asarray(got), want):
            return f"call {k}: got {got}, want {want}"
    # one program, both ends in it: in-process on each rank
    b = xla.Builder("loopback")
    x = b.parameter(0, Shape(F32, (2,)))
    O.recv(b, Shape(F32, (2,)), 9, token=O.send(x, 9))
    exe = xla.compile(b.build(), "cpu", replicas=2)
    got = exe.run_on_rank(comm, [np.array([r, -r], np.float32)])
    got = got[0] if isinstance(got, tuple) else got
    if not np.array_equal(np.asarray(got), np.array([r, -r], np.float32)):
        return f"loopback: got {got}"
    return None


if __name__ == "__main__":
    from mpi_program import main
    sys.exit(main(check))
