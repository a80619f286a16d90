"""Closing an IST month (maker-checker) and proving a close again.

A close is one pass over the month's entries, added to the previous close's balances: every
account's closing balance (and what it ever received), stored with a digest chained to the
previous close's. Taking it installs a trigger on the month's partition that refuses any entry
dated in it (`ledger_month_closed`, RL008): a correction is an adjustment in an open month. It is
taken only when no transaction that started in the month is still running (an entry is dated
with its transaction's start, so none can arrive later), and when the month's entries net to
zero in every currency. Re-proving a close repeats the pass and compares.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.utils import timezone

from wallets.errors import ProposalInvalid
from wallets.models import Entry, MonthClose, MonthCloseBalance, ProposalStatus
from wallets.months import Month
from wallets.services.proposals import permission_required, reason_required

CLOSING = "month_closing"

# The one pass: the month's entries per (account, currency), added to the previous close's
# balances (none for the first close).
_PASS = f"""
DROP TABLE IF EXISTS {CLOSING};
CREATE TEMP TABLE {CLOSING} ON COMMIT DROP AS
WITH moved AS (
    SELECT account_id, amount_currency AS currency, sum(amount) AS total,
           coalesce(sum(amount) FILTER (WHERE amount > 0), 0) AS inflow, count(*) AS n
      FROM wallets_entry
     WHERE created_at >= %(start)s AND created_at < %(end)s
     GROUP BY account_id, amount_currency
), previous AS (
    SELECT account_id, currency, balance, inflow FROM {MonthCloseBalance._meta.db_table}
     WHERE close_id = %(previous)s
)
SELECT coalesce(p.account_id, m.account_id) AS account_id,
       coalesce(p.currency, m.currency) AS currency,
       (coalesce(p.balance, 0) + coalesce(m.total, 0))::numeric(20, 2) AS balance,
       (coalesce(p.inflow, 0) + coalesce(m.inflow, 0))::numeric(20, 2) AS inflow,
       coalesce(m.n, 0) AS n
  FROM previous p FULL JOIN moved m ON m.account_id = p.account_id AND m.currency = p.currency;
"""
_SUMMARY = f"""
SELECT coalesce(sum(n), 0), count(*),
       encode(sha256(convert_to(
           %(previous_digest)s || E'\\n' || %(month)s || E'\\n' || coalesce(sum(n), 0) || E'\\n' ||
           coalesce(string_agg(account_id || ':' || currency || ':' || balance || ':' || inflow,
                               E'\\n' ORDER BY account_id, currency), ''),
           'UTF8')), 'hex'),
       coalesce((SELECT array_agg(currency ORDER BY currency) FROM
                   (SELECT currency FROM {CLOSING} GROUP BY currency HAVING sum(balance) <> 0) x),
                '{{}}')
  FROM {CLOSING}
"""
_BUSY = """
SELECT (SELECT count(*) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start < %(end)s)
     + (SELECT count(*) FROM pg_prepared_xacts
         WHERE database = current_database() AND prepared < %(end)s)
