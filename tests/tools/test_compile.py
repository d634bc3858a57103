"""xlair-compile: .mlir -> .vmfb per target and chip; the artifact carries its signature, so
xlair.load needs nothing else, and plain iree-run-module runs the CPU artifact."""
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import xlair as xla
from xlair.targets import device_available
from xlair.tools import compile as xc

BIN = pathlib.Path(sys.executable).parent

# f32 scalar and u32 vector in, a tuple (f32[], u32[4], (s32[2], pred[])) out; a tuple parameter too
PROG = """func.func @main(%a: tensor<f32>, %x: tensor<4xui32>, %t: tuple<tensor<2xi32>, tensor<i1>>)
    -> tuple<tensor<f32>, tensor<4xui32>, tuple<tensor<2xi32>, tensor<i1>>> {
  %sq = "xla.mul"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %xx = "xla.add"(%x, %x) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %v = "xla.get_tuple_element"(%t) {index = 0 : i64} : (tuple<tensor<2xi32>, tensor<i1>>) -> tensor<2xi32>
  %p = "xla.get_tuple_element"(%t) {index = 1 : i64} : (tuple<tensor<2xi32>, tensor<i1>>) -> tensor<i1>
  %nv = "xla.neg"(%v) : (tensor<2xi32>) -> tensor<2xi32>
  %np = "xla.not"(%p) : (tensor<i1>) -> tensor<i1>
  %in = "xla.tuple"(%nv, %np) : (tensor<2xi32>, tensor<i1>) -> tuple<tensor<2xi32>, tensor<i1>>
  %r = "xla.tuple"(%sq, %xx, %in) : (tensor<f32>, tensor<4xui32>, tuple<tensor<2xi32>, tensor<i1>>) -> tuple<tensor<f32>, tensor<4xui32>, tuple<tensor<2xi32>, tensor<i1>>>
  return %r : tuple<tensor<f32>, tensor<4xui32>, tuple<tensor<2xi32>, tensor<i1>>>
}
"""
ARGS = (np.float32(3), np.array([1, 2, 3, 0xFFFFFFFF], np.uint32), (np.array([5, -7], np.int32), np.True_))


@pytest.fixture
def prog(tmp_path):
    p = tmp_path / "prog.mlir"
    p.write_text(PROG)
    return p


def compile_cli(capsys, *args):
    rc = xc.main([str(a) for a in args])
    return rc, capsys.readouterr().err


def check_result(got):
    assert got[0] == np.float32(9) and got[0].dtype == np.float32
    np.testing.assert_array_equal(got[1], np.array([2, 4, 6, 0xFFFFFFFE], np.uint32))
    assert got[1].dtype == np.uint32
    np.testing.assert_array_equal(got[2][0], [-5, 7])
    assert got[2][1] == np.False_


def test_cpu_artifact_carries_its_signature(capsys, tmp_path, prog):
    out = tmp_path / "prog.vmfb"
    rc, err = compile_cli(capsys, prog, "--target=cpu", "-o", out, "-v")
    assert rc == 0, err
    assert "prog (f32[], u32[4], (s32[2], pred[])) -> (f32[], u32[4], (s32[2], pred[])) for cpu" in err
    exe = xla.load(out)                       # no target, no shapes: all from the artifact
    assert exe.target.name == "cpu"
    assert [str(s) for s in exe.parameter_shapes] == ["f32[]", "u32[4]", "(s32[2], pred[])"]
    assert str(exe.result_shape) == "(f32[], u32[4], (s32[2], pred[]))" and exe.replicas == 1
    check_result(exe(*ARGS))


def test_default_output_name_and_replicas(capsys, tmp_path, prog):
    rc, err = compile_cli(capsys, prog, "--replicas", "4")
    assert rc == 0, err
    assert xla.load(tmp_path / "prog.vmfb").replicas == 4


