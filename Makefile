# The few commands a newcomer needs. Everything installs into .venv from requirements.txt.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test lint bench stop clean

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

## run: start embedded PostgreSQL and Redis, migrate, seed demo data, web on :8000 and a worker
run: $(VENV)/.installed
	$(PY) manage.py serve

## test: lint, missing-migration check and the whole test suite against real PostgreSQL
test: $(VENV)/.installed lint
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

## bench: every benchmark (figures are ratios to a baseline measured in the same run)
bench: $(VENV)/.installed
	$(PY) bench/rules.py
	$(PY) bench/ledger.py
	$(PY) bench/settlement.py
	$(PY) bench/reconcile.py

## stop: stop the embedded services even if a killed process left them running
stop: $(VENV)/.installed
	$(PY) manage.py embedded stop

clean: stop
	rm -rf .data
