"""The CPU driver an executable runs on: IREE's local-sync (dispatches inline on the calling
thread) when its heaviest op is small, local-task (worker threads) when one op is heavy, by
the work estimate of lowering/cost.py, whatever the size of its arguments and results."""
import json
import os

import numpy as np
import pytest

import xlair as xla
from xlair import F32, Shape
from xlair import ops as O
from xlair.dialect.ir import context, ir, lock
from xlair.lowering.cost import ELEMENT_COST, heaviest_work
from xlair.runtime import INLINE_WORK


def _work(comp) -> int:
    with lock, context():
        return heaviest_work(ir.Module.parse(comp.to_text()))


def _comp(fn, *shapes):
    b = xla.Builder("f")
    ps = [b.parameter(i, s, f"p{i}") for i, s in enumerate(shapes)]
    fn(b, *ps)
    return b.build()


def test_work_of_a_matmul_is_its_multiply_adds():
    comp = _comp(lambda b, x, y: O.dot(x, y), Shape(F32, (64, 48)), Shape(F32, (48, 32)))
    assert _work(comp) == 64 * 32 * 48


def test_work_of_a_dot_general_counts_batch_and_contracting_dimensions():
    dn = xla.DotDimensionNumbers(lhs_contracting_dimensions=(2,), rhs_contracting_dimensions=(1,),
                                 lhs_batch_dimensions=(0,), rhs_batch_dimensions=(0,))
    comp = _comp(lambda b, x, y: O.dot_general(x, y, dn), Shape(F32, (3, 5, 7)), Shape(F32, (3, 7, 11)))
    assert _work(comp) == 3 * 5 * 11 * 7


def test_work_of_a_convolution_is_outputs_times_window_and_input_features():
    # [N=2, C=4, 10x10] (*) [O=6, I=2 (2 feature groups), 3x3], valid: output 2x6x8x8
    comp = _comp(lambda b, x, k: O.conv(x, k, (1, 1), "VALID", feature_group_count=2),
                 Shape(F32, (2, 4, 10, 10)), Shape(F32, (6, 2, 3, 3)))
    assert _work(comp) == (2 * 6 * 8 * 8) * (2 * 3 * 3)


def test_work_of_an_elementwise_op_is_its_elements_weighted():
    comp = _comp(lambda b, x: O.exp(O.add(x, x)), Shape(F32, (1000,)))
    assert _work(comp) == ELEMENT_COST * 1000


def _driver(comp) -> str:
    exe = xla.compile(comp, target="cpu")
    sig = json.loads(exe._vm_module.lookup_function("main").reflection["xlair.signature"])
    assert sig["work"] == _work(comp)
    return exe.driver


def test_large_arguments_with_little_work_run_inline():
    """A 4 MB argument of an add: 1M elements of work, below the threshold."""
    comp = _comp(lambda b, x: O.add(x, x), Shape(F32, (1024, 1024)))
    assert _work(comp) < INLINE_WORK
    assert _driver(comp) == "local-sync"
    x = np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024)
    np.testing.assert_array_equal(xla.compile(comp, target="cpu")(x), x + x)


@pytest.mark.parametrize("n", [512])
def test_a_heavy_matmul_runs_on_the_task_system(n):
    comp = _comp(lambda b, x, y: O.dot(x, y), Shape(F32, (n, n)), Shape(F32, (n, n)))
    assert _work(comp) >= INLINE_WORK
    assert _driver(comp) == "local-task"
    rng = np.random.default_rng(0)
    a, c = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    np.testing.assert_allclose(xla.compile(comp, target="cpu")(a, c), a @ c, rtol=1e-3, atol=1e-3)


def test_data_tiling_only_for_programs_with_a_large_contraction():
    """IREE's data tiling (packing for its matmul micro-kernels) pays off for large
    contractions only (xlair.compile.DATA_TILING_WORK): a program whose contractions are all
    smaller, or that has none, is compiled without it, however large its element-wise ops; the
    caller's flags still come last and win; targets without data tiling are left alone."""
    from xlair.compile import DATA_TILING_WORK, program_flags
    from xlair.targets import target
    cpu, off = target("cpu"), "--iree-opt-data-tiling=false"
    small = _comp(lambda b, x, y: O.add(O.dot(x, y), O.dot(x, y)), Shape(F32, (64, 784)), Shape(F32, (784, 256)))
    big = _comp(lambda b, x, y: O.dot(x, y), Shape(F32, (1024, 1024)), Shape(F32, (1024, 1024)))
    none = _comp(lambda b, x: O.tanh(x), Shape(F32, (4096, 4096)))
    assert 256 * 784 * 512 < DATA_TILING_WORK <= 512 * 1024 * 1024
    assert off in program_flags(small, cpu) and off in program_flags(none, cpu)
    assert off not in program_flags(big, cpu)
    assert program_flags(small, cpu, flags=["--iree-opt-data-tiling"])[-1] == "--iree-opt-data-tiling"
    assert off not in program_flags(small, target("vulkan"))


