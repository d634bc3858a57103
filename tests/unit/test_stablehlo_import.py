"""The StableHLO importer (python/xlair/stablehlo/): what each StableHLO construct becomes,
its values (through the reference interpreter, and compiled for the structured ops), and the
errors for what xlair has no counterpart for."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xlair as xla
from xlair.stablehlo import SUPPORTED, Unsupported, from_stablehlo


def run(text, *args, entry=None, compiled=False):
    comp = from_stablehlo(text, entry=entry)
    if compiled:
        return xla.compile(comp)(*args)
    return xla.interpret(comp, *args)


def body(text: str) -> str:
    """The func body of an imported module, as text (for checking which xla ops it uses)."""
    return str(from_stablehlo(text))


# ----------------------------------------------------------------------------------------
# simple ops (a table on each side): values through the interpreter
# ----------------------------------------------------------------------------------------
UNARY_CASES = [
    ("abs", np.array([-1.5, 2.0], np.float32), np.array([1.5, 2.0], np.float32)),
    ("cosine", np.array([0.0], np.float32), np.array([1.0], np.float32)),
    ("count_leading_zeros", np.array([1, 0], np.int32), np.array([31, 32], np.int32)),
    ("exponential_minus_one", np.array([0.0], np.float64), np.array([0.0])),
    ("log_plus_one", np.array([0.0], np.float64), np.array([0.0])),
    ("negate", np.array([3], np.int8), np.array([-3], np.int8)),
    ("not", np.array([True, False]), np.array([False, True])),
    ("popcnt", np.array([7], np.uint8), np.array([3], np.uint8)),
    ("round_nearest_even", np.array([2.5, 3.5], np.float32), np.array([2.0, 4.0], np.float32)),
    ("round_nearest_afz", np.array([2.5, -2.5], np.float32), np.array([3.0, -3.0], np.float32)),
    ("sign", np.array([-2.0, 0.0], np.float32), np.array([-1.0, 0.0], np.float32)),
    ("sine", np.array([0.0], np.float32), np.array([0.0], np.float32)),
    ("is_finite", np.array([np.inf, 1.0], np.float32), np.array([False, True])),
]


@pytest.mark.parametrize("op,x,want", UNARY_CASES, ids=[c[0] for c in UNARY_CASES])
def test_unary(op, x, want):
    t = f"tensor<{x.size}x{_mlir(x.dtype)}>"
    rt = f"tensor<{x.size}x{_mlir(want.dtype)}>"
    text = f"func.func @main(%a: {t}) -> {rt} {{\n %0 = stablehlo.{op} %a : ({t}) -> {rt}\n return %0 : {rt} }}"
    np.testing.assert_array_equal(run(text, x), want)


BINARY_CASES = [
    ("add", "add", [1, 2], [3, 4], [4, 6]),
    ("subtract", "sub", [1, 2], [3, 4], [-2, -2]),
    ("multiply", "mul", [2, 3], [3, 4], [6, 12]),
    ("divide", "div", [7, -7], [2, 2], [3, -3]),
    ("remainder", "rem", [7, -7], [2, 2], [1, -1]),
    ("maximum", "max", [1, 5], [3, 4], [3, 5]),
    ("minimum", "min", [1, 5], [3, 4], [1, 4]),
    ("power", "pow", [2, 3], [3, 2], [8, 9]),
    ("and", "and", [6, 5], [3, 3], [2, 1]),
    ("or", "or", [6, 5], [3, 3], [7, 7]),
    ("xor", "xor", [6, 5], [3, 3], [5, 6]),
    ("shift_left", "shift_left", [1, 3], [2, 1], [4, 6]),
    ("shift_right_arithmetic", "shift_right_arithmetic", [-8, 8], [1, 2], [-4, 2]),
    ("shift_right_logical", "shift_right_logical", [8, 1], [1, 1], [4, 0]),
]


@pytest.mark.parametrize("op,xla_op,a,b,want", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_binary(op, xla_op, a, b, want):
    text = (f"func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {{\n"
            f" %0 = stablehlo.{op} %a, %b : tensor<2xi32>\n return %0 : tensor<2xi32> }}")
    assert f'"xla.{xla_op}"' in body(text)
    np.testing.assert_array_equal(run(text, np.array(a, np.int32), np.array(b, np.int32)), np.array(want, np.int32))


def _mlir(dt) -> str:
    return {"float32": "f32", "float64": "f64", "int32": "i32", "int8": "i8", "uint8": "ui8", "bool": "i1"}[
        np.dtype(dt).name]


def test_every_supported_op_is_named():
    for name in ("stablehlo.add", "stablehlo.while", "stablehlo.case", "stablehlo.convolution", "func.call",
                 "stablehlo.scatter", "stablehlo.sort", "stablehlo.fft", "stablehlo.rng_bit_generator"):
        assert name in SUPPORTED


# ----------------------------------------------------------------------------------------
# element types, constants
# ----------------------------------------------------------------------------------------
def test_unsigned_and_signless_types():
    text = """func.func @main(%a: tensor<2xui8>, %b: tensor<2xi8>) -> (tensor<2xui8>, tensor<2xi8>) {
      %0 = stablehlo.shift_right_arithmetic %a, %a : tensor<2xui8>
      %1 = stablehlo.divide %b, %b : tensor<2xi8>
      return %0, %1 : tensor<2xui8>, tensor<2xi8> }"""
    comp = from_stablehlo(text)
    assert [str(s) for s in comp.parameter_shapes] == ["u8[2]", "s8[2]"]
    a, b = run(text, np.array([200, 1], np.uint8), np.array([-3, 5], np.int8))
    assert a.dtype == np.uint8 and b.dtype == np.int8


def test_complex_constants_are_real_and_imaginary_parts():
    text = """func.func @main() -> (tensor<2xcomplex<f32>>, tensor<complex<f64>>, tensor<3xcomplex<f64>>) {
      %0 = stablehlo.constant dense<[(1.0, 0x7F800000), (-0.0, 2.5)]> : tensor<2xcomplex<f32>>
      %1 = stablehlo.constant dense<(0x7FF0000000000001, 0x8000000000000000)> : tensor<complex<f64>>
      %2 = stablehlo.constant dense<(1.5, -2.0)> : tensor<3xcomplex<f64>>
      return %0, %1, %2 : tensor<2xcomplex<f32>>, tensor<complex<f64>>, tensor<3xcomplex<f64>> }"""
    assert '"xla.complex"' in body(text)
    for a, b, c in (run(text), run(text, compiled=True)):
        pass
    a, b, c = run(text, compiled=True)
    assert a[0] == complex(1, np.inf) and np.signbit(a[1].real) and a[1].imag == 2.5
    assert np.isnan(b.real) and b.imag == 0 and np.signbit(b.imag)
    np.testing.assert_array_equal(c, np.full(3, 1.5 - 2j))
    a2, b2, _ = run(text)
    assert a2[0] == complex(1, np.inf) and np.signbit(b2.imag)


def test_bf16_special_values_survive():
    text = """func.func @main() -> tensor<6xbf16> {
      %0 = stablehlo.constant dense<[0.1, 0x7F80, 0xFF80, 0x7FC0, 0x0001, -0.0]> : tensor<6xbf16>
      return %0 : tensor<6xbf16> }"""
    want = np.array([0.1, np.inf, -np.inf, np.nan, 9.18355e-41, -0.0], ml_dtypes.bfloat16)
    for got in (run(text), run(text, compiled=True)):
        np.testing.assert_array_equal(got.view(np.uint16)[[0, 1, 2, 4, 5]], want.view(np.uint16)[[0, 1, 2, 4, 5]])
        assert np.isnan(got[3].astype(np.float32))


@pytest.mark.parametrize("t,what", [("tensor<4xi4>", "i4"), ("tensor<2xf8E4M3FN>", "f8E4M3FN"),
                                    ("tensor<2xui2>", "ui2")])
def test_types_outside_xla_are_unsupported(t, what):
    text = f"func.func @main(%a: {t}) -> {t} {{\n %0 = stablehlo.add %a, %a : {t}\n return %0 : {t} }}"
    with pytest.raises(Unsupported, match=f"element type {what}"):
        from_stablehlo(text)


def test_dynamic_shapes_are_unsupported():
    text = "func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> { return %a : tensor<?xf32> }"
    with pytest.raises(Unsupported, match="dynamic shape"):
        from_stablehlo(text)


# ----------------------------------------------------------------------------------------
# attributes: comparisons, dimension numbers, convolutions
# ----------------------------------------------------------------------------------------
def test_compare_directions_and_total_order():
    text = """func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
      %0 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
      %1 = stablehlo.compare EQ, %a, %b, TOTALORDER : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
      %2 = stablehlo.compare GE, %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
      return %0, %1, %2 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1> }"""
    t = body(text)
    assert '"xla.lt"' in t and '"xla.eq_total_order"' in t and '"xla.ge"' in t
    a = np.array([0.0, np.nan, 1.0], np.float32)
    b = np.array([-0.0, np.nan, 2.0], np.float32)
    lt, eq, ge = run(text, a, b)
    np.testing.assert_array_equal(lt, [False, False, True])
    np.testing.assert_array_equal(eq, [False, True, False])     # -0 < +0 and NaN == NaN in total order
    np.testing.assert_array_equal(ge, [True, False, False])


def test_dot_general_dimension_numbers_and_preferred_type():
    text = """func.func @main(%a: tensor<2x3x4xi8>, %b: tensor<2x4x5xi8>) -> tensor<2x3x5xi32> {
      %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],
           precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xi8>, tensor<2x4x5xi8>) -> tensor<2x3x5xi32>
      return %0 : tensor<2x3x5xi32> }"""
    rng = np.random.default_rng(0)
    a = rng.integers(-100, 100, (2, 3, 4)).astype(np.int8)
    b = rng.integers(-100, 100, (2, 4, 5)).astype(np.int8)
    want = np.einsum("bij,bjk->bik", a.astype(np.int32), b.astype(np.int32))
    np.testing.assert_array_equal(run(text, a, b), want)
    np.testing.assert_array_equal(run(text, a, b, compiled=True), want)


def test_convolution_layout_padding_dilation_and_window_reversal():
    text = """func.func @main(%x: tensor<1x5x5x2xf32>, %w: tensor<3x2x2x4xf32>) -> tensor<1x4x3x4xf32> {
      %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
           window = {stride = [1, 2], pad = [[1, 0], [0, 1]], rhs_dilate = [1, 1], reverse = [true, false]}
           {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
           : (tensor<1x5x5x2xf32>, tensor<3x2x2x4xf32>) -> tensor<1x4x3x4xf32>
      return %0 : tensor<1x4x3x4xf32> }"""
    t = body(text)
    assert '"xla.rev"' in t and '"xla.conv_general_dilated"' in t
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 5, 5, 2)).astype(np.float32)
    w = rng.standard_normal((3, 2, 2, 4)).astype(np.float32)
    xp = np.pad(x, ((0, 0), (1, 0), (0, 1), (0, 0)))
    wr = w[::-1]                                   # reversed along spatial dimension 0
    want = np.zeros((1, 4, 3, 4))
    for i in range(4):
        for j in range(3):
            want[0, i, j] = np.einsum("hwc,hwco->o", xp[0, i:i + 3, 2 * j:2 * j + 2], wr)
    np.testing.assert_allclose(run(text, x, w), want, rtol=1e-5, atol=1e-5)


def test_gather_and_scatter_dimension_numbers():
    text = """func.func @main(%op: tensor<3x4xi32>, %idx: tensor<2x1xi32>, %upd: tensor<2x4xi32>) -> (tensor<2x4xi32>, tensor<3x4xi32>) {
      %0 = "stablehlo.gather"(%op, %idx) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
          collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
          slice_sizes = array<i64: 1, 4>, indices_are_sorted = false} : (tensor<3x4xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
      %1 = "stablehlo.scatter"(%op, %idx, %upd) ({
        ^bb0(%x: tensor<i32>, %y: tensor<i32>):
          %s = stablehlo.add %x, %y : tensor<i32>
          stablehlo.return %s : tensor<i32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
          scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false,
          unique_indices = false} : (tensor<3x4xi32>, tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<3x4xi32>
      return %0, %1 : tensor<2x4xi32>, tensor<3x4xi32> }"""
    op = np.arange(12, dtype=np.int32).reshape(3, 4)
    idx = np.array([[2], [0]], np.int32)
    upd = np.ones((2, 4), np.int32)
    g, s = run(text, op, idx, upd)
    np.testing.assert_array_equal(g, op[[2, 0]])
    want = op.copy()
    want[[2, 0]] += 1
    np.testing.assert_array_equal(s, want)


def test_convert_complex_to_real_drops_the_imaginary_part():
    text = """func.func @main(%a: tensor<3xcomplex<f64>>) -> (tensor<3xi1>, tensor<3xf32>) {
      %0 = stablehlo.convert %a : (tensor<3xcomplex<f64>>) -> tensor<3xi1>
      %1 = stablehlo.convert %a : (tensor<3xcomplex<f64>>) -> tensor<3xf32>
      return %0, %1 : tensor<3xi1>, tensor<3xf32> }"""
    assert '"xla.real"' in body(text)
    b, f = run(text, np.array([-1 + 0j, 1j, 2.5 + 3j]))
    np.testing.assert_array_equal(b, [True, False, True])
    np.testing.assert_array_equal(f, np.array([-1, 0, 2.5], np.float32))


# ----------------------------------------------------------------------------------------
# regions and control flow
# ----------------------------------------------------------------------------------------
def test_variadic_reduce_returns_a_tuple_unpacked_per_result():
    text = """func.func @main(%v: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<f32>, tensor<i32>) {
      %c0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %c1 = stablehlo.constant dense<0> : tensor<i32>
      %0:2 = stablehlo.reduce(%v init: %c0), (%i init: %c1) across dimensions = [0] :
          (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
        reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>) {
          %gt = stablehlo.compare GT, %a, %c : (tensor<f32>, tensor<f32>) -> tensor<i1>
          %m = stablehlo.select %gt, %a, %c : tensor<i1>, tensor<f32>
          %k = stablehlo.select %gt, %b, %d : tensor<i1>, tensor<i32>
          stablehlo.return %m, %k : tensor<f32>, tensor<i32>
        }
      return %0#0, %0#1 : tensor<f32>, tensor<i32> }"""
    v = np.array([1.0, 7.0, 3.0, 2.0], np.float32)
    i = np.arange(4, dtype=np.int32)
    for m, k in (run(text, v, i), run(text, v, i, compiled=True)):
        assert m == 7.0 and k == 1


def test_while_threads_values_captured_from_the_enclosing_scope():
    text = """func.func @main(%n: tensor<i32>, %step: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
      %c0 = stablehlo.constant dense<0> : tensor<i32>
      %r:2 = stablehlo.while(%i = %c0, %acc = %c0) : tensor<i32>, tensor<i32>
        cond {
          %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %i2 = stablehlo.add %i, %one : tensor<i32>
          %a2 = stablehlo.add %acc, %step : tensor<i32>
          stablehlo.return %i2, %a2 : tensor<i32>, tensor<i32>
        }
      return %r#0, %r#1 : tensor<i32>, tensor<i32> }"""
    for i, acc in (run(text, np.int32(5), np.int32(3)), run(text, np.int32(5), np.int32(3), compiled=True)):
        assert (i, acc) == (5, 15)


def test_if_and_case_branches_get_their_captures_as_operands():
    text = """func.func @main(%p: tensor<i1>, %k: tensor<i32>, %x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      %0 = "stablehlo.if"(%p) ({
        %s = stablehlo.add %x, %y : tensor<2xf32>
        stablehlo.return %s : tensor<2xf32>
      }, {
        stablehlo.return %y : tensor<2xf32>
      }) : (tensor<i1>) -> tensor<2xf32>
      %1 = "stablehlo.case"(%k) ({
        %c = stablehlo.constant dense<7.0> : tensor<2xf32>
        stablehlo.return %c : tensor<2xf32>
      }, {
        %m = stablehlo.multiply %x, %x : tensor<2xf32>
        stablehlo.return %m : tensor<2xf32>
      }) : (tensor<i32>) -> tensor<2xf32>
      return %0, %1 : tensor<2xf32>, tensor<2xf32> }"""
    x = np.array([1.0, 2.0], np.float32)
    y = np.array([10.0, 20.0], np.float32)
    exe = xla.compile(from_stablehlo(text))
    for p, k, w0, w1 in ((True, 0, x + y, [7.0, 7.0]), (False, 1, y, x * x), (True, 5, x + y, x * x),
                         (False, -1, y, x * x)):
        got = exe(np.bool_(p), np.int32(k), x, y)
        np.testing.assert_array_equal(got[0], w0)
        np.testing.assert_array_equal(got[1], w1)


def test_func_call_becomes_xla_call_of_a_tuple_returning_function():
    text = """func.func private @pair(%a: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
        %0 = stablehlo.negate %a : tensor<f32>
        return %a, %0 : tensor<f32>, tensor<f32> }
      func.func @main(%a: tensor<f32>) -> tensor<f32> {
        %0:2 = call @pair(%a) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
        %1:2 = call @pair(%0#1) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
        %2 = stablehlo.add %0#0, %1#1 : tensor<f32>
        return %2 : tensor<f32> }"""
    t = body(text)
    assert t.count('"xla.call"') == 2 and t.count("func.func private") == 1
    assert run(text, np.float32(3)) == 6.0
    assert run(text, np.float32(3), compiled=True) == 6.0


def test_calls_inside_scalar_computations_are_inlined():
    text = """func.func private @mx(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
        %0 = stablehlo.maximum %a, %b : tensor<f32>
        return %0 : tensor<f32> }
      func.func @main(%v: tensor<6xf32>) -> tensor<3xf32> {
        %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
        %0 = "stablehlo.reduce_window"(%v, %c) ({
          ^bb0(%a: tensor<f32>, %b: tensor<f32>):
            %m = func.call @mx(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
            stablehlo.return %m : tensor<f32>
        }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>} : (tensor<6xf32>, tensor<f32>) -> tensor<3xf32>
        return %0 : tensor<3xf32> }"""
    assert '"xla.call"' not in body(text)
    v = np.array([1, 5, 2, 0, 9, 3], np.float32)
    np.testing.assert_array_equal(run(text, v, compiled=True), [5, 2, 9])


def test_sort_with_a_comparator_of_two_operands():
    text = """func.func @main(%k: tensor<5xi32>, %v: tensor<5xf32>) -> (tensor<5xi32>, tensor<5xf32>) {
      %0:2 = "stablehlo.sort"(%k, %v) ({
        ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<f32>):
          %lt = stablehlo.compare GT, %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
      }) {dimension = 0 : i64, is_stable = true} : (tensor<5xi32>, tensor<5xf32>) -> (tensor<5xi32>, tensor<5xf32>)
      return %0#0, %0#1 : tensor<5xi32>, tensor<5xf32> }"""
    k = np.array([3, 1, 4, 1, 5], np.int32)
    v = np.arange(5, dtype=np.float32)
    ks, vs = run(text, k, v)
    np.testing.assert_array_equal(ks, [5, 4, 3, 1, 1])
    np.testing.assert_array_equal(vs, [4, 2, 0, 1, 3])


APPROX_TOP_K = """
  func.func private @gt(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>) -> tensor<i1> {
    %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    return %0 : tensor<i1> }
  func.func @main(%x: tensor<3x6xf32>) -> (tensor<3xKKxf32>, tensor<3xKKxi32>) {
    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %m1 = stablehlo.constant dense<-1> : tensor<i32>
    %i = stablehlo.iota dim = 1 : tensor<3x6xi32>
    %0:2 = stablehlo.custom_call @ApproxTopK(%x, %i, %ninf, %m1) {called_computations = [@gt],
      mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.95 : f32,
                             reduction_dim = DIM : i64, reduction_input_size_override = -1 : i64, top_k = 2 : i64}}
      : (tensor<3x6xf32>, tensor<3x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xKKxf32>, tensor<3xKKxi32>)
    return %0#0, %0#1 : tensor<3xKKxf32>, tensor<3xKKxi32> }"""


def test_approx_top_k_is_the_exact_top_k():
    """JAX's approx_max_k / approx_min_k (XLA's ApproxTopK custom call, its comparator a called
    computation): the exact answer, which every recall target admits: JAX's ann_test."""
    x = np.array([[3, 1, 4, 1, 5, 9], [2, 6, 5, 3, 5, 8], [9, 7, 9, 3, 2, 3]], np.float32)
    for k in (2, 4):        # top_k, or a partial reduction's larger output (sorted: still exact)
        vals, idx = run(APPROX_TOP_K.replace("KK", str(k)).replace("DIM", "1"), x)
        order = np.argsort(-x, axis=1, kind="stable")[:, :k]
        np.testing.assert_array_equal(idx, order)
        np.testing.assert_array_equal(vals, np.take_along_axis(x, order, 1))
    with pytest.raises(Unsupported, match=r"ApproxTopK\) reduction_dim must be in \[0, 2\); got 2"):
        from_stablehlo(APPROX_TOP_K.replace("KK", "2").replace("DIM", "2"))
    with pytest.raises(Unsupported, match=r"reduction dimension must be in \[top_k, 6\] = \[2, 6\]; got 1"):
        from_stablehlo(APPROX_TOP_K.replace("KK", "1").replace("DIM", "1"))


def test_memory_placement_annotation_and_dce_sink():
    """JAX's annotate_device_placement custom call (jax.memory, compute_on: memories_test): the
    value as it is on xlair's one memory; its dce_sink (no results, checkify): nothing."""
    text = """func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.custom_call @annotate_device_placement(%a) {has_side_effect = true,
        mhlo.frontend_attributes = {_xla_buffer_placement = "device"}} : (tensor<3xf32>) -> tensor<3xf32>
      %1 = stablehlo.multiply %0, %0 : tensor<3xf32>
      return %1 : tensor<3xf32> }"""
    np.testing.assert_array_equal(run(text, np.array([1, 2, 3], np.float32)), [1, 4, 9])
    sink = """func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.add %a, %a : tensor<3xf32>
      stablehlo.custom_call @dce_sink(%0) {has_side_effect = true} : (tensor<3xf32>) -> ()
      return %a : tensor<3xf32> }"""          # (lax.dce_sink(y, prevent_mlir_dce=True): no results)
    np.testing.assert_array_equal(run(sink, np.array([1, 2, 3], np.float32)), [1, 2, 3])


def test_lapack_call_without_num_batch_dims_takes_its_layout():
    """JAX's shape-polymorphic lowering of jnp.linalg.eigh (shape_poly_test's eigh harnesses)
    gives the LAPACK call no num_batch_dims frontend attribute; its operand's layout (each
    matrix column-major, the leading dims batch) says them.  Against numpy."""
    text = """func.func @main(%a: tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2xi32>) {
      %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8},
        operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>],
        output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>],
        result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]}
        : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2xi32>)
      return %0#0, %0#1 : tensor<2x3x3xf32>, tensor<2xi32> }"""
    rng = np.random.default_rng(2)
    m = rng.standard_normal((2, 3, 3)).astype(np.float32)
    spd = m @ np.swapaxes(m, 1, 2) + 3 * np.eye(3, dtype=np.float32)
    factor, info = run(text, spd)
    np.testing.assert_allclose(np.tril(factor), np.linalg.cholesky(spd), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(info, [0, 0])


def test_chlo_ops_are_decomposed_first():
    text = """func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
      %0 = chlo.erf %a : tensor<3xf32> -> tensor<3xf32>
      return %0 : tensor<3xf32> }"""
    assert "chlo" not in body(text)
    got = run(text, np.array([0.0, 0.5, -2.0], np.float32))
    np.testing.assert_allclose(got, [0.0, 0.5204999, -0.9953223], rtol=1e-5)


def test_dynamic_ops_with_constant_shapes_become_static_ops():
    text = """func.func @main(%a: tensor<1x6xi32>) -> (tensor<6xi32>, tensor<2x3xi32>) {
      %s = stablehlo.constant dense<[6]> : tensor<1xi64>
      %0 = stablehlo.dynamic_reshape %a, %s : (tensor<1x6xi32>, tensor<1xi64>) -> tensor<6xi32>
      %t = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
      %1 = stablehlo.dynamic_iota %t, dim = 1 : (tensor<2xi64>) -> tensor<2x3xi32>
      return %0, %1 : tensor<6xi32>, tensor<2x3xi32> }"""
    r, i = run(text, np.arange(6, dtype=np.int32).reshape(1, 6))
    np.testing.assert_array_equal(r, np.arange(6))
    np.testing.assert_array_equal(i, [[0, 1, 2], [0, 1, 2]])


# ----------------------------------------------------------------------------------------
# errors
# ----------------------------------------------------------------------------------------
def test_ops_without_counterpart_are_unsupported_by_name():
    text = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
      %0 = "stablehlo.collective_reduce"(%a) ({
        ^bb0(%x: tensor<f32>, %y: tensor<f32>):
          %z = stablehlo.add %x, %y : tensor<f32>
          stablehlo.return %z : tensor<f32>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32> }"""
    with pytest.raises(Unsupported, match=r"'stablehlo.collective_reduce'") as e:
        from_stablehlo(text)
    assert e.value.op == "stablehlo.collective_reduce"
    assert "at stablehlo:2" in str(e.value)


def test_shape_rule_errors_name_the_stablehlo_op_and_the_xla_rule():
    # StableHLO's clamp takes complex operands; xla.clamp (ordered types) does not
    text = """func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
      %0 = stablehlo.clamp %a, %a, %a : tensor<2xcomplex<f32>>
      return %0 : tensor<2xcomplex<f32>> }"""
    with pytest.raises(xla.XlaError, match=r"'stablehlo.clamp': 'xla.clamp' operand must have an ordered "
                                           r"\(non-complex\) element type; got c64\[2\] \[spec:Clamp\] "
                                           r"\(at stablehlo:2\)"):
        from_stablehlo(text)
    bad_shape = """func.func @main() -> tensor<3xi32> {
      %s = stablehlo.constant dense<[4]> : tensor<1xi64>
      %0 = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<3xi32>
      return %0 : tensor<3xi32> }"""
    with pytest.raises(xla.XlaError, match=r"cannot parse the StableHLO module: output shape \[4\] is "
                                           r"incompatible"):        # StableHLO's own verifier
        from_stablehlo(bad_shape)


@pytest.mark.parametrize("src,dst,why", [
    ("tensor<2xcomplex<f32>>", "tensor<2xcomplex<f32>>", None),
    ("tensor<8xi1>", "tensor<i8>", "stores PRED in a byte"),
    ("tensor<complex<f64>>", "tensor<2xcomplex<f32>>", "same width"),
])
def test_what_stablehlo_allows_and_xla_does_not_is_unsupported(src, dst, why):
    text = f"""func.func @main(%a: {src}) -> {dst} {{
      %0 = stablehlo.bitcast_convert %a : ({src}) -> {dst}
      return %0 : {dst} }}"""
    if why is None:
        from_stablehlo(text)
    else:
        with pytest.raises(Unsupported, match=why):
            from_stablehlo(text)
    cbrt = """func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
      %0 = stablehlo.cbrt %a : tensor<2xcomplex<f32>>
      return %0 : tensor<2xcomplex<f32>> }"""
    with pytest.raises(Unsupported, match="XLA's Cbrt takes floating-point types only"):
        from_stablehlo(cbrt)


def test_scalar_computations_cannot_capture_values():
    text = """func.func @main(%v: tensor<4xf32>, %s: tensor<f32>) -> tensor<f32> {
      %c = stablehlo.constant dense<0.0> : tensor<f32>
      %0 = stablehlo.reduce(%v init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
        reducer(%a: tensor<f32>, %b: tensor<f32>) {
          %m = stablehlo.add %a, %s : tensor<f32>
          stablehlo.return %m : tensor<f32>
        }
      return %0 : tensor<f32> }"""
    with pytest.raises(Unsupported, match="capture"):
        from_stablehlo(text)


def test_entry_selection():
    two = """func.func @f(%a: tensor<f32>) -> tensor<f32> { return %a : tensor<f32> }
             func.func @g(%a: tensor<f32>) -> tensor<f32> { %0 = stablehlo.negate %a : tensor<f32>
               return %0 : tensor<f32> }"""
    with pytest.raises(xla.XlaError, match="entry="):
        from_stablehlo(two)
    assert run(two, np.float32(2), entry="g") == -2
    with pytest.raises(xla.XlaError, match="no function @h"):
        from_stablehlo(two, entry="h")
    one = "func.func private @p(%a: tensor<f32>) -> tensor<f32> { return %a : tensor<f32> }\n" + \
          "func.func @only(%a: tensor<f32>) -> tensor<f32> { %0 = func.call @p(%a) : (tensor<f32>) -> tensor<f32>\n" + \
          " return %0 : tensor<f32> }"
    assert from_stablehlo(one).name == "only"


def test_bad_text_and_recursion():
    with pytest.raises(xla.XlaError, match="cannot parse"):
        from_stablehlo("func.func @main( {")
    with pytest.raises(xla.XlaError, match="takes the module's text"):
        from_stablehlo(b"func.func")
    rec = """func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = func.call @main(%a) : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32> }"""
    with pytest.raises(Unsupported, match="recurse"):
        from_stablehlo(rec)


# ----------------------------------------------------------------------------------------
# JAX (an optional extra)
# ----------------------------------------------------------------------------------------
def test_xlair_does_not_import_jax():
    import subprocess
    import sys
    code = "import sys, xlair; assert 'jax' not in sys.modules, 'jax imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_from_jax_and_jit_agree_with_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def f(x, params):
        h = jnp.tanh(x @ params["w"] + params["b"])
        return {"out": jnp.sort(h, axis=-1), "norm": jnp.sqrt(jnp.sum(h * h))}

    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    params = {"w": rng.standard_normal((4, 5)).astype(np.float32), "b": np.zeros(5, np.float32)}
    comp = xla.from_jax(f, x, params)
    assert [str(s) for s in comp.parameter_shapes] == ["f32[3,4]", "f32[5]", "f32[4,5]"]   # pytree leaf order
    jf = xla.jit(f)
    got = jf(x, params)
    want = jax.jit(f)(x, params)
    assert set(got) == {"out", "norm"} and isinstance(got["out"], np.ndarray)
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["norm"], want["norm"], rtol=1e-5)
    # one compile per signature; float64 arguments become float32 as in JAX (no x64)
    got2 = jf(x.astype(np.float64), params)
    np.testing.assert_allclose(got2["norm"], want["norm"], rtol=1e-5)
    assert len(jf._cache) == 2
    jf(x, params)
    assert len(jf._cache) == 2


def test_jit_calls_of_the_last_structure_check_every_leaf():
    """A call with the last call's pytree structure goes straight to the executable's call path
    (no signature key), which checks each leaf's type, dtype and dims: other dtypes, layouts
    and shapes still get their own conversion or compile, and the results are jax.jit's."""
    jax = pytest.importorskip("jax")

    def f(x, y):
        return {"s": x * 2 + y["a"], "n": (x * x).sum()}
    jf, ref = xla.jit(f), jax.jit(f)
    x, a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5, np.full(3, 0.5, np.float32)
    for xs in (x, x.astype(np.float64), x.astype(np.int32), np.asfortranarray(x), x[:, ::-1], x,
               xla.device_put(x), x[:1], x):
        got = jf(xs, {"a": a})
        want = ref(np.asarray(xs), {"a": a})
        for k in ("s", "n"):
            np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-6)
            assert np.asarray(got[k]).dtype == np.asarray(want[k]).dtype
        assert isinstance(got["s"], xla.Array) == isinstance(xs, xla.Array)
    assert len(jf._cache) == 4          # f32[2,3], f64[2,3] (run as f32), s32[2,3], f32[1,3]


def test_jit_key_results_are_jax_keys_made_without_a_dispatch():
    """A typed PRNG key result of xlair.jit is the key jax.jit returns (its data, its dtype,
    usable by jax.random), for the threefry and rbg implementations, device-resident or not;
    it is made from its data by JAX's key class on a JAX array of the default device, not by
    the fallback through jax.random.wrap_key_data."""
    jax = pytest.importorskip("jax")
    from xlair.jax_bridge import _key_maker

    def step(key, x):
        key, sub = jax.random.split(key)
        return key, x + jax.random.normal(sub, x.shape)
    x = np.zeros(4, np.float32)
    for impl in ("threefry2x32", "rbg"):
        key = jax.random.key(3, impl=impl)
        make = _key_maker(key.dtype)
        assert make.__name__ == "key"            # the quick maker, not `wrap`
        made = make(np.asarray(jax.random.key_data(key)))
        assert made.dtype == key.dtype and made.devices() == {jax.devices()[0]}
        np.testing.assert_array_equal(jax.random.key_data(made), jax.random.key_data(key))
        for args in ((key, x), xla.device_put((key, x))):
            got, want = xla.jit(step)(*args), jax.jit(step)(key, x)
            assert got[0].dtype == want[0].dtype
            np.testing.assert_array_equal(jax.random.key_data(got[0]), jax.random.key_data(want[0]))
            np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-6)
            np.testing.assert_array_equal(jax.random.key_data(jax.random.split(got[0])[1]),
                                          jax.random.key_data(jax.random.split(want[0])[1]))


def test_jit_static_arguments_and_errors():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    scale = xla.jit(lambda x, k: x * k, static_argnums=1)
    np.testing.assert_array_equal(scale(np.arange(3, dtype=np.int32), 3), [0, 3, 6])
    np.testing.assert_array_equal(scale(np.arange(3, dtype=np.int32), 2), [0, 2, 4])
    with pytest.raises(xla.XlaError, match="JAX could not lower"):
        xla.from_jax(lambda x: x @ x, np.ones((2, 3), np.float32))
    with pytest.raises(xla.XlaError, match="returns no array"):
        xla.jit(lambda x: None)(np.ones(2, np.float32))
    # LAPACK through a typed-FFI custom call: a built-in target (xlair.lapack) with its attributes
    t = str(xla.from_jax(jnp.linalg.svd, np.eye(3, dtype=np.float32)))
    assert 'target_name = "lapack_sgesdd_ffi"' in t and '\\22mode\\22: 65' in t


# ----------------------------------------------------------------------------------------
# tokens, side effects, replicas and collectives
# ----------------------------------------------------------------------------------------
ADD_REGION = """({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %z = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %z : tensor<f32>
    })"""


def test_all_reduce_runs_as_replicas():
    text = f"""func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<ui32>, tensor<ui32>) {{
      %0 = "stablehlo.all_reduce"(%a) {ADD_REGION} {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, use_global_device_ids}}
          : (tensor<4xf32>) -> tensor<4xf32>
      %1 = stablehlo.replica_id : tensor<ui32>
      %2 = stablehlo.partition_id : tensor<ui32>
      return %0, %1, %2 : tensor<4xf32>, tensor<ui32>, tensor<ui32> }}"""
    t = body(text)
    assert '"xla.all_reduce"' in t and "channel_id = 1" in t and '"xla.replica_id"' in t
    exe = xla.compile(from_stablehlo(text), replicas=2)
    a0, a1 = np.array([1, 2, 3, 4], np.float32), np.array([10, 20, 30, 40], np.float32)
    outs = exe.run_replicated([[a0], [a1]])
    for r, (total, rid, pid) in enumerate(outs):
        np.testing.assert_array_equal(total, [11, 22, 33, 44])
        assert rid == r and rid.dtype == np.uint32
        assert pid == 0 and pid.dtype == np.uint32          # one partition per replica


def test_gather_scatter_broadcast_and_permute_across_replicas():
    text = f"""func.func @main(%a: tensor<4xi32>, %b: tensor<2xf32>) -> (tensor<8xi32>, tensor<4xi32>, tensor<2xf32>,
                                                              tensor<4xi32>, tensor<2xf32>) {{
      %0 = "stablehlo.all_gather"(%a) {{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}}
          : (tensor<4xi32>) -> tensor<8xi32>
      %1 = "stablehlo.all_to_all"(%a) {{split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
          replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : (tensor<4xi32>) -> tensor<4xi32>
      %2 = "stablehlo.reduce_scatter"(%b) {ADD_REGION} {{scatter_dimension = 0 : i64,
          replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>}} : (tensor<2xf32>) -> tensor<1xf32>
      %3 = "stablehlo.collective_permute"(%a) {{source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}}
          : (tensor<4xi32>) -> tensor<4xi32>
      %4 = "stablehlo.collective_broadcast"(%b) {{replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>}}
          : (tensor<2xf32>) -> tensor<2xf32>
      return %0, %1, %2, %3, %4 : tensor<8xi32>, tensor<4xi32>, tensor<1xf32>, tensor<4xi32>, tensor<2xf32> }}"""
    text = text.replace("-> (tensor<8xi32>, tensor<4xi32>, tensor<2xf32>,", "-> (tensor<8xi32>, tensor<4xi32>, tensor<1xf32>,")
    t = body(text)
    for op in ("all_gather", "all_to_all", "all_reduce", "dynamic_slice", "collective_permute"):
        assert f'"xla.{op}"' in t, op
    a = [np.array([1, 2, 3, 4], np.int32), np.array([5, 6, 7, 8], np.int32)]
    b = [np.array([1, 2], np.float32), np.array([10, 20], np.float32)]
    outs = xla.compile(from_stablehlo(text), replicas=2).run_replicated([[a[0], b[0]], [a[1], b[1]]])
    sums = b[0] + b[1]
    for r, (gathered, swapped, scattered, permuted, bcast) in enumerate(outs):
        np.testing.assert_array_equal(gathered, np.concatenate(a))
        np.testing.assert_array_equal(swapped, np.concatenate([a[0][2 * r:2 * r + 2], a[1][2 * r:2 * r + 2]]))
        # group [1, 0]: replica 1 is member 0 (block 0), replica 0 member 1 (block 1)
        np.testing.assert_array_equal(scattered, sums[[1 - r]])
        np.testing.assert_array_equal(permuted, a[0] if r == 1 else np.zeros(4, np.int32))
        np.testing.assert_array_equal(bcast, b[1])          # the group's first member is replica 1


def test_collective_broadcast_leaves_replicas_out_of_groups_with_zeros_and_takes_dynamic_roots():
    text = """module attributes {mhlo.num_replicas = 3 : i32} {
    func.func @main(%a: tensor<2xi64>, %root: tensor<1xi32>) -> (tensor<2xi64>, tensor<2xi64>) {
      %0 = "stablehlo.collective_broadcast"(%a) {replica_groups = dense<[[2, 1]]> : tensor<1x2xi64>}
          : (tensor<2xi64>) -> tensor<2xi64>
      %1 = "stablehlo.collective_broadcast"(%a, %root) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>,
          has_dynamic_root} : (tensor<2xi64>, tensor<1xi32>) -> tensor<2xi64>
      return %0, %1 : tensor<2xi64>, tensor<2xi64> } }"""
    a = [np.array([r, 10 * r], np.int64) for r in range(3)]
    root = np.array([1], np.int32)
    outs = xla.compile(from_stablehlo(text), replicas=3).run_replicated([[x, root] for x in a])
    for r, (bcast, rooted) in enumerate(outs):
        np.testing.assert_array_equal(bcast, a[2] if r in (1, 2) else [0, 0])
        np.testing.assert_array_equal(rooted, a[1])


def test_cross_partition_collectives_and_partitions_are_unsupported():
    text = """func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {
      %0 = "stablehlo.all_to_all"(%a) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
          replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>}
          : (tensor<4xi32>) -> tensor<4xi32>
      return %0 : tensor<4xi32> }"""
    with pytest.raises(Unsupported, match="across partitions"):
        from_stablehlo(text)
    text = """module attributes {mhlo.num_partitions = 2 : i32} {
      func.func @main() -> tensor<ui32> {
      %0 = stablehlo.partition_id : tensor<ui32>
      return %0 : tensor<ui32> } }"""
    with pytest.raises(Unsupported, match="num_partitions = 2"):
        from_stablehlo(text)


def test_tokens_infeed_outfeed_after_all():
    text = """func.func @main(%t: !stablehlo.token, %a: tensor<2xf32>) -> (tensor<2xf32>, tensor<3xi32>, !stablehlo.token) {
      %t1 = stablehlo.create_token : !stablehlo.token
      %j = stablehlo.after_all %t, %t1 : !stablehlo.token
      %d:3 = "stablehlo.infeed"(%j) {infeed_config = ""} : (!stablehlo.token) -> (tensor<2xf32>, tensor<3xi32>, !stablehlo.token)
      %s = stablehlo.add %d#0, %a : tensor<2xf32>
      %o = "stablehlo.outfeed"(%s, %d#1, %d#2) {outfeed_config = "cfg"} : (tensor<2xf32>, tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
      return %s, %d#1, %o : tensor<2xf32>, tensor<3xi32>, !stablehlo.token }"""
    comp = from_stablehlo(text)
    assert [str(s) for s in comp.parameter_shapes] == ["token[]", "f32[2]"]
    t = str(comp)
    assert t.count('"xla.after_all"') == 2 and '"xla.infeed"' in t and 'outfeed_config = "cfg"' in t
    exe = xla.compile(comp)
    item = (np.array([1, 2], np.float32), np.array([7, 8, 9], np.int32))
    exe.infeed.put(item)
    s, ints, tok = exe(np.array(False), np.array([10, 20], np.float32))
    np.testing.assert_array_equal(s, [11, 22])
    np.testing.assert_array_equal(ints, [7, 8, 9])
    out = exe.outfeed.get(timeout=5)
    np.testing.assert_array_equal(out[0], [11, 22])
    np.testing.assert_array_equal(out[1], [7, 8, 9])


def test_send_and_recv_meet_on_their_channel():
    text = """func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {
      %t = stablehlo.after_all : !stablehlo.token
      %s = "stablehlo.send"(%a, %t) {channel_handle = #stablehlo.channel_handle<handle = 41, type = 1>}
          : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
      %r:2 = "stablehlo.recv"(%s) {channel_handle = #stablehlo.channel_handle<handle = 41, type = 1>}
          : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
      %m = stablehlo.multiply %r#0, %r#0 : tensor<2xi32>
      return %m : tensor<2xi32> }"""
    t = body(text)
    assert '"xla.send"' in t and '"xla.recv"' in t and "channel_handle = 41" in t
    np.testing.assert_array_equal(xla.compile(from_stablehlo(text))(np.array([3, -4], np.int32)), [9, 16])
    two = text.replace('"stablehlo.send"(%a, %t)', '"stablehlo.send"(%a, %a, %t)').replace(
        "(tensor<2xi32>, !stablehlo.token) -> !stablehlo.token", "(tensor<2xi32>, tensor<2xi32>, !stablehlo.token) -> !stablehlo.token")
    with pytest.raises(Unsupported, match="sends 2 values"):
        from_stablehlo(two)


def test_custom_call_to_a_registered_python_target():
    xla.register_custom_call("xlair_test_shlo_affine", lambda x, y: (2 * x + y, np.sum(x).astype(np.float32)))
    try:
        text = """func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>) {
          %0:2 = stablehlo.custom_call @xlair_test_shlo_affine(%a, %b) {backend_config = "ignored", has_side_effect = false,
              api_version = 1 : i32, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>],
              result_layouts = [dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]}
              : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>)
          return %0#0, %0#1 : tensor<3xf32>, tensor<f32> }"""
        t = body(text)
        assert '"xla.custom_call"' in t and 'target_name = "xlair_test_shlo_affine"' in t
        a, b = np.array([1, 2, 3], np.float32), np.array([10, 20, 30], np.float32)
        y, total = xla.compile(from_stablehlo(text))(a, b)
        np.testing.assert_array_equal(y, [12, 24, 36])
        assert total == 6
    finally:
        xla.unregister_custom_call("xlair_test_shlo_affine")


@pytest.mark.parametrize("attrs,why", [
    ("api_version = 4 : i32", "api_version 4 \\(API_VERSION_TYPED_FFI\\)"),
    ("api_version = 2 : i32", "api_version 2"),
    ("operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]",
     "operand_layouts\\[0\\] = \\[0, 1\\]"),
    ("output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, "
     "operand_tuple_indices = []>]", "output_operand_aliases"),
])
def test_custom_calls_xlair_cannot_call_are_unsupported(attrs, why):
    text = f"""func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {{
      %0 = stablehlo.custom_call @foo(%a) {{{attrs}}} : (tensor<2x2xf32>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32> }}"""
    with pytest.raises(Unsupported, match=why) as e:
        from_stablehlo(text)
    assert e.value.op == "stablehlo.custom_call"


def test_shardy_annotations_are_dropped():
    """JAX writes Shardy's `sdy` dialect (not registered in xlair's context) for a typed PRNG
    key argument and for sharded arguments: the mesh declaration goes, a sharding constraint
    is the identity, a sharding attribute of an argument or result is dropped."""
    text = """module @jit_f {
  sdy.mesh @empty_mesh = <[]> {stablehlo.mesh = {axes = []}}
  sdy.mesh @mesh = <["x"=1]>
  func.func public @main(%arg0: tensor<2xui32>, %arg1: tensor<3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<2xui32> {jax.result_info = "k", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<3xf32>) {
    %0 = sdy.sharding_constraint %arg0 <@empty_mesh, [{}]> : tensor<2xui32>
    %1 = stablehlo.add %arg1, %arg1 : tensor<3xf32>
    return %0, %1 : tensor<2xui32>, tensor<3xf32>
  }
}"""
    k, x = np.array([7, 9], np.uint32), np.array([1, 2, 3], np.float32)
    got = run(text, k, x)
    np.testing.assert_array_equal(got[0], k)
    np.testing.assert_array_equal(got[1], 2 * x)
    assert "sdy" not in body(text)


def test_jit_finds_its_artifact_by_the_stablehlo_text(monkeypatch, tmp_path):
    """A new `xlair.jit` of a function compiled before (a new process, a notebook cell run
    again) finds the artifact by the hash of JAX's StableHLO text without importing it; other
    compile options are another artifact."""
    import jax.numpy as jnp
    from xlair import jax_bridge
    monkeypatch.setenv("XLAIR_CACHE_DIR", str(tmp_path))
    x = np.arange(4, dtype=np.float32)

    def f(x):
        return jnp.sin(x) * 2
    np.testing.assert_allclose(xla.jit(f)(x), np.sin(x) * 2, rtol=1e-6)

    def no_import(*args, **kwargs):
        raise AssertionError("imported again")
    monkeypatch.setattr(jax_bridge, "from_stablehlo", no_import)
    np.testing.assert_allclose(xla.jit(f)(x), np.sin(x) * 2, rtol=1e-6)
    with pytest.raises(AssertionError, match="imported again"):
        xla.jit(f, flags=["--iree-opt-level=O2"])(x)
