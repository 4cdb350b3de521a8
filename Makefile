# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test

.PHONY: demo test test-kernels test-lite bench templates clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[excel]"
	touch $@

$(STAMP_TEST): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[excel,test]"
	touch $@ $(STAMP_RUN)

demo: $(STAMP_RUN)
	$(VENV)/bin/xlcalib demo --out demo_output

test: $(STAMP_TEST)
	$(PY) -m pytest tests

# The numerical tests a second time on another BLAS kernel with one BLAS thread.  The numpy and scipy wheels carry
# OpenBLAS with a kernel per CPU family and pick one at run time; the last bits of a computed float depend on that
# kernel and on the number of BLAS threads, so a test that compares a computed float with == can pass on the
# machine that wrote it and fail on a user's (a noise scale w came out 0.9999999999999999, not 1, on some CPUs;
# Sandybridge's kernel shows it here too).  `make test` runs with this machine's own kernel and threads; this run
# forces Sandybridge's (AVX without FMA, 2011: no CI or recent machine picks it by itself, so it differs from the
# CI machine's own).  Its first line prints the kernel OpenBLAS took ("Core: Sandybridge", for numpy's copy and
# for scipy's; .ci/run checks it); outside x86-64 OpenBLAS ignores the name and only the thread count differs.
# The files: those whose results come from BLAS/LAPACK or compare numbers with the core's (about 3 minutes;
# `make test` takes 10-15); a new file of numerical tests belongs in this list.
KERNEL ?= Sandybridge
KERNEL_ENV := OPENBLAS_CORETYPE=$(KERNEL) OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
NUMERIC_TESTS := $(patsubst %,tests/test_%.py,calibration models uncertainty resolution censoring decisions \
	next_reads next_reads_rules behaviour design presentation reliability agreement ordinal scoring ground_truth \
	plackett_luce udf udf_agreement udf_errors index_dtype cli imports_integration exercises_agreement \
	exercises_assignment exercises_ground_truth exercises_ordinal_agreement exercises_panel_calibration \
	exercises_reliability anonymous lottery rasch rasch_girth rasch_workbook)

test-kernels: $(STAMP_TEST)
	$(KERNEL_ENV) OPENBLAS_VERBOSE=2 $(PY) -c "import numpy, scipy.linalg"
	$(KERNEL_ENV) $(PY) -m pytest $(NUMERIC_TESTS)

# xlwings Lite for real: xlcalib's wheel in Pyodide 0.27.7 under Node (see lite/fetch.py, lite/run.mjs).
LITE_CACHE ?= .lite-cache
test-lite: $(STAMP_TEST)
	$(PY) lite/fetch.py --cache $(LITE_CACHE)
	rm -rf $(LITE_CACHE)/dist $(LITE_CACHE)/run
	$(PY) -m pip wheel --quiet --no-deps -w $(LITE_CACHE)/dist .
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) lite/lite_calls.py --out $(LITE_CACHE)/run/cpython.json
	node lite/run.mjs --cache $(LITE_CACHE) --repo .

bench: $(STAMP_TEST)
	$(PY) benchmarks/run_all.py

templates: $(STAMP_RUN)
	$(VENV)/bin/xlcalib templates --out workbook_templates

clean:
	rm -rf $(VENV) demo_output .pytest_cache .hypothesis $(LITE_CACHE)
