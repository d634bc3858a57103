"""Errors cite constraints (DESIGN.md rule 3): every error path of a shape rule carries a
constraint id, every id it can raise is listed in its op's record, and docs/errors.md is the
records' rendering.  (Each negative case of tests/unit/test_shape_rules*.py also checks, through
xlair_testing.check_rule, that the error it raises cites an id of its op's record.)"""
from __future__ import annotations

import ast
import pathlib
import re

import pytest

from xlair.dialect.checks import IR_CONSTRAINTS, Check, spec_id
from xlair.dialect.core import all_ops
from xlair.tools.errors import render

ROOT = pathlib.Path(__file__).resolve().parents[2]
DIALECT = ROOT / "dialect"

#: Check's methods that raise: each call in dialect/ passes `cid=`
RAISING = {"fail"} | {n for n, v in vars(Check).items()
                      if callable(v) and not n.startswith("_") and n != "fail"}


def _calls(path: pathlib.Path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def _receiver(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr in RAISING and isinstance(f.value, ast.Name):
        return f.value.id
    return None


def _files():
    """The shape rules' sources (attrs.py and types.py raise for Python values of the typed
    records, not for a program, and ir.py where the compiler is not installed: their errors cite
    no constraint)."""
    return sorted(p for p in DIALECT.rglob("*.py")
                  if p.name not in ("errors.py", "attrs.py", "types.py", "ir.py"))


def _cid_of(call: ast.Call):
    return next((k.value for k in call.keywords if k.arg == "cid"), None)


def test_every_check_cites_a_constraint():
    missing = []
    for path in _files():
        for call in _calls(path):
            who = _receiver(call)
            if who in ("chk", "self") and _cid_of(call) is None:
                missing.append(f"{path.relative_to(ROOT)}:{call.lineno} {who}.{call.func.attr}")
            if isinstance(call.func, ast.Name) and call.func.id == "XlaError" \
                    and not any(k.arg == "constraint" for k in call.keywords):
                missing.append(f"{path.relative_to(ROOT)}:{call.lineno} XlaError(...)")
    assert not missing, "errors without a constraint id:\n" + "\n".join(missing)


def test_cited_ids_are_listed_in_the_records():
    listed = set(IR_CONSTRAINTS)
    for d in all_ops():
        listed |= set(d.constraints)
    unlisted = []
    for path in _files():
        for call in _calls(path):
            cid = _cid_of(call)
            if isinstance(cid, ast.Constant) and cid.value not in listed:
                unlisted.append(f"{path.relative_to(ROOT)}:{call.lineno} {cid.value}")
    assert not unlisted, "ids cited but in no op's record:\n" + "\n".join(unlisted)


STABLEHLO_ID = re.compile(r"^[a-z][a-z0-9_]*_[ci][1-9][0-9]*$")


@pytest.mark.parametrize("op", all_ops(), ids=lambda d: d.name)
def test_record_ids_are_well_formed(op):
    sections = {spec_id(d.section) for d in all_ops()}
    for cid, rule in op.constraints.items():
        assert STABLEHLO_ID.match(cid) or cid in sections, f"xla.{op.name}: {cid}"
        assert rule and "\n" not in rule, f"xla.{op.name}: {cid} needs a one-line rule"


def test_spec_ids():
    assert spec_id("RngBitGenerator") == "spec:RngBitGenerator"
    assert spec_id("Rev (reverse)") == "spec:Rev"
    assert spec_id("Element-wise unary functions") == "spec:ElementWiseUnaryFunctions"


def test_message_form():
    with pytest.raises(ValueError) as e:
        Check("gather").fail("slice_sizes", "must fit", [1, 5], cid="gather_c21")
    assert e.value.message == "'xla.gather' slice_sizes must fit; got [1, 5] [gather_c21]"
    assert e.value.constraint == "gather_c21"
    assert e.value.at("f.py:3").constraint == "gather_c21"


def test_errors_md_is_generated():
    assert (ROOT / "docs" / "errors.md").read_text() == render(), \
        "docs/errors.md is stale: python -m xlair.tools.errors -o docs/errors.md"
