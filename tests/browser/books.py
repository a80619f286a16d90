"""A ledger with objects of every kind the finance admin shows, made through the real services,
for the tests that crawl every page: players (funded, KYC'd, protected, with bonus lots), a
settled game, an open one, a cancelled one and a reversed one, templates of every format,
withdrawals in every state, proposals of every kind (waiting and decided), a TDS year end, an
imported gateway statement, and reconciliation reports (clean, and with discrepancies)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.utils import timezone
from djmoney.money import Money

from rummy_ledger.api.keys import api_client_create
from tests.browser.conftest import GAME_ID
from tests.builders import bonus_granted, funded_player, points_game, staff, template
from tests.tournaments.leaderboards.builders import board, board_file, week_passes
from tests.tournaments.tournament_builders import scheduled, tournament_file
from tests.wallets.payments import backdate, verified, won
from tournaments.games.queries import game_transfer_ids
from tournaments.games.services.games import game_cancel
from tournaments.games.services.opening import game_open
from tournaments.games.services.templates import template_change_propose
from tournaments.leaderboards.services.payout import leaderboards_due_pay
from tournaments.leaderboards.services.setup import new_leaderboard_propose
from tournaments.models import Game, GameTemplate, LeaderboardPoints
from tournaments.references import game_reference
from tournaments.tournaments.services.new_tournaments import new_tournament_propose
from tournaments.tournaments.services.terms_changes import tournament_change_propose
from wallets.models import CASH, Adjustment, BonusGrant, Player, ReconciliationReport
from wallets.reconciliation import reconcile_run
from wallets.reconciliation.gateway import gateway_statement_import
from wallets.roles import APPROVER, OPERATOR
from wallets.services.adjustments import adjustment_propose
from wallets.services.bonuses import bonus_grant_propose
from wallets.services.deposits import chips_grant
from wallets.services.proposals import proposal_decide
from wallets.services.protection import limits_set, self_exclusion_start
from wallets.services.reversals import reversal_propose
from wallets.services.transfers import ledger_now
from wallets.services.wind_down import wind_down_propose
from wallets.services.withdrawals import (
    withdrawal_failed,
    withdrawal_paid,
    withdrawal_request,
    withdrawal_review_propose,
)
from wallets.tax import formulas
from wallets.tax.gst_rates import gst_rate_propose
from wallets.tax.tds import tds_year_end

D = Decimal


def _withdrawals(maker, checker) -> dict[str, int]:
    """One withdrawal in each state, each a player's first (so each waits for finance)."""
    made = {}
    for state in ("requested", "reviewed", "approved", "paid", "failed", "rejected"):
        player = f"w-{state}"
        verified(player)
        won(player, "2000.00")
        w, _ = withdrawal_request(
            player_external_id=player, amount=Money("1500.00", CASH), reference=f"wd-{state}"
        )
        made[state] = w.pk
        if state == "requested":
            continue
        review = withdrawal_review_propose(
            proposed_by=maker, withdrawal_id=w.pk, reason="KYC and bank account checked"
        )
        if state == "reviewed":
            continue
        decide(review, checker, approve=state != "rejected")
        if state == "paid":
            withdrawal_paid(client=None, withdrawal_id=w.pk, gateway_reference="gw-paid-1")
        if state == "failed":
            withdrawal_failed(client=None, withdrawal_id=w.pk, reason="bank account closed")
    return made


def decide(proposal, checker, *, approve: bool = True) -> None:
    proposal_decide(
        model=type(proposal), proposal_id=proposal.pk, decided_by=checker, approve=approve
    )


def _proposals(maker, checker, game: Game) -> None:
    """Each kind twice: one waiting, one decided."""
    player = Player.objects.get(external_id="b")
    for note in ("waiting", "decided"):
        adjustment = adjustment_propose(
            proposed_by=maker,
            player=player,
            bucket="deposit",
            direction="credit",
            amount=Money("25.00", CASH),
            reason=f"goodwill ({note})",
        )
        grant = bonus_grant_propose(
            proposed_by=maker, player=player, amount=Money("50.00", CASH), reason=note
        )
        change = template_change_propose(
            proposed_by=maker,
            template=GameTemplate.objects.get(slug="points-2"),
            currency=CASH,
            point_value=D("3.00"),
            entry_fee=None,
            fee_percent=D("12.50"),
            reason=f"rake review ({note})",
        )
        if note == "decided":
            decide(adjustment, checker)
            decide(grant, checker, approve=False)
            decide(change, checker, approve=False)
    assert Adjustment.objects.filter(status="proposed").exists()
    assert BonusGrant.objects.filter(status="proposed").exists()
    reversal_propose(
        proposed_by=maker,
        reference=game_reference(game.pk),
        transfer_ids=game_transfer_ids(game),
        reason="collusion ring",
    )
    gst_rate_propose(
        proposed_by=maker,
        effective_from=timezone.localdate() + timedelta(days=30),
        rate_percent=D("45.00"),
        source="notification 99/2026",
        reason="new rate notified",
    )


