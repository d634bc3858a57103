"""The standing benchmark suite (issue 9): every workload on xlair (IREE, CPU), numpy and XLA:CPU
(jax.jit) side by side in one run, each result checked against numpy, written to
bench/RESULTS.md; and (the models section, bench/bench_models.py) every program of the
real-program suite on xlair.jit and jax.jit, per call and cold compile; and (the pjrt section,
bench/bench_pjrt.py) JAX's per-call overhead on the xlair PJRT plugin against XLA:CPU, with the
plugin's C shim and with its ctypes table.

Run: make bench   (or .venv/bin/python bench/bench.py [--section ops|models|collectives|pjrt] [--quick]
                  [--only NAME ...])

Timing (bench/harness.py `interleaved`): after a warm-up call, every round times each
contestant in turn (a batch of calls of ~20 ms), and a contestant's time is the median over
the rounds; interleaving puts the load of other work on the machine on all contestants alike.
xlair is timed two ways through `Executable.__call__`: on `xla.Array`s (`xla.device_put` once)
with the results left on the device as Arrays (what XLA:CPU is timed on: jax.device_put
before, block_until_ready after; the first ratio uses this), and with numpy in and out (as
XLA:CPU is too; the second ratio).
"""
from __future__ import annotations

import argparse
import atexit
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

# numpy's OpenBLAS threads spin for ~2^28 cycles after each call (its THREAD_TIMEOUT), taking
# both cores from whichever contestant runs next: in one interleaved run, xlair's conv2d took
# 1.44 ms median with the numpy contestant present and 0.74 ms without.  Spinning 2^4 cycles
# leaves numpy's own time as it was (1.76 -> 1.80 ms).  Set before numpy loads OpenBLAS.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np  # noqa: E402

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
# A private artifact cache, so that "cold" and "from cache" mean what they say.
os.environ["XLAIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="xlair-bench-cache-")
atexit.register(shutil.rmtree, os.environ["XLAIR_CACHE_DIR"], True)

import xlair as xla  # noqa: E402
from xlair import F32, S32, Shape  # noqa: E402
from xlair import ops as O  # noqa: E402
from xlair.compile import compile_vmfb  # noqa: E402

from harness import (array_call, cpu_summary, device_call, fmt_ms, geomean, interleaved, jax_available,  # noqa: E402
                     xla_cpu)
import bench_collectives  # noqa: E402
import bench_models  # noqa: E402
import bench_pjrt  # noqa: E402
import bench_windows  # noqa: E402
from bench_sort import comparator  # noqa: E402


def scalar_comp(name, fn):
    b = xla.Builder(name)
    fn(b.parameter(0, Shape(F32, ())), b.parameter(1, Shape(F32, ())))
    return b.build()


ADD = scalar_comp("add", O.add)
MAX = scalar_comp("max", O.max)


class Workload:
    """One benchmark: an xlair computation, its inputs, the same function in numpy and in JAX,
    the amount of work (flops or bytes moved) and how its result is checked."""

    def __init__(self, name, comp, args, np_fn, jax_fn, flops=None, bytes_=None, rtol=1e-5, atol=1e-5,
                 exact=False, memory_bound=False):
        self.name, self.comp, self.args, self.np_fn, self.jax_fn = name, comp, args, np_fn, jax_fn
        self.flops, self.bytes, self.rtol, self.atol, self.exact = flops, bytes_, rtol, atol, exact
        self.memory_bound = memory_bound


def check(w: Workload, got, want, who: str):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want), f"{who} {w.name}: {len(got)} results, numpy has {len(want)}"
    for g, x in zip(got, want):
        g, x = np.asarray(g), np.asarray(x)
        assert g.shape == x.shape, f"{who} {w.name}: shape {g.shape}, numpy {x.shape}"
        if w.exact:
            assert np.array_equal(g, x), f"{who} {w.name}: differs from numpy"
        else:
            np.testing.assert_allclose(g, x, rtol=w.rtol, atol=w.atol, err_msg=f"{who} {w.name}")


# ----------------------------------------------------------------------------------------
# workloads
# ----------------------------------------------------------------------------------------
def matmul(rng):
    n = 1024
    a, b_ = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    b = xla.Builder("matmul")
    O.dot(b.parameter(0, Shape(F32, (n, n))), b.parameter(1, Shape(F32, (n, n))))
    return Workload("matmul f32 1024x1024x1024", b.build(), [a, b_], lambda: a @ b_,
                    lambda x, y: x @ y, flops=2 * n ** 3, rtol=1e-4, atol=1e-3)


def conv2d(rng):
    name, comp, args, np_fn, jax_fn, flops, tol = bench_windows.conv_case(rng)
    return Workload("conv2d NHWC 1x56x56x64, 3x3x64x64 SAME", comp, args, np_fn, jax_fn, flops=flops,
                    rtol=tol, atol=tol)


