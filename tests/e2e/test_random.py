"""RngBitGenerator bit-exact with XLA (vectors recorded from XLA:CPU through jax), and the
stateful RngUniform / RngNormal: distributions, the executable's seedable state, advancing."""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import (BF16, F16, F32, F64, PRED, S8, S32, S64, U8, U16, U32, U64, Shape,
                                 element_type)

RA = xla.RandomAlgorithm

# (algorithm, initial_state, dtype, shape, new_state, data (row-major)) computed by XLA:CPU:
# jax 0.10.2, `jax.lax.rng_bit_generator(np.array(state, np.uint64), shape, dtype, algorithm=...)`
# with jax_enable_x64; the u64[3] Philox rows compile `stablehlo.rng_bit_generator` with a
# tensor<3xui64> state through jax's CPU client (jax.lax only takes u64[2] / u32[4] keys).
VECTORS = [
    ('RNG_THREE_FRY', [11530976094092348043, 16550673365885938325], 'uint32', (5,), [11530976094092348043, 16550673365885938328], [3080300898, 1391676745, 1052204276, 2379527677, 1899373688]),
    ('RNG_THREE_FRY', [14308875409591826786, 4154339397315733314], 'uint32', (2, 3), [14308875409591826786, 4154339397315733317], [4087790143, 2008730483, 1203544988, 2746810603, 2992597306, 1433022607]),
    ('RNG_THREE_FRY', [5537090637313560901, 16114216841932056372], 'uint32', (), [5537090637313560901, 16114216841932056373], [2851214033]),
    ('RNG_THREE_FRY', [97127725791292528, 15148990459964163805], 'uint64', (3,), [97127725791292528, 15148990459964163808], [13590587677288373934, 11435475893317612387, 7624664935117420397]),
    ('RNG_THREE_FRY', [14703335761166866782, 8631876318251464993], 'uint8', (3, 1, 3), [14703335761166866782, 8631876318251464999], [110, 26, 19, 207, 171, 153, 213, 124, 31]),
    ('RNG_THREE_FRY', [5589961623570996296, 5136046009988895365], 'uint16', (4,), [5589961623570996296, 5136046009988895367], [36425, 26798, 1839, 13155]),
    ('RNG_PHILOX', [4701514055627521776, 8210208707889251730], 'uint32', (5,), [4701514055627521776, 8210208707889251732], [2953284818, 3650245646, 3979556864, 3231757585, 126973267]),
    ('RNG_PHILOX', [9307272605833099038, 10210223999194073229], 'uint32', (2, 3), [9307272605833099038, 10210223999194073231], [2406088268, 1542684351, 1247750430, 352906117, 1510000870, 2179358613]),
    ('RNG_PHILOX', [18363738953819562859, 14622031560711540067], 'uint32', (), [18363738953819562859, 14622031560711540068], [4128159368]),
    ('RNG_PHILOX', [11477181013478944695, 18243094743385733486], 'uint64', (3,), [11477181013478944695, 18243094743385733488], [10688208039331595627, 4759097851443805155, 8982754197131306116]),
    ('RNG_PHILOX', [3971744453195653609, 2955390386104149281], 'uint8', (3, 1, 3), [3971744453195653609, 2955390386104149284], [95, 234, 102, 84, 206, 87, 117, 199, 250]),
    ('RNG_PHILOX', [11299361315035925357, 810586974948547611], 'uint16', (4,), [11299361315035925357, 810586974948547612], [5189, 1387, 6011, 32186]),
    ('RNG_DEFAULT', [658184971015140363, 9498022293960203653], 'uint32', (5,), [658184971015140363, 9498022293960203655], [1743431841, 4063777144, 3959206772, 4147146583, 3860037141]),
    ('RNG_DEFAULT', [8599983234796962814, 16918759184742634889], 'uint32', (2, 3), [8599983234796962814, 16918759184742634891], [3655029455, 3953912886, 281712780, 1374110100, 3362812906, 2569827115]),
    ('RNG_DEFAULT', [11607175681054505329, 9483796650599084596], 'uint32', (), [11607175681054505329, 9483796650599084597], [1861905121]),
    ('RNG_DEFAULT', [9165697099728831877, 4565844421062348040], 'uint64', (3,), [9165697099728831877, 4565844421062348042], [8413460537121600099, 10518507136451070775, 12104661751034050813]),
    ('RNG_DEFAULT', [217561370781400195, 3549193109330041767], 'uint8', (3, 1, 3), [217561370781400195, 3549193109330041770], [29, 232, 148, 179, 88, 192, 149, 25, 223]),
    ('RNG_DEFAULT', [12765739424693719932, 3700540896853393055], 'uint16', (4,), [12765739424693719932, 3700540896853393056], [63304, 13845, 11444, 59457]),
    ('RNG_PHILOX', [6816741747621750562, 18446744073709551615, 15311678040616417897], 'uint32', (2, 3), [6816741747621750562, 1, 15311678040616417898], [3789595301, 1906275480, 1485166568, 133797003, 3185218910, 1445626669]),
    ('RNG_PHILOX', [2849304031688887269, 18446744073709551615, 16239261944341817067], 'uint64', (3,), [2849304031688887269, 1, 16239261944341817068], [3806190035179017274, 8923667178153920750, 9655629541661315384]),
    ('RNG_PHILOX', [9403980600771929631, 18446744073709551615, 11800698858147311121], 'uint16', (5,), [9403980600771929631, 1, 11800698858147311122], [31903, 57221, 6913, 23462, 46181]),
]


