"""The tournament P&L, in the fee report's style: per day or month (IST) and currency, the
entries, rebuys and refunds that went through the tournaments' escrows, and each prize payout's
fee, overlay and prizes, summed by PostgreSQL from the ledger (`queries.tournament_pnl_rows`);
a totals row per currency (₹ and chips never summed together), a chart of cash fee against
overlay, CSV of the period shown."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from rummy_ledger.csv_cells import csv_response
from rummy_ledger.replica import finance_page
from tournaments.games.admin.charts import bar_chart
from tournaments.games.services.escrow import fee_account_id
from tournaments.tournaments.queries import PNL_COLUMNS, tournament_pnl_rows
from wallets.admin.base import DateRangeForm
from wallets.models import CASH, PlatformAccount
from wallets.money.amounts import amount_text
from wallets.services.accounts import platform_accounts

DAY, MONTH = "day", "month"
CHART_SERIES = [("fee", "#5b8c5a"), ("overlay", "#a05050")]
MAX_PERIODS = 400  # the chart's slots; the table and the CSV have every row


class PnlForm(DateRangeForm):
    by = forms.ChoiceField(choices=[(DAY, "day"), (MONTH, "month")], initial=DAY)


def month_start(day: date) -> date:
    return day.replace(day=1)


def periods(first: date, last: date, by: str) -> list[date]:
    """The days, or the first days of the months, from `first` to `last` (at most MAX_PERIODS)."""
    if by == DAY:
        return [first + timedelta(days=n) for n in range(min((last - first).days + 1, MAX_PERIODS))]
    months, month = [], month_start(first)
    while month <= last and len(months) < MAX_PERIODS:
        months.append(month)
        month = (month + timedelta(days=32)).replace(day=1)
    return months


COLUMNS = [*PNL_COLUMNS, "net"]


def with_net(row: dict) -> dict:
    """The row with `net`, what the platform kept (its fee less the overlay it paid to make up
    a guarantee), and its `amounts` in the order of COLUMNS."""
    row = {**row, "net": row["fee"] - row["overlay"]}
    return {**row, "amounts": [row[c] for c in COLUMNS]}


def totals_of(rows: list[dict]) -> list[dict]:
    """One totals row per currency (a currency is never added to another)."""
    sums: dict = defaultdict(lambda: dict.fromkeys(PNL_COLUMNS, Decimal(0)))
    for row in rows:
        for column in PNL_COLUMNS:
            sums[row["currency"]][column] += row[column]
    return [with_net({"currency": c, **by_column}) for c, by_column in sorted(sums.items())]


@finance_page
def tournament_pnl_view(model_admin: admin.ModelAdmin, request: HttpRequest):
    """Linked from the index (`wallets.admin.reports`) and the tournaments' list."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    today = timezone.localdate()
    defaults = {"start": today - timedelta(days=13), "end": today, "by": DAY}
    asked = {k: v for k, v in request.GET.items() if k in PnlForm.base_fields}
    form = PnlForm({**defaults, **asked})
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": "Tournament P&L",
        "form": form,
        "rows": None,
    }
    if form.is_valid():
        first, last, by = (form.cleaned_data[k] for k in ("start", "end", "by"))
        start, end = form.period()
        accounts = platform_accounts()
        overlay = [
            accounts[c].pk for c in (PlatformAccount.PROMOTIONS, PlatformAccount.CHIPS_ISSUANCE)
        ]
        rows = [
            with_net(row)
            for row in tournament_pnl_rows(
                by=by,
                fee_account_id=fee_account_id(),
                overlay_account_ids=overlay,
                start=start,
                end=end,
            )
        ]
        if request.GET.get("format") == "csv":
            return _pnl_csv(rows, first, last, by)
        cash = {
            (r["period"], name): r[name]
            for r in rows
            if r["currency"] == CASH
            for name, _ in CHART_SERIES
        }
        label = (lambda d: f"{d:%d %b}") if by == DAY else (lambda d: f"{d:%b %Y}")
        title = (lambda d: f"{d:%d %b %Y}") if by == DAY else (lambda d: f"{d:%B %Y}")
        context.update(
            rows=rows,
            by=by,
            columns=COLUMNS,
            totals=totals_of(rows),
            chart=bar_chart(
                periods(first, last, by),
                cash,
                CHART_SERIES,
                currency=CASH,
                stacked=False,
                label=label,
                title=title,
            ),
        )
    return TemplateResponse(request, "admin/tournaments/tournament/pnl_report.html", context)


def _pnl_csv(rows: list[dict], first: date, last: date, by: str) -> HttpResponse:
    """One row per period and currency; the amounts are in that row's currency (₹ or chips)."""
    return csv_response(
        f"tournament-pnl-{by}-{first}-{last}.csv",
        [by, "currency", *(f"{c} (in the row's currency)" for c in COLUMNS)],
        ([r["period"], r["currency"], *map(amount_text, r["amounts"])] for r in rows),
    )