def reduce_sum(rng):
    a = rng.random((4096, 4096), dtype=np.float32)
    b = xla.Builder("sum_axis1")
    O.reduce(b.parameter(0, Shape(F32, a.shape)), O.constant(b, np.float32(0)), ADD, [1])
    return Workload("sum f32[4096,4096] over axis 1", b.build(), [a], lambda: a.sum(axis=1),
                    lambda x: x.sum(axis=1), bytes_=a.nbytes + 4096 * 4, rtol=1e-5, atol=1e-3,
                    memory_bound=True)


def elementwise(rng):
    n = 4 * 1024 * 1024
    a, b_, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    b = xla.Builder("tanh_fma_exp")
    pa, pb, pc = (b.parameter(i, Shape(F32, (n,))) for i in range(3))
    O.mul(O.tanh(O.add(O.mul(pa, pb), pc)), O.exp(O.neg(pa)))

    def jax_fn(x, y, z):
        import jax.numpy as jnp
        return jnp.tanh(x * y + z) * jnp.exp(-x)
    return Workload("tanh(a*b+c)*exp(-a) f32[4M]", b.build(), [a, b_, c],
                    lambda: np.tanh(a * b_ + c) * np.exp(-a), jax_fn, bytes_=4 * n * 4, rtol=1e-5, atol=1e-5,
                    memory_bound=True)


def softmax(rng):
    a = (rng.standard_normal((512, 1024)) * 4).astype(np.float32)
    b = xla.Builder("softmax")
    x = b.parameter(0, Shape(F32, a.shape))
    m = O.reduce(x, O.constant(b, np.float32(-np.inf)), MAX, [1])
    e = O.exp(O.sub(x, m, broadcast_dimensions=[0]))
    s = O.reduce(e, O.constant(b, np.float32(0)), ADD, [1])
    O.div(e, s, broadcast_dimensions=[0])

    def np_fn():
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def jax_fn(x):
        import jax
        return jax.nn.softmax(x, axis=-1)
    return Workload("softmax f32[512,1024] over the last axis", b.build(), [a], np_fn, jax_fn,
                    bytes_=2 * a.nbytes, rtol=1e-5, atol=1e-7, memory_bound=True)


def while_loop(rng):
    x0 = rng.standard_normal(10).astype(np.float32)
    st = Shape.tuple([Shape(S32, ()), Shape(F32, (10,))])
    cb = xla.Builder("cond")
    s = cb.parameter(0, st)
    O.lt(O.get_tuple_element(s, 0), O.constant(cb, np.int32(1000)))
    cond = cb.build()
    bb = xla.Builder("body")
    s = bb.parameter(0, st)
    O.tuple(bb, [O.add(O.get_tuple_element(s, 0), O.constant(bb, np.int32(1))),
                 O.add(O.get_tuple_element(s, 1), O.constant(bb, np.ones(10, np.float32)))])
    body = bb.build()
    b = xla.Builder("while_add")
    x = b.parameter(0, Shape(F32, (10,)))
    O.get_tuple_element(O.while_(cond, body, O.tuple(b, [O.constant(b, np.int32(0)), x])), 1)

    def np_fn():
        v = x0
        for _ in range(1000):
            v = v + np.float32(1)
        return v

    def jax_fn(v):
        import jax
        return jax.lax.fori_loop(0, 1000, lambda i, u: u + 1.0, v)
    return Workload("while: 1000 iterations of x+1, f32[10]", b.build(), [x0], np_fn, jax_fn, exact=True)


def gather(rng):
    name, comp, args, np_fn, jax_fn, _, _ = bench_windows.gather_case(rng)
    out = 10_000 * 64 * 4
    return Workload("gather 10,000 rows of f32[100000,64]", comp, args, np_fn, jax_fn,
                    bytes_=2 * out + 10_000 * 4, exact=True, memory_bound=True)


def sort(rng):
    n = 1_000_000
    a = rng.standard_normal(n).astype(np.float32)
    b = xla.Builder("sort")
    O.sort(b.parameter(0, Shape(F32, (n,))), comparator("lt"), 0)

    def jax_fn(v):
        import jax.numpy as jnp
        return jnp.sort(v)
    return Workload("sort f32[1M]", b.build(), [a], lambda: np.sort(a), jax_fn, bytes_=2 * a.nbytes, exact=True)


