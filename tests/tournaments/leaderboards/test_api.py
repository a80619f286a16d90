"""`GET /api/v1/leaderboards/{slug}`: the client's own leaderboard, standings ranked with ties
sharing a rank, cursor-paged; 404 for anyone else's; bad query parameters a 400."""

from decimal import Decimal

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from tests.builders import Server, funded_player, template
from tests.tournaments.leaderboards.builders import board
from tournaments.models import LeaderboardPoints
from wallets.models import Player

pytestmark = pytest.mark.django_db


@pytest.fixture
def week(server):
    template("points-2", "points")
    leaderboard = board()
    for player, points in (("p1", "10"), ("p2", "8"), ("p3", "8"), ("p4", "5.5"), ("p5", "0")):
        funded_player(player, "0")
        LeaderboardPoints.objects.create(
            leaderboard=leaderboard,
            player=Player.objects.get(external_id=player),
            points=Decimal(points),
            updated_at=timezone.now(),
        )
    return leaderboard


def test_standings_ranked_ties_sharing_paged(server, week):
    response = server.get("leaderboards/week-1")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert set(body) == {"slug", "starts_at", "ends_at", "status", "standings", "next"}
    assert (body["slug"], body["status"], body["next"]) == ("week-1", "running", None)
    assert parse_datetime(body["starts_at"]) == week.starts_at
    assert parse_datetime(body["ends_at"]) == week.ends_at
    assert body["standings"] == [
        {"rank": 1, "player": "p1", "points": "10.00"},
        {"rank": 2, "player": "p2", "points": "8.00"},
        {"rank": 2, "player": "p3", "points": "8.00"},
        {"rank": 4, "player": "p4", "points": "5.50"},
    ]
    first = server.get("leaderboards/week-1?limit=2").json()
    assert [s["player"] for s in first["standings"]] == ["p1", "p2"]
    rest = server.get(f"leaderboards/week-1?limit=2&after={first['next']}").json()
    assert rest["standings"] == body["standings"][2:] and rest["next"] is None


def test_another_clients_leaderboard_does_not_exist_for_it(server, week):
    other = Server(name="another-server")
    for slug in ("week-1", "nothing"):
        response = other.get(f"leaderboards/{slug}")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "leaderboard_not_found"


@pytest.mark.parametrize(
    "query", ["limit=0", "limit=501", "after=x", "sort=points", "limit=1&limit=2"]
)
def test_bad_query_parameters_are_refused(server, week, query):
    response = server.get(f"leaderboards/week-1?{query}")
    assert response.status_code == 400, response.json()
    assert response.json()["error"]["code"] == "invalid"
