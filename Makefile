# The few commands a newcomer needs. Everything installs into .venv from requirements.txt.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
# A development checkout uses its embedded PostgreSQL and Redis under .data/: manage.py, the test
# settings and bench/ start them and set DATABASE_URL / CELERY_BROKER_URL / DJANGO_SECRET_KEY for
# the settings, which fail closed without them (rummy_ledger/dev/environment.py).
export RUMMY_EMBEDDED := 1
# pytest-xdist workers for the suite (one per core: most tests wait on PostgreSQL, a browser, a
# Celery worker or a subprocess, so two processes keep two cores busy); TEST_WORKERS=0 runs it in
# one process.
export TEST_WORKERS ?= 2

.PHONY: run test test-services soak lint bench chaos stop clean browser screenshots pgbackrest \
	ha ha-packages ha-packages-if-root ha-switchover ha-failover ha-stop

$(VENV)/.installed: requirements.txt
	@echo "Installing requirements.txt into $(VENV)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

## run: embedded PostgreSQL and Redis, migrate, demo data, then web on :8000 (PORT=18950 make run
## for another port), beat and two workers, supervised (a dead one is restarted; exit 1 when one
## keeps dying). LOG_LEVEL=DEBUG adds the access log, every task and the simulator's games.
run: $(VENV)/.installed
	@$(PY) manage.py serve

## test: lint, missing-migration check and the test suite against real PostgreSQL (all but the
## heavy scenarios marked `soak`, which `make soak` runs)
test: $(VENV)/.installed lint browser
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest -q -n $(TEST_WORKERS)

## soak: the heavy scenarios (processes killed mid-write, historical migrations replayed, every
## role's browser crawl, whole demo runs); CI runs them after `make test`. The point-in-time
## recovery and failover scenarios are left to `make test-services`, which installs what they
## need. SECONDS=3600: the API's state machine (tests/simulation) runs that long too (without it,
## not at all: make test runs its fixed budget).
soak: $(VENV)/.installed browser
	SIM_SECONDS=$(SECONDS) $(PY) -m pytest -q -n $(TEST_WORKERS) -m soak --ignore=tests/ops/test_pitr.py \
	  --ignore=tests/ops/test_failover.py

## test-services: the server-dependent tests on this machine's PostgreSQL (127.0.0.1:5432) with
## RabbitMQ, and the Celery worker tests again with Redis; says so in one line and skips what does
## not answer (the whole suite there: .venv/bin/python -m tests.services_suite --all). Among them
## the point-in-time recovery test, on Debian's PostgreSQL 15 and pgBackRest (see `pgbackrest`),
## and the failover under load (tests/ops/test_failover.py, on `make ha`'s cluster).
test-services: $(VENV)/.installed pgbackrest ha-packages-if-root
	$(PY) -m tests.services_suite

## pgbackrest: Debian's pgBackRest for tests/ops/test_pitr.py, if missing and this machine may
## install it (root with apt-get); otherwise that test skips and says why. A no-op once installed.
pgbackrest:
	@if command -v pgbackrest >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Installing Debian's pgbackrest for the point-in-time recovery test"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -qq --no-install-recommends pgbackrest >/dev/null 2>&1 \
	  || { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
	       pgbackrest >/dev/null; } \
	  || { echo "Could not install pgbackrest with apt-get" >&2; exit 1; }; \
	else echo "pgbackrest is not installed (needs root with apt-get): the point-in-time recovery test skips"; \
	fi

## ha: a local high-availability cluster (ha/cluster.py; needs root: installs Debian's packages
## with apt-get, see ha-packages): two PostgreSQL 15 (a primary and its synchronous standby)
## under Patroni and etcd, HAProxy on the primary, PgBouncer in transaction mode, and one node of
## the service on them at http://127.0.0.1:8000; prints what runs where. ha-switchover moves the
## primary as planned, ha-failover loses its node (MODE=kill, the default, or MODE=freeze),
## ha-stop ends it all. docs/operations.md, "A synchronous standby".
HA_PACKAGES := postgresql-15 patroni etcd-server etcd-client haproxy pgbouncer
ha: $(VENV)/.installed ha-packages
	python3 ha/cluster.py start --node $(PY)

ha-switchover:
	python3 ha/cluster.py switchover

ha-failover:
	python3 ha/cluster.py failover --mode $(or $(MODE),kill)

ha-stop:
	python3 ha/cluster.py stop

