"""The quick profile of the differential fuzzer (`make fuzz` runs the long one)."""
import random

import pytest

from fuzz.calls import random_call
from fuzz.run import run_batch


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_random_programs_match_the_reference(seed):
    r = run_batch(seed, 25)
    assert r["failures"] == [], r["failures"][:3]


def test_random_ill_formed_calls_raise_xla_error_only():
    rng = random.Random(5)
    wrong = [d for outcome, d in (random_call(rng) for _ in range(1500)) if outcome == "wrong_exception"]
    assert wrong == [], wrong[:3]
