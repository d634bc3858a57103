# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)
JOBS   ?= auto

# Debian packages the tests and the demo use when they can: Mesa's lavapipe, a Vulkan driver
# that runs on the CPU (without it the Vulkan tests are skipped, with the reason), and OpenMPI
# (mpirun, and the headers mpi4py builds against when pip has no wheel; without it the MPI
# tests are skipped), and a C compiler with the C library's headers (gcc, libc6-dev) for the
# PJRT plugin's C shim (below).  Installed before the venv, so that pip finds MPI.
DEB_PACKAGES ?= mesa-vulkan-drivers openmpi-bin libopenmpi-dev gcc libc6-dev

# The PJRT plugin's C fast path (python/xlair/pjrt/shim.c, docs/pjrt.md "The C shim"): a C
# library the plugin loads with ctypes, built against the headers of $(PYTHON) (the venv's).  Built with the venv (the $(STAMP) rule: make demo,
# make test, make bench) and again whenever shim.c changes; without a C compiler the plugin
# uses its Python-built PJRT table (slower per call) and this says so.
SHIM := python/xlair/pjrt/libxlair_pjrt_shim.so

.PHONY: demo test test-full test-gpu-compile status jax-tests fuzz bench bench-avx2 bench-gpu-artifacts bench-gpu clean conformance system-deps

$(STAMP): pyproject.toml | $(SHIM)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,models]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# (an order-only prerequisite of $(STAMP): brought up to date by every rule that needs the
# venv, without reinstalling it when only shim.c changed)
$(SHIM): python/xlair/pjrt/shim.c
	$(CC) -O2 -Wall -shared -fPIC -I"$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
	  -o $@ $< || \
	  echo "no C shim built ($(CC) failed or is missing): the PJRT plugin uses its Python-built table"

# Installs the missing DEB_PACKAGES with apt-get (as root, or through password-less sudo);
# idempotent, and where apt is unavailable it says so and carries on.
system-deps:
	@missing=""; \
	if command -v dpkg-query >/dev/null 2>&1; then \
	  for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	  done; \
	else missing=" $(DEB_PACKAGES)"; fi; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "system-deps: no apt-get here, not installing:$$missing (Vulkan and MPI tests will be skipped without them, and the PJRT plugin's C shim is not built without a compiler)"; exit 0; fi; \
	SUDO=""; \
	if [ "$$(id -u)" != 0 ]; then \
	  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	  else echo "system-deps: not root and no password-less sudo, not installing:$$missing (Vulkan and MPI tests will be skipped)"; exit 0; fi; \
	fi; \
	echo "system-deps: installing$$missing"; \
	( $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing ) \
	  || echo "system-deps: apt-get could not install$$missing (Vulkan and MPI tests will be skipped)"

demo: system-deps $(STAMP)
	$(PY) examples/mlp_demo.py

# The end-to-end sample `make test` runs a second time compiled for the portable CPU level
# x86-64-v3 (AVX2, no AVX-512: an AMD Zen 3's), with the quick fuzz profile, so that a machine
# with AVX-512 also sees what fails without it (XLAIR_CPU names the cpu target's default chip; see docs/targets.md).
PORTABLE_CPU    ?= x86-64-v3
PORTABLE_SAMPLE := $(addprefix tests/e2e/test_,elementwise.py spec_examples.py edge_values.py conv.py \
                     random.py fft.py linalg_ops.py conformance_regressions.py windows.py data_ops.py \
                     device_loops.py) \
                   tests/fuzz/test_fuzz_quick.py

# The suite in its quick profile (a fixed sample of the slowest parametrized checks: the
# `sample` and `full` marks, tests/conftest.py), in parallel (worksteal: a worker that runs out takes
# tests queued for the other; with xdist's default one worker ran the last 20-odd minutes of a cold
# run alone), naming its 25 slowest tests, then the portable sample; docs/status.md is regenerated from the
# registry and the results, docs/models.md from the real-program suite's outcomes, docs/errors.md
# (the constraint ids errors cite) from the op records.
test: system-deps $(STAMP)
	rm -rf build/test-results
	$(PY) -m pytest -n $(JOBS) --dist worksteal --durations=25 tests; rc=$$?; \
	  echo "== the end-to-end sample compiled for $(PORTABLE_CPU)"; \
	  XLAIR_CPU=$(PORTABLE_CPU) XLAIR_TEST_TARGETS=cpu $(PY) -m pytest -n $(JOBS) $(PORTABLE_SAMPLE) || rc=1; \
	  $(PY) -m xlair.tools.status --results build/test-results -o docs/status.md || rc=1; \
	  $(PY) -m xlair.tools.errors -o docs/errors.md || rc=1; \
	  $(PY) tests/models/report.py --results build/test-results/models -o docs/models.md || rc=1; exit $$rc

