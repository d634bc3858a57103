"""Which sums read their operand from a dispatch of their own on CUDA (reduction_barriers
"unsafe", lowering/reduction.py _breaks_fused_sum): a negation or a product with a constant.
The rule is asked while the producer may still be an xla op (patterns lower ops in any order),
so it follows xla.constant, xla.iota and the broadcasts and reshapes of them as it follows
their lowered linalg forms (tests/filecheck/lowering/targets_gpu.mlir)."""
import pytest

from xlair.dialect.ir import context, ir, lock
from xlair.lowering.reduction import _breaks_fused_sum

T = "tensor<8x64xf32>"
UNLOWERED = f"""
func.func @main(%a: {T}) -> ({T}, {T}, {T}, {T}, {T}, {T}, {T}) {{
  %c = "xla.constant"() {{value = dense<2.5> : tensor<f32>}} : () -> tensor<f32>
  %b = "xla.broadcast_in_dim"(%c) {{broadcast_dimensions = array<i64>, out_dim_size = array<i64: 8, 64>}} : (tensor<f32>) -> {T}
  %by_constant = "xla.mul"(%b, %a) : ({T}, {T}) -> {T}
  %r = "xla.constant"() {{value = dense<1.5> : tensor<512xf32>}} : () -> tensor<512xf32>
  %rs = "xla.reshape"(%r) : (tensor<512xf32>) -> {T}
  %by_reshaped = "xla.mul"(%a, %rs) : ({T}, {T}) -> {T}
  %i = "xla.iota"() {{iota_dimension = 0 : i64}} : () -> {T}
  %by_iota = "xla.mul"(%a, %i) : ({T}, {T}) -> {T}
  %square = "xla.mul"(%a, %a) : ({T}, {T}) -> {T}
  %e = "xla.exp"(%a) : ({T}) -> {T}
  %by_computed = "xla.mul"(%a, %e) : ({T}, {T}) -> {T}
  %neg = "xla.neg"(%a) : ({T}) -> {T}
  return %by_constant, %by_reshaped, %by_iota, %square, %by_computed, %neg, %e : {T}, {T}, {T}, {T}, {T}, {T}, {T}
}}"""
#: the returned values in order, and whether the rule cuts a sum of each (hand-derived from the
#: rule: a negation, or a product one of whose operands is a constant, a broadcast or reshape
#: of one, or an iota)
EXPECTED = [("by_constant", True), ("by_reshaped", True), ("by_iota", True), ("square", False),
            ("by_computed", False), ("neg", True), ("exp", False)]


@pytest.mark.parametrize("index", range(len(EXPECTED)), ids=[n for n, _ in EXPECTED])
def test_the_rule_follows_unlowered_xla_producers(index):
    name, cut = EXPECTED[index]
    with lock, context():
        module = ir.Module.parse(UNLOWERED)
        main = module.body.operations[0]
        ret = list(main.regions[0].blocks[0].operations)[-1]
        value = ret.operands[index]
        assert value.owner.name in ("xla.mul", "xla.neg", "xla.exp"), value.owner.name
        assert _breaks_fused_sum(value) is cut, name
