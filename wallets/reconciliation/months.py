"""Month checks: the entries' partitions ahead of time, and a month close proved again (an
archived month's from its file)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist

from wallets.models import MonthClose, ProposalStatus
from wallets.months import Month
from wallets.reconciliation.discrepancies import Row
from wallets.services.archives import archive_check, archives_in_force
from wallets.services.months import month_close_reprove, month_trigger_installed
from wallets.services.partitions import months_ahead

PARTITION_KINDS = {
    "partitions_ahead": "fewer entry partitions made ahead than a posting may need",
}


def partitions_ahead(cursor, ctx: dict) -> list[Row]:
    """Fewer than `LEDGER_PARTITIONS_AHEAD_MINIMUM` months after this one have a partition."""
    ahead = months_ahead()
    ctx["stats"]["partitions_ahead"] = ahead
    minimum = settings.LEDGER_PARTITIONS_AHEAD_MINIMUM
    if ahead >= minimum:
        return []
    return [("partitions_ahead", "entry partitions", minimum, ahead, "", {})]


CLOSE_KINDS = {
    "month_close_balance": "a closing balance differs from the month's entries proved again",
    "month_close_digest": "a close's digest differs from the one proved again",
    "month_close_open": "a closed month's partition no longer refuses entries",
    "month_not_closed": "the month asked for has no close",
    "month_archive": "an archived month's file differs from its record or its close",
}


def month_close(month: Month):
    """The check of one month's close (`manage.py reconcile --month 2026-10`)."""

    def run(cursor, ctx: dict) -> list[Row]:
        try:
            close = MonthClose.objects.get(month=month.name, status=ProposalStatus.APPROVED)
        except ObjectDoesNotExist:
            return [("month_not_closed", month.name, None, None, "", {})]
        archive = archives_in_force().filter(month=month.name).first()
        if archive is not None:  # its entries are in the file: proved from it
            ctx["stats"].update(month=month.name, archived=archive.path, entries=archive.rows)
            return [("month_archive", month.name, None, None, "", {"difference": found})
                    for found in archive_check(archive)]  # fmt: skip
        proof, differ = month_close_reprove(cursor, close=close)
        ctx["stats"].update(month=month.name, entries=proof.entries, accounts=proof.accounts)
        cursor.execute(
            f"""SELECT 'month_close_balance', 'account ' || d.account_id, d.proved, d.stored,
                       d.currency, jsonb_build_object('account_id', d.account_id, 'month', %s::text)
                  FROM ({differ}) AS d(account_id, currency, stored, proved)""",
            [month.name],
        )
        found = cursor.fetchall()
        if proof.digest != close.digest:
            digests = {"stored": close.digest, "proved": proof.digest}
            found.append(("month_close_digest", month.name, None, None, "", digests))
        if not month_trigger_installed(cursor, month):
            found.append(("month_close_open", month.partition, None, None, "", {}))
        return found

    return run
