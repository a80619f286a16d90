"""`make test-services`: the suite on this machine's own servers, as production runs.

The tests that depend on the servers run once against the real PostgreSQL at 127.0.0.1:5432 (via
DATABASE_URL, database `rummy_ledger_services`, user `postgres` or `root` over trust auth), with
RabbitMQ as the broker: the ledger and wallets, games and settlement, the reconciliation, the
broker and database faults, every migration's SQL replayed (SERVER_DEPENDENT). The Celery worker
tests then run again with Redis as the broker. The rest (the pure rules engine, the admin's pages
in the browser and the test client, the HTTP envelope and the schema fuzz, the `serve` tests, which
start embedded servers of their own) has just run in `make test` and does not touch what differs
here; `--all` runs the whole suite on the servers instead (about twice as long: CI keeps to the
first, to stay well under 15 minutes). Each server that does not answer is named in one line and
its part skipped, so CI passes on a machine without them. Exit status: non-zero when any pytest run
failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
POSTGRES = {"host": "127.0.0.1", "port": 5432}
POSTGRES_USERS = ("postgres", "root")
DATABASE = "rummy_ledger_services"
RABBITMQ = "amqp://guest:guest@127.0.0.1:5672//"
REDIS = "redis://127.0.0.1:6379/5"  # a database of its own; the tests use private queues anyway
CELERY_TESTS = ["tests/tournaments/test_worker.py"]  # real `celery worker` processes
SERVER_DEPENDENT = [
    "tests/wallets",
    "tests/tournaments",
    "tests/finance/test_reconciliation.py",
    "tests/finance/test_reconciliation_payments.py",
    "tests/ops/test_broker_outage.py",
    "tests/ops/test_database_faults.py",
    "tests/ops/test_task_retries.py",
    "tests/test_db_snapshot.py",
]
# ...but for their slow parts that test something else: the admin's login throttling, the demo
# data, the simulators (whose ledger paths the tests above cover), the data migrations'
# back-and-forth (Python over the ORM; every migration's SQL replays on this server in
# tests/wallets/test_sql_files.py) and our own processes killed mid-request or mid-run (what
# they test is that one transaction commits or none does: the tests above hold it here), and the
# property tests and pure rules of money and hands (hypothesis explores Python's arithmetic over
# many generated histories; the SQL they reach is what the example tests above run here).
SERVER_DEPENDENT_BUT = [
    "tests/wallets/test_bonus_properties.py",
    "tests/wallets/test_money_properties.py",
    "tests/wallets/test_tax_properties.py",
    "tests/wallets/test_wind_down_properties.py",
    "tests/tournaments/test_payouts.py",
    "tests/tournaments/test_tournament_payouts.py",
    "tests/tournaments/test_deal_rules.py",
    "tests/tournaments/test_deals_drops.py",
    "tests/tournaments/test_deal_input.py",
    "tests/tournaments/test_formats.py",
    "tests/tournaments/test_rummy500_jokers.py",
    "tests/wallets/test_money_migration.py",
    "tests/wallets/test_gst_migration.py",
    "tests/wallets/test_wind_down_processes.py",
    "tests/wallets/test_money_killed.py",
    "tests/wallets/test_admin_security.py",
    "tests/wallets/test_seed_demo.py",
    "tests/wallets/test_simulator_money.py",
    "tests/tournaments/test_simulator.py",
]


def postgres_url() -> str | None:
    """The URL of our database on the local server (created if missing), or None."""
    for user in POSTGRES_USERS:
        try:
            with psycopg.connect(
                dbname="postgres", user=user, connect_timeout=3, autocommit=True, **POSTGRES
            ) as conn:
                exists = conn.execute(
                    "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]
                ).fetchone()
                if not exists:
                    conn.execute(f'CREATE DATABASE "{DATABASE}"')
                version = conn.info.server_version // 10000
        except psycopg.Error:
            continue
        say(f"PostgreSQL {version} at {POSTGRES['host']}:{POSTGRES['port']} as {user}")
        return f"postgres://{user}@{POSTGRES['host']}:{POSTGRES['port']}/{DATABASE}"
    return None


def broker_answers(url: str) -> bool:
    from kombu import Connection

    try:
        with Connection(url, connect_timeout=3) as conn:
            conn.ensure_connection(max_retries=1, timeout=3)
    except Exception:  # any failure to connect means: not here
        return False
    return True


def pytest(env: dict[str, str], *paths: str) -> int:
    """One pytest run, in TEST_WORKERS pytest-xdist processes (2 by default, as `make test`)."""
    workers = os.environ.get("TEST_WORKERS", "2")
    command = [sys.executable, "-m", "pytest", "-q", "-n", workers, *paths]
    return subprocess.run(command, cwd=ROOT, env={**os.environ, **env}).returncode


def say(line: str) -> None:
    print(f"test-services: {line}", flush=True)


def main() -> int:
    everything = "--all" in sys.argv[1:]
    database = postgres_url()
    if database is None:
        say(
            f"PostgreSQL does not answer at {POSTGRES['host']}:{POSTGRES['port']} "
            f"(users {', '.join(POSTGRES_USERS)}): skipped"
        )
        return 0
    brokers = {"RabbitMQ": RABBITMQ, "Redis": REDIS}
    answering = {name: url for name, url in brokers.items() if broker_answers(url)}
    for name, url in brokers.items():
        if name not in answering:
            say(f"{name} does not answer at {url}: its Celery worker tests are skipped")
    statuses = []
    runs = list(answering.items()) or [("the embedded Redis", "")]
    for n, (name, url) in enumerate(runs):
        env = {"DATABASE_URL": database, "CELERY_BROKER_URL": url}
        if n == 0:
            part = "the whole suite" if everything else "the server-dependent tests"
            say(f"{part}, with {name} as the broker")
            part_args = SERVER_DEPENDENT + [f"--ignore={path}" for path in SERVER_DEPENDENT_BUT]
            statuses.append(pytest(env, *([] if everything else part_args)))
        else:
            say(f"the Celery worker tests, with {name} as the broker")
            statuses.append(pytest(env, *CELERY_TESTS))
    return max(statuses)


if __name__ == "__main__":
    sys.exit(main())