def _rbg(alg, nstate, shapes):
    b = xla.Builder("rbg")
    s = b.parameter(0, Shape(U64, (nstate,)))
    outs = [O.rng_bit_generator(alg, s, sh) for sh in shapes]
    if len(outs) > 1:
        O.tuple(b, outs)
    return b.build()


@pytest.mark.parametrize("case", VECTORS, ids=[f"{v[0]}-{len(v[1])}-{v[2]}-{'x'.join(map(str, v[3]))}"
                                               for v in VECTORS])
def test_rng_bit_generator_matches_xla(covers, target, case):
    covers.add(target, "xla.rng_bit_generator")
    alg, state, dtype, shape, want_state, want_data = case
    comp = _rbg(RA[alg], len(state), [Shape(element_type(np.dtype(dtype)), shape)])
    key = np.array(state, np.uint64)
    for label, (new, data) in (("interpreter", xla.interpret(comp, key)),
                               (target, xla.compile(comp, target=target)(key))):
        assert new.dtype == np.uint64 and new.tolist() == want_state, (label, new.tolist(), want_state)
        assert data.dtype == np.dtype(dtype) and data.shape == tuple(shape), (label, data.dtype, data.shape)
        assert data.reshape(-1).tolist() == want_data, (label, data.reshape(-1).tolist(), want_data)


@pytest.mark.parametrize("alg,nstate", [(RA.RNG_THREE_FRY, 2), (RA.RNG_PHILOX, 2), (RA.RNG_PHILOX, 3),
                                        (RA.RNG_DEFAULT, 3)])
