# Two commands for a fresh machine: `make run` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= 16
STAMP := $(VENV)/.installed

.PHONY: install lock system-deps run test lint format dry-run report base-image bench clean

# The tool installs from its lock (requirements/, written by `make lock`): every package at
# its pinned version, each download checked against its hashes; then the package itself
# (pip refuses an editable install in hash-checking mode, and the lock holds its dependencies).
$(STAMP): pyproject.toml requirements/lock.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements/lock.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

# The test suite also exercises the stage classifier (torch: large, so not in `make run`).
$(STAMP)-stage: $(STAMP) requirements/lock-stage.txt
	$(BIN)/pip install --quiet --require-hashes -r requirements/lock-stage.txt
	touch $@

install: $(STAMP)

## Rewrite the locks after a change to pyproject.toml's requirements (tests/test_env_files.py
## fails until then). Pins move only where the new ranges force them; `make lock
## UPGRADE=--upgrade` moves every pin to the newest release allowed. One universal resolution
## for every platform and every Python from requires-python's floor (LOCK_PYTHON) up; the
## stage lock is resolved first and the smaller lock within it, so the two agree on every pin.
LOCK_PYTHON := 3.11
UPGRADE ?=
COMPILE = $(BIN)/uv pip compile pyproject.toml --quiet --universal --python-version $(LOCK_PYTHON) \
	--generate-hashes --custom-compile-command 'make lock' --group dev
lock: $(STAMP)
	$(COMPILE) $(UPGRADE) --extra stage -o requirements/lock-stage.txt
	$(COMPILE) $(UPGRADE) -c requirements/lock-stage.txt -o requirements/lock.txt

## Debian packages the test suite drives for real: SLURM + munge (cluster test),
## Chromium (report screenshot), debootstrap (base image), rootless Podman and its helpers
## (the Podman backend's tests). Installed only when missing.
SYSTEM_TOOLS := slurmctld:slurm-wlm munged:munge chromium:chromium debootstrap:debootstrap \
	podman:podman newuidmap:uidmap slirp4netns:slirp4netns fuse-overlayfs:fuse-overlayfs
system-deps:
	@missing=""; for pair in $(SYSTEM_TOOLS); do \
	  command -v $${pair%%:*} >/dev/null 2>&1 || [ -x /usr/sbin/$${pair%%:*} ] || missing="$$missing $${pair#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing Debian packages (install as root):$$missing" >&2; exit 1; fi; \
	fi

## Build the registry-free base image (skipped when it exists; python:3.11-slim elsewhere).
## Older Pythons' bases (images.pythons) are bootstrapped when a project first needs one, or
## beforehand with e.g. `make base-image SUITE=focal`.
SUITE ?= bookworm
base-image: $(STAMP)
	bash docker/base/build.sh --suite $(SUITE)

## The whole benchmark on the default config (the embedded sample, offline).
run: $(STAMP)
	@if docker info >/dev/null 2>&1; then $(MAKE) base-image; fi
	$(BIN)/snakemake --cores $(CORES) results/tables.csv

## The whole test suite (unit, integration, Docker, end-to-end workflow).
test: $(STAMP)-stage system-deps
	@if docker info >/dev/null 2>&1; then $(MAKE) base-image; fi
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q --durations=15 tests

## Static checks (CI runs them before the tests): ruff's lint rules, the formatter's layout
## with imports sorted (`make format` writes it), and Snakemake's own lint of the rules.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff check --select I .
	$(BIN)/ruff format --check .
	$(BIN)/snakemake --lint

format: $(STAMP)
	$(BIN)/ruff check --select I --fix .
	$(BIN)/ruff format .

dry-run: $(STAMP)
	$(BIN)/snakemake -n results/tables.csv

report: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) results/tables.csv
	$(BIN)/snakemake --report results/report.html

bench: $(STAMP)
	$(BIN)/python bench/bench_mining.py
	$(BIN)/python bench/bench_harness.py
	$(BIN)/python bench/bench_llm.py
	$(BIN)/python bench/bench_dryrun.py

clean:
	rm -rf results logs benchmarks .snakemake
