"""Helpers of the test suite: random inputs per element type, tolerances, running a
computation compiled and in the reference interpreter side by side."""
from __future__ import annotations

import os

import numpy as np
import pytest

import xlair as xla
from xlair.dialect.types import BF16, F16, F32, F64, Shape
from xlair.targets import device_available, limitations_of


def _e2e_targets() -> list[str]:
    env = os.environ.get("XLAIR_TEST_TARGETS")
    if env is not None:
        return [t.strip() for t in env.split(",") if t.strip()]
    return ["cpu"] + [t for t in ("vulkan", "cuda", "rocm") if device_available(t)]


#: targets the end-to-end tests run on: a test taking a `target` argument runs once per target.
#: cpu always, plus vulkan / cuda / rocm where this machine has such a device (a cached probe of
#: the IREE driver); XLAIR_TEST_TARGETS=cpu,vulkan (comma-separated) overrides the detection.
E2E_TARGETS = _e2e_targets()


#: `make test` runs the quick profile, `make test-full` (XLAIR_TEST_FULL=1) the whole suite.  The
#: quick profile keeps a fixed sample of the checks that compile large programs cold for many
#: parameters (each program for each GPU target, the device-code linear algebra's matrix of
#: functions, shapes and types, the real-program suite under the plugin): a test marked
#: `sample` or `full` runs there in part or not at all (tests/conftest.py).  A cold `make test`
#: with the whole matrix measured about 3.9 hours of test time, 2 hours of wall time on a 2-core
#: AMD EPYC (2026-12-02), against CI's limit of 90 minutes.  XLAIR_GPU_COMPILE=all and
#: XLAIR_VULKAN_ALL=1 are older names of it.
FULL = (os.environ.get("XLAIR_TEST_FULL") == "1" or os.environ.get("XLAIR_GPU_COMPILE") == "all"
        or os.environ.get("XLAIR_VULKAN_ALL") == "1")


def gpu_cases(cases: list, gpus: tuple = ("cuda", "rocm")) -> list[tuple]:
    """(case, gpu) pairs of a GPU compile check: every case for every GPU in the full profile,
    otherwise each case for one GPU, taking turns, so that every case is compiled for a GPU
    and every GPU compiles its share (a test may also sample the pairs: `sample`)."""
    return [(c, g) for i, c in enumerate(cases) for j, g in enumerate(gpus)
            if FULL or i % len(gpus) == j]


def once_per_run(tmp_path_factory, worker_id: str, key: str, compute):
    """compute()'s JSON-able value, computed once for the whole test run: under xdist the
    workers share it (the first to take the lock computes it and writes it beside the workers'
    temporary folders, the others wait and read it), so that a module fixture whose tests
    xdist's worksteal splits between the workers (a steal takes the tail of a worker's queue)
    does not run its expensive part twice.  Without xdist it is simply compute()."""
    if worker_id == "master":
        return compute()
    import fcntl
    import hashlib
    import json
    shared = tmp_path_factory.getbasetemp().parent      # (this run's, shared by its workers)
    path = shared / f"once-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    with open(shared / (path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return json.loads(path.read_text())
        value = compute()
        path.write_text(json.dumps(value))
        return value


def full_only(*values):
    """A parametrized case that runs only in the full profile (`make test-full`)."""
    return pytest.param(*values, marks=pytest.mark.full)


def iree_compiled(text: str, tgt, flags) -> bytes:
    """What `xlair.compile.iree_compile` makes of a lowered module (an artifact, or the IR of
    an earlier stage that flags such as `--compile-to=stream` ask for), kept in the test cache
    by what IREE is given (the text, target, flags, the CPU they resolve to and IREE's
    version): tests that compile a module as it is lowered, without compile_vmfb (a CUDA
    module's stream IR, its loop form on the CPU backend), compile only when it changed.
    Marked apart from compile_vmfb's entries, which hold only artifacts that passed its checks."""
    from xlair.artifacts import cache_get, cache_put, seal, unseal
    from xlair.compile import iree_compile, iree_input_key
    flags = list(flags)
    key = iree_input_key(text, tgt, flags + ["(iree_compile alone)"])
    data = cache_get(key)
    if data is None:
        data = seal(iree_compile(text, tgt, flags))
        cache_put(key, data)
    return unseal(data)


