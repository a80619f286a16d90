"""What the games plug into the ledger app, which never imports them (`TournamentsConfig.ready()`
calls `register()` once):

- reconciliation: the games' checks (`tournaments.reconciliation`);
- maker-checker: a change of a template's (or a tournament's) money terms is a proposal kind,
  applied on approval, and so is a new tournament (created on approval);
- an approved reversal of `game:<pk>` makes that game `reversed`;
- search: an external game id (`sim-597bcd-5`) names the reference `game:<pk>`, and a game's
  reference is shown as its external id, linked to the game's page;
- reports: the fee report and the tournament P&L are listed on the admin index;
- the wind-down: cancelling open cash games and open cash tournaments are two of its steps.
- the one-way-flow report: what went from one player to another across games.
"""

from __future__ import annotations

from collections.abc import Collection

from django.urls import reverse

from tournaments import reconciliation
from tournaments.games import queries
from tournaments.games.services.games import cash_games_cancel, cash_games_open, game_mark_reversed
from tournaments.games.services.templates import template_change_apply
from tournaments.models import Game, NewTournament, TemplateChange, TournamentChange
from tournaments.references import game_pk_of, game_reference
from tournaments.tournaments.services.new_tournaments import new_tournament_apply
from tournaments.tournaments.services.rounds import cash_tournaments_cancel, cash_tournaments_open
from tournaments.tournaments.services.terms_changes import tournament_change_apply
from wallets import signals
from wallets.admin import reports, search
from wallets.models import Reversal
from wallets.services.flows import flow_finder_register
from wallets.services.proposals import proposal_kind_register
from wallets.services.wind_down import CancelStep, wind_down_step_register


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


def register() -> None:
    reconciliation.register_checks()
    proposal_kind_register(TemplateChange, on_approve=template_change_apply)
    proposal_kind_register(TournamentChange, on_approve=tournament_change_apply)
    proposal_kind_register(NewTournament, on_approve=new_tournament_apply)
    signals.proposal_decided.connect(reversal_decided, dispatch_uid="tournaments-reversed")
    search.reference_finder_register(game_references)
    search.reference_namer_register(game_names)
    reports.report_register(FEE_REPORT)
    reports.report_register(TOURNAMENT_PNL)
    # The wind-down cancels open cash games and open cash tournaments, with full refunds.
    wind_down_step_register(
        CancelStep("cash games", lambda: cash_games_open().count(), cash_games_cancel)
    )
    wind_down_step_register(
        CancelStep(
            "cash tournaments", lambda: cash_tournaments_open().count(), cash_tournaments_cancel
        )
    )
    flow_finder_register(queries.pair_flows)
