"""Side effects end to end: tokens and AfterAll, CustomCall (Python callables, and C functions
of a library the test builds with gcc, the spec's `myfunc`), Infeed / Outfeed queues in the
order the program defines, Send / Recv between computations running at the same time, and the
errors: unregistered targets, empty queues and silent peers time out instead of hanging."""
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import F32, S32, Shape
from xlair_testing import comp_of


def _comp(name, shapes, fn):
    b = xla.Builder(name)
    ps = [b.parameter(i, s) for i, s in enumerate(shapes)]
    fn(b, *ps)
    return b.build()


# -- CustomCall: Python ------------------------------------------------------------------------
def test_custom_call_python(target, covers):
    xla.register_custom_call("xlair_test_affine", lambda x, y: (x * 2 + y[0]).astype(np.float32))
    comp = _comp("cc", [Shape(F32, (3,)), Shape(F32, (1,))],
                 lambda b, x, y: O.add(O.custom_call("xlair_test_affine", [x, y], Shape(F32, (3,))), x))
    x, y = np.array([1, 2, 3], np.float32), np.array([10], np.float32)
    want = np.array([13, 16, 19], np.float32)                 # 3x + 10
    np.testing.assert_array_equal(xla.compile(comp, target)(x, y), want)
    np.testing.assert_array_equal(xla.interpret(comp, x, y), want)
    covers.add(target, "xla.custom_call")


def test_custom_call_tuples_and_no_operands(covers):
    xla.register_custom_call("xlair_test_split", lambda t: (t[1], t[0] + 1))
    xla.register_custom_call("xlair_test_seven", lambda: np.full((2,), 7, np.int32))
    comp = _comp("cc", [Shape(F32, (2,)), Shape(S32, ())],
                 lambda b, x, i: O.tuple([
                     O.custom_call("xlair_test_split", [O.tuple([x, i])], Shape.tuple([Shape(S32, ()), Shape(F32, (2,))])),
                     O.custom_call(b, "xlair_test_seven", [], Shape(S32, (2,)))]))
    got = xla.compile(comp, "cpu")(np.array([1.5, 2.5], np.float32), np.int32(4))
    (i, x), seven = got
    assert int(i) == 4 and x.tolist() == [2.5, 3.5] and seven.tolist() == [7, 7]
    covers.add("cpu", "xla.custom_call")


MYFUNC_C = r"""
/* the spec's myfunc: x f32[2] = {1, 2}, y f32[2x3] = {{10, 20, 30}, {40, 50, 60}} -> z f32[3x3]
   with z[0][0] = x[1] + y[1][0]; the rest continues the pattern: z[i][j] = x[(i+1)%2] + y[(i+1)%2][j].
   Inputs other than the spec's make every z[i][j] = -1 (the spec's EXPECT_EQs). */
void myfunc(void* out, void** in) {
  float (*x) = (float*)in[0];
  float (*y)[3] = (float(*)[3])in[1];
  float (*z)[3] = (float(*)[3])out;
  int ok = x[0] == 1 && x[1] == 2 && y[0][0] == 10 && y[0][1] == 20 && y[0][2] == 30
        && y[1][0] == 40 && y[1][1] == 50 && y[1][2] == 60;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      z[i][j] = ok ? x[(i + 1) % 2] + y[(i + 1) % 2][j] : -1.0f;
}
/* tuple result (f32[2], s32[]) from a tuple argument (s32[], f32[2]): out is a table of element
   buffers, in[0] a table of element pointers */
void swap_pair(void* out, void** in) {
  void** t = (void**)in[0];
  void** o = (void**)out;
  int* n = (int*)t[0]; float* v = (float*)t[1];
  float* ov = (float*)o[0]; int* on = (int*)o[1];
  ov[0] = v[1]; ov[1] = v[0]; *on = *n * 10;
}
"""


@pytest.fixture(scope="module")
def clib(tmp_path_factory):
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("cc")
    (d / "myfunc.c").write_text(MYFUNC_C)
    subprocess.run([gcc, "-shared", "-fPIC", "-O1", "-o", str(d / "libmyfunc.so"), str(d / "myfunc.c")], check=True)
    return str(d / "libmyfunc.so")


