# Two commands a newcomer needs: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
## Two installs: what running the console needs (make run: seconds on a fresh machine), and
## that plus what the tests use (moto, lancedb, Playwright, mypy, Jupyter..., and the [ray]
## extra: the Ray executor's tests start a local Ray). The test install skips byte-compiling
## every installed file (``--no-compile``: half of a fresh install's 50 s, most of it for files
## no test imports): the test run compiles what it imports, once (see PYTEST).
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed-test

.PHONY: run test test-fast lint browser

$(RUN_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e .
	touch $(RUN_STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --no-compile --upgrade pip
	$(BIN)/python -m pip install -q --no-compile -e '.[test,ray]'
	touch $(STAMP) $(RUN_STAMP)

## Launch the console on the embedded default: a local directory namespace with demo data
## (built once, then opened as it is). TARGET: another namespace; ARGS: launcher options.
run: $(RUN_STAMP)
	$(BIN)/lance-console $(TARGET) $(ARGS)

## Debian's Chromium for the browser tests (Playwright never downloads its own browser here).
browser:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## Test files on a RAM disk when there is one: the tests write (and Lance and the audit log
## fsync) many small files, about 30% of the loop's time on a disk. TEST_TMP= : the default.
## Only a RAM disk with room (4 GiB free: a container's default 64 MiB /dev/shm is not).
TEST_TMP ?= $(shell test -d /dev/shm -a -w /dev/shm && \
  test "$$(df -Pk /dev/shm | awk 'NR==2 {print $$4}')" -ge 4194304 2>/dev/null && \
  echo /dev/shm/lance-console-tests)
## Bytecode is written even where PYTHONDONTWRITEBYTECODE is set: each test process (workers,
## the consoles' Streamlit servers, kernels, child processes: some hundred) would otherwise
## compile every module it imports from source again (about 1.2 s of CPU for the console's
## imports), and pytest would rewrite every test module's asserts in each worker.
PYTEST = $(if $(TEST_TMP),mkdir -p $(TEST_TMP) && TMPDIR=$(TEST_TMP)) \
  PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

## The whole test suite: lint, backend tests on both backends, AppTest pages, browser tests, in
## three workers (pytest-xdist; each worker starts its own servers and browser). The browser
## tests mostly wait on the browser and the app's server (two workers kept two cores 60% busy):
## a third worker overlaps those waits.
## Lint (a cold mypy: half a minute) runs alongside the tests, its output shown after theirs;
## either failing fails the target.
test: $(STAMP) browser
	@lint_log=$$(mktemp); $(MAKE) --no-print-directory lint >$$lint_log 2>&1 & lint=$$!; \
	$(PYTEST) -n 3 --dist worksteal --durations=25; tests=$$?; \
	wait $$lint; linted=$$?; echo "--- make lint ---"; cat $$lint_log; rm -f $$lint_log; \
	test $$tests -eq 0 -a $$linted -eq 0

## The inner loop: everything but the browser tests and the slow crash/concurrency/child-process
## tests (marked ``slow``), in one worker more than there are cores (pytest-xdist): the
## workers' waits on their servers overlap (2 cores: 2:32-2:34 in three workers, 2:48-2:53 in
## two). FAST_WORKERS=N: another count (counted from the cores only when test-fast runs).
FAST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
test-fast: $(STAMP)
	$(PYTEST) -q -n $(FAST_WORKERS) -m "not e2e and not slow" --durations=10
