"""xlair-opt: verify, run xlair and upstream passes, print; split input, expected diagnostics,
bad input always exit status 1 with a diagnostic and never a traceback."""
import pathlib
import random
import re
import subprocess
import sys

import pytest

from xlair.lowering.pipeline import PASSES
from xlair.tools import opt

BIN = pathlib.Path(sys.executable).parent
ROOT = pathlib.Path(__file__).resolve().parents[2]

ADD = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "xla.add"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "xla.add"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "xla.mul"(%0, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}
"""

REDUCE_TUPLE = """func.func @main(%t: tuple<tensor<4xf32>, tensor<i32>>, %z: tensor<f32>) -> tuple<tensor<f32>, tensor<i32>> {
  %a = "xla.get_tuple_element"(%t) {index = 0 : i64} : (tuple<tensor<4xf32>, tensor<i32>>) -> tensor<4xf32>
  %i = "xla.get_tuple_element"(%t) {index = 1 : i64} : (tuple<tensor<4xf32>, tensor<i32>>) -> tensor<i32>
  %r = "xla.reduce"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "xla.max"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %o = "xla.tuple"(%r, %i) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  return %o : tuple<tensor<f32>, tensor<i32>>
}
"""


def run_opt(capsys, tmp_path, text, *args, name="in.mlir"):
    path = tmp_path / name
    path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
    rc = opt.main([str(path), *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_parse_verify_print_round_trips(capsys, tmp_path):
    rc, out, err = run_opt(capsys, tmp_path, REDUCE_TUPLE)
    assert rc == 0, err
    assert '"xla.reduce"' in out and "tuple<tensor<f32>, tensor<i32>>" in out
    rc2, out2, _ = run_opt(capsys, tmp_path, out, name="again.mlir")
    assert rc2 == 0 and out2 == out


def test_named_pass_lowers_to_linalg(capsys, tmp_path):
    rc, out, err = run_opt(capsys, tmp_path, ADD, "-p", "xla-to-linalg")
    assert rc == 0, err
    assert "linalg.generic" in out and "arith.addf" in out and "xla." not in out


def test_pipeline_mixes_xlair_and_upstream_passes(capsys, tmp_path):
    rc, plain, err = run_opt(capsys, tmp_path, ADD, "-p", "xla-to-linalg")
    assert rc == 0, err
    rc, out, err = run_opt(capsys, tmp_path, ADD,
                           "--pass-pipeline=builtin.module(xla-simplify,xla-to-linalg,canonicalize,cse)")
    assert rc == 0, err
    assert "xla." not in out
    # xla-to-linalg already canonicalizes; a pipeline ending upstream must still print valid IR
    rc, again, err = run_opt(capsys, tmp_path, out, "--pass-pipeline=builtin.module(cse,canonicalize)",
                             name="lowered.mlir")
    assert rc == 0 and again == out
    # an upstream pass before an xlair one: symbol-dce drops the unused private function
    text = ADD + 'func.func private @unused(%x: tensor<f32>) -> tensor<f32> {\n  return %x : tensor<f32>\n}\n'
    rc, out, err = run_opt(capsys, tmp_path, text, "-p", "symbol-dce,xla-to-linalg")
    assert rc == 0, err
    assert "@unused" not in out and "linalg.generic" in out
    rc, out, err = run_opt(capsys, tmp_path, text, "-p", "xla-to-linalg")
    assert "@unused" in out


def test_nested_upstream_pipeline(capsys, tmp_path):
    rc, out, err = run_opt(capsys, tmp_path, ADD,
                           "--pass-pipeline=builtin.module(xla-to-linalg,func.func(linalg-fuse-elementwise-ops))")
    assert rc == 0, err
    assert out.count("linalg.generic") == 1       # the three element-wise ops fused into one


def test_output_file_and_debuginfo(capsys, tmp_path):
    dest = tmp_path / "out.mlir"
    rc, out, err = run_opt(capsys, tmp_path, ADD, "-p", "xla-to-linalg", "-o", str(dest),
                           "--mlir-print-debuginfo")
    assert rc == 0 and out == ""
    text = dest.read_text()
    src = str(tmp_path / "in.mlir")
    assert re.search(r'loc\("' + re.escape(src) + r'":2:\d+\)', text), text
    rc, out, err = run_opt(capsys, tmp_path, ADD)
    assert "loc(" not in out


def test_split_input_file(capsys, tmp_path):
    text = ADD + "\n// -----\n" + REDUCE_TUPLE + "\n// -----\n" + ADD.replace("@main", "@other")
    rc, out, err = run_opt(capsys, tmp_path, text, "--split-input-file", "-p", "xla-to-iree-input")
    assert rc == 0, err
    parts = out.split("// -----")
    assert len(parts) == 3 and "@other" in parts[2] and "linalg.reduce" in parts[1]
    # without splitting, the second @main clashes with the first
    rc, out, err = run_opt(capsys, tmp_path, text)
    assert rc == 1 and "redefinition of symbol named 'main'" in err


INVALID = """func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.add' rhs must have the element type of lhs}}
  %0 = "xla.add"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @g(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "xla.transpose"(%a) {permutation = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32> // expected-error {{must be a permutation}}
  return %0 : tensor<3x2xf32>
}

// -----

// expected-error@+2 {{custom op 'oops' is unknown}}
func.func @h() {
  oops
}
"""


def test_verify_diagnostics_pass(capsys, tmp_path):
    rc, out, err = run_opt(capsys, tmp_path, INVALID, "--split-input-file", "--verify-diagnostics")
    assert rc == 0, err
    assert err == ""


@pytest.mark.parametrize("edit,complaint", [
    (("element type of lhs", "shape of lhs"), "expected error \"'xla.add' rhs must have the shape of lhs\" was not produced"),
    (("@+1 {{'xla.add'", "@+2 {{'xla.add'"), "unexpected error: 'xla.add' rhs must have the element type"),
    (("// expected-error {{must be a permutation}}", ""), "unexpected error: 'xla.transpose' permutation"),
    (("array<i64: 0, 0>", "array<i64: 1, 0>"), 'expected error "must be a permutation" was not produced'),
])
def test_verify_diagnostics_fail(capsys, tmp_path, edit, complaint):
    rc, out, err = run_opt(capsys, tmp_path, INVALID.replace(*edit), "--split-input-file", "--verify-diagnostics")
    assert rc == 1
    assert complaint in err, err
    assert "Traceback" not in err


def test_diagnostics_name_file_line_and_column(capsys, tmp_path):
    rc, out, err = run_opt(capsys, tmp_path, INVALID, "--split-input-file")
    assert rc == 1 and out == ""
    src = str(tmp_path / "in.mlir")
    assert f"{src}:3: error: 'xla.add' rhs must have the element type of lhs (F32); got s32[2,3]" in err
    assert f"{src}:10: error: 'xla.transpose' permutation must be a permutation" in err
    assert f"{src}:18:3: error: custom op 'oops' is unknown" in err


def test_list_passes(capsys):
    assert opt.main(["--list-passes"]) == 0
    out = capsys.readouterr().out
    for name in PASSES:
        assert name in out
    assert "canonicalize" in out


BAD_INPUTS = [
    ("truncated", ADD[:70], "expected"),
    ("garbage", bytes(range(256)) * 3, "not UTF-8 text"),
    ("nul", ADD.replace("return", "ret\0urn"), "NUL byte"),
    ("unknown xla op", ADD.replace('"xla.mul"', '"xla.frobnicate"'), "'xla.frobnicate' is not an op of the xla dialect"),
    ("wrong result type", ADD.replace("-> tensor<2x3xf32>\n  %2", "-> tensor<3x2xf32>\n  %2"), "expects different type"),
    ("broken rule", ADD.replace("(%0, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
                                "(%0, %1) {broadcast_dimensions = array<i64: 5>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>"),
     "'xla.mul' broadcast_dimensions"),
    ("unreadable attribute", ADD.replace('"xla.mul"(%0, %1) :', '"xla.mul"(%0, %1) {broadcast_dimensions = array<ui8: 0>} :'),
     "'xla.mul' broadcast_dimensions must be"),
    ("structure", 'func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  return\n}\n',
     "'func.return' op has 0 operands, but enclosing function (@main) returns 1"),
    ("region return outside an op", 'func.func @main(%a: tensor<f32>) {\n  "xla.return"(%a) : (tensor<f32>) -> ()\n}\n',
     "'xla.return' must end the computation region"),
]


@pytest.mark.parametrize("what,text,message", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_a_diagnostic(capsys, tmp_path, what, text, message):
    rc, out, err = run_opt(capsys, tmp_path, text, "-p", "xla-to-linalg")
    assert rc == 1, out
    assert message in err, err
    assert "error:" in err and "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize("args,message", [
    (["-p", "no-such-pass"], "unknown pass 'no-such-pass'"),
    (["--pass-pipeline=builtin.module(canonicalize"], "unbalanced parentheses"),
    (["--pass-pipeline=builtin.module(func.func(xla-to-linalg))"], "cannot be nested"),
    (["-p", "xla-to-linalg{x=1}"], "option 'x' is not one it takes (its options: target=<cpu|vulkan|cuda|rocm>, counted=<on|off>, loops=<device|host>, vectors=<512|256>, barriers=<all|outside-loops>, linalg=<auto|device|host>, products=<auto|f32|bf16x3>)"),
    (["-p", "xla-to-linalg{target=tpu}"], "option target must be one of cpu, vulkan, cuda, rocm; got 'tpu'"),
    (["-p", "canonicalize{no-such-option=1}"], "no such option"),
])
def test_bad_pipeline_is_reported_once(capsys, tmp_path, args, message):
    rc, out, err = run_opt(capsys, tmp_path, ADD, *args)
    assert rc == 1 and out == ""
    assert message in err and err.startswith("xlair-opt: error:") and "Traceback" not in err


def test_missing_file_and_bad_option(capsys, tmp_path):
    assert opt.main([str(tmp_path / "nope.mlir")]) == 1
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        opt.main([str(tmp_path / "nope.mlir"), "--no-such-option"])
    assert e.value.code == 1


def test_other_dialects_pass_through(capsys, tmp_path):
    text = ADD.replace("return %2", '"test.opaque"(%2) : (tensor<2x3xf32>) -> ()\n  return %2')
    rc, out, err = run_opt(capsys, tmp_path, text, "-p", "xla-to-linalg")
    assert rc == 0, err
    assert '"test.opaque"' in out and "xla." not in out


TUPLE_ARG = """func.func @main(%t: tuple<tensor<4xf32>, tensor<i32>>) -> tensor<i32> {
  %i = "xla.get_tuple_element"(%t) {index = 1 : i64} : (tuple<tensor<4xf32>, tensor<i32>>) -> tensor<i32>
  return %i : tensor<i32>
}
"""


def test_failing_passes_are_diagnostics(capsys, tmp_path):
    src = tmp_path / "in.mlir"
    # an xlair pass: tuple parameters are flattened by xla-flatten-tuples, not xla-to-linalg
    rc, out, err = run_opt(capsys, tmp_path, TUPLE_ARG, "-p", "xla-to-linalg")
    assert rc == 1 and out == ""
    assert f"{src}:2: error: 'xla.get_tuple_element' has no lowering to linalg" in err
    rc, out, err = run_opt(capsys, tmp_path, TUPLE_ARG, "-p", "xla-to-iree-input")
    assert rc == 0 and "tuple" not in out
    # an upstream pass: bufferization meets an xla op it cannot bufferize (error, then its note)
    rc, out, err = run_opt(capsys, tmp_path, ADD, "-p", "one-shot-bufferize")
    assert rc == 1 and out == ""
    assert f"{src}:2:8: error: op was not bufferized" in err and f"{src}:2:8: note:" in err
    assert "Traceback" not in err


def test_console_script_reads_stdin():
    r = subprocess.run([str(BIN / "xlair-opt"), "-p", "xla-to-linalg"], input=ADD, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "linalg.generic" in r.stdout
    r = subprocess.run([str(BIN / "xlair-opt")], input=ADD[:50], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stderr.startswith("<stdin>:") and "Traceback" not in r.stderr


def _fuzz_cases(seed: int, per_file: int):
    """Truncations, deleted spans, changed digits and element types of the lowering tests."""
    rng = random.Random(seed)
    files = sorted((ROOT / "tests" / "filecheck" / "lowering").glob("*.mlir"))
    pieces = []
    for f in files:
        src = f.read_text()
        chunks = [c for c in re.split(r"(?m)^// -----.*$", src) if "xla." in c]
        for _ in range(per_file):
            c = rng.choice(chunks)
            kind = rng.randrange(4)
            if kind == 0:
                c = c[:rng.randrange(len(c))]
            elif kind == 1:
                a = rng.randrange(len(c))
                c = c[:a] + c[a + rng.randrange(1, 30):]
            elif kind == 2:
                digits = [m.start() for m in re.finditer(r"\d", c)]
                for i in rng.sample(digits, min(2, len(digits))):
                    c = c[:i] + rng.choice("0123456789") + c[i + 1:]
            else:
                toks = list(re.finditer(r"\b(f32|i32|i1|f64|ui8|bf16|i64|f16|i8)\b", c))
                if toks:
                    m = rng.choice(toks)
                    c = c[:m.start()] + rng.choice(["f32", "i32", "i1", "ui8", "complex<f32>", "f64"]) + c[m.end():]
            pieces.append(c.replace("// -----", ""))
    return pieces


def test_mutated_inputs_never_crash(tmp_path):
    """Hundreds of broken variants of the lowering tests, through verification and the whole
    lowering: exit status 0 or 1, and every failure a diagnostic (no traceback, no crash)."""
    pieces = _fuzz_cases(seed=20261122, per_file=4)
    path = tmp_path / "fuzz.mlir"
    path.write_text("\n// -----\n".join(pieces))
    r = subprocess.run([str(BIN / "xlair-opt"), str(path), "--split-input-file", "-p",
                        "xla-to-iree-input,canonicalize,cse"], capture_output=True, text=True, timeout=900)
    assert r.returncode in (0, 1), r.stderr[-3000:]
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.stderr.count("error:") >= len(pieces) // 4       # most variants are broken
    for line in r.stderr.splitlines():
        if "error:" in line:
            assert line.startswith(str(path)), line


SORT = """func.func @main(%a: tensor<20000xf32>) -> tensor<20000xf32> {
  %r = "xla.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %lt = "xla.lt"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "xla.return"(%lt) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = false} : (tensor<20000xf32>) -> tensor<20000xf32>
  return %r : tensor<20000xf32>
}
"""


@pytest.mark.parametrize("pipeline,kernel", [
    ("xla-to-linalg{target=cpu}", True),
    ("builtin.module(xla-simplify,xla-to-linalg{target=cpu},cse)", True),
    ("xla-to-linalg{target=vulkan}", False),
    ("xla-to-linalg", False),
])
def test_target_is_a_pass_option(capsys, tmp_path, pipeline, kernel):
    """The target reaches the patterns as the pass option: a long sort is the CPU's hand-written
    radix-sort dispatch with target=cpu only."""
    rc, out, err = run_opt(capsys, tmp_path, SORT, "-p", pipeline)
    assert rc == 0, err
    assert ("flow.dispatch @xlair_radix" in out) == kernel and "xla." not in out


#: what xlair-opt's start must not import: each costs a lit run's every file (240 processes).
#: ml_dtypes takes about a second (numpy registers its casts one by one; ml_dtypes 0.7.0 on an
#: AMD EPYC), IREE's linalg module about 0.13 s (its op DSL builds every named op).
HEAVY_AT_START = ("ml_dtypes", "iree.compiler.dialects.linalg", "jax")


def test_xlair_opt_starts_without_the_heavy_imports():
    code = ("import sys, xlair.tools.opt; "
            f"print([m for m in {HEAVY_AT_START!r} if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "[]", f"xlair-opt's start imports {r.stdout.strip()}"


def test_bf16_without_ml_dtypes_imported_first():
    """BF16's numpy dtype is ml_dtypes' bfloat16, imported when first asked for: a fresh
    process gets it from the type, a BF16 literal, and element_type of the dtype and its name
    (1.5 and -2.25 are exact in BF16; 3.140625 is pi rounded to BF16's 8 bits, hand-derived)."""
    code = "\n".join([
        "import sys, numpy as np",
        "import xlair as xla",
        "from xlair.dialect.types import BF16, element_type",
        "from xlair.dialect.attrs import literal_value",
        "from xlair.dialect.ir import context, ir",
        "assert 'ml_dtypes' not in sys.modules",
        "import ml_dtypes",
        "assert BF16.dtype == np.dtype(ml_dtypes.bfloat16)",
        "assert element_type(ml_dtypes.bfloat16) is BF16 and element_type('bfloat16') is BF16",
        "assert element_type(np.dtype(ml_dtypes.bfloat16)) is BF16 and element_type('bf16') is BF16",
        "with context():",
        "    a = ir.Attribute.parse('dense<[1.5, -2.25, 3.14159]> : tensor<3xbf16>')",
        "    v = literal_value(a)",
        "assert v.dtype == BF16.dtype, v.dtype",
        "print(v.astype(np.float64).tolist())",
    ])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "[1.5, -2.25, 3.140625]"
