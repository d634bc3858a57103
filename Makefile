# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)
JOBS   ?= auto

.PHONY: demo test status fuzz bench clean conformance

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/mlp_demo.py

# The whole suite, in parallel; docs/status.md is regenerated from the registry and the results.
test: $(STAMP)
	rm -rf build/test-results
	$(PY) -m pytest -n $(JOBS) tests; rc=$$?; \
	  $(PY) -m xlair.tools.status --results build/test-results -o docs/status.md; exit $$rc

# The StableHLO conformance suites through the importer and the CPU target (long: not part of
# `make test`, which runs a sample); writes docs/conformance.md.
conformance: $(STAMP)
	$(PY) tests/conformance/run.py --jobs 2

status: $(STAMP)
	$(PY) -m xlair.tools.status --results build/test-results -o docs/status.md

clean:
	rm -rf build .pytest_cache
