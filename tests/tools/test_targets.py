"""The target table, device probes, artifact detection, and the table of target limitations:
each limitation is checked to be real (IREE still fails or still computes wrongly without
xlair's check), so an entry that IREE has fixed since shows up here instead of hiding ops."""
import os
import subprocess
import sys

import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.compile import compile_vmfb
from xlair.dialect.types import Shape, element_type
from xlair.targets import (LIMITATIONS, TARGETS, TargetLimitation, artifact_target, device_available,
                           limitations_of, target)
from xlair_testing import assert_close, random_array


def test_target_names_and_flags(monkeypatch):
    monkeypatch.delenv("XLAIR_CPU", raising=False)      # the cpu target's default chip: host
    assert target("llvm-cpu") is TARGETS["cpu"] and target("hip") is TARGETS["rocm"]
    assert target("vulkan-spirv") is TARGETS["vulkan"]
    with pytest.raises(xla.XlaError, match="unknown target 'metal'"):
        target("metal")
    assert "--iree-llvmcpu-target-cpu=host" in TARGETS["cpu"].compile_flags()
    assert "--iree-llvmcpu-target-cpu=znver3" in TARGETS["cpu"].compile_flags(cpu="znver3")
    vk = TARGETS["vulkan"]
    assert not any(f.startswith("--iree-vulkan-target") for f in vk.compile_flags())
    assert "subgroup = none" in vk.device_target() and "storage = b64|b32|b16|b8" in vk.device_target()
    assert "--iree-vulkan-target=pascal" in vk.compile_flags("pascal") and vk.device_target("pascal") is None
    assert "--iree-cuda-target=sm_80" in TARGETS["cuda"].compile_flags()
    assert "--iree-rocm-target=gfx942" in TARGETS["rocm"].compile_flags()
    assert "--iree-rocm-target=gfx90a" in TARGETS["rocm"].compile_flags("gfx90a")


def test_device_probe_is_cheap_and_cached():
    for name in TARGETS:
        assert isinstance(device_available(name), bool)
    assert device_available("cpu")
    assert device_available.cache_info().hits >= 0


def test_e2e_targets_follow_the_machine_and_the_environment():
    code = "import xlair_testing as t; print(','.join(t.E2E_TARGETS))"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(__file__)))
    env.pop("XLAIR_TEST_TARGETS", None)
    auto = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert auto.returncode == 0, auto.stderr
    expected = ["cpu"] + [t for t in ("vulkan", "cuda", "rocm") if device_available(t)]
    assert auto.stdout.strip() == ",".join(expected)
    env["XLAIR_TEST_TARGETS"] = "cpu, vulkan"
    forced = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert forced.stdout.strip() == "cpu,vulkan"


def _prog(name, shapes, fn):
    b = xla.Builder(name)
    ps = [b.parameter(i, s) for i, s in enumerate(shapes)]
    fn(b, *ps)
    return b.build()


def test_generic_vulkan_target_reduces_large_arrays():
    """xlair's own Vulkan chip description uses no subgroup operations, so reductions are
    right whatever the device's subgroup size (IREE's desktop GPU names assume 16-64 lanes;
    lavapipe has 8 and their large reductions come out wrong)."""
    if not device_available("vulkan"):
        pytest.skip("no Vulkan device on this machine")
    b = xla.Builder("sums")
    x = b.parameter(0, Shape(xla.F32, (12, 528)))
    add = _prog("add", [Shape(xla.F32, ())] * 2, lambda c, u, v: O.add(u, v))
    O.tuple(b, [O.reduce(x, O.constant(b, np.float32(0)), add, [1]),
                O.reduce(x, O.constant(b, np.float32(0)), add, [0, 1])])
    comp = b.build()
    a = np.random.default_rng(0).uniform(-1, 1, (12, 528)).astype(np.float32)
    assert_close(xla.compile(comp, target="vulkan")(a), xla.interpret(comp, a), comp.result_shape, "sums", 50)


