"""Games with their settlement breakdown (read-only), their deals, and proposing the reversal
of a settled game (approved in the ledger's Reversal admin).

The game page reads in words and rupees: what each player put in and from which bucket, the
books line (payouts + fee + refunds against what was collected, or that it was reversed), each
deal's points and where a game server's claim differed. "Propose a reversal" is offered only to
who may propose one, and only while there is none open or approved.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from rummy_ledger.errors import DomainError
from tournaments.games.admin.reports import fee_report_view
from tournaments.games.queries import game_transfer_ids
from tournaments.games.services.escrow import contributions
from tournaments.models import Deal, Game, GamePlayer
from tournaments.references import game_pk_of, game_reference
from wallets.admin import search
from wallets.admin.base import (
    ReadOnlyAdmin,
    ReadOnlyInline,
    TermSearch,
    link,
    money_display,
    money_html,
)
from wallets.admin.paging import LargeTablePaginator
from wallets.admin.proposals import effect_table
from wallets.models import Player, ProposalStatus, Reversal, Transfer
from wallets.money.formatting import ist, money
from wallets.services.reversals import reversal_propose


def _games_of_term(term: str):
    """A search term as games: their external id, a player's external id, or `game:<pk>`."""
    pks = {pk for ref in search.search_target(term).references if (pk := game_pk_of(ref))}
    player = Player.objects.filter(external_id=term).values("pk")
    seats = GamePlayer.objects.filter(player__in=player).values("game_id")
    return Game.objects.filter(pk__in=pks).values("pk").union(seats)


class GamePlayerInline(ReadOnlyInline):
    model = GamePlayer
    fields = ["seat", "player", "score", "eliminated", "entries", "put_in", "paid", "refunded"]
    readonly_fields = fields
    select_related = ("player", "game")

    @admin.display(description="put in")
    def put_in(self, obj):
        """What the player paid into the game, and from which wallet buckets."""
        currency = obj.game.currency
        parts = [(money(amount, currency), bucket) for bucket, amount in contributions(obj)]
        return format_html_join(", ", "{} from {}", parts) or "-"

    @admin.display(description="payout")
    def paid(self, obj):
        return money_html(obj.payout, obj.game.currency)

    @admin.display(description="refund")
    def refunded(self, obj):
        return money_html(obj.refund, obj.game.currency)


class ReversalForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 4, "cols": 60}))


def _open_reversal(game: Game) -> Reversal | None:
    """The game's reversal that is proposed or approved (a rejected one leaves room for another)."""
    return (
        Reversal.objects.filter(reference=game_reference(game.pk))
        .exclude(status=ProposalStatus.REJECTED)
        .first()
    )


