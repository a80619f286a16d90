"""The games' metrics (rummy_ledger.metrics): deals stored and settled, the settlement lag, and
the deals waiting for settlement, read at a scrape."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric

from tournaments.models import Deal

DEALS_STORED = Counter("rummy_deals_stored", "Deals checked and stored (acknowledged 202).")
DEALS_SETTLED = Counter("rummy_deals_settled", "Deals settled (scored, money posted).")
SETTLEMENT_LAG = Histogram(
    "rummy_settlement_lag_seconds",
    "From a deal's storing to its settlement's commit.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300),
)


def deal_stored(count: int = 1) -> None:
    """Counted once the deals' transaction commits (a rolled-back one was never stored)."""
    if count:
        transaction.on_commit(lambda: DEALS_STORED.inc(count))


def deals_settled(deals: list[Deal]) -> None:
    """Counted, with each one's lag, once the settlement commits."""
    stored_at = [deal.created_at for deal in deals]

    def count() -> None:
        now = timezone.now()
        DEALS_SETTLED.inc(len(stored_at))
        for created in stored_at:
            SETTLEMENT_LAG.observe((now - created).total_seconds())

    transaction.on_commit(count)


def unsettled() -> Iterable[Metric]:
    """One read of the partial index over stored deals."""
    waiting = Deal.objects.filter(status=Deal.Status.STORED).aggregate(
        n=Count("pk"), oldest=Min("created_at")
    )
    age = (timezone.now() - waiting["oldest"]).total_seconds() if waiting["oldest"] else 0.0
    yield GaugeMetricFamily(
        "rummy_deals_unsettled", "Deals stored and not yet settled.", value=waiting["n"]
    )
    yield GaugeMetricFamily(
        "rummy_deals_unsettled_oldest_seconds",
        "Age of the oldest deal not yet settled (0 when none waits).",
        value=age,
    )


READINGS = [("deals", unsettled)]
