"""The entries' monthly partitions: made ahead of time, so a posting never meets a missing one.

There is no DEFAULT partition (a row landing there would block every later month's creation),
so the months ahead must exist before they start: the scheduled job (`wallets.tasks.
entry_partitions_ensure`, daily) keeps `LEDGER_PARTITIONS_AHEAD` months after the current one,
and reconciliation reports fewer than `LEDGER_PARTITIONS_AHEAD_MINIMUM`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from rummy_ledger.db import read_connection
from wallets.months import Month

_PARTITIONS = """
SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'wallets_entry'::regclass ORDER BY c.relname
"""


def entry_partitions() -> list[Month]:
    """The months that have a partition, in order (on reconciliation's snapshot when it runs)."""
    with read_connection().cursor() as cursor:
        cursor.execute(_PARTITIONS)
        names = [row[0] for row in cursor.fetchall()]
    return [Month(int(name[-7:-3]), int(name[-2:])) for name in names]


def months_ahead(*, now=None) -> int:
    """How many months after the current one have their partition, without a gap."""
    have = set(entry_partitions())
    month, ahead = Month.of(now or timezone.now()).next(), 0
    while month in have:
        ahead, month = ahead + 1, month.next()
    return ahead


def entry_partition_ensure(month: Month) -> bool:
    """Create one month's partition unless it exists; True when it was created."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [month.partition])
        if cursor.fetchone()[0]:
            return False
        # Creating a partition locks the parent briefly: bounded, and retried by the next run.
        cursor.execute("SET LOCAL lock_timeout = %s", [f"{settings.LEDGER_LOCK_TIMEOUT_MS}ms"])
        cursor.execute(
            f'CREATE TABLE IF NOT EXISTS "{month.partition}" PARTITION OF wallets_entry '
            "FOR VALUES FROM (%s) TO (%s)",
            [month.start, month.end],
        )
    return True


def entry_partitions_ensure(*, now=None) -> list[Month]:
    """The current month's partition and `LEDGER_PARTITIONS_AHEAD` after it; the ones created."""
    current = Month.of(now or timezone.now())
    wanted = [current.next(n) for n in range(settings.LEDGER_PARTITIONS_AHEAD + 1)]
    return [month for month in wanted if entry_partition_ensure(month)]