def test_rng_bit_generator_types_and_shapes(covers, target, alg, nstate):
    """Compiled against the reference on odd shapes (split dimension, padding) and every element
    type; floating-point and signed outputs are the unsigned bits of the same width, bitcast."""
    covers.add(target, "xla.rng_bit_generator")
    shapes = [Shape(t, d) for t, d in [(U32, (3, 5, 7)), (U32, (1, 9)), (U32, (4, 1, 3)), (U64, (5, 3)),
                                       (U8, (7, 3)), (U16, (2, 2, 5)), (F32, (3, 5, 7)), (S32, (3, 5, 7)),
                                       (F64, (5, 3)), (S64, (5, 3)), (F16, (2, 2, 5)), (BF16, (2, 2, 5)),
                                       (S8, (7, 3)), (U32, (0, 3)), (U64, ())]]
    comp = _rbg(alg, nstate, shapes)
    key = np.array([0x9E3779B97F4A7C15, 0xFFFFFFFFFFFFFFFE, 0x0123456789ABCDEF][:nstate], np.uint64)
    want = xla.interpret(comp, key)
    got = xla.compile(comp, target=target)(key)
    for i, (g, w) in enumerate(zip(got, want)):
        for gg, ww in zip(g, w):
            assert gg.dtype == ww.dtype and gg.shape == ww.shape, (i, gg.dtype, ww.dtype)
            assert np.array_equal(gg.reshape(-1).view(np.uint8), ww.reshape(-1).view(np.uint8)), (i, shapes[i])
    # the same state gives the same bits whatever type they are read as
    assert np.array_equal(got[6][1].view(np.uint32), got[0][1])
    assert np.array_equal(got[7][1].view(np.uint32), got[0][1])
    assert np.array_equal(got[8][1].view(np.uint64), got[3][1])
    assert np.array_equal(got[12][1].view(np.uint8), got[4][1])
    assert got[13][1].shape == (0, 3)


def _program(fn, name="rng"):
    b = xla.Builder(name)
    fn(b)
    return b.build()


def test_rng_uniform_floats(covers, target):
    covers.add(target, "xla.rng_uniform")
    n = 20000
    comp = _program(lambda b: O.tuple(b, [
        O.rng_uniform(O.constant(b, np.float32(2)), O.constant(b, np.float32(5)), Shape(F32, (n,))),
        O.rng_uniform(O.constant(b, np.float64(-1)), O.constant(b, np.float64(1)), Shape(F64, (100, 200))),
        O.rng_uniform(O.constant(b, np.float16(0)), O.constant(b, np.float16(1)), Shape(F16, (n,))),
        O.rng_uniform(O.constant(b, BF16.dtype.type(-4)), O.constant(b, BF16.dtype.type(4)), Shape(BF16, (n,))),
    ]))
    for label, run in (("interpreter", lambda: xla.interpret(comp)), (target, xla.compile(comp, target=target))):
        f32, f64, f16, bf16 = run()
        for x, lo, hi in ((f32, 2, 5), (f64, -1, 1), (f16, 0, 1), (bf16, -4, 4)):
            x = x.astype(np.float64)
            assert x.min() >= lo and x.max() < hi, (label, x.min(), x.max())
            u = (x - lo) / (hi - lo)
            assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.01, (label, u.mean(), u.var())
            hist = np.histogram(u, bins=10, range=(0, 1))[0] / u.size
            assert np.all(np.abs(hist - 0.1) < 0.02), (label, hist)
        assert len(np.unique(f32)) > n * 0.9


def test_rng_uniform_integers_and_pred(covers, target):
    covers.add(target, "xla.rng_uniform")
    n = 30000
    comp = _program(lambda b: O.tuple(b, [
        O.rng_uniform(O.constant(b, np.int32(-3)), O.constant(b, np.int32(7)), Shape(S32, (n,))),
        O.rng_uniform(O.constant(b, np.uint8(250)), O.constant(b, np.uint8(255)), Shape(U8, (n,))),
        O.rng_uniform(O.constant(b, np.int64(-2 ** 40)), O.constant(b, np.int64(2 ** 40)), Shape(S64, (n,))),
        O.rng_uniform(O.constant(b, np.int32(5)), O.constant(b, np.int32(6)), Shape(S32, (10,))),
        O.rng_uniform(O.constant(b, np.False_), O.constant(b, np.True_), Shape(PRED, (10,))),
    ]))
    for label, run in (("interpreter", lambda: xla.interpret(comp)), (target, xla.compile(comp, target=target))):
        s32, u8, s64, one, pred = run()
        counts = np.bincount(s32 + 3, minlength=10)
        assert s32.min() == -3 and s32.max() == 6 and np.all(np.abs(counts / n - 0.1) < 0.02), (label, counts)
        assert u8.min() == 250 and u8.max() == 254, label
        assert s64.min() >= -2 ** 40 and s64.max() < 2 ** 40 and abs(s64.mean()) < 2 ** 40 * 0.05, label
        assert np.all(one == 5), label                       # [5, 6) holds only 5
        assert not pred.any(), label                          # [false, true) holds only false