def maxpool(rng):
    name, comp, args, np_fn, jax_fn, _, _ = bench_windows.pool_case(rng)
    return Workload("max-pool 2x2/2 f32[8,112,112,64]", comp, args, np_fn, jax_fn,
                    bytes_=args[0].nbytes * 5 // 4, exact=True, memory_bound=True)


B, IN, HID, OUT, LR = 256, 784, 512, 10, 0.05


def mlp_math(xp, x, y, w1, b1, w2, b2):
    """One SGD step of a 2-layer MLP (tanh hidden layer, squared error), backward by hand;
    `xp` is numpy or jax.numpy."""
    h = xp.tanh(x @ w1 + b1)
    d = (h @ w2 + b2) - y
    loss = 0.5 * (d * d).sum() / B
    g = d / B
    gw2, gb2 = h.T @ g, g.sum(axis=0)
    gh = (g @ w2.T) * (1 - h * h)
    gw1, gb1 = x.T @ gh, gh.sum(axis=0)
    return w1 - LR * gw1, b1 - LR * gb1, w2 - LR * gw2, b2 - LR * gb2, loss


def mlp_step(rng):
    args = [rng.standard_normal((B, IN)).astype(np.float32),
            rng.standard_normal((B, OUT)).astype(np.float32),
            (rng.standard_normal((IN, HID)) / np.sqrt(IN)).astype(np.float32),
            np.zeros(HID, np.float32),
            (rng.standard_normal((HID, OUT)) / np.sqrt(HID)).astype(np.float32),
            np.zeros(OUT, np.float32)]
    b = xla.Builder("mlp_step")
    x, y, w1, b1, w2, b2 = (b.parameter(i, Shape(F32, a.shape)) for i, a in enumerate(args))

    def c(v):
        return O.constant(b, np.float32(v))
    t_dot = xla.DotDimensionNumbers((0,), (0,))        # a.T @ c without a transpose
    h = O.tanh(O.add(O.dot(x, w1), b1, broadcast_dimensions=[1]))
    d = O.sub(O.add(O.dot(h, w2), b2, broadcast_dimensions=[1]), y)
    loss = O.mul(O.reduce(O.reshape(O.mul(d, d), [B * OUT]), c(0), ADD, [0]), c(0.5 / B))
    g = O.mul(d, O.broadcast(c(1.0 / B), [B, OUT]))
    gw2 = O.dot_general(h, g, t_dot)
    gb2 = O.reduce(g, c(0), ADD, [0])
    gh = O.mul(O.dot_general(g, w2, xla.DotDimensionNumbers((1,), (1,))),
               O.sub(O.broadcast(c(1), [B, HID]), O.mul(h, h)))
    gw1 = O.dot_general(x, gh, t_dot)
    gb1 = O.reduce(gh, c(0), ADD, [0])

    def step(p, gp):
        return O.sub(p, O.mul(gp, O.broadcast(c(LR), list(args[[w1, b1, w2, b2].index(p) + 2].shape))))
    O.tuple(b, [step(w1, gw1), step(b1, gb1), step(w2, gw2), step(b2, gb2), loss])

    def jax_fn(*a):
        import jax.numpy as jnp
        return mlp_math(jnp, *a)
    flops = 2 * (2 * B * IN * HID) + 3 * (2 * B * HID * OUT)
    return Workload("MLP training step 256x784-512-10 (fwd+bwd+SGD)", b.build(), args,
                    lambda: mlp_math(np, *args), jax_fn, flops=flops, rtol=1e-4, atol=1e-5)


WORKLOADS = [matmul, conv2d, reduce_sum, elementwise, softmax, while_loop, gather, sort, maxpool, mlp_step]


def program_100_ops():
    """A 100-op program (element-wise ops, a matmul every 10 ops, a reduction at the end) for
    the compile-time targets."""
    b = xla.Builder("program_100_ops")
    p, q = b.parameter(0, Shape(F32, (64, 64))), b.parameter(1, Shape(F32, (64, 64)))
    half = O.constant(b, np.full((64, 64), 0.5, np.float32))
    n_ops = 1                                           # the constant
    x = p
    i = 0
    while n_ops < 98:
        kind = i % 10
        if kind == 9:
            x = O.mul(O.dot(x, q), half)
            n_ops += 2
        else:
            x = [lambda v: O.tanh(v), lambda v: O.add(v, q), lambda v: O.mul(v, half), lambda v: O.sub(v, p),
                 lambda v: O.max(v, p), lambda v: O.abs(v), lambda v: O.min(v, q), lambda v: O.neg(v),
                 lambda v: O.sin(v)][kind](x)
            n_ops += 1
        i += 1
    O.reduce(x, O.constant(b, np.float32(0)), ADD, [1])
    n_ops += 2
    assert n_ops == 100, n_ops
    return b.build()


# ----------------------------------------------------------------------------------------
# machine facts
# ----------------------------------------------------------------------------------------
def machine_facts() -> list[str]:
    facts = []
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        kv = {k.strip(): v.strip() for k, v in (ln.split(":", 1) for ln in out.splitlines() if ":" in ln)}
        flags = set(kv.get("Flags", "").split())
        simd = [f for f in ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "avx512_vnni",
                            "amx_tile") if f in flags]
        facts.append(f"CPU: {kv.get('Model name', '?')} (vendor {kv.get('Vendor ID', '?')}, family "
                     f"{kv.get('CPU family', '?')} model {kv.get('Model', '?')}), {kv.get('CPU(s)', '?')} CPUs, "
                     f"{kv.get('Thread(s) per core', '?')} thread(s) per core; hypervisor "
                     f"{kv.get('Hypervisor vendor', 'none')}")
        facts.append(f"SIMD flags: {', '.join(simd)}; caches L1d {kv.get('L1d cache', '?')}, "
                     f"L2 {kv.get('L2 cache', '?')}, L3 {kv.get('L3 cache', '?')}")
    except (OSError, subprocess.SubprocessError):
        facts.append(f"CPU: {platform.processor()}, {os.cpu_count()} CPUs")
    try:
        mem = [ln for ln in open("/proc/meminfo") if ln.startswith("MemTotal")][0].split()[1]
        facts.append(f"Memory: {int(mem) / 2 ** 20:.1f} GiB")
    except (OSError, IndexError):
        pass
    from importlib.metadata import PackageNotFoundError, version
    vers = [f"Python {platform.python_version()}", f"numpy {np.__version__}"]
    for pkg in ("iree-base-compiler", "iree-base-runtime", "jax", "jaxlib"):
        try:
            vers.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            vers.append(f"{pkg} (not installed)")
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=HERE, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "python", "lowering", "dialect"],
                               capture_output=True, text=True, cwd=HERE.parent, timeout=10).stdout.strip()
        vers.append(f"xlair {rev}{' (+ uncommitted changes)' if dirty else ''}")
    except (OSError, subprocess.SubprocessError):
        pass
    facts.append("Versions: " + ", ".join(vers))
    from xlair.targets import target
    facts.append("xlair CPU flags: " + " ".join(target("cpu").compile_flags())
                 + " (and --iree-opt-data-tiling=false for a program whose contractions are all below "
                 "xlair.compile.DATA_TILING_WORK multiply-adds)")
    facts.append("CPU as /proc/cpuinfo and LLVM name it: " + cpu_summary())
    # what makes either side compile for another chip than this one (make bench-avx2)
    env = [f"{k}={os.environ[k]}" for k in ("XLAIR_CPU", "XLA_FLAGS") if os.environ.get(k, "").strip()]
    if env:
        facts.append("Code generation set by the environment (XLAIR_CPU: xlair's CPU code; XLA_FLAGS: "
                     "XLA:CPU's): " + " ".join(env))
    try:
        load = open("/proc/loadavg").read().split()[:3]
        facts.append(f"Load average at the start: {' '.join(load)}")
    except OSError:
        pass
    return facts


