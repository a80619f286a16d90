import pytest

from tests.builders import LOSER_50, WINNER, books_balance_for, funded_player, res, template
from tests.wallets.invariants import ledger_violations
from tournaments.games.services.settlement import waiting_settle
from tournaments.models import Game

pytestmark = pytest.mark.django_db


def test_points_game_settles_through_api(server, eager, django_capture_on_commit_callbacks):
    template("points-2", "points")
    for p in ("a", "b", "c", "d"):
        funded_player(p, "500.00")
    r = server.open("g1", "points-2", ["a", "b", "c", "d"])
    assert r.status_code == 201, r.json()
    with django_capture_on_commit_callbacks(execute=True):
        r = server.deal(
            "g1",
            1,
            [
                res("a", "declared", WINNER),
                res("b", "first_drop"),
                res("c", "middle_drop"),
                res("d", "lost", LOSER_50),
            ],
        )
    assert r.status_code == 202, r.json()
    body = server.get("games/g1").json()
    assert body["status"] == "finished", body
    assert body["deals"][0]["points"] == {"a": 0, "b": 20, "c": 40, "d": 50}
    assert body["fee"] == "22.00"
    books_balance_for(Game.objects.get(game_id="g1"))
    assert ledger_violations() == []


def test_a_game_is_settled_once_closed_with_every_deal_settled(server):
    template("points-2", "points")
    for p in ("a", "b", "c", "d"):
        funded_player(p, "500.00")
    # given: a game just opened: its escrow holds the stakes, nothing is settled yet
    assert server.open("g1", "points-2", ["a", "b"]).status_code == 201
    assert server.get("games/g1").json()["settled"] is False
    # when: its deal is stored, not yet settled
    deal = [res("a", "declared", WINNER), res("b", "lost", LOSER_50)]
    assert server.deal("g1", 1, deal).status_code == 202
    body = server.get("games/g1").json()
    assert (body["settled"], body["deals"][0]["status"]) == (False, "stored")
    # when: settled (the Celery task's body), which finishes the game
    waiting_settle()
    body = server.get("games/g1").json()
    assert (body["status"], body["settled"]) == ("finished", True)
    # and: a game cancelled before any deal is settled too (its escrow went back)
    assert server.open("g2", "points-2", ["c", "d"]).status_code == 201
    assert server.post("games/g2/cancel").status_code == 200
    assert server.get("games/g2").json()["settled"] is True
