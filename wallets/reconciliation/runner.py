"""Run every check inside one REPEATABLE READ snapshot and store the report.

One snapshot matters: a posting committed between reading the entries and reading the cached
balances would otherwise show up as a false discrepancy.
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
from wallets.reconciliation import games, gateway, ledger

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[..., int]


CHECKS: list[Check] = [
    Check("balances, currencies and totals (one pass over the entries)", ledger.entry_pass),
    Check("transfers sum to zero", ledger.unbalanced_transfer),
    Check("finished games' escrow", games.escrow_not_empty),
    Check("games collected vs paid", games.game_unbalanced),
    Check("games open too long", games.game_stuck),
    Check("deals not settled", games.deal_unsettled),
    Check("gateway statement", gateway.gateway_statement),
]


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
