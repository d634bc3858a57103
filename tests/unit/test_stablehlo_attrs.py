"""The StableHLO importer's reading of types and printed attributes
(python/xlair/stablehlo/attrs.py), on its own: hand-written attribute, type and constant texts
against values worked out by hand, without importing a program."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from xlair.dialect.attrs import ConvolutionDimensionNumbers
from xlair.dialect.checks import XlaError
from xlair.dialect.ir import context, ir, lock
from xlair.dialect.types import C64, C128, F32, S32, U8, Shape
from xlair.stablehlo import attrs
from xlair.stablehlo.attrs import Unsupported


@pytest.fixture(autouse=True)
def mlir():
    """Every test parses in xlair's MLIR context (stablehlo dialect loaded)."""
    with lock, context():
        yield


def A(text: str) -> ir.Attribute:
    return ir.Attribute.parse(text)


def T(text: str) -> ir.Type:
    return ir.Type.parse(text)


def fake_op(**attributes):
    """An op as the attribute readers see it: only `.attributes` (name -> ir.Attribute)."""
    return SimpleNamespace(attributes={k: A(v) for k, v in attributes.items()})


# ----------------------------------------------------------------------------------------
# types
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, want", [
    ("tensor<2x3xf32>", Shape(F32, (2, 3))),
    ("tensor<i32>", Shape(S32, ())),
    ("tensor<4xui8>", Shape(U8, (4,))),                       # ui8 is unsigned, i32 signed
    ("!stablehlo.token", Shape.token()),
    ("tuple<tensor<i32>, tuple<tensor<2x3xf32>>, !stablehlo.token>",
     Shape.tuple([Shape(S32, ()), Shape.tuple([Shape(F32, (2, 3))]), Shape.token()])),
])
def test_shape_of(text, want):
    assert attrs.shape_of(T(text)) == want


@pytest.mark.parametrize("text, words", [
    ("tensor<?x2xf32>", "dynamic shape"),
    ("tensor<*xf32>", "unranked type"),
    ("tensor<2xi4>", "not an XLA element type"),
    ("i32", "not a tensor, tuple or token"),
])
def test_shape_of_rejects(text, words):
    with pytest.raises(Unsupported, match=words) as e:
        attrs.shape_of(T(text), "operand 1")
    assert "operand 1" in str(e.value)


def test_result_shape_reads_the_result_type_of_that_index():
    op = SimpleNamespace(results=[SimpleNamespace(type=T("tensor<2xf32>")),
                                  SimpleNamespace(type=T("tensor<3x1xi32>"))])
    assert attrs._result_shape(op) == Shape(F32, (2,))
    assert attrs._result_shape(op, 1) == Shape(S32, (3, 1))


# ----------------------------------------------------------------------------------------
# integers, booleans, enums: each reader against a table of texts
# ----------------------------------------------------------------------------------------
def same(got, want) -> bool:
    """Equal, and of the same Python types all the way down (ints are ints, not numpy's)."""
    if type(got) is not type(want):
        return False
    if isinstance(want, (tuple, list)):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    return got == want


@pytest.mark.parametrize("read, text, want", [
    (attrs._ints, "array<i64: 1, 2, 3>", (1, 2, 3)),
    (attrs._ints, "array<i64>", ()),
    (attrs._ints, "array<i32: -4, 7>", (-4, 7)),
    (attrs._ints, "[1 : i64, -2 : i64]", (1, -2)),
    (attrs._ints, "dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>", (1, 2, 3, 4)),     # flattened, row-major
    (attrs._ints, "dense<5> : tensor<3xi32>", (5, 5, 5)),                          # a splat, expanded
    (attrs._int_matrix, "dense<[[1, 2], [0, -3]]> : tensor<2x2xi64>", [(1, 2), (0, -3)]),   # rows of pairs
    (attrs._int_matrix, "dense<0> : tensor<3x2xi64>", [(0, 0)] * 3),
    (attrs._bools, "array<i1: true, false>", (True, False)),
    (attrs._bools, "dense<[false, true, true]> : tensor<3xi1>", (False, True, True)),
    (attrs._enum, "#stablehlo<comparison_direction GE>", "GE"),
    (attrs._enum, "#stablehlo<comparison_type TOTALORDER>", "TOTALORDER"),
    (attrs._enum, "#stablehlo<precision HIGHEST>", "HIGHEST"),
    (attrs._enum, "#stablehlo<fft_type IRFFT>", "IRFFT"),
    (attrs._enum, "#stablehlo<transpose ADJOINT>", "ADJOINT"),
], ids=lambda x: x.__name__ if callable(x) else None)
def test_read(read, text, want):
    got = read(A(text))
    assert same(got, want), got


# ----------------------------------------------------------------------------------------
# the printed text of enums and of #stablehlo.<kind><...> structs
# ----------------------------------------------------------------------------------------
def test_enum_of_printed_text_with_spaces():
    assert attrs._enum("#stablehlo< rng_distribution  NORMAL >") == "NORMAL"


