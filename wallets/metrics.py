"""The ledger's metrics read at a scrape (rummy_ledger.metrics): withdrawals waiting, and the
last reconciliation's result."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from wallets.models import ReconciliationReport, Withdrawal

WAITING = (Withdrawal.Status.REQUESTED, Withdrawal.Status.APPROVED)


def withdrawals_waiting() -> Iterable[Metric]:
    """Requested (waiting for finance or the gateway) and approved (waiting for the gateway)."""
    rows = {
        row["status"]: row
        for row in Withdrawal.objects.filter(status__in=WAITING)
        .values("status")
        .annotate(n=Count("pk"), oldest=Min("requested_at"))
    }
    count = GaugeMetricFamily(
        "rummy_withdrawals_waiting", "Withdrawals not yet paid or failed.", labels=["status"]
    )
    age = GaugeMetricFamily(
        "rummy_withdrawals_waiting_oldest_seconds",
        "Age of the oldest withdrawal waiting (0 when none).",
        labels=["status"],
    )
    now = timezone.now()
    for status in WAITING:
        row = rows.get(status)
        count.add_metric([status], row["n"] if row else 0)
        age.add_metric([status], (now - row["oldest"]).total_seconds() if row else 0.0)
    yield count
    yield age


def last_reconciliation() -> Iterable[Metric]:
    """The latest finished reconciliation: its result, when it finished, its discrepancies."""
    report = (
        ReconciliationReport.objects.exclude(status=ReconciliationReport.Status.RUNNING)
        .order_by("-started_at")
        .only("status", "finished_at", "discrepancy_count")
        .first()
    )
    result = GaugeMetricFamily(
        "rummy_reconciliation_last_result",
        "1 for the status of the last finished reconciliation (clean, discrepancies, failed).",
        labels=["status"],
    )
    for status in ("clean", "discrepancies", "failed"):
        result.add_metric([status], 1 if report and report.status == status else 0)
    yield result
    if report is not None:
        yield GaugeMetricFamily(
            "rummy_reconciliation_last_finished_timestamp_seconds",
            "When the last reconciliation finished (Unix time).",
            value=report.finished_at.timestamp() if report.finished_at else 0,
        )
        yield GaugeMetricFamily(
            "rummy_reconciliation_last_discrepancies",
            "Discrepancies the last reconciliation found.",
            value=report.discrepancy_count,
        )


READINGS = [("withdrawals", withdrawals_waiting), ("reconciliation", last_reconciliation)]
