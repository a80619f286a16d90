"""Tournaments for finance (read-only): the list (status, players, pool, overlay; links to the
P&L and to propose a new tournament) and a tournament's page (registrations and what each paid
by bucket, rounds and their tables, results and prizes, the history of its money terms, and
"Propose new money terms" while nobody has registered). Nothing is edited here: a tournament
and its money terms come through proposals (`proposals`) or
`manage.py create_tournament`."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count, Q
from django.http import HttpRequest
from django.urls import path
from django.utils.html import format_html_join

from tournaments.models import Registration, Tournament, TournamentRound
from tournaments.tournaments.admin.forms import rounds_text
from tournaments.tournaments.admin.pnl import tournament_pnl_view
from tournaments.tournaments.admin.promotions import promotions_spend_view
from tournaments.tournaments.admin.proposals import change_shown, term_shown
from wallets.admin.base import (
    ReadOnlyAdmin,
    ReadOnlyInline,
    link,
    money_display,
    money_html,
    percent_display,
)
from wallets.money.formatting import money


class RegistrationInline(ReadOnlyInline):
    model = Registration
    fields = ["player", "status", "paid_by_bucket", "rebuys", "out_round", "rank", "won", "back"]
    readonly_fields = fields
    select_related = ("player", "tournament")
    ordering = ["rank", "pk"]

    @admin.display(description="paid")
    def paid_by_bucket(self, obj):
        currency = obj.tournament.currency
        parts = [(money(amount, currency), bucket) for bucket, amount in obj.paid]
        return format_html_join(", ", "{} from {}", parts) or "-"

    @admin.display(description="prize")
    def won(self, obj):
        return "-" if obj.prize is None else money_html(obj.prize, obj.tournament.currency)

    @admin.display(description="refund")
    def back(self, obj):
        return money_html(obj.refund, obj.tournament.currency)


class RoundInline(ReadOnlyInline):
    model = TournamentRound
    fields = ["number", "status", "entrants", "qualified", "table_count", "settled_at"]
    readonly_fields = fields

    @admin.display(description="tables")
    def table_count(self, obj):
        return len(obj.tables)


@admin.register(Tournament)
class TournamentAdmin(ReadOnlyAdmin):
    list_display = [
        "slug", "name", "client", "status", "currency", "registered", "pool", "overlay_shown",
        "registration_closes_at",
    ]  # fmt: skip
    list_filter = ["status", "currency"]
    search_fields = ["slug", "name"]
    change_list_template = "admin/tournaments/tournament/change_list.html"
    change_form_template = "admin/tournaments/tournament/change_form.html"
    inlines = [RoundInline, RegistrationInline]
    fields = [
        "slug", "name", "client", "status", "currency", "entry", "fee_shown_percent",
        "guarantee_shown", "min_players", "max_players", "table_size", "registration_closes_at",
        "bonus_cap_shown", "rounds_shown", "rebuy_shown", "prize_table", "round", "collected_shown",
        "fee_shown", "overlay_shown", "pool", "refunded_shown", "created_by", "created_at",
        "started_at", "finished_at", "money_terms_history",
    ]  # fmt: skip
    readonly_fields = fields

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("client")
            .annotate(
                n_registered=Count("registrations", filter=Q(registrations__status="registered"))
            )
        )

    @admin.display(description="players", ordering="n_registered")
    def registered(self, obj):
        return obj.n_registered

    entry = money_display("entry_fee", currency_field="currency", description="entry fee")
    guarantee_shown = money_display("guarantee", currency_field="currency", description="guarantee")
    collected_shown = money_display("collected", currency_field="currency", description="collected")
    fee_shown = money_display("fee", currency_field="currency", description="fee")
    pool = money_display("prizes_paid", currency_field="currency", description="prize pool paid")
    overlay_shown = money_display("overlay", currency_field="currency", description="overlay")
    refunded_shown = money_display("refunded", currency_field="currency", description="refunded")

    fee_shown_percent = percent_display("fee_percent", "fee %")
    bonus_cap_shown = percent_display("bonus_cap_percent", "bonus cap %")

    @admin.display(description="rounds")
    def rounds_shown(self, obj):
        return rounds_text(obj.rounds)

    @admin.display(description="rebuy")
    def rebuy_shown(self, obj):
        return term_shown("rebuy", obj.rebuy, obj.currency)

    @admin.display(description="prize table")
    def prize_table(self, obj):
        rows = [
            (
                p.rank_from if p.rank_from == p.rank_to else f"{p.rank_from}-{p.rank_to}",
                f"{p.percent} %" if p.target is None else f"a ticket to {p.target.slug}",
            )
            for p in obj.prizes.select_related("target")
        ]
        return format_html_join(", ", "rank {}: {}", rows)

    @admin.display(description="history of money terms")
    def money_terms_history(self, obj):
        changes = obj.changes.select_related("proposed_by", "tournament").order_by("-pk")
        if not changes:
            return "no change since it was created"
        return format_html_join(
            "",
            "<div>{} — {}, proposed by {}: {}</div>",
            ((link(c), c.status, c.proposed_by, change_shown(c)) for c in changes),
        )

    def change_view(self, request, object_id, form_url="", extra_context=None):
        tournament = self.get_object(request, object_id)
        open_terms = (
            tournament is not None
            and tournament.status == Tournament.Status.REGISTERING
            and not tournament.registrations.exists()
        )
        extra_context = {
            **(extra_context or {}),
            "can_propose_terms": request.user.has_perm("tournaments.add_tournamentchange"),
            "terms_open": open_terms,
        }
        return super().change_view(request, object_id, form_url, extra_context)

    def changelist_view(self, request, extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "can_propose_tournament": request.user.has_perm("tournaments.add_newtournament"),
        }
        return super().changelist_view(request, extra_context)

    def get_urls(self):
        pnl = self.admin_site.admin_view(self.pnl_view)
        spend = self.admin_site.admin_view(self.promotions_view)
        return [
            path("pnl/", pnl, name="tournaments_tournament_pnl"),
            path("promotions/", spend, name="tournaments_tournament_promotions"),
            *super().get_urls(),
        ]

    def pnl_view(self, request: HttpRequest):
        return tournament_pnl_view(self, request)

    def promotions_view(self, request: HttpRequest):
        return promotions_spend_view(self, request)