def test_enum_rejects_other_attributes():
    with pytest.raises(XlaError, match="expected a StableHLO enum attribute; got 3 : i64"):
        attrs._enum(A("3 : i64"))


def test_struct_gather():
    a = A("#stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], "
          "index_vector_dim = 1>")
    assert attrs._struct(a, "gather") == {"offset_dims": (1, 2), "collapsed_slice_dims": (0,),
                                          "start_index_map": (0,), "index_vector_dim": 1}


def test_struct_dot():
    a = A("#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
          "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>")
    assert attrs._struct(a, "dot") == {"lhs_batching_dimensions": (0,), "rhs_batching_dimensions": (0,),
                                       "lhs_contracting_dimensions": (2,), "rhs_contracting_dimensions": (1,)}


def test_struct_leaves_out_what_the_printer_leaves_out():
    # the printer drops empty lists (update_window_dims = [] here): the converters' defaults apply
    a = A("#stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], "
          "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>")
    assert attrs._struct(a, "scatter") == {"inserted_window_dims": (0,), "scatter_dims_to_operand_dims": (0,),
                                           "index_vector_dim": 1}


def test_struct_values_ints_lists_and_bools():
    text = "#stablehlo.thing<a = true, b = false, c = -3, d = [-1, 20], e = []>"
    assert attrs._struct(text, "thing") == {"a": True, "b": False, "c": -3, "d": (-1, 20), "e": ()}


def test_struct_of_another_kind_is_an_error():
    with pytest.raises(XlaError, match="expected a #stablehlo.gather attribute"):
        attrs._struct(A("#stablehlo.channel_handle<handle = 5, type = 1>"), "gather")


# ----------------------------------------------------------------------------------------
# convolution dimension numbers
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, want", [
    # NHWC x HWIO -> NHWC
    ("#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>",
     ConvolutionDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))),
    # NCHW x OIHW -> NCHW
    ("#stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>",
     ConvolutionDimensionNumbers(0, 1, (2, 3), 1, 0, (2, 3), 0, 1, (2, 3))),
    # spatial dimensions are ordered by their number, not by where they stand
    ("#stablehlo.conv<[b, 1, 0, f]x[o, 0, 1, i]->[f, 0, b, 1]>",
     ConvolutionDimensionNumbers(0, 3, (2, 1), 3, 0, (1, 2), 2, 0, (1, 3))),
    # 1-D
    ("#stablehlo.conv<[b, f, 0]x[0, i, o]->[b, 0, f]>",
     ConvolutionDimensionNumbers(0, 1, (2,), 1, 2, (0,), 0, 2, (1,))),
])
def test_conv_numbers_compact_form(text, want):
    assert attrs._conv_numbers(A(text)) == want


def test_conv_numbers_keyed_form():
    text = ("#stablehlo.conv<raw input_batch_dimension = 1, input_feature_dimension = 0, "
            "input_spatial_dimensions = [2], kernel_input_feature_dimension = 0, "
            "kernel_output_feature_dimension = 2, kernel_spatial_dimensions = [1], "
            "output_batch_dimension = 2, output_feature_dimension = 1, output_spatial_dimensions = [0]>")
    assert attrs._conv_numbers(text) == ConvolutionDimensionNumbers(1, 0, (2,), 0, 2, (1,), 2, 1, (0,))


# ----------------------------------------------------------------------------------------
# attributes of an op
# ----------------------------------------------------------------------------------------
def test_attr_bool_str_defaults():
    op = fake_op(lower="true", left_side="false", outfeed_config='"cfg"')
    assert attrs._attr(op, "missing") is None and attrs._attr(op, "missing", 7) == 7
    assert str(attrs._attr(op, "outfeed_config")) == '"cfg"'
    assert attrs._bool(op, "lower", False) is True
    assert attrs._bool(op, "left_side", True) is False
    assert attrs._bool(op, "unit_diagonal", True) is True
    assert attrs._str(op, "outfeed_config") == "cfg"
    assert attrs._str(op, "call_target_name") == "" and attrs._str(op, "x", "d") == "d"


def test_channel_handle():
    assert attrs._channel_handle(fake_op(channel_handle="#stablehlo.channel_handle<handle = 5, type = 1>")) == 5
    assert attrs._channel_handle(fake_op()) is None


def test_groups_drop_the_padding():
    op = fake_op(replica_groups="dense<[[0, 2, 3], [1, -1, -1]]> : tensor<2x3xi64>",
                 source_target_pairs="dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>")
    assert attrs._groups(op) == ((0, 2, 3), (1,))
    assert attrs._groups(op, "source_target_pairs") == ((0, 1), (1, 0))


def test_groups_empty_or_absent():
    assert attrs._groups(fake_op(replica_groups="dense<> : tensor<0x0xi64>")) == ()
    assert attrs._groups(fake_op()) == ()


