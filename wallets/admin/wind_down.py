"""The wind-down in the admin: proposed by one member of finance, approved by another (only
while real money is off), then run by `manage.py wind_down`; its page shows where every player
stands, the players whose money is held first, and the whole report as CSV."""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Sum
from django.http import HttpRequest
from django.urls import path, reverse
from django.utils.html import format_html

from rummy_ledger.csv_cells import csv_response
from wallets.admin.base import NoDeleteAdmin, ReadOnlyInline
from wallets.admin.proposals import ProposalAdmin, ProposalForm
from wallets.models import WindDown, WindDownLine
from wallets.services import wind_down as service

HELD_SHOWN = 200


class WindDownForm(ProposalForm):
    class Meta:
        model = WindDown
        fields = ["reason"]

    def check(self, data: dict) -> None:
        service.real_money_off_required("a wind-down is proposed")


class HeldLines(ReadOnlyInline):
    """The players the wind-down could not pay out in full, and why (the first 200)."""

    model = WindDownLine
    verbose_name_plural = "players holding money (the CSV lists every player)"
    fields = ["player", "refunded", "tds", "held", "held_reason", "refunds", "withdrawal"]
    readonly_fields = fields
    select_related = ("player", "withdrawal")

    def get_queryset(self, request):
        held = super().get_queryset(request).filter(held__gt=0).order_by("player__external_id")
        ids = list(held.values_list("pk", flat=True)[:HELD_SHOWN])
        return super().get_queryset(request).filter(pk__in=ids).order_by("player__external_id")


@admin.register(WindDown)
class WindDownAdmin(ProposalAdmin, NoDeleteAdmin):
    approve_effect = (
        "lets `manage.py wind_down` cancel open games, expire bonus and refund every player's "
        "INR (TDS per Rule 133); it runs only while REAL_MONEY=off"
    )
    list_display = ["id", "status", "proposed_by", "decided_by", "started_at", "finished_at"]
    list_filter = ["status"]
    actions = ["approve", "reject"]
    form = WindDownForm
    inlines = [HeldLines]
    readonly_fields = [
        *ProposalAdmin.decision_fields,
        "client",
        "started_at",
        "finished_at",
        "report",
    ]

    add_fields = ["reason"]

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None and obj.lines.exists() else []

    def propose(self, request, data):
        return service.wind_down_propose(proposed_by=request.user, reason=data["reason"])

    @admin.display(description="report")
    def report(self, obj):
        totals = obj.lines.aggregate(
            n=Count("pk"), refunded=Sum("refunded"), tds=Sum("tds"), held=Sum("held")
        )
        if not totals["n"]:
            return "not run yet"
        url = reverse("admin:wallets_winddown_report", args=[obj.pk])
        return format_html(
            '{} players: refunded ₹{}, TDS ₹{}, held ₹{}. <a href="{}" id="wind-down-csv">'
            "Report (CSV)</a>",
            totals["n"],
            totals["refunded"],
            totals["tds"],
            totals["held"],
            url,
        )

    def get_urls(self):
        view = self.admin_site.admin_view(self.report_view)
        return [
            path("<int:pk>/report/", view, name="wallets_winddown_report"),
            *super().get_urls(),
        ]

    def report_view(self, request: HttpRequest, pk: int):
        wind_down = self.get_object(request, str(pk))
        if wind_down is None or not self.has_view_permission(request, wind_down):
            raise PermissionDenied
        return csv_response(
            f"wind-down-{pk}.csv", service.REPORT_HEADER, service.wind_down_report_rows(wind_down)
        )
