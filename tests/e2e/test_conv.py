"""Conv, ConvWithGeneralPadding and ConvGeneralDilated end to end: hand-derived examples (the
spec gives pseudo-code, not numbers), the StableHLO spec's worked example, independent numpy
formulas for depthwise and backward-filter (batch group) convolutions, and the reference
interpreter vs compiled across layouts, groups, dilations, paddings and element types."""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import BF16, C64, F16, F32, F64, S8, S32, U8, Shape
from xlair_testing import check_example, comp_of, random_array, run_and_compare

CONV_OPS = ("xla.conv", "xla.conv_with_general_padding", "xla.conv_general_dilated")
CDN = xla.ConvolutionDimensionNumbers
NHWC = CDN(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))          # lhs NHWC, rhs HWIO, out NHWC
NWC = CDN(0, 2, (1,), 1, 2, (0,), 0, 2, (1,))
NDHWC = CDN(0, 4, (1, 2, 3), 3, 4, (0, 1, 2), 0, 4, (1, 2, 3))


def _row(*values):
    """A [1, 1, n] f32 array (batch 1, feature 1)."""
    return np.array(values, np.float32).reshape(1, 1, -1)


def test_conv_1d_same_valid_by_hand(covers, target):
    """lhs [1, 2, 3, 4, 5] * kernel [1, 1, 1] (batch 1, feature 1): SAME pads (1, 1) at stride
    1 and 2, VALID none."""
    covers.add(target, "xla.conv")
    x = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5)
    w = np.ones((1, 1, 3), np.float32)
    comp = comp_of(lambda b, px, pw: O.tuple(b, [
        O.conv(px, pw, [1], xla.Padding.SAME), O.conv(px, pw, [2], xla.Padding.SAME),
        O.conv(px, pw, [1], xla.Padding.VALID), O.conv(px, pw, [2], "VALID")]),
        Shape(F32, x.shape), Shape(F32, w.shape), name="conv_1d_hand")
    check_example(comp, [x, w], (_row(3, 6, 9, 12, 9), _row(3, 9, 9), _row(6, 9, 12),
                                 _row(6, 12)), target=target)


def test_conv_general_padding_by_hand(covers, target):
    """Negative padding cuts, lhs dilation inserts zeros, rhs dilation spreads the kernel.
    lhs [1..6], kernel [1, 10]:
      padding (-1, 2):   [2 3 4 5 6 0 0]             -> [32 43 54 65 6 0]
      lhs_dilation 2:    [1 0 2 0 3 0 4 0 5 0 6]     -> [1 20 2 30 3 40 4 50 5 60]
      rhs_dilation 2:    kernel [1 0 10]             -> [31 42 53 64]
      stride 2, pad (1, 0): [0 1 2 3 4 5 6]         -> [10 32 54]"""
    covers.add(target, "xla.conv_with_general_padding")
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    w = np.array([1, 10], np.float32).reshape(1, 1, 2)
    comp = comp_of(lambda b, px, pw: O.tuple(b, [
        O.conv_with_general_padding(px, pw, [1], [(-1, 2)], [1], [1]),
        O.conv_with_general_padding(px, pw, [1], [(0, 0)], [2], [1]),
        O.conv_with_general_padding(px, pw, [1], [(0, 0)], [1], [2]),
        O.conv_with_general_padding(px, pw, [2], [(1, 0)], [1], [1])]),
        Shape(F32, x.shape), Shape(F32, w.shape), name="conv_general_padding_hand")
    check_example(comp, [x, w], (_row(32, 43, 54, 65, 6, 0), _row(1, 20, 2, 30, 3, 40, 4, 50, 5, 60),
                                 _row(31, 42, 53, 64), _row(10, 32, 54)), target=target)


def test_conv_stablehlo_example(covers, target):
    """The worked example of the StableHLO spec's `convolution` (same semantics): NHWC/HWIO,
    stride 4, lhs dilation 2, a 3x3 kernel of ones."""
    covers.add(target, "xla.conv_general_dilated")
    lhs = np.array([[1, 2, 5, 6], [3, 4, 7, 8], [10, 11, 14, 15], [12, 13, 16, 17]], np.int64).reshape(1, 4, 4, 1)
    rhs = np.ones((3, 3, 1, 1), np.int64)
    comp = comp_of(lambda b, x, w: O.conv_general_dilated(x, w, [4, 4], [(0, 0), (0, 0)], [2, 2], [1, 1], NHWC),
                   Shape(xla.S64, lhs.shape), Shape(xla.S64, rhs.shape), name="conv_stablehlo")
    check_example(comp, [lhs, rhs], np.array([[10, 26], [46, 62]], np.int64).reshape(1, 2, 2, 1), target=target)


