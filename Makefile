# The command index. `make run` and `make test` do all the set-up on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Extra pytest arguments: make test PYTEST_ARGS="-k healthz -x"
PYTEST_ARGS ?=

.PHONY: run test test-engine fuzz lint fmt venv bench simulate clean

# The venv, (re)installed only when requirements.txt is newer than the stamp file.
venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	touch $@

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
