"""xlair-run: .mlir or .vmfb, inputs from .npy files and literals, results printed or saved,
--target, --replicas, --benchmark, --interpret; errors are diagnostics with exit status 1."""
import hashlib
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from xlair.targets import device_available
from xlair.tools import compile as xc
from xlair.tools import run as xr

BIN = pathlib.Path(sys.executable).parent

AXPY = """func.func @main(%a: tensor<f32>, %x: tensor<4xf32>, %y: tensor<4xui8>) -> tuple<tensor<4xf32>, tensor<4xui8>> {
  %ax = "xla.mul"(%a, %x) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %s = "xla.add"(%ax, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n = "xla.not"(%y) : (tensor<4xui8>) -> tensor<4xui8>
  %r = "xla.tuple"(%s, %n) : (tensor<4xf32>, tensor<4xui8>) -> tuple<tensor<4xf32>, tensor<4xui8>>
  return %r : tuple<tensor<4xf32>, tensor<4xui8>>
}
"""
TUPLE_IN = """func.func @main(%t: tuple<tensor<2xi32>, tensor<f64>>) -> tensor<2xf64> {
  %v = "xla.get_tuple_element"(%t) {index = 0 : i64} : (tuple<tensor<2xi32>, tensor<f64>>) -> tensor<2xi32>
  %s = "xla.get_tuple_element"(%t) {index = 1 : i64} : (tuple<tensor<2xi32>, tensor<f64>>) -> tensor<f64>
  %c = "xla.convert_element_type"(%v) {new_element_type = f64} : (tensor<2xi32>) -> tensor<2xf64>
  %r = "xla.mul"(%c, %s) {broadcast_dimensions = array<i64>} : (tensor<2xf64>, tensor<f64>) -> tensor<2xf64>
  return %r : tensor<2xf64>
}
"""


@pytest.fixture
def axpy(tmp_path):
    p = tmp_path / "axpy.mlir"
    p.write_text(AXPY)
    return p


def run_cli(capsys, *args):
    rc = xr.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_literals_and_printing(capsys, axpy):
    rc, out, err = run_cli(capsys, axpy, "2", "[1, 2, 3, 4.5]", "[0, 1, 254, 255]")
    assert rc == 0, err
    assert out == ("result[0]: f32[4] = [ 3. ,  6. ,  9. , 13.5]\n"
                   "result[1]: u8[4] = [255, 254,   1,   0]\n")


def test_npy_and_iree_inputs_and_npy_outputs(capsys, tmp_path, axpy):
    np.save(tmp_path / "x.npy", np.array([1, -1, 0.5, 2], np.float32))
    rc, out, err = run_cli(capsys, axpy, "--input=f32=0.5", "--input", tmp_path / "x.npy",
                           "--input=4xi8=0,-1,7,8", "-o", tmp_path / "r.npy")
    assert rc == 0, err
    assert out == ""
    np.testing.assert_array_equal(np.load(tmp_path / "r_0.npy"), np.array([1.5, -1.5, 0.75, 3], np.float32))
    r1 = np.load(tmp_path / "r_1.npy")
    assert r1.dtype == np.uint8 and list(r1) == [255, 0, 248, 247]
    # one -o per result leaf
    rc, out, err = run_cli(capsys, axpy, "1", tmp_path / "x.npy", "[1, 2, 3, 4]", "-o", tmp_path / "a.npy",
                           "-o", tmp_path / "b.npy")
    assert rc == 0 and np.load(tmp_path / "b.npy").tolist() == [254, 253, 252, 251]


def test_tuple_parameter_literal(capsys, tmp_path):
    p = tmp_path / "t.mlir"
    p.write_text(TUPLE_IN)
    rc, out, err = run_cli(capsys, p, "([3, -4], 0.5)")
    assert rc == 0, err
    assert out == "result: f64[2] = [ 1.5, -2. ]\n"


def test_special_values(capsys, tmp_path):
    p = tmp_path / "t.mlir"
    p.write_text(TUPLE_IN)
    rc, out, err = run_cli(capsys, p, "([1, -1], inf)")
    assert rc == 0 and out == "result: f64[2] = [ inf, -inf]\n"
    rc, out, err = run_cli(capsys, p, "([0, 1], nan)")
    assert rc == 0 and "nan, nan" in out


def test_vmfb_input_and_benchmark(capsys, tmp_path, axpy):
    vmfb = tmp_path / "axpy.vmfb"
    assert xc.main([str(axpy), "-o", str(vmfb)]) == 0
    capsys.readouterr()
    rc, out, err = run_cli(capsys, vmfb, "2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", "--benchmark", "25")
    assert rc == 0, err
    assert out.startswith("result[0]: f32[4] = [ 3.,  6.,  9., 12.]\n")
    m = re.search(r"benchmark: 25 calls, median (\d+\.\d+) ms \(min (\d+\.\d+) ms, max (\d+\.\d+) ms\)", out)
    assert m and float(m.group(2)) <= float(m.group(1)) <= float(m.group(3)), out


def test_interpret(capsys, axpy):
    rc, out, err = run_cli(capsys, axpy, "2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", "--interpret")
    assert rc == 0 and out.startswith("result[0]: f32[4] = [ 3.,  6.,  9., 12.]")


def test_vulkan(capsys, axpy):
    if not device_available("vulkan"):
        pytest.skip("no Vulkan device on this machine (install mesa-vulkan-drivers for lavapipe)")
    rc, out, err = run_cli(capsys, axpy, "2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", "--target=vulkan")
    assert rc == 0, err
    assert out == "result[0]: f32[4] = [ 3.,  6.,  9., 12.]\nresult[1]: u8[4] = [254, 254, 254, 254]\n"