def test_conv_groups_by_hand(covers, target):
    """feature_group_count 2: output feature g sees only input feature g.  batch_group_count 2:
    output feature g sees only batch g (the output has batch 1)."""
    covers.add(target, "xla.conv_with_general_padding")
    x = np.array([[[1, 2, 3], [10, 20, 30]]], np.float32)            # [1, 2, 3]
    w = np.array([[[1, 1]], [[1, -1]]], np.float32)                   # [2 out, 1 in, 2]
    xb = x.reshape(2, 1, 3)                                           # [2 batch, 1 feature, 3]
    comp = comp_of(lambda b, px, pxb, pw: O.tuple(b, [
        O.conv_with_general_padding(px, pw, [1], [(0, 0)], [1], [1], feature_group_count=2),
        O.conv_with_general_padding(pxb, pw, [1], [(0, 0)], [1], [1], batch_group_count=2)]),
        Shape(F32, x.shape), Shape(F32, xb.shape), Shape(F32, w.shape), name="conv_groups_hand")
    check_example(comp, [x, xb, w], (np.array([[[3, 5], [-10, -10]]], np.float32),
                                     np.array([[[3, 5], [-10, -10]]], np.float32)), target=target)


def _depthwise_numpy(x, w, mult):
    """tf.nn.depthwise_conv2d on NHWC with a [kh, kw, C, M] filter, VALID, stride 1."""
    n, h, wd, c = x.shape
    kh, kw = w.shape[:2]
    out = np.zeros((n, h - kh + 1, wd - kw + 1, c, mult), np.float64)
    for i in range(kh):
        for j in range(kw):
            out += x[:, i:i + out.shape[1], j:j + out.shape[2], :, None] * w[i, j]
    return out.reshape(n, out.shape[1], out.shape[2], c * mult)


@pytest.mark.parametrize("mult", [1, 3])
def test_depthwise_nhwc(covers, target, mult):
    """Depthwise convolution as the spec describes it: feature_group_count = channels, the
    [kh, kw, C, M] filter reshaped to [kh, kw, 1, C * M]; against tf's formula in numpy."""
    covers.add(target, "xla.conv_general_dilated")
    rng = np.random.default_rng(40 + mult)
    x = rng.uniform(-1, 1, (2, 6, 7, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 2, 4, mult)).astype(np.float32)
    comp = comp_of(lambda b, px, pw: O.conv_general_dilated(px, pw, [1, 1], "VALID", [1, 1], [1, 1], NHWC,
                                                            feature_group_count=4),
                   Shape(F32, x.shape), Shape(F32, (3, 2, 1, 4 * mult)), name=f"depthwise_{mult}")
    got = xla.compile(comp, target=target)(x, w.reshape(3, 2, 1, 4 * mult))
    np.testing.assert_allclose(got, _depthwise_numpy(x, w, mult), rtol=1e-5, atol=1e-5)
    run_and_compare(comp, x, w.reshape(3, 2, 1, 4 * mult), target=target)


def test_backward_filter_batch_groups(covers, target):
    """The filter gradient of a depthwise 1-D convolution y[n,c,p] = sum_k x[n,c,p+k] w[c,k]
    is dw[c,k] = sum_{n,q} x[n,c,k+q] g[n,c,q]: a convolution with batch_group_count = C whose
    lhs batch is the channel and whose kernel is the output gradient (what JAX emits)."""
    covers.add(target, "xla.conv_general_dilated")
    rng = np.random.default_rng(45)
    N, C, P, K = 3, 4, 9, 3
    x = rng.uniform(-1, 1, (N, C, P)).astype(np.float32)
    g = rng.uniform(-1, 1, (N, C, P - K + 1)).astype(np.float32)
    dn = CDN(input_batch_dimension=1, input_feature_dimension=0, input_spatial_dimensions=(2,),
             kernel_input_feature_dimension=0, kernel_output_feature_dimension=1, kernel_spatial_dimensions=(2,),
             output_batch_dimension=0, output_feature_dimension=1, output_spatial_dimensions=(2,))
    comp = comp_of(lambda b, px, pg: O.conv_general_dilated(px, pg, [1], [(0, 0)], [1], [1], dn,
                                                            batch_group_count=C),
                   Shape(F32, x.shape), Shape(F32, g.shape), name="backward_filter")
    got = xla.compile(comp, target=target)(x, g)
    want = np.zeros((C, K))
    for k in range(K):
        want[:, k] = np.einsum("ncq,ncq->c", x[:, :, k:k + g.shape[2]].astype(np.float64), g)
    assert got.shape == (1, C, K)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)
    run_and_compare(comp, x, g, target=target)


