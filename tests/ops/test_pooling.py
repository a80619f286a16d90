"""A node behind PgBouncer in transaction mode, and one that follows the primary by a multi-host
DATABASE_URL: what the settings make of them (rummy_ledger/settings.py), and what the code no
longer relies on (a session of its own). The node itself, behind PgBouncer through failovers, is
tests/ops/test_failover.py."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test import override_settings

from rummy_ledger import db
from rummy_ledger.api import database
from rummy_ledger.beat import Leadership

ROOT = Path(__file__).resolve().parents[2]
MULTI_HOST = "postgres://u@h1,h2/db?port=5432,5433&target_session_attrs=read-write"
PGBOUNCER = "postgres://rummy_web@127.0.0.1:16432/rummy_ledger"


def settings_under(**env: str) -> dict:
    """The settings' databases, read by a fresh process from this environment (or its error)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("RUMMY_", "DJANGO_"))}
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "DIRECT_DATABASE_URL", "DATABASE_POOLING",
                 "RATE_LIMIT_REDIS_URL"):  # fmt: skip
        clean.pop(name, None)
    code = (
        "import json; from rummy_ledger import settings as s; print(json.dumps({'db': "
        "s.DATABASES, 'session': s.SESSION_DATABASE_ALIAS, 'role': s.REQUEST_BOUNDS_ON_ROLE}, "
        "default=str))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "CELERY_BROKER_URL": "amqp://mq//", "RATE_LIMIT_REDIS_URL": "redis://r/0",
             "DJANGO_SECRET_KEY": secrets.token_urlsafe(50), **env},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if result.returncode:
        return {"error": result.stderr.strip().splitlines()[-1]}
    return json.loads(result.stdout)


def test_a_multi_host_url_parses_into_a_connection_to_whichever_host_takes_writes():
    read = settings_under(DATABASE_URL=MULTI_HOST)
    default = read["db"]["default"]
    assert default["HOST"] == "h1,h2"
    assert default["OPTIONS"]["port"] == "5432,5433"
    assert default["OPTIONS"]["target_session_attrs"] == "read-write"
    # two hosts tried in turn: 2 s each stays inside the 6 s request deadline
    assert default["OPTIONS"]["connect_timeout"] == 2
    assert read["session"] == "default" and read["role"] is False


def test_a_connect_timeout_that_summed_over_the_hosts_passes_the_deadline_refuses_to_start():
    read = settings_under(DATABASE_URL=MULTI_HOST, DB_CONNECT_TIMEOUT="4")
    assert (
        "DB_CONNECT_TIMEOUT x 2 host(s) must stay within REQUEST_DEADLINE_SECONDS" in read["error"]
    )
    # one host at 3 s is the usual setting
    one = settings_under(DATABASE_URL="postgres://u@h1:5432/db", DB_CONNECT_TIMEOUT="3")
    assert one["db"]["default"]["OPTIONS"]["connect_timeout"] == 3


def test_transaction_pooling_needs_a_direct_connection_for_sessions():
    read = settings_under(DATABASE_URL=PGBOUNCER, DATABASE_POOLING="transaction")
    assert "DATABASE_POOLING=transaction needs DIRECT_DATABASE_URL" in read["error"]


def test_transaction_pooling_takes_bounds_from_the_role_and_sessions_outside_the_pool():
    read = settings_under(
        DATABASE_URL=PGBOUNCER, DATABASE_POOLING="transaction", DIRECT_DATABASE_URL=MULTI_HOST
    )
    assert read["role"] is True
    assert read["db"]["default"]["DISABLE_SERVER_SIDE_CURSORS"] is True
    assert read["session"] == "direct"
    assert read["db"]["direct"]["HOST"] == "h1,h2"
    assert read["db"]["direct"]["OPTIONS"]["target_session_attrs"] == "read-write"
    assert read["db"]["direct"]["TEST"] == {"MIRROR": "default"}


def test_behind_a_transaction_pool_a_request_sets_no_session_bounds():
    with override_settings(REQUEST_BOUNDS_ON_ROLE=True):
        assert database.needs_bounds() is False


def test_beat_and_migrate_locks_take_the_session_alias():
    with override_settings(SESSION_DATABASE_ALIAS="direct"):
        assert Leadership().alias == "direct"
    with override_settings(SESSION_DATABASE_ALIAS="default"):
        assert db.session_connection().alias == "default"


@pytest.mark.django_db
def test_the_orm_prepares_no_statement_on_the_server():
    # Django's psycopg 3 backend binds on the client: a query run again and again is never
    # prepared (a prepared statement would outlive its transaction's server session in a pool)
    from wallets.models import Account

    for _ in range(10):
        list(Account.objects.filter(code="nobody")[:1])
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == 0
