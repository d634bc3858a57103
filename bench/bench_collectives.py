"""The collectives section of RESULTS.md (issue 18): AllReduce (sum), AllGather and
CollectivePermute (a ring) of f32 arrays from 4 KB to 16 MB, each a one-op program compiled
with replicas=2, run three ways side by side: as 2 replicas in threads of one process
(`run_replicated`), on 2 MPI ranks (`mpirun -n 2`, `run_on_rank`), and mpi4py's own
Allreduce / Allgather / Sendrecv on the same buffers (the floor).  Per call: numpy in and out,
the median of calls after a warm-up.

Run: .venv/bin/python bench/bench.py --section collectives   (the MPI part re-runs this file
under mpirun as its worker)
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from harness import cpu_summary  # noqa: E402

TITLE = "## Collectives: replicas in threads and on MPI ranks, beside mpi4py"
OPS = ("all_reduce", "all_gather", "collective_permute")
SIZES = (4 << 10, 64 << 10, 1 << 20, 16 << 20)        # bytes of each replica's operand


def program(op: str, n: int, replicas: int):
    import xlair as xla
    from xlair import F32, Shape
    from xlair import ops as O
    b = xla.Builder(op)
    x = b.parameter(0, Shape(F32, (n,)), "x")
    if op == "all_reduce":
        add = xla.Builder("add")
        O.add(add.parameter(0, Shape(F32, ())), add.parameter(1, Shape(F32, ())))
        O.all_reduce(x, add.build())
    elif op == "all_gather":
        O.all_gather(x, 0, replicas)
    else:
        O.collective_permute(x, [(k, (k + 1) % replicas) for k in range(replicas)])
    return xla.compile(b.build(), "cpu", replicas=replicas)


def _calls(nbytes: int, quick: bool) -> int:
    n = max(5, min(300, int(2e8 / max(nbytes, 1))))
    return max(3, n // 5) if quick else n


def _median(fn, calls: int) -> float:
    for _ in range(2):
        fn()
    ts = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def threads(quick: bool) -> dict:
    out = {}
    for op in OPS:
        for size in SIZES:
            n = size // 4
            exe = program(op, n, 2)
            args = [[np.full(n, r + 1, np.float32)] for r in range(2)]
            out[f"{op} {size}"] = _median(lambda: exe.run_replicated(args), _calls(size, quick))
    return out


def worker(path: str, quick: bool) -> None:
    """Under mpirun: every op and size through run_on_rank and through mpi4py; rank 0 writes."""
    import xlair as xla
    from mpi4py import MPI
    comm = xla.replicas.mpi()
    w, r, k = MPI.COMM_WORLD, comm.rank, comm.size
    out = {}
    for op in OPS:
        for size in SIZES:
            n = size // 4
            exe = program(op, n, k)
            x = np.full(n, r + 1, np.float32)
            calls = _calls(size, quick)
            w.Barrier()
            t_x = _median(lambda: exe.run_on_rank(comm, [x]), calls)
            xd = xla.device_put(x)
            w.Barrier()
            t_d = _median(lambda: exe.run_on_rank(comm, [xd]), calls)
            if op == "all_reduce":
                o = np.empty_like(x)
                raw = lambda: w.Allreduce(x, o)          # noqa: E731
            elif op == "all_gather":
                o = np.empty(n * k, np.float32)
                raw = lambda: w.Allgather(x, o)          # noqa: E731
            else:
                o = np.empty_like(x)
                raw = lambda: w.Sendrecv(x, dest=(r + 1) % k, recvbuf=o, source=(r - 1) % k)  # noqa: E731
            w.Barrier()
            t_m = _median(raw, calls)
            out[f"{op} {size}"] = (w.allreduce(t_x, op=MPI.MAX), w.allreduce(t_m, op=MPI.MAX),
                                   w.allreduce(t_d, op=MPI.MAX))
    if r == 0:
        pathlib.Path(path).write_text(json.dumps(out))


def mpi(quick: bool) -> dict | None:
    """The MPI figures (run in `mpirun -n 2` children), or None without mpirun or mpi4py."""
    mpirun = shutil.which("mpirun")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    if mpirun is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mpi.json")
        cmd = [mpirun, "--oversubscribe", "--allow-run-as-root", "-n", "2", sys.executable, __file__,
               "--worker", path] + (["--quick"] if quick else [])
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0 or not os.path.exists(path):
            raise RuntimeError(f"the MPI worker failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        return {k: tuple(v) for k, v in json.loads(pathlib.Path(path).read_text()).items()}


def run(quick: bool = False) -> dict:
    t0 = time.perf_counter()
    date = time.strftime("%Y-%m-%d %H:%M %Z")
    th = threads(quick)
    mp = mpi(quick)
    return {"threads": th, "mpi": mp, "date": date, "elapsed": time.perf_counter() - t0, "quick": quick}


def _us(t: float | None) -> str:
    if t is None:
        return "n/a"
    return f"{t * 1e6:.1f}" if t < 1e-3 else f"{t * 1e6:.0f}"


def _size(b: int) -> str:
    return f"{b >> 20} MB" if b >= 1 << 20 else f"{b >> 10} KB"


def section_lines(res: dict) -> list[str]:
    mp = res["mpi"]
    L = [TITLE, "",
         f"Measured {res['date']}; section took {res['elapsed']:.0f} s"
         f"{' (--quick)' if res['quick'] else ''}.", "", f"CPU: {cpu_summary()}.", "",
         "Per call in microseconds; 2 replicas.  Threads and MPI ranks: numpy in and out; MPI ranks, "
         "device-resident: the operand an `xla.Array` (`xla.device_put` once), the result left an "
         "`xla.Array`, as mpi4py works on buffers already in memory.  MPI: `mpirun -n 2` on this machine "
         "(shared memory), the slower rank's median; bandwidth is the operand's bytes per call.", "",
         "| op | operand | threads us | MPI ranks us | MPI ranks, device-resident us | mpi4py us | MPI/mpi4py "
         "| device-resident/mpi4py | MPI GB/s | device-resident GB/s | mpi4py GB/s |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for op in OPS:
        for size in SIZES:
            key = f"{op} {size}"
            t_th = res["threads"].get(key)
            t_x, t_m, t_d = (tuple(mp.get(key, ())) + (None,) * 3)[:3] if mp else (None, None, None)
            ratio = (lambda t: f"{t / t_m:.2f}" if t and t_m else "n/a")
            gbs = (lambda t: f"{size / t / 1e9:.2f}" if t else "n/a")
            L.append(f"| {op} | {_size(size)} | {_us(t_th)} | {_us(t_x)} | {_us(t_d)} | {_us(t_m)} | "
                     f"{ratio(t_x)} | {ratio(t_d)} | {gbs(t_x)} | {gbs(t_d)} | {gbs(t_m)} |")
    if mp is None:
        L += ["", "MPI columns: n/a (no mpirun or mpi4py here)."]
    L.append("")
    return L


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(sys.argv[sys.argv.index("--worker") + 1], "--quick" in sys.argv)
    else:
        res = run("--quick" in sys.argv)
        print("\n".join(section_lines(res)))
