"""`make test-services`: the suite on this machine's own servers, as production runs.

The suite runs once against the real PostgreSQL at 127.0.0.1:5432 (via DATABASE_URL, database
`rummy_ledger_services`, user `postgres` or `root` over trust auth), with RabbitMQ as the broker;
the Celery worker tests then run again with Redis as the broker. Left out of that second run, to
keep CI well under 15 minutes: the parts that do not depend on the servers, which `make test`
has just run (the pure rules engine, the browser tests of the admin's pages, the schema fuzz).
Each server that does not answer is named in one line and its part skipped, so CI passes on a
machine without them. Exit status: non-zero when any pytest run failed.
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
SERVER_INDEPENDENT = ["tests/rummy", "tests/browser", "tests/api/test_fuzz.py"]


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
    command = [sys.executable, "-m", "pytest", "-q", *paths]
    return subprocess.run(command, cwd=ROOT, env={**os.environ, **env}).returncode


def say(line: str) -> None:
    print(f"test-services: {line}", flush=True)


def main() -> int:
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
            say(f"the suite but {', '.join(SERVER_INDEPENDENT)}, with {name} as the broker")
            statuses.append(pytest(env, *(f"--ignore={path}" for path in SERVER_INDEPENDENT)))
        else:
            say(f"the Celery worker tests, with {name} as the broker")
            statuses.append(pytest(env, *CELERY_TESTS))
    return max(statuses)


if __name__ == "__main__":
    sys.exit(main())
