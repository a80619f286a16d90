"""`make test-services`: the suite on this machine's own servers, as production runs.

The tests that depend on the servers run once against the real PostgreSQL at 127.0.0.1:5432 (via
DATABASE_URL, database `rummy_ledger_services`, user `postgres` or `root` over trust auth), with
RabbitMQ as the broker: the ledger's SQL and locks, settlement and the hot paths under real
workers, the reconciliation, the broker and database faults, every migration's SQL replayed
(SERVER_DEPENDENT); where RabbitMQ does not answer, the machine's Redis is the broker (the worker
tests of `make test` already ran on the embedded Redis). The rest (the pure rules engine, the
admin's pages in the browser and the test client, the HTTP envelope and the schema fuzz, the
`serve` tests, which start embedded servers of their own) has just run in `make test` and does not
touch what differs here; `--all` runs the whole suite on the servers instead (several times as
long: CI keeps to the first, to stay within 10 minutes). Each server that does not answer is named
in one line; without PostgreSQL nothing runs, so CI passes on a machine without it. Exit status:
pytest's.
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
REDIS = "redis://127.0.0.1:6379/5"  # when RabbitMQ does not answer; a database of its own
# What differs on these servers: the PL/pgSQL (every migration's, replayed step by step), the
# locks and isolation under real concurrent connections, the set-based SQL of reconciliation and
# of the hot paths, RabbitMQ under real Celery workers and broker faults, beat's leader lock and
# /readyz over TCP, and pgBackRest's backup and point-in-time restore on a scratch cluster of
# Debian's PostgreSQL 15 (tests/ops/test_pitr.py; it skips without them), and a failover under
# load on a Patroni cluster of Debian's PostgreSQL 15 with a node behind PgBouncer
# (tests/ops/test_failover.py; it skips without root and the packages). The rest of the suite
# (the property tests, the rules, the API's and the admin's Python over the same SQL, our own
# processes killed mid-run, the simulators, the data migrations' ORM round trips) has just run in
# `make test` against the embedded PostgreSQL, and would only run again.
SERVER_DEPENDENT = [
    "tests/wallets/test_sql_files.py",
    "tests/wallets/test_ledger.py",
    "tests/wallets/test_ledger_properties.py",
    "tests/wallets/test_database_guards.py",
    "tests/wallets/test_guard_plan.py",
    "tests/wallets/test_partitions.py",
    "tests/wallets/test_month_close.py",
    "tests/wallets/test_as_of_balances.py",
    "tests/wallets/test_month_archive.py",
    "tests/wallets/test_concurrency.py",
    "tests/wallets/test_money_concurrency.py",
    "tests/wallets/test_protection_concurrency.py",
    "tests/wallets/test_withdrawals.py",
    "tests/wallets/test_deposits.py",
    "tests/wallets/test_wind_down.py",
    "tests/tournaments/test_concurrency.py",
    "tests/tournaments/games/services/",  # intake, settlement, escrow, opening: SQL and locks
    "tests/tournaments/test_round_trips.py",
    "tests/tournaments/test_tournament_races.py",
    "tests/tournaments/test_tournament_reconciliation.py",
    "tests/tournaments/test_deal_batch.py",
    "tests/tournaments/test_worker.py",
    "tests/finance/test_reconciliation.py",
    "tests/finance/test_reconciliation_payments.py",
    "tests/ops/test_beat_leader.py",
    "tests/ops/test_broker_outage.py",
    "tests/ops/test_database_faults.py",
    "tests/ops/test_health.py",
    "tests/ops/test_task_retries.py",
    "tests/ops/test_pitr.py",
    "tests/ops/test_failover.py",  # a Patroni cluster of its own, behind PgBouncer (make ha's)
    "tests/test_db_snapshot.py",
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
    # `-m ""`: each file runs whole here, its `soak` scenarios included (pyproject leaves them out)
    command = [sys.executable, "-m", "pytest", "-q", "-n", workers, "-m", "", *paths]
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
    name, url = "the embedded Redis", ""
    for candidate, candidate_url in {"RabbitMQ": RABBITMQ, "Redis": REDIS}.items():
        if broker_answers(candidate_url):  # the first that answers is the broker
            name, url = candidate, candidate_url
            break
        say(f"{candidate} does not answer at {candidate_url}")
    part = "the whole suite" if everything else "the server-dependent tests"
    say(f"{part}, with {name} as the broker")
    env = {"DATABASE_URL": database, "CELERY_BROKER_URL": url}
    if not url.startswith("redis") and broker_answers(REDIS):  # the rate limits need a Redis
        env["RATE_LIMIT_REDIS_URL"] = REDIS  # (without one here, the embedded one's address)
    return pytest(env, *([] if everything else SERVER_DEPENDENT))


if __name__ == "__main__":
    sys.exit(main())
