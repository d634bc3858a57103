"""Shared timing harness of the benchmarks: median of repeated runs after warm-up, side by side
with numpy and (when installed: the `bench` extra) XLA:CPU through jax.jit."""
from __future__ import annotations

import math
import os
import pathlib
import platform
import statistics
import time
from typing import Callable

import numpy as np

RESULTS = pathlib.Path(__file__).parent / "results"


def median_time(fn: Callable[[], object], repeats: int = 10, warmup: int = 2, min_time: float = 0.0) -> float:
    """Median wall time of `fn()` in seconds (results are forced to host memory by `fn`)."""
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < repeats or time.perf_counter() - start < min_time:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def jax_available() -> bool:
    try:
        import jax  # noqa: F401
        return True
    except ImportError:
        return False


def xla_cpu(fn: Callable, *args, numpy_io: bool = False):
    """A jax.jit-compiled callable on the CPU that blocks until its result is ready, or None.
    By default its arguments are placed on the device first (jax.device_put) and its results
    stay there; with `numpy_io`, it takes the numpy arrays and returns numpy arrays
    (np.asarray of every output leaf, which waits for the result), as xlair's `__call__` does."""
    if not jax_available():
        return None
    import jax
    jax.config.update("jax_enable_x64", True)
    jf = jax.jit(fn, backend="cpu")
    if numpy_io:
        leaves = jax.tree_util.tree_leaves

        def run_numpy():
            return [np.asarray(o) for o in leaves(jf(*args))]
        return run_numpy
    dev_args = [jax.device_put(a) for a in args]

    def run():
        return jax.block_until_ready(jf(*dev_args))
    return run


def cpu_name() -> str:
    """The CPU as /proc/cpuinfo's model name says, else as Python's platform module does."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    return f"{cpu_name()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"


def cpu_summary() -> str:
    """The CPU as /proc/cpuinfo names it, its SIMD flags (avx2, avx512f, amx) and the CPU LLVM
    resolves `host` to (what xlair compiles for: `--iree-llvmcpu-target-cpu=host`)."""
    name, flags = platform.processor() or platform.machine(), set()
    try:
        for line in open("/proc/cpuinfo"):
            key = line.split(":", 1)[0].strip()
            if key == "model name" and not flags:
                name = line.split(":", 1)[1].strip()
            elif key == "flags":
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    simd = [f for f in ("avx2", "avx512f") if f in flags]
    amx = sorted(f for f in flags if f.startswith("amx"))
    simd.append("amx (" + ", ".join(amx) + ")" if amx else "no amx")
    try:
        from xlair import cpus
        llvm = cpus.host().cpu
    except Exception as e:      # noqa: BLE001  (IREE missing or failing: say so, do not stop the run)
        llvm = f"unknown ({type(e).__name__})"
    return f"{name}, {os.cpu_count()} CPUs; SIMD: {', '.join(simd)}; LLVM host CPU: {llvm}"


def fmt_ms(t: float) -> str:
    """Seconds as milliseconds with 3 significant-ish digits."""
    return f"{t * 1e3:.3f}" if t < 0.01 else f"{t * 1e3:.2f}" if t < 1 else f"{t * 1e3:.0f}"


def geomean(xs) -> float:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def write_table(name: str, title: str, header: list[str], rows: list[list], notes: str = "") -> pathlib.Path:
    """Write bench/results/<name>.md and return its path."""
    RESULTS.mkdir(exist_ok=True)
    lines = [f"# {title}", "", f"Machine: {machine()}", f"Date: {time.strftime('%Y-%m-%d %H:%M')}", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(str(x) for x in r) + " |")
    if notes:
        lines += ["", notes]
    p = RESULTS / f"{name}.md"
    p.write_text("\n".join(lines) + "\n")
    return p


def device_call(exe, args):
    """The compiled function on inputs already in device buffers (what XLA:CPU is timed on:
    jax.device_put before, block_until_ready after); results stay on the device."""
    import iree.runtime as rt
    from xlair.runtime import _to_device
    ins = rt.VmVariantList(len(args))
    for a, s in zip(args, exe._leaves_in):
        ins.push_ref(_to_device(exe._device, a, s))
    n_out = len(exe._leaves_out)

    def run():
        outs = rt.VmVariantList(n_out)
        exe._ctx.vm_context.invoke(exe._fn, ins, outs)
        return outs
    return run


def array_call(exe, args):
    """The executable on `xla.Array`s placed on its device once (`xla.device_put`), results left
    there as Arrays: xlair's device-resident call, what XLA:CPU is timed on (jax.device_put
    before, block_until_ready after)."""
    import xlair as xla
    arrays = [xla.device_put(a, exe.target.name) for a in args]
    return lambda: exe(*arrays)


def interleaved(fns: dict, rounds: int = 15, batch_time: float = 0.02, max_time: float | None = None,
                min_rounds: int = 3) -> dict:
    """Per-call time of each contestant: median over `rounds` rounds, each round timing every
    contestant in turn (one batch of calls lasting about `batch_time`), so that load from
    other work on the machine falls on all contestants alike; the order rotates from round to
    round and a short pause separates contestants (XLA:CPU's worker threads spin for a while
    after each call and would otherwise slow down whoever comes next on 2 cores).  A warm-up call and a
    calibration batch come first.  With `max_time` (seconds), no new round starts once that
    much time has passed since the first round began, but at least `min_rounds` are run.
    Returns {name: {"median", "min", "times"}} in seconds."""
    batch = {}
    for k, fn in fns.items():
        fn()                                    # warm-up (first-call costs)
        t = time.perf_counter()
        fn()
        one = max(time.perf_counter() - t, 1e-7)
        batch[k] = max(1, min(10_000, int(batch_time / one)))
    times = {k: [] for k in fns}
    names = list(fns)
    start = time.perf_counter()
    for r in range(rounds):
        if max_time is not None and r >= min_rounds and time.perf_counter() - start > max_time:
            break
        for k in names[r % len(names):] + names[:r % len(names)]:     # each goes first in turn
            fn, n = fns[k], batch[k]
            time.sleep(0.005)       # let the previous contestant's spinning worker threads park
            t = time.perf_counter()
            for _ in range(n):
                fn()
            times[k].append((time.perf_counter() - t) / n)
    return {k: {"median": statistics.median(v), "min": min(v), "times": v} for k, v in times.items()}
