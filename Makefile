# The command index. `make run` and `make test` do all the set-up on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Extra pytest arguments: make test PYTEST_ARGS="-k healthz -x"
PYTEST_ARGS ?=

.PHONY: run test test-engine fuzz abuse lint fmt venv lock bench simulate clean

# The venv, (re)installed only when requirements.txt is newer than the stamp file.
# requirements.txt is the lock (every package pinned with its hashes, made by `make lock`
# from requirements.in): pip installs exactly it and refuses anything whose hash differs.
venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --require-hashes -r requirements.txt
	touch $@

# requirements.in (the direct dependencies) -> requirements.txt (all of them, pinned, hashed),
# with pip-tools in a venv of its own (.venv-lock) so the app's venv holds only the lock.
lock:
	test -x .venv-lock/bin/pip-compile || ($(PY) -m venv .venv-lock && .venv-lock/bin/pip install -q pip-tools==7.7.0)
	.venv-lock/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
	  --no-emit-find-links --no-emit-index-url -o requirements.txt requirements.in

# Redis (ours unless one answers on REDIS_URL), Daphne on :8000, a Celery worker and beat.
run: venv
	bash scripts/run.sh

# The whole suite, tests/ (engine, app with real Redis and Celery, browser).
test: venv
	bash scripts/test.sh $(PYTEST_ARGS)

test-engine: venv
	$(BIN)/pytest -q tests/engine

# Property-based fuzzing (tests/fuzz, Hypothesis): FUZZ_EXAMPLES per target (10,000; `make test`
# runs 200), then one line per target: examples, accepted, refused, unhandled, over 1 s, and
# under it the file in .fuzz-inputs/ of each unhandled or slow input (replay: README).
FUZZ_EXAMPLES ?= 10000
fuzz: venv
	rm -rf .fuzz-report .fuzz-inputs
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_REPORT=$(CURDIR)/.fuzz-report $(BIN)/pytest -q -p no:randomly tests/fuzz; \
	  status=$$?; echo; cat .fuzz-report; exit $$status

# Issue #35's abuse suite against the real stack (tests/app/test_abuse.py), on SQLite then on
# PostgreSQL; opt-in, not part of `make test` yet (see the test's module docstring).
abuse: venv
	PLAYGROUND_ABUSE=1 bash scripts/test.sh tests/app/test_abuse.py

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

fmt: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: venv
	$(BIN)/python manage.py bench

simulate: venv
	$(BIN)/python manage.py simulate $(SCENARIO) --format table

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .run
