"""Text round trip of every registered op: a Computation prints to text (`str(comp)`, xla ops in
MLIR's generic form) and `xlair.Computation.from_text` parses it back to an equal computation,
regions and tuples included.  The examples come from tests/op_examples.py; an op registered
without an example fails here, by name."""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.core import all_ops
from xlair.dialect.ir import context, ir, lock

from op_examples import EXAMPLES, MissingExample, example, example_computation
from xlair_testing import random_array

OPS = all_ops()


def _structure(module) -> list:
    """Every op of a module in order: name, operand and result types, attributes, regions."""
    out = []

    def visit(op):
        op = op.operation if hasattr(op, "operation") else op
        attrs = sorted((a.name, str(a.attr)) for a in _named(op)) if op.name != "builtin.module" else []
        out.append((op.name, [str(v.type) for v in op.operands], [str(r.type) for r in op.results],
                    attrs, len(op.regions)))
        return ir.WalkResult.ADVANCE

    with lock, context():
        module.operation.walk(visit)
    return out


def _named(op):
    return [op.attributes[i] for i in range(len(op.attributes))]


def test_every_registered_op_has_an_example():
    missing = []
    for d in OPS:
        b = xla.Builder("probe")
        try:
            example(b, d)
        except MissingExample:
            missing.append(d.mlir_name)
    assert not missing, f"ops without an example in tests/op_examples.py: {', '.join(missing)}"
    stale = sorted(set(EXAMPLES) - {d.name for d in OPS})
    assert not stale, f"examples of ops that are not registered: {stale}"


@pytest.mark.parametrize("opdef", OPS, ids=[d.name for d in OPS])
def test_round_trip(opdef):
    comp = example_computation(opdef)
    text = str(comp)
    assert f'"{opdef.mlir_name}"' in text, f"{opdef.mlir_name} is not in the example's text:\n{text}"
    again = xla.Computation.from_text(text, name=comp.name)
    assert again == comp, f"round trip changed the text:\n{text}\n---\n{again}"
    assert str(again) == text
    assert again.program_shape == comp.program_shape
    assert _structure(again.module) == _structure(comp.module)
    # with locations too, and a third generation equal to the first
    third = xla.Computation.from_text(again.to_text(debug_info=True))
    assert third == comp


def _args(comp, rng):
    out = []
    for s in comp.parameter_shapes:
        if s.is_tuple:
            out.append(tuple(random_array(t.element_type, t.dims, rng, "positive") for t in s.tuple_shapes))
        else:
            out.append(random_array(s.element_type, s.dims, rng, "positive"))
    return out


def _same(a, b):
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


#: families whose results depend on state outside the arguments (generators, queues, replicas,
#: registered targets): tested end to end in tests/e2e/test_random.py, test_side_effects.py and
#: test_collectives.py instead
_STATEFUL = ("random", "side_effects", "collectives")


@pytest.mark.parametrize("opdef", [d for d in OPS if d.family not in _STATEFUL and d.reference],
                         ids=[d.name for d in OPS if d.family not in _STATEFUL and d.reference])
def test_parsed_computation_means_the_same(opdef):
    """The parsed computation gives bit-identical results in the reference interpreter."""
    comp = example_computation(opdef)
    again = xla.Computation.from_text(str(comp))
    if opdef.name in ("cholesky", "triangular_solve"):
        a = np.array([[4, 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]], np.float32)
        args = [a] + [np.ones(s.dims, np.float32) for s in comp.parameter_shapes[1:]]
    else:
        args = _args(comp, np.random.default_rng(7))
    assert _same(xla.interpret(comp, *args), xla.interpret(again, *args))


def test_nested_tuples_and_regions_round_trip():
    """A while loop over a nested tuple, a reduce with a variadic region and a tuple parameter."""
    inner = xla.Shape.tuple([xla.Shape(xla.S32, ()), xla.Shape(xla.F32, (2,))])
    state = xla.Shape.tuple([inner, xla.Shape(xla.PRED, ())])
    cb = xla.Builder("cond")
    s = cb.parameter(0, state)
    O.lt(O.get_tuple_element(O.get_tuple_element(s, 0), 0), O.constant(cb, np.int32(3)))
    bb = xla.Builder("body")
    s = bb.parameter(0, state)
    i = O.get_tuple_element(s, 0)
    O.tuple(bb, [O.tuple(bb, [O.add(O.get_tuple_element(i, 0), O.constant(bb, np.int32(1))),
                              O.neg(O.get_tuple_element(i, 1))]),
                 O.not_(O.get_tuple_element(s, 1))])
    b = xla.Builder("nested")
    p = b.parameter(0, state)
    w = O.while_(cb.build(), bb.build(), p)
    O.tuple(b, [w, O.get_tuple_element(O.get_tuple_element(w, 0), 1)])
    comp = b.build()
    again = xla.Computation.from_text(str(comp))
    assert again == comp and again.program_shape == comp.program_shape
    arg = ((np.int32(0), np.array([1.5, -2], np.float32)), np.True_)
    assert _same(xla.interpret(comp, arg), xla.interpret(again, arg))


@pytest.mark.parametrize("text,message", [
    ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
     '  %0 = "xla.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>\n'
     "  return %0 : tensor<2xf32>\n}", "use of value"),
    ("func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
     '  %0 = "xla.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>\n'
     "  return %0 : tensor<3xf32>\n}", r"'xla.add' result type must be f32\[2\] by the op's shape rule; got f32\[3\]"),
    ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
     '  %0 = "xla.frobnicate"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n'
     "  return %0 : tensor<2xf32>\n}", "'xla.frobnicate' is not an op of the xla dialect"),
    ("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}",
     "no @main"),
    ('func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = "xla.add"(%a, %a', "cannot parse"),
])
def test_bad_text_raises_xla_error(text, message):
    with pytest.raises(xla.XlaError, match=message):
        xla.Computation.from_text(text)


@pytest.mark.parametrize("dims", [(), (0,), (3,), (2, 1, 4)])
def test_shapes_read_without_mlir_as_mlir_reads_them(dims):
    """Shape.parse (the run side's reader of signatures, no MLIR) against MLIR's type parser, for
    every element type, tuples (nested, empty) and the token."""
    from xlair.dialect.types import ALL_TYPES, Shape
    shapes = [Shape(et, dims) for et in ALL_TYPES]
    shapes += [Shape.tuple(shapes[:3]), Shape.tuple([Shape.tuple([shapes[0]]), Shape.token()]),
               Shape.tuple([]), Shape.token()]
    for s in shapes:
        text = s.mlir_str()
        with lock, context():
            ref = Shape.from_mlir(ir.Type.parse(text))
        assert Shape.parse(text) == ref == s, text


@pytest.mark.parametrize("text", ["tensor<2x3xf33>", "tensor<2x?xf32>", "tuple<tensor<f32>", "tensor<2x3xf32>>",
                                  "memref<2xf32>", ""])
def test_shape_parse_refuses_other_text(text):
    from xlair.dialect.types import Shape
    with pytest.raises(TypeError):
        Shape.parse(text)