@pytest.mark.parametrize("args,message", [
    (["2", "[1, 2, 3, 4]"], "the program takes 3 input(s) (f32[], f32[4], u8[4]); got 2"),
    (["2", "[1, 2, 3]", "[1, 1, 1, 1]"], "argument 1 must be f32[4]; got f32[3]"),
    (["2", "[1, 2, 3, 4]", "[1.5, 1, 1, 1]"], "argument 2 must be u8[4]; got float64 values"),
    (["2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", "--replicas", "0"], "--replicas must be at least 1; got 0"),
    (["2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", "--target=tpu"], "unknown target 'tpu'"),
    (["2", "open('x')", "[1, 1, 1, 1]"], "is neither a .npy file, a literal nor DIMSxTYPE=values"),
    (["2", "missing.npy", "[1, 1, 1, 1]"], "cannot read missing.npy"),
    (["2", "4xf32=1,2,3", "[1, 1, 1, 1]"], "has 3 values for shape [4]"),
    (["2", "4xf64=1,2,3,4.1", "[1, 1, 1, 1]"], "input 1: float64 values do not all fit f32[4]"),
    (["2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", "--benchmark", "-3"], "--benchmark takes a number of calls"),
    (["2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", "-o", "a.npy", "-o", "b.npy", "-o", "c.npy"], "3 -o files for 2 results"),
])
def test_bad_use(capsys, axpy, args, message):
    rc, out, err = run_cli(capsys, axpy, *args)
    assert rc == 1, out
    assert message in err and err.startswith("xlair-run: error:") and "Traceback" not in err, err


def test_replicas_of_an_artifact(capsys, tmp_path, axpy):
    vmfb = tmp_path / "r.vmfb"
    assert xc.main([str(axpy), "--replicas", "2", "-o", str(vmfb)]) == 0
    rc, out, err = run_cli(capsys, vmfb, "2", "[1, 2, 3, 4]", "[1, 1, 1, 1]")
    assert rc == 0, err
    assert out == ("result[0]: f32[4] = [ 3.,  6.,  9., 12.]\nresult[1]: u8[4] = [254, 254, 254, 254]\n"
                   "result[2]: f32[4] = [ 3.,  6.,  9., 12.]\nresult[3]: u8[4] = [254, 254, 254, 254]\n")
    rc, out, err = run_cli(capsys, vmfb, "2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", "--replicas", "1")
    assert rc == 1 and "compiled for 2 replica(s); --replicas says 1" in err
    rc, out, err = run_cli(capsys, vmfb, "--interpret")
    assert rc == 1 and "--interpret needs the .mlir" in err


def test_sha256_pins_the_artifact(capsys, tmp_path, axpy):
    """--sha256: the artifact runs when its sha256 (sha256sum's hex) is the one given, and is
    refused, naming the digest found, when it is not; a .mlir has no artifact to pin."""
    vmfb = tmp_path / "axpy.vmfb"
    assert xc.main([str(axpy), "-o", str(vmfb)]) == 0
    capsys.readouterr()
    digest = hashlib.sha256(vmfb.read_bytes()).hexdigest()
    rc, out, err = run_cli(capsys, vmfb, "2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", f"--sha256={digest}")
    assert rc == 0 and out.startswith("result[0]: f32[4] = [ 3.,  6.,  9., 12.]\n"), err
    other = hashlib.sha256(b"another artifact").hexdigest()
    rc, out, err = run_cli(capsys, vmfb, "2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", "--sha256", other)
    assert rc == 1 and out == "" and err.startswith(f"xlair-run: error: xla.load expected_sha256 {other} must be the "
                                                    f"sha256 of {vmfb}") and err.rstrip().endswith(f"got {digest}"), err
    rc, out, err = run_cli(capsys, axpy, "2", "[1, 2, 3, 4]", "[1, 1, 1, 1]", f"--sha256={digest}")
    assert rc == 1 and "--sha256 checks a .vmfb artifact" in err, err


def test_bad_program(capsys, tmp_path):
    p = tmp_path / "bad.mlir"
    p.write_text(AXPY[:150])
    rc, out, err = run_cli(capsys, p, "1")
    assert rc == 1 and "cannot parse the computation" in err
    p = tmp_path / "bad.vmfb"
    p.write_bytes(b"not a flatbuffer at all")
    rc, out, err = run_cli(capsys, p)
    assert rc == 1 and "not a loadable IREE module" in err, err


def test_console_script(tmp_path, axpy):
    r = subprocess.run([str(BIN / "xlair-run"), str(axpy), "2", "[1, 2, 3, 4]", "[1, 1, 1, 1]"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("result[0]: f32[4] = [ 3.,  6.,  9., 12.]")
    r = subprocess.run([str(BIN / "xlair-run"), str(axpy)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "takes 3 input(s)" in r.stderr and "Traceback" not in r.stderr


REPLICA_ID = """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %id = "xla.replica_id"() : () -> tensor<ui32>
  %f = "xla.convert_element_type"(%id) {new_element_type = f32} : (tensor<ui32>) -> tensor<f32>
  %y = "xla.add"(%x, %f) {broadcast_dimensions = array<i64>} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
"""


@pytest.mark.parametrize("interpret", [False, True])
def test_replicas_run_on_the_same_inputs(capsys, tmp_path, interpret):
    """x + replica_id on 3 replicas: each replica's result in replica order."""
    p = tmp_path / "rid.mlir"
    p.write_text(REPLICA_ID)
    rc, out, err = run_cli(capsys, p, "[1, 2]", "--replicas", "3", *(["--interpret"] if interpret else []))
    assert rc == 0, err
    assert out == "result[0]: f32[2] = [1., 2.]\nresult[1]: f32[2] = [2., 3.]\nresult[2]: f32[2] = [3., 4.]\n"