def _wind_down(maker, settings) -> None:
    """A wind-down waiting for approval (proposed only while real money is off)."""
    settings.REAL_MONEY = "off"
    wind_down_propose(proposed_by=maker, reason="the 2025 Act")
    settings.REAL_MONEY = "on"


def _games(client) -> Game:
    game = points_game(client, GAME_ID)
    for fmt in ("pool", "deals", "rummy500"):
        template(f"{fmt}-cash", fmt)
    template("points-chips", "points", currency="CHP", point_value=D("1.00"))
    for p in ("e", "f"):
        funded_player(p, "500.00")
    game_open(client=client, game_id="sim-open-1", template_slug="points-2", players=["e", "f"])
    game_open(client=client, game_id="sim-cancel-1", template_slug="points-2", players=["e", "f"])
    game_cancel(client=client, game_id="sim-cancel-1")
    reversed_game = points_game(client, "sim-reversed-1", players=("g", "h", "i", "j"))
    maker, checker = staff("reverser", OPERATOR), staff("reversal-checker", APPROVER)
    decide(
        reversal_propose(
            proposed_by=maker,
            reference=game_reference(reversed_game.pk),
            transfer_ids=game_transfer_ids(reversed_game),
            reason="bot",
        ),
        checker,
    )
    return game


def _player_extras() -> None:
    bonus_granted("a", "25.00")
    limits_set(
        player_external_id="a",
        daily_limit=D("1000.00"),
        monthly_limit=D("20000.00"),
        changed_by="gateway",
    )
    self_exclusion_start(player_external_id="c", days=30, changed_by="gateway")
    chips_grant(player_external_id="a", amount=Money("1000", "CHP"), reference="chips-a-1")
    # last financial year: winnings before its end, closed by the year end (TDS withheld)
    last_year = formulas.financial_year_of(ledger_now() - timedelta(days=366))
    verified("y1")
    backdate(last_year.end - timedelta(days=10), transfers=[won("y1", "50000.00")])
    tds_year_end(fy=last_year)


def _tournaments(maker) -> None:
    """A tournament with new money terms waiting, and a new tournament waiting."""
    api_client_create(name="lobby", scopes=["games"])
    tournament_change_propose(
        proposed_by=maker,
        tournament=scheduled(),
        entry_fee="200.00",
        fee_percent="12.50",
        guarantee="1000.00",
        rebuy=None,
        prizes=[{"ranks": "1", "percent": "100.00"}],
        reason="bigger Sunday",
    )
    spec = tournament_file(slug="friday-250")
    new_tournament_propose(proposed_by=maker, spec=spec, reason="Friday series")


def _leaderboards(maker) -> None:
    """A paid leaderboard that skipped a self-excluded player, and a new one waiting."""
    week = board()
    for player, points in (("a", "12.00"), ("e", "9.00"), ("f", "9.00")):
        LeaderboardPoints.objects.create(
            leaderboard=week,
            player=Player.objects.get(external_id=player),
            points=D(points),
            updated_at=timezone.now(),
        )
    self_exclusion_start(player_external_id="f", days=30, changed_by="test")
    week_passes(week)
    leaderboards_due_pay()
    new_leaderboard_propose(proposed_by=maker, spec=board_file(slug="week-2"), reason="week 2")


def rich_books(settings) -> dict:
    """Build it all; returns the ids the tests look for."""
    client, _ = api_client_create(name="game-server-1", scopes=["games"])
    api_client_create(name="payment-gateway", scopes=["payments"])
    maker, checker = staff("maker", OPERATOR), staff("checker", APPROVER)
    game = _games(client)
    _player_extras()
    _proposals(maker, checker, game)
    _tournaments(maker)
    _leaderboards(maker)
    _wind_down(maker, settings)
    withdrawals = _withdrawals(maker, checker)
    gateway_statement_import(
        name="gateway november",
        content=b"reference,amount,date,type\ngw-paid-1,1500.00,2026-11-20,withdrawal\n"
        b"dep-unknown,100.00,2026-11-20,deposit\n",
        imported_by=maker,
    )
    reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND, started_by=maker)
    settings.RECONCILE_STUCK_WITHDRAWAL_HOURS = 0  # every waiting withdrawal is reported stuck
    settings.RECONCILE_STUCK_GAME_HOURS = 0
    report = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND, started_by=maker)
    assert report.status == ReconciliationReport.Status.DISCREPANCIES, report.error
    return {"game": game, "withdrawals": withdrawals, "report": report}
