"""The GPU subset (pytest -m gpu): programs of the real-program suite that failed or were slowest
on a real NVIDIA GPU (issue 39), run on CUDA through xlair.jit against jax.jit on the CPU.
Where this machine has no CUDA device (IREE's cuda driver finds none), every case is skipped
with that reason; bench/bench_gpu.py measures them on a GPU machine that has only the runtime."""
import pytest

from xlair.targets import device_available
from model_compare import mismatches, reference, run_xlair
from model_programs import PROGRAMS

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not device_available("cuda"),
                                 reason="no CUDA device here (IREE's cuda driver found none): the GPU subset "
                                        "runs where one is; make bench-gpu measures on a GPU machine")]

#: the binding limit (gpt_adamw_step), the VM's loop bug (bfgs_minimize), loops (collatz, scan)
SUBSET = ["mlp_forward", "gpt_adamw_step", "bfgs_minimize", "while_loop_collatz", "scan_rnn",
          "transformer_encoder_grad"]


@pytest.mark.parametrize("name", SUBSET)
def test_program_on_cuda(name):
    prog = PROGRAMS[name]
    fn, args = prog.make()
    bad = mismatches(prog, run_xlair(prog, fn, args, "cuda"), reference(prog, fn, args))
    assert not bad, f"{name} on cuda differs from jax.jit:\n  " + "\n  ".join(bad)