def test_code_assumes_16_byte_alignment_only_for_programs_with_a_large_parameter():
    """A CPU program with a parameter of at least IMPORT_BYTES (one numpy arrays are passed to
    without a copy) is compiled for buffers aligned to CPU_BUFFER_ALIGNMENT, and its signature
    says so; a program of small parameters keeps IREE's default (and its cached artifacts); a
    caller's own alignment flag wins (IREE takes the flag once); other targets are left alone."""
    import importlib
    from xlair.device import IMPORT_BYTES
    from xlair.targets import ALIGNMENT_FLAG, CPU_BUFFER_ALIGNMENT, target
    C = importlib.import_module("xlair.compile")
    cpu, flag = target("cpu"), f"{ALIGNMENT_FLAG}={CPU_BUFFER_ALIGNMENT}"
    big = _comp(lambda b, x: O.tanh(x), Shape(F32, (IMPORT_BYTES // 4,)))
    small = _comp(lambda b, x: O.tanh(x), Shape(F32, (IMPORT_BYTES // 4 - 1,)))
    assert flag in C.program_flags(big, cpu) and C.alignment_of(cpu, C.program_flags(big, cpu)) == 16
    assert not any(f.startswith(ALIGNMENT_FLAG) for f in C.program_flags(small, cpu))
    assert C.alignment_of(cpu, C.program_flags(small, cpu)) is None
    own = f"{ALIGNMENT_FLAG}=64"
    assert [f for f in C.program_flags(big, cpu, flags=[own]) if f.startswith(ALIGNMENT_FLAG)] == [own]
    assert flag not in C.program_flags(big, target("vulkan"))
    assert '"align": 16' in C.signature_json(big, align=16) and "align" not in C.signature_json(big)


def test_work_of_a_sort_counts_its_passes():
    """A Sort passes over its elements about log2(n) times: a long one runs on the task
    system (lowering/sort.py splits a lone long row over its workers), a short one inline."""
    def sort(n):
        lt = xla.Builder("lt")
        O.lt(lt.parameter(0, Shape(F32, ())), lt.parameter(1, Shape(F32, ())))
        return _comp(lambda b, x: O.sort([x], lt.build(), 0), Shape(F32, (n,)))
    assert _work(sort(1 << 20)) == ELEMENT_COST * (1 << 20) * 20 >= INLINE_WORK
    assert _work(sort(1000)) == ELEMENT_COST * 1000 * 10 < INLINE_WORK


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="no Linux scheduler policies here")
def test_the_caller_of_a_local_task_program_waits_under_sched_batch(monkeypatch):
    """While a local-task program runs, its calling thread is SCHED_BATCH (it does not preempt
    IREE's pinned worker that wakes it, see device.run_waiting), by both call paths; its policy
    is SCHED_OTHER again after the call, a thread the caller made SCHED_BATCH itself stays so,
    and a local-sync program leaves the policy alone."""
    from xlair import device, runtime
    seen = []
    real = device.run_waiting

    def spy(invoke, fn, args, results):
        def looking(*a):
            seen.append(os.sched_getscheduler(0))
            return invoke(*a)
        return real(looking, fn, args, results)
    monkeypatch.setattr(runtime, "_run_waiting", spy)
    n = 512
    comp = _comp(lambda b, x, y: O.dot(x, y), Shape(F32, (n, n)), Shape(F32, (n, n)))
    exe = xla.compile(comp, target="cpu")
    assert exe.driver == "local-task"
    exe._quick = exe._direct = runtime._call_path(exe)       # made again, with the spy
    rng = np.random.default_rng(0)
    a, c = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    assert os.sched_getscheduler(0) == os.SCHED_OTHER
    np.testing.assert_allclose(exe(a, c), a @ c, rtol=1e-3, atol=1e-3)           # the closure
    exe._quick = exe._direct = None
    np.testing.assert_allclose(exe(a, c), a @ c, rtol=1e-3, atol=1e-3)           # the general path
    assert seen == [os.SCHED_BATCH, os.SCHED_BATCH]
    assert os.sched_getscheduler(0) == os.SCHED_OTHER
    os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    try:
        exe(a, c)
        assert seen[-1] == os.SCHED_BATCH and os.sched_getscheduler(0) == os.SCHED_BATCH
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    small = xla.compile(_comp(lambda b, x: O.add(x, x), Shape(F32, (4,))), target="cpu")
    assert small.driver == "local-sync"
    small(np.ones(4, np.float32))
    assert len(seen) == 3
