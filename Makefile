# One target per task. `make test` is the README's test command and what .ci/run calls.
PY ?= .venv/bin/python
VENV ?= .venv

.PHONY: install lint typecheck test check chart-check image bench sandbox clean

install:            ## create .venv and install joinops with its dev tools
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'

lint:               ## ruff (lint and formatting) and lint-imports (the import contracts in pyproject)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

typecheck:          ## mypy on every package
	$(VENV)/bin/mypy

test:               ## the whole test suite (needs Redis at REDIS_URL, default localhost:6379)
	$(VENV)/bin/pytest -q

check: lint typecheck test

chart-check:        ## helm lint, render and strict-validate the chart (fetches a pinned helm into .tools/)
	PY=$(PY) scripts/chart-check.sh

image:              ## build the image with no registry (debootstrap base, buildah) and smoke-test it with podman
	PY=$(PY) scripts/build-image.sh
	PY=$(PY) scripts/image-smoke.sh

bench:              ## benchmarks; prints a table and writes bench/results/latest.json
	$(PY) -m bench

sandbox:            ## simulated clusters on loopback, configured in ./sandbox
	$(VENV)/bin/joinops sandbox

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .grimp_cache