def test_custom_call_c_spec_myfunc(clib, target, covers):
    xla.register_custom_call("myfunc", library=clib)
    b = xla.Builder("spec_custom_call")
    x = O.constant(b, np.array([1, 2], np.float32))
    y = O.constant(b, np.array([[10, 20, 30], [40, 50, 60]], np.float32))
    O.custom_call("myfunc", [x, y], Shape(F32, (3, 3)))
    comp = b.build()
    want = np.array([[42, 52, 62], [11, 21, 31], [42, 52, 62]], np.float32)   # z[0][0] = x[1] + y[1][0] = 42
    np.testing.assert_array_equal(xla.compile(comp, target)(), want)
    np.testing.assert_array_equal(xla.interpret(comp), want)
    covers.add(target, "xla.custom_call")


def test_custom_call_c_tuples(clib):
    xla.register_custom_call("xlair_test_swap", library=clib, symbol="swap_pair")
    comp = _comp("cc", [Shape(S32, ()), Shape(F32, (2,))],
                 lambda b, n, v: O.custom_call("xlair_test_swap", [O.tuple([n, v])],
                                               Shape.tuple([Shape(F32, (2,)), Shape(S32, ())])))
    v, n = xla.compile(comp, "cpu")(np.int32(3), np.array([1.5, -2.5], np.float32))
    assert v.tolist() == [-2.5, 1.5] and int(n) == 30


def test_custom_call_errors(tmp_path):
    comp = _comp("cc", [Shape(F32, (2,))], lambda b, x: O.custom_call("xlair_test_nobody", [x], Shape(F32, (2,))))
    with pytest.raises(xla.XlaError, match="'xla.custom_call' target_name 'xlair_test_nobody' is not registered"):
        xla.compile(comp, "cpu")
    with pytest.raises(xla.XlaError, match="is not registered"):
        xla.interpret(comp, np.zeros(2, np.float32))
    xla.register_custom_call("xlair_test_nobody", lambda x: x)
    exe = xla.compile(comp, "cpu")
    exe.save(tmp_path / "cc.vmfb")
    xla.unregister_custom_call("xlair_test_nobody")
    with pytest.raises(xla.XlaError, match="is not registered"):
        xla.load(tmp_path / "cc.vmfb", isolate=False)
    # a target returning the wrong shape, or raising: XlaError naming the target
    xla.register_custom_call("xlair_test_nobody", lambda x: x[:1])
    with pytest.raises(xla.XlaError, match=r"target 'xlair_test_nobody' must return f32\[2\]"):
        exe(np.zeros(2, np.float32))
    xla.register_custom_call("xlair_test_nobody", lambda x: 1 / 0)
    with pytest.raises(xla.XlaError, match="target 'xlair_test_nobody' raised ZeroDivisionError"):
        exe(np.zeros(2, np.float32))
    xla.register_custom_call("xlair_test_nobody", lambda x: -x)
    assert exe(np.ones(2, np.float32)).tolist() == [-1, -1]
    with pytest.raises(xla.XlaError, match="cannot load"):
        xla.register_custom_call("x", library=str(tmp_path / "missing.so"))
    with pytest.raises(xla.XlaError, match="either a Python callable or library="):
        xla.register_custom_call("x")


# -- Infeed / Outfeed and tokens ---------------------------------------------------------------
def _feed_program():
    """infeed a -> outfeed a*a -> infeed (b, n) -> outfeed n, threaded by tokens; returns b and a
    joined token."""
    def body(b):
        t0 = O.after_all(b, [])
        a = O.infeed(b, Shape(F32, (2,)), token=t0)
        t1 = O.outfeed(O.mul(O.get_tuple_element(a, 0), O.get_tuple_element(a, 0)), token=O.get_tuple_element(a, 1))
        c = O.infeed(b, Shape.tuple([Shape(F32, (2,)), Shape(S32, ())]), token=t1)
        t2 = O.outfeed(O.get_tuple_element(O.get_tuple_element(c, 0), 1), token=O.get_tuple_element(c, 1))
        O.tuple([O.get_tuple_element(O.get_tuple_element(c, 0), 0), O.after_all(b, [t1, t2])])
    return _comp("feeds", [], body)


