"""Tournaments for finance (read-only): the list (status, players, pool, overlay) and a
tournament's page (registrations and what each paid by bucket, rounds and their tables,
results and prizes). Tournaments are scheduled by `manage.py create_tournament`; their money
terms are never edited here."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count, Q
from django.utils.html import format_html_join

from tournaments.models import Registration, Tournament, TournamentChange, TournamentRound
from wallets.admin.base import ReadOnlyAdmin, ReadOnlyInline, money_display, money_html
from wallets.formatting import money


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
    inlines = [RoundInline, RegistrationInline]
    fields = [
        "slug", "name", "client", "status", "currency", "entry", "fee_percent", "guarantee_shown",
        "min_players", "max_players", "table_size", "registration_closes_at",
        "bonus_cap_percent", "rounds", "rebuy", "prize_table", "round", "collected_shown",
        "fee_shown", "overlay_shown", "pool", "refunded_shown", "created_by", "created_at",
        "started_at", "finished_at",
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

    @admin.display(description="prize table")
    def prize_table(self, obj):
        rows = [
            (p.rank_from if p.rank_from == p.rank_to else f"{p.rank_from}-{p.rank_to}", p.percent)
            for p in obj.prizes.all()
        ]
        return format_html_join(", ", "rank {}: {} %", rows)


@admin.register(TournamentChange)
class TournamentChangeAdmin(ReadOnlyAdmin):
    """Proposed money terms of tournaments (decided with `proposal_decide`; no admin form to
    propose or decide one yet)."""

    list_display = ["pk", "tournament", "status", "entry_fee", "fee_percent", "guarantee",
                    "proposed_by", "proposed_at", "decided_by"]  # fmt: skip
    list_filter = ["status"]