# The whole suite: what `make test` does, every instance of every test (XLAIR_TEST_FULL=1: each
# program and linear-algebra function compiled for CUDA and for ROCm, every shape and type of the
# device-code linear algebra, every Vulkan case, the real-program suite under the plugin).  Long:
# about 3.9 hours of test time, 2 hours of wall time on 2 cores, with a cold compile cache (tests/xlair_testing.py FULL).
test-full:
	XLAIR_TEST_FULL=1 $(MAKE) test

# The linear algebra's GPU compile checks for every GPU target and function (`make test`
# compiles a sample of the functions, each for one of CUDA and ROCm in turn: gpu_cases).
test-gpu-compile: system-deps $(STAMP)
	XLAIR_TEST_FULL=1 $(PY) -m pytest -n $(JOBS) tests/e2e/test_linalg_device.py -k compile

# The StableHLO conformance suites through the importer and the CPU target (long: not part of
# `make test`, which runs a sample); writes docs/conformance.md.
conformance: $(STAMP)
	$(PY) tests/conformance/run.py --jobs 2

# JAX's own tests (jax-v0.10.2's, from /work/shared/conformance/jax/tests) on the PJRT plugin:
# the fifteen files that exercise the op set, one process each, JAX_PLATFORMS=xlair; writes
# docs/jax-tests.md (long: `make test` runs a sample, tests/pjrt/test_jax_suite.py).  The whole
# suite: `$(PY) tests/jax_suite/run.py --all`.
jax-tests: $(STAMP)
	$(PY) tests/jax_suite/run.py --jobs 2 -o docs/jax-tests.md

# The long profile of the differential fuzzer (10,000 random programs against the numpy
# reference interpreter, 20,000 ill-formed calls); writes its counts to docs/reliability.md.
fuzz: $(STAMP)
	$(PY) tests/fuzz/run.py --programs 10000 --batch 50 --calls 20000 --jobs 2 --report docs/reliability.md

# The benchmark suite: the op section (every workload on xlair (CPU), numpy and XLA:CPU) and the
# models section (the real-program suite against jax.jit, per call and cold compile), results
# checked, written to bench/RESULTS.md (about 6-8 minutes on 2 cores; bench/NOTES.md says what
# was changed and why).  `bench.py --section ops|models` runs one; bench/bench_linalg.py and
# bench/compile_breakdown.py run on their own.
bench: $(STAMP)
	$(PY) -c "import jax, flax, optax" 2>/dev/null || $(PY) -m pip install -q -e '.[bench,models]'
	$(PY) bench/bench.py

# The same with AVX2 code on both sides (xlair's x86-64-v3, XLA:CPU's --xla_cpu_max_isa=AVX2) on
# a machine with AVX-512: a stand-in for a CPU without it, written to bench/RESULTS-avx2.md.
bench-avx2: $(STAMP)
	$(PY) -c "import jax, flax, optax" 2>/dev/null || $(PY) -m pip install -q -e '.[bench,models]'
	XLAIR_CPU=$(PORTABLE_CPU) XLA_FLAGS=--xla_cpu_max_isa=AVX2 $(PY) bench/bench.py -o bench/RESULTS-avx2.md

# xlair on an NVIDIA GPU against XLA:GPU, in two steps (bench/bench_gpu.py): here, the CUDA
# artifacts, the programs exported by jax.export, the inputs, jax.jit's CPU results and the
# iree-base-runtime wheel for Python 3.12, into build/gpu-bench; then, on the GPU machine (its
# python3 with jax[cuda]; no venv, nothing from a registry), `make bench-gpu` checks and times
# them and writes bench/RESULTS-gpu.md.
bench-gpu-artifacts: $(STAMP)
	$(PY) -c "import jax, flax, optax, flatbuffers" 2>/dev/null || $(PY) -m pip install -q -e '.[bench,models]'
	$(PY) bench/bench_gpu.py compile --out build/gpu-bench

bench-gpu:
	@test -f build/gpu-bench/manifest.json || { echo "bench-gpu: no build/gpu-bench: run 'make bench-gpu-artifacts' first (on any machine) and carry the folder"; exit 1; }
	python3 bench/bench_gpu.py run --dir build/gpu-bench --vulkan -o bench/RESULTS-gpu.md

status: $(STAMP)
	$(PY) -m xlair.tools.status --results build/test-results -o docs/status.md
	$(PY) -m xlair.tools.errors -o docs/errors.md

clean:
	rm -rf build .pytest_cache
