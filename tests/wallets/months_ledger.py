"""A ledger over two closed IST months and the open one, for the tests of as-of balances and
archives: alice pays bob 40.25 in the first month, 10.00 in the second, and bob pays her back
5.00 now."""

from dataclasses import dataclass

from django.db import connection
from django.utils import timezone

from tests.builders import funded_player, move, staff
from tests.wallets.payments import backdate
from wallets.models import MonthClose, Transfer
from wallets.months import Month
from wallets.roles import APPROVER, OPERATOR
from wallets.services.months import month_close_propose
from wallets.services.partitions import entry_partition_ensure
from wallets.services.proposals import proposal_decide

SECOND = Month.of(timezone.now()).previous()
FIRST = SECOND.previous()


def middle(month: Month):
    return month.start + (month.end - month.start) / 2


@dataclass
class MonthsLedger:
    alice: dict
    bob: dict
    closes: list[MonthClose]


def month_close(month: Month) -> MonthClose:
    operator = staff(f"op-{month}", OPERATOR)
    approver = staff(f"ap-{month}", APPROVER)
    proposed = month_close_propose(proposed_by=operator, month=month.name, reason="month end")
    return proposal_decide(
        model=MonthClose, proposal_id=proposed.pk, decided_by=approver, approve=True
    )


def months_ledger() -> MonthsLedger:
    alice = funded_player("alice", "100.00")
    bob = funded_player("bob", "0")
    move(alice["deposit"], bob["deposit"], "40.25", "pay-1")
    backdate(middle(FIRST), transfers=Transfer.objects.values_list("pk", flat=True))
    backdate(middle(SECOND), transfers=[move(alice["deposit"], bob["deposit"], "10.00", "pay-2")
                                        .transfer_id])  # fmt: skip
    closes = [month_close(FIRST), month_close(SECOND)]
    move(bob["deposit"], alice["deposit"], "5.00", "pay-3")
    return MonthsLedger(alice, bob, closes)


def months_reopened() -> None:
    """A flush empties the tables, not the schema: the closes' triggers and an archived month's
    missing partition would outlive a test that commits (`transaction=True`)."""
    for month in (FIRST, SECOND):
        entry_partition_ensure(month)
        with connection.cursor() as cursor:
            cursor.execute(f'DROP TRIGGER IF EXISTS entry_month_closed ON "{month.partition}"')


def entries_sum(account, before) -> str:
    """What raw SQL says the account's entries before a moment add up to."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(amount), 0)::numeric(20, 2)::text FROM wallets_entry "
            "WHERE account_id = %s AND created_at < %s",
            [account.pk, before],
        )
        return cursor.fetchone()[0]
