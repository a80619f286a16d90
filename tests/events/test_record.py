"""Events are written with the money (rummy_ledger/events/record.py): one for every type, in
the transaction of the change, with the object's data as the API answers it at that commit; a
rollback writes none; each event is its client's."""

from __future__ import annotations

import pytest
from django.db import transaction

from rummy_ledger.events.models import Event
from tests.builders import LOSER_50, WINNER, funded_player, make_api, res, template
from tests.tournaments.tournament_builders import scheduled, table
from tests.wallets.payments import approve, verified, won
from tournaments.games.services.settlement import waiting_settle
from tournaments.tournaments.services.entries import registration_create
from tournaments.tournaments.services.rounds import (
    round_store,
    tournament_cancel,
    tournament_start,
    waiting_rounds_settle,
)
from wallets.models import WithdrawalReview
from wallets.services.proposals import proposal_decide
from wallets.services.withdrawals import withdrawal_review_propose

pytestmark = pytest.mark.django_db


def events(client=None, **filters) -> list[tuple[str, dict]]:
    rows = Event.objects.filter(**filters).order_by("id")
    if client is not None:
        rows = rows.filter(client=client)
    return [(e.type, e.data) for e in rows]


def test_a_settled_deal_and_the_game_it_closes_are_told_as_get_games_shows_them(server):
    template("points-2", "points")
    for p in ("a", "b"):
        funded_player(p, "500.00")
    server.open("t1", "points-2", ["a", "b"])
    server.deal("t1", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_50)])
    assert events(server.client) == []  # stored, not settled yet
    waiting_settle()

    game = server.get("games/t1").json()
    deal = {**game["deals"][0], "game_id": "t1"}
    assert events(server.client) == [("deal.settled", deal), ("game.closed", game)]


def test_a_cancelled_game_is_told_as_get_games_answers(server):
    template("points-2", "points")
    for p in ("a", "b"):
        funded_player(p, "500.00")
    server.open("t1", "points-2", ["a", "b"])

    assert server.post("games/t1/cancel").status_code == 200

    assert events(server.client) == [("game.cancelled", server.get("games/t1").json())]


def test_deposits_and_withdrawals_are_told_as_their_answers(gateway, finance, settings):
    settings.WITHDRAWAL_AUTO_APPROVE_MAX = "1000.00"
    verified("w1")
    won("w1", "5000.00")
    deposit = gateway.deposit("w1", "140.00").json()
    first = gateway.withdraw("w1", "100.00").json()  # a first withdrawal waits for finance
    approve(first["withdrawal_id"], *finance)
    paid = gateway.paid(first["withdrawal_id"], "gw-1").json()
    at_once = gateway.withdraw("w1", "200.00").json()  # approved at once
    failed = gateway.failed(at_once["withdrawal_id"]).json()
    rejected = gateway.withdraw("w1", "1500.00").json()
    review = withdrawal_review_propose(
        proposed_by=finance[0], withdrawal_id=rejected["withdrawal_id"], reason="mismatch"
    )
    proposal_decide(
        model=WithdrawalReview, proposal_id=review.pk, decided_by=finance[1], approve=False
    )

    def without_balances(answer: dict, **changed) -> dict:
        return {k: v for k, v in answer.items() if k != "balances"} | changed

    got = events()
    assert [t for t, _ in got] == [
        "deposit.credited",
        "withdrawal.requested",
        "withdrawal.approved",
        "withdrawal.paid",
        "withdrawal.requested",
        "withdrawal.approved",
        "withdrawal.failed",
        "withdrawal.requested",
        "withdrawal.rejected",
    ]
    assert got[0][1] == deposit
    assert got[1][1] == without_balances(first)
    assert got[2][1] == without_balances(first, status="approved")
    assert got[3][1] == without_balances(paid)
    assert got[4][1] == without_balances(at_once, status="requested")  # as it was then
    assert got[5][1] == without_balances(at_once)
    assert got[6][1] == without_balances(failed)
    assert got[8][1]["status"] == "rejected"
    assert {e.client.name for e in Event.objects.all()} == {"gateway"}


def test_a_tournament_cancelled_is_told_as_get_tournaments_answers(db):
    api, lobby = make_api("games", name="lobby")
    scheduled()
    funded_player("p1", "500.00")
    registration_create(client=lobby, slug="sunday-100", player="p1")

    with transaction.atomic():
        tournament_cancel(client=lobby, slug="sunday-100")

    answer = api.get("/api/v1/tournaments/sunday-100").json()
    assert events(lobby) == [("tournament.cancelled", answer)]


def test_a_tournament_finished_is_told_as_get_tournaments_answers(db):
    api, lobby = make_api("games", name="lobby")
    scheduled(rounds=[{"final": True}], max_players=6, rebuy=None)
    players = [f"p{n}" for n in range(4)]
    for player in players:
        funded_player(player, "500.00")
        registration_create(client=lobby, slug="sunday-100", player=player)
    tournament_start(client=lobby, slug="sunday-100")
    final = table("F", *((p, rank, 0) for rank, p in enumerate(players, 1)))
    round_store(client=lobby, slug="sunday-100", number=1, tables=[final])
    assert events(lobby) == []  # stored, not paid yet

    waiting_rounds_settle()

    answer = api.get("/api/v1/tournaments/sunday-100").json()
    assert answer["status"] == "finished"
    assert events(lobby) == [("tournament.finished", answer)]


def test_a_rollback_writes_no_event(server):
    template("points-2", "points")
    for p in ("a", "b"):
        funded_player(p, "500.00")
    server.open("t1", "points-2", ["a", "b"])

    with pytest.raises(RuntimeError), transaction.atomic():
        server.post("games/t1/cancel")
        assert events(server.client) != []  # written in the transaction ...
        raise RuntimeError("rolled back")

    assert events(server.client) == []  # ... and gone with it
    assert server.get("games/t1").json()["status"] == "open"
