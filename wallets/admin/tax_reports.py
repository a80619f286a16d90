"""The tax reports finance files, under the withdrawal admin's URLs: a player's tax statement
for a financial year, TDS per quarter, GST per month (each also as CSV). Viewing them takes the
permission to view withdrawals."""

from __future__ import annotations

from functools import partial

from django import forms
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone

from rummy_ledger.csv_cells import csv_response
from rummy_ledger.replica import finance_page
from wallets import selectors
from wallets.models import Player
from wallets.money.amounts import amount_text
from wallets.tax import formulas
from wallets.tax.tds import TaxPosition, tax_positions


def tax_report_urls(model_admin: ModelAdmin) -> list:
    def view(fn):
        return model_admin.admin_site.admin_view(partial(fn, model_admin))

    return [
        path("tax-statement/", view(statement_view), name="wallets_tax_statement"),
        path("tds-report/", view(tds_view), name="wallets_tds_report"),
        path("gst-report/", view(gst_view), name="wallets_gst_report"),
    ]


class FinancialYearField(forms.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=7, strip=False, help_text="like 2026-27", **kwargs)

    def clean(self, value):
        try:  # exactly the label, as the API takes it: nothing around it
            return formulas.financial_year(super().clean(value))
        except formulas.TaxError as exc:
            raise forms.ValidationError(str(exc)) from exc


class TaxStatementForm(forms.Form):
    player = forms.CharField(max_length=64, help_text="the player's id")
    fy = FinancialYearField()

    def clean_player(self):
        player = Player.objects.filter(external_id=self.cleaned_data["player"].strip()).first()
        if player is None:
            raise forms.ValidationError("No such player.")
        return player


class QuarterForm(forms.Form):
    fy = FinancialYearField()
    quarter = forms.TypedChoiceField(
        choices=[(1, "Q1 April-June"), (2, "Q2 July-September"), (3, "Q3 October-December"),
                 (4, "Q4 January-March")],
        coerce=int,
    )  # fmt: skip


class MonthsForm(forms.Form):
    start = forms.DateField(
        widget=forms.DateInput(attrs={"type": "month"}, format="%Y-%m"),
        input_formats=["%Y-%m", "%Y-%m-%d"],
        help_text="first month",
    )
    end = forms.DateField(
        widget=forms.DateInput(attrs={"type": "month"}, format="%Y-%m"),
        input_formats=["%Y-%m", "%Y-%m-%d"],
        help_text="last month (inclusive)",
    )

    def clean(self):
        data = super().clean()
        if data.get("start") and data.get("end"):
            if data["end"] < data["start"]:
                raise forms.ValidationError("The last month comes before the first.")
            try:
                formulas.months_checked(data["start"], data["end"])
            except formulas.TaxError as exc:
                raise forms.ValidationError(str(exc)) from exc
        return data


def _report(
    model_admin: ModelAdmin, request, template: str, title: str, **context
) -> TemplateResponse:
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": title,
        **context,
    }
    if "form" in context and context["form"].is_bound and context["form"].is_valid():
        csv_query = request.GET.copy()
        csv_query["format"] = "csv"
        context["csv_query"] = csv_query
    return TemplateResponse(request, f"admin/wallets/withdrawal/{template}", context)


def _check_view(model_admin: ModelAdmin, request) -> None:
    if not model_admin.has_view_permission(request):
        raise PermissionDenied


@finance_page
def statement_view(model_admin: ModelAdmin, request: HttpRequest):
    """A player's tax statement for one financial year."""
    _check_view(model_admin, request)
    form = TaxStatementForm(request.GET or None)
    position = rows = None
    if form.is_bound and form.is_valid():
        player, fy = form.cleaned_data["player"], form.cleaned_data["fy"]
        position = tax_positions(player_ids=[player.pk], fy=fy)[player.pk]
        rows = player.withdrawals.filter(
            requested_at__gte=fy.start, requested_at__lt=fy.end
        ).order_by("requested_at", "pk")
        if request.GET.get("format") == "csv":
            return _statement_csv(player, position, rows)
    return _report(
        model_admin,
        request,
        "tax_statement.html",
        "Tax statement",
        form=form,
        position=position,
        rows=rows,
    )


@finance_page
def tds_view(model_admin: ModelAdmin, request: HttpRequest):
    """TDS withheld in a quarter, line by line, for the quarterly return."""
    _check_view(model_admin, request)
    form = QuarterForm(request.GET or None)
    lines = None
    if form.is_bound and form.is_valid():
        fy, quarter = form.cleaned_data["fy"], form.cleaned_data["quarter"]
        start, end = fy.quarter(quarter)
        lines = selectors.tds_filing_lines(start=start, end=end)
        if request.GET.get("format") == "csv":
            return csv_response(
                f"tds-{fy.label}-q{quarter}.csv",
                ["date", "pan", "player", "kind", "reference", "amount paid",
                 "net winnings", "tds"],
                ([timezone.localtime(x.date).date().isoformat(), x.pan, x.player, x.kind,
                  x.reference, amount_text(x.amount_paid), amount_text(x.net_winnings),
                  amount_text(x.tds)] for x in lines),
            )  # fmt: skip
    total = sum((x.tds for x in lines or []), formulas.ZERO)
    return _report(
        model_admin,
        request,
        "tds_report.html",
        "TDS per quarter",
        form=form,
        lines=lines,
        total=total,
    )


@finance_page
def gst_view(model_admin: ModelAdmin, request: HttpRequest):
    """GST on deposits per month and rate (each deposit at its own recorded rate)."""
    _check_view(model_admin, request)
    today = timezone.localdate()
    form = MonthsForm(request.GET or {"start": today.replace(day=1), "end": today})
    months = None
    if form.is_valid():
        first, last = form.cleaned_data["start"], form.cleaned_data["end"]
        start = formulas.month_span(first.year, first.month)[0]
        end = formulas.month_span(last.year, last.month)[1]
        months = selectors.gst_months(start=start, end=end)
        if request.GET.get("format") == "csv":
            return csv_response(
                f"gst-{first:%Y-%m}-{last:%Y-%m}.csv",
                ["month", "rate", "deposits", "amount", "gst", "net"],
                ([f"{m.month:%Y-%m}", amount_text(m.rate), m.deposits, amount_text(m.amount),
                  amount_text(m.gst), amount_text(m.net)] for m in months),
            )  # fmt: skip
    return _report(
        model_admin, request, "gst_report.html", "GST per month and rate", form=form, months=months
    )


def _statement_csv(player: Player, position: TaxPosition, rows) -> HttpResponse:
    fy = position.fy
    lines: list[list] = [
        ["opening", "", amount_text(position.opening), "", ""],
        ["deposits", "", amount_text(position.deposits), "", ""],
    ]
    for w in rows:
        lines.append(
            [f"withdrawal {w.reference}", w.status, amount_text(w.amount.amount),
             amount_text(w.net_winnings), amount_text(w.tds.amount)]
        )  # fmt: skip
    end = position.year_end
    if end is not None:
        lines.append(["year end closing", "", amount_text(end.closing),
                      amount_text(end.net_winnings), amount_text(end.withheld)])  # fmt: skip
    lines.append(
        ["total (failed and rejected withdrawals excluded)", "", amount_text(position.withdrawals),
         amount_text(position.taxed_net_winnings), amount_text(position.tds)]
    )  # fmt: skip
    return csv_response(
        f"tax-{player.external_id}-{fy.label}.csv",
        ["line", "status", "amount", "net winnings", "tds"],
        lines,
    )
