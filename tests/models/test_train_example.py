"""examples/train_flax.py: a short run trains (the loss falls) and its loss curve through
xlair.jit follows jax.jit's."""
import pathlib
import re
import runpy

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_flax.py"


def test_train_flax_follows_jax(capsys):
    main = runpy.run_path(str(EXAMPLE), run_name="train_flax")["main"]
    assert main(["--steps", "60"]) == 0
    out = capsys.readouterr().out
    rows = [tuple(map(float, m.groups())) for m in re.finditer(r"^\s*\d+\s+(\S+)\s+(\S+)$", out, re.M)]
    assert len(rows) >= 10, out
    for ours, theirs in rows:
        assert abs(ours - theirs) <= 1e-4 * max(1.0, abs(theirs)), out
    assert rows[-1][1] < 0.9 * rows[0][1], out          # it trains
    gap = float(re.search(r"largest loss difference over 60 steps: (\S+)", out).group(1))
    assert gap < 1e-4, out
