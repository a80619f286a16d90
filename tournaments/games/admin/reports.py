"""The fee (rake) report: fee earned per day and format, as a table with totals and a grand
total, an SVG chart (a ₹ scale and a date axis) and CSV; it links the GST and TDS reports,
which are not fees."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from decimal import Decimal

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from djmoney.money import Money

from rummy_ledger.csv_cells import csv_response
from rummy_ledger.replica import finance_page
from tournaments.games.admin.charts import bar_chart
from tournaments.games.services.escrow import fee_account_id
from tournaments.games.services.fee_report import fee_report_days
from tournaments.models import Format
from wallets.admin.base import DateRangeForm
from wallets.models import CASH, Account
from wallets.money.amounts import amount_text
from wallets.money.formatting import unit

COLOURS = {
    Format.POINTS: "#417690",
    Format.POOL101: "#79aec8",
    Format.POOL201: "#e0a030",
    Format.DEALS: "#5b8c5a",
    Format.RUMMY500: "#a05050",
}


def fee_chart(rows: list[dict], days: list) -> dict:
    """Stacked bars of cash fee per day and format."""
    values = {(r["day"], r["format"]): r["fee"] for r in rows if r["currency"] == CASH}
    series = [(fmt, COLOURS[fmt]) for fmt in Format.values]
    return bar_chart(days, values, series, currency=CASH, stacked=True)


@finance_page
def fee_report_view(model_admin: admin.ModelAdmin, request: HttpRequest):
    """Fee per day and format: table, chart, CSV (linked from the index and the games' list)."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    today = timezone.localdate()
    asked = {k: v for k, v in request.GET.items() if k in DateRangeForm.base_fields}
    form = DateRangeForm(asked or {"start": today - timedelta(days=13), "end": today})
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": "Fee (rake) report",
        "form": form,
        "rows": None,
    }
    if form.is_valid():
        first, last = form.cleaned_data["start"], form.cleaned_data["end"]
        fee_account = Account.objects.get(pk=fee_account_id())
        rows = fee_report_days(fee_account=fee_account, first=first, last=last)
        if request.GET.get("format") == "csv":
            return _fee_csv(rows, first, last)
        days = [first + timedelta(days=n) for n in range((last - first).days + 1)][:400]
        totals: dict = defaultdict(Decimal)
        grand: dict = defaultdict(Decimal)
        for r in rows:
            totals[(r["format"], r["currency"])] += r["fee"]
            grand[r["currency"]] += r["fee"]
        context.update(
            rows=rows,
            totals=sorted((f, c, v) for (f, c), v in totals.items()),
            grand_totals=[Money(v, c) for c, v in sorted(grand.items())],
            games=sum(r["games"] for r in rows),
            chart=fee_chart(rows, days),
        )
    return TemplateResponse(request, "admin/tournaments/game/fee_report.html", context)


def _fee_csv(rows: list[dict], first, last) -> HttpResponse:
    """One row per day, format and currency; the header names the unit (₹: chips pay no fee)."""
    return csv_response(
        f"fees-{first}-{last}.csv",
        ["day", "format", "currency", f"fee ({unit(CASH)})", "games"],
        ([r["day"], r["format"], r["currency"], amount_text(r["fee"]), r["games"]] for r in rows),
    )
