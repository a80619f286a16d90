"""Lose the database's primary under load, twice, and lose nothing: `bench/faults.py --failover
kill` with a short load, on ha/cluster.py's cluster (Patroni with etcd, a synchronous standby of
PostgreSQL 15, HAProxy, PgBouncer in transaction mode) and one node of the service behind
PgBouncer, the tables also crediting deposits, requesting withdrawals and registering in a
tournament. Every process of the primary's node is killed -9, the standby is promoted, the old node
rejoins by pg_rewind, then the same back. Needs root and Debian's packages (`make ha-packages`)
and a broker (`make test-services` gives it RabbitMQ or Redis); skips, saying why, without them.
The full runs (three of each mode, the freeze among them) are for docs/operations.md."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("patroni", "etcd", "haproxy", "pgbouncer")

# a cluster, a node, two failovers and rejoins: about 4 minutes on a busy 2-core machine
pytestmark = [pytest.mark.soak, pytest.mark.timeout(600)]


def missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (Patroni and PostgreSQL run as postgres, started by runuser)"
    absent = [p for p in PACKAGES if shutil.which(p) is None]
    if absent or not Path("/usr/lib/postgresql/15/bin/postgres").exists():
        return f"needs Debian's packages (make ha-packages): {absent or ['postgresql-15']} missing"
    if not os.environ.get("CELERY_BROKER_URL", "").startswith(("amqp", "redis://")):
        return "needs the machine's broker (make test-services sets CELERY_BROKER_URL)"
    if Path(os.environ.get("HA_DIR", "/tmp/rummy-ha"), "state.json").exists():
        return "a cluster of make ha runs already (make ha-stop)"
    return None


def test_a_failover_and_back_under_load_loses_no_acknowledged_write():
    reason = missing()
    if reason:
        pytest.skip(reason)
    keep = ("PATH", "HOME", "LANG", "CELERY_BROKER_URL", "HA_DIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    result = subprocess.run(
        [sys.executable, "bench/faults.py", "--failover", "kill", "--clients", "3",
         "--phase-seconds", "6", "--web-workers", "2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=570,
    )  # fmt: skip
    lines = result.stdout.strip().splitlines()
    assert lines, result.stderr[-3000:]
    figures = json.loads(lines[-1])
    assert result.returncode == 0, (lines[-2:], result.stderr[-3000:])
    assert figures["acknowledged"] > 0
    # the payments are in the count: deposits, withdrawals and tournament registrations
    checked = figures["fault_check"]
    assert checked["deposits_acknowledged"] > 0
    assert checked["withdrawals_acknowledged"] > 0
    assert checked["registrations_acknowledged"] > 0
    assert (figures["lost"], figures["doubled"], figures["stuck_games"]) == (0, 0, 0)
    assert figures["reconcile_clean"] is True
    assert len(figures["promotion_s"]) == 2 and max(figures["promotion_s"]) < 30
    assert figures["bad_answers"] == []  # only successes and retryable 409/503 + Retry-After
