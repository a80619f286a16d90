"""The promotions spend report: per IST day and currency, what left promotions and for what
(overlay, tickets issued by finance, tickets' value back, leaderboard prizes, bonuses, bonuses
expired back, anything else), summed by PostgreSQL from the ledger's entries on the promotions
accounts (`promotions_spend.promotions_spend_rows`); a totals row per currency, CSV of the
period shown."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from rummy_ledger.csv_cells import csv_response
from rummy_ledger.replica import finance_page
from tournaments.tournaments.promotions_spend import COLUMNS, promotions_spend_rows
from wallets.admin.base import DateRangeForm
from wallets.models import PlatformAccount
from wallets.money.amounts import amount_text
from wallets.services.accounts import platform_accounts

# Promotions' accounts: promotions, and chips issuance where promotions' chips come from.
PROMOTIONS = (PlatformAccount.PROMOTIONS, PlatformAccount.CHIPS_ISSUANCE)


def with_amounts(row: dict) -> dict:
    return {**row, "amounts": [row[c] for c in COLUMNS]}


def totals_of(rows: list[dict]) -> list[dict]:
    """One totals row per currency (a currency is never added to another)."""
    sums: dict = defaultdict(lambda: dict.fromkeys(COLUMNS, Decimal(0)))
    for row in rows:
        for column in COLUMNS:
            sums[row["currency"]][column] += row[column]
    return [with_amounts({"currency": c, **by_column}) for c, by_column in sorted(sums.items())]


@finance_page
def promotions_spend_view(model_admin: admin.ModelAdmin, request: HttpRequest):
    """Linked from the index (`wallets.admin.reports`) and the tournaments' list."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    today = timezone.localdate()
    defaults = {"start": today - timedelta(days=13), "end": today}
    asked = {k: v for k, v in request.GET.items() if k in DateRangeForm.base_fields}
    form = DateRangeForm({**defaults, **asked})
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": "Promotions spend",
        "form": form,
        "rows": None,
    }
    if form.is_valid():
        first, last = form.cleaned_data["start"], form.cleaned_data["end"]
        start, end = form.period()
        accounts = platform_accounts()
        rows = [
            with_amounts(row)
            for row in promotions_spend_rows(
                promotions_account_ids=[accounts[code].pk for code in PROMOTIONS],
                start=start,
                end=end,
            )
        ]
        if request.GET.get("format") == "csv":
            return _spend_csv(rows, first, last)
        context.update(rows=rows, columns=COLUMNS, totals=totals_of(rows))
    return TemplateResponse(request, "admin/tournaments/tournament/promotions_report.html", context)


def _spend_csv(rows: list[dict], first: date, last: date) -> HttpResponse:
    """One row per IST day and currency; the amounts are in that row's currency (₹ or chips)."""
    return csv_response(
        f"promotions-spend-{first}-{last}.csv",
        ["day", "currency", *(f"{c} (in the row's currency)" for c in COLUMNS)],
        ([r["day"], r["currency"], *map(amount_text, r["amounts"])] for r in rows),
    )
