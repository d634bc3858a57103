"""Where xlair's cold compile time goes, for programs of the real-program suite
(tests/models/model_programs.py): each stage of `xlair.jit(fn)`'s first call timed on its own,
by calling the functions that `Jitted._compile` and `compile_vmfb` call, in the same order:

  JAX trace + lower   xlair.jax_bridge.lower: jax.jit(fn, keep_unused=True).lower(*args)
  StableHLO text      Lowered.as_text()
  import              xlair.stablehlo.from_stablehlo: StableHLO -> xla dialect (a Computation)
  xlair passes        xlair.compile.lower: parse a copy, xla-to-iree-input{target=cpu} (xla-simplify,
                      xla-flatten-tuples, xla-to-linalg), signature; and printing the module
  iree-compile        xlair.compile.iree_compile: IREE's compiler in a child process, + seal
  load                xlair.runtime.Executable(vmfb)
  first execution     the executable on the arguments (numpy in and out)

beside the whole first call (`xlair.jit(fn, cache=False)(*args)`) and XLA:CPU's
`jax.jit(f).lower(*args).compile()` (lower and compile apart), each the median of `--repeats`
runs, every run after `jax.clear_caches()` and with xlair's artifact cache bypassed.  Then, once:
the three xlair passes apart, and iree-compile split into its phases (`--compile-to` /
`--compile-from` runs, each a child process of its own reading and writing MLIR bytecode).

Run: .venv/bin/python bench/compile_breakdown.py [PROGRAM ...] [--repeats 3] [--no-phases]
(default programs: a transformer layer's gradient, a CNN training step, jax.random sampling).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "models"))
os.environ["XLAIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="xlair-breakdown-cache-")

from model_programs import PROGRAMS  # noqa: E402

DEFAULT = ["transformer_encoder_grad", "cnn_sgd_step", "random_sampling"]
STAGES = ["JAX trace + lower", "StableHLO text", "import (StableHLO -> xla)", "xlair passes (-> linalg)",
          "print linalg module", "iree-compile", "load", "first execution"]
#: iree-compile's phases, grouped: (the last phase of the group, what it does)
PHASES = [("global-optimization", "input, ABI, preprocessing, global optimization"),
          ("stream", "dispatch creation, flow, stream"),
          ("executable-targets", "codegen of each dispatch: linalg -> LLVM dialect"),
          ("hal", "HAL: LLVM IR -> machine code per executable, link, serialize"),
          ("end", "VM: host program -> bytecode module")]


def _median(xs):
    return statistics.median(xs) if xs else float("nan")


def stage_times(fn, args) -> tuple[dict, object, bytes]:
    """One cold run through the stages; returns ({stage: seconds}, the Computation, linalg text)."""
    import jax
    from xlair.compile import iree_compile, lower as xlair_lower, needs_of, program_flags, seal
    from xlair.jax_bridge import lower as jax_lower
    from xlair.runtime import Executable
    from xlair.stablehlo import from_stablehlo
    from xlair.targets import check_supported, target
    tgt = target("cpu")
    jax.clear_caches()
    t = {}
    c = time.perf_counter()
    lowered = jax_lower(fn, *args)
    t["JAX trace + lower"] = time.perf_counter() - c
    c = time.perf_counter()
    text = lowered.as_text()
    t["StableHLO text"] = time.perf_counter() - c
    c = time.perf_counter()
    comp = from_stablehlo(text)
    t["import (StableHLO -> xla)"] = time.perf_counter() - c
    flags = program_flags(comp, tgt)
    c = time.perf_counter()
    check_supported(comp.module, tgt.name)
    module = xlair_lower(comp, 1, tgt.name, needs_of(tgt, flags))
    t["xlair passes (-> linalg)"] = time.perf_counter() - c
    from xlair.dialect.ir import context, lock
    c = time.perf_counter()
    with lock, context():
        linalg = str(module)
    t["print linalg module"] = time.perf_counter() - c
    c = time.perf_counter()
    vmfb = seal(iree_compile(linalg, tgt, flags))
    t["iree-compile"] = time.perf_counter() - c
    c = time.perf_counter()
    exe = Executable(vmfb, tgt.name)
    t["load"] = time.perf_counter() - c
    leaves = jax.tree_util.tree_leaves(args)
    dtypes = [np.dtype(a.dtype) for a in jax.tree_util.tree_leaves(lowered.in_avals)]
    flat = [np.asarray(x, dtype=dt) for x, dt in zip(leaves, dtypes)]
    c = time.perf_counter()
    exe(*flat)
    t["first execution"] = time.perf_counter() - c
    return t, comp, linalg


def whole_first_call(fn, args) -> float:
    import jax
    import xlair as xla
    jax.clear_caches()
    jx = xla.jit(fn, cache=False)
    c = time.perf_counter()
    jx(*args)
    return time.perf_counter() - c


def xla_cpu_cold(fn, args) -> tuple[float, float]:
    """(lower, compile) seconds of jax.jit on a new function object after jax.clear_caches()."""
    import jax
    jax.clear_caches()

    def fresh(*a):
        return fn(*a)
    c = time.perf_counter()
    lowered = jax.jit(fresh).lower(*args)
    lo = time.perf_counter() - c
    c = time.perf_counter()
    lowered.compile()
    return lo, time.perf_counter() - c


def xla_op_count(comp) -> int:
    n = 0

    def walk(op):
        nonlocal n
        if op.name.startswith("xla."):
            n += 1
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    walk(o.operation)
    from xlair.dialect.ir import context, lock
    with lock, context():
        walk(comp.module.operation)
    return n


def pass_times(comp) -> dict:
    """The three passes of xla-to-iree-input apart, on a parsed copy of the computation."""
    from xlair.dialect.ir import context, ir, lock
    from xlair.lowering import pipeline
    with lock, context():
        module = ir.Module.parse(comp.to_text(debug_info=True))
    out = {}
    for p in ("xla-simplify", "xla-flatten-tuples", "xla-to-linalg"):
        c = time.perf_counter()
        pipeline.run(module, f"{p}{{target=cpu}}")
        out[p] = time.perf_counter() - c
    return out


def iree_phases(linalg: str, comp) -> tuple[dict, float, int]:
    """iree-compile split at phase boundaries ({group: seconds}), the one-shot run's time and the
    number of dispatches (the exports of the stream phase's executables)."""
    from iree.compiler.tools import TempFileSaver
    from iree.compiler.tools.core import CompilerOptions, build_compile_command_line
    from xlair.compile import program_flags
    from xlair.targets import target
    tgt = target("cpu")
    with TempFileSaver.implicit() as tfs:
        base = build_compile_command_line("-", tfs, CompilerOptions(target_backends=[tgt.backend],
                                                                    extra_args=program_flags(comp, tgt)))
    c = time.perf_counter()
    subprocess.run(base, input=linalg.encode(), capture_output=True, check=True)
    one_shot = time.perf_counter() - c
    out, cur, prev = {}, linalg.encode(), None
    for phase, what in PHASES:
        cl = list(base) + ([f"--compile-from={prev}"] if prev else []) + [f"--compile-to={phase}"]
        if phase not in ("stream", "end"):        # the stream phase's text is read for its dispatches
            cl.append("--emit-mlir-bytecode")
        c = time.perf_counter()
        p = subprocess.run(cl, input=cur, capture_output=True)
        out[what] = time.perf_counter() - c
        if p.returncode:
            raise RuntimeError(f"iree-compile --compile-to={phase} failed: {p.stderr.decode()[-1000:]}")
        cur, prev = p.stdout, phase
        if phase == "stream":
            dispatches = cur.count(b"stream.executable.export ")
    return out, one_shot, dispatches


def breakdown(name: str, repeats: int, phases: bool) -> list[str]:
    fn, args = PROGRAMS[name].make()
    runs, wholes, jaxes = [], [], []
    for _ in range(repeats):
        t, comp, linalg = stage_times(fn, args)
        runs.append(t)
        wholes.append(whole_first_call(fn, args))
        jaxes.append(xla_cpu_cold(fn, args))
    med = {s: _median([r[s] for r in runs]) for s in STAGES}
    total = sum(med.values())
    whole = _median(wholes)
    j_lo, j_co = _median([j[0] for j in jaxes]), _median([j[1] for j in jaxes])
    L = [f"### {name}: {PROGRAMS[name].doc}", "",
         f"{xla_op_count(comp)} xla ops; {len(linalg) // 1024} KiB of linalg text handed to iree-compile; "
         f"median of {repeats} cold runs.", "",
         "| stage | s | share |", "|---|---|---|"]
    L += [f"| {s} | {med[s]:.3f} | {med[s] / total:.0%} |" for s in STAGES]
    L += [f"| sum of the stages | {total:.3f} | |",
          f"| the whole first call, `xlair.jit(fn, cache=False)(*args)` | {whole:.3f} | |",
          f"| XLA:CPU: `jax.jit(f).lower(*args)` / `.compile()` | {j_lo:.3f} / {j_co:.3f} | |", ""]
    pt = pass_times(comp)
    L.append("xlair's passes apart (once): " + ", ".join(f"{p} {v:.3f} s" for p, v in pt.items()) + ".")
    if phases:
        ph, one, dispatches = iree_phases(linalg, comp)
        L += ["", f"iree-compile by phase ({dispatches} dispatches; once, each phase a child process of "
                  f"its own: {sum(ph.values()):.2f} s in all, the one-shot run {one:.2f} s):", ""]
        L += [f"- {what}: {v:.2f} s" for what, v in ph.items()]
    return L + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("programs", nargs="*", default=DEFAULT,
                    help=f"program names (default: {' '.join(DEFAULT)})")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-phases", action="store_true", help="skip the split of iree-compile by phase")
    opts = ap.parse_args()
    unknown = [p for p in opts.programs if p not in PROGRAMS]
    if unknown:
        ap.error(f"no program named {', '.join(unknown)} (see tests/models/model_programs.py)")
    import jax
    import jax.numpy as jnp
    import xlair as xla
    from xlair import cpus
    from harness import cpu_summary
    jax.config.update("jax_enable_x64", False)
    x = np.ones((8, 8), np.float32)                # process warm-up for both sides
    xla.jit(lambda a: jnp.tanh(a @ a).sum(0), cache=False)(x)
    jax.jit(lambda a: jnp.tanh(a @ a).sum(0)).lower(x).compile()
    cpus.host()
    print(f"# xlair cold compile breakdown ({time.strftime('%Y-%m-%d %H:%M %Z')})\n\nCPU: {cpu_summary()}\n",
          flush=True)
    for name in opts.programs:
        print("\n".join(breakdown(name, opts.repeats, not opts.no_phases)), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    main()