def copy_bandwidth(rounds: int) -> float:
    """STREAM-style copy bandwidth with numpy (bytes read + bytes written per second) on
    arrays of 128 MiB, four times the L3 cache."""
    src = np.ones(32 * 2 ** 20, np.float32)
    dst = np.empty_like(src)
    t = interleaved({"copy": lambda: np.copyto(dst, src)}, rounds=rounds, batch_time=0.05)["copy"]["median"]
    return 2 * src.nbytes / t


# ----------------------------------------------------------------------------------------
# the run
# ----------------------------------------------------------------------------------------
def run_workload(w: Workload, rounds: int) -> dict:
    t = time.perf_counter()
    vmfb = compile_vmfb(w.comp, cache=False)
    cold = time.perf_counter() - t
    xla.compile(w.comp)                                 # fills the cache
    t = time.perf_counter()
    exe = xla.compile(w.comp)                           # from the cache, loaded
    cached = time.perf_counter() - t
    del vmfb
    want = w.np_fn()
    check(w, exe(*w.args), want, "xlair")
    fns = {"xlair": array_call(exe, w.args), "xlair_call": lambda: exe(*w.args), "numpy": w.np_fn}
    jf = xla_cpu(w.jax_fn, *w.args) if w.jax_fn else None
    if jf is not None:
        check(w, jf(), want, "XLA:CPU")
        fns["xla"] = jf
        fns["xla_numpy"] = xla_cpu(w.jax_fn, *w.args, numpy_io=True)
    res = interleaved(fns, rounds=rounds)
    out = {"name": w.name, "cold": cold, "cached": cached, **{k: v["median"] for k, v in res.items()},
           "best": {k: v["min"] for k, v in res.items()},
           "flops": w.flops, "bytes": w.bytes, "memory_bound": w.memory_bound}
    print(f"  {w.name}: " + ", ".join(f"{k} {fmt_ms(v['median'])} ms" for k, v in res.items())
          + f", compile {cold:.2f} s cold / {cached * 1e3:.1f} ms cached", flush=True)
    return out