def test_infeed_outfeed_tokens(target, covers):
    comp = _feed_program()
    exe = xla.compile(comp, target)
    for k in range(2):
        exe.infeed.put(np.array([1, 2 + k], np.float32))
        exe.infeed.put((np.array([5, 6], np.float32), np.int32(7 + k)))
        out, tok = exe()
        assert out.tolist() == [5, 6]
        got = exe.outfeed.drain()
        assert [g.tolist() for g in got] == [[1, (2 + k) ** 2], 7 + k]
    # the interpreter, with the same queues
    h = xla.host.HostContext()
    h.infeed_queue.put(np.array([3, 4], np.float32))
    h.infeed_queue.put((np.array([0, 1], np.float32), np.int32(-1)))
    out, _ = xla.interpret(comp, host=h)
    assert out.tolist() == [0, 1] and [g.tolist() for g in h.outfeed_queue.drain()] == [[9, 16], -1]
    covers.add(target, "xla.infeed", "xla.outfeed", "xla.after_all")


def test_program_order_of_side_effects(covers):
    """Ten outfeeds without tokens, a token chain and an infeed in between: the outfeed queue
    holds them in the order the program built them."""
    def body(b, x):
        tok = O.after_all(b, [])
        for k in range(10):
            if k == 5:
                got = O.infeed(b, Shape(S32, ()), token=tok)
                tok = O.outfeed(O.get_tuple_element(got, 0), token=O.get_tuple_element(got, 1))
            v = O.add(x, O.constant(b, np.int32(k)))
            if k % 2:
                O.outfeed(v)
            else:
                tok = O.outfeed(v, token=tok)
        O.after_all(b, [tok])
    comp = _comp("order", [Shape(S32, ())], body)
    exe = xla.compile(comp, "cpu")
    exe.infeed.put(np.int32(-7))
    exe(np.int32(100))
    assert [int(v) for v in exe.outfeed.drain()] == [100, 101, 102, 103, 104, -7, 105, 106, 107, 108, 109]
    covers.add("cpu", "xla.outfeed", "xla.infeed", "xla.after_all")


def test_infeed_in_while_loops_spec_example(covers):
    """The spec's two while loops, each reading the infeed: the second starts after the first,
    so their reads are in a total order."""
    cond = comp_of(lambda b, s: O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(3))),
                   Shape.tuple([Shape(S32, ()), Shape(F32, ())]), name="cond")
    bb = xla.Builder("body")
    st = bb.parameter(0, Shape.tuple([Shape(S32, ()), Shape(F32, ())]))
    v = O.infeed(bb, Shape(F32, ()))
    acc = O.add(O.mul(O.get_tuple_element(st, 1), O.constant(bb, np.float32(10))), v)
    O.tuple([O.add(O.get_tuple_element(st, 0), O.constant(bb, np.int32(1))), acc])
    body = bb.build()

    def prog(b):
        init = O.tuple([O.constant(b, np.int32(0)), O.constant(b, np.float32(0))])
        r1 = O.while_(cond, body, init)
        r2 = O.while_(cond, body, O.tuple([O.constant(b, np.int32(0)), O.get_tuple_element(r1, 1)]))
        O.tuple([O.get_tuple_element(r1, 1), O.get_tuple_element(r2, 1)])
    comp = _comp("loops", [], prog)
    exe = xla.compile(comp, "cpu")
    for v in range(1, 7):
        exe.infeed.put(np.float32(v))
    r1, r2 = exe()
    assert float(r1) == 123 and float(r2) == 123456
    covers.add("cpu", "xla.infeed")


def test_empty_tuple_infeed_is_a_noop_and_empty_queue_times_out(covers):
    comp = _comp("noop", [], lambda b: O.tuple([O.infeed(b, Shape.tuple([])), O.infeed(b, Shape(S32, ()))]))
    exe = xla.compile(comp, "cpu")
    exe.infeed.put(np.int32(5))
    empty, five = exe()
    assert empty == () and int(five) == 5 and len(exe.infeed) == 0
    exe.timeout = 0.5
    t = time.monotonic()
    with pytest.raises(xla.XlaError, match=r"'xla.infeed' on replica 0: the infeed queue of noop is empty: "
                                           r"nothing arrived within 0.5 s"):
        exe()
    assert time.monotonic() - t < 3
    exe.infeed.put(np.float32(1.5))     # a value of the wrong type
    with pytest.raises(xla.XlaError, match=r"'xla.infeed' item \(replica 0\) must be s32\[\]"):
        exe()
    covers.add("cpu", "xla.infeed")


