"""Points accrue in the settlement job, a game counted once per leaderboard; a reversed game
takes its points back; games of other templates, clients or periods count nothing. A listed
tournament counts once, when its final pays; an unlisted one counts nothing."""

from decimal import Decimal

import pytest

from rummy_ledger.api.keys import api_client_create
from tests.builders import Server, funded_player, points_game, template
from tests.tournaments.leaderboards.builders import board, ist_midnight
from tests.tournaments.tournament_builders import scheduled, table
from tournaments.games.queries import seating
from tournaments.games.services.games import game_mark_reversed
from tournaments.leaderboards.services.points import games_points_accrue, tournament_points_accrue
from tournaments.models import (
    Game,
    Leaderboard,
    LeaderboardGame,
    LeaderboardPoints,
    Registration,
    Tournament,
)
from tournaments.references import game_reference, tournament_reference
from tournaments.tournaments.services import entries, rounds

pytestmark = pytest.mark.django_db
D = Decimal


def points(leaderboard: Leaderboard) -> dict[str, Decimal]:
    rows = LeaderboardPoints.objects.filter(leaderboard=leaderboard)
    return dict(rows.values_list("player__external_id", "points"))


def test_a_settled_game_counts_once_and_its_reversal_takes_the_points_back(server):
    template("points-2", "points")
    by_fee = board()
    by_results = board(slug="week-results", scoring="results")
    # when
    game = points_game(server.client, "g1")
    # then: the fee rule gives the winner the game's fee; results: net / 100 or loss / 200
    assert game.status == Game.Status.FINISHED and game.fee > 0
    assert points(by_fee) == {"a": game.fee}
    seats = {s.player.external_id: s for s in seating([game.pk]).seats[game.pk]}
    expected = {}
    for player, seat in seats.items():
        net = seat.payout + seat.refund - sum(D(a) for _, a in seat.contributed)
        value = (net / 100 if net >= 0 else -net / 200).quantize(D("0.01"))
        if value > 0:
            expected[player] = value
    assert points(by_results) == expected and len(expected) >= 2

    # offered again (a repeat of the batch): nothing more
    assert games_points_accrue(games=[game], seats=seating([game.pk]).seats) == 2
    assert points(by_fee) == {"a": game.fee}
    assert LeaderboardGame.objects.filter(reference=game_reference(game.pk)).count() == 2

    # the game's reversal approved: its points go back, once
    game_mark_reversed(reference=game_reference(game.pk))
    game_mark_reversed(reference=game_reference(game.pk))
    assert points(by_fee) == {"a": D("0.00")}
    assert set(points(by_results).values()) == {D("0.00")}


def test_other_templates_clients_periods_and_paid_boards_count_nothing(server):
    template("points-2", "points")
    template("points-9", "points")
    other = board(slug="other-template", templates=["points-9"])
    paid = board(slug="paid")
    Leaderboard.objects.filter(pk=paid.pk).update(status="paid", paid_at=paid.starts_at)
    later = board(
        slug="later", starts_at=ist_midnight(1).isoformat(), ends_at=ist_midnight(2).isoformat()
    )
    week = board()
    elsewhere = Server(name="another-server")
    # when
    points_game(elsewhere.client, "g1", players=("e", "f", "g", "h"))
    points_game(server.client, "g2")
    # then
    for leaderboard in (other, paid, later):
        assert points(leaderboard) == {}, leaderboard.slug
    assert list(points(week)) == ["a"]


def _one_round(slug: str) -> Tournament:
    """₹100 entries, 15 % fee, ₹500 guarantee; prizes 50 % and 25 % twice."""
    return scheduled(slug=slug, rounds=[{"final": True}], max_players=6, rebuy=None)


def _final_paid(client, slug: str) -> Tournament:
    """Four players registered, the final played at one table and paid: 250, 125, 125."""
    players = [f"{slug}-{p}" for p in "abcd"]
    for player in players:
        funded_player(player, "500.00")
        entries.registration_create(client=client, slug=slug, player=player)
    rounds.tournament_start(client=client, slug=slug)
    final = table("F", *((p, position, 0) for position, p in enumerate(players, 1)))
    stored = rounds.round_store(client=client, slug=slug, number=1, tables=[final])
    assert rounds.round_settle(round_id=stored.pk) is True
    return Tournament.objects.get(client=client, slug=slug)


def test_a_listed_tournament_counts_once_when_its_final_pays_another_counts_nothing(db):
    client, _ = api_client_create(name="lobby", scopes=["games"])
    _one_round("sunday-100"), _one_round("monday-100")
    by_fee = board(client="lobby", templates=[], tournaments=["sunday-100"])
    by_results = board(
        slug="week-results", client="lobby", templates=None, tournaments=["sunday-100"],
        scoring="results",
    )  # fmt: skip
    # when: the listed tournament's final pays, and another tournament's
    sunday = _final_paid(client, "sunday-100")
    _final_paid(client, "monday-100")
    # then: the ₹60 fee (15 % of 400, charged on entries) shared by what each paid in: 15 each
    assert sunday.fee == D("60.00") and sunday.status == Tournament.Status.FINISHED
    assert points(by_fee) == {f"sunday-100-{p}": D("15.00") for p in "abcd"}
    # results: net 250 - 100 / 100, 125 - 100 / 100 twice, a loss of 100 / 200
    assert points(by_results) == {
        "sunday-100-a": D("1.50"), "sunday-100-b": D("0.25"), "sunday-100-c": D("0.25"),
        "sunday-100-d": D("0.50"),
    }  # fmt: skip
    # offered again (a retried payout): counted once
    registrations = list(Registration.objects.filter(tournament=sunday))
    assert tournament_points_accrue(tournament=sunday, registrations=registrations) == 2
    assert points(by_fee) == {f"sunday-100-{p}": D("15.00") for p in "abcd"}
    assert LeaderboardGame.objects.filter(reference=tournament_reference(sunday.pk)).count() == 2
