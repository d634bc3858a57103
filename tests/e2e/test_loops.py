"""Element-wise While loops on the CPU run per element in one linalg.generic (lowering/loops.py):
the results against the reference interpreter, bit for bit, and which loops take that road."""
import numpy as np
import pytest

import xlair as xla
from xlair import F32, PRED, S32, Shape
from xlair import ops as O
from xlair.compile import compile_vmfb, lower
from xlair_testing import comp_of


def _loop(state: Shape, cond, body, init, params=(), name="loop"):
    c = comp_of(cond, state, name="cond")
    b = comp_of(body, state, name="body")
    return comp_of(lambda bld, *ps: O.while_(c, b, init(bld, *ps)), *params, name=name)


def _per_element(comp) -> bool:
    """Whether the CPU lowering runs the loop per element (an scf.while over scalars, none
    over tensors)."""
    loops = [ln for ln in str(lower(comp, 1, "cpu")).splitlines() if "scf.while" in ln]
    return bool(loops) and not any("tensor<" in ln.split("->", 1)[-1] for ln in loops)


def _check(comp, *args):
    want = xla.interpret(comp, *args)
    got = xla.compile(comp, target="cpu")(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)


def _counter_loop(n_trips, dims, step=None):
    st = Shape.tuple([Shape(S32, ()), Shape(F32, dims)])
    def cond(b, s):
        return O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(n_trips)))
    def body(b, s):
        i, x = O.get_tuple_element(s, 0), O.get_tuple_element(s, 1)
        fi = O.broadcast(O.convert_element_type(i, F32), list(dims))
        x2 = step(b, x, fi) if step else O.add(O.mul(x, O.constant(b, np.full(dims, 0.5, np.float32))), fi)
        return O.tuple(b, [O.add(i, O.constant(b, np.int32(1))), x2])
    return _loop(st, cond, body, lambda b, x: O.tuple(b, [O.constant(b, np.int32(0)), x]),
                 params=(Shape(F32, dims),))


@pytest.mark.parametrize("trips", [0, 1, 37])
def test_counter_loop_per_element(trips):
    comp = _counter_loop(trips, (3, 5))
    assert _per_element(comp)
    _check(comp, np.random.default_rng(trips).standard_normal((3, 5)).astype(np.float32))


@pytest.mark.parametrize("dims, lanes", [((10,), 10), ((13,), 13), ((2, 12), 12), ((3000,), 15)])
def test_element_loops_run_together(dims, lanes):
    """The loops of `lanes` elements (the largest divisor of their count up to loops.JAM) run as
    one loop holding each element's state, the counter shared: bit for bit the per-element
    results.  f32[3000] with the device loops off (else it is a device loop)."""
    from xlair.runtime import Executable
    comp = _counter_loop(23, dims)
    device_loops = dims != (3000,)
    text = str(lower(comp, 1, "cpu", device_loops=device_loops))
    (loop,) = [ln for ln in text.splitlines() if "scf.while" in ln]
    assert loop.split("->", 1)[1].count("f32") == lanes and loop.split("->", 1)[1].count("i32") == 1
    x = np.random.default_rng(lanes).standard_normal(dims).astype(np.float32)
    exe = Executable(compile_vmfb(comp, "cpu", device_loops=device_loops), "cpu")
    for g, w in zip(exe(x), xla.interpret(comp, x)):
        np.testing.assert_array_equal(g, w)


def test_scalar_only_loop_data_dependent_trips():
    """Collatz steps of n (s32) and a running f32 sum: the trip count depends on the state."""
    st = Shape.tuple([Shape(S32, ()), Shape(S32, ()), Shape(F32, ())])
    def cond(b, s):
        return O.ne(O.get_tuple_element(s, 0), O.constant(b, np.int32(1)))
    def body(b, s):
        n, k, acc = (O.get_tuple_element(s, i) for i in range(3))
        odd = O.eq(O.rem(n, O.constant(b, np.int32(2))), O.constant(b, np.int32(1)))
        nxt = O.select(odd, O.add(O.mul(n, O.constant(b, np.int32(3))), O.constant(b, np.int32(1))),
                       O.div(n, O.constant(b, np.int32(2))))
        return O.tuple(b, [nxt, O.add(k, O.constant(b, np.int32(1))),
                           O.add(acc, O.convert_element_type(n, F32))])
    comp = _loop(st, cond, body, lambda b, n: O.tuple(b, [n, O.constant(b, np.int32(0)),
                                                          O.constant(b, np.float32(0))]),
                 params=(Shape(S32, ()),))
    assert _per_element(comp)
    _check(comp, np.int32(27))


