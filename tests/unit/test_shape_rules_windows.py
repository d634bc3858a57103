"""The constraints of the window ops (Conv, ConvWithGeneralPadding, ConvGeneralDilated,
ReduceWindow, SelectAndScatter) and of Gather and Scatter: each bad call raises XlaError at
build time naming the op, the parameter and the rule (`'xla.<op>' <parameter> <rule>; got
<value>`), pointing at the line of this file that made the call."""
import numpy as np
import pytest

import xlair as xla
from xlair import F32, PRED, S32, Shape
from xlair import ops as O
from xlair_testing import scalar_computation, check_rule

CDN = xla.ConvolutionDimensionNumbers
GDN = xla.GatherDimensionNumbers
SDN = xla.ScatterDimensionNumbers
NHWC = CDN(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))


def _b():
    b = xla.Builder("bad")
    shapes = {
        "x": Shape(F32, (2, 4, 7, 6)), "w": Shape(F32, (6, 4, 3, 3)), "wi": Shape(S32, (6, 4, 3, 3)),
        "x3": Shape(F32, (2, 4, 9)), "xp": Shape(PRED, (2, 4, 7, 6)), "v": Shape(F32, (5,)),
        "m": Shape(F32, (6, 7)), "mi": Shape(S32, (6, 7)), "s": Shape(F32, ()), "si": Shape(S32, ()),
        "idx": Shape(S32, (3, 2)), "idxf": Shape(F32, (3, 2)), "idx1": Shape(S32, (3, 1)),
        "t": Shape.tuple([Shape(F32, (2,)), Shape(S32, ())]), "src": Shape(F32, (3, 3)),
        "upd": Shape(F32, (3, 7)), "updi": Shape(S32, (3, 7)), "o3": Shape(F32, (3, 5, 4)),
        "i3": Shape(S32, (4, 3, 1)), "w0": Shape(F32, (6, 4, 0, 3)),
    }
    return b, {k: b.parameter(i, s) for i, (k, s) in enumerate(shapes.items())}


ADD = scalar_computation("add", F32)
ADDI = scalar_computation("add", S32)
_g = xla.Builder("ge")
O.ge(_g.parameter(0, Shape(F32, ())), _g.parameter(1, Shape(F32, ())))
GE = _g.build()
_g = xla.Builder("ge_s32")
O.ge(_g.parameter(0, Shape(S32, ())), _g.parameter(1, Shape(S32, ())))
GE_S32 = _g.build()

ROWS = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
GROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1)


def conv(p, **kw):
    a = dict(lhs=p["x"], rhs=p["w"], window_strides=[1, 1], padding=[(0, 0), (0, 0)], lhs_dilation=[1, 1],
             rhs_dilation=[1, 1])
    a.update(kw)
    return O.conv_with_general_padding(**a)


def cgd(p, dn, **kw):
    a = dict(lhs=p["x"], rhs=p["w"], window_strides=[1, 1], padding="SAME", lhs_dilation=[1, 1],
             rhs_dilation=[1, 1], dimension_numbers=dn)
    a.update(kw)
    return O.conv_general_dilated(**a)


def rw(b, p, x="m", **kw):
    a = dict(operands=p[x], init_values=O.constant(b, np.float32(0)), computation=ADD, window_dimensions=[2, 2],
             window_strides=[1, 1], padding="VALID")
    a.update(kw)
    return O.reduce_window(**a)


def sas(b, p, **kw):
    a = dict(operand=p["m"], select=GE, window_dimensions=[2, 2], window_strides=[2, 2], padding="VALID",
             source=p["src"], init_value=p["s"], scatter=ADD)
    a.update(kw)
    return O.select_and_scatter(**a)


def gather(p, dn=GROWS, sizes=(1, 7), **kw):
    a = dict(operand=p["m"], start_indices=p["idx1"], dimension_numbers=dn, slice_sizes=list(sizes))
    a.update(kw)
    return O.gather(**a)


def scatter(p, dn=ROWS, **kw):
    a = dict(operands=p["m"], scatter_indices=p["idx1"], updates=p["upd"], update_computation=ADD,
             dimension_numbers=dn)
    a.update(kw)
    return O.scatter(**a)