def test_conv_preferred_element_type(covers, target):
    """s8 x s8 accumulated in s32 (no wrap-around in s8) and u8 into f32."""
    covers.add(target, "xla.conv_general_dilated", "xla.conv")
    rng = np.random.default_rng(46)
    x = rng.integers(-128, 127, (1, 5, 5, 8), endpoint=True).astype(np.int8)
    w = rng.integers(-128, 127, (3, 3, 8, 4), endpoint=True).astype(np.int8)
    xu = rng.integers(0, 255, (1, 8, 5, 5), endpoint=True).astype(np.uint8)
    wu = rng.integers(0, 255, (2, 8, 2, 2), endpoint=True).astype(np.uint8)
    comp = comp_of(lambda b, px, pw, pxu, pwu: O.tuple(b, [
        O.conv_general_dilated(px, pw, [1, 1], "SAME", [1, 1], [1, 1], NHWC, preferred_element_type=S32),
        O.conv(pxu, pwu, [1, 1], "VALID", preferred_element_type=F32, precision_config=["HIGHEST", "DEFAULT"])]),
        Shape(S8, x.shape), Shape(S8, w.shape), Shape(U8, xu.shape), Shape(U8, wu.shape), name="conv_s8")
    got = run_and_compare(comp, x, w, xu, wu, target=target)
    xp = np.pad(x.astype(np.int64), [(0, 0), (1, 1), (1, 1), (0, 0)])
    want = np.zeros((1, 5, 5, 4), np.int64)
    for i in range(3):
        for j in range(3):
            want += np.einsum("nhwc,co->nhwo", xp[:, i:i + 5, j:j + 5], w[i, j].astype(np.int64))
    np.testing.assert_array_equal(got[0], want.astype(np.int32))


def _layouts(rank):
    """Dimension numbers with batch, feature and spatial dimensions in varied positions."""
    n = rank - 2
    sp = tuple(range(2, rank))
    return [
        CDN(0, 1, sp, 1, 0, sp, 0, 1, sp),                                   # NCHW / OIHW
        CDN(0, rank - 1, tuple(range(1, rank - 1)), n, n + 1, tuple(range(n)),
            0, rank - 1, tuple(range(1, rank - 1))),                         # NHWC / HWIO
        CDN(rank - 1, 0, tuple(range(1, rank - 1)), n + 1, 0, tuple(range(1, rank - 1)),
            1, rank - 1, tuple(reversed([0] + list(range(2, rank - 1))))),  # CHWN / O..I, odd output order
    ]


CONV_TYPES = [F32, F16, BF16, F64, S32, C64]