def skip_if_unsupported(comp: xla.Computation, target: str) -> None:
    """pytest.skip with the stated reason when the computation uses something IREE cannot do on
    the target (the table `xlair.targets.LIMITATIONS`, listed in docs/status.md)."""
    found = limitations_of(comp.module, target)
    if found:
        op, lim = found[0]
        pytest.skip(f"{target}: '{op}' on {lim.types}: {lim.reason}")

TOL = {  # (rtol, atol) per floating-point component type
    "f16": (4e-3, 4e-3), "bf16": (2e-2, 2e-2), "f32": (2e-5, 2e-5), "f64": (1e-11, 1e-11),
}


def tolerance(et, scale: float = 1.0):
    rtol, atol = TOL.get(et.component.name, (0, 0))
    return rtol * scale, atol * scale


def random_array(et, dims, rng, domain: str = "any"):
    """Random values of an element type; `domain` restricts them for partial functions:
    'positive' (> 0), 'unit' (|x| < 1), 'small' (small integers / moderate floats)."""
    dims = tuple(dims)
    if et.is_pred:
        return rng.random(dims) < 0.5
    if et.is_integer:
        info = np.iinfo(et.dtype)
        lo, hi = (max(info.min, -60), min(info.max, 60)) if domain != "bits" else (info.min, info.max)
        if domain == "positive":
            lo = 1
        if domain == "small":
            lo, hi = max(info.min, -5), min(info.max, 5)
        if domain == "bits":
            return rng.integers(lo, hi, dims, dtype=et.dtype, endpoint=True)
        return rng.integers(lo, hi, dims, endpoint=True).astype(et.dtype)
    if et.is_complex:
        comp = et.component
        return (random_array(comp, dims, rng, domain) + 1j * random_array(comp, dims, rng, domain)).astype(et.dtype)
    if domain == "positive":
        x = rng.uniform(0.1, 3.0, dims)
    elif domain == "unit":
        x = rng.uniform(-0.9, 0.9, dims)
    elif domain == "small":
        x = rng.uniform(-1.5, 1.5, dims)
    else:
        x = rng.uniform(-3.0, 3.0, dims)
    return np.asarray(x).astype(et.dtype)


def assert_close(got, expected, shape: Shape, what: str = "", scale: float = 1.0):
    if shape.is_tuple:
        assert isinstance(got, tuple) and len(got) == len(shape.tuple_shapes), f"{what}: {got!r}"
        for i, (g, e, s) in enumerate(zip(got, expected, shape.tuple_shapes)):
            assert_close(g, e, s, f"{what}[{i}]", scale)
        return
    got = np.asarray(got)
    assert got.dtype == shape.dtype, f"{what}: dtype {got.dtype}, expected {shape.dtype}"
    assert got.shape == shape.dims, f"{what}: shape {got.shape}, expected {shape.dims}"
    et = shape.element_type
    if et.is_floating:
        rtol, atol = tolerance(et, scale)
        g = got.astype(np.complex128 if et.is_complex else np.float64)
        e = np.asarray(expected).astype(g.dtype)
        ok = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        if not ok.all():
            bad = np.argwhere(~ok)[:5]
            detail = ", ".join(f"{tuple(i)}: got {g[tuple(i)]!r} expected {e[tuple(i)]!r}" for i in bad)
            raise AssertionError(f"{what}: {int((~ok).sum())} of {ok.size} elements differ: {detail}")
    else:
        if not np.array_equal(got, np.asarray(expected)):
            bad = np.argwhere(got != np.asarray(expected))[:5]
            detail = ", ".join(f"{tuple(i)}: got {got[tuple(i)]!r} expected {np.asarray(expected)[tuple(i)]!r}"
                               for i in bad)
            raise AssertionError(f"{what}: elements differ: {detail}")