def test_pred_state_and_select():
    st = Shape.tuple([Shape(S32, ()), Shape(PRED, (8,)), Shape(F32, (8,))])
    def cond(b, s):
        return O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(5)))
    def body(b, s):
        i, p, x = (O.get_tuple_element(s, k) for k in range(3))
        return O.tuple(b, [O.add(i, O.constant(b, np.int32(1))), O.not_(p),
                           O.select(p, O.add(x, x), O.neg(x))])
    comp = _loop(st, cond, body, lambda b, p, x: O.tuple(b, [O.constant(b, np.int32(0)), p, x]),
                 params=(Shape(PRED, (8,)), Shape(F32, (8,))))
    assert _per_element(comp)
    _check(comp, np.array([True, False] * 4), np.arange(8, dtype=np.float32))


def test_iree_from_elements_of_a_boolean_loop_result():
    """A scalar PRED in the state of a per-element loop (JAX's scan carrying a float0
    tangent: custom_api_test's test_float0_initial_style, checkify's discharged while): the
    result read back as tensor.from_elements of an i1 failed in IREE ("'tensor.from_elements'
    op failed to verify that operand types match result element type": it stores i1 tensors as
    i8 and left that op's operand an i1)."""
    st = Shape.tuple([Shape(S32, ()), Shape(F32, ()), Shape(PRED, ())])
    def cond(b, s):
        return O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(3)))
    def body(b, s):
        i, x, p = (O.get_tuple_element(s, k) for k in range(3))
        return O.tuple(b, [O.add(i, O.constant(b, np.int32(1))), O.add(x, x), O.not_(p)])
    comp = _loop(st, cond, body, lambda b, x, p: O.tuple(b, [O.constant(b, np.int32(0)), x, p]),
                 params=(Shape(F32, ()), Shape(PRED, ())))
    assert _per_element(comp)
    _check(comp, np.float32(1.5), np.bool_(True))
    _check(comp, np.float32(-2), np.bool_(False))


def test_not_elementwise_loops_keep_the_host_loop():
    """A non-splat constant, a reduction in the body, two array shapes and a large array each
    keep the portable lowering (and still give the right answer)."""
    ramp = _counter_loop(4, (6,), step=lambda b, x, fi: O.add(x, O.constant(b, np.arange(6, dtype=np.float32))))
    big = _counter_loop(3, (100, 100))
    st = Shape.tuple([Shape(S32, ()), Shape(F32, (4,))])
    add = comp_of(lambda b, x, y: O.add(x, y), Shape(F32, ()), Shape(F32, ()), name="add")
    reduce_body = _loop(
        st, lambda b, s: O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(3))),
        lambda b, s: O.tuple(b, [O.add(O.get_tuple_element(s, 0), O.constant(b, np.int32(1))),
                                 O.add(O.get_tuple_element(s, 1), O.broadcast(
                                     O.reduce(O.get_tuple_element(s, 1), O.constant(b, np.float32(0)), add, [0]),
                                     [4]))]),
        lambda b, x: O.tuple(b, [O.constant(b, np.int32(0)), x]), params=(Shape(F32, (4,)),))
    rng = np.random.default_rng(1)
    for comp, dims in ((ramp, (6,)), (big, (100, 100)), (reduce_body, (4,))):
        assert not _per_element(comp)
        _check(comp, rng.standard_normal(dims).astype(np.float32))


def test_other_targets_keep_the_host_loop():
    comp = _counter_loop(3, (4,))
    text = str(lower(comp, 1, "vulkan"))
    assert "tensor<4xf32>" in text.split("scf.for", 1)[1].split("\n", 1)[0]


# ----------------------------------------------------------------------------------------
# counted loops (lowering/control_flow.py): JAX's fori_loop and scan, on every target
# ----------------------------------------------------------------------------------------
def _counted(lo_hi, *, unsigned=False, bound_in_state=False, body_reads_counter=True):
    """x <- x @ w + row i of t, for i from lo while i < hi: not element-wise (a product and
    a DynamicSlice at the counter), so it is a counted host loop, not a per-element one."""
    it = xla.U32 if unsigned else S32
    npt = np.uint32 if unsigned else np.int32
    st = Shape.tuple([Shape(it, ()), Shape(F32, (4,)), Shape(F32, (4, 4)), Shape(F32, (50, 4))]
                     + ([Shape(it, ())] if bound_in_state else []))
    lo, hi = lo_hi

    def cond(b, s):
        bound = O.get_tuple_element(s, 4) if bound_in_state else O.constant(b, npt(hi))
        return O.lt(O.get_tuple_element(s, 0), bound)

    def body(b, s):
        i, x, w, t = (O.get_tuple_element(s, k) for k in range(4))
        row = O.reshape(O.dynamic_slice(t, [i, O.constant(b, npt(0))], [1, 4]), [4]) if body_reads_counter \
            else O.constant(b, np.ones(4, np.float32))
        x2 = O.add(O.dot(x, w), row)
        rest = [O.get_tuple_element(s, 4)] if bound_in_state else []
        return O.tuple(b, [O.add(i, O.constant(b, npt(1))), x2, w, t] + rest)

    def init(b, x, w, t, *bound):
        return O.tuple(b, [O.constant(b, npt(lo)), x, w, t] + ([bound[0]] if bound_in_state else []))
    params = [Shape(F32, (4,)), Shape(F32, (4, 4)), Shape(F32, (50, 4))] + ([Shape(it, ())] if bound_in_state else [])
    return _loop(st, cond, body, init, params=params)


