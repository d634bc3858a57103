"""Every registered op has its FileCheck tests: tests/filecheck/lowering/<op>.mlir (the lowering)
and tests/filecheck/dialect/<op>_invalid.mlir (its constraints, `--verify-diagnostics`).
tests/test_filecheck.py runs them all through lit."""
import pathlib
import re

import pytest

from xlair.dialect.core import all_ops

ROOT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "filecheck"
OPS = all_ops()


def test_every_op_has_a_lowering_test():
    missing = [d.name for d in OPS if not (ROOT / "lowering" / f"{d.name}.mlir").exists()]
    assert not missing, f"ops without tests/filecheck/lowering/<op>.mlir: {', '.join(missing)}"


def test_every_op_has_a_verifier_test():
    missing = [d.name for d in OPS if not (ROOT / "dialect" / f"{d.name}_invalid.mlir").exists()]
    assert not missing, f"ops without tests/filecheck/dialect/<op>_invalid.mlir: {', '.join(missing)}"


@pytest.mark.parametrize("path", sorted((ROOT / "dialect").glob("*_invalid.mlir")), ids=lambda p: p.stem)
def test_verifier_test_checks_its_op(path):
    text = path.read_text()
    op = path.name[:-len("_invalid.mlir")]
    assert text.startswith("// RUN: xlair-opt %s --split-input-file --verify-diagnostics\n")
    expected = re.findall(r"expected-error(?:@[+-]?\w+)?\s*\{\{(.*?)\}\}", text)
    assert expected, f"{path.name} expects no error"
    assert all(e.startswith(f"'xla.{op}' ") for e in expected), expected
    chunks = [c for c in text.split("// -----") if "func.func" in c]
    assert len(chunks) == len(expected), "one expected error per split chunk"
