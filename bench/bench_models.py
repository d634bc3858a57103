"""The models section of `make bench` (issue 15 item 1, issue 20 item 3): every program of the
real-program suite (tests/models/model_programs.py) on xlair (`xlair.jit`) and on XLA:CPU
(`jax.jit`) side by side in one run, numpy arrays in and out on both sides, each xlair result
checked against jax.jit's before timing; and the cold compile time of each program on both.

Run: .venv/bin/python bench/bench.py --section models [--quick] [--only PROGRAM ...]
(bench.py writes the table into bench/RESULTS.md; this module measures and formats it).
"""
from __future__ import annotations

import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "models"))

from harness import cpu_summary, fmt_ms, geomean, interleaved  # noqa: E402
from model_compare import leaves as _leaves, mismatches  # noqa: E402
from model_programs import PROGRAMS  # noqa: E402

#: Timing of one program stops starting new rounds after this many seconds (at least 3 rounds):
#: 41 programs then take about 4-5 minutes on 2 cores, most of it the cold compiles.
MAX_TIME = 2.0
#: Past this many seconds into the section, each remaining program gets only the minimum rounds.
BUDGET = 230.0
TITLE = "## Models: the real-program suite (xlair.jit against jax.jit)"

HOW = """\
Each program's function and arguments come from `make()` in tests/models/model_programs.py
(numpy arrays, or pytrees of them; jax_enable_x64 off, as in the test suite).  Per program, in
this order:

- **cold: XLA:CPU**: `jax.jit(f).lower(*args).compile()` on a new function object `f` wrapping the
  program, after `jax.clear_caches()` (JAX's persistent compilation cache is not enabled): tracing,
  lowering to StableHLO and XLA:CPU's compile.
- **cold: xlair**: the first call `xlair.jit(fn, cache=False)(*args)` after `jax.clear_caches()`,
  with the artifact cache bypassed (`cache=False`, a compile option `xlair.jit` passes on; the whole
  run also points `XLAIR_CACHE_DIR` at a fresh temporary directory): JAX's tracing and lowering,
  the StableHLO import, xlair's passes to linalg, `iree-compile` (a child process), loading the
  module, and one execution with numpy in and out.  Where the time goes for three programs:
  bench/compile_breakdown.py and bench/NOTES.md.
- **xlair ms / XLA:CPU ms**: one call, numpy arrays in and out on both sides:
  `xlair.jit(fn)(*args)` and `jax.jit(fn)(*args)`, then `np.asarray` of every output leaf (which
  waits for JAX's result).  Per-call time is the median over interleaved rounds (bench/harness.py
  `interleaved`: a warm-up call, then rounds that time each contestant in turn in batches of
  ~20 ms), at most {rounds} rounds and no new round after {max_time:g} s of timing (at least 3 rounds;
  the programs measured after {budget:.0f} s of the section get 3).
- **device-resident**: the arguments placed on the device once, outputs left there:
  `xlair.jit(fn)` on `xlair.device_put(args)` (its results are `xla.Array`s) and `jax.jit(fn)` on
  `jax.device_put(args)` (`jax.block_until_ready` on its results), timed in the same interleaved
  rounds.  The first xlair/XLA column compares numpy in/out on both sides, the second
  device-resident on both sides.
- **StableHLO ops**: the operations of the module JAX lowers the program to (`stablehlo.*` and
  `chlo.*`, region terminators left out; a function called several times counts once).
- Before timing, every output leaf of xlair's first call is compared with jax.jit's
  (tests/models/model_compare.py `mismatches`, the suite's tolerances); a difference is listed
  below the table and the program is still timed."""


def stablehlo_ops(lowered) -> int:
    """The StableHLO (and CHLO) operations of a `jax.stages.Lowered`, terminators left out."""
    from jax.extend.mlir import ir
    n = 0

    def visit(op):
        nonlocal n
        name = op.name
        if name.startswith(("stablehlo.", "chlo.")) and name != "stablehlo.return":
            n += 1
        return ir.WalkResult.ADVANCE
    lowered.compiler_ir("stablehlo").operation.walk(visit)
    return n