def _counted_args(bound=None, unsigned=False):
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(4).astype(np.float32), (rng.standard_normal((4, 4)) * 0.3).astype(np.float32),
            rng.standard_normal((50, 4)).astype(np.float32)]
    return args + ([(np.uint32 if unsigned else np.int32)(bound)] if bound is not None else [])


def _assert_counted(comp, target="cpu", no_loop=False):
    """The loop is an scf.for over host trip counts: no scf.while, which would read its
    condition back every trip.  A constant trip count of 0 or 1 leaves no loop at all (the
    first trip is peeled off: lowering/control_flow.py `_lower_counted`)."""
    text = str(lower(comp, 1, target))
    assert "scf.while" not in text
    assert ("scf.for" in text) != no_loop


def _close(comp, *args):
    want = xla.interpret(comp, *args)
    got = xla.compile(comp, target="cpu")(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("lo,hi", [(0, 20), (7, 8), (5, 5), (9, 2), (-3, 4)])
def test_counted_loop_with_a_constant_bound(lo, hi):
    comp = _counted((lo, hi))
    _assert_counted(comp, no_loop=hi - lo <= 1)
    _close(comp, *_counted_args())


@pytest.mark.parametrize("bound", [0, 1, 33, -5])
def test_counted_loop_with_a_loop_invariant_bound(bound):
    """JAX's fori_loop with traced bounds: the bound travels in the state unchanged."""
    comp = _counted((2, None), bound_in_state=True)
    _assert_counted(comp)
    _close(comp, *_counted_args(bound))


@pytest.mark.parametrize("bound", [0, 4, 40])
def test_counted_loop_unsigned_counter(bound):
    comp = _counted((1, None), unsigned=True, bound_in_state=True)
    _assert_counted(comp)
    _close(comp, *_counted_args(bound, unsigned=True))


def test_counted_loop_on_vulkan_lowers_the_same_way():
    _assert_counted(_counted((0, 20)), "vulkan")


def test_a_loop_whose_bound_changes_is_not_counted():
    st = Shape.tuple([Shape(S32, ()), Shape(S32, ()), Shape(F32, (4, 4))])
    def cond(b, s):
        return O.lt(O.get_tuple_element(s, 0), O.get_tuple_element(s, 1))
    def body(b, s):
        i, n, x = (O.get_tuple_element(s, k) for k in range(3))
        one = O.constant(b, np.int32(1))
        return O.tuple(b, [O.add(i, one), O.sub(n, one), O.dot(x, x)])
    comp = _loop(st, cond, body, lambda b, x: O.tuple(b, [O.constant(b, np.int32(0)), O.constant(b, np.int32(7)), x]),
                 params=(Shape(F32, (4, 4)),))
    text = str(lower(comp, 1, "cpu", device_loops=False))   # (on the device its i1s are i8s)
    assert "tensor<i1>" in text.split("scf.while", 1)[1].split("scf.yield", 1)[0]
    _close(comp, (np.eye(4) * 0.5).astype(np.float32))


def test_counted_loop_other_stepped_scalars_are_host_values():
    """Beside the counter (element 0, compared with 9), element 1 steps by 3 from a parameter
    and indexes a DynamicSlice at `(j < 0 ? j + 50 : j)`, JAX's index normalisation: it too is
    a host value (start + t * step), its rank-0 index arithmetic runs on the host
    (lowering/host_scalars.py), and nothing in the loop is computed on rank-0 tensors."""
    st = Shape.tuple([Shape(S32, ()), Shape(S32, ()), Shape(F32, (4,)), Shape(F32, (50, 4))])

    def cond(b, s):
        return O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(9)))

    def body(b, s):
        i, j, x, t = (O.get_tuple_element(s, k) for k in range(4))
        c = lambda v: O.constant(b, np.int32(v))  # noqa: E731
        jj = O.select(O.lt(j, c(0)), O.add(j, c(50)), j)
        row = O.reshape(O.dynamic_slice(t, [jj, c(0)], [1, 4]), [4])
        return O.tuple(b, [O.add(i, c(1)), O.add(c(3), j), O.add(O.mul(x, row), row), t])

    comp = _loop(st, cond, body, lambda b, j0, x, t: O.tuple(b, [O.constant(b, np.int32(0)), j0, x, t]),
                 params=(Shape(S32, ()), Shape(F32, (4,)), Shape(F32, (50, 4))))
    text = str(lower(comp, 1, "cpu"))
    loop = text.split("scf.for", 1)[1]
    assert "scf.while" not in text and "iterator_types = []" not in loop
    rng = np.random.default_rng(5)
    t = rng.standard_normal((50, 4)).astype(np.float32)
    for j0 in (-20, 4):
        want = xla.interpret(comp, np.int32(j0), np.ones(4, np.float32), t)
        got = xla.compile(comp, target="cpu")(np.int32(j0), np.ones(4, np.float32), t)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])        # j0 + 27
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5)


