"""How F32 matrix products are computed per target (lowering/targets.py `f32_products`,
lowering/contraction.py): on CUDA and ROCm as three BF16 products summed in F32 (what tensor
cores run), unless the precision config asks HIGHEST; on the CPU in F32.  The CUDA form is
compiled for the CPU and run there (its speed is measured on a GPU: bench/bench_gpu.py),
against numpy in float64, and against one BF16 product, which the three must beat by far.
The GPU tiles a target's description may ask for (mma_tiles, elementwise_threads) reach
IREE's CUDA code."""
import os
import pathlib
import sys

import numpy as np
import pytest

import xlair as xla
from xlair import BF16, F32, Shape
from xlair import ops as O
from xlair.compile import lower
from xlair.dialect.ir import context, lock
from xlair.targets import target as find_target
from xlair_testing import iree_compiled

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _product(m, k, n, precision=None, et=F32, preferred=None):
    b = xla.Builder("product")
    O.dot(b.parameter(0, Shape(et, (m, k))), b.parameter(1, Shape(et, (k, n))), precision_config=precision,
          preferred_element_type=preferred)
    return b.build()


def _lowered(comp, tgt: str) -> str:
    module = lower(comp, 1, tgt)
    with lock, context():
        return str(module)


def _run_form(comp, tgt: str, *args):
    """The module lowered for `tgt`, compiled for the CPU and run there."""
    cpu = find_target("cpu")
    return np.asarray(xla.Executable(iree_compiled(_lowered(comp, tgt), cpu, cpu.compile_flags()), "cpu")(*args))


def _bf16(x):
    import ml_dtypes
    return x.astype(ml_dtypes.bfloat16).astype(np.float64)


def _relative_error(got, want):
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


@pytest.mark.parametrize("gpu", ["cuda", "rocm"])
def test_gpu_f32_product_is_three_bf16_products(gpu):
    text = _lowered(_product(64, 96, 80), gpu)
    assert text.count("linalg.matmul") == 3 and "bf16" in text, text
    text = _lowered(_product(64, 96, 80, precision="HIGHEST"), gpu)
    assert text.count("linalg.matmul") == 1 and "bf16" not in text, text
    text = _lowered(_product(64, 96, 80, precision=("DEFAULT", "HIGHEST")), gpu)
    assert text.count("linalg.matmul") == 1 and "bf16" not in text, text


def test_cpu_f32_product_stays_f32():
    text = _lowered(_product(64, 96, 80), "cpu")
    assert text.count("linalg.matmul") == 1 and "bf16" not in text


def test_three_bf16_products_run_on_the_cpu_backend():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 96)).astype(np.float32)
    b = rng.standard_normal((96, 80)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    got = _run_form(_product(64, 96, 80), "cuda", a, b)
    err, one_pass = _relative_error(got, exact), _relative_error(_bf16(a) @ _bf16(b), exact)
    # measured: 4.4e-6 for the three products, 2.3e-3 for one BF16 product, 1.8e-7 in F32
    assert err < 2e-5 and err < one_pass / 100, (err, one_pass)
    highest = _run_form(_product(64, 96, 80, precision="HIGHEST"), "cuda", a, b)
    assert _relative_error(highest, exact) < 1e-6


def test_three_bf16_products_keep_infinities_and_nans():
    """An infinite or NaN element stays in the BF16 high part (its rest is 0, not inf - inf)."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    b = np.abs(rng.standard_normal((16, 4))).astype(np.float32) + 0.5
    a[0, 3], a[1, 5], a[2, 7] = np.inf, -np.inf, np.nan
    got = _run_form(_product(8, 16, 4), "cuda", a, b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.array_equal(np.isposinf(got), np.isposinf(want)) and np.array_equal(np.isneginf(got), np.isneginf(want))
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=2e-5, atol=2e-5)


def test_batched_product_from_jax_on_cuda():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 16, 24)).astype(np.float32)
    y = rng.standard_normal((3, 24, 8)).astype(np.float32)
    comp = xla.from_jax(lambda p, q: jnp.einsum("bij,bjk->bik", p, q), x, y)
    assert _lowered(comp, "cuda").count("linalg.batch_matmul") == 3
    got = _run_form(comp, "cuda", x, y)
    exact = np.einsum("bij,bjk->bik", x.astype(np.float64), y.astype(np.float64))
    assert _relative_error(got, exact) < 2e-5
    highest = xla.from_jax(lambda p, q: jnp.einsum("bij,bjk->bik", p, q, precision="highest"), x, y)
    assert _lowered(highest, "cuda").count("linalg.batch_matmul") == 1


@pytest.mark.parametrize("tgt", ["cpu", "cuda"])
def test_bf16_operands_of_an_f32_product_are_multiplied_as_they_are(tgt):
    """BF16 operands with an F32 result: the matmul reads them as BF16 and sums in F32 (no
    conversion pass over the operands); the products of BF16 values are exact in F32."""
    import ml_dtypes
    rng = np.random.default_rng(3)
    a = rng.standard_normal((32, 48)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((48, 16)).astype(ml_dtypes.bfloat16)
    comp = _product(32, 48, 16, et=BF16, preferred=F32)
    text = _lowered(comp, tgt)
    assert text.count("linalg.matmul") == 1 and "ins(%" in text
    got = _run_form(comp, tgt, a, b)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_vulkan_reduction_fused_into_a_broadcast_product():
    """A sum over one axis read by a product with nothing to sum (JAX's einsum "te,td->etd" of a
    one-hot's sum in tests/models' moe_top2_grad): IREE fused the reduction into the
    broadcast product's dispatch, and its SPIR-V code gave wrong products (half the elements,
    lavapipe).  On Vulkan the product reads its operands from dispatches of their own
    (broadcast_product_barriers).  Compiled for Vulkan; run where a Vulkan device is, against
    numpy."""
    from xlair.targets import device_available
    from xlair_testing import scalar_computation
    b = xla.Builder("sum_then_outer")
    o, y = b.parameter(0, Shape(F32, [12, 2, 4])), b.parameter(1, Shape(F32, [12, 16]))
    zero = O.constant(b, np.float32(0))
    s = O.reduce(o, zero, scalar_computation("add", F32), [1])
    O.transpose(O.dot_general(y, s, xla.DotDimensionNumbers((), (), (0,), (0,))), [2, 0, 1])
    exe = xla.compile(b.build(), target="vulkan")
    if not device_available("vulkan"):
        pytest.skip("compiled; no Vulkan device to run it on")
    rng = np.random.default_rng(7)
    on, yn = rng.standard_normal((12, 2, 4)).astype(np.float32), rng.standard_normal((12, 16)).astype(np.float32)
    want = np.einsum("te,td->etd", on.astype(np.float64).sum(1), yn)
    np.testing.assert_allclose(np.asarray(exe(on, yn)), want, rtol=1e-5, atol=1e-5)


def _conv_reference(x, w):
    """A 3x3 SAME convolution of NHWC x with HWIO w, in float64 (numpy's sliding windows)."""
    xp = np.pad(x.astype(np.float64), [(0, 0), (1, 1), (1, 1), (0, 0)])
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))     # [N, H, W, C, kh, kw]
    return np.einsum("nhwcij,ijco->nhwo", win, w.astype(np.float64))


