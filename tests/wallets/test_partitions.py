"""The entries live in one partition per IST month, made ahead of time; there is no DEFAULT
partition, so a month without one refuses its entries, and reconciliation says when fewer than
the minimum are ready."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from tests.builders import funded_player, move
from tests.wallets.invariants import ledger_violations
from wallets.models import Entry
from wallets.months import Month
from wallets.reconciliation import reconcile_run
from wallets.services.partitions import entry_partitions, entry_partitions_ensure, months_ahead
from wallets.tasks import entry_partitions_ensure as entry_partitions_task

pytestmark = pytest.mark.django_db


def one(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def test_the_migration_leaves_this_month_and_two_ahead_and_no_default_partition():
    this = Month.of(timezone.now())
    assert {this, this.next(), this.next(2)} <= set(entry_partitions())
    assert one(
        "SELECT partdefid FROM pg_partitioned_table WHERE partrelid = 'wallets_entry'::regclass"
    ) == (0,)
    bounds = one(
        "SELECT pg_get_expr(c.relpartbound, c.oid) FROM pg_class c WHERE c.relname = %s",
        [this.partition],
    )[0]
    assert "18:30:00+00" in bounds  # midnight IST


def test_a_posting_lands_in_this_months_partition_and_keeps_every_invariant():
    alice = funded_player("alice", "100.00")
    bob = funded_player("bob", "0")
    move(alice["deposit"], bob["deposit"], "40.00", "pay-1")
    this = Month.of(timezone.now())
    count = one(f'SELECT count(*) FROM "{this.partition}"')[0]
    assert count == Entry.objects.count() > 0
    assert ledger_violations() == []


def test_the_ledgers_functions_keep_one_plan_whatever_the_statistics():
    """PL/pgSQL would plan their statements again at every call, and the balance check at every
    entry (wallets/migrations/0026_ledger_functions_planned_once.py); without statistics they
    would read through bitmaps (0028_ledger_functions_read_by_index.py)."""
    for name in ("ledger_post_batch", "ledger_transfer_balanced"):
        config = one("SELECT proconfig FROM pg_proc WHERE proname = %s", [name])[0]
        assert config == ["plan_cache_mode=force_generic_plan", "enable_bitmapscan=off"], name


def test_the_job_makes_the_months_ahead_once(settings):
    # today: the migration made two months ahead, the job keeps three
    this = Month.of(timezone.now())
    assert entry_partitions_task() == [this.next(3).name]
    assert entry_partitions_task() == []
    # given: a moment four months on, when only today's months exist
    later = timezone.now() + timedelta(days=125)
    # when: the job runs then, twice
    made = entry_partitions_ensure(now=later)
    again = entry_partitions_ensure(now=later)
    # then: the missing months were made once, ahead of that moment
    assert made and again == []
    assert months_ahead(now=later) >= settings.LEDGER_PARTITIONS_AHEAD


def test_an_entry_dated_where_no_partition_exists_is_refused():
    alice = funded_player("alice", "100.00")
    far = Month.of(timezone.now()).next(30)
    with (
        pytest.raises(DatabaseError, match="no partition"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "INSERT INTO wallets_entry (transfer_id, account_id, amount, amount_currency, "
            "created_at) SELECT transfer_id, account_id, amount, amount_currency, %s "
            "FROM wallets_entry WHERE account_id = %s",
            [far.start, alice["deposit"].pk],
        )


def test_reconciliation_reports_fewer_months_ahead_than_the_minimum():
    assert "partitions_ahead" not in kinds(reconcile_run(trigger="manual"))
    # given: the second month ahead lost its (empty) partition
    with connection.cursor() as cursor:
        cursor.execute(f'DROP TABLE "{Month.of(timezone.now()).next(2).partition}"')
    # when
    report = reconcile_run(trigger="manual")
    # then
    found = report.discrepancies.get(kind="partitions_ahead")
    assert (found.expected, found.actual) == (settings.LEDGER_PARTITIONS_AHEAD_MINIMUM, 1)


def test_beat_runs_the_job_daily():
    entry = settings.CELERY_BEAT_SCHEDULE["wallets-entry-partitions"]
    assert entry["task"] == "wallets.tasks.entry_partitions_ensure"


def kinds(report) -> list[str]:
    return list(report.discrepancies.values_list("kind", flat=True))
