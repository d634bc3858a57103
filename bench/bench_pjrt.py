"""The PJRT plugin's per-call overhead (issue 40; docs/pjrt.md, "Measured overhead"): JAX on
XLA:CPU against JAX on the xlair plugin, side by side in one process, for

  (a) a tiny jitted call, `jax.jit(lambda x, y: x * y + 1)` on two float32[4] arrays already on
      the device, `.block_until_ready()` each call;
  (b) one eager op, `x * y`, on the same arrays;
  (c) a loop of eager jnp ops run twice: the first pass compiles each op (JAX's per-op cache),
      the second compiles none (counted: JAX's backend-compile events, and the plugin's
      PJRT_Client_Compile calls, `engine.Executable.compiles`); the second pass is timed;

and, for reference, `xlair.jit` on `xla.Array`s (no JAX dispatch, no PJRT) for (a), and where the
plugin's time for (a) goes: the Execute call made through the table from Python (ctypes), with
and without the result's Buffer_Destroy, `engine.Executable.execute`, xlair's own call path
(`call_leaves`) and IREE's invoke alone.

The plugin's table is chosen once per process, so each table runs in a child process of its
own: the C shim's (when built: `make`) and the Python-built ctypes table (XLAIR_PJRT_SHIM=0);
each child times XLA:CPU beside the plugin (bench/harness.py `interleaved`), and the ratios
are within one child.

Run: .venv/bin/python bench/bench_pjrt.py [--quick]   (prints the markdown table); `make bench`
writes it into bench/RESULTS.md as the section "pjrt".
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from harness import cpu_name  # noqa: E402

TITLE = "## The PJRT plugin: per-call overhead against XLA:CPU"
TABLES = (("shim", "C shim"), ("ctypes", "ctypes table (XLAIR_PJRT_SHIM=0)"))


def eager_loop(x, y):
    """Eager jnp ops, one after the other (each a small program of its own for JAX)."""
    import jax.numpy as jnp
    a = x * y
    b = a + x
    c = jnp.sin(b)
    d = jnp.exp(c) - y
    e = jnp.tanh(d)
    f = jnp.maximum(e, x)
    g = jnp.cumsum(f)
    h = jnp.where(g > 1, g, -g)
    return h.sum(), (h @ f)


def breakdown(f, x, y, rounds: int) -> dict:
    """Parts of the plugin's per-call time for `f(x, y)` (xlair device arrays), each timed on
    its own (interleaved): seconds per call."""
    import ctypes

    import iree.runtime as rt
    import jax

    from harness import interleaved
    from xlair.pjrt import abi, api, engine
    f(x, y).block_until_ready()
    (e_handle, exe), = [(h, o) for h, o in api._live.items() if type(o) is engine.Executable and o.outputs
                        and len(o.exe._leaves_in) == 2 and "multiply" in o.text and "add" in o.text]
    handles = [h for h, o in api._live.items() if type(o) is engine.Buffer and o.array is not None][:2]
    bufs = [api._live[h] for h in handles]
    device = exe.client.devices[0]
    arrays = [b.array for b in bufs]
    table = abi.Api.from_address(api.table())
    args_t = abi.ARGS["PJRT_LoadedExecutable_Execute"]
    hs = (ctypes.c_void_p * 2)(*handles)
    lists = (ctypes.c_void_p * 1)(ctypes.addressof(hs))
    out = (ctypes.c_void_p * 1)()
    out_lists = (ctypes.c_void_p * 1)(ctypes.addressof(out))
    events = (ctypes.c_void_p * 1)()
    a = args_t(struct_size=ctypes.sizeof(args_t), executable=e_handle, argument_lists=ctypes.addressof(lists),
               num_devices=1, num_args=2, output_lists=ctypes.addressof(out_lists),
               device_complete_events=ctypes.addressof(events))
    execute = abi.ENTRY(table.PJRT_LoadedExecutable_Execute)
    d_t = abi.ARGS["PJRT_Buffer_Destroy"]
    d = d_t(struct_size=ctypes.sizeof(d_t))
    destroy = abi.ENTRY(table.PJRT_Buffer_Destroy)
    event_destroy = abi.ENTRY(table.PJRT_Event_Destroy)
    ev_t = abi.ARGS["PJRT_Event_Destroy"]
    ev = ev_t(struct_size=ctypes.sizeof(ev_t))
    pa, pd, pev = ctypes.addressof(a), ctypes.addressof(d), ctypes.addressof(ev)

    def via_table():
        assert execute(pa) is None
        d.buffer, ev.event = out[0], events[0]
        destroy(pd)
        event_destroy(pev)

    def via_table_keep():       # (the result's handle dropped from Python, as a destroy would)
        assert execute(pa) is None
        api._live.pop(out[0])
        ev.event = events[0]
        event_destroy(pev)

    ins = rt.VmVariantList(2)
    for arr in arrays:
        ins.push_ref(arr._bv)
    invoke, fn = exe.exe._ctx.vm_context.invoke, exe.exe._fn

    def iree():
        outs = rt.VmVariantList(1)
        invoke(fn, ins, outs)
    fns = {"jax.jit call": lambda: f(x, y).block_until_ready(),
           "Execute + Buffer_Destroy through the table": via_table,
           "Execute through the table": via_table_keep,
           "engine.Executable.execute": lambda: exe.execute(arrays, device),
           "xlair call path (call_leaves)": lambda: exe.exe.call_leaves(arrays),
           "IREE invoke alone": iree}
    jax.block_until_ready(fns["jax.jit call"]())
    return {k: v["median"] for k, v in interleaved(fns, rounds=rounds).items()}


def child(quick: bool) -> dict:
    """Runs in the child process (JAX_PLATFORMS=xlair,cpu; the table as the environment says)."""
    import jax
    import numpy as np
    from jax import monitoring

    import xlair as xla
    import xlair.pjrt
    from harness import interleaved
    from xlair.pjrt import engine, shim
    table = xlair.pjrt.table()
    compiles = [0]

    def on_event(event, duration, **_):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles[0] += 1
    monitoring.register_event_duration_secs_listener(on_event)

    cpu, xd = jax.devices("cpu")[0], jax.devices("xlair")[0]
    hx, hy = np.arange(4, dtype=np.float32) / 3, np.ones(4, np.float32) / 2
    f = jax.jit(lambda x, y: x * y + 1)
    fns, first = {}, {}
    for name, dev in (("XLA:CPU", cpu), ("xlair", xd)):
        x, y = jax.device_put(hx, dev), jax.device_put(hy, dev)
        want = hx * hy + 1
        np.testing.assert_allclose(np.asarray(f(x, y)), want, rtol=1e-6)
        assert f(x, y).devices() == {dev}
        fns[f"jit {name}"] = lambda f=f, x=x, y=y: f(x, y).block_until_ready()
        fns[f"eager {name}"] = lambda x=x, y=y: (x * y).block_until_ready()
        # the loop's first pass: compiles (counted), then the second: none
        n0, p0 = compiles[0], engine.Executable.compiles
        t = time.perf_counter()
        jax.block_until_ready(eager_loop(x, y))
        t1 = time.perf_counter() - t
        n1, p1 = compiles[0], engine.Executable.compiles
        jax.block_until_ready(eager_loop(x, y))
        n2, p2 = compiles[0], engine.Executable.compiles
        first[name] = {"first_s": t1, "compiles_1": n1 - n0, "compiles_2": n2 - n1,
                       "pjrt_compiles_1": p1 - p0, "pjrt_compiles_2": p2 - p1}
        fns[f"loop {name}"] = lambda x=x, y=y: jax.block_until_ready(eager_loop(x, y))
    got = [np.asarray(v) for v in eager_loop(jax.device_put(hx, xd), jax.device_put(hy, xd))]
    want = [np.asarray(v) for v in eager_loop(jax.device_put(hx, cpu), jax.device_put(hy, cpu))]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)
    xf = xla.jit(lambda x, y: x * y + 1)
    ax, ay = xla.device_put(hx), xla.device_put(hy)
    np.testing.assert_allclose(np.asarray(xf(ax, ay)), hx * hy + 1, rtol=1e-6)
    fns["jit xlair.jit"] = lambda: xf(ax, ay)
    before = compiles[0], engine.Executable.compiles
    res = interleaved(fns, rounds=7 if quick else 21)
    parts = breakdown(f, jax.device_put(hx, xd), jax.device_put(hy, xd), rounds=7 if quick else 21)
    assert (compiles[0], engine.Executable.compiles) == before, "a timed call compiled"
    return {"table": table, "reason": shim.REASON, "times": {k: v["median"] for k, v in res.items()},
            "mins": {k: v["min"] for k, v in res.items()}, "loop": first, "breakdown": parts}


def run(quick: bool = False) -> dict:
    """Both tables, each in a child process; {"shim": ..., "ctypes": ...} and the facts."""
    t0 = time.perf_counter()
    date = time.strftime("%Y-%m-%d %H:%M %Z")
    out = {}
    for key, _ in TABLES:
        env = {**os.environ, "JAX_PLATFORMS": "xlair,cpu"}
        env.pop("XLAIR_PJRT_SHIM", None)
        if key == "ctypes":
            env["XLAIR_PJRT_SHIM"] = "0"
        p = subprocess.run([sys.executable, __file__, "--child"] + (["--quick"] if quick else []),
                           env=env, capture_output=True, text=True, timeout=1200)
        line = [s for s in p.stdout.splitlines() if s.startswith("{")]
        if p.returncode != 0 or not line:
            raise RuntimeError(f"bench_pjrt child ({key}) failed: rc={p.returncode}\n{p.stdout[-2000:]}\n"
                               f"{p.stderr[-4000:]}")
        out[key] = json.loads(line[-1])
        print(f"pjrt: {key} table measured ({out[key]['table']})", flush=True)
    return {"runs": out, "date": date, "cpu": cpu_name(), "cores": os.cpu_count(),
            "elapsed": time.perf_counter() - t0, "quick": quick}


def _us(t: float) -> str:
    return f"{t * 1e6:.1f}"


def section_lines(res: dict) -> list[str]:
    runs = res["runs"]
    quick = " (--quick)" if res["quick"] else ""
    L = [TITLE, "",
         f"Measured {res['date']}; section took {res['elapsed']:.0f} s{quick}; "
         f"CPU: {res['cpu']} ({res['cores']} cores); bench/bench_pjrt.py.", "",
         "Per call in microseconds, the median of interleaved rounds (bench/harness.py), JAX 0.10 on both "
         "sides: XLA:CPU through `jax.jit` on the CPU device, xlair through the PJRT plugin "
         "(`JAX_PLATFORMS=xlair,cpu`), float32[4] arguments already on the device, `block_until_ready` each "
         "call.  Each table of the plugin runs in a process of its own, beside its own XLA:CPU measurement; "
         "ratio = xlair / XLA:CPU.", "",
         "| case | plugin table | XLA:CPU us | xlair us | ratio |", "|---|---|---|---|---|"]
    cases = (("jit", "`jax.jit(lambda x, y: x * y + 1)`"), ("eager", "eager `x * y`"),
             ("loop", "eager loop, second pass (`eager_loop`)"))
    for case, label in cases:
        for key, name in TABLES:
            r = runs.get(key)
            if r is None:
                continue
            tx, tc = r["times"][f"{case} xlair"], r["times"][f"{case} XLA:CPU"]
            table = name if r["table"] == key else f"{r['table']} (asked: {name}; {r['reason']})"
            L.append(f"| {label} | {table} | {_us(tc)} | {_us(tx)} | {tx / tc:.1f}x |")
    ref = runs.get("shim") or runs.get("ctypes")
    L.append(f"| `xlair.jit` of the same function on `xla.Array`s (no JAX, no PJRT) | - | "
             f"{_us(ref['times']['jit XLA:CPU'])} | {_us(ref['times']['jit xlair.jit'])} | "
             f"{ref['times']['jit xlair.jit'] / ref['times']['jit XLA:CPU']:.1f}x |")
    L += ["", "The eager loop (`eager_loop` in bench/bench_pjrt.py: jnp ops on float32[4], each compiled by "
          "JAX as a program of its own) run twice on each device; compiles counted by JAX's backend-compile "
          "events (and, for xlair, the plugin's PJRT_Client_Compile calls); the first pass's time includes them "
          "(the shim's process runs first: with bench.py's private, empty artifact cache its xlair pass "
          "compiles cold, and the ctypes process finds those artifacts in the cache):", "",
          "| plugin table | device | first pass s | compiles, first pass | compiles, second pass | "
          "PJRT compiles (xlair), first / second |", "|---|---|---|---|---|---|"]
    for key, name in TABLES:
        r = runs.get(key)
        if r is None:
            continue
        for dev in ("XLA:CPU", "xlair"):
            lp = r["loop"][dev]
            pj = f"{lp['pjrt_compiles_1']} / {lp['pjrt_compiles_2']}" if dev == "xlair" else "-"
            L.append(f"| {name} | {dev} | {lp['first_s']:.2f} | {lp['compiles_1']} | {lp['compiles_2']} "
                     f"| {pj} |")
    L += ["", "Where the plugin's jitted call goes (each part timed on its own, interleaved; the calls "
          "through the table are made from Python with ctypes, ~0.15 us of which is that call itself; what "
          "the jitted call takes beyond Execute + Buffer_Destroy is JAX's dispatch and the calls the shim "
          "answers):",
          "", "| part | " + " | ".join(name for key, name in TABLES if key in runs) + " |",
          "|---|" + "---|" * len(runs)]
    parts = next(iter(runs.values()))["breakdown"]
    for part in parts:
        L.append(f"| {part} | " + " | ".join(_us(runs[key]["breakdown"][part]) for key, _ in TABLES
                                             if key in runs) + " |")
    L.append("")
    return L


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child:
        print(json.dumps(child(opts.quick)), flush=True)
        return
    print("\n".join(section_lines(run(opts.quick))))


if __name__ == "__main__":
    main()
