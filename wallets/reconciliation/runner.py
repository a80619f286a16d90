"""Run every registered check inside one REPEATABLE READ snapshot and store the report.

One snapshot matters: a posting committed between reading the entries and reading the cached
balances would otherwise show up as a false discrepancy. The ledger's own checks come first (the
one pass over the entries leaves its findings in a temporary table later checks may read);
other apps register theirs with `register` from their AppConfig.ready(), so this module names
no other app's tables.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from wallets.models import ReconciliationReport
from wallets.reconciliation import bonus, entries, gateway, payments

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Check:
    """`run(cursor, ctx)` inserts its discrepancies into the report and returns how many;
    `kinds` describes each discrepancy kind it reports, for finance."""

    name: str
    run: Callable[..., int]
    kinds: dict[str, str]


CHECKS: list[Check] = [
    Check(
        "balances, currencies and totals (one pass over the entries)",
        entries.entry_pass,
        entries.ENTRY_PASS_KINDS,
    ),
    Check(
        "transfers sum to zero",
        entries.unbalanced_transfer,
        {"unbalanced_transfer": "transfer does not sum to zero"},
    ),
    Check("gateway statement", gateway.gateway_statement, gateway.KINDS),
    Check("GST on deposits", payments.gst, payments.GST_KINDS),
    Check("TDS withheld", payments.tds, payments.TDS_KINDS),
    Check("withdrawals pending and stuck", payments.withdrawals, payments.WITHDRAWAL_KINDS),
    Check("bonus lots", bonus.bonus, bonus.KINDS),
]


def register(check: Check) -> None:
    """Add another app's check (once; registering the same name again replaces it)."""
    CHECKS[:] = [c for c in CHECKS if c.name != check.name] + [check]


def kind_description(kind: str) -> str:
    return next((c.kinds[kind] for c in CHECKS if kind in c.kinds), kind)


def reconcile_run(
    *,
    trigger: str,
    started_by=None,
    started_by_id: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> ReconciliationReport:
    """Run the checks, store every discrepancy, return the finished report."""
    report = ReconciliationReport.objects.create(
        trigger=trigger, started_by_id=started_by_id or getattr(started_by, "pk", None)
    )
    stats: dict = {"checks": {}}
    ctx = {"report_id": report.pk, "stats": stats}
    started = time.perf_counter()
    try:
        outermost = not connection.in_atomic_block
        with transaction.atomic(), connection.cursor() as cursor:
            if outermost:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor.execute("SELECT set_config('work_mem', %s, true)", [settings.RECONCILE_WORK_MEM])
            total = 0
            for check in CHECKS:
                t0 = time.perf_counter()
                found = check.run(cursor, ctx)
                total += found
                stats["checks"][check.name] = {
                    "found": found,
                    "seconds": round(time.perf_counter() - t0, 3),
                }
                if progress:
                    progress(check.name)
            stats["seconds"] = round(time.perf_counter() - started, 3)
            report.discrepancy_count = total
            report.status = (
                ReconciliationReport.Status.DISCREPANCIES
                if total
                else ReconciliationReport.Status.CLEAN
            )
            report.finished_at = timezone.now()
            report.stats = stats
            report.save(update_fields=["discrepancy_count", "status", "finished_at", "stats"])
    except Exception as exc:
        log.exception("reconciliation #%s failed", report.pk)
        report.status = ReconciliationReport.Status.FAILED
        report.error = f"{type(exc).__name__}: {exc}"
        report.finished_at = timezone.now()
        report.stats = stats
        report.save(update_fields=["status", "error", "finished_at", "stats"])
    if report.status != ReconciliationReport.Status.CLEAN:
        log.warning("reconciliation #%s: %s", report.pk, report.status)
    return report