def run_and_compare(comp: xla.Computation, *args, target: str = "cpu", scale: float = 1.0, what: str = ""):
    """Compile for `target`, run, and compare with the reference interpreter; returns the result."""
    skip_if_unsupported(comp, target)
    expected = xla.interpret(comp, *args)
    got = xla.compile(comp, target=target)(*args)
    assert_close(got, expected, comp.result_shape, what or comp.name, scale)
    return got


def scalar_computation(op_name: str, et, n: int = 2) -> xla.Computation:
    """(T, T) -> T applying one binary op (add, max, ...)."""
    b = xla.Builder(f"{op_name}_{et.name}")
    ps = [b.parameter(i, Shape(et, ())) for i in range(n)]
    getattr(xla.ops, op_name)(*ps)
    return b.build()


def comp_of(fn, *shapes, name=None) -> xla.Computation:
    """Build a computation: `fn(builder, *parameters)`; the last op built is the root."""
    b = xla.Builder(name or fn.__name__)
    ps = [b.parameter(i, s) for i, s in enumerate(shapes)]
    fn(b, *ps)
    return b.build()


def check_example(comp: xla.Computation, args, expected, target: str = "cpu"):
    """A spec example: both the compiled program and the reference interpreter must give the
    spec's own numbers."""
    skip_if_unsupported(comp, target)
    for label, got in (("interpreter", xla.interpret(comp, *args)),
                       (target, xla.compile(comp, target=target)(*args))):
        _equal(got, expected, f"{comp.name} on {label}")


def _equal(got, expected, what):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), f"{what}: {got!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            _equal(g, e, f"{what}[{i}]")
        return
    e = np.asarray(expected)
    g = np.asarray(got)
    assert g.shape == e.shape, f"{what}: shape {g.shape}, expected {e.shape}"
    if g.dtype.kind in "fc":
        assert np.allclose(g, e, rtol=1e-6, atol=0, equal_nan=True), f"{what}: {g} != {e}"
        # signs of zeros and NaNs matter in the spec's examples
        assert np.array_equal(np.signbit(g.real), np.signbit(e.real)), f"{what}: signs {g} vs {e}"
    else:
        assert np.array_equal(g, e), f"{what}: {g} != {e}"


def check_rule(call, build, op: str, message: str, source: str, exact_op: bool = True) -> None:
    """A shape-rule case of tests/unit/test_shape_rules*.py: `call(*build())` raises an XlaError
    (a ValueError) carrying `message`, naming the op (`'xla.<op>' ...`; with `exact_op=False`
    any xla op: the rule of an op the call builds on the way), located in `source`, the test
    file of the builder call."""
    b, p = build()
    with pytest.raises(xla.XlaError) as e:
        call(b, p)
    text = str(e.value)
    assert message in text, text
    assert text.startswith(f"'xla.{op}' " if exact_op else "'xla."), text
    assert source in text, "the error points at the builder call's source line"
    assert isinstance(e.value, ValueError)
    assert_cites(e.value)


def assert_cites(e: "xla.XlaError") -> None:
    """The error cites its constraint (DESIGN.md rule 3): `.constraint` is set, the message ends
    in ` [<id>]`, and the id is listed in the op's record (or is one of the IR's rules)."""
    from xlair.dialect.checks import IR_CONSTRAINTS
    from xlair.dialect.core import REGISTRY
    assert e.constraint, f"no constraint id: {e.message}"
    assert e.message.endswith(f" [{e.constraint}]"), e.message
    listed = REGISTRY[e.op].constraints if e.op in REGISTRY else {}
    assert e.constraint in listed or e.constraint in IR_CONSTRAINTS, \
        f"{e.constraint} is not in the record of xla.{e.op}: {e.message}"
