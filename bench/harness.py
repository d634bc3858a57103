"""Shared timing harness of the benchmarks: median of repeated runs after warm-up, side by side
with numpy and (when installed: the `bench` extra) XLA:CPU through jax.jit."""
from __future__ import annotations

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


def xla_cpu(fn: Callable, *args):
    """A jax.jit-compiled callable on the CPU that blocks until its result is ready, or None."""
    if not jax_available():
        return None
    import jax
    jax.config.update("jax_enable_x64", True)
    jf = jax.jit(fn, backend="cpu")
    dev_args = [jax.device_put(a) for a in args]

    def run():
        return jax.block_until_ready(jf(*dev_args))
    return run


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"


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
