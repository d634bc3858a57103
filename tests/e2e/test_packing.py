"""Packed parameters (python/xlair/packing.py): the leaves of one `xla.device_put` pytree
handed to a program as one buffer per element type, against jax.jit and numpy."""
import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlair as xla
from xlair import F32, PRED, S32, U8, Shape

packing = importlib.import_module("xlair.packing")
arrays = importlib.import_module("xlair.arrays")


def _params(seed=0):
    """A pytree of 10 leaves: f32 of ranks 0-2, s32, u8, bool (jax orders the keys)."""
    rng = np.random.default_rng(seed)
    return {"a": rng.standard_normal((2, 3)).astype(np.float32), "b": np.int32(7),
            "c": rng.standard_normal(4).astype(np.float32), "d": np.array([True, False, True]),
            "e": np.float32(1.5), "f": rng.integers(0, 200, (2, 2)).astype(np.uint8),
            "g": rng.standard_normal((1, 1, 3)).astype(np.float32), "h": np.arange(5, dtype=np.int32),
            "i": rng.standard_normal(2).astype(np.float32), "j": np.array([False, True])}


def _step(p, x):
    s = p["a"].sum() + p["c"].sum() + p["e"] + p["g"].sum() + p["i"].sum()
    n = (p["b"] + p["h"].sum() + p["f"].astype(jnp.int32).sum()).astype(jnp.float32)
    m = jnp.where(p["d"], 1.0, 0.0).sum() + jnp.where(p["j"], 10.0, 0.0).sum()
    return {k: v * 2 if v.dtype == jnp.float32 else v for k, v in p.items()}, s * x + n + m


class _Counted(list):
    """A pack's buffers that count how often the call path hands them to a program."""
    uses = 0

    def __iter__(self):
        _Counted.uses += 1
        return super().__iter__()


def _count(tree):
    pack = jax.tree_util.tree_leaves(tree)[0]._pack
    pack.buffers = _Counted(pack.buffers)


def test_groups_layout_by_hand():
    shapes = (Shape(F32, (2, 3)), Shape(S32, ()), Shape(F32, (4,)), Shape(PRED, (2,)), Shape(U8, (0,)))
    assert packing.groups(shapes) == (
        (xla.F32, 10, ((0, 0, 6), (2, 6, 4))), (xla.S32, 1, ((1, 0, 1),)),
        (xla.PRED, 2, ((3, 0, 2),)), (xla.U8, 0, ((4, 0, 0),)))
    assert not packing.packable(shapes)                       # fewer than MIN_LEAVES
    assert packing.packable(shapes * 2)
    assert not packing.packable((Shape(F32, (1 << 20,)),) * 8)  # more than MAX_BYTES


def test_jit_takes_a_device_put_pytree_packed():
    p, x = _params(), np.float32(0.5)
    want = jax.jit(_step)(p, x)
    f = xla.jit(_step)
    dp = xla.device_put(p)
    assert all(a._pack is not None for a in jax.tree_util.tree_leaves(dp))
    _count(dp)
    before = _Counted.uses
    for _ in range(3):
        got = f(dp, x)
        jax.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6), got, want)
    assert _Counted.uses - before == 3                       # each call took the packed entry point
    exe = next(iter(f._cache.values()))[0]
    assert exe._packed is not None and exe._packed[:2] == (0, 10)
    # the same program with numpy leaves (its leaf entry point) and with unpacked Arrays
    got = f(p, x)
    jax.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6), got, want)
    single = {k: xla.device_put(v) for k, v in p.items()}
    got = f(single, x)
    jax.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6), got, want)
    # the pack's Arrays are unchanged
    jax.tree_util.tree_map(lambda a, v: np.testing.assert_array_equal(np.asarray(a), v), dp, p)


def test_numpy_first_then_a_pack_compiles_once_more():
    p, x = _params(1), np.float32(-2.0)
    want = jax.jit(_step)(p, x)
    f = xla.jit(_step)
    f(p, x)
    exe = next(iter(f._cache.values()))[0]
    assert exe._packed is None                               # no pack among the first call's leaves
    dp = xla.device_put(p)
    _count(dp)
    before = _Counted.uses
    got = f(dp, x)
    got2 = f(dp, x)
    assert _Counted.uses - before == 2
    assert len(f._cache) == 1 and next(iter(f._cache.values()))[0]._packed is not None
    for g in (got, got2):
        jax.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6), g, want)