CASES = [
    # -- convolutions ----------------------------------------------------------------------
    ("conv", lambda b, p: O.conv(p["xp"], p["xp"], [1, 1], "SAME"),
     "'xla.conv' lhs must have integer, floating-point or complex element type"),
    ("conv", lambda b, p: O.conv(p["x"], p["wi"], [1, 1], "SAME"), "'xla.conv' rhs must have the element type of lhs"),
    ("conv", lambda b, p: O.conv(p["x"], p["w"], [1, 1], "SAME", preferred_element_type=S32),
     "'xla.conv' preferred_element_type must hold the operands' values"),
    ("conv", lambda b, p: O.conv(p["x"], p["x3"], [1], "SAME"), "'xla.conv' rhs must have the rank of lhs"),
    ("conv", lambda b, p: O.conv(p["v"], p["v"], [], "SAME"), "'xla.conv' lhs must have rank n+2 >= 2"),
    ("conv", lambda b, p: O.conv(p["x"], p["w"], [1, 1], [(0, 0), (0, 0)]), "'xla.conv' padding must be a Padding"),
    ("conv", lambda b, p: O.conv(p["x"], p["w"], [1], "SAME"), "'xla.conv' window_strides must have 2 elements"),
    ("conv", lambda b, p: O.conv(p["x"], p["w"], [1, 0], "SAME"), "'xla.conv' window_strides must be positive"),
    ("conv", lambda b, p: O.conv(p["x"], p["w"], [1, 1], "SAME", feature_group_count=0),
     "'xla.conv' feature_group_count must be positive"),
    ("conv", lambda b, p: O.conv(p["x"], p["w"], [1, 1], "SAME", batch_group_count=0),
     "'xla.conv' batch_group_count must be positive"),
    ("conv", lambda b, p: O.conv(p["x"], p["w0"], [1, 1], "VALID"),
     "'xla.conv' rhs must have positive spatial (window) dimensions"),
    ("conv", lambda b, p: O.conv(p["x"], p["w"], [1, 1], "SAME", precision_config="FASTEST"),
     "'xla.conv' precision_config must be a precision config"),
    ("conv_with_general_padding", lambda b, p: conv(p, padding="SAME"),
     "'xla.conv_with_general_padding' padding must be a sequence of (low, high) pairs"),
    ("conv_with_general_padding", lambda b, p: conv(p, padding=[(0, 0)]),
     "'xla.conv_with_general_padding' padding must have 2 elements"),
    ("conv_with_general_padding", lambda b, p: conv(p, padding=[(0, 0), (-7, 0)]),
     "'xla.conv_with_general_padding' padding must not remove more than the (dilated) base size 6 of dimension 1"),
    ("conv_with_general_padding", lambda b, p: conv(p, lhs_dilation=[1]),
     "'xla.conv_with_general_padding' lhs_dilation must have 2 elements"),
    ("conv_with_general_padding", lambda b, p: conv(p, lhs_dilation=[0, 1]),
     "'xla.conv_with_general_padding' lhs_dilation must be positive"),
    ("conv_with_general_padding", lambda b, p: conv(p, rhs_dilation=[1, 1, 1]),
     "'xla.conv_with_general_padding' rhs_dilation must have 2 elements"),
    ("conv_with_general_padding", lambda b, p: conv(p, rhs_dilation=[1, -2]),
     "'xla.conv_with_general_padding' rhs_dilation must be positive"),
    ("conv_with_general_padding", lambda b, p: conv(p, feature_group_count=2, batch_group_count=2),
     "'xla.conv_with_general_padding' batch_group_count must be 1 when feature_group_count is 2"),
    ("conv_with_general_padding", lambda b, p: conv(p, feature_group_count=3),
     "'xla.conv_with_general_padding' feature_group_count must divide the lhs feature dimension (4)"),
    ("conv_with_general_padding", lambda b, p: conv(p, feature_group_count=2),
     "'xla.conv_with_general_padding' rhs must have input feature dimension (dimension 1) of size lhs features "
     "/ feature_group_count = 2"),
    ("conv_with_general_padding", lambda b, p: conv(p, rhs=O.slice(O.reshape(p["w"], [12, 2, 3, 3]), [0, 0, 0, 0],
                                                                  [5, 2, 3, 3]), feature_group_count=2),
     "'xla.conv_with_general_padding' feature_group_count must divide the rhs output feature dimension (5)"),
    ("conv_with_general_padding", lambda b, p: conv(p, rhs=O.slice(p["w"], [0, 0, 0, 0], [5, 4, 3, 3]),
                                                    batch_group_count=2),
     "'xla.conv_with_general_padding' batch_group_count must divide the rhs output feature dimension (5)"),
    ("conv_with_general_padding", lambda b, p: conv(p, batch_group_count=4),
     "'xla.conv_with_general_padding' batch_group_count must divide the rhs output feature dimension (6)"),
    ("conv_with_general_padding", lambda b, p: conv(p, lhs=O.slice(p["x"], [0, 0, 0, 0], [1, 4, 7, 6]),
                                                    batch_group_count=2),
     "'xla.conv_with_general_padding' batch_group_count must divide the lhs batch dimension (1)"),
    ("conv_general_dilated", lambda b, p: cgd(p, CDN(0, 1, (2,), 1, 0, (2, 3), 0, 1, (2, 3))),
     "'xla.conv_general_dilated' dimension_numbers.input_spatial_dimensions must number rank - 2 = 2"),
    ("conv_general_dilated", lambda b, p: cgd(p, CDN(0, 1, (2, 3), 1, 0, (2,), 0, 1, (2, 3))),
     "'xla.conv_general_dilated' dimension_numbers.kernel_spatial_dimensions must number 2"),
    ("conv_general_dilated", lambda b, p: cgd(p, CDN(0, 1, (2, 3), 1, 0, (2, 3), 0, 1, (2, 3, 1))),
     "'xla.conv_general_dilated' dimension_numbers.output_spatial_dimensions must number 2"),
    ("conv_general_dilated", lambda b, p: cgd(p, CDN(0, 4, (2, 3), 1, 0, (2, 3), 0, 1, (2, 3))),
     "'xla.conv_general_dilated' dimension_numbers.input_*_dimension(s) must be dimensions of lhs (rank 4)"),
    ("conv_general_dilated", lambda b, p: cgd(p, CDN(0, 2, (2, 3), 1, 0, (2, 3), 0, 1, (2, 3))),
     "'xla.conv_general_dilated' dimension_numbers.input_*_dimension(s) must be distinct dimensions of lhs"),
    ("conv_general_dilated", lambda b, p: cgd(p, CDN(0, 1, (2, 3), 1, 1, (2, 3), 0, 1, (2, 3))),
     "'xla.conv_general_dilated' dimension_numbers.kernel_*_dimension(s) must be distinct dimensions of rhs"),
    ("conv_general_dilated", lambda b, p: cgd(p, CDN(0, 1, (2, 3), 1, 0, (2, -1), 0, 1, (2, 3))),
     "'xla.conv_general_dilated' dimension_numbers.kernel_*_dimension(s) must be dimensions of rhs (rank 4)"),
    ("conv_general_dilated", lambda b, p: cgd(p, CDN(0, 1, (2, 3), 1, 0, (2, 3), 0, 3, (2, 3))),
     "'xla.conv_general_dilated' dimension_numbers.output_*_dimension(s) must be distinct dimensions of the result"),
    ("conv_general_dilated", lambda b, p: cgd(p, CDN(0, 1, (2, 3), 1, 0, (2, 3), 0, 1, (2, 7))),
     "'xla.conv_general_dilated' dimension_numbers.output_*_dimension(s) must be dimensions of the result"),
    ("conv_general_dilated", lambda b, p: cgd(p, NHWC),
     "'xla.conv_general_dilated' rhs must have input feature dimension (dimension 2) of size lhs features"),
    ("conv_general_dilated", lambda b, p: cgd(p, {"input_batch_dimension": 0, "bogus": 1}),
     "'xla.conv_general_dilated' dimension_numbers must be a ConvolutionDimensionNumbers"),
    ("conv_general_dilated", lambda b, p: cgd(p, NHWC, padding="FULL"),
     "'xla.conv_general_dilated' padding must be Padding.SAME, Padding.VALID or a sequence of (low, high) pairs"),
    # -- ReduceWindow ------------------------------------------------------------------------
    ("reduce_window", lambda b, p: O.reduce_window(b, [], [], ADD, [2, 2], [1, 1], "VALID"),
     "'xla.reduce_window' operands must have at least one array"),
    ("reduce_window", lambda b, p: rw(b, p, operands=[p["m"], p["m"]]),
     "'xla.reduce_window' init_values must have one scalar per operand (2)"),
    ("reduce_window", lambda b, p: rw(b, p, operands=[p["m"], p["src"]], init_values=[p["s"], p["s"]]),
     "'xla.reduce_window' operands[1] must have the dimensions of operands[0]"),
    ("reduce_window", lambda b, p: rw(b, p, x="t"), "'xla.reduce_window' operands[0] must be an array"),
    ("reduce_window", lambda b, p: rw(b, p, init_values=p["v"]), "'xla.reduce_window' init_values[0] must be a scalar"),
    ("reduce_window", lambda b, p: rw(b, p, init_values=p["si"]),
     "'xla.reduce_window' init_values[0] must have the element type of operands[0]"),
    ("reduce_window", lambda b, p: rw(b, p, window_dimensions=[2]),
     "'xla.reduce_window' window_dimensions must have 2 elements (one per dimension of f32[6,7])"),
    ("reduce_window", lambda b, p: rw(b, p, window_dimensions=[2, 0]), "'xla.reduce_window' window_dimensions must be positive"),
    ("reduce_window", lambda b, p: rw(b, p, window_strides=[1, 1, 1]), "'xla.reduce_window' window_strides must have 2 elements"),
    ("reduce_window", lambda b, p: rw(b, p, window_strides=[-1, 1]), "'xla.reduce_window' window_strides must be positive"),
    ("reduce_window", lambda b, p: rw(b, p, base_dilations=[1]), "'xla.reduce_window' base_dilations must have 2 elements"),
    ("reduce_window", lambda b, p: rw(b, p, base_dilations=[1, 0]), "'xla.reduce_window' base_dilations must be positive"),
    ("reduce_window", lambda b, p: rw(b, p, window_dilations=[2]), "'xla.reduce_window' window_dilations must have 2 elements"),
    ("reduce_window", lambda b, p: rw(b, p, window_dilations=[0, 2]), "'xla.reduce_window' window_dilations must be positive"),
    ("reduce_window", lambda b, p: rw(b, p, padding=[(0, 0)]), "'xla.reduce_window' padding must have 2 elements"),
    ("reduce_window", lambda b, p: rw(b, p, padding=[(0, 0, 1), (0, 0, 1)]),
     "'xla.reduce_window' padding must be Padding.SAME, Padding.VALID or a sequence of (low, high) pairs"),
    ("reduce_window", lambda b, p: rw(b, p, padding=[(0, 0), (-8, 0)]),
     "'xla.reduce_window' padding must not remove more than the (dilated) base size 7 of dimension 1"),
    ("reduce_window", lambda b, p: rw(b, p, computation=ADDI),
     "'xla.reduce_window' computation must have parameters [f32[], f32[]]"),
    ("reduce_window", lambda b, p: rw(b, p, computation=GE), "'xla.reduce_window' computation must return f32[]"),
    ("reduce_window", lambda b, p: rw(b, p, window_strides=None), "'xla.reduce_window' window_strides is required"),
    # -- SelectAndScatter ------------------------------------------------------------------------
    ("select_and_scatter", lambda b, p: sas(b, p, operand=p["t"]), "'xla.select_and_scatter' operand must be an array"),
    ("select_and_scatter", lambda b, p: sas(b, p, window_dimensions=[2]),
     "'xla.select_and_scatter' window_dimensions must have 2 elements"),
    ("select_and_scatter", lambda b, p: sas(b, p, window_dimensions=[0, 2]),
     "'xla.select_and_scatter' window_dimensions must be positive"),
    ("select_and_scatter", lambda b, p: sas(b, p, window_strides=[2]), "'xla.select_and_scatter' window_strides must have 2 elements"),
    ("select_and_scatter", lambda b, p: sas(b, p, window_strides=[2, 0]), "'xla.select_and_scatter' window_strides must be positive"),
    ("select_and_scatter", lambda b, p: sas(b, p, padding=[(0, 0)]), "'xla.select_and_scatter' padding must have 2 elements"),
    ("select_and_scatter", lambda b, p: sas(b, p, padding=[(0, 0), (0, -8)]),
     "'xla.select_and_scatter' padding must not remove more than the (dilated) base size 7"),
    ("select_and_scatter", lambda b, p: sas(b, p, select=GE_S32),
     "'xla.select_and_scatter' select must take two scalar parameters [f32[], f32[]]"),
    ("select_and_scatter", lambda b, p: sas(b, p, select=ADD), "'xla.select_and_scatter' select must return a PRED scalar"),
    ("select_and_scatter", lambda b, p: sas(b, p, source=O.convert_element_type(p["src"], S32)),
     "'xla.select_and_scatter' source must have the element type of operand"),
    ("select_and_scatter", lambda b, p: sas(b, p, source=p["upd"]),
     "'xla.select_and_scatter' source must have the shape of the ReduceWindow of operand over the window (f32[3,3]); got f32[3,7]"),
    ("select_and_scatter", lambda b, p: sas(b, p, source=p["t"]), "'xla.select_and_scatter' source must be an array"),
    ("select_and_scatter", lambda b, p: sas(b, p, init_value=p["v"]), "'xla.select_and_scatter' init_value must be a scalar"),
    ("select_and_scatter", lambda b, p: sas(b, p, init_value=p["si"]),
     "'xla.select_and_scatter' init_value must have the element type of operand"),
    ("select_and_scatter", lambda b, p: sas(b, p, scatter=ADDI), "'xla.select_and_scatter' scatter must have parameters"),
    # -- Gather --------------------------------------------------------------------------------
    ("gather", lambda b, p: gather(p, operand=p["t"]), "'xla.gather' operand must be an array"),
    ("gather", lambda b, p: gather(p, start_indices=p["idxf"]),
     "'xla.gather' start_indices must have integer element type"),
    ("gather", lambda b, p: gather(p, GDN((1,), (0,), (0,), 3)),
     "'xla.gather' dimension_numbers.index_vector_dim must be in [0, rank of start_indices] = [0, 2]"),
    ("gather", lambda b, p: gather(p, GDN((2,), (0,), (0,), 1)),
     "'xla.gather' dimension_numbers.offset_dims must be dimensions of the result's rank 2"),
    ("gather", lambda b, p: gather(p, GDN((1, 0), (), (0,), 1), sizes=(1, 7)),
     "'xla.gather' dimension_numbers.offset_dims must be in ascending order without repeats"),
    ("gather", lambda b, p: gather(p, GDN((1,), (2,), (0,), 1)),
     "'xla.gather' dimension_numbers.collapsed_slice_dims must be dimensions of the operand's rank 2"),
    ("gather", lambda b, p: gather(p, GDN((), (1, 0), (0,), 1), sizes=(1, 1)),
     "'xla.gather' dimension_numbers.collapsed_slice_dims must be in ascending order without repeats"),
    ("gather", lambda b, p: gather(p, GDN((1,), (0,), (0, 1), 1)),
     "'xla.gather' dimension_numbers.start_index_map must have one entry per index vector element (1"),
    ("gather", lambda b, p: gather(p, GDN((1,), (0,), (2,), 1)),
     "'xla.gather' dimension_numbers.start_index_map must be dimensions of the operand's rank 2"),
    ("gather", lambda b, p: gather(p, GDN((1,), (0,), (0, 0), 1), start_indices=p["idx"]),
     "'xla.gather' dimension_numbers.start_index_map must not repeat"),
    ("gather", lambda b, p: gather(p, GDN((1,), (), (0,), 1)),
     "'xla.gather' operand must have rank len(offset_dims) + len(collapsed_slice_dims) + len(operand_batching_dims) = 1"),
    ("gather", lambda b, p: gather(p, sizes=(1,)), "'xla.gather' slice_sizes must have 2 elements"),
    ("gather", lambda b, p: gather(p, sizes=(1, 8)), "'xla.gather' slice_sizes must be in [0, dimension size]"),
    ("gather", lambda b, p: gather(p, sizes=(2, 7)),
     "'xla.gather' slice_sizes must be 1 in collapsed and batching dimensions (dimension 0)"),
    ("gather", lambda b, p: gather(p, dn=None), "'xla.gather' dimension_numbers is required"),
    ("gather", lambda b, p: gather(p, dn=[1, 2]), "'xla.gather' dimension_numbers must be a GatherDimensionNumbers"),
    ("gather", lambda b, p: O.gather(p["o3"], p["i3"], GDN((2,), (1,), (1,), 2, (0,), (3,)), [1, 1, 4]),
     "'xla.gather' dimension_numbers.start_indices_batching_dims must be dimensions of start_indices's rank 3"),
    ("gather", lambda b, p: O.gather(p["o3"], p["i3"], GDN((2,), (1,), (1,), 2, (0,), (2,)), [1, 1, 4]),
     "'xla.gather' dimension_numbers.start_indices_batching_dims must not contain index_vector_dim (2)"),
    ("gather", lambda b, p: O.gather(p["o3"], p["i3"], GDN((2,), (1,), (1,), 2, (0,), (0,)), [1, 1, 4]),
     "'xla.gather' dimension_numbers.start_indices_batching_dims must pair dimensions of equal size"),
    ("gather", lambda b, p: O.gather(p["o3"], p["i3"], GDN((2,), (1,), (1,), 2, (0,), ()), [1, 1, 4]),
     "'xla.gather' dimension_numbers.start_indices_batching_dims must have as many dimensions as operand_batching_dims"),
    ("gather", lambda b, p: O.gather(p["o3"], p["i3"], GDN((), (1,), (1,), 2, (0, 0), (1, 1)), [1, 1, 4]),
     "'xla.gather' dimension_numbers.operand_batching_dims must be in ascending order without repeats"),
    ("gather", lambda b, p: O.gather(p["o3"], p["i3"], GDN((2,), (0,), (1,), 2, (0,), (1,)), [1, 1, 4]),
     "'xla.gather' dimension_numbers.operand_batching_dims must not overlap collapsed_slice_dims"),
    ("gather", lambda b, p: O.gather(p["o3"], p["i3"], GDN((2,), (1,), (0,), 2, (0,), (1,)), [1, 1, 4]),
     "'xla.gather' dimension_numbers.start_index_map must not map to operand_batching_dims"),
    # -- Scatter --------------------------------------------------------------------------------
    ("scatter", lambda b, p: scatter(p, operands=[], updates=[]), "'xla.scatter' operands must have at least one array"),
    ("scatter", lambda b, p: scatter(p, operands=[p["m"], p["src"]], updates=[p["upd"], p["upd"]]),
     "'xla.scatter' operands[1] must have the dimensions of operands[0]"),
    ("scatter", lambda b, p: scatter(p, updates=[p["upd"], p["upd"]]), "'xla.scatter' updates must have one array per operand (1)"),
    ("scatter", lambda b, p: scatter(p, updates=p["updi"]), "'xla.scatter' updates[0] must have the element type of operands[0]"),
    ("scatter", lambda b, p: scatter(p, operands=[p["m"], p["m"]], updates=[p["upd"], p["src"]]),
     "'xla.scatter' updates[1] must have the dimensions of updates[0]"),
    ("scatter", lambda b, p: scatter(p, scatter_indices=p["idxf"]), "'xla.scatter' scatter_indices must have integer element type"),
    ("scatter", lambda b, p: scatter(p, SDN((1,), (0,), (0,), 5)),
     "'xla.scatter' dimension_numbers.index_vector_dim must be in [0, rank of scatter_indices] = [0, 2]"),
    ("scatter", lambda b, p: scatter(p, SDN((2,), (0,), (0,), 1)),
     "'xla.scatter' dimension_numbers.update_window_dims must be dimensions of the updates' rank 2"),
    ("scatter", lambda b, p: scatter(p, SDN((1, 0), (), (0,), 1), updates=O.reshape(p["upd"], [1, 3, 7])),
     "'xla.scatter' dimension_numbers.update_window_dims must be in ascending order without repeats"),
    ("scatter", lambda b, p: scatter(p, SDN((1,), (2,), (0,), 1)),
     "'xla.scatter' dimension_numbers.inserted_window_dims must be dimensions of the operand's rank 2"),
    ("scatter", lambda b, p: scatter(p, SDN((), (1, 0), (0,), 1), updates=p["v"]),
     "'xla.scatter' dimension_numbers.inserted_window_dims must be in ascending order without repeats"),
    ("scatter", lambda b, p: scatter(p, SDN((1,), (), (0,), 1)),
     "'xla.scatter' operands must have rank len(update_window_dims) + len(inserted_window_dims) + "
     "len(input_batching_dims) = 1"),
    ("scatter", lambda b, p: scatter(p, SDN((1,), (0,), (0, 1), 1)),
     "'xla.scatter' dimension_numbers.scatter_dims_to_operand_dims must have one entry per index vector element (1"),
    ("scatter", lambda b, p: scatter(p, SDN((1,), (0,), (3,), 1)),
     "'xla.scatter' dimension_numbers.scatter_dims_to_operand_dims must be dimensions of the operand's rank 2"),
    ("scatter", lambda b, p: scatter(p, SDN((1,), (0,), (0, 0), 1), scatter_indices=p["idx"]),
     "'xla.scatter' dimension_numbers.scatter_dims_to_operand_dims must not repeat"),
    ("scatter", lambda b, p: scatter(p, updates=O.reshape(p["upd"], [3, 7, 1])),
     "'xla.scatter' updates must have rank len(update_window_dims) + scatter batch dimensions = 2"),
    ("scatter", lambda b, p: scatter(p, SDN((1,), (1,), (1,), 1), updates=p["upd"]),
     "'xla.scatter' updates window dimension 1 (size 7) must not exceed operand dimension 0 (6)"),
    ("scatter", lambda b, p: scatter(p, updates=O.slice(p["upd"], [0, 0], [2, 7])),
     "'xla.scatter' updates scatter dimension 0 must have the size of the matching scatter_indices dimension (3)"),
    ("scatter", lambda b, p: scatter(p, update_computation=GE),
     "'xla.scatter' update_computation must return f32[]"),
    ("scatter", lambda b, p: O.scatter(p["o3"], p["i3"], O.reshape(p["o3"], [4, 3, 5]), ADD,
                                       SDN((2,), (1,), (1,), 2, (0,), (1,))),
     "'xla.scatter' updates window dimension 2 (size 5) must not exceed operand dimension 2 (4)"),
    ("scatter", lambda b, p: O.scatter(p["o3"], p["i3"], p["o3"], ADD, SDN((2,), (1,), (1,), 2, (0,), (7,))),
     "'xla.scatter' dimension_numbers.scatter_indices_batching_dims must be dimensions of scatter_indices's rank 3"),
    ("scatter", lambda b, p: O.scatter(p["o3"], p["i3"], p["o3"], ADD, SDN((2,), (0,), (1,), 2, (0,), (1,))),
     "'xla.scatter' dimension_numbers.input_batching_dims must not overlap inserted_window_dims"),
    ("scatter", lambda b, p: O.scatter(p["o3"], p["i3"], p["o3"], ADD, SDN((2,), (1,), (0,), 2, (0,), (1,))),
     "'xla.scatter' dimension_numbers.scatter_dims_to_operand_dims must not map to input_batching_dims"),
    ("scatter", lambda b, p: O.scatter(p["o3"], p["i3"], p["o3"], ADD, SDN((2,), (1,), (1,), 2, (0,), (0,))),
     "'xla.scatter' dimension_numbers.scatter_indices_batching_dims must pair dimensions of equal size"),
    ("scatter", lambda b, p: scatter(p, dn=None, update_window_dims=[1], inserted_window_dims=[0],
                                     scatter_dims_to_operand_dims=[0, 0]),
     "'xla.scatter' dimension_numbers.scatter_dims_to_operand_dims must have one entry per index vector element"),
    ("scatter", lambda b, p: scatter(p, dn=ROWS, update_window_dims=[1]), "'xla.scatter' arguments must match"),
]


@pytest.mark.parametrize("op,call,message", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule(op, call, message):
    check_rule(call, _b, op, message, "test_shape_rules_windows.py")


def test_bad_module_text_is_rejected():
    """The verifier runs the same rules on parsed text: a scatter whose window does not fit."""
    from xlair.dialect.ir import context, ir, lock
    from xlair.dialect.verify import verify
    text = """
    func.func @main(%x: tensor<6x7xf32>, %i: tensor<3x1xi32>, %u: tensor<3x8xf32>) -> tensor<6x7xf32> {
      %r = "xla.scatter"(%x, %i, %u) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = "xla.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "xla.return"(%s) : (tensor<f32>) -> ()
      }) {operandSegmentSizes = array<i32: 1, 1, 1>,
          dimension_numbers = {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>,
                               scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64}}
        : (tensor<6x7xf32>, tensor<3x1xi32>, tensor<3x8xf32>) -> tensor<6x7xf32>
      return %r : tensor<6x7xf32>
    }"""
    with lock, context():
        m = ir.Module.parse(text)
        with pytest.raises(xla.XlaError, match="'xla.scatter' updates window dimension 1 .size 8. must not exceed"):
            verify(m)
