# `make run` starts the app; `make test` runs the whole test suite (CI), printing every test's
# duration over a second; `make test-fast` runs the tests not marked slow (each under a second),
# the edit-run loop. All create the virtual environment on first use and install what the
# project needs.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8501
# `make test`'s worker processes (pytest-xdist): many slow tests wait on servers, browsers and paced
# searches, so three workers keep two cores busy (the suite then waits on the CPU, not on them: about
# 16 minutes against 32 in one process); tests/conftest.py groups them (a file per worker, the
# Chromium tests one after another). TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 3

.PHONY: run test test-fast bench clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m nasviz.dashboard.serve --server.port $(PORT)

test: $(STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) --no-loadscope-reorder --durations=0 --durations-min=1.0 $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow" $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts
