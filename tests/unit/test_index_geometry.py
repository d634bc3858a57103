"""GatherGeometry and ScatterGeometry (dialect/ops/index_geometry.py) on hand-derived values:
the spec's Gather examples (shared/spec/operation_semantics.md, "Informal Description and
Examples"), a batching gather and a scatter."""
from xlair import GatherDimensionNumbers, ScatterDimensionNumbers
from xlair.dialect.ops.index_geometry import GatherGeometry, ScatterGeometry, clamp_start, clamp_starts


def _gather(operand, indices, slice_sizes, **dn):
    return GatherGeometry.of(GatherDimensionNumbers(**dn), operand, indices, slice_sizes)


def test_spec_batch_dynamic_slice():
    # 5 slices of shape [8,6] from a [16,11] array; index vectors S64[5,2]
    g = _gather((16, 11), (5, 2), (8, 6), offset_dims=(1, 2), collapsed_slice_dims=(),
                start_index_map=(0, 1), index_vector_dim=1)
    assert g.result_dims == [5, 8, 6]
    assert g.index_batch_dims == [0] and g.batch_sizes == [5] and g.index_vector_size == 2
    assert g.batch_outer_dims == [0] and g.outer_batch_dim(0) == 0
    assert g.window_operand_dims == [0, 1] and g.indexed_dims == [0, 1]
    assert g.outer_sources() == [("b", 0), ("o", 0), ("o", 1)]
    assert [g.bound(0), g.bound(1)] == [8, 5]              # 16 - 8, 11 - 6
    assert g.index_position(1, lambda t: 3) == [3, 1]
    xy = {0: 20, 1: -3}                                    # clamped into [0, 8] x [0, 5]
    assert g.full_start(xy.get, lambda t: None) == [8, 0]
    assert g.full_start({0: 4, 1: 2}.get, lambda t: None) == [4, 2]


def test_spec_multidimensional_indices():
    # the same with indices of shape [4,5,2]: batch dimensions G0, G1
    g = _gather((16, 11), (4, 5, 2), (8, 6), offset_dims=(2, 3), collapsed_slice_dims=(),
                start_index_map=(0, 1), index_vector_dim=2)
    assert g.result_dims == [4, 5, 8, 6]
    assert g.batch_outer_dims == [0, 1]
    assert g.outer_sources() == [("b", 0), ("b", 1), ("o", 0), ("o", 1)]
    assert g.index_position(0, {0: 3, 1: 4}.get) == [3, 4, 0]


def test_spec_gather_nd():
    # tf.gather_nd: indices [4,5,1], slice [1,11], dimension 0 collapsed; [G0,G1,O0] -> [X,O0]
    g = _gather((16, 11), (4, 5, 1), (1, 11), offset_dims=(2,), collapsed_slice_dims=(0,),
                start_index_map=(0,), index_vector_dim=2)
    assert g.result_dims == [4, 5, 11]
    assert g.window_operand_dims == [1]
    assert g.outer_sources() == [("b", 0), ("b", 1), ("o", 1)]
    assert g.bound(0) == 15 and g.bound(1) == 0
    assert g.slice_start(1, {0: 7}.get, None) is None       # not indexed: starts at 0
    assert g.full_start({0: 7}.get, None) == [7, 0]
    assert g.full_start({0: 99}.get, None) == [15, 0]


def test_implicit_index_vector_dim():
    # index_vector_dim == rank of the indices: index vectors of one element
    g = _gather((16, 11), (4, 5), (1, 11), offset_dims=(2,), collapsed_slice_dims=(0,),
                start_index_map=(0,), index_vector_dim=2)
    assert g.index_batch_dims == [0, 1] and g.index_vector_size == 1
    assert g.index_position(0, {0: 1, 1: 2}.get) == [1, 2]
    assert g.result_dims == [4, 5, 11]


def test_batching_dims():
    # operand [3,5,4] batched along 0 with indices dimension 1; index vector -> operand dim 1
    g = _gather((3, 5, 4), (4, 3, 1), (1, 1, 4), offset_dims=(2,), collapsed_slice_dims=(1,),
                start_index_map=(1,), index_vector_dim=2, operand_batching_dims=(0,),
                start_indices_batching_dims=(1,))
    assert g.result_dims == [4, 3, 4]
    assert g.indexed_dims == [0, 1] and g.window_operand_dims == [2]
    assert g.outer_batch_dim(1) == 1 and g.outer_batch_dim(0) == 0
    coord = {0: 2, 1: 1}.get
    assert g.full_start({0: 9}.get, coord) == [1, 4, 0]     # batch coordinate, clamp(9, 0, 5 - 1), 0


def test_scatter_geometry():
    # operand [3,3], rows of updates [2,3] written at indices [[0],[2]]
    s = ScatterGeometry.of(ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                                   scatter_dims_to_operand_dims=(0,), index_vector_dim=1),
                           (3, 3), (2, 1), (2, 3))
    assert s.window_sizes == (1, 3)
    assert s.scatter_dims == [0] and s.update_dim == {1: 1}
    assert s.batch_sizes == [2] and s.checked_dims == (0,)
    assert s.outer_sources() == [("b", 0), ("o", 1)]
    assert s.start(0, {0: 2}.get, None) == 2 and s.start(1, {0: 2}.get, None) is None
    assert [s.in_bounds(0, v) for v in (-1, 0, 2, 3)] == [False, True, True, False]
    assert s.in_bounds(1, 0) and not s.in_bounds(1, 1)   # a full-width window only fits at 0


def test_clamp_is_generic_in_its_arithmetic():
    class Sym:                                           # the lowering passes one that builds IR
        const = staticmethod(str)

        @staticmethod
        def min(a, b): return f"min({a}, {b})"

        @staticmethod
        def max(a, b): return f"max({a}, {b})"
    assert clamp_start("s", 7, Sym) == "max(min(s, 7), 0)"
    assert clamp_starts([-5, 3, 2**64 - 1], [10, 10, 10], [4, 4, 4]) == [0, 3, 6]