def test_pack_in_second_argument():
    p = _params(2)

    def predict(x, params):
        return x * params["a"].sum() + params["h"].sum()

    x = np.linspace(0, 1, 6, dtype=np.float32)
    f = xla.jit(predict)
    dp = xla.device_put(p)
    _count(dp)
    before = _Counted.uses
    got = f(x, dp)
    assert _Counted.uses - before == 1
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.jit(predict)(x, p)), rtol=1e-6)


def test_packed_leaf_updated_in_place_leaves_the_pack_alone():
    """A DynamicUpdateSlice of a packed leaf, which IREE may do in the argument's buffer
    (lowering/aliasing.py): the pack's Arrays keep their values."""
    p = {f"w{i}": np.full(4, float(i), np.float32) for i in range(9)}

    def update(params):
        return jax.lax.dynamic_update_slice(params["w3"], jnp.ones(2, jnp.float32) * 9, (1,)), params["w8"] + 1

    f = xla.jit(update)
    dp = xla.device_put(p)
    for _ in range(2):
        got = f(dp)
        want = jax.jit(update)(p)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), w)
    jax.tree_util.tree_map(lambda a, v: np.testing.assert_array_equal(np.asarray(a), v), dp, p)


def test_compile_pack_run_outside_the_parameters():
    b = xla.Builder("two")
    x = b.parameter(0, Shape(F32, (2,)), "x")
    y = b.parameter(1, Shape(F32, (2,)), "y")
    comp = b.build(x + y)
    with pytest.raises(xla.XlaError, match=r"pack: the run \[1, 3\) is not within the 2 parameters"):
        xla.compile(comp, pack=(1, 2))
    exe = xla.compile(comp, pack=(0, 2))
    np.testing.assert_array_equal(exe(np.ones(2, np.float32), np.arange(2, dtype=np.float32)), [1, 2])


def _loop_step(p, x):
    """A training-step shape: (loss, new state) with the state's leaves in the same shapes."""
    new = {k: (v * 0.5 + x if v.dtype == jnp.float32 else v) for k, v in p.items()}
    new["b"] = p["b"] + 1
    new["d"] = jnp.logical_not(p["d"])
    return new["a"].sum() + new["e"], new


def test_training_loop_stays_packed():
    """The state a packed call returns is a pack itself (out_run): each step takes the last
    step's results as one buffer per element type, and their leaves have no buffers of their
    own until something else needs one."""
    p, x = _params(3), np.float32(0.25)
    f, jf = xla.jit(_loop_step), jax.jit(_loop_step)
    state, jstate = xla.device_put(p), p
    for _ in range(4):
        loss, state = f(state, x)
        jloss, jstate = jf(jstate, x)
        leaves = jax.tree_util.tree_leaves(state)
        assert all(a._bv is None for a in leaves) and len({id(a._pack) for a in leaves}) == 1
        np.testing.assert_allclose(np.asarray(loss), jloss, rtol=1e-6)
        jax.tree_util.tree_map(lambda a, w: np.testing.assert_allclose(np.asarray(a), w, rtol=1e-6), state, jstate)
    exe = next(iter(f._cache.values()))[0]
    assert exe._packed[4] == 1                                # the state follows the loss
    # the packed results' leaves elsewhere: a numpy leaf among them (the leaf entry point)
    mixed = dict(state)
    mixed["c"] = np.asarray(state["c"])
    loss2, state2 = f(mixed, x)
    jloss2, jstate2 = jf(jstate, x)
    np.testing.assert_allclose(np.asarray(loss2), jloss2, rtol=1e-6)
    jax.tree_util.tree_map(lambda a, w: np.testing.assert_allclose(np.asarray(a), w, rtol=1e-6), state2, jstate2)
    # another program on one of them (a buffer of its own is made) and the loop's state intact
    g = xla.jit(lambda a: a * 2)
    np.testing.assert_allclose(np.asarray(g(state["a"])), np.asarray(jstate["a"]) * 2, rtol=1e-6)
    jax.tree_util.tree_map(lambda a, w: np.testing.assert_allclose(np.asarray(a), w, rtol=1e-6), state, jstate)
