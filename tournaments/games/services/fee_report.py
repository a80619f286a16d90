"""The fee (rake) report's days: closed days from `FeeDay`, the days still open from the ledger.

A day is closed DAY_CLOSED_AFTER after it ends (postings are short transactions, and the ledger
stamps each entry with its transaction's start). Beat runs `fee_days_close` every night, so
finance's first look at a month reads one day from the ledger, not thirty.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.utils import timezone

from tournaments.games import queries
from tournaments.models import FeeDay
from wallets.models import Account, Entry

DAY_CLOSED_AFTER = timedelta(hours=1)


def _bounds(day: date) -> tuple[datetime, datetime]:
    tz = timezone.get_current_timezone()
    start = datetime.combine(day, time.min, tzinfo=tz)
    return start, datetime.combine(day + timedelta(days=1), time.min, tzinfo=tz)


def last_closed_day(now: datetime | None = None) -> date:
    now = now or timezone.now()
    return timezone.localtime(now - DAY_CLOSED_AFTER).date() - timedelta(days=1)


def fee_report_days(
    *, fee_account: Account, first: date, last: date, now: datetime | None = None
) -> list[dict]:
    """Rows of `queries.fee_report_rows` (day, format, currency, fee, games) for first..last;
    the days read from the ledger that were closed at `now` are stored."""
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    stored = FeeDay.objects.filter(fee_account=fee_account, day__range=(first, last))
    by_day = {f.day: [_loaded(f.day, row) for row in f.rows] for f in stored}
    missing = [day for day in days if day not in by_day]
    if missing:
        fresh: dict[date, list[dict]] = {day: [] for day in missing}
        rows = queries.fee_report_rows(
            fee_account_id=fee_account.pk,
            start=_bounds(missing[0])[0],
            end=_bounds(missing[-1])[1],
        )
        for row in rows:
            if row["day"] in fresh:  # the span may cover stored days: those stay as stored
                fresh[row["day"]].append(row)
        by_day.update(fresh)
        # Read from a standby (the fee report's page), these days are whole too: it is never
        # more than REPLICA_MAX_LAG_SECONDS behind, far less than DAY_CLOSED_AFTER.
        closed = last_closed_day(now)
        FeeDay.objects.bulk_create(
            [
                FeeDay(fee_account=fee_account, day=day, rows=[_stored(r) for r in fresh[day]])
                for day in missing
                if day <= closed
            ],
            ignore_conflicts=True,  # another request or the nightly job stored it meanwhile
        )
    return [row for day in days for row in by_day[day]]


def fee_days_close(*, fee_account: Account, now: datetime | None = None) -> int:
    """Store every closed day after the last one stored (from the first fee entry on); how many
    days that was."""
    closed = last_closed_day(now)
    latest = FeeDay.objects.filter(fee_account=fee_account).order_by("-day").first()
    if latest is not None:
        first = latest.day + timedelta(days=1)
    else:
        oldest = Entry.objects.filter(account=fee_account).order_by("created_at").first()
        if oldest is None:
            return 0
        first = timezone.localtime(oldest.created_at).date()
    if first > closed:
        return 0
    fee_report_days(fee_account=fee_account, first=first, last=closed, now=now)
    return (closed - first).days + 1


def _stored(row: dict) -> dict:
    return {k: str(v) if k == "fee" else v for k, v in row.items() if k != "day"}


def _loaded(day: date, row: dict) -> dict:
    return {"day": day, **row, "fee": Decimal(row["fee"])}