@pytest.mark.parametrize("et", CONV_TYPES, ids=[t.name for t in CONV_TYPES])
def test_conv_differential(covers, target, et):
    """Reference interpreter vs compiled: 1-D, 2-D, 3-D; three layouts; SAME/VALID and explicit
    (negative) padding; strides; lhs and rhs dilation; feature groups (grouped and depthwise
    with multiplier) and batch groups."""
    covers.add(target, *CONV_OPS)
    rng = np.random.default_rng(47)
    dom = "small"
    b = xla.Builder(f"conv_{et.name}")
    params, args = [], []

    def param(shape):
        a = random_array(et, shape, rng, dom)
        params.append(b.parameter(len(params), Shape(et, shape)))
        args.append(a)
        return params[-1]

    def arrange(dims, where):           # logical (batch/out, feature/in, spatial...) -> positions
        out = [0] * len(dims)
        for size, pos in zip(dims, where):
            out[pos] = size
        return tuple(out)

    outs = []
    x2 = param((2, 3, 7, 6))
    w2 = param((4, 3, 3, 2))
    outs += [O.conv(x2, w2, [1, 1], "SAME"), O.conv(x2, w2, [2, 3], "VALID"), O.conv(x2, w2, [2, 1], "SAME")]
    x2g = param((2, 4, 7, 6))
    w2g = param((6, 2, 3, 2))
    outs += [O.conv_with_general_padding(x2g, w2g, [2, 1], [(1, -1), (2, 0)], [2, 1], [1, 2], feature_group_count=2),
             O.conv_with_general_padding(x2g, w2g, [1, 1], [(0, 0), (-1, -1)], [1, 3], [2, 1], feature_group_count=2)]
    x4b = param((4, 3, 6, 5))
    w4b = param((6, 3, 2, 2))
    outs.append(O.conv_with_general_padding(x4b, w4b, [1, 2], [(1, 1), (0, 1)], [1, 1], [1, 1], batch_group_count=2))
    for rank in (3, 4, 5):
        n = rank - 2
        for li, dn in enumerate(_layouts(rank)):
            lw = [dn.input_batch_dimension, dn.input_feature_dimension, *dn.input_spatial_dimensions]
            kw = [dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension, *dn.kernel_spatial_dimensions]
            sp = (6, 5, 4)[:n]
            ksp = (3, 2, 2)[:n]
            x = param(arrange((2, 4) + sp, lw))
            w = param(arrange((6, 4) + ksp, kw))            # plain
            wd = param(arrange((8, 1) + ksp, kw))           # depthwise, multiplier 2
            wg = param(arrange((6, 2) + ksp, kw))           # 2 groups
            ones = [1] * n
            outs += [
                O.conv_general_dilated(x, w, ones, "SAME", ones, ones, dn),
                O.conv_general_dilated(x, w, [2] * n, [(1, -1)] * n, [2] * n, ones, dn),
                O.conv_general_dilated(x, wd, ones, "VALID", ones, [2] + ones[1:], dn, feature_group_count=4),
                O.conv_general_dilated(x, wg, [1, 2, 1][:n], "SAME", ones, ones, dn, feature_group_count=2),
                O.conv_general_dilated(x, w, ones, [(0, 1)] * n, ones, ones, dn, batch_group_count=2),
            ]
    O.tuple(b, outs)
    run_and_compare(b.build(), *args, scale=16.0, what=f"convolutions on {et}", target=target)


def test_conv_lowers_to_named_ops():
    """The layouts IREE has tuned kernels for reach it as linalg convolution ops."""
    from xlair.compile import lower
    b = xla.Builder("named")
    x = b.parameter(0, Shape(F32, (1, 8, 8, 4)))
    w = b.parameter(1, Shape(F32, (3, 3, 4, 6)))
    wd = b.parameter(2, Shape(F32, (3, 3, 1, 8)))
    xc = b.parameter(3, Shape(F32, (1, 4, 8, 8)))
    wc = b.parameter(4, Shape(F32, (6, 4, 3, 3)))
    wg = b.parameter(5, Shape(F32, (3, 3, 2, 6)))
    O.tuple(b, [O.conv_general_dilated(x, w, [1, 1], "SAME", [1, 1], [1, 1], NHWC),
                O.conv_general_dilated(x, wd, [1, 1], "SAME", [1, 1], [1, 1], NHWC, feature_group_count=4),
                O.conv(xc, wc, [1, 1], "VALID"),
                O.conv_general_dilated(x, wg, [1, 1], "VALID", [1, 1], [1, 1], NHWC, feature_group_count=2)])
    text = str(lower(b.build()))
    for name in ("linalg.conv_2d_nhwc_hwcf", "linalg.depthwise_conv_2d_nhwc_hwcm", "linalg.conv_2d_nchw_fchw",
                 "linalg.conv_2d_nhwgc_gfhwc"):
        assert name in text, name
    assert "linalg.generic" not in text


def test_conv_edge_shapes(covers, target):
    """No spatial dimensions (a matrix product: out[b, o] = sum_i x[b, i] w[o, i]), an empty
    batch, and a window wider than the padded base (no output positions)."""
    covers.add(target, "xla.conv_general_dilated", "xla.conv")
    rng = np.random.default_rng(48)
    x = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (5, 4)).astype(np.float32)
    comp = comp_of(lambda b, px, pw, pe, pn: O.tuple(b, [
        O.conv_general_dilated(px, pw, [], [], [], [], CDN(0, 1, (), 1, 0, (), 0, 1, ())),
        O.conv(pe, O.reshape(pw, [5, 4, 1]), [1], "SAME"),
        O.conv(pn, O.broadcast(O.constant(b, np.float32(1)), [1, 1, 3]), [1], "VALID")]),
        Shape(F32, x.shape), Shape(F32, w.shape), Shape(F32, (0, 4, 6)), Shape(F32, (1, 1, 2)), name="conv_edges")
    got = xla.compile(comp, target=target)(x, w, np.zeros((0, 4, 6), np.float32), np.ones((1, 1, 2), np.float32))
    np.testing.assert_allclose(got[0], x @ w.T, rtol=1e-5, atol=1e-6)
    assert got[1].shape == (0, 5, 6) and got[2].shape == (1, 1, 0)


