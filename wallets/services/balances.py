"""As-of balances: the one way any balance at a past moment is read.

A balance at a moment is the closing balance stored by the last month close whose month ends at
or before it (`MonthCloseBalance`), plus the account's entries from that month's end to the
moment. Both bounds are constants on `created_at`, so PostgreSQL prunes the entries' partitions
to the months since the close: the cost grows with the open months, never with history. An
archived month's entries are out of the ledger (`wallets.services.archives`): a moment at its
bounds is answered by the closes, a moment inside it is refused (`MonthArchived`).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from decimal import Decimal

from django.db.models import Sum

from wallets.errors import MonthArchived
from wallets.models import Entry, MonthArchive, MonthCloseBalance
from wallets.months import Month
from wallets.services.months import last_close


def balances_at(*, accounts: Collection[int], moment: datetime | None) -> dict[int, Decimal]:
    """Each account's balance at `moment` (what its entries dated before it add up to), or now
    (every entry: `None`), by account id; an account without any is left out."""
    month = Month.of(moment) if moment is not None else None
    if month is not None and moment != month.start and archived(month):
        raise MonthArchived(
            f"the entries of {month} are archived: a balance inside it is not known, only at "
            f"its start and its end (restore the month to read inside it)",
            details={"month": month.name},
        )
    ids = list(accounts)
    close = last_close(before=month)
    entries = Entry.objects.filter(account_id__in=ids)
    if moment is not None:
        entries = entries.filter(created_at__lt=moment)
    totals: dict[int, Decimal] = {}
    if close is not None:
        entries = entries.filter(created_at__gte=Month.parse(close.month).end)
        closing = MonthCloseBalance.objects.filter(close=close, account_id__in=ids)
        totals.update(closing.values_list("account_id", "balance"))
    moved_since = entries.values("account_id").annotate(moved=Sum("amount")).order_by()
    for account_id, moved in moved_since.values_list("account_id", "moved"):
        totals[account_id] = totals.get(account_id, Decimal(0)) + moved
    return totals


def archived(month: Month) -> bool:
    return MonthArchive.objects.filter(month=month.name, restored_at__isnull=True).exists()


def archived_until() -> datetime | None:
    """The end of the newest archived month (archives are a prefix of history), or None."""
    newest = MonthArchive.objects.filter(restored_at__isnull=True).order_by("-month").first()
    return Month.parse(newest.month).end if newest else None
