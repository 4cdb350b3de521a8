# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test

.PHONY: demo test test-lite bench templates clean

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