# a window at least as large as the output (JAX's weight gradients): a matmul over patches on
# the CPU (lowering/contraction.py _conv_as_matmul)
_PATCH_CASES = [
    # lhs dims, rhs dims, dimension numbers, strides, padding, lhs dilation, rhs dilation
    ((3, 12, 12, 5), (10, 10, 5, 4), NHWC, (1, 1), [(0, 0), (0, 0)], (1, 1), (1, 1)),
    ((2, 11, 9, 3), (5, 4, 3, 6), NHWC, (1, 2), [(1, 0), (0, 2)], (1, 1), (2, 2)),
    ((4, 20, 2), (9, 2, 3), NWC, (2,), [(1, 1)], (1,), (2,)),
    ((1, 6, 6, 6, 2), (5, 5, 5, 2, 3), NDHWC, (1, 1, 1), [(0, 0)] * 3, (1, 1, 1), (1, 1, 1)),
    # JAX's weight gradient of a 3x3 SAME conv over 8x10x10x4 -> 6: lhs is x with its batch as
    # the contracted feature, rhs the output gradient, the 3x3 kernel the output
    ((8, 10, 10, 4), (8, 10, 10, 6), CDN(3, 0, (1, 2), 0, 3, (1, 2), 2, 3, (0, 1)), (1, 1),
     [(1, 1), (1, 1)], (1, 1), (1, 1)),
]


@pytest.mark.parametrize("case", range(len(_PATCH_CASES)))
def test_conv_with_a_large_window_as_patches(covers, target, case):
    from xlair.compile import lower
    xs, ws, dn, st, pad, ld, rd = _PATCH_CASES[case]
    covers.add(target, "xla.conv_general_dilated")
    rng = np.random.default_rng(case)
    x, w = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
    comp = comp_of(lambda b, px, pw: O.conv_general_dilated(px, pw, list(st), pad, list(ld), list(rd), dn),
                   Shape(F32, xs), Shape(F32, ws), name=f"patches_{case}")
    if target == "cpu":
        text = str(lower(comp, 1, "cpu"))
        assert "linalg.matmul" in text and "linalg.conv" not in text
    run_and_compare(comp, x, w, target=target)


@pytest.mark.parametrize("chip, channels, patches", [("x86-64-v3", 8, True), ("znver4", 8, False),
                                                     ("znver4", 1, True), ("x86-64-v3", 1, True)])
def test_forward_convolutions_as_patches_and_a_matmul(chip, channels, patches):
    """A channels-last forward convolution runs as patches and one matmul on a CPU without
    AVX-512 (`vectors=256`, the code for x86-64-v3: IREE's convolution code there was 2-4x
    slower) and, on any CPU, with fewer than 4 input features; otherwise as IREE's named
    convolution op.  Results against the reference interpreter."""
    import importlib
    from xlair.runtime import Executable
    from xlair.targets import target
    C = importlib.import_module("xlair.compile")
    comp = comp_of(lambda b, x, w: O.conv_general_dilated(x, w, [1, 1], "SAME", [1, 1], [1, 1], NHWC),
                   Shape(F32, (2, 9, 9, channels)), Shape(F32, (3, 3, channels, 5)), name="conv")
    tgt = target("cpu")
    needs = C.needs_of(tgt, tgt.compile_flags(chip))
    text = str(C.lower(comp, 1, "cpu", needs))
    assert ("linalg.conv_2d_nhwc_hwcf" not in text) == patches
    assert ("linalg.matmul" in text) == patches
    rng = np.random.default_rng(channels)
    x = rng.standard_normal((2, 9, 9, channels)).astype(np.float32)
    w = rng.standard_normal((3, 3, channels, 5)).astype(np.float32)
    if chip == "x86-64-v3":                       # (znver4 code runs only on such a CPU)
        exe = Executable(C.compile_vmfb(comp, "cpu", cpu=chip), "cpu")
        np.testing.assert_allclose(exe(x, w), xla.interpret(comp, x, w), rtol=1e-5, atol=1e-5)
