"""Backups and point-in-time recovery with pgBackRest (docs/operations.md, "Backups and
point-in-time recovery").

A scratch PostgreSQL 15 cluster of its own (Debian's binaries, run as `postgres`, a socket
directory and a port of its own) archives its WAL continuously into a pgBackRest repository. The
project's schema is migrated into it, a full backup is taken, ledger transfers are posted, a
marker transfer is committed and T noted (the server's clock after that commit), and more
transfers are posted. The backup and the archived WAL are then restored to T into a second data
directory, started and promoted. Two independent ways of knowing the past must agree: every
account's balance on the restored cluster equals the ledger's own balance as of T on the live one
(the sum of its entries made until T), and exactly the transfers committed before T are there.
Then the restored cluster becomes the primary, as the runbook says: archiving on, a full backup
of its new timeline in the same stanza, and the transfers made after T posted there again.

The ledger's side runs in processes of their own (`tests/ops/pitr_ledger.py` under `manage.py
shell`, `DATABASE_URL` pointing at the cluster), as a node would. The test needs Debian's
postgresql-15 and pgbackrest (`make test-services` installs pgbackrest when it may): without them
it skips and says which is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]
# docs/operations.md's check by hand: every account's entries summed until T (on the live primary)
# or in all (on the restored cluster), by account code
BALANCES_SQL = """
SELECT a.code, coalesce(sum(e.amount), 0)::numeric(18, 2) || ' ' || a.balance_currency
FROM wallets_account a LEFT JOIN wallets_entry e ON e.account_id = a.id AND e.created_at <= %s
GROUP BY a.code, a.balance_currency ORDER BY a.code
"""
POSTGRES_BIN = Path("/usr/lib/postgresql/15/bin")
PGBACKREST = shutil.which("pgbackrest") or "/usr/bin/pgbackrest"
STANZA = "ledger"
DATABASE = "rummy_ledger_pitr"
# PostgreSQL refuses to run as root: as root, the clusters and pgBackRest run as this user
SYSTEM_USER = "postgres"

pytestmark = [
    pytest.mark.soak,
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        not (POSTGRES_BIN / "initdb").exists(), reason=f"PostgreSQL 15 is not in {POSTGRES_BIN}"
    ),
    pytest.mark.skipif(
        not Path(PGBACKREST).exists(), reason="pgbackrest is not installed (make test-services)"
    ),
]


def _as_server(*args: str) -> list[str]:
    return ["runuser", "-u", SYSTEM_USER, "--", *args] if os.geteuid() == 0 else list(args)


def _run(*parts: object, timeout: float = 120) -> str:
    args = [str(part) for part in parts]
    done = subprocess.run(_as_server(*args), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    """One PostgreSQL 15 data directory, served on the scratch socket directory and its own port."""

    def __init__(self, root: Path, name: str) -> None:
        self.root, self.data, self.port = root, root / name, _free_port()
        self.log = root / f"{name}.log"

    def start(self, **settings: str) -> None:
        options = {
            "port": str(self.port),
            "unix_socket_directories": str(self.root / "run"),
            "listen_addresses": "''",
            **settings,
        }
        flags = " ".join(f"-c {key}={value}" for key, value in options.items())
        _run(POSTGRES_BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-o", flags, "-w", "start")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                _as_server(
                    str(POSTGRES_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"
                ),
                capture_output=True,
                timeout=60,
            )

    def connect(self, dbname: str = DATABASE) -> psycopg.Connection:
        return psycopg.connect(
            host=str(self.root / "run"),
            port=self.port,
            user=SYSTEM_USER,
            dbname=dbname,
            autocommit=True,
        )

    @property
    def url(self) -> str:
        host = quote(str(self.root / "run"), safe="")
        return f"postgres://{SYSTEM_USER}@{host}:{self.port}/{DATABASE}"

    def manage(self, *args: str) -> str:
        """`manage.py ARGS` in a process of its own on this cluster, as a node would run it."""
        environ = {**os.environ, "DATABASE_URL": self.url, "DB_CONN_MAX_AGE": "0"}
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=environ,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, f"manage.py {args[0]} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def ledger(self, command: str, *args: str) -> dict:
        """A ledger command of tests/ops/pitr_ledger.py on this cluster: its JSON answer."""
        code = f"from tests.ops.pitr_ledger import run; run(*{[command, *args]!r})"
        return json.loads(self.manage("shell", "-c", code).strip().splitlines()[-1])


@pytest.fixture
def scratch() -> Iterator[tuple[Path, list]]:
    root = Path(tempfile.mkdtemp(prefix="rummy-pitr-"))  # short: a socket path has a limit
    for sub in ("run", "repo", "log", "lock", "spool"):
        (root / sub).mkdir()
    if os.geteuid() == 0:
        for path in [root, *root.iterdir()]:
            shutil.chown(path, SYSTEM_USER, SYSTEM_USER)
    clusters: list[Cluster] = []
    try:
        yield root, clusters
    finally:
        for cluster in clusters:
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_a_restore_to_a_time_holds_every_balance_the_ledger_had_then(scratch):
    root, clusters = scratch
    live, restored = Cluster(root, "live"), Cluster(root, "restored")
    clusters += [live, restored]
    config = root / "pgbackrest.conf"
    config.write_text(
        "[global]\n"
        f"repo1-path={root / 'repo'}\n"
        "repo1-retention-full=2\n"
        f"log-path={root / 'log'}\nlock-path={root / 'lock'}\nspool-path={root / 'spool'}\n"
        "log-level-console=warn\nlog-level-file=info\n"
        "start-fast=y\ncompress-type=lz4\n"
        "archive-timeout=60\n"
        f"\n[{STANZA}]\n"
        f"pg1-path={live.data}\npg1-socket-path={root / 'run'}\npg1-port={live.port}\n"
        f"pg1-user={SYSTEM_USER}\n"
    )
    backrest = [PGBACKREST, f"--config={config}", f"--stanza={STANZA}"]

    # given: a live cluster archiving every WAL segment, the project's schema in it, a full backup
    _run(
        POSTGRES_BIN / "initdb",
        "-D",
        live.data,
        "-U",
        SYSTEM_USER,
        *("--auth=trust", "--data-checksums", "--encoding=UTF8", "--no-instructions"),
    )
    # `%p` is relative to the data directory: the command names it (--pg1-path)
    archive = " ".join([*backrest, f"--pg1-path={live.data}", "archive-push", "%p"])
    with open(live.data / "postgresql.conf", "a") as conf:
        conf.write(f"wal_level = replica\narchive_mode = on\narchive_command = '{archive}'\n")
        conf.write("max_wal_size = 256MB\n")
    live.start()
    with live.connect("postgres") as conn:
        conn.execute(f'CREATE DATABASE "{DATABASE}"')
    _run(*backrest, "stanza-create")
    _run(*backrest, "check")
    live.manage("migrate", "--no-input", "-v", "0")
    with live.connect() as conn:
        (size,) = conn.execute(
            "SELECT pg_size_pretty(sum(pg_database_size(datname))) FROM pg_database"
        ).fetchone()
    started = time.monotonic()
    _run(*backrest, "--type=full", "backup", timeout=240)
    backup_seconds = time.monotonic() - started

    # when: transfers, the marker and T, more transfers
    assert live.ledger("post", "before")["transfers"] > 0
    marked = live.ledger("marker")
    at = marked["at"]
    assert live.ledger("post", "after")["transfers"] > 0
    _run(*backrest, "check")  # the WAL of the last commits is archived (a segment switched)

    # and: the backup restored to T into a second data directory, started and promoted
    restored.data.mkdir(mode=0o700)
    if os.geteuid() == 0:
        shutil.chown(restored.data, SYSTEM_USER, SYSTEM_USER)
    started = time.monotonic()
    _run(
        *backrest,
        f"--pg1-path={restored.data}",
        "--type=time",
        f"--target={at}",
        "--target-action=promote",
        "restore",
        timeout=240,
    )
    restore_seconds = time.monotonic() - started
    started = time.monotonic()
    restored.start(archive_mode="off")  # it replays the archived WAL up to T, then is promoted
    with restored.connect() as conn:
        while conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
            assert time.monotonic() - started < 120, "the restored cluster was not promoted"
            time.sleep(0.1)
    recovery_seconds = time.monotonic() - started

    # then: every account's balance there is the ledger's own as of T on the live cluster
    then = live.ledger("balances", at)
    now = live.ledger("balances")
    there = restored.ledger("balances")
    assert there["balances"] == {
        code: amount for code, amount in then["balances"].items() if code in there["balances"]
    }
    # the accounts opened after T are not there, and had nothing at T
    opened_after = set(then["balances"]) - set(there["balances"])
    assert opened_after and all(then["balances"][code].startswith("0.00 ") for code in opened_after)
    # exactly the transfers committed before T are there: the marker, not those after it
    assert there["transfers"] == then["transfers"]
    assert "pitr-marker" in there["transfers"]
    with restored.connect() as conn:  # in commit order too: the marker is the last one there
        assert (
            conn.execute("SELECT max(id) FROM wallets_transfer").fetchone()[0] == marked["marker"]
        )
    after = set(now["transfers"]) - set(then["transfers"])
    assert after and not after & set(there["transfers"])
    # and the live cluster has moved on since T: the check compared different figures
    assert now["balances"] != then["balances"]
    # and the check by hand of docs/operations.md agrees, in plain SQL
    with live.connect() as conn:
        by_hand_then = conn.execute(BALANCES_SQL, [at]).fetchall()
    with restored.connect() as conn:
        by_hand_there = conn.execute(BALANCES_SQL, ["infinity"]).fetchall()
    assert dict(by_hand_there) == {code: then["balances"][code] for code in there["balances"]}
    assert set(by_hand_then) - set(by_hand_there) == {
        (code, then["balances"][code]) for code in opened_after
    }
    # and the restored books reconcile: cached balances, entries and transfers agree there
    assert ": clean, 0 discrepancies" in restored.manage("reconcile", "--no-progress")

    # when: the restored cluster becomes the primary (docs/operations.md, "Point the nodes at it")
    live.stop()
    restored.stop()
    archive = " ".join([*backrest, f"--pg1-path={restored.data}", "archive-push", "%p"])
    with open(restored.data / "postgresql.conf", "a") as conf:
        conf.write(f"archive_mode = on\narchive_command = '{archive}'\n")
    restored.start()
    there_now = [*backrest, f"--pg1-path={restored.data}", f"--pg1-port={restored.port}"]
    _run(*there_now, "check")
    _run(*there_now, "--type=full", "backup", timeout=240)
    # then: its new timeline is archived and backed up in the same stanza, and a node posts there
    # what the clients acknowledged after T (their keys are free there)
    assert restored.ledger("post", "after")["transfers"] == len(after)
    assert restored.ledger("balances")["transfers"] == now["transfers"]
    assert _run(*backrest, "info").count("full backup:") == 2
    print(
        f"\npoint-in-time recovery: full backup of {size} {backup_seconds:.1f} s, restore of "
        f"the backup {restore_seconds:.1f} s, replay to T and promotion {recovery_seconds:.1f} s"
    )