NORMALS = [(F32, 1, 2, (40000,)), (F64, -3, 0.5, (200, 200)), (F16, 0, 1, (40000,)), (BF16, 0, 1, (40000,))]


@pytest.mark.parametrize("et,mu,sd,dims", NORMALS, ids=[n[0].name for n in NORMALS])
def test_rng_normal(covers, target, et, mu, sd, dims):
    if target == "vulkan" and et == F64:
        pytest.skip("vulkan: Box-Muller needs f64 log, sqrt and cos; GLSL.std.450 Log takes 16/32-bit "
                    "floats only (\"'spirv.GL.Log' op operand #0 must be 16/32-bit float\")")
    covers.add(target, "xla.rng_normal")
    t = et.dtype.type
    comp = _program(lambda b: O.rng_normal(O.constant(b, t(mu)), O.constant(b, t(sd)), Shape(et, dims)))
    for label, run in (("interpreter", lambda: xla.interpret(comp)), (target, xla.compile(comp, target=target))):
        outs = [run()]
        for x, mu, sd in zip(outs, (mu,), (sd,)):
            z = (x.astype(np.float64) - mu) / sd
            assert np.all(np.isfinite(z)), label
            assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03, (label, z.mean(), z.std())
            assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.02, (label, np.mean(np.abs(z) < 1))
            assert abs(np.mean(z ** 3)) < 0.1 and abs(np.mean(z ** 4) - 3) < 0.2, label


def test_generator_state_advances_and_seeds(covers, target):
    """The executable holds the state: calls and ops draw fresh numbers, seed(n) restarts a
    reproducible stream, a new executable starts from the documented default state."""
    covers.add(target, "xla.rng_uniform", "xla.rng_normal")
    comp = _program(lambda b: O.tuple(b, [
        O.rng_uniform(O.constant(b, np.float32(0)), O.constant(b, np.float32(1)), Shape(F32, (64,))),
        O.rng_uniform(O.constant(b, np.float32(0)), O.constant(b, np.float32(1)), Shape(F32, (64,))),
        O.rng_normal(O.constant(b, np.float32(0)), O.constant(b, np.float32(1)), Shape(F32, (5,))),
    ]), name="state")
    exe = xla.compile(comp, target=target)
    first = exe()
    second = exe()
    assert not np.array_equal(first[0], first[1])           # two ops in one program
    assert not np.array_equal(first[0], second[0])          # two calls
    assert not np.array_equal(first[2], second[2])
    other = xla.compile(comp, target=target)                # a fresh executable: the default state
    assert np.array_equal(other()[0], first[0])
    exe.seed(1234)
    a = exe()
    exe.seed(1234)
    b = exe()
    c = exe()
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    exe.seed(1235)
    assert not np.array_equal(exe()[0], a[0])
    exe.seed(2 ** 64 - 1)
    exe.seed(-7)
    with pytest.raises(xla.XlaError, match="Executable.seed takes an integer"):
        exe.seed(1.5)


def test_seed_without_generator_is_a_no_op(target):
    b = xla.Builder("plain")
    x = b.parameter(0, Shape(F32, (2,)))
    O.add(x, x)
    exe = xla.compile(b.build(), target=target)
    exe.seed(3)
    assert exe(np.ones(2, np.float32)).tolist() == [2, 2]
