"""Explanations of the conformance failures that are understood, for docs/conformance.md.

Each entry: `match` (a regex on the case name), optionally `reason` (a regex on the failure
reason), a `title` (the group heading) and the `diagnosis` (what is wrong, where, and who
owns the fix).  A failure without an entry is grouped by its reason alone.
"""

DIAGNOSES: list[dict] = [
]
