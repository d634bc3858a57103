"""The real-program suite (tests/models/model_programs.py) unchanged under the PJRT plugin:
each program's plain `jax.jit` with xlair as JAX's default device (JAX_PLATFORMS=xlair,cpu),
against the same `jax.jit` on XLA:CPU in the same process, by the suite's own comparison
(model_compare.mismatches: per-leaf rtol and scaled atol, integers exactly).  All programs run
in one child process (JAX starts once); each program is a test case reading its outcome.
The child takes a platform too: `python -c "$(...CHILD)" tests/models xlair_vulkan` with
JAX_PLATFORMS=xlair_vulkan,cpu runs the suite on a GPU platform (docs/pjrt.md)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("jax")
MODELS = pathlib.Path(__file__).resolve().parent.parent / "models"
sys.path.insert(0, str(MODELS))
from model_programs import PROGRAMS  # noqa: E402
from xlair_testing import once_per_run  # noqa: E402

CHILD = r"""
import json, sys, traceback
sys.path.insert(0, sys.argv[1])
import jax
from model_compare import leaves, mismatches
from model_programs import PROGRAMS
PLATFORM = sys.argv[2] if len(sys.argv) > 2 else "xlair"     # (or a GPU platform: xlair_vulkan)
NAMES = sys.argv[3].split(",") if len(sys.argv) > 3 else sorted(PROGRAMS)
XL, CPU = jax.devices(PLATFORM)[0], jax.devices("cpu")[0]
assert jax.default_backend() == PLATFORM
for name in NAMES:
    prog = PROGRAMS[name]
    try:
        fn, args = prog.make()
        with jax.default_device(CPU):
            want = leaves(jax.jit(fn)(*jax.device_put(args, CPU)))
        out = jax.jit(fn)(*args)                      # unchanged: the default device, xlair
        on = {d for x in jax.tree_util.tree_leaves(out) if hasattr(x, "devices") for d in x.devices()}
        bad = mismatches(prog, leaves(out), want)
        if on - {XL}:
            bad.append(f"results on {sorted(map(str, on))}, not on {PLATFORM}")
    except Exception as e:                           # noqa: BLE001  (the outcome is reported)
        bad = [f"{type(e).__name__}: {str(e)[:2000]}"]
    print("RESULT " + json.dumps({"name": name, "bad": bad}), flush=True)
"""


@pytest.fixture(scope="module")
def outcomes(request, tmp_path_factory, worker_id):
    """The outcome of each program this run selected (the quick profile samples them), from one
    child for the whole run: both xdist workers may hold some of this module's tests."""
    names = sorted({it.callspec.params["name"] for it in request.session.items
                    if it.path == request.path and hasattr(it, "callspec")})

    def run_child() -> dict:
        env = {**os.environ, "JAX_PLATFORMS": "xlair,cpu"}
        p = subprocess.run([sys.executable, "-c", CHILD, str(MODELS), "xlair", ",".join(names)], env=env,
                           capture_output=True, text=True,
                           timeout=3000)   # (all 41 compiled: 25 minutes did not suffice on a cold cache beside another worker)
        found = {}
        for line in p.stdout.splitlines():
            if line.startswith("RESULT "):
                rec = json.loads(line[len("RESULT "):])
                found[rec["name"]] = rec["bad"]
        assert p.returncode == 0 and len(found) == len(names), (
            f"rc={p.returncode}, {len(found)} of {len(names)} programs reported\n{p.stderr[-4000:]}")
        return found
    return once_per_run(tmp_path_factory, worker_id, "pjrt-programs:" + ",".join(names), run_child)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.sample(every=4)
def test_program_under_the_plugin_matches_xla_cpu(outcomes, name):
    bad = outcomes[name]
    assert not bad, f"{name} under JAX_PLATFORMS=xlair differs from XLA:CPU:\n  " + "\n  ".join(bad)
