"""Issue 23 §1: a game's opening and a deal's post reach PostgreSQL in two round trips each (one
read, one write that claims the Idempotency-Key with the answer), through the whole request
stack; a replay is one. Outside any test transaction, as under gunicorn (no savepoints)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.builders import LOSER_22, WINNER, Server, funded_player, res, template
from tournaments.models import Deal, Game

pytestmark = pytest.mark.django_db(transaction=True)


def _round_trips(captured) -> list[str]:
    """The statements the request sent, but the API key's look-up and the session's bounds
    (once per connection; a warm process has both already)."""
    return [
        q["sql"]
        for q in captured.captured_queries
        if "wallets_apiclient" not in q["sql"] and "set_config('statement_timeout'" not in q["sql"]
    ]


def test_an_opening_and_a_deal_take_two_round_trips_each():
    server = Server()
    template("points-1", "points", point_value=Decimal("1.00"))
    for p in ("a", "b"):
        funded_player(p, "100.00")
    with CaptureQueriesContext(connection) as opening:
        opened = server.open("g1", "points-1", ["a", "b"], key="open-1")
    assert opened.status_code == 201, opened.content
    assert len(_round_trips(opening)) == 2, _round_trips(opening)

    deal = [res("a", "declared", WINNER), res("b", "lost", LOSER_22)]
    with CaptureQueriesContext(connection) as posting:
        posted = server.deal("g1", 1, deal, key="deal-1")
    assert posted.status_code == 202, posted.content
    assert len(_round_trips(posting)) == 2, _round_trips(posting)
    assert Deal.objects.get().status == Deal.Status.STORED
    assert Game.objects.get().collected == Decimal("160.00")

    with CaptureQueriesContext(connection) as replaying:
        again = server.deal("g1", 1, deal, key="deal-1")
    assert again.status_code == 202 and again["Idempotent-Replayed"] == "true"
    assert again.content == posted.content
    assert len(_round_trips(replaying)) == 1, _round_trips(replaying)