def test_infeed_filled_while_running():
    comp = _comp("late", [], lambda b: O.infeed(b, Shape(F32, (2,))))
    exe = xla.compile(comp, "cpu")
    threading.Timer(0.3, lambda: exe.infeed.put(np.array([4, 2], np.float32))).start()
    assert exe().tolist() == [4, 2]


# -- Send / Recv -------------------------------------------------------------------------------
def test_send_recv_between_two_executables(covers):
    sender = xla.compile(_comp("send", [Shape(F32, (3,))], lambda b, x: O.send(O.mul(x, x), 41)), "cpu")
    receiver = xla.compile(_comp("recv", [Shape(F32, (3,))],
                                 lambda b, x: O.add(O.recv(b, Shape(F32, (3,)), 41), x)), "cpu")
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", receiver(np.array([1, 1, 1], np.float32))))
    t.start()                                   # the Recv starts first and waits for the Send
    time.sleep(0.2)
    sender(np.array([1, 2, 3], np.float32))
    t.join(10)
    assert out["r"].tolist() == [2, 5, 10]
    covers.add("cpu", "xla.send", "xla.recv")


def test_send_recv_between_replicas_with_tokens(covers):
    """Replica 0 sends its value on channel 3, replica 1 receives it (both in a conditional on the
    replica id); tokens order each replica's Send and Recv."""
    sb = xla.Builder("s")
    x = sb.parameter(0, Shape(S32, ()))
    O.tuple([x, O.send(x, 3, token=O.after_all(sb, []))])
    rb = xla.Builder("r")
    x = rb.parameter(0, Shape(S32, ()))
    got = O.recv(rb, Shape(S32, ()), 3, token=O.after_all(rb, []))
    O.tuple([O.add(O.get_tuple_element(got, 0), x), O.get_tuple_element(got, 1)])
    comp = _comp("sr", [Shape(S32, ())], lambda b, x: O.get_tuple_element(
        O.conditional(O.eq(O.replica_id(b), O.constant(b, np.uint32(0))), x, sb.build(), x, rb.build()), 0))
    exe = xla.compile(comp, "cpu", replicas=2)
    assert [int(v) for v in exe.run_replicated([[np.int32(5)], [np.int32(100)]])] == [5, 105]
    assert [int(v) for v in xla.interpret_replicated(comp, [[np.int32(5)], [np.int32(100)]])] == [5, 105]
    covers.add("cpu", "xla.send", "xla.recv")


def test_recv_without_send_times_out():
    exe = xla.compile(_comp("lonely", [], lambda b: O.recv(b, Shape(F32, (2,)), 9999)), "cpu")
    exe.timeout = 0.5
    with pytest.raises(xla.XlaError, match="'xla.recv' channel_handle 9999: no Send arrived within 0.5 s"):
        exe()


def test_host_call_overhead():
    """A host call costs tens of microseconds (reported in docs/semantics.md)."""
    xla.register_custom_call("xlair_test_id", lambda x: x)
    comp = _comp("ov", [Shape(F32, (4,))], lambda b, x: O.custom_call("xlair_test_id", [x], Shape(F32, (4,))))
    plain = xla.compile(_comp("pl", [Shape(F32, (4,))], lambda b, x: O.neg(x)), "cpu")
    exe = xla.compile(comp, "cpu")
    x = np.ones(4, np.float32)
    for f in (exe, plain):
        for _ in range(20):
            f(x)
    best = []
    for f in (exe, plain):
        t = time.perf_counter()
        for _ in range(200):
            f(x)
        best.append((time.perf_counter() - t) / 200)
    assert best[0] - best[1] < 2e-3, best


def test_unused_results_still_happen(covers):
    """IREE keeps host calls whose results are unused, and runs them in program order: an
    unused Infeed still reads its item, an unused CustomCall still runs."""
    calls = []
    xla.register_custom_call("xlair_test_count", lambda x: calls.append(float(x)) or x)
    comp = _comp("unused", [Shape(F32, ())],
                 lambda b, x: (O.infeed(b, Shape(F32, ())), O.custom_call("xlair_test_count", [x], Shape(F32, ())),
                               O.infeed(b, Shape(F32, ()))))
    exe = xla.compile(comp, "cpu")
    exe.infeed.put(np.float32(1))
    exe.infeed.put(np.float32(2))
    assert float(exe(np.float32(7))) == 2.0 and len(exe.infeed) == 0 and calls == [7.0]
    covers.add("cpu", "xla.infeed", "xla.custom_call")
