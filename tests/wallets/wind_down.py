"""Builders for the wind-down tests: a book with every kind of player, and the wind-down
proposed and approved by two people."""

from __future__ import annotations

from tests.builders import bonus_granted, funded_player, make_api, staff, template
from tests.wallets.payments import approve, deposited, finance_staff, verified, won
from tournaments.games.services.opening import game_open
from wallets.models import WindDown
from wallets.roles import APPROVER, OPERATOR
from wallets.services.proposals import proposal_decide
from wallets.services.wind_down import wind_down_propose


def a_book() -> dict:
    """While real money is on: `kyc` (verified, 1,000 deposited, 500 won), `nokyc` (no KYC,
    400 deposited, 100 won), `winner` (verified, won 300, never deposited), `bonus` (a bonus
    lot only), `player-1..4` seated in an open cash game (their entries in escrow)."""
    verified("kyc")
    deposited("kyc", "1000.00")
    won("kyc", "500.00")
    deposited("nokyc", "400.00")
    won("nokyc", "100.00")
    verified("winner")
    won("winner", "300.00")
    api, client = make_api("games", name="game-server-1")
    template("points-2", "points")
    seated = [f"player-{n}" for n in range(1, 5)]
    for p in seated:
        funded_player(p, "500.00")
    game_open(client=client, game_id="table-1", template_slug="points-2", players=seated)
    bonus_granted("bonus", "75.00")
    return {"games_api": api, "seated": seated}


def wind_down_approved(reason: str = "the 2025 Act: closing the real-money book") -> WindDown:
    operator, approver = staff("wd-op", OPERATOR), staff("wd-ap", APPROVER)
    proposed = wind_down_propose(proposed_by=operator, reason=reason)
    return proposal_decide(
        model=WindDown, proposal_id=proposed.pk, decided_by=approver, approve=True
    )


__all__ = ["a_book", "approve", "finance_staff", "wind_down_approved"]
