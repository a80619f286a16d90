"""Switching real money off and back on, a restart of the service each way, between two steps of
the soak's machine (`SoakMachine` in tests/simulation/runs.py; the CI budget leaves it out, as
the issue decided: two restarts a switch). While it is off, docs/law-india.md and
docs/money-and-tax.md ("Operating in a restricted jurisdiction") say what happens: deposits and
cash game opens are 409 `real_money_unavailable` and write nothing, chips games play on, games
already open settle, and a withdrawal takes the winnings first, then the deposit (a refund).
Once it is back on, every balance agrees with the model again."""

from __future__ import annotations

from contextlib import contextmanager
from decimal import Decimal

from djmoney.money import Money
from hypothesis.stateful import precondition, rule

from tests.simulation import model
from tests.simulation.model import Game
from wallets.models import CHIPS
from wallets.services.deposits import chips_grant

CHIPS_TEMPLATE = "sim-chips"  # a pool of chips (made by runs.py's `world`)
CHIPS_GRANT = Money("100.00", CHIPS)


class RealMoneySwitch:
    """Mixed into the soak's machine: uses ApiMachine's `world`, `books`, `step`, `write` and its
    players' and games' steps. Once a run: each switch restarts the worker twice."""

    switched = False

    @precondition(lambda self: not self.switched)
    @rule()
    def real_money_off_and_on(self):
        self.switched = True
        with self.real_money_off():
            self.while_real_money_off()
        self.deposit_as(self.player_ids()[0], Decimal("100.00"))  # on again: credited

    @contextmanager
    def real_money_off(self):
        """The service restarted with REAL_MONEY=off, and with on again however the body ends
        (a failure must not leave the runs after it, or hypothesis's replays, with it off).
        Logged as faults (`fault:real-money-off`, `fault:real-money-on` in the soak's count)."""
        self.step("fault", "real-money-off")
        self.world.restarted_with_real_money("off")
        self.books.real_money = False
        try:
            yield
        finally:
            self.step("fault", "real-money-on")
            self.world.restarted_with_real_money("on")
            self.books.real_money = True

    def while_real_money_off(self) -> None:
        """A deposit and a points game refused; a chips game played; a deal of every game
        already open, settled; a refund of winnings and deposit; every balance as the model's."""
        self.deposit_as(self.player_ids()[0], Decimal("100.00"))
        self.open_game("sim-points", {0, 1})
        self.chips_game_played()
        for n, game_id in enumerate(self.open_games()):
            self.deal_one(game_id, n, [("lost", False)] * 5, True)
        self.refund_taken()
        self.balances_agree()
        self.ledger_sound()

    def chips_game_played(self) -> None:
        """Practice play goes on: two players given chips, a chips pool of theirs opens and its
        first deal settles (the model follows money: no bucket it compares holds chips)."""
        players = self.player_ids()[:2]
        for player in players:
            chips_grant(player_external_id=player, amount=CHIPS_GRANT, reference=self.next_id("c"))
        game_id = self.next_id("g")
        self.step("open", CHIPS_TEMPLATE, game_id, players)
        body = {"game_id": game_id, "template": CHIPS_TEMPLATE, "players": players}
        r = self.write(self.world.games, "games", body)
        assert r.status_code == 201, r.text
        results = self.results(Game("pool101", players, {}, model.ZERO), 0, [("lost", False)])
        self.step("deal", game_id, 1, "chips")
        body = {"deal_no": 1, "wild_joker": model.WILD, "results": results}
        r = self.write(self.world.games, f"games/{game_id}/deals", body)
        assert r.status_code == 202, r.text
        self.settled(game_id)

    def refund_taken(self) -> None:
        """The first player with verified KYC and a deposit of a rupee or more takes out all its
        winnings and half its deposit: the winnings first, then the deposit, TDS as ever."""
        holders = [n for n, p in self.books.players.items() if p.pan and p.deposit >= 1]
        if holders:
            p = self.books.players[holders[0]]
            self.withdraw_amount(holders[0], p.winnings + (p.deposit / 2).quantize(model.PAISA))
