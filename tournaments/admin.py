"""Finance staff's admin for games: templates (editable), games with their settlement breakdown
(read-only), deals, the reversal of a settled game (proposed here, approved in the ledger's
Reversal admin) and the fee (rake) report per day and format.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from datetime import datetime, time, timedelta
from decimal import Decimal

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from rummy_ledger.errors import DomainError
from tournaments.models import Deal, Format, Game, GamePlayer, GameTemplate
from wallets.adjustments import reversal_propose
from wallets.admin_base import ReadOnlyAdmin, ReadOnlyInline
from wallets.models import Entry, PlatformAccount, Player, ProposalStatus, Reversal, Transfer
from wallets.services import platform_accounts


@admin.register(GameTemplate)
class GameTemplateAdmin(admin.ModelAdmin):
    """Edited by finance: a game copies its template's terms when it opens, so an edit never
    changes a game in play."""

    list_display = [
        "slug",
        "name",
        "format",
        "currency",
        "seats",
        "point_value",
        "entry_fee",
        "fee_percent",
        "deals",
        "active",
    ]
    list_filter = ["format", "currency", "active"]
    list_editable = ["active"]
    search_fields = ["slug", "name"]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # games point at their template; retire it with `active` instead


class GamePlayerInline(ReadOnlyInline):
    model = GamePlayer
    fields = ["seat", "player", "score", "eliminated", "entries", "contributed", "payout", "refund"]
    readonly_fields = fields
    select_related = ("player",)


def game_transfer_ids(game: Game) -> list[int]:
    """Every transfer that moved money in or out of the game's escrow (reversals left aside)."""
    return sorted(
        Entry.objects.filter(account_id=game.escrow_id)
        .exclude(transfer__kind=Transfer.Kind.REVERSAL)
        .values_list("transfer_id", flat=True)
        .distinct()
    )


class ReversalForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 4, "cols": 60}))


class FeeReportForm(forms.Form):
    start = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(
        widget=forms.DateInput(attrs={"type": "date"}), help_text="inclusive (whole day)"
    )

    def clean(self):
        data = super().clean()
        if data.get("start") and data.get("end") and data["end"] < data["start"]:
            raise forms.ValidationError("The end comes before the start.")
        return data


FEE_REPORT_SQL = """
SELECT (f.created_at AT TIME ZONE %(tz)s)::date AS day, g.format, f.amount_currency,
       sum(f.amount) AS fee, count(DISTINCT g.id) AS games
  FROM wallets_entry f
  JOIN wallets_entry x ON x.transfer_id = f.transfer_id AND x.account_id <> f.account_id
  JOIN {game} g ON g.escrow_id = x.account_id
 WHERE f.account_id = %(fee_account)s AND f.created_at >= %(start)s AND f.created_at < %(end)s
 GROUP BY 1, 2, 3
 ORDER BY 1, 2, 3
"""


def fee_report_rows(*, start: datetime, end: datetime) -> list[dict]:
    """Fee earned per day (platform time zone) and format in [start, end); reversals net out."""
    fee_account = platform_accounts()[PlatformAccount.FEE_REVENUE]
    with connection.cursor() as cursor:
        cursor.execute(
            FEE_REPORT_SQL.format(game=Game._meta.db_table),
            {"tz": settings.TIME_ZONE, "fee_account": fee_account.pk, "start": start, "end": end},
        )
        return [
            {"day": day, "format": fmt, "currency": cur, "fee": fee, "games": games}
            for day, fmt, cur, fee, games in cursor.fetchall()
        ]


COLOURS = {
    Format.POINTS: "#417690",
    Format.POOL101: "#79aec8",
    Format.POOL201: "#e0a030",
    Format.DEALS: "#5b8c5a",
    Format.RUMMY500: "#a05050",
}


