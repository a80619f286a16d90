"""What the games plug into the project and the ledger app, which never import them
(`TournamentsConfig.ready()` hands `plug_ins()` to `rummy_ledger.plugins.register` once):

- the API's error-code catalogue: the games' codes; metrics: the deals waiting for settlement;
- reconciliation: the games' checks (`tournaments.reconciliation`);
- maker-checker: a change of a template's (or a tournament's) money terms is a proposal kind,
  applied on approval, and so are a new tournament and a new leaderboard (created on approval);
- an approved reversal of `game:<pk>` makes that game `reversed`;
- search: an external game id (`sim-597bcd-5`) names the reference `game:<pk>`, and a game's
  reference is shown as its external id, linked to the game's page;
- reports: the fee report and the tournament P&L are listed on the admin index;
- the wind-down: cancelling open cash games and open cash tournaments are two of its steps.
- the one-way-flow report: what went from one player to another across games.
- events: the data of the games' and tournaments' events, as their endpoints answer;
- the ledger's hash chain: a settlement's transfers are chained with the deal that caused them.
"""

from __future__ import annotations

from collections.abc import Collection

from django.urls import reverse

from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.renderers import Renderer
from tournaments import metrics, reconciliation
from tournaments.errors import GameErrorCode
from tournaments.games import queries
from tournaments.games.api import serializers as game_serializers
from tournaments.games.chain_witnesses import DEAL_WITNESSES
from tournaments.games.services.games import cash_games_cancel, cash_games_open, game_mark_reversed
from tournaments.games.services.templates import template_change_apply
from tournaments.leaderboards.services.setup import new_leaderboard_apply
from tournaments.models import (
    Game,
    NewLeaderboard,
    NewTournament,
    TemplateChange,
    TicketIssue,
    TournamentChange,
)
from tournaments.references import game_pk_of, game_reference
from tournaments.tournaments import queries as tournament_queries
from tournaments.tournaments.api import serializers as tournament_serializers
from tournaments.tournaments.services.new_tournaments import new_tournament_apply
from tournaments.tournaments.services.rounds import cash_tournaments_cancel, cash_tournaments_open
from tournaments.tournaments.services.terms_changes import tournament_change_apply
from tournaments.tournaments.services.tickets import ticket_issue_apply
from wallets.admin import reports, search
from wallets.models import Reversal
from wallets.services.proposals import ProposalKind
from wallets.services.wind_down import CancelStep


def game_references(term: str) -> list[str]:
    """An external game id -> the references of the games with that id (one per client)."""
    pks = Game.objects.filter(game_id=term).values_list("pk", flat=True)
    return [game_reference(pk) for pk in pks]


def game_names(references: Collection[str]) -> dict[str, search.Named]:
    pks = {pk: ref for ref in references if (pk := game_pk_of(ref)) is not None}
    games = Game.objects.filter(pk__in=pks).values_list("pk", "game_id")
    return {
        pks[pk]: search.Named(game_id, reverse("admin:tournaments_game_change", args=[pk]))
        for pk, game_id in games
    }


def reversal_decided(sender, *, proposal, approved: bool, **kwargs) -> None:
    if sender is Reversal and approved:
        game_mark_reversed(reference=proposal.reference)


FEE_REPORT = reports.Report(
    title="Fee report",
    url_name="admin:tournaments_game_fee_report",
    permission="tournaments.view_game",
    description="Fee earned per day and format: table, chart, CSV",
)


TOURNAMENT_PNL = reports.Report(
    title="Tournament P&L",
    url_name="admin:tournaments_tournament_pnl",
    permission="tournaments.view_tournament",
    description="Entries, rebuys, fee, overlay, prizes and refunds per day or month: chart, CSV",
)

PROMOTIONS_SPEND = reports.Report(
    title="Promotions spend",
    url_name="admin:tournaments_tournament_promotions",
    permission="tournaments.view_tournament",
    description="Overlay, tickets issued and back, leaderboard prizes, bonuses per day: CSV",
)


def plug_ins() -> dict[str, list]:
    """What the games register, by kind (`rummy_ledger/plugins.py`); `TournamentsConfig.ready()`
    hands it to `register()` once."""
    return {
        "error_codes": [GameErrorCode],  # the API's catalogue names no app
        "readings": metrics.READINGS,  # the deals waiting for settlement (rummy_ledger.metrics)
        "reconciliation_checks": reconciliation.CHECKS,  # after the ledger's own
        "proposal_kinds": [
            ProposalKind(TemplateChange, on_approve=template_change_apply),
            ProposalKind(TournamentChange, on_approve=tournament_change_apply),
            ProposalKind(NewTournament, on_approve=new_tournament_apply),
            ProposalKind(TicketIssue, on_approve=ticket_issue_apply),
            ProposalKind(NewLeaderboard, on_approve=new_leaderboard_apply),
        ],
        "decision_receivers": [reversal_decided],
        "reference_finders": [game_references],
        "reference_namers": [game_names],
        "reports": [FEE_REPORT, TOURNAMENT_PNL, PROMOTIONS_SPEND],
        # The wind-down cancels open cash games and open cash tournaments, with full refunds.
        "wind_down_steps": [
            CancelStep("cash games", lambda: cash_games_open().count(), cash_games_cancel),
            CancelStep(
                "cash tournaments",
                lambda: cash_tournaments_open().count(),
                cash_tournaments_cancel,
            ),
        ],
        "flow_finders": [queries.pair_flows, tournament_queries.tournament_pair_flows],
        "chain_witnesses": [DEAL_WITNESSES],  # a settlement's transfers chained with its deal
        "event_renderers": [
            Renderer((EventType.DEAL_SETTLED,), game_serializers.deals_rendered),
            Renderer(
                (EventType.GAME_CLOSED, EventType.GAME_CANCELLED), game_serializers.games_rendered
            ),
            Renderer(
                (EventType.TOURNAMENT_FINISHED, EventType.TOURNAMENT_CANCELLED),
                tournament_serializers.tournaments_rendered,
            ),
        ],
    }