def warm_up() -> None:
    """Process warm-up for both sides (imports, MLIR contexts, the importer, XLA's compiler),
    so that the first program's cold compile is not charged for them."""
    import jax
    import jax.numpy as jnp
    import xlair as xla

    def f(x, y):
        return jnp.tanh(x @ y).sum(axis=0), jnp.sort(x, axis=1)
    x = np.ones((8, 8), np.float32)
    jax.jit(f).lower(x, x).compile()
    xla.jit(f, cache=False)(x, x)


def run_program(name: str, rounds: int, max_time: float) -> dict:
    import jax
    import xlair as xla
    prog = PROGRAMS[name]
    row: dict = {"name": name, "kind": prog.kind}
    fn, args = prog.make()

    jax.clear_caches()

    def fresh(*a):                  # a new function object: nothing of an earlier trace applies
        return fn(*a)
    t = time.perf_counter()
    lowered = jax.jit(fresh).lower(*args)
    lowered.compile()
    row["jax_cold"] = time.perf_counter() - t
    row["ops"] = stablehlo_ops(lowered)
    del lowered

    jax.clear_caches()
    jx = xla.jit(fn, cache=False)
    t = time.perf_counter()
    try:
        got = _leaves(jx(*args))
    except Exception as e:          # noqa: BLE001  (reported in the table; the run goes on)
        row["error"] = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
        return row
    row["xlair_cold"] = time.perf_counter() - t

    jf = jax.jit(fn)
    want = _leaves(jf(*args))
    bad = mismatches(prog, got, want)
    if bad:
        row["mismatch"] = "; ".join(bad)[:300]
    dev = jax.device_put(args)
    xdev = xla.device_put(args)
    fns = {"xlair": lambda: _leaves(jx(*args)),
           "xla": lambda: _leaves(jf(*args)),
           "xlair_dev": lambda: jx(*xdev),
           "xla_dev": lambda: jax.block_until_ready(jf(*dev))}
    res = interleaved(fns, rounds=rounds, max_time=max_time)
    row.update({k: v["median"] for k, v in res.items()})
    row["rounds"] = len(res["xlair"]["times"])
    return row


def _print(msg: str) -> None:
    print(msg, flush=True)


def run(only=None, quick: bool = False, log=_print) -> dict:
    """Measure every program (or those named in `only`); returns what `section_lines` formats."""
    import jax
    names = [n for n in PROGRAMS if not only or n in only]
    rounds, max_time = (5, 0.5) if quick else (15, MAX_TIME)
    x64 = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)    # the suite's setting (the ops section turns it on)
    t0 = time.perf_counter()
    date = time.strftime("%Y-%m-%d %H:%M %Z")
    rows = []
    try:
        warm_up()
        log(f"models: {len(names)} programs (warm-up {time.perf_counter() - t0:.1f} s)")
        for name in names:
            late = time.perf_counter() - t0 > BUDGET
            try:
                r = run_program(name, rounds, 0.0 if late else max_time)
            except Exception as e:      # noqa: BLE001  (building the program or XLA:CPU failed)
                r = {"name": name, "kind": PROGRAMS[name].kind,
                     "error": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}
            rows.append(r)
            if "error" in r:
                log(f"  {name}: failed: {r['error']}")
            else:
                xc, jc = r["xlair_cold"], r["jax_cold"]
                log(f"  {name}: xlair {fmt_ms(r['xlair'])} ms, XLA:CPU {fmt_ms(r['xla'])} ms "
                    f"({r['xlair'] / r['xla']:.2f}x); device-resident {fmt_ms(r['xlair_dev'])} ms / "
                    f"{fmt_ms(r['xla_dev'])} ms ({r['xlair_dev'] / r['xla_dev']:.2f}x); cold "
                    f"{xc:.2f} s / {jc:.2f} s ({xc / jc:.1f}x)"
                    + (f"; MISMATCH {r['mismatch']}" if "mismatch" in r else ""))
    finally:
        jax.config.update("jax_enable_x64", x64)
    try:
        load = " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        load = "?"
    return {"rows": rows, "date": date, "elapsed": time.perf_counter() - t0, "cpu": cpu_summary(),
            "rounds": rounds, "max_time": max_time, "load": load}