def compile_100(rounds: int) -> dict:
    comp = program_100_ops()
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2)]
    colds = []
    for _ in range(3):
        t = time.perf_counter()
        compile_vmfb(comp, cache=False)
        colds.append(time.perf_counter() - t)
    xla.compile(comp)
    cached = []
    for _ in range(max(5, rounds)):
        t = time.perf_counter()
        exe = xla.compile(comp)
        cached.append(time.perf_counter() - t)
    np.testing.assert_allclose(exe(*args), xla.interpret(comp, *args), rtol=1e-4, atol=1e-4)
    return {"cold": sorted(colds)[1], "cached": sorted(cached)[len(cached) // 2]}


def per_call(rounds: int) -> dict:
    b = xla.Builder("tiny")
    O.add(b.parameter(0, Shape(F32, (10,))), b.parameter(1, Shape(F32, (10,))))
    exe = xla.compile(b.build())
    a, c = np.arange(10, dtype=np.float32), np.ones(10, np.float32)
    assert np.array_equal(exe(a, c), a + c)
    fns = {"call": lambda: exe(a, c), "device": device_call(exe, [a, c])}
    if jax_available():
        fns["xla_numpy"] = xla_cpu(lambda x, y: x + y, a, c, numpy_io=True)
        fns["xla"] = xla_cpu(lambda x, y: x + y, a, c)
    return {k: v["median"] for k, v in interleaved(fns, rounds=rounds).items()}


#: The sections of RESULTS.md, each measured and written by one part of this script; a run of
#: some sections (`--section`, or `--only` naming items of one) keeps the others' text as the
#: previous RESULTS.md has it.
SECTIONS = ("ops", "models", "collectives", "pjrt")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    ap.add_argument("--section", choices=("all",) + SECTIONS, default="all",
                    help="ops: the workloads, 100-op compile and call overhead; models: the programs of "
                         "tests/models/model_programs.py against jax.jit; collectives: AllReduce, AllGather "
                         "and CollectivePermute in threads and on MPI ranks beside mpi4py; pjrt: JAX's "
                         "per-call overhead on the xlair PJRT plugin against XLA:CPU (default: all)")
    ap.add_argument("--only", nargs="*", help="workload function names (matmul, sort, ...) and/or model "
                                               "program names (mlp_forward, gpt_adamw_step, ...)")
    ap.add_argument("-o", default=str(HERE / "RESULTS.md"))
    opts = ap.parse_args()
    sections = list(SECTIONS) if opts.section == "all" else [opts.section]
    workloads = {m.__name__: m for m in WORKLOADS}
    if opts.only:
        unknown = sorted(set(opts.only) - set(workloads) - set(bench_models.PROGRAMS))
        if unknown:
            ap.error(f"--only: no workload or program named {', '.join(unknown)}")
        named = {"ops": set(opts.only) & set(workloads),
                 "models": set(opts.only) & set(bench_models.PROGRAMS), "collectives": set(), "pjrt": set()}
        sections = [s for s in sections if named[s]]
    rounds = 5 if opts.quick else 21
    t_start = time.perf_counter()
    if not jax_available():
        print("JAX is not installed: XLA:CPU columns are n/a (make bench installs the bench extra)")
        for needs_jax in ("models", "pjrt"):
            if needs_jax in sections:
                print(f"  and the {needs_jax} section needs it: skipped")
                sections.remove(needs_jax)
    facts = machine_facts()
    print("\n".join(facts), flush=True)
    ops = run_ops([workloads[n] for n in workloads if not opts.only or n in opts.only], rounds,
                  full=not opts.only) if "ops" in sections else None
    models = bench_models.run(only=opts.only, quick=opts.quick) if "models" in sections else None
    collectives = bench_collectives.run(quick=opts.quick) if "collectives" in sections else None
    pjrt = bench_pjrt.run(quick=opts.quick) if "pjrt" in sections else None
    elapsed = time.perf_counter() - t_start
    try:
        facts.append("Load average at the end: " + " ".join(open("/proc/loadavg").read().split()[:3]))
    except OSError:
        pass
    write_results(pathlib.Path(opts.o), facts, ops, models, elapsed, collectives, pjrt)
    print(f"wrote {opts.o} ({elapsed:.0f} s)")


def run_ops(makes, rounds: int, full: bool) -> dict:
    """The ops section: the workloads, and (`full`) the 100-op compile and the call overhead."""
    t0 = time.perf_counter()
    date = time.strftime("%Y-%m-%d %H:%M %Z")
    compile_vmfb(program_100_ops(), cache=False)       # process warm-up: imports, MLIR context
    bw = copy_bandwidth(rounds)
    print(f"copy bandwidth (numpy): {bw / 1e9:.1f} GB/s", flush=True)
    rng = np.random.default_rng(0)
    rows = [run_workload(make(rng), rounds) for make in makes]
    bw_after = copy_bandwidth(rounds)
    c100 = compile_100(rounds) if full else None
    call = per_call(rounds * 2) if full else None
    return {"rows": rows, "bws": (bw, bw_after), "c100": c100, "call": call, "rounds": rounds, "date": date,
            "elapsed": time.perf_counter() - t0}


def _marks(name: str) -> tuple[str, str]:
    return f"<!-- section {name}: begin -->", f"<!-- section {name}: end -->"


def previous_section(path: pathlib.Path, name: str) -> list[str] | None:
    """A section's lines as the existing RESULTS.md has them (None: not there)."""
    try:
        text = path.read_text()
    except OSError:
        return None
    begin, end = _marks(name)
    m = re.search(re.escape(begin) + r"\n(.*?)" + re.escape(end), text, re.S)
    return m.group(1).removesuffix("\n").split("\n") if m else None


def write_results(path, facts, ops, models, elapsed, collectives=None, pjrt=None):
    """RESULTS.md, the one writer: a header (this run and the machine), then each section
    between its marks, measured now or kept from the previous file."""
    run = [s for s, r in (("ops", ops), ("models", models), ("collectives", collectives), ("pjrt", pjrt))
           if r is not None]
    kept = [s for s in SECTIONS if s not in run]
    note = f" ({', '.join(kept)} kept from the previous RESULTS.md; see its own date line)" if kept else ""
    L = ["# xlair benchmark results (CPU)", "",
         "Written by `make bench` (bench/bench.py); what changed and why: bench/NOTES.md.", "",
         f"Date: {time.strftime('%Y-%m-%d %H:%M %Z')}; whole run {elapsed:.0f} s; sections measured in this "
         f"run: {', '.join(run) or 'none'}{note}.", ""]
    L += [f"- {f}" for f in facts]
    L.append("")
    titles = {"ops": "## Workloads", "models": bench_models.TITLE, "collectives": bench_collectives.TITLE,
              "pjrt": bench_pjrt.TITLE}
    for name in SECTIONS:
        begin, end = _marks(name)
        if name == "ops" and ops is not None:
            body = ops_lines(ops)
        elif name == "models" and models is not None:
            body = bench_models.section_lines(models)
        elif name == "collectives" and collectives is not None:
            body = bench_collectives.section_lines(collectives)
        elif name == "pjrt" and pjrt is not None:
            body = bench_pjrt.section_lines(pjrt)
        else:
            body = previous_section(path, name) or [
                titles[name], "", f"Not measured yet: run `bench/bench.py --section {name}`.", ""]
        L += [begin] + body + [end, ""]
    path.write_text("\n".join(L).rstrip("\n") + "\n")


def ops_lines(ops: dict) -> list[str]:
    rows, bws, c100, call = ops["rows"], ops["bws"], ops["c100"], ops["call"]
    bw = max(bws)
    L = ["## Workloads", "",
         f"Measured {ops['date']}; section took {ops['elapsed']:.0f} s; {ops['rounds']} interleaved rounds "
         "per workload.", "",
         f"Copy bandwidth (numpy `np.copyto`, 128 MiB, read + write bytes): {bws[0] / 1e9:.1f} GB/s before "
         f"the workloads, {bws[1] / 1e9:.1f} GB/s after; the memory-bound target uses {bw / 1e9:.1f} GB/s",
         "",
         "| workload | xlair ms | xlair ms (numpy in/out) | numpy ms | XLA:CPU ms | XLA:CPU ms (numpy in/out) "
         "| xlair rate | XLA rate | xlair/XLA | xlair/XLA (numpy in/out) | xlair/numpy "
         "| best rounds: xlair / XLA ms (ratio) | compile cold s | compile cached ms |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios, np_ratios = [], []

    def best(r):
        b = r["best"]
        if "xla" not in b:
            return fmt_ms(b["xlair"])
        return f"{fmt_ms(b['xlair'])} / {fmt_ms(b['xla'])} ({b['xlair'] / b['xla']:.2f})"
    for r in rows:
        x, j, n = r["xlair"], r.get("xla"), r["numpy"]

        def rate(t):
            if t is None:
                return "n/a"
            if r["flops"]:
                return f"{r['flops'] / t / 1e9:.0f} GFLOP/s"
            if r["bytes"]:
                s = f"{r['bytes'] / t / 1e9:.1f} GB/s"
                return s + (f" ({r['bytes'] / t / bw:.0%} of copy)" if r["memory_bound"] else "")
            return "-"
        xn, jn = r["xlair_call"], r.get("xla_numpy")
        if j:
            ratios.append(x / j)
        if jn:
            np_ratios.append(xn / jn)
        L.append(f"| {r['name']} | {fmt_ms(x)} | {fmt_ms(xn)} | {fmt_ms(n)} | "
                 f"{fmt_ms(j) if j else 'n/a'} | {fmt_ms(jn) if jn else 'n/a'} | {rate(x)} | {rate(j)} | "
                 f"{f'{x / j:.2f}' if j else 'n/a'} | {f'{xn / jn:.2f}' if jn else 'n/a'} | "
                 f"{x / n:.2f} | {best(r)} | {r['cold']:.2f} | {r['cached'] * 1e3:.1f} |")
    gm = geomean(ratios)
    gm_best = geomean([r["best"]["xlair"] / r["best"]["xla"] for r in rows if "xla" in r["best"]])
    gm_np = geomean(np_ratios) if np_ratios else None
    L += ["", f"Geometric mean of xlair/XLA over {len(ratios)} workloads: **{gm:.2f}** (medians, device-resident "
          f"on both sides; {gm_best:.2f} from each system's best round)"
          + (f"; with numpy in and out on both sides: **{gm_np:.2f}**" if gm_np else ""), ""]
    if c100 or call:
        L += ["## Compile time and call overhead", "", "| measure | value | target |", "|---|---|---|"]
        if c100:
            L.append(f"| compile of a 100-op program, cold (no cache; median of 3) | {c100['cold']:.2f} s | ≤ 1.5 s |")
            L.append(f"| compile of the same program from the artifact cache (key, read, load) | "
                     f"{c100['cached'] * 1e3:.1f} ms | ≤ 20 ms |")
        if call:
            L.append(f"| per-call time of a tiny program (f32[10] + f32[10]), `Executable.__call__` | "
                     f"{call['call'] * 1e6:.1f} µs | ≤ 30 µs |")
            L.append(f"| the same, inputs in device buffers (IREE invoke only) | {call['device'] * 1e6:.1f} µs | |")
            if "xla" in call:
                L.append(f"| XLA:CPU (jax.jit) on the same program, device arrays / numpy in and out | "
                         f"{call['xla'] * 1e6:.1f} µs / {call['xla_numpy'] * 1e6:.1f} µs | |")
        L.append("")
    L += ["## Targets", ""]
    L += targets_summary(rows, ratios, gm, bw, c100, call, gm_np)
    L += ["", "Under each target not met: the measured cause and what meeting it would take (the "
          "measurements: bench/NOTES.md, section \"Targets not met\")."]
    L += ["", "## How the workloads are measured", "", __doc__.split("\n\n", 1)[1].strip(), "",
          "Rates: GFLOP/s from the nominal flop count (2mnk for matmul and conv); GB/s from the bytes a "
          "workload must read and write once (inputs + result; gather: the rows read and written).  "
          "numpy: `a @ b` (OpenBLAS), conv as im2col + one matmul, `np.sort`, fancy indexing, a Python loop "
          "of 1000 adds for the while workload.  XLA:CPU: `jax.jit(..., backend='cpu')` of the same "
          "function.  Every result (xlair and XLA:CPU) is checked against numpy before timing.", ""]
    return L


#: The measured cause of a missed target and what meeting it would take, by workload (the
#: measurements: bench/NOTES.md, "Targets not met"); written under each target a run misses.
CAUSES = {
    "matmul": "IREE's f32 matmul (data tiling, mmt4d micro-kernels, AVX-512) reaches 240-260 GFLOP/s "
              "here, XLA:CPU 340-360; another target CPU, no micro-kernels or --iree-opt-level=O3 measured "
              "the same. Meeting it needs a faster f32 micro-kernel in IREE, or large f32 matmuls routed "
              "to a BLAS through a host call.",
    "MLP": "its matmuls (IREE's f32 matmul; untiled below 2^27 multiply-adds, python/xlair/compile.py "
           "DATA_TILING_WORK): best rounds 2.4-2.5 ms against XLA:CPU's 2.6-2.7 on an AMD Zen 4 (bench/NOTES.md "
           "section 19); medians above that are local-task calls slowed by other load on the machine.",
    "max-pool": "IREE's pooling dispatch (linalg.pooling_nhwc_max) with xlair's tile sizes (lowering/reduction.py "
                "_set_cpu_pool_tiles: one output pixel by its 64 channels a vector tile): 1.0 ms on one Zen 4 core, "
                "0.8-1.2 on two against XLA:CPU's 1.0-1.8; IREE's own tile sizes took 2.6-3.2 ms on one core "
                "(bench/NOTES.md section 25). A memory-bound dispatch on two threads, its medians move with the "
                "machine's load.",
    "softmax": "its 2 MiB input stays in the L2 cache, so copy bandwidth is not its bound: the fused "
               "dispatch reads each row twice (max, then exp and sum) and computes an exp per element; "
               "it is faster than XLA:CPU. An online (one-pass) softmax would read each row once.",
}


#: The causes that differ where xlair's CPU code has no AVX-512 (make bench-avx2: x86-64-v3 code
#: against XLA:CPU's AVX2 code, on an AMD Zen 4 standing in for a CPU without AVX-512).
AVX2_CAUSES = {
    "matmul": "IREE's f32 matmul in x86-64-v3 code (data tiling, mmt4d micro-kernels, AVX2): 157-175 GFLOP/s "
              "against XLA:CPU's 197-205 with --xla_cpu_max_isa=AVX2 on an AMD Zen 4 (three runs of 2026-11-25, "
              "bench/NOTES.md section 20); IREE's AVX2 micro-kernel, not looked into further.",
    "MLP": "its matmuls (IREE's f32 matmul in x86-64-v3 code, with xlair's AVX2 tile sizes: lowering/contraction.py "
           "_set_cpu_matmul_tiles): on an AMD Zen 4, the step's best rounds 2.91-3.09 ms against XLA:CPU's "
           "3.13-3.27 (IREE's own tile sizes: 3.43-3.63; bench/NOTES.md section 26); medians above that are "
           "local-task calls slowed by other load.",
    "softmax": "one core against two: the program runs on one core (its heaviest op, 2^19 elements, is below "
               "the runtime's INLINE_WORK), XLA:CPU on two. xlair's own f32 exp (lowering/elementwise.py _exp_f32) "
               "takes 0.195 ms for 2^19 elements in x86-64-v3 code (IREE's took 0.235) against XLA:CPU's 0.155 "
               "on two cores; max, sum and the division are as fast as XLA:CPU's or faster. The task system "
               "(exp 0.22 ms, softmax's median unchanged), xlair's tile sizes for the reductions and wider vector "
               "tiles did not help (bench/NOTES.md sections 26 and 27).",
}


#: What the cold 100-op compile is made of, for a run where it misses its target.
COMPILE_CAUSE = ("iree-compile itself: xlair's lowering of the program takes 0.1 s, iree-compile 1.4-1.7 s of it "
                 "with AVX-512 code on an AMD Zen 4 (three runs of the lowered text, 2026-11-26; its executables' "
                 "pipelines, LLVM's code generation included, are two thirds of that, --mlir-timing); the same "
                 "program took 1.05 s in x86-64-v3 code and 1.26-1.74 s over eight cold compiles in one process "
                 "on the same machine (bench/NOTES.md section 27).")


def _avx2_code() -> bool:
    """Whether xlair's CPU code in this run has no AVX-512 (XLAIR_CPU names such a chip)."""
    import importlib
    from xlair.targets import target
    tgt = target("cpu")
    needs = importlib.import_module("xlair.compile").needs_of(tgt, tgt.compile_flags())
    return needs is not None and needs.arch == "x86_64" and "avx512f" not in needs.features


#: The same, for the numpy in/out comparison (where XLA:CPU aliases the caller's arrays and
#: xlair copies them into IREE buffers: python/xlair/device.py to_device).
NUMPY_CAUSES = {
    "MLP": CAUSES["MLP"],
    "max-pool": CAUSES["max-pool"] + " With numpy in and out xlair reads the 25.7 MB input where it is "
                                    "(device.import_array); XLA:CPU's time moved between 0.9 and 16.6 ms over the runs of "
                                    "2026-11-25 and 26.",
}


def _causes(names: list[str], numpy_io: bool = False) -> list[str]:
    out = []
    causes = dict(NUMPY_CAUSES if numpy_io else CAUSES)
    if _avx2_code():
        causes.update(AVX2_CAUSES)
    for n in names:
        cause = next((c for k, c in causes.items() if n.startswith(k)), None)
        out.append(f"  - {n}: " + (cause or "no cause measured in bench/NOTES.md; run-to-run noise is the "
                                            "first suspect (compare the best-rounds column)."))
    return out


def targets_summary(rows, ratios, gm, bw, c100, call, gm_np=None):
    out = []
    for mine, theirs, how in (("xlair", "xla", "device-resident"), ("xlair_call", "xla_numpy", "numpy in and out")):
        slow_rows = [r for r in rows if r.get(theirs) and r[mine] > 1.2 * r[theirs]]
        slow = [f"{r['name']} ({r[mine] / r[theirs]:.2f})" for r in slow_rows]
        out.append(f"- every workload ≤ 1.2× XLA:CPU, {how}: {'met' if not slow else 'NOT met: ' + '; '.join(slow)}")
        out += _causes([r["name"] for r in slow_rows], numpy_io=theirs == "xla_numpy")
    out.append(f"- geometric mean xlair/XLA ≤ 0.9, device-resident: {'met' if gm <= 0.9 else 'NOT met'} ({gm:.2f})")
    if gm_np is not None:
        out.append(f"- geometric mean xlair/XLA ≤ 0.9, numpy in and out: {'met' if gm_np <= 0.9 else 'NOT met'} "
                   f"({gm_np:.2f})")
    for r in rows:
        if r["name"].startswith("matmul"):
            g = r["flops"] / r["xlair"] / 1e9
            out.append(f"- matmul ≥ 140 GFLOP/s: {'met' if g >= 140 else 'NOT met'} ({g:.0f} GFLOP/s)")
        if r["name"].startswith("sort"):
            q = r["xlair"] / r["numpy"]
            out.append(f"- sort within 3× numpy: {'met' if q <= 3 else 'NOT met'} ({q:.2f}×)")
    mb = [(r["name"], r["bytes"] / r["xlair"] / bw) for r in rows if r["memory_bound"]]
    low = [f"{n} ({f:.0%})" for n, f in mb if f < 0.8]
    out.append(f"- memory-bound workloads ≥ 80% of copy bandwidth: {'met' if not low else 'NOT met: ' + '; '.join(low)}")
    out += _causes([n for n, f in mb if f < 0.8])
    if c100:
        out.append(f"- 100-op compile ≤ 1.5 s cold: {'met' if c100['cold'] <= 1.5 else 'NOT met'} ({c100['cold']:.2f} s); "
                   f"≤ 20 ms from cache: {'met' if c100['cached'] <= 0.02 else 'NOT met'} ({c100['cached'] * 1e3:.1f} ms)")
        if c100['cold'] > 1.5:
            out.append(f"  - 100-op compile: {COMPILE_CAUSE}")
    if call:
        out.append(f"- per-call overhead ≤ 30 µs: {'met' if call['call'] <= 30e-6 else 'NOT met'} "
                   f"({call['call'] * 1e6:.1f} µs)")
    return out


if __name__ == "__main__":
    main()
