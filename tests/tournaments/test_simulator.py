"""The game-server simulator plays every demo template over real HTTP (live server)."""

from decimal import Decimal

import pytest
from django.core.management import call_command
from djmoney.money import Money

from tests.wallets.invariants import ledger_violations
from tournaments.models import Game
from tournaments.simulator import Http, Simulator
from wallets.api_keys import api_client_create
from wallets.models import CASH, CHIPS
from wallets.services import chips_grant, deposit_register

pytestmark = pytest.mark.django_db(transaction=True)


def test_simulator_plays_every_template_and_the_books_balance(live_server, eager):
    call_command("seed_games", verbosity=0)
    _, key = api_client_create(name="sim", scopes=["games", "payments"])
    players = [f"p{n}" for n in range(8)]
    for p in players:
        deposit_register(player_external_id=p, amount=Money("5000.00", CASH), reference=p)
        chips_grant(player_external_id=p, amount=Money("5000.00", CHIPS), reference=p)
    sim = Simulator(Http(live_server.url, key), players, seed=3, say=lambda line: None)
    templates = sim.http.get("templates")["templates"]
    assert len(templates) == 12
    for template in templates:
        sim.play(template)
    assert Game.objects.filter(status=Game.Status.OPEN).count() == 0
    assert all(not t.unbalanced for t in sim.tallies.values())
    cash_fee = sum(t.fee for slug, t in sim.tallies.items() if slug.endswith("-cash"))
    assert cash_fee > 0
    assert sum(t.fee for slug, t in sim.tallies.items() if slug.endswith("-chips")) == Decimal(0)
    assert ledger_violations() == []