"""
_CLOSED_TRIGGER = "entry_month_closed"


@dataclass(frozen=True)
class Proof:
    """What one pass over a month proved (its balances are in the temporary table)."""

    entries: int
    accounts: int
    digest: str
    unbalanced_currencies: list[str]


def last_close(before: Month | None = None) -> MonthClose | None:
    """The newest close (of a month before `before`, when given)."""
    closes = MonthClose.objects.filter(status=ProposalStatus.APPROVED)
    if before is not None:
        closes = closes.filter(month__lt=before.name)
    return closes.order_by("-month").first()


def month_closed(month: Month) -> bool:
    return MonthClose.objects.filter(month=month.name, status=ProposalStatus.APPROVED).exists()


def month_close_propose(*, proposed_by: AbstractBaseUser, month: str, reason: str) -> MonthClose:
    """An operator proposes closing a month that has ended, the one after the last close."""
    permission_required(proposed_by, "wallets.add_monthclose")
    wanted = month_checked(month)
    return MonthClose.objects.create(
        month=wanted.name, reason=reason_required(reason, "a month close"), proposed_by=proposed_by
    )


def month_checked(text: str, *, now=None) -> Month:
    """The month, or `ProposalInvalid` saying why it cannot be closed (yet)."""
    try:
        month = Month.parse(text)
    except ValueError as exc:
        raise ProposalInvalid(str(exc), details={"month": text}) from exc
    if month.end > (now or timezone.now()):
        raise ProposalInvalid(f"{month} has not ended yet", details={"month": month.name})
    if month_closed(month):
        raise ProposalInvalid(f"{month} is closed already", details={"month": month.name})
    previous = last_close()
    if previous is not None and Month.parse(previous.month) > month:
        raise ProposalInvalid(
            f"{month} is before the last close ({previous.month})", details={"month": month.name}
        )
    expected = Month.parse(previous.month).next() if previous else None
    if expected is not None and month != expected:
        raise ProposalInvalid(
            f"months close in order: {expected} is next", details={"month": month.name}
        )
    if expected is None and Entry.objects.filter(created_at__lt=month.start).exists():
        raise ProposalInvalid(
            f"there are entries before {month}: close the first month with entries first",
            details={"month": month.name},
        )
    return month


def month_close_take(close: MonthClose) -> None:
    """Approved: refuse the month's entries from now on, prove its balances, store them."""
    month = month_checked(close.month)
    previous = last_close(before=month)
    with connection.cursor() as cursor:
        if transactions_started_before(cursor, month.end):
            raise ProposalInvalid(
                f"a transaction that started in {month} or before is still running: approve "
                "again when it has ended",
                details={"month": month.name},
            )
        month_entries_refuse(cursor, month)
        proof = month_prove(cursor, month=month, previous=previous)
        if proof.unbalanced_currencies:
            raise ProposalInvalid(
                f"the entries of {month} do not net to zero in "
                f"{', '.join(proof.unbalanced_currencies)}: reconcile before closing",
                details={"month": month.name},
            )
        cursor.execute(
            f"INSERT INTO {MonthCloseBalance._meta.db_table} "
            "(close_id, account_id, currency, balance, inflow) "
            f"SELECT %s, account_id, currency, balance, inflow FROM {CLOSING}",
            [close.pk],
        )
    close.previous = previous
    close.closed_at = timezone.now()
    close.entries, close.accounts, close.digest = proof.entries, proof.accounts, proof.digest
    close.save(update_fields=["previous", "closed_at", "entries", "accounts", "digest"])


def month_entries_refuse(cursor, month: Month) -> None:
    """The month's partition refuses every entry from now on (it waits for whoever is inserting
    into it); a restored archive gets it again (`wallets.services.archives`)."""
    cursor.execute(
        f'CREATE TRIGGER {_CLOSED_TRIGGER} BEFORE INSERT ON "{month.partition}" '
        "FOR EACH ROW EXECUTE FUNCTION ledger_month_closed()"
    )


def transactions_started_before(cursor, end) -> int:
    """Transactions of this database still running (or prepared) that started before `end`,
    other than the caller's."""
    cursor.execute(_BUSY, {"end": end})
    return cursor.fetchone()[0]


def month_prove(cursor, *, month: Month, previous: MonthClose | None) -> Proof:
    """One pass over the month's entries from the previous close, into the temporary table."""
    cursor.execute(
        _PASS,
        {"start": month.start, "end": month.end, "previous": previous.pk if previous else None},
    )
    cursor.execute(
        _SUMMARY,
        {"previous_digest": previous.digest if previous else "", "month": month.name},
    )
    entries, accounts, digest, unbalanced = cursor.fetchone()
    return Proof(int(entries), accounts, digest, list(unbalanced))


def month_trigger_installed(cursor, month: Month) -> bool:
    cursor.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = %s AND tgrelid = to_regclass(%s))",
        [_CLOSED_TRIGGER, f'"{month.partition}"'],
    )
    return cursor.fetchone()[0]


def month_close_reprove(cursor, *, close: MonthClose) -> tuple[Proof, str]:
    """Prove a close again (in the caller's transaction): the new proof, and the SQL that lists
    where the stored balances differ from it (account, currency, stored, proved)."""
    proof = month_prove(cursor, month=Month.parse(close.month), previous=close.previous)
    differ = f"""
        SELECT coalesce(s.account_id, p.account_id), coalesce(s.currency, p.currency),
               s.balance, p.balance
          FROM (SELECT account_id, currency, balance FROM {MonthCloseBalance._meta.db_table}
                 WHERE close_id = {int(close.pk)}) s
          FULL JOIN {CLOSING} p ON p.account_id = s.account_id AND p.currency = s.currency
         WHERE s.balance IS DISTINCT FROM p.balance"""
    return proof, differ
