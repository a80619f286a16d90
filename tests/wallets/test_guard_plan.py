"""The deferred balance trigger's query plans keyed lookups only, even on tables that have no
statistics yet (a freshly migrated server before ANALYZE): before, its join planned a scan of
every account for every entry, ten times slower per transfer. And it reads the new entry's
month only: one partition, however many months the ledger holds."""

import re

import pytest
from django.db import connection
from django.utils import timezone

from tests.builders import funded_player, move
from wallets.months import Month

pytestmark = pytest.mark.django_db


def trigger_query() -> str:
    """The check the database runs, as a statement with the transfer id and the month's bounds
    as its parameters."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = 'ledger_transfer_balanced'")
        body = cursor.fetchone()[0]
    query = re.search(r"IF EXISTS \((.*)\) THEN", body, re.S).group(1)
    for name, parameter in (("NEW.transfer_id", "$1"), ("month_start", "$2"), ("month_end", "$3")):
        query = query.replace(name, parameter)
    return query


def superuser_or_skip(cursor) -> None:
    cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    if not cursor.fetchone()[0]:
        pytest.skip("forgetting statistics and loading auto_explain need a superuser")


def thousands_of_rows_without_statistics(cursor) -> None:
    """Thousands of accounts, transfers and entries, and no statistics on the tables (all of it
    rolled back with the test's transaction), as a freshly migrated server before ANALYZE."""
    cursor.execute(
        "INSERT INTO wallets_account (kind, code, bucket, balance, balance_currency, "
        "created_at) SELECT 'platform', 'plan:' || g, '', 0, 'INR', now() "
        "FROM generate_series(1, 5000) g"
    )
    cursor.execute(
        "INSERT INTO wallets_transfer (kind, reference, idempotency_key, content_hash, memo, "
        "created_at) SELECT 'transfer', 'plan', 'plan:' || g, '', '', now() "
        "FROM generate_series(1, 5000) g"
    )
    cursor.execute(
        "INSERT INTO wallets_entry (transfer_id, account_id, amount, amount_currency, "
        "created_at) SELECT t.id, a.id, s.amount, 'INR', now() "
        "FROM wallets_transfer t JOIN wallets_account a ON a.code = 'plan:' || "
        "substr(t.idempotency_key, 6), (VALUES (1), (-1)) AS s(amount) "
        "WHERE t.reference = 'plan'"
    )  # never checked: the deferred trigger would run at a commit that never comes
    for table in ("wallets_account", "wallets_transfer", "wallets_entry"):
        cursor.execute("DELETE FROM pg_statistic WHERE starelid = %s::regclass", [table])
        cursor.execute("UPDATE pg_class SET reltuples = -1 WHERE oid = %s::regclass", [table])


def test_the_balance_check_uses_keyed_lookups_without_statistics():
    with connection.cursor() as cursor:
        superuser_or_skip(cursor)
        thousands_of_rows_without_statistics(cursor)
        # when: the check is planned as PL/pgSQL plans it, with the function's own settings (its
        # generic plan, no bitmap scan)
        cursor.execute("SELECT proconfig FROM pg_proc WHERE proname = 'ledger_transfer_balanced'")
        for setting in cursor.fetchone()[0]:
            name, value = setting.split("=", 1)
            cursor.execute(f"SET LOCAL {name} = {value}")
        cursor.execute(
            f"PREPARE balance_check(bigint, timestamptz, timestamptz) AS {trigger_query()}"
        )
        month = Month.of(timezone.now())
        try:
            cursor.execute("EXPLAIN EXECUTE balance_check(1, %s, %s)", [month.start, month.end])
            plan = "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("DEALLOCATE balance_check")
    # then: no table is scanned whole, and the transfer's entries are read straight from its index
    assert "Seq Scan" not in plan and "Bitmap" not in plan, plan
    assert "Index Scan using wallets_account_pkey" in plan, plan
    assert f"Index Scan using {month.partition}_transfer_id_idx" in plan, plan
    # and of the partitions (this month and the ones ahead), only this month's is read
    assert set(re.findall(r"on (wallets_entry_\d{4}_\d\d)", plan)) == {month.partition}, plan


def test_a_posting_plans_keyed_lookups_without_statistics():
    """Every statement `ledger_post_batch` runs, with the generic plans it keeps (each plan as
    auto_explain reports it while the function runs)."""
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    plans: list[str] = []
    with connection.cursor() as cursor:
        superuser_or_skip(cursor)
        thousands_of_rows_without_statistics(cursor)
        cursor.execute("LOAD 'auto_explain'")
        for setting, value in (("log_min_duration", "0"), ("log_nested_statements", "on")):
            cursor.execute(f"SET LOCAL auto_explain.{setting} = {value}")
        cursor.execute("SET LOCAL auto_explain.log_level = notice")
        cursor.connection.add_notice_handler(lambda notice: plans.append(notice.message_primary))
        move(alice["deposit"], bob["deposit"], "40.00", "plan-1")
    posting = [plan for plan in plans if "wallets_" in plan]
    assert any("INSERT INTO wallets_entry" in plan for plan in posting), plans
    assert any("UPDATE wallets_account" in plan for plan in posting), plans
    scans = [plan for plan in posting if "Seq Scan" in plan]
    assert not scans, scans
    # nor read into a bitmap first: the accounts' locks were taken after a bitmap scan and a
    # sort, which under four clients cost batches 13 % (wallets/migrations/0028)
    bitmaps = [plan for plan in posting if "Bitmap" in plan]
    assert not bitmaps, bitmaps
