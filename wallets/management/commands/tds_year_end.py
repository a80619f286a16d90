"""`manage.py tds_year_end 2026-27 [--as-of ISO]`: close a financial year (Rule 133's year-end
TDS for every player); the Celery beat job does the same at 00:05 IST on 1 April."""

from datetime import datetime

from django.core.management.base import BaseCommand, CommandError

from rummy_ledger.errors import DomainError
from wallets.money.amounts import amount_text
from wallets.tax import formulas
from wallets.tax.tds import tds_year_end


class Command(BaseCommand):
    help = "Withhold the year-end TDS of a financial year (idempotent per player and year)."

    def add_arguments(self, parser):
        parser.add_argument("fy", help="the financial year, like 2026-27")
        parser.add_argument(
            "--as-of",
            help="close the year at this moment instead of its end (ISO, IST by default; tests)",
        )

    def handle(self, *args, fy: str, as_of: str | None, **options):
        try:
            year = formulas.financial_year(fy)
            moment = None
            if as_of:
                moment = datetime.fromisoformat(as_of)
                if moment.tzinfo is None:
                    moment = moment.replace(tzinfo=formulas.INDIA)
            run = tds_year_end(fy=year, as_of=moment)
        except (ValueError, DomainError) as exc:  # TaxError is a ValueError
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"FY {run.fy} closed as of {run.as_of.isoformat()}: {run.closed} player(s) now, "
            f"{run.already} before; TDS {amount_text(run.tds)}, "
            f"withheld {amount_text(run.withheld)}"
        )
        if run.busy:
            raise CommandError(
                f"{len(run.busy)} player(s) were busy and are not closed yet (run it again): "
                + ", ".join(run.busy[:20])
            )