# ----------------------------------------------------------------------------------------
# constants
# ----------------------------------------------------------------------------------------
def printed(value: str, t: str):
    """An op whose generic form prints `value = <value> : <t>`, as `_complex_literal` reads it."""
    text = f'%0 = "stablehlo.constant"() <{{value = {value} : {t}}}> : () -> {t}'
    return SimpleNamespace(get_asm=lambda print_generic_op_form: text)


@pytest.mark.parametrize("value, t, dims, want", [
    ("dense<[(1.000000e+00,2.000000e+00), (-3.000000e+00,5.000000e-01)]>", "tensor<2xcomplex<f32>>", (2,),
     [1 + 2j, -3 + 0.5j]),
    ("dense<[[(1.0,0.0), (0.0,1.0)], [(2.0,-2.0), (-0.0,4.0)]]>", "tensor<2x2xcomplex<f32>>", (2, 2),
     [[1, 1j], [2 - 2j, 4j]]),
    ("dense<(1.5,-2.0)>", "tensor<2x3xcomplex<f32>>", (2, 3), [[1.5 - 2j] * 3] * 2),       # a splat
    # hex: little-endian f32 pairs 1.0 = 0000803F, 2.0 = 00000040, 3.0 = 00004040, 4.0 = 00008040
    ('dense<"0x0000803F000000400000404000008040">', "tensor<2xcomplex<f32>>", (2,), [1 + 2j, 3 + 4j]),
    ('dense<"0x0000803F00000040">', "tensor<3xcomplex<f32>>", (3,), [1 + 2j] * 3),         # a hex splat
    ("dense<>", "tensor<0xcomplex<f32>>", (0,), []),
])
def test_complex_literal(value, t, dims, want):
    shape = Shape(C64, dims)
    got = attrs._complex_literal(printed(value, t), shape)
    assert got.dtype == np.complex64 and got.shape == dims
    np.testing.assert_array_equal(got, np.array(want, np.complex64).reshape(dims))


def test_complex_literal_f64_keeps_the_bits():
    # 0x7FF0000000000001 is a signalling NaN; 0x8000000000000000 is -0.0
    got = attrs._complex_literal(printed("dense<(0x7FF0000000000001,0x8000000000000000)>",
                                         "tensor<complex<f64>>"), Shape(C128, ()))
    assert got.shape == () and np.isnan(got.real) and got.imag == 0 and np.signbit(got.imag)


def constant_op(value: str, t: str):
    """(module, its stablehlo.constant op): the module keeps the op alive."""
    m = ir.Module.parse(f"func.func @main() -> {t} {{\n %0 = stablehlo.constant {value} : {t}\n"
                        f" return %0 : {t} }}")
    op = m.body.operations[0].regions[0].blocks[0].operations[0].operation
    return m, op


@pytest.mark.parametrize("value, t, want", [
    ("dense<[1, -2, 3]>", "tensor<3xi32>", np.array([1, -2, 3], np.int32)),
    ("dense<true>", "tensor<i1>", np.array(True)),
    ("dense<[[0.5], [2.0]]>", "tensor<2x1xf32>", np.array([[0.5], [2.0]], np.float32)),
    ("dense<>", "tensor<0x3xf32>", np.zeros((0, 3), np.float32)),
    ("dense<[(1.0, 2.0), (3.0, -4.0)]>", "tensor<2xcomplex<f64>>", np.array([1 + 2j, 3 - 4j])),
])
def test_constant_value(value, t, want):
    _, op = constant_op(value, t)
    got = attrs.constant_value(op)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_constant_value_of_a_printed_hex_literal():
    # more than 100 elements print as hex: each element i is (i, i/2 - 3)
    n = 128
    want = (np.arange(n) + 1j * (np.arange(n) * 0.5 - 3)).astype(np.complex64).reshape(8, 16)
    _, op = constant_op(f'dense<"0x{want.view(np.uint8).tobytes().hex().upper()}">', "tensor<8x16xcomplex<f32>>")
    assert 'dense<"0x' in op.get_asm(print_generic_op_form=True)
    np.testing.assert_array_equal(attrs.constant_value(op), want)


# ----------------------------------------------------------------------------------------
# locations
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("loc, want", [
    (lambda: ir.Location.file("prog.mlir", 12, 3), ("prog.mlir", 12)),
    (lambda: ir.Location.file("-", 4, 1), ("stablehlo", 4)),        # stdin
    (lambda: ir.Location.file("", 9, 1), ("stablehlo", 9)),
    (lambda: ir.Location.unknown(), None),
    (lambda: ir.Location.name("x"), None),
])
def test_loc(loc, want):
    assert attrs._loc(SimpleNamespace(location=loc())) == want


def test_loc_reads_only_a_plain_file_location():
    assert attrs._loc(SimpleNamespace(location='loc(fused["a.py":3:1, "b.py":7:2])')) is None
    assert attrs._loc(SimpleNamespace(location='loc("f"("a.py":3:1))')) is None
    assert attrs._loc(SimpleNamespace(location='loc("dir/a b.py":30:8)')) == ("dir/a b.py", 30)
