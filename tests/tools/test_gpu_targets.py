"""CUDA and ROCm: every op family compiles to an artifact for sm_80 and gfx942, checked with
iree-dump-module (executable format, chip, exported @main and its xlair signature); on a
machine with such a GPU the family also runs and matches the reference interpreter."""
import pathlib
import re
import subprocess
import sys

import pytest

import xlair as xla
from xlair.compile import compile_vmfb
from xlair.targets import TARGETS, device_available

from xlair.dialect.core import all_ops
from op_examples import example_inputs, families, family_computation, family_ops
from xlair_testing import assert_close

BIN = pathlib.Path(sys.executable).parent
GPUS = {"cuda": ("cuda-nvptx-fb", "sm_80"), "rocm": ("rocm-hsaco-fb", "gfx942")}
FAMILIES = families()
#: stateful generators: the compiled program and the interpreter draw different numbers
#: not compared on a GPU: stateful generators, and ops needing host state, registered targets or
#: replicas (side effects and collectives run end to end on the CPU and Vulkan instead)
NOT_COMPARED = ("rng_uniform", "rng_normal") + tuple(
    d.name for d in all_ops() if d.family in ("side_effects", "collectives"))


def dump(path) -> str:
    r = subprocess.run([str(BIN / "iree-dump-module"), str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("gpu", list(GPUS))
def test_family_compiles(covers, tmp_path, gpu, family):
    fmt, chip = GPUS[gpu]
    assert TARGETS[gpu].default_arch == chip
    covers.add(f"{gpu}:compile", *family_ops(family))
    comp = family_computation(family)
    path = tmp_path / f"{family}.vmfb"
    path.write_bytes(compile_vmfb(comp, gpu))
    text = dump(path)
    assert f"`{fmt}`" in text, f"no {fmt} executable in the {gpu} artifact"
    assert re.search(rf'arch = \\?"{chip}\\?"', text), f"the artifact is not for {chip}"
    exported = text[text.index("Exported Functions:"):text.index("Sections")]
    assert re.search(r"\[\s*\d+\] main\(", exported), exported
    sig = re.search(r"xlair.signature: (\{.*\})", exported).group(1)
    assert '"params": [' + ", ".join(f'"{p.mlir_str()}"' for p in comp.parameter_shapes) + "]" in sig
    assert f'"result": "{comp.result_shape.mlir_str()}"' in sig


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("gpu", list(GPUS))
def test_family_runs_on_gpu(covers, gpu, family):
    covers.add(gpu, *family_ops(family, NOT_COMPARED))
    if not device_available(gpu):
        pytest.skip(f"no {gpu} device on this machine (IREE's '{TARGETS[gpu].driver}' driver finds none)")
    comp = family_computation(family, exclude=NOT_COMPARED)
    args = example_inputs(comp)
    got = xla.compile(comp, target=gpu)(*args)
    assert_close(got, xla.interpret(comp, *args), comp.result_shape, f"{family} on {gpu}", scale=16.0)