## ha-packages-if-root: ha-packages where this machine may install them; elsewhere the failover
## test skips and says why
ha-packages-if-root:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then $(MAKE) --no-print-directory \
	  ha-packages; else echo "not root with apt-get: the failover test skips"; fi

ha-packages:
	@if command -v patroni >/dev/null && command -v etcd >/dev/null && command -v haproxy \
	  >/dev/null && command -v pgbouncer >/dev/null && [ -x /usr/lib/postgresql/15/bin/postgres ]; \
	then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Installing Debian's $(HA_PACKAGES)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -qq --no-install-recommends $(HA_PACKAGES) >/dev/null 2>&1 \
	  || { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
	       $(HA_PACKAGES) >/dev/null; } \
	  || { echo "Could not install $(HA_PACKAGES) with apt-get" >&2; exit 1; }; \
	else echo "make ha needs $(HA_PACKAGES): run it as root with apt-get" >&2; exit 1; \
	fi

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

## browser: Debian's Chromium for tests/browser, if missing and this machine may install it
## (root with apt-get); otherwise those tests skip and say why. A no-op once installed.
CHROMIUM_PACKAGES := chromium chromium-driver
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Installing Debian's $(CHROMIUM_PACKAGES) for the browser tests"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -qq --no-install-recommends $(CHROMIUM_PACKAGES) >/dev/null 2>&1 \
	  || { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
	       $(CHROMIUM_PACKAGES) >/dev/null; } \
	  || { echo "Could not install $(CHROMIUM_PACKAGES) with apt-get" >&2; exit 1; }; \
	fi

## screenshots: docs/finance-admin.md's screenshots (docs/screenshots/), from the browser tests
## that take them (test-output/screenshots/ holds every page they visit; SCREENSHOTS=1 before
## any test command saves its pages there too, which make test leaves out)
screenshots: export SCREENSHOTS := 1
screenshots: $(VENV)/.installed browser
	$(PY) -m pytest -q tests/browser/test_finance_paths.py \
	  -k "find_a_game_and_its_transfers or reversal_of_a_settled_game or fee_report_and_its_csv"
	$(PY) -m pytest -q tests/browser/test_money_out.py tests/browser/test_home_page.py \
	  -k "first_withdrawal or operator_and_an_approver"
	$(PY) -m pytest -q tests/browser/test_tournament_pages.py -k tournament_pnl
	$(PY) -m pytest -q tests/browser/test_month_close.py
	mkdir -p docs/screenshots
	cp test-output/screenshots/game--viewer.png docs/screenshots/game.png
	cp test-output/screenshots/reversal--approver.png docs/screenshots/reversal.png
	cp test-output/screenshots/fee-report--viewer.png docs/screenshots/fee-report.png
	cp test-output/screenshots/tournament-pnl--viewer.png docs/screenshots/tournament-pnl.png
	cp test-output/screenshots/dashboard--approver.png docs/screenshots/dashboard.png
	cp test-output/screenshots/withdrawal-review--operator.png docs/screenshots/withdrawal-review.png
	cp test-output/screenshots/withdrawals-to-review--operator.png docs/screenshots/withdrawals-to-review.png
	cp test-output/screenshots/month-close-approved--approver.png docs/screenshots/month-close-approved.png

## bench: every benchmark (figures are ratios to a baseline measured in the same run)
bench: $(VENV)/.installed
	$(PY) bench/rules.py
	$(PY) bench/ledger.py
	$(PY) bench/settlement.py
	$(PY) bench/hot_path.py
	$(PY) bench/rate_limits.py
	$(PY) bench/batch.py
	$(PY) bench/reconcile.py
	$(PY) bench/verify_ledger.py
	$(PY) bench/admin_pages.py
	$(PY) bench/wind_down.py
	$(PY) bench/tournaments.py
	@if command -v valgrind >/dev/null; then $(PY) bench/rules_instructions.py; \
	else echo "bench/rules_instructions.py needs valgrind: skipped"; fi

## chaos: the load-and-fault run (bench/faults.py): concurrent tables over HTTP while a Celery
## worker, a gunicorn worker, the broker and PostgreSQL fail; checks every deal settled once.
## On the machine's servers: DATABASE_URL=... CELERY_BROKER_URL=... make chaos; NODES=2 there
## runs two serve nodes, load over both, and kills -9 the one whose beat schedules.
chaos: $(VENV)/.installed
	$(PY) bench/faults.py $(if $(NODES),--nodes $(NODES))

## stop: stop the embedded services even if a killed process left them running
stop: $(VENV)/.installed
	$(PY) manage.py embedded stop

clean: stop
	rm -rf .data