def summary(rows: list[dict]) -> dict:
    ok = [r for r in rows if "error" not in r]
    ratio = {r["name"]: r["xlair"] / r["xla"] for r in ok}
    dev = {r["name"]: r["xlair_dev"] / r["xla_dev"] for r in ok}
    cold = {r["name"]: r["xlair_cold"] / r["jax_cold"] for r in ok}
    top = sorted(ratio, key=ratio.get, reverse=True)
    top_dev = sorted(dev, key=dev.get, reverse=True)
    top_cold = sorted(cold, key=cold.get, reverse=True)
    return {"n": len(ok), "ratio": ratio, "dev": dev, "gm_dev": geomean(dev.values()), "top_dev": top_dev,
            "cold": cold, "gm": geomean(ratio.values()),
            "gm_cold": geomean(cold.values()), "top": top, "top_cold": top_cold,
            "xlair_cold_total": sum(r["xlair_cold"] for r in ok),
            "jax_cold_total": sum(r["jax_cold"] for r in ok)}


def table_lines(rows: list[dict]) -> list[str]:
    L = ["| program | kind | StableHLO ops | xlair ms | XLA:CPU ms | xlair/XLA | device-resident: xlair ms "
         "| device-resident: XLA:CPU ms | device-resident xlair/XLA | cold: xlair s | cold: XLA:CPU s "
         "| cold xlair/XLA |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            jc = f"{r['jax_cold']:.2f}" if "jax_cold" in r else ""
            L.append(f"| {r['name']} | {r['kind']} | {r.get('ops', '')} | **failed** | | | | | | | {jc} | |")
            continue
        flag = " (differs)" if "mismatch" in r else ""
        L.append(f"| {r['name']}{flag} | {r['kind']} | {r['ops']} | {fmt_ms(r['xlair'])} | "
                 f"{fmt_ms(r['xla'])} | {r['xlair'] / r['xla']:.2f} | {fmt_ms(r['xlair_dev'])} | "
                 f"{fmt_ms(r['xla_dev'])} | {r['xlair_dev'] / r['xla_dev']:.2f} | {r['xlair_cold']:.2f} | "
                 f"{r['jax_cold']:.2f} | {r['xlair_cold'] / r['jax_cold']:.1f} |")
    return L


def summary_lines(rows: list[dict]) -> list[str]:
    s = summary(rows)
    if not s["n"]:
        return ["No program ran on xlair."]
    r, c = s["ratio"], s["cold"]

    def top(names, d, k=3, fmt="{:.2f}"):
        return ", ".join(f"{n} {fmt.format(d[n])}" for n in names[:k])
    L = [f"Per call (numpy in and out on both sides), xlair/XLA over {s['n']} programs: geometric mean "
         f"**{s['gm']:.2f}**, max **{r[s['top'][0]]:.2f}** ({s['top'][0]}); largest: {top(s['top'], r)}.",
         "",
         f"Per call, device-resident on both sides (`xlair.device_put` / `jax.device_put`), xlair/XLA: "
         f"geometric mean **{s['gm_dev']:.2f}**, max **{s['dev'][s['top_dev'][0]]:.2f}** ({s['top_dev'][0]}); "
         f"largest: {top(s['top_dev'], s['dev'])}.",
         "",
         f"Cold compile, xlair/XLA: geometric mean **{s['gm_cold']:.1f}**, max **{c[s['top_cold'][0]]:.1f}** "
         f"({s['top_cold'][0]}); largest: {top(s['top_cold'], c, fmt='{:.1f}')}.  Total over the programs: "
         f"xlair {s['xlair_cold_total']:.0f} s, XLA:CPU {s['jax_cold_total']:.0f} s."]
    bad = [x for x in rows if "error" in x or "mismatch" in x]
    if bad:
        L += ["", "Failures and differences from jax.jit:", ""]
        L += [f"- {x['name']}: " + (f"failed: {x['error']}" if "error" in x else
                                    f"differs from jax.jit: {x['mismatch']}") for x in bad]
    return L


def section_lines(res: dict) -> list[str]:
    """The models section of RESULTS.md (bench.py writes the file)."""
    L = [TITLE, "",
         f"Measured {res['date']}; section took {res['elapsed']:.0f} s; load average at its end "
         f"{res['load']}.",
         "",
         f"CPU: {res['cpu']}.", ""]
    L += table_lines(res["rows"])
    L += [""] + summary_lines(res["rows"])
    L += ["", "### How the models section is measured", "",
          HOW.format(rounds=res["rounds"], max_time=res["max_time"], budget=BUDGET), ""]
    return L
