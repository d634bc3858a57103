"""Targets as one description each (lowering/targets.py): lowering patterns ask the target's
description, they do not compare its name; the user-facing target table reads the shared facts
from the same descriptions."""
import ast
import pathlib

import pytest

from xlair.lowering import targets as descriptions
from xlair.lowering.registry import TARGET_NAMES, Options
from xlair.targets import TARGETS

LOWERING = pathlib.Path(__file__).resolve().parents[2] / "lowering"


def _names(node) -> set:
    """The target names a comparison operand spells: a string, or a tuple / list / set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & set(TARGET_NAMES)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names(e) for e in node.elts)) if node.elts else set()
    return set()


def _name_checks(source: str) -> list[str]:
    """Where a module compares a target name (`target == "cpu"`, `in ("cuda", "rocm")`,
    `!= "vulkan"`), compares anything with a `.target`, or asks the old `on_cpu`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left] + list(node.comparators)
            spelled = set().union(*(_names(o) for o in operands))
            reads_target = any(isinstance(o, ast.Attribute) and o.attr == "target" for o in operands)
            if spelled or reads_target:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Attribute) and node.attr == "on_cpu":
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", sorted(LOWERING.glob("*.py")), ids=lambda p: p.name)
def test_lowering_compares_no_target_names(path):
    found = _name_checks(path.read_text())
    assert not found, (f"{path.name} decides by the target's name; ask its description instead "
                       f"(registry.options().desc, lowering/targets.py):\n  " + "\n  ".join(found))


def test_the_check_finds_the_four_spellings():
    src = ('a = options().target == "cpu"\nb = opts.on_cpu\nc = options().target in ("cuda", "rocm")\n'
           'd = t != "vulkan"\ne = "vulkan" if x else None\n')
    assert len(_name_checks(src)) == 4


def test_every_target_has_one_description():
    assert set(TARGET_NAMES) == set(TARGETS) == set(descriptions.DESCRIPTIONS)
    for name in TARGET_NAMES:
        assert Options(target=name).desc is descriptions.describe(name) is TARGETS[name].desc
        assert Options(target=name).desc.name == name
    assert Options().desc is descriptions.PORTABLE


def test_binding_limits():
    """IREE's HALs: CUDA and HIP check 16 bindings an export when loading a module, the CPU 32
    a dispatch; Vulkan the device's own limit (16 assumed: docs/iree-limits.md)."""
    limits = {name: d.max_bindings for name, d in descriptions.DESCRIPTIONS.items()}
    assert limits == {"cpu": 32, "cuda": 16, "rocm": 16, "vulkan": 16}
    for d in list(descriptions.DESCRIPTIONS.values()) + [descriptions.PORTABLE]:
        assert 0 < d.max_reads < d.max_bindings, d.name


def test_loops_and_kernels_are_the_cpus():
    forms = {name: d.device_loops for name, d in descriptions.DESCRIPTIONS.items()}
    # (Vulkan: the "thread" form gave wrong results on lavapipe, docs/iree-limits.md)
    assert forms == {"cpu": "dispatch", "cuda": "thread", "rocm": "thread", "vulkan": None}
    assert {name for name, d in descriptions.DESCRIPTIONS.items() if d.cpu_kernels} == {"cpu"}
    assert not descriptions.PORTABLE.device_loops and not descriptions.PORTABLE.cpu_kernels
