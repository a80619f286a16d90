import pytest

from tests.builders import LOSER_50, WINNER, books_balance_for, funded_player, res, template
from tests.wallets.invariants import ledger_violations
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