def test_plain_iree_run_module_runs_the_cpu_artifact(capsys, tmp_path, prog):
    out = tmp_path / "prog.vmfb"
    assert compile_cli(capsys, prog, "-o", out)[0] == 0
    r = subprocess.run([str(BIN / "iree-run-module"), f"--module={out}", "--device=local-task",
                        "--function=main", "--input=f32=3", "--input=4xi32=1,2,3,-1",
                        "--input=2xi32=5,-7", "--input=i1=01"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    results = re.findall(r"result\[\d\]: hal.buffer_view\n(.*)", r.stdout)
    assert results == ["f32=9", "4xi32=2 4 6 -2", "2xi32=-5 7", "i1=00"], r.stdout  # i1 prints as hex bytes


@pytest.mark.parametrize("cpu", ["host", "x86-64-v3", "znver3", "generic"])
def test_cpu_models(capsys, tmp_path, prog, cpu):
    out = tmp_path / f"prog-{cpu}.vmfb"
    rc, err = compile_cli(capsys, prog, f"--cpu={cpu}", "-o", out)
    assert rc == 0, err
    if cpu != "znver3" or "AuthenticAMD" in pathlib.Path("/proc/cpuinfo").read_text():
        check_result(xla.load(out)(*ARGS))


def test_vulkan_artifact(capsys, tmp_path, prog):
    out = tmp_path / "prog-vk.vmfb"
    rc, err = compile_cli(capsys, prog, "--target=vulkan", "-o", out)
    assert rc == 0, err
    data = out.read_bytes()
    assert b"vulkan-spirv-fb" in data
    if not device_available("vulkan"):
        pytest.skip("no Vulkan device on this machine (install mesa-vulkan-drivers for lavapipe)")
    exe = xla.load(out)
    assert exe.target.name == "vulkan"
    check_result(exe(*ARGS))


@pytest.mark.parametrize("tgt,option,fmt,chip", [
    ("cuda", "--cuda-arch=sm_86", b"cuda-nvptx-fb", "sm_86"),
    ("rocm", "--rocm-arch=gfx90a", b"rocm-hsaco-fb", "gfx90a"),
    ("vulkan", "--vulkan-target=ampere", b"vulkan-spirv-fb", "sm_80"),
])
def test_gpu_chip_options(capsys, tmp_path, prog, tgt, option, fmt, chip):
    out = tmp_path / f"prog-{tgt}.vmfb"
    rc, err = compile_cli(capsys, prog, f"--target={tgt}", option, "-o", out)
    assert rc == 0, err
    r = subprocess.run([str(BIN / "iree-dump-module"), str(out)], capture_output=True, text=True, timeout=120)
    assert fmt.decode() in r.stdout and re.search(rf'arch = \\?"{chip}\\?"', r.stdout)


@pytest.mark.parametrize("option,em,fmt", [
    ("--cpu=neoverse-v1", 183, "embedded-elf-arm_64"),
    ("--cpu=neoverse-n1", 183, "embedded-elf-arm_64"),
    ("--cpu=generic-rv64", 243, "embedded-elf-riscv_64"),
])
def test_cross_compiling_cpu_chips(capsys, tmp_path, prog, option, em, fmt):
    """--cpu names an aarch64 or riscv64 chip: the artifact holds an ELF for that machine
    (e_machine 183: AArch64, 243: RISC-V) and loading it on this x86-64 machine is an XlaError."""
    out = tmp_path / "cross.vmfb"
    rc, err = compile_cli(capsys, prog, option, "-o", out)
    assert rc == 0, err
    data = out.read_bytes()
    i = data.find(b"\x7fELF")
    assert i > 0 and int.from_bytes(data[i + 18:i + 20], "little") == em
    r = subprocess.run([str(BIN / "iree-dump-module"), str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and fmt in r.stdout
    with pytest.raises(xla.XlaError, match="holds machine code for"):
        xla.load(out)


def test_loading_with_the_wrong_target_is_an_error(capsys, tmp_path, prog):
    out = tmp_path / "prog.vmfb"
    assert compile_cli(capsys, prog, "-o", out)[0] == 0
    with pytest.raises(xla.XlaError, match="holds code for cpu, not vulkan"):
        xla.load(out, target="vulkan")


def test_emit_linalg(capsys, tmp_path, prog):
    out = tmp_path / "prog.linalg.mlir"
    rc, err = compile_cli(capsys, prog, "--emit=linalg", "-o", out)
    assert rc == 0, err
    text = out.read_text()
    assert "xla." not in text.replace("xlair.signature", "") and "linalg.generic" in text


@pytest.mark.parametrize("args,message", [
    (["--target=tpu"], "unknown target 'tpu'"),
    (["--cuda-arch=sm_80"], "--cuda-arch applies to --target=cuda, not --target=cpu"),
    (["--target=vulkan", "--cpu=znver3"], "--cpu applies to --target=cpu"),
    (["--replicas=0"], "--replicas must be at least 1"),
    (["--target=cuda", "--cuda-arch=sm_90"], "IREE could not compile for cuda"),
])
def test_bad_options(capsys, prog, args, message):
    rc, err = compile_cli(capsys, prog, *args, "-o", prog.with_suffix(".vmfb"))
    assert rc == 1 and message in err and "Traceback" not in err, err


@pytest.mark.parametrize("content,message", [
    (PROG[:200], "cannot parse the computation"),
    (b"\x89PNG\r\n\x1a\n\0\0", "not UTF-8 text"),
    (PROG.replace("@main", "@entry"), "no @main"),
    (PROG.replace('"xla.neg"(%v)', '"xla.neg"(%p)').replace("(tensor<2xi32>) -> tensor<2xi32>\n  %np",
                                                               "(tensor<i1>) -> tensor<2xi32>\n  %np"),
     "'xla.neg'"),
])
def test_bad_input(capsys, tmp_path, content, message):
    p = tmp_path / "bad.mlir"
    p.write_text(content) if isinstance(content, str) else p.write_bytes(content)
    rc, err = compile_cli(capsys, p)
    assert rc == 1 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "bad.vmfb").exists()


def test_target_limitation_is_reported(capsys, tmp_path):
    p = tmp_path / "clz.mlir"
    p.write_text('func.func @main(%a: tensor<3xi8>) -> tensor<3xi8> {\n'
                 '  %0 = "xla.clz"(%a) : (tensor<3xi8>) -> tensor<3xi8>\n  return %0 : tensor<3xi8>\n}\n')
    rc, err = compile_cli(capsys, p, "--target=vulkan")
    assert rc == 1 and "target vulkan cannot run 'xla.clz' on s8" in err
    rc, err = compile_cli(capsys, p, "--target=cpu")
    assert rc == 0


def test_console_script(tmp_path, prog):
    out = tmp_path / "cli.vmfb"
    r = subprocess.run([str(BIN / "xlair-compile"), str(prog), "--target=cpu", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    check_result(xla.load(out)(*ARGS))
    r = subprocess.run([str(BIN / "xlair-compile"), str(tmp_path / "missing.mlir")], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 1 and "cannot read" in r.stderr and "Traceback" not in r.stderr
