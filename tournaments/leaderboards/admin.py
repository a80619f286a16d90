"""Leaderboards for finance: the list and a leaderboard's page (read-only: its terms, the
standings' first page, what it paid and the players its payout skipped, for finance to look at),
and the proposal of a new one (`NewLeaderboard`: an operator proposes, another person approves,
which creates it). The form only turns what finance typed into `manage.py create_leaderboard`'s
fields; the checks and their messages are the file's (`services/setup.py`)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin import widgets
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html, format_html_join

from rummy_ledger.api.models import ApiClient
from tournaments.leaderboards import selectors
from tournaments.leaderboards.services.setup import new_leaderboard_checked, new_leaderboard_propose
from tournaments.models import Leaderboard, LeaderboardSkip, NewLeaderboard
from tournaments.tournaments.admin.forms import prizes_of_text
from tournaments.tournaments.terms import CASH, CHIPS
from wallets.admin.base import NoDeleteAdmin, ReadOnlyAdmin, ReadOnlyInline, link, money_display
from wallets.admin.proposals import ProposalAdmin, ProposalForm
from wallets.money.formatting import money
from wallets.months import INDIA

STANDINGS_SHOWN = 100
PARAMETERS = ("points_per_rupee", "win_divisor", "loss_divisor")


def scoring_shown(scoring: str, parameters: dict[str, str]) -> str:
    if scoring == Leaderboard.Scoring.FEE:
        return f"{parameters.get('points_per_rupee')} points per ₹ of fee on winnings"
    return f"winnings ÷ {parameters.get('win_divisor')} + losses ÷ {parameters.get('loss_divisor')}"


def prizes_shown(rows: list[dict], currency: str) -> str:
    return "ranks " + ", ".join(
        f"{row['ranks']}: a ticket to {row['tournament']}"
        if row.get("kind") == "ticket"
        else f"{row['ranks']}: {money(row['amount'], currency)} each"
        for row in rows
    )


def period_shown(starts_at: datetime, ends_at: datetime) -> str:
    last = (ends_at - timedelta(days=1)).astimezone(INDIA).date()
    return f"{starts_at.astimezone(INDIA).date()} to {last} (IST days)"


class SkipInline(ReadOnlyInline):
    model = LeaderboardSkip
    verbose_name_plural = "skipped by the payout (their prize passed to the next eligible rank)"
    fields = ["player", "rank", "points_shown", "reason"]
    readonly_fields = fields
    select_related = ("player",)

    @admin.display(description="points")
    def points_shown(self, obj):
        return f"{obj.points} points"


@admin.register(Leaderboard)
class LeaderboardAdmin(ReadOnlyAdmin):
    list_display = [
        "slug", "name", "client", "status", "currency", "period", "scoring", "prizes_paid_shown",
    ]  # fmt: skip
    list_filter = ["status", "currency"]
    search_fields = ["slug", "name"]
    list_select_related = ["client"]
    change_list_template = "admin/tournaments/leaderboard/change_list.html"
    inlines = [SkipInline]
    fields = [
        "slug", "name", "client", "status", "currency", "period", "templates_shown",
        "tournaments_shown", "scoring_rule", "prize_table", "prizes_paid_shown", "prize_transfer",
        "paid_at", "created_by", "created_at", "standings",
    ]  # fmt: skip
    readonly_fields = fields
    prizes_paid_shown = money_display(
        "prizes_paid", currency_field="currency", description="prizes paid"
    )

    def changelist_view(self, request, extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "can_propose_leaderboard": request.user.has_perm("tournaments.add_newleaderboard"),
        }
        return super().changelist_view(request, extra_context)

    @admin.display(description="period")
    def period(self, obj):
        return period_shown(obj.starts_at, obj.ends_at)

    @admin.display(description="templates")
    def templates_shown(self, obj):
        return ", ".join(obj.templates) or "-"

    @admin.display(description="tournaments")
    def tournaments_shown(self, obj):
        return ", ".join(obj.tournaments) or "-"

    @admin.display(description="scoring")
    def scoring_rule(self, obj):
        return scoring_shown(obj.scoring, obj.scoring_parameters)

    @admin.display(description="prize table")
    def prize_table(self, obj):
        return prizes_shown(obj.prizes, obj.currency)

    @admin.display(description="prize transfer")
    def prize_transfer(self, obj):
        return link(obj.transfer) if obj.transfer_id else "-"

    @admin.display(description=f"standings (the first {STANDINGS_SHOWN})")
    def standings(self, obj):
        rows = selectors.standings_page(leaderboard=obj, after=None, count=STANDINGS_SHOWN)
        if not rows:
            return "no points yet"
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{} points</td></tr>",
            ((r.rank, r.player, r.points) for r in rows),
        )
        return format_html(
            "<table><thead><tr><th>rank</th><th>player</th><th>points</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            body,
        )


def _day_start(day: date) -> str:
    return datetime.combine(day, time(), tzinfo=INDIA).isoformat()


def form_spec(data: dict) -> dict[str, Any]:
    """The typed fields as `create_leaderboard`'s file."""
    parameters = {name: data[name].strip() for name in PARAMETERS if data.get(name, "").strip()}
    return {
        "slug": data["slug"],
        "name": data["name"],
        "client": data["client"].name,
        "currency": data["currency"],
        "starts_at": _day_start(data["first_day"]),
        "ends_at": _day_start(data["last_day"] + timedelta(days=1)),
        "templates": data["templates"].split(),
        "tournaments": data["tournaments"].split(),
        "scoring": data["scoring"],
        "scoring_parameters": parameters or None,
        "prizes": prizes_of_text(data["prizes"], money="amount"),
    }


