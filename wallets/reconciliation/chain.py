"""The ledger's hash chain in the nightly reconciliation, incrementally: the links chained since
the last run that verified clean are recomputed (wallets/chain/verify.py) in the report's
snapshot, and each difference is a discrepancy naming the transfer (and the deal) that changed;
committed transfers the job has not chained after CHAIN_BEHIND_MINUTES are one more, counted up
to BEHIND_COUNTED (a job stopped for a week must not make the night count a week of transfers).
The whole chain, from its first link or a day on, is `manage.py verify_ledger`'s.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from rummy_ledger import commit_order
from wallets.chain.links import chain_head
from wallets.chain.verify import chain_verify
from wallets.models import ReconciliationReport, Transfer
from wallets.reconciliation.discrepancies import Row

KINDS = {
    "chain_difference": "a transfer (or the deal that caused it) differs from the ledger's chain",
    "chain_behind": "committed transfers the chain's job has not chained",
}

BEHIND_COUNTED = 10_000  # beyond this many, the discrepancy says "or more"
BEHIND_SQL = f"""
SELECT id FROM {Transfer._meta.db_table}
 WHERE {commit_order.after()} AND created_at < %(before)s
 ORDER BY txid, id
 LIMIT %(limit)s
"""


def _verified_through() -> int:
    """The last link a previous run verified clean (0: none yet)."""
    last = (
        ReconciliationReport.objects.filter(stats__chain__has_key="verified_through")
        .order_by("-pk")
        .values_list("stats__chain__verified_through", flat=True)
        .first()
    )
    return int(last or 0)


def _behind(cursor) -> list[Row]:
    before = timezone.now() - timedelta(minutes=settings.CHAIN_BEHIND_MINUTES)
    params = {
        **commit_order.after_parameters(chain_head().position),
        "before": before,
        "limit": BEHIND_COUNTED + 1,
    }
    cursor.execute(BEHIND_SQL, params)
    ids = [transfer_id for (transfer_id,) in cursor.fetchall()]
    if not ids:
        return []
    count, more = min(len(ids), BEHIND_COUNTED), len(ids) > BEHIND_COUNTED
    subject = f"{count}{' or more' if more else ''} transfers not chained, the first {ids[0]}"
    details = {"transfers": count, "more": more, "first": ids[0]}
    return [("chain_behind", subject, None, None, "", details)]


def chain(cursor, ctx: dict) -> list[Row]:
    """Verify the links chained since the last clean verification; return what differs."""
    result = chain_verify(after=_verified_through())
    found = [
        (
            "chain_difference",
            str(d)[:200],
            None,
            None,
            "",
            {"link": d.seq, "transfer": d.transfer_id, "causes": list(d.causes)},
        )
        for d in result.differences
    ]
    ctx["stats"]["chain"] = {
        "after": result.after,
        "checked": result.checked,
        "differences": result.found,
        # a run that found a difference leaves the next one to look again from the same link
        "verified_through": result.through if result.clean else result.after,
    }
    return found + _behind(cursor)
