# The command index. `make run` and `make test` do all the set-up on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test test-engine lint venv bench simulate clean

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	touch $@

run: venv
	bash scripts/run.sh

test: venv
	bash scripts/test.sh

test-engine: venv
	$(BIN)/pytest -q tests/engine

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check controller/engine

bench: venv
	$(BIN)/python manage.py bench

simulate: venv
	$(BIN)/python manage.py simulate $(SCENARIO) --format table

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .run
