"""A representative sample of the StableHLO conformance suites, run in `make test` (the whole
suites: `make conformance`).  Each case goes through the same harness as the full run: the
importer, one batched compile for the CPU, and StableHLO's own comparisons against the
suite's expected values."""
from __future__ import annotations

import pytest

import harness

#: interpret/ files: element-wise ops on every type, control flow, data movement, reductions,
#: contractions, the dynamic ops with static results.
INTERPRET = [
    "add.mlir", "and.mlir", "broadcast_in_dim.mlir", "case.mlir", "call.mlir", "compare.mlir",
    "concatenate.mlir", "convert.mlir", "dot_general.mlir", "dynamic_iota.mlir", "dynamic_slice.mlir",
    "dynamic_update_slice.mlir", "if.mlir", "iota.mlir", "map.mlir", "pad.mlir", "reduce.mlir",
    "reshape.mlir", "reverse.mlir", "select.mlir", "shift_right_arithmetic.mlir", "slice.mlir",
    "sort.mlir", "transpose.mlir", "tuple_and_get_tuple_element.mlir", "while.mlir",
]
#: testdata/ files: JAX programs with chlo decompositions, loops, sorts, gathers, scatters.
TESTDATA = [
    "abs_float32_20_20.mlir", "add_any_complex64_2_complex64_2.mlir", "argmax_int32_15.mlir",
    "cumsum_float32_8_9.mlir", "dot_general_int16_4_3_float32_3_6.mlir", "erf_float32_20_20_chlo.mlir",
    "lgamma_float32_20_20_chlo.mlir", "random_split_.mlir", "sin_float32_20_20.mlir", "sort_float32_5_7.mlir",
]

pytestmark = pytest.mark.skipif(not harness.suite_files("interpret"),
                                reason=f"the StableHLO suites are not at {harness.SUITE_DIR}")


def _existing(suite, names):
    have = set(harness.suite_files(suite))
    missing = [n for n in names if n not in have]
    assert not missing, f"sample files missing from {harness.SUITE_DIR / suite}: {missing}"
    return names


def test_sample_passes():
    cases = [c for f in _existing("interpret", INTERPRET) for c in harness.interpret_cases(f)]
    cases += [harness.testdata_case(f) for f in _existing("testdata", TESTDATA)]
    harness.run_cases(cases)
    bad = [f"{c.name} ({c.stage}): {c.reason}" for c in cases if c.status == "fail"]
    assert not bad, "\n".join(bad)
    passed = [c for c in cases if c.status == "pass"]
    assert len(passed) >= 146, f"only {len(passed)} sample cases passed (146 did)"
    # what the sample leaves out is unsupported for a stated reason: XLA's type set
    for c in cases:
        if c.status == "unsupported":
            assert "not an XLA element type" in c.reason or "XLA" in c.reason, (c.name, c.reason)


def test_unsupported_and_failing_cases_are_told_apart():
    (i4,) = [c for c in harness.interpret_cases("add.mlir") if c.name.endswith("add_op_test_si4")]
    assert i4.status == "unsupported" and "element type i4" in i4.reason
    # a wrong expected value is a failure with the values named
    cases = [c for c in harness.interpret_cases("add.mlir") if c.name.endswith("add_op_test_i1")]
    assert cases and cases[0].status == "pending"
    case = cases[0]
    case.checks[0].expected = ~case.checks[0].expected
    harness.run_cases([case])
    assert case.status == "fail" and case.reason.startswith("wrong values") and "expected" in case.reason


def test_run_parallel_cases_run_as_replicas():
    # one program on every process: replicas; a program per process: executables in threads
    cases = [c for f in ("all_reduce.mlir", "reduce_scatter.mlir", "send_recv.mlir", "partition_id.mlir")
             for c in harness.interpret_cases(f)]
    harness.run_cases(cases)
    bad = [f"{c.name} ({c.stage}): {c.reason}" for c in cases if c.status == "fail"]
    assert not bad, "\n".join(bad)
    assert sum(c.status == "pass" for c in cases) >= 10
    (part,) = [c for c in cases if c.file == "partition_id.mlir"]
    assert part.status == "unsupported" and "partitions per replica" in part.reason