@pytest.mark.parametrize("layout", [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW")])
def test_gpu_f32_convolution_is_three_bf16_convolutions(layout):
    """An F32 convolution on CUDA and ROCm as three BF16 convolutions summed in F32, as a
    product is (XLA:GPU runs it in TF32 at DEFAULT precision); HIGHEST keeps F32.  The CUDA
    form, run on the CPU backend, against numpy in float64 and against one BF16 convolution."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 6, 7, 16)).astype(np.float32)
    w = rng.standard_normal((3, 3, 16, 8)).astype(np.float32)
    exact = _conv_reference(x, w)
    one_pass = _relative_error(_conv_reference(_bf16(x), _bf16(w)), exact)
    xin = x if layout[0] == "NHWC" else np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    win = w if layout[1] == "HWIO" else np.ascontiguousarray(w.transpose(3, 2, 0, 1))

    def conv(precision):
        return lambda a, b: jax.lax.conv_general_dilated(a, b, (1, 1), "SAME", dimension_numbers=layout,
                                                         precision=precision)
    named = "linalg.conv_2d_nhwc_hwcf" if layout[0] == "NHWC" else "linalg.conv_2d_nchw_fchw"
    comp = xla.from_jax(conv(None), xin, win)
    for gpu in ("cuda", "rocm"):
        text = _lowered(comp, gpu)
        assert text.count(named) == 3 and "bf16" in text, text
    assert _lowered(comp, "cpu").count(named) + _lowered(comp, "cpu").count("linalg.matmul") == 1
    got = _run_form(comp, "cuda", xin, win)
    if layout[0] == "NCHW":
        got = got.transpose(0, 2, 3, 1)
    err = _relative_error(got, exact)
    assert err < 2e-5 and err < one_pass / 100, (err, one_pass)
    highest = xla.from_jax(conv("highest"), xin, win)
    text = _lowered(highest, "cuda")
    assert text.count(named) == 1 and "bf16" not in text, text
    got = _run_form(highest, "cuda", xin, win)
    assert _relative_error(got.transpose(0, 2, 3, 1) if layout[0] == "NCHW" else got, exact) < 1e-6


def test_mma_tiles_reach_iree(monkeypatch, tmp_path):
    """A target's mma_tiles (lowering/targets.py: measured against IREE's own choice by make
    bench-gpu before one is a default) become a BF16 matmul's compilation_info where they
    divide it, for each of the three products of an F32 one too, and IREE's CUDA code takes
    them: its kernel has the 256 threads asked for (IREE's own choice is 128)."""
    import dataclasses
    import xlair.lowering.targets as lt
    from xlair.compile import compile_vmfb
    monkeypatch.setitem(lt.DESCRIPTIONS, "cuda", dataclasses.replace(lt.CUDA, mma_tiles=(128, 128, 64, 256, 3)))
    text = _lowered(_product(256, 512, 384, et=BF16, preferred=F32), "cuda")
    assert text.count("linalg.matmul {compilation_info") == 1, text
    for part in ("workgroup = [128, 128, 0]", "subgroup = [4, 4, 0]", "reduction = [0, 0, 4]",
                 "NV_MMA_SYNC_F32_16x8x16_BF16", "workgroup_size = [256, 1, 1]", "prefetch_num_stages = 3"):
        assert part in text, (part, text)
    assert _lowered(_product(256, 512, 384), "cuda").count("linalg.matmul {compilation_info") == 3
    assert "compilation_info" not in _lowered(_product(200, 512, 384, et=BF16, preferred=F32), "cuda")
    compile_vmfb(_product(256, 512, 384, et=BF16, preferred=F32), "cuda", cache=False,
                 flags=[f"--iree-hal-dump-executable-intermediates-to={tmp_path}"])
    kernels = "".join(p.read_text() for p in tmp_path.glob("*.optimized.ll"))
    assert '"nvvm.maxntid"="256,1,1"' in kernels and "mma.m16n8k16" in kernels


def test_elementwise_threads_give_cuda_element_wise_dispatches_their_threads(monkeypatch, tmp_path):
    """A target's elementwise_threads (lowering/targets.py; measured against IREE's own choice
    by make bench-gpu before one is a default): IREE's CUDA code for a fused element-wise
    dispatch (tanh(x)*y + exp(-x*x) on 64x1024, collapsed to one dimension) has the 256
    threads asked for (IREE's own choice: 32), with 128-bit loads.  A loop in xlair's thread
    form (while_loop_collatz: a generic whose body is the loop) and an op of fewer elements
    than a workgroup's (IREE's copies of a few elements into a strided slice failed to tile
    so) keep IREE's choice.  The library is named in the flags, the same in every process (the
    compile cache's key), and given to IREE as a file of the process's own."""
    import dataclasses
    import re

    import jax.numpy as jnp
    import xlair.lowering.targets as lt
    from xlair.compile import _with_library_files, compile_vmfb
    from xlair.lowering.device_loops import THREAD_ATTR
    from xlair.targets import TRANSFORM_LIBRARY_FLAG
    sys.path.insert(0, str(ROOT / "tests" / "models"))
    try:
        from model_programs import PROGRAMS
    finally:
        sys.path.remove(str(ROOT / "tests" / "models"))
    x = np.ones((64, 1024), np.float32)
    small = np.ones(64, np.float32)
    fn, args = PROGRAMS["while_loop_collatz"].make()
    programs = {"elementwise": xla.jit(lambda x, y: jnp.tanh(x) * y + jnp.exp(-x * x), target="cuda").lower(x, x),
                "collatz": xla.jit(fn, target="cuda").lower(*args),
                "small": xla.jit(lambda x, y: jnp.tanh(x) * y, target="cuda").lower(small, small)}

    def threads(name: str, asked: tuple | None) -> tuple[list, str]:
        dump = tmp_path / f"{name}-{asked}"
        with monkeypatch.context() as m:
            m.setitem(lt.DESCRIPTIONS, "cuda", dataclasses.replace(lt.CUDA, elementwise_threads=asked))
            compile_vmfb(programs[name], "cuda", flags=[f"--iree-hal-dump-executable-intermediates-to={dump}"])
        code = "".join(p.read_text() for p in sorted(dump.glob("*.optimized.ll")))
        return re.findall(r'"nvvm.maxntid"="(\d+),1,1"', code), code
    assert threads("elementwise", None)[0] == ["32"]
    got, code = threads("elementwise", (256, 4))
    assert got == ["256"] and "load <4 x float>" in code
    with lock, context():
        assert THREAD_ATTR in str(lower(programs["collatz"], 1, "cuda"))
    assert threads("collatz", (256, 4))[0] == threads("collatz", None)[0] == ["32"]
    assert threads("small", (256, 4))[0] == threads("small", None)[0] != ["256"]
    # the flags name the library; IREE gets a file of this process's own, with its text
    monkeypatch.setitem(lt.DESCRIPTIONS, "cuda", dataclasses.replace(lt.CUDA, elementwise_threads=(256, 8)))
    named = [f for f in find_target("cuda").compile_flags() if f.startswith(TRANSFORM_LIBRARY_FLAG)]
    assert named == [TRANSFORM_LIBRARY_FLAG + "xlair-spec:elementwise-256x8"]
    (given,) = [f for f in _with_library_files(named) if f.startswith(TRANSFORM_LIBRARY_FLAG)]
    path = pathlib.Path(given[len(TRANSFORM_LIBRARY_FLAG):])
    assert path.stat().st_uid == os.getuid() and path.parent.stat().st_mode & 0o077 == 0
    assert "workgroup = [2048], thread = [8]" in path.read_text()
    # a library the caller names replaces the target's own
    assert _with_library_files(named + [TRANSFORM_LIBRARY_FLAG + "/x.mlir"]) == [TRANSFORM_LIBRARY_FLAG + "/x.mlir"]


def test_mma_tiles_unset_leave_iree_its_choice():
    text = _lowered(_product(256, 512, 384, et=BF16, preferred=F32), "cuda")
    assert "compilation_info" not in text
