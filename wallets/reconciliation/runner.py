"""Run every registered check inside one REPEATABLE READ snapshot and store the report.

One snapshot matters: a posting committed between reading the entries and reading the cached
balances would otherwise show up as a false discrepancy. The ledger's own checks come first (the
one pass over the entries keeps its summary in `ctx` for later checks); other apps register
theirs with `register` from their AppConfig.ready(), so this module names no other app's tables.

The snapshot is the standby's when finance reads one (`rummy_ledger.replica.finance_reads`:
configured, answering and within REPLICA_MAX_LAG_SECONDS), else the primary's; the report
records which, and how far behind the standby was (`stats["read_from"]`). Checks only read (a
hot standby refuses every write, temporary tables included) and hand back their discrepancies;
the report and its discrepancies are written on the primary once the snapshot is done.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone

from rummy_ledger.replica import ReadSource, finance_reads
from wallets.models import ReconciliationReport
from wallets.reconciliation import bonus, chain, entries, gateway, months, payments
from wallets.reconciliation.discrepancies import Row, discrepancies_store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Check:
    """`run(cursor, ctx)` reads on the snapshot's cursor and returns its discrepancies (rows of
    `discrepancies.Row`); `kinds` describes each discrepancy kind it reports, for finance;
    `on_standby` is false for a check that needs the primary (one building a temporary table)."""

    name: str
    run: Callable[..., list[Row]]
    kinds: dict[str, str]
    on_standby: bool = True


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
    Check("the ledger's hash chain (since the last clean run)", chain.chain, chain.KINDS),
    Check("entry partitions ahead", months.partitions_ahead, months.PARTITION_KINDS),
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
    checks: list[Check] | None = None,
) -> ReconciliationReport:
    """Run the checks (every registered one unless `checks` are given), store every
    discrepancy, return the finished report."""
    report = ReconciliationReport.objects.create(
        trigger=trigger, started_by_id=started_by_id or getattr(started_by, "pk", None)
    )
    checks = CHECKS if checks is None else checks
    stats: dict = {"checks": {}}
    started = time.perf_counter()
    try:
        found = _snapshot_read(checks, {"stats": stats}, progress)
        stats["seconds"] = round(time.perf_counter() - started, 3)
        with transaction.atomic(using=DEFAULT_DB_ALIAS):
            discrepancies_store(report.pk, found)
            report.discrepancy_count = len(found)
            report.status = (
                ReconciliationReport.Status.DISCREPANCIES
                if found
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


def _snapshot_read(
    checks: list[Check], ctx: dict, progress: Callable[[str], None] | None
) -> list[Row]:
    """Every check on one REPEATABLE READ snapshot (the standby's when finance reads one);
    their discrepancies, in order."""
    stats, found = ctx["stats"], []
    with finance_reads(standby=all(c.on_standby for c in checks)) as source:
        stats["read_from"] = read_from(source)
        reader = connections[source.alias]
        outermost = not reader.in_atomic_block
        with transaction.atomic(using=source.alias), reader.cursor() as cursor:
            if outermost:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor.execute("SELECT set_config('work_mem', %s, true)", [settings.RECONCILE_WORK_MEM])
            # no JIT: the checks run for milliseconds to a second, and compiling one cost more
            # than it ran (28 ms of a 60 ms games check whose lookups per game the planner
            # costed past jit_above_cost; the one pass took as long with it as without)
            cursor.execute("SELECT set_config('jit', 'off', true)")
            for check in checks:
                t0 = time.perf_counter()
                rows = check.run(cursor, ctx)
                found.extend(rows)
                stats["checks"][check.name] = {
                    "found": len(rows),
                    "seconds": round(time.perf_counter() - t0, 3),
                }
                if progress:
                    progress(check.name)
    return found


def read_from(source: ReadSource) -> dict:
    """What the report keeps of where it read: the alias, the standby's lag, the notice."""
    lag = source.lag
    return {
        "database": source.alias,
        "lag_seconds": None if lag is None or lag == float("inf") else round(lag, 3),
        "notice": source.notice,
    }