def test_counted_off_keeps_the_general_form():
    comp = _counted((0, 20))
    assert "scf.while" in str(lower(comp, 1, "cpu", counted=False))
    _assert_counted(comp)


def test_executable_falls_back_when_irees_vm_fails_on_a_loop(monkeypatch):
    """IREE 3.13's VM can fail at run time on a loop ("ref is null" / "indirect buffer
    reference slot 0 is out range", iree-org/iree#24753): the executable rebuilds itself with
    counted loops in the general form and runs again; failing again, with its loops on the host
    too; then it gives up.  Simulated: invokes raise what IREE's failure becomes."""
    from xlair import runtime
    from xlair.runtime import Executable
    monkeypatch.setattr(runtime, "_call_path", lambda exe: None)    # every call by _invoke_leaves
    comp = _counted((0, 20))
    exe = xla.compile(comp, target="cpu", cache=False)
    real, calls, failures = Executable._invoke_leaves, [], [1]

    def failing(self, replica, flat, run):
        calls.append(self._vm_module)
        if len(calls) in failures:
            raise xla.XlaError("executable loop failed at run time on cpu: Error invoking function: "
                               "c/runtime/src/iree/vm/ref.h:223: INVALID_ARGUMENT; ref is null")
        return real(self, replica, flat, run)
    monkeypatch.setattr(Executable, "_invoke_leaves", failing)
    args = _counted_args()
    want = xla.interpret(comp, *args)

    def check(got):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)
    check(exe(*args))
    assert len(calls) == 2 and calls[0] is not calls[1]      # run again on the rebuilt module
    failures[:] = [3]
    check(exe(*args))                                        # the second fallback
    assert len(calls) == 4 and calls[2] is not calls[3] and exe._fallbacks == ()
    failures[:] = [5]
    with pytest.raises(xla.XlaError, match="ref is null"):   # no more
        exe(*args)
    assert len(calls) == 5


def test_other_run_time_errors_do_not_fall_back(monkeypatch):
    from xlair import runtime
    from xlair.runtime import Executable
    monkeypatch.setattr(runtime, "_call_path", lambda exe: None)
    exe = xla.compile(_counted((0, 20)), target="cpu")

    def failing(self, replica, flat, run):
        raise xla.XlaError("executable loop failed at run time on cpu: something else")
    monkeypatch.setattr(Executable, "_invoke_leaves", failing)
    with pytest.raises(xla.XlaError, match="something else"):
        exe(*_counted_args())
    assert len(exe._fallbacks) == 2            # kept for the failure they are for


@pytest.mark.parametrize("trips", [2, 3, 5])
@pytest.mark.parametrize("form", ["sum_sum", "sum0_sum", "masked"])
def test_c128_reductions_in_a_counted_loop_start_from_their_initial_value(form, trips):
    """Two chained C128 reductions in a fori_loop: their initial values (zeros) are C128 fills,
    which IREE cannot splat and xlair makes a generic each.  CSE merged the loop's fills with
    the peeled trip's, outside the loop; IREE 3.13 then updated that one fill in place, and
    from the loop's second trip on the sums started from the last trip's (x + x.sum(-1).sum()
    off by 160).  Each fill is now distinct (registry.distinct_c128_fills).  Reference: jax.jit."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    i = jnp.arange(4)
    body = {"sum_sum": lambda j, x: x + x.sum(-1).sum(),
            "sum0_sum": lambda j, x: x + x.sum(0).sum(),
            "masked": lambda j, x: x + jnp.where(i[None, :] == j, x, 0).sum(-1).sum()}[form]
    rng = np.random.default_rng(trips)
    a = (rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))) * 0.5
    with jax.enable_x64(True):
        f = lambda x: jax.lax.fori_loop(0, trips, body, x)          # noqa: E731
        want = np.asarray(jax.jit(f)(a))
        got = np.asarray(xla.jit(f)(a))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
