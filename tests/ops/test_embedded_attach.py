"""A process started while its embedded PostgreSQL cannot come up starts anyway: otherwise its
start-up (`rummy_ledger/dev/environment.py`) would raise, a process restarted during a database
outage would die at every start, and `serve` would give up on the whole service after five."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg
import pytest
from django.conf import settings

from rummy_ledger.dev import embedded
from tests.ops.test_serve import data_dir, serve_env  # noqa: F401  (data_dir is a fixture)

pytestmark = [pytest.mark.timeout(120), pytest.mark.soak]

LOAD_SETTINGS = """
import django, json
from rummy_ledger.dev.environment import environ_prepare
environ_prepare()  # what manage.py does first with RUMMY_EMBEDDED=1
django.setup()
from django.conf import settings
from django.db import OperationalError, connection
db = settings.DATABASES["default"]
try:
    connection.ensure_connection()
    state = "connected"
except OperationalError:
    state = "unavailable"
print(json.dumps({"host": db["HOST"], "port": db["PORT"], "state": state}))
"""


def manage(data_dir, *args):  # noqa: F811
    return subprocess.run(
        [sys.executable, str(settings.BASE_DIR / "manage.py"), *args],
        env=serve_env(data_dir), capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip


def test_a_process_starts_while_the_embedded_database_cannot_and_finds_it_once_it_is_back(
    data_dir,  # noqa: F811
):
    # given: an embedded PostgreSQL that has run, is stopped, and cannot start (a bad setting)
    manage(data_dir, "embedded", "start")
    manage(data_dir, "embedded", "stop")
    conf = data_dir / "pg" / "postgresql.auto.conf"
    good = conf.read_text()
    conf.write_text(good + "shared_buffers = 'not a size'\n")

    # when: a process (manage.py, a test run) starts meanwhile
    env = {**serve_env(data_dir), "DJANGO_SETTINGS_MODULE": "rummy_ledger.settings"}
    started = subprocess.run(
        [sys.executable, "-c", LOAD_SETTINGS],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    # then: it runs, says why its database calls fail, and knows where the server will be
    assert started.returncode == 0, started.stderr[-3000:]
    assert "embedded PostgreSQL under" in started.stderr and "is not available" in started.stderr
    found = json.loads(started.stdout.strip().splitlines()[-1])
    assert found["state"] == "unavailable"
    assert embedded.postgres_pid(data_dir) is None

    # when: the operator repairs it and starts it (or `serve` restarts it)
    conf.write_text(good)
    manage(data_dir, "embedded", "start")
    # then: it is where that process expected it
    with psycopg.connect(
        host=found["host"], port=found["port"], user="postgres", dbname="rummy_ledger"
    ) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