def test_artifact_target(tmp_path):
    comp = _prog("neg", [Shape(xla.F32, (3,))], lambda b, x: O.neg(x))
    for name in ("cpu", "vulkan", "cuda", "rocm"):
        assert artifact_target(compile_vmfb(comp, name)) == name
    assert artifact_target(b"no device code") is None


def _e(name):
    return element_type(name)


# One program per limitation that hits it: (target, label, computation, args or None for compile-only).
def _cases():
    rng = np.random.default_rng(3)
    out = []
    for t in ("s8", "u16", "s64"):
        out.append(("vulkan", f"clz-{t}", _prog("clz", [Shape(_e(t), (6,))], lambda b, x: O.clz(x)),
                    [random_array(_e(t), (6,), rng, "bits")]))
    for op in ("exp", "log", "tanh", "pow"):
        fn = getattr(O, op)
        n = 2 if op == "pow" else 1
        out.append(("vulkan", f"{op}-f64", _prog(op, [Shape(xla.F64, (4,))] * n, lambda b, *x, fn=fn: fn(*x)),
                    [random_array(xla.F64, (4,), rng, "positive") for _ in range(n)]))
    out.append(("vulkan", "exp-c128", _prog("e", [Shape(xla.C128, (4,))], lambda b, x: O.exp(x)),
                [random_array(xla.C128, (4,), rng, "small")]))
    for src, dst in (("u8", "s32"), ("s8", "f32"), ("u16", "f32")):
        def dot(b, x, y, dst=dst):
            O.dot(x, y, preferred_element_type=_e(dst))
        out.append(("vulkan", f"dot-{src}-{dst}", _prog("d", [Shape(_e(src), (4, 8)), Shape(_e(src), (8, 3))], dot),
                    [random_array(_e(src), (4, 8), rng, "bits"),
                     random_array(_e(src), (8, 3), rng, "bits")]))
    return out


CASES = _cases()


def test_every_limitation_has_a_case():
    hit = set()
    for tgt, _label, comp, _args in CASES:
        for _op, lim in limitations_of(comp.module, tgt):
            hit.add(id(lim))
    missing = [f"{lim.target}: {', '.join(lim.ops)} on {lim.types}" for lim in LIMITATIONS if id(lim) not in hit]
    assert not missing, f"limitations without a case in tests/tools/test_targets.py: {missing}"


@pytest.mark.parametrize("tgt,label,comp,args", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_limitation_is_real(tgt, label, comp, args):
    """xlair refuses the program with the reason; compiled anyway, IREE fails or is wrong
    (for a limitation of xlair's own routes, the refusal is the whole case)."""
    found = limitations_of(comp.module, tgt)
    assert found, f"{label} no longer matches a limitation on {tgt}"
    with pytest.raises(TargetLimitation, match=f"target {tgt} cannot run"):
        compile_vmfb(comp, tgt, cache=False)
    if all(lim.by == "xlair" for _op, lim in found):
        return
    try:
        vmfb = compile_vmfb(comp, tgt, cache=False, check_limits=False)
    except xla.XlaError as e:
        assert "IREE could not compile" in str(e)
        return
    if args is None or not device_available(tgt):
        pytest.fail(f"IREE now compiles {label} for {tgt}: check it and drop the limitation")
    got = xla.Executable(vmfb, tgt)(*args)
    with pytest.raises(AssertionError):
        assert_close(got, xla.interpret(comp, *args), comp.result_shape, label, scale=4.0)


def test_other_chips_are_not_checked():
    """The table describes the default chip; with another one IREE's own verdict stands."""
    comp = _prog("clz", [Shape(xla.S8, (6,))], lambda b, x: O.clz(x))
    with pytest.raises(xla.XlaError, match="IREE could not compile for vulkan"):
        compile_vmfb(comp, "vulkan", arch="valhall", cache=False)
