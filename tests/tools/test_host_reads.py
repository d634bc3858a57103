"""Loops on the GPU without a host round trip per trip (lowering/device_loops.py, the "thread"
form of CUDA and ROCm), checked without a GPU: counted in IREE's stream IR, where each
`stream.resource.load` is a read of a device buffer the host waits for (a While's condition read
back before each trip costs 0.5-1 ms on CUDA), and run through the CPU backend (the same lowered
module compiled for llvm-cpu) against jax.jit.
"""
import pathlib
import sys

import numpy as np
import pytest

from xlair.compile import lower
from xlair.dialect.ir import context, lock
from xlair.lowering.device_loops import THREAD_ATTR
from xlair.runtime import Executable
from xlair.targets import target
from xlair.vmcode import host_reads
from xlair_testing import full_only, iree_compiled

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "models"))

#: the programs of the real-program suite with a small-state loop or branch
SMALL_STATE = ["while_loop_collatz", "fori_loop_newton", "tolerance_loops", "scan_rnn", "random_sampling",
               "cond_and_switch"]


def _program(name):
    import xlair as xla
    from model_programs import PROGRAMS
    fn, args = PROGRAMS[name].make()
    return PROGRAMS[name], fn, args, xla.jit(fn).lower(*args)


def _lowered(comp, tgt: str, device_loops: bool = True) -> str:
    module = lower(comp, 1, tgt, device_loops=device_loops)
    with lock, context():
        return str(module)


def _stream(text: str, tgt: str) -> str:
    t = target(tgt)
    return iree_compiled(text, t, t.compile_flags() + ["--compile-to=stream"]).decode()


def test_host_reads_counts_a_loops_condition():
    """The counter sees the host loop's read of its condition: one a trip (in a block that
    reaches itself) and the entry test before the loop."""
    _, _, _, comp = _program("while_loop_collatz")
    assert host_reads(_stream(_lowered(comp, "cuda", device_loops=False), "cuda")) == (2, 1)


@pytest.mark.parametrize("name", SMALL_STATE)
def test_no_host_read_in_gpu_loops(name):
    """For CUDA the program's loops and branches run on the device: no host read at all.
    (cond_and_switch's branches are small: every one is computed and its results selected,
    lowering/control_flow.py SELECT_MAX_WORK; the others' loops are in the thread form.)"""
    _, _, _, comp = _program(name)
    text = _lowered(comp, "cuda")
    assert (THREAD_ATTR in text) == (name != "cond_and_switch")
    assert host_reads(_stream(text, "cuda")) == (0, 0)


@pytest.mark.parametrize("name", ["while_loop_collatz", "tolerance_loops", "scan_rnn", "cond_and_switch",
                                  full_only("random_distributions")])
def test_gpu_loop_form_runs_right_on_the_cpu_backend(name):
    """The module lowered for CUDA, its loops in the "thread" form, compiled for the CPU:
    jax.jit's results (the form's meaning; IREE's GPU code for it is measured on a GPU)."""
    import jax
    from model_compare import mismatches, reference
    prog, fn, args, comp = _program(name)
    cpu = target("cpu")
    exe = Executable(iree_compiled(_lowered(comp, "cuda"), cpu, cpu.compile_flags()), "cpu")
    got = exe(*[np.asarray(a) for a in jax.tree_util.tree_leaves(args)])
    got = [np.asarray(g) for g in (got if isinstance(got, tuple) else (got,))]
    assert not mismatches(prog, got, reference(prog, fn, args))


def test_stream_async_alloca_illegal_and_failed_to_bufferize_thread_loops_cuda():
    """random_distributions (jax.random's gamma, beta, dirichlet and poisson: rejection loops)
    compiles for CUDA with its loops in the thread form.  Before, IREE refused it twice, and
    xlair.compile fell back to loops=host, a host read a trip of every loop:
    "'stream.async.alloca' op illegal for this phase of lowering" (the thread generics' empty
    outputs packed as reads, copies of no data) and then "failed to bufferize op" (IREE's CSE
    merged the body's empty tensors into one, and CUDA's bufferization failed on a copy of a
    copy of it).  What stays on the host are the outer rejection loops past one thread's bounds
    (THREAD_MAX_WORK); the form's meaning is checked on the CPU backend above."""
    _, _, _, comp = _program("random_distributions")
    text = _lowered(comp, "cuda")
    assert text.count(THREAD_ATTR) >= 12
    cuda = target("cuda")
    assert iree_compiled(text, cuda, cuda.compile_flags())
    reads = host_reads(_stream(text, "cuda"))
    on_host = host_reads(_stream(_lowered(comp, "cuda", device_loops=False), "cuda"))
    assert reads[0] < on_host[0] and reads[1] < on_host[1], (reads, on_host)     # (12, 8) against (20, 14)
