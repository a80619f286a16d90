"""Rummy 500 jokers and Deals drops over the API, settled by a REAL Celery worker: a Rummy 500 joker
keeps its card across lay-offs; drops in best-of-6 Deals games, none in best of 2; Deals terms of 2,
3 or 6."""

from decimal import Decimal

import pytest

from tests.api.conftest import assert_envelope, ledger_state
from tests.builders import WINNER, Server, books_balance_for, funded_player, res, template
from tests.tournaments.test_rummy500_jokers import r500
from tests.tournaments.test_worker import all_settled
from tests.tournaments.worker import Worker, private_queue, wait_until
from tests.wallets.invariants import ledger_violations
from tournaments.models import Game

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_rummy500_joker_keeps_its_card_through_the_api_and_the_worker():
    server = Server()
    server.api.raise_request_exception = False
    template("r500", "rummy500", seats=4, entry_fee=Decimal("20.00"))
    for p in "ab":
        funded_player(p, "50.00")
    assert server.open("g", "r500", ["a", "b"]).status_code == 201
    with private_queue() as queue:
        worker = Worker(queue)
        try:
            # docs/rules.md's deal: 4C laid off on 6C 7C PJ, as if the joker were 5C
            before = ledger_state()
            changed = [
                r500("a", [["6C", "7C", "PJ"]], in_hand=["2S"]),
                r500("b", laid_off=[["4C", ["6C", "7C", "PJ"]]], in_hand=["KD"]),
            ]
            error = assert_envelope(server.deal("g", 1, changed, wild=""), 422, "joker_fixed")
            assert error["details"]["joker"] == "PJ=8C"
            assert error["details"]["meld"] == ["6C", "7C", "PJ"]
            assert "6C 7C PJ" in error["message"] and "PJ=8C" in error["message"]
            # a joker the meld leaves open must be named
            open_joker = [r500("a", [["6C", "PJ", "7C"]]), r500("b", in_hand=["KD"])]
            error = assert_envelope(
                server.deal("g", 1, open_joker, wild=""), 422, "joker_not_named"
            )
            assert error["details"]["could_be"] == ["5C", "8C"]
            assert ledger_state() == before
            # 9C extends 6-7-8: accepted, and settled by the worker
            extends = [
                r500("a", [["6C", "7C", "PJ"]], in_hand=["2S"]),
                r500("b", laid_off=[["9C", ["6C", "7C", "PJ"]]], in_hand=["KD"]),
            ]
            r = server.deal("g", 1, extends, wild="")
            assert r.status_code == 202, r.json()
            assert wait_until(all_settled, timeout=60), "deal not settled by the worker"
        finally:
            worker.stop()
    deal = server.get("games/g").json()["deals"][0]
    assert deal["status"] == "settled" and deal["points"] == {"a": 28 - 2, "b": 9 - 10}
    assert deal["results"][0]["melded"] == [["6C", "7C", "PJ=8C"]]  # stored as fixed
    assert deal["results"][1]["laid_off"] == [["9C", ["6C", "7C", "PJ=8C"]]]
    assert ledger_violations() == []


def test_drops_in_deals_games_through_the_api_and_the_worker():
    server = Server()
    server.api.raise_request_exception = False
    template("deals-6", "deals", seats=3, entry_fee=Decimal("10.00"), deals=6)
    template("deals-2", "deals", seats=2, entry_fee=Decimal("10.00"), deals=2)
    template("deals-4", "deals", seats=2, entry_fee=Decimal("10.00"), deals=4)
    template("deals-4-named", "deals", seats=2, entry_fee=Decimal("10.00"), deals=4,
             rules={"deal_counts": [2, 3, 4, 6]})  # fmt: skip
    for p in "abcdefgh":
        funded_player(p, "50.00")
    with private_queue() as queue:
        worker = Worker(queue)
        try:
            assert server.open("g6", "deals-6", ["a", "b", "c"]).status_code == 201
            assert server.open("g2", "deals-2", ["d", "e"]).status_code == 201
            # best of 2: no drop; nothing written
            before = ledger_state()
            drop = [res("d", "declared", WINNER), res("e", "first_drop")]
            error = assert_envelope(server.deal("g2", 1, drop), 422, "drop_not_allowed")
            assert error["details"]["players"] == ["e"]
            # best of 4 is no Deals game (docs/rules.md) unless its template names it
            assert_envelope(server.open("g4", "deals-4", ["f", "g"]), 400, "template_invalid")
            assert ledger_state() == before
            assert server.open("g4n", "deals-4-named", ["f", "g"]).status_code == 201
            # best of 6: first drop 20, middle drop 40
            drops = [res("a", "declared", WINNER), res("b", "first_drop"), res("c", "middle_drop")]
            r = server.deal("g6", 1, drops)
            assert r.status_code == 202, r.json()
            assert wait_until(all_settled, timeout=60), "deal not settled by the worker"
        finally:
            worker.stop()
    game = server.get("games/g6").json()
    assert game["deals"][0]["status"] == "settled"
    assert game["deals"][0]["points"] == {"a": 0, "b": 20, "c": 40}
    assert [p["score"] for p in game["players"]] == [480 + 60, 480 - 20, 480 - 40]
    assert not Game.objects.filter(game_id="g4").exists()
    for g in Game.objects.all():
        books_balance_for(g)
    assert ledger_violations() == []
