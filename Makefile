# One target per task. `make test` is the README's test command and what .ci/run calls.
PY ?= .venv/bin/python
VENV ?= .venv
# test processes in parallel, each with its own redis-server (0: all in this one)
PYTEST_WORKERS ?= 4
# more options for `joinops sandbox --slack`, e.g. SANDBOX_ARGS='--port 8001 --keep-state'
SANDBOX_ARGS ?=

.PHONY: install lint typecheck test stress check chart-check image bench sandbox clean

install:            ## create .venv and install joinops with its dev tools
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(MAKE) install

lint:               ## ruff (lint and formatting) and lint-imports (the import contracts in pyproject)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

typecheck:          ## mypy on every package
	$(VENV)/bin/mypy

test: $(VENV)/.installed  ## the whole suite, in parallel; each test process starts its own redis-server
	scripts/test-tools.sh
	$(VENV)/bin/pytest -q -n $(PYTEST_WORKERS) --dist loadfile

stress: $(VENV)/.installed  ## the suite 3 times under two CPU hogs; writes docs/stress.md
	scripts/test-tools.sh
	scripts/stress-tests.sh

check: lint typecheck test

chart-check:        ## helm lint, render and strict-validate the chart (fetches a pinned helm into .tools/)
	PY=$(PY) scripts/chart-check.sh

image:              ## build the image with no registry (debootstrap base, buildah) and smoke-test it with podman
	PY=$(PY) scripts/build-image.sh
	PY=$(PY) scripts/image-smoke.sh

bench:              ## benchmarks; prints a table and writes bench/results/latest.json
	$(PY) -m bench

sandbox: $(VENV)/.installed  ## the bot, a simulated Slack's page, simulated clusters and a redis-server of its own, in ./sandbox; Ctrl-C stops it all
	scripts/system-tools.sh redis-server
	$(VENV)/bin/joinops sandbox --slack $(SANDBOX_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .grimp_cache
