"""The game-server simulator plays every demo template over real HTTP (live server)."""

from decimal import Decimal

import pytest
from django.core.management import call_command
from djmoney.money import Money

from rummy_ledger.api.keys import api_client_create
from rummy_ledger.dev.demo.simulator import Http, Simulator
from tests.wallets.invariants import ledger_violations
from tournaments.games.formats import format_of, game_terms
from tournaments.models import Game
from wallets.models import CASH, CHIPS
from wallets.services.deposits import chips_grant, deposit_register


@pytest.mark.soak
@pytest.mark.django_db(transaction=True)
def test_simulator_plays_every_template_and_the_books_balance(live_server, eager):
    call_command("seed_games", verbosity=0)
    _, key = api_client_create(name="sim", scopes=["games", "payments"])
    players = [f"p{n}" for n in range(8)]
    for p in players:
        deposit_register(player_external_id=p, amount=Money("5000.00", CASH), reference=p)
        chips_grant(player_external_id=p, amount=Money("5000.00", CHIPS), reference=p)
    sim = Simulator(Http(live_server.url, key), players, seed=3, say=lambda line: None)
    templates = sim.http.get("templates")["templates"]
    assert len(templates) == 14
    for template in templates:
        sim.play(template)
    assert Game.objects.filter(status=Game.Status.OPEN).count() == 0
    assert all(not t.unbalanced for t in sim.tallies.values())
    cash_fee = sum(t.fee for slug, t in sim.tallies.items() if slug.endswith("-cash"))
    assert cash_fee > 0
    assert sum(t.fee for slug, t in sim.tallies.items() if slug.endswith("-chips")) == Decimal(0)
    assert ledger_violations() == []


def deals(fmt: str, rules: str | dict, players: int, n: int = 200):
    """n deals the simulator would post at a table of this many, checked by the format."""
    sim = Simulator(None, [f"p{i}" for i in range(players)], seed=players, say=lambda _: None)
    terms = game_terms(
        template="t",
        format=fmt,
        currency="INR",
        chips=False,
        seats=8 if fmt == "rummy500" else 6,
        point_value=Decimal("1.00") if fmt == "points" else None,
        entry_fee=None if fmt == "points" else Decimal("10.00"),
        fee_percent=Decimal("10"),
        deals=None,
        rules=rules,
        split_policy="none",
        rejoin_allowed=False,
        entry_buckets=["deposit"],
    )
    template = {"rules": terms.rules.to_dict(), "deals": terms.deals}
    for deal_no in range(1, n + 1):
        if fmt == "rummy500":
            body = sim._deal500(sim.players, deal_no)
        else:
            body = sim._deal13(template, sim.players, deal_no)
        yield format_of(fmt).check_deal(
            terms=terms, players=sim.players, eliminated=[], expected_no=deal_no, payload=body
        )


def test_simulated_two_player_tables_end_deals_with_wrong_shows():
    # In `make run`: the opponent of a wrong show wins without a show.
    forfeits = [
        d
        for d in deals("points", "S0", 2)
        if {r["outcome"] for r in d.results} == {"wrong_show", "declared"}
        and all(r["groups"] is None for r in d.results if r["outcome"] == "declared")
    ]
    assert len(forfeits) >= 10
    for d in forfeits:
        assert {r["outcome"]: d.score.points[r["player"]] for r in d.results} == {
            "wrong_show": 80,
            "declared": 0,
        }


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_simulated_s1_tables_deal_from_as_many_decks_as_the_players_need(players):
    # every deal passes the deck check: 3 decks (and 6 printed jokers) from 4 players
    assert len(list(deals("points", "S1", players, n=60))) == 60


@pytest.mark.parametrize("players", [2, 4, 5, 8])
def test_simulated_rummy500_tables_seat_up_to_8(players):
    assert len(list(deals("rummy500", {}, players, n=60))) == 60
