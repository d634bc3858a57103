"""Run by tests/e2e/test_mpi.py under `mpirun -n 3`: every rank runs an AllReduce program once;
then rank 2 exits, and ranks 0 and 1 call the program again: their call must fail with an
XlaError naming replica 2, well within the timeout, never hang.  Prints `RANK <r> OK` or
`RANK <r> FAIL <why>`."""
import sys
import time

import numpy as np

import xlair as xla
from xlair import F32, Shape
from xlair import ops as O


def main():
    comm = xla.replicas.mpi()
    r = comm.rank
    add = xla.Builder("add")
    O.add(add.parameter(0, Shape(F32, ())), add.parameter(1, Shape(F32, ())))
    b = xla.Builder("sum")
    O.all_reduce(b.parameter(0, Shape(F32, (4,))), add.build())
    exe = xla.compile(b.build(), "cpu", replicas=comm.size)
    exe.timeout = 30
    x = np.full(4, r + 1, np.float32)
    got = exe.run_on_rank(comm, [x])
    if not np.array_equal(got, np.full(4, 6, np.float32)):
        print(f"RANK {r} FAIL first call gave {got}", flush=True)
        return 0
    if r == 2:
        print(f"RANK {r} OK (exiting)", flush=True)
        sys.exit(0)
    start = time.monotonic()
    try:
        exe.run_on_rank(comm, [x])
        why = "the call after rank 2 exited did not fail"
    except xla.XlaError as e:
        took = time.monotonic() - start
        why = None if "replica 2" in str(e) and took < 15 else f"reported after {took:.1f} s as {e}"
    print(f"RANK {r} {'OK' if why is None else 'FAIL ' + why}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