class NewLeaderboardForm(ProposalForm):
    slug = forms.CharField(max_length=64, help_text="a-z, 0-9, - and _: the lobby's name for it")
    name = forms.CharField(max_length=120)
    client = forms.ModelChoiceField(
        ApiClient.objects.filter(is_active=True).order_by("name"),
        to_field_name="name",
        help_text="the lobby (an API client with the games scope) whose games count",
    )
    currency = forms.ChoiceField(choices=[(CASH, "Cash (INR)"), (CHIPS, "Practice chips (CHP)")])
    first_day = forms.DateField(widget=widgets.AdminDateWidget, help_text="IST: from 00:00")
    last_day = forms.DateField(widget=widgets.AdminDateWidget, help_text="IST: until 24:00")
    templates = forms.CharField(
        max_length=6_000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 30}),
        help_text="the slugs of the game templates whose games count, one per line",
    )
    tournaments = forms.CharField(
        max_length=6_500,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 30}),
        help_text="the slugs of the client's tournaments that count, one per line "
        "(templates, tournaments or both)",
    )
    scoring = forms.ChoiceField(
        choices=[
            ("fee", "fee: points per ₹ of fee on the player's winnings"),
            ("results", "results: winnings ÷ win divisor + losses ÷ loss divisor"),
        ]
    )
    points_per_rupee = forms.CharField(max_length=20, required=False, help_text="fee: 1.00")
    win_divisor = forms.CharField(max_length=20, required=False, help_text="results: 100.00")
    loss_divisor = forms.CharField(max_length=20, required=False, help_text="results: 200.00")
    prizes = forms.CharField(
        label="Prize table",
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": 5, "cols": 30}),
        help_text='one row per line: the ranks, then the amount each gets ("2-3 500.00"), or '
        '"1-2 ticket sunday-100"',
    )

    class Meta:
        model = NewLeaderboard
        fields = ["reason"]
        widgets = {"reason": forms.Textarea(attrs={"rows": 3, "cols": 60})}

    def check(self, data: dict) -> None:
        new_leaderboard_checked(form_spec(data))

    def refused(self, exc) -> None:
        field = exc.details.get("field")
        field = {"starts_at": "first_day", "ends_at": "last_day"}.get(field, field)
        self.add_error(field if field in self.fields else None, exc.message)


@admin.register(NewLeaderboard)
class NewLeaderboardAdmin(ProposalAdmin, NoDeleteAdmin):
    approve_effect = "creates the leaderboard: its prizes leave promotions at its end"
    list_display = ["id", "slug", "status", "proposed_by", "proposed_at", "decided_by", "created"]
    list_filter = ["status"]
    list_select_related = ["leaderboard", "proposed_by", "decided_by"]
    search_fields = ["slug"]
    actions = ["approve", "reject"]
    form = NewLeaderboardForm
    readonly_fields = ["slug", "terms", "created", *ProposalAdmin.decision_fields]

    add_fields = [
        "slug", "name", "client", "currency", "first_day", "last_day", "templates",
        "tournaments", "scoring", *PARAMETERS, "prizes", "reason",
    ]  # fmt: skip

    def propose(self, request, data):
        return new_leaderboard_propose(
            proposed_by=request.user, spec=form_spec(data), reason=data["reason"]
        )

    @admin.display(description="leaderboard")
    def terms(self, obj):
        spec = obj.spec
        currency = spec.get("currency", "")
        parameters = spec.get("scoring_parameters") or {}
        rows = [
            ("name", spec.get("name")),
            ("client", spec.get("client")),
            ("currency", currency),
            ("period", period_shown(*(parse_datetime(spec[k]) for k in ("starts_at", "ends_at")))),
            ("templates", ", ".join(spec.get("templates") or []) or "-"),
            ("tournaments", ", ".join(spec.get("tournaments") or []) or "-"),
            (
                "scoring",
                scoring_shown(spec.get("scoring", ""), parameters)
                if parameters
                else spec.get("scoring"),
            ),
            ("prize table", prizes_shown(spec.get("prizes", []), currency)),
        ]
        return format_html_join("", "<div><strong>{}</strong>: {}</div>", rows)

    @admin.display(description="created")
    def created(self, obj):
        return link(obj.leaderboard) if obj.leaderboard_id else "-"