def fee_chart(rows: list[dict], days: list) -> dict:
    """Stacked bars per day as SVG rectangles (no JavaScript, no CDN)."""
    totals: dict = defaultdict(Decimal)
    per_day: dict = defaultdict(dict)
    for r in rows:
        if r["currency"] == "INR":
            per_day[r["day"]][r["format"]] = r["fee"]
            totals[r["day"]] += r["fee"]
    top = max(totals.values(), default=Decimal(0))
    height, bar, gap = 200, 18, 6
    bars = []
    for i, day in enumerate(days):
        y = height
        for fmt in Format.values:
            value = per_day[day].get(fmt, Decimal(0))
            if value <= 0 or top <= 0:
                continue
            h = float(value / top) * height
            y -= h
            bars.append(
                {
                    "x": i * (bar + gap),
                    "y": round(y, 2),
                    "h": round(h, 2),
                    "w": bar,
                    "colour": COLOURS[fmt],
                    "title": f"{day} {fmt}: {value} INR",
                }
            )
    return {
        "bars": bars,
        "width": max(len(days) * (bar + gap), 100),
        "height": height,
        "top": top,
        "legend": [(fmt, COLOURS[fmt]) for fmt in Format.values],
    }


@admin.register(Game)
class GameAdmin(ReadOnlyAdmin):
    list_display = [
        "game_id",
        "client",
        "format",
        "currency",
        "status",
        "collected",
        "paid_out",
        "fee",
        "refunded",
        "deals_played",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", "format", "currency", ("created_at", admin.DateFieldListFilter)]
    list_select_related = ["client"]
    search_fields = ["game_id"]
    search_help_text = "game id, or a player's external id"
    show_full_result_count = False
    inlines = [GamePlayerInline]
    readonly_fields = [
        "game_id",
        "client",
        "template",
        "format",
        "currency",
        "status",
        "outcome",
        "created_at",
        "finished_at",
        "collected",
        "paid_out",
        "fee",
        "refunded",
        "escrow_balance",
        "books",
        "deal_breakdown",
        "ledger",
        "reversal",
    ]
    fields = readonly_fields
    change_list_template = "admin/tournaments/game/change_list.html"

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        player = Player.objects.filter(external_id=term).first()
        if player is not None:  # one indexable condition, not an OR across a join
            return queryset.filter(pk__in=player.game_seats.values("game_id")), False
        return queryset.filter(game_id=term), False

    @admin.display(description="escrow balance")
    def escrow_balance(self, obj):
        return obj.escrow.balance

    @admin.display(description="payouts + fee + refunds vs collected")
    def books(self, obj):
        out = obj.paid_out + obj.fee + obj.refunded
        ok = out + obj.escrow.balance.amount == obj.collected
        return format_html(
            "{} + {} + {} = {} of {} collected; {} in escrow — {}",
            obj.paid_out,
            obj.fee,
            obj.refunded,
            out,
            obj.collected,
            obj.escrow.balance.amount,
            "balanced" if ok else "DOES NOT BALANCE",
        )

    @admin.display(description="deals: points per player, claimed vs computed")
    def deal_breakdown(self, obj):
        deals = obj.deals.order_by("deal_no")
        if not deals:
            return "no deal"
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    d.deal_no,
                    d.status,
                    ", ".join(f"{p}: {pts}" for p, pts in sorted(d.points.items())),
                    ", ".join(f"{p}: {v}" for p, v in sorted(d.discrepancies.items())) or "-",
                    d.settled_at or "-",
                )
                for d in deals
            ),
        )
        return format_html(
            "<table><tr><th>deal</th><th>status</th><th>points (computed)</th>"
            "<th>claimed differs</th><th>settled</th></tr>{}</table>",
            rows,
        )

    @admin.display(description="ledger")
    def ledger(self, obj):
        transfers = reverse("admin:wallets_transfer_changelist")
        entries = reverse("admin:wallets_entry_changelist")
        return format_html(
            '<a href="{}?q=game:{}">transfers of this game</a> · '
            '<a href="{}?account__id__exact={}">escrow entries</a>',
            transfers,
            obj.pk,
            entries,
            obj.escrow_id,
        )

    @admin.display(description="reversal")
    def reversal(self, obj):
        existing = Reversal.objects.filter(reference=f"game:{obj.pk}").order_by("-pk").first()
        parts = []
        if existing:
            url = reverse("admin:wallets_reversal_change", args=[existing.pk])
            parts.append(format_html('<a href="{}">{}</a> ({})', url, existing, existing.status))
        if obj.status != Game.Status.OPEN and (
            existing is None or existing.status == ProposalStatus.REJECTED
        ):
            url = reverse("admin:tournaments_game_propose_reversal", args=[obj.pk])
            parts.append(format_html('<a class="button" href="{}">Propose a reversal</a>', url))
        return format_html_join(" ", "{}", ((p,) for p in parts)) if parts else "-"

    def get_urls(self):
        site = self.admin_site
        return [
            path(
                "<int:pk>/propose-reversal/",
                site.admin_view(self.propose_reversal_view),
                name="tournaments_game_propose_reversal",
            ),
            path(
                "fee-report/",
                site.admin_view(self.fee_report_view),
                name="tournaments_game_fee_report",
            ),
            *super().get_urls(),
        ]

    def propose_reversal_view(self, request: HttpRequest, pk: int):
        if not request.user.has_perm("wallets.add_reversal"):
            raise PermissionDenied
        game = get_object_or_404(Game.objects.select_related("escrow"), pk=pk)
        form = ReversalForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                proposal = reversal_propose(
                    proposed_by=request.user,
                    reference=f"game:{game.pk}",
                    transfer_ids=game_transfer_ids(game),
                    reason=f"game {game.game_id}: {form.cleaned_data['reason']}",
                )
            except DomainError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                self.message_user(
                    request,
                    f"{proposal} proposed: it moves nothing until an approver approves it.",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(
                    reverse("admin:wallets_reversal_change", args=[proposal.pk])
                )
        transfers = Transfer.objects.filter(pk__in=game_transfer_ids(game)).order_by("pk")
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Propose the reversal of game {game.game_id}",
            "game": game,
            "form": form,
            "transfers": transfers,
        }
        return TemplateResponse(request, "admin/tournaments/game/propose_reversal.html", context)

    def fee_report_view(self, request: HttpRequest):
        if not self.has_view_permission(request):
            raise PermissionDenied
        today = timezone.localdate()
        form = FeeReportForm(request.GET or {"start": today - timedelta(days=13), "end": today})
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Fee (rake) report",
            "form": form,
            "rows": None,
        }
        if form.is_valid():
            tz = timezone.get_current_timezone()
            first, last = form.cleaned_data["start"], form.cleaned_data["end"]
            start = datetime.combine(first, time.min, tzinfo=tz)
            end = datetime.combine(last + timedelta(days=1), time.min, tzinfo=tz)
            rows = fee_report_rows(start=start, end=end)
            if request.GET.get("format") == "csv":
                return _fee_csv(rows, first, last)
            days = [first + timedelta(days=n) for n in range((last - first).days + 1)][:400]
            totals: dict = defaultdict(Decimal)
            for r in rows:
                totals[(r["format"], r["currency"])] += r["fee"]
            csv_query = request.GET.copy()
            csv_query["format"] = "csv"
            context.update(
                rows=rows,
                totals=sorted((f, c, v) for (f, c), v in totals.items()),
                chart=fee_chart(rows, days),
                csv_query=csv_query,
            )
        return TemplateResponse(request, "admin/tournaments/game/fee_report.html", context)


def _fee_csv(rows: list[dict], first, last) -> HttpResponse:
    response = HttpResponse(content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="fees-{first}-{last}.csv"'
    writer = csv.writer(response)
    writer.writerow(["day", "format", "currency", "fee", "games"])
    for r in rows:
        writer.writerow([r["day"], r["format"], r["currency"], f"{r['fee']:.2f}", r["games"]])
    return response


@admin.register(Deal)
class DealAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "game",
        "deal_no",
        "status",
        "created_at",
        "settled_at",
        "claimed_differs",
    ]
    list_filter = ["status"]
    list_select_related = ["game"]
    search_fields = ["game__game_id"]
    show_full_result_count = False
    readonly_fields = [
        "game",
        "deal_no",
        "wild_joker",
        "status",
        "points",
        "discrepancies",
        "results",
        "transfers",
        "created_at",
        "settled_at",
    ]
    fields = readonly_fields

    @admin.display(description="claimed points differ", boolean=True)
    def claimed_differs(self, obj):
        return bool(obj.discrepancies)