@admin.register(Game)
class GameAdmin(TermSearch, ReadOnlyAdmin):
    # what finds a game and says what it took, narrow enough for a laptop (the books: its page)
    list_display = [
        "game_id",
        "format",
        "status",
        "collected_col",
        "paid_out_col",
        "fee_col",
        "created_at",
    ]
    list_filter = ["status", "format", "currency", ("created_at", admin.DateFieldListFilter)]
    list_select_related = ["client"]
    search_fields = ["game_id"]
    search_help_text = "game id (sim-597bcd-5), a player's external id, or game:12"
    show_full_result_count = False
    paginator = LargeTablePaginator
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
        "collected_col",
        "paid_out_col",
        "fee_col",
        "refunded_col",
        "escrow_balance",
        "books",
        "deal_breakdown",
        "ledger",
        "reversal",
    ]
    fields = readonly_fields
    change_list_template = "admin/tournaments/game/change_list.html"
    change_form_template = "admin/tournaments/game/change_form.html"

    collected_col = money_display("collected", currency_field="currency")
    paid_out_col = money_display("paid_out", currency_field="currency", description="paid out")
    fee_col = money_display("fee", currency_field="currency")
    refunded_col = money_display("refunded", currency_field="currency")

    def search(self, queryset, term):
        return queryset.filter(pk__in=_games_of_term(term))

    def may_propose_reversal(self, request, game: Game) -> bool:
        return (
            request.user.has_perm("wallets.add_reversal")
            and game.status in (Game.Status.FINISHED, Game.Status.CANCELLED)
            and _open_reversal(game) is None
        )

    def change_view(self, request, object_id, form_url="", extra_context=None):
        game = self.get_object(request, object_id)
        extra_context = {
            **(extra_context or {}),
            "can_propose_reversal": game is not None and self.may_propose_reversal(request, game),
        }
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description="escrow balance")
    def escrow_balance(self, obj):
        return money_html(obj.escrow.balance)

    @admin.display(description="payouts + fee + refunds vs collected")
    def books(self, obj):
        out = obj.paid_out + obj.fee + obj.refunded
        escrow = obj.escrow.balance.amount
        if obj.status == Game.Status.REVERSED:
            verdict = "reversed: every transfer of the game was undone by its approved reversal"
        elif out + escrow == obj.collected:
            verdict = "balanced"
        else:
            verdict = "DOES NOT BALANCE"
        m = lambda value: money(value, obj.currency)  # noqa: E731
        return format_html(
            "{} + {} + {} = {} of {} collected; {} in escrow — {}",
            m(obj.paid_out),
            m(obj.fee),
            m(obj.refunded),
            m(out),
            m(obj.collected),
            m(escrow),
            verdict,
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
                    _claims(d.discrepancies),
                    ist(d.settled_at),
                )
                for d in deals
            ),
        )
        return format_html(
            '<table class="finance"><tr><th>deal</th><th>status</th><th>points (computed)</th>'
            "<th>claimed differs</th><th>settled</th></tr>{}</table>",
            rows,
        )

    @admin.display(description="ledger")
    def ledger(self, obj):
        transfers = reverse("admin:wallets_transfer_changelist")
        entries = reverse("admin:wallets_entry_changelist")
        return format_html(
            '<a href="{}?q={}">transfers of this game</a> · '
            '<a href="{}?account__id__exact={}">escrow entries</a>',
            transfers,
            game_reference(obj.pk),
            entries,
            obj.escrow_id,
        )

    @admin.display(description="reversal")
    def reversal(self, obj):
        reversals = Reversal.objects.filter(reference=game_reference(obj.pk)).order_by("pk")
        return format_html_join(", ", "{} ({})", ((link(r), r.status) for r in reversals)) or "none"

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

    def fee_report_view(self, request: HttpRequest):
        return fee_report_view(self, request)

    def propose_reversal_view(self, request: HttpRequest, pk: int):
        if not request.user.has_perm("wallets.add_reversal"):
            raise PermissionDenied
        game = get_object_or_404(Game.objects.select_related("escrow"), pk=pk)
        form = ReversalForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                proposal = reversal_propose(
                    proposed_by=request.user,
                    reference=game_reference(game.pk),
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
        ids = game_transfer_ids(game)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Propose the reversal of game {game.game_id}",
            "game": game,
            "form": form,
            "transfers": Transfer.objects.filter(pk__in=ids).order_by("pk"),
            "effect": effect_table(ids),
        }
        return TemplateResponse(request, "admin/tournaments/game/propose_reversal.html", context)


def _claims(discrepancies: dict) -> str:
    """`d: claimed 45, computed 50` for each player whose server claimed other points."""
    return (
        "; ".join(
            f"{player}: claimed {v.get('claimed')}, computed {v.get('computed')}"
            for player, v in sorted(discrepancies.items())
        )
        or "-"
    )


@admin.register(Deal)
class DealAdmin(TermSearch, ReadOnlyAdmin):
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
    search_help_text = "game id (sim-597bcd-5), a player's external id, or game:12"
    show_full_result_count = False
    paginator = LargeTablePaginator
    readonly_fields = [
        "game",
        "deal_no",
        "wild_joker",
        "status",
        "points",
        "claims",
        "results",
        "transfers",
        "created_at",
        "settled_at",
    ]
    fields = readonly_fields

    def search(self, queryset, term):
        return queryset.filter(game_id__in=_games_of_term(term))

    @admin.display(description="claimed points differ", boolean=True)
    def claimed_differs(self, obj):
        return bool(obj.discrepancies)

    @admin.display(description="claimed differs")
    def claims(self, obj):
        return _claims(obj.discrepancies)

    @admin.display(description="transfers posted")
    def transfers(self, obj):
        links = obj.transfer_links.select_related("transfer")
        return (
            format_html_join(
                ", ",
                "{}",
                ((link(t.transfer, f"#{t.transfer_id} {t.transfer.kind}"),) for t in links),
            )
            or "-"
        )
