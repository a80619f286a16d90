"""`manage.py wind_down --client NAME [--plan] [--csv PATH] [--chunk N]`: run the approved wind-down
(`wallets.services.wind_down`; proposed and approved in the admin, by two people), or with
`--plan` print what it would do and change nothing. Afterwards (and with `--plan`) the CSV at
`--csv` (default `wind-down-<plan|report>.csv` under the data directory, `RUMMY_DATA_DIR`) lists
every player. A progress bar on a
terminal, a summary line otherwise; run it again at any time (idempotent, resumable)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from rummy_ledger.csv_cells import csv_write
from rummy_ledger.errors import DomainError
from wallets.money.amounts import amount_text
from wallets.services import wind_down as service


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, not {text!r}")
    return int(text)


PLAN_HEADER = ["player", "kyc_status", "deposit", "winnings", "refund", "held"]


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        csv_write(f, header, rows)


def default_path(kind: str) -> Path:
    """Where a plan or report goes without `--csv`: the data directory, not wherever the command
    happens to run."""
    return settings.DATA_DIR / f"wind-down-{kind}.csv"


class Command(BaseCommand):
    help = "Close the real-money book: run the approved wind-down, or --plan it."

    def add_arguments(self, parser):
        parser.add_argument("--client", required=True, help="the payments client of the refunds")
        parser.add_argument("--plan", action="store_true", help="print the plan, change nothing")
        parser.add_argument(
            "--csv", type=Path, help="the plan's or report's file (default: the data directory)"
        )
        parser.add_argument(
            "--chunk",
            type=positive,
            default=service.CHUNK,
            help=f"players refunded in one transaction (default {service.CHUNK})",
        )

    def handle(self, *args, client: str, plan: bool, csv: Path | None, chunk: int, **options):
        try:
            wind_down, payments = service.wind_down_ready(client_name=client)
            if plan:
                return self._plan(csv or default_path("plan"))
            tty = sys.stdout.isatty()

            def progress(players):
                return tqdm(players, desc="players", unit="player", disable=not tty)

            run = service.wind_down_run(
                wind_down=wind_down, client=payments, progress=progress, chunk=chunk
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        path = csv or default_path("report")
        write_csv(path, service.REPORT_HEADER, service.wind_down_report_rows(wind_down))
        self.stdout.write(f"{run.summary()}; report: {path}")
        if run.busy:
            raise CommandError(f"{len(run.busy)} player(s) were busy: run it again")

    def _plan(self, path: Path) -> None:
        plan = service.wind_down_plan()
        rows = [
            [p.player, p.kyc_status, *map(amount_text, (p.deposit, p.winnings, p.refund, p.held))]
            for p in plan.lines
        ]  # fmt: skip
        write_csv(path, PLAN_HEADER, rows)
        steps = ", ".join(f"{n} open {name}" for name, n in plan.open_by_step.items())
        refund = sum((p.refund for p in plan.lines), service.ZERO)
        held = sum((p.held for p in plan.lines), service.ZERO)
        self.stdout.write(
            f"plan: cancel {steps or 'nothing'}; expire {plan.bonus_lots} bonus lot(s); "
            f"refund {len(plan.lines)} player(s) {amount_text(refund)} INR (TDS per Rule 133 at "
            f"the request), hold {amount_text(held)} INR (no verified KYC); nothing changed; "
            f"CSV: {path}"
        )
