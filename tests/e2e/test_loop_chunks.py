"""A While left on the host of a GPU target reads its condition back once a chunk of trips
(lowering/control_flow.py chunk_host_loops, the target's loop_chunk: CUDA and ROCm), not every
trip: the trips of a chunk past the loop's end keep the state as it was.  Checked against the
trip-by-trip meaning (numpy, hand-counted trips) on the CPU backend (the CUDA-lowered module
compiled for llvm-cpu); its time wants a GPU (bench/NOTES.md)."""
import numpy as np
import pytest

from xlair import F32, S32, Shape
from xlair import ops as O
from xlair.compile import lower
from xlair.dialect.ir import context, lock
from xlair.lowering.control_flow import CHUNK_ATTR
from xlair.lowering.device_loops import THREAD_ATTR, THREAD_MAX_BYTES
from xlair.lowering.targets import CUDA
from xlair.runtime import Executable
from xlair.targets import target
from xlair_testing import comp_of, iree_compiled

#: y's elements: past one GPU thread's state (the thread form's bound), so the loop stays on
#: the host
_N = THREAD_MAX_BYTES // 4 + 1
#: the state (y, trips): y doubles plus one while y[0] < limit, trips counts them
_ST = Shape.tuple([Shape(F32, (_N,)), Shape(S32, ())])


def _doubling():
    """while y[0] < limit: y = 2 y + 1; trips += 1.  Its trips depend on the data (no counter
    for mark_counted_loops to find): the host reads the condition back."""
    def cond(b, s):
        y0 = O.reshape(O.slice(O.get_tuple_element(s, 0), [0], [1], [1]), [])
        return O.lt(y0, O.get_tuple_element(s, 2))
    st = Shape.tuple([*_ST.tuple_shapes, Shape(F32, ())])
    c = comp_of(cond, st, name="cond")
    body = comp_of(lambda b, s: O.tuple(b, [O.add(O.mul(O.get_tuple_element(s, 0), O.constant(b, np.float32(2))),
                                                  O.constant(b, np.float32(1))),
                                            O.add(O.get_tuple_element(s, 1), O.constant(b, np.int32(1))),
                                            O.get_tuple_element(s, 2)]), st, name="body")

    def main(b, y, limit):
        out = O.while_(c, body, O.tuple(b, [y, O.constant(b, np.int32(0)), limit]))
        return O.tuple(b, [O.get_tuple_element(out, 0), O.get_tuple_element(out, 1)])
    return comp_of(main, Shape(F32, (_N,)), Shape(F32, ()))


def _want(y, limit):
    trips = 0
    while y[0] < limit:
        y, trips = 2 * y + 1, trips + 1
    return y, trips


def _lowered(comp, tgt: str) -> str:
    module = lower(comp, 1, tgt)
    with lock, context():
        return str(module)


#: limits whose loops take 0, 1, 2, 3, 7 (the chunks 1, 2, 4: the last one's trip wasted) and
#: 20 trips (past the largest chunk)
_TRIPS = [0, 1, 2, 3, 7, 20]


def _cases():
    y = np.linspace(1.0, 2.0, _N, dtype=np.float32)
    for n in _TRIPS:
        limit = np.float32(2.0 ** n - 0.5)       # y[0] = 2^k - 1 after k trips
        yield y, limit, _want(y, limit)


def test_chunked_while_lowered_for_gpu_targets():
    """For CUDA and ROCm the While runs its trips in a counted chunk between reads; not for
    Vulkan (docs/iree-limits.md), the CPU (device loops) or loops=host."""
    comp = _doubling()
    for tgt in ("cuda", "rocm"):
        text = _lowered(comp, tgt)
        assert f"{CHUNK_ATTR} = {CUDA.loop_chunk}" in text and THREAD_ATTR not in text
    for tgt in ("vulkan", "cpu"):
        assert CHUNK_ATTR not in _lowered(comp, tgt)
    with lock, context():
        assert CHUNK_ATTR not in str(lower(comp, 1, "cuda", device_loops=False))


def test_chunked_while_meaning_on_the_cpu_backend():
    """The CUDA-lowered module compiled for the CPU: the trip-by-trip results for loops of
    0 to 20 trips, none of the wasted trips of a chunk seen."""
    comp = _doubling()
    cpu = target("cpu")
    exe = Executable(iree_compiled(_lowered(comp, "cuda"), cpu, cpu.compile_flags()), "cpu")
    for y, limit, (want_y, trips) in _cases():
        got_y, got_trips = exe(y, limit)
        assert int(got_trips) == trips, (limit, int(got_trips), trips)
        np.testing.assert_array_equal(np.asarray(got_y), want_y)


def test_chunked_while_compiles_for_cuda():
    cuda = target("cuda")
    assert iree_compiled(_lowered(_doubling(), "cuda"), cuda, cuda.compile_flags())
