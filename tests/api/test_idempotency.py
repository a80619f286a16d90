"""`rummy_ledger.api.idempotency.idempotent`: the key is recorded with the answer at the end of the
write's transaction. A repeat replays the first answer and what it wrote on its way is rolled
back; the same key for another request is a conflict and writes nothing; a refusal is recorded
and replayed like a success; a repeat that meets the first still committing is 409
`request_in_flight` after a short wait. Through the deal post, the hot path it guards."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest

from rummy_ledger.api.models import IdempotencyRecord
from tests.builders import LOSER_22, WINNER, Server, funded_player, make_api, res, template
from tests.tournaments.games.services.tables import while_held
from tournaments.models import Deal
from wallets.models import Withdrawal


@pytest.fixture
def server(db):
    template("points-1", "points", point_value=Decimal("1.00"))
    server = Server()
    for game in ("g1", "g2"):
        for player in (f"{game}a", f"{game}b"):
            funded_player(player, "100.00")
        assert server.open(game, "points-1", [f"{game}a", f"{game}b"]).status_code == 201
    return server


def _results(game: str) -> list[dict]:
    return [res(f"{game}a", "declared", WINNER), res(f"{game}b", "lost", LOSER_22)]


def test_a_repeat_replays_the_first_answer_and_writes_nothing_more(server):
    first = server.deal("g1", 1, _results("g1"), key="k-1")

    again = server.deal("g1", 1, _results("g1"), key="k-1")

    assert first.status_code == again.status_code == 202
    assert again["Idempotent-Replayed"] == "true" and again.content == first.content
    assert Deal.objects.count() == 1
    record = IdempotencyRecord.objects.get(key="k-1")
    assert (record.status_code, record.body) == (202, first.content.decode())


def test_a_key_reused_for_another_request_is_a_conflict_and_its_write_is_rolled_back(server):
    server.deal("g1", 1, _results("g1"), key="k-1")

    other = server.deal("g2", 1, _results("g2"), key="k-1")

    # g2's deal was checked and stored on the way, then rolled back when the key was found
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"
    assert list(Deal.objects.values_list("game__game_id", flat=True)) == ["g1"]


def test_a_refusal_is_recorded_and_replayed_even_once_the_request_would_pass(server):
    # given a deal posted out of order under a key: 409 deal_out_of_order, recorded
    refused = server.deal("g1", 2, _results("g1"), key="k-2")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "deal_out_of_order"
    server.deal("g1", 1, _results("g1"))

    # when it is repeated after deal 1 (it would be stored now)
    again = server.deal("g1", 2, _results("g1"), key="k-2")

    # then the refusal is the answer, and deal 2 was not stored
    assert again.status_code == 409 and again.content == refused.content
    assert again["Idempotent-Replayed"] == "true"
    assert list(Deal.objects.values_list("deal_no", flat=True)) == [1]


@pytest.mark.django_db(transaction=True)
def test_a_repeat_meeting_the_first_still_committing_is_in_flight_and_writes_nothing():
    # given another connection holding the key's record in a transaction not committed yet
    template("points-1", "points", point_value=Decimal("1.00"))
    server = Server()
    for player in ("g1a", "g1b"):
        funded_player(player, "100.00")
    assert server.open("g1", "points-1", ["g1a", "g1b"]).status_code == 201

    def hold() -> None:
        IdempotencyRecord.objects.create(client=server.client, key="k-3", request_hash="h")

    # when the deal is posted under that key meanwhile
    def post():
        started = time.monotonic()
        response = server.deal("g1", 1, _results("g1"), key="k-3")
        return response, time.monotonic() - started

    response, seconds = while_held(hold, post)

    # then it waited a moment, answered 409 with Retry-After, and its deal was rolled back
    assert response.status_code == 409, response.content
    assert response.json()["error"]["code"] == "request_in_flight"
    assert "Retry-After" in response
    assert 0.25 <= seconds < 5
    assert not Deal.objects.exists()
    assert not IdempotencyRecord.objects.filter(key="k-3").exists()


def test_a_key_and_body_sent_to_another_operation_are_a_conflict_not_its_answer(db):
    # given a deposit under a key, then the same key and the very same body to the withdrawals
    api, _ = make_api("payments", name="gateway")
    body = {"amount": "10.00", "reference": "same-1"}
    deposit = api.post("/api/v1/players/p1/deposits", body, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert deposit.status_code == 201, deposit.json()

    # when
    other = api.post(
        "/api/v1/players/p1/withdrawals", body, format="json", HTTP_IDEMPOTENCY_KEY="k"
    )

    # then the request hash covers the path: a conflict, not the deposit's answer replayed
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"
    assert not other.has_header("Idempotent-Replayed")
    assert not Withdrawal.objects.exists()
