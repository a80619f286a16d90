"""`manage.py reconcile`: run the nightly checks now, or prove a month's close again
(`--month 2026-10`); exit status 1 when anything is wrong."""

import sys

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count
from tqdm import tqdm

from wallets.models import ReconciliationReport
from wallets.months import Month
from wallets.reconciliation import CHECKS, months, reconcile_run
from wallets.reconciliation.gateway import gateway_statement_import
from wallets.reconciliation.runner import Check


class Command(BaseCommand):
    help = "Reconcile the ledger (and games, and gateway statements); exit 1 on any discrepancy."

    def add_arguments(self, parser):
        parser.add_argument(
            "--statement",
            action="append",
            default=[],
            metavar="CSV",
            help="import a payment-gateway statement (reference,amount,date,type) first",
        )
        parser.add_argument(
            "--month", help="prove this closed IST month (YYYY-MM) again instead, only it"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args, statement: list[str], no_progress: bool, month=None, **options):
        checks = None
        if month is not None:
            try:
                which = Month.parse(month)
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            checks = [
                Check(
                    f"month close {which}",
                    months.month_close(which),
                    months.CLOSE_KINDS,
                    on_standby=False,  # it proves the month again in a temporary table
                )
            ]
        for path in statement:
            with open(path, "rb") as fh:
                imported = gateway_statement_import(name=path, content=fh.read())
            self.stdout.write(f"imported {imported} ({imported.line_count} lines)")
        with tqdm(
            total=len(checks or CHECKS),
            desc="reconcile",
            unit="check",
            disable=no_progress,
            file=sys.stderr,
        ) as bar:

            def step(name: str) -> None:
                bar.set_postfix_str(name)
                bar.update(1)

            report = reconcile_run(
                trigger=ReconciliationReport.Trigger.COMMAND, progress=step, checks=checks
            )
        self.stdout.write(
            f"report #{report.pk}: {report.status}, {report.discrepancy_count} discrepancies, "
            f"{report.stats.get('entries', 0)} entries in {report.stats.get('seconds', '?')} s"
        )
        for kind, count in _counts(report).items():
            self.stdout.write(f"  {kind}: {count}")
        if report.status == ReconciliationReport.Status.FAILED:
            self.stderr.write(report.error)
        if report.status != ReconciliationReport.Status.CLEAN:
            sys.exit(1)


def _counts(report: ReconciliationReport) -> dict[str, int]:
    rows = report.discrepancies.values("kind").annotate(n=Count("id")).order_by("kind")
    return {row["kind"]: row["n"] for row in rows}
