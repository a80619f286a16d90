"""Refusals: each a clear 4xx, and nothing written or moved. Plus Idempotency-Key replay."""

from decimal import Decimal

import pytest

from rummy_ledger.api.models import IdempotencyRecord
from tests.builders import LOSER_22, WINNER, Server, funded_player, make_api, res, template
from tournaments.models import Deal, Game
from wallets.models import Account, Entry, Transfer

pytestmark = pytest.mark.django_db


def snapshot() -> tuple:
    return (
        Transfer.objects.count(),
        Entry.objects.count(),
        Deal.objects.count(),
        sorted(Account.objects.values_list("code", "balance")),
    )


@pytest.fixture
def pool_game(server, eager, django_capture_on_commit_callbacks):
    template("pool-101", "pool101", entry_fee=Decimal("10.00"))
    for p in "abc":
        funded_player(p, "100.00")
    assert server.open("g", "pool-101", list("abc")).status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        # c is eliminated: 80 + 40 = 120
        server.deal(
            "g", 1, [res("a", "declared", WINNER), res("b", "first_drop"), res("c", "wrong_show")]
        )
        server.deal(
            "g", 2, [res("a", "declared", WINNER), res("b", "first_drop"), res("c", "middle_drop")]
        )
    return "g"


def hand13(cards: str) -> list[list[str]]:
    return [cards.split()]


GOOD = [res("a", "declared", WINNER), res("b", "lost", LOSER_22)]
BAD_CASES = {
    "unknown card": (
        3,
        [res("a", "declared", WINNER), res("b", "lost", [["5H", "6H", "XH"], *LOSER_22[1:]])],
        400,
        "invalid_card",
    ),
    "14 cards": (
        3,
        [res("a", "declared", WINNER), res("b", "lost", [*LOSER_22, ["3C"]])],
        422,
        "hand_size",
    ),
    "a card the decks cannot hold": (
        3,
        [
            res("a", "declared", WINNER),
            res(
                "b",
                "lost",
                [
                    ["AS", "2S", "3S"],
                    ["AS", "2S", "3S"],
                    ["AS", "2S", "3S", "9C"],
                    ["5D", "6D", "7D"],
                ],
            ),
        ],
        422,
        "too_many_copies",
    ),
    "unknown player": (3, [*GOOD, res("zed", "first_drop")], 422, "unknown_player"),
    "eliminated player": (3, [*GOOD, res("c", "first_drop")], 422, "player_eliminated"),
    "missing player": (3, [res("a", "declared", WINNER)], 422, "missing_player"),
    "deal out of order": (5, GOOD, 409, "deal_out_of_order"),
    "invalid winner": (
        3,
        [
            res(
                "a",
                "declared",
                [
                    ["7S", "8S", "9C", "10S"],
                    ["9D", "9S", "9H"],
                    ["2C", "2H", "2D"],
                    ["5H", "6H", "7H"],
                ],
            ),
            res("b", "first_drop"),
        ],
        422,
        "invalid_declaration",
    ),
    "two winners": (
        3,
        [res("a", "declared", WINNER), res("b", "declared", WINNER)],
        422,
        "winner_count",
    ),
    "winner hides the hand": (
        3,
        [res("a", "declared"), res("b", "lost", LOSER_22)],
        422,
        "declaration_missing",
    ),
    "a valid wrong show and a winner without a show": (
        3,
        [res("a", "declared"), res("b", "wrong_show", WINNER)],
        422,
        "wrong_show_valid",
    ),
    "lost without groups": (
        3,
        [res("a", "declared", WINNER), res("b", "lost")],
        400,
        "groups_required",
    ),
}


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_deal_is_refused_and_nothing_moves(server, pool_game, case):
    deal_no, results, status, code = BAD_CASES[case]
    before = snapshot()
    r = server.deal(pool_game, deal_no, results)
    assert r.status_code == status, r.json()
    assert r.json()["error"]["code"] == code
    assert snapshot() == before


def test_invalid_winner_gets_the_reasons(server, pool_game):
    r = server.deal(pool_game, 3, BAD_CASES["invalid winner"][1])
    assert r.status_code == 422
    reasons = r.json()["error"]["details"]["reasons"]
    assert any("9C" in reason for reason in reasons)


def test_drop_in_a_no_drop_format(server, eager):
    template("deals-2", "deals", entry_fee=Decimal("5.00"), deals=2)
    for p in "ab":
        funded_player(p, "10.00")
    server.open("g", "deals-2", ["a", "b"])
    before = snapshot()
    r = server.deal("g", 1, [res("a", "declared", WINNER), res("b", "middle_drop")])
    assert r.status_code == 422 and r.json()["error"]["code"] == "drop_not_allowed"
    assert snapshot() == before


def test_malformed_body_is_400(server, pool_game):
    r = server.post(f"games/{pool_game}/deals", {"deal_no": "x", "results": "nope"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid"


def test_another_servers_game_is_404(server, pool_game):
    other = Server(name="game-server-2")
    before = snapshot()
    assert other.get(f"games/{pool_game}").status_code == 404
    r = other.deal(pool_game, 3, [*GOOD, res("c", "first_drop")])
    assert r.status_code == 404 and r.json()["error"]["code"] == "game_not_found"
    assert other.post(f"games/{pool_game}/cancel").status_code == 404
    assert snapshot() == before


def test_scope_is_required(db):
    api, _ = make_api("payments", name="gw")
    assert api.get("/api/v1/templates").status_code == 403


def test_open_names_every_short_player_and_takes_nothing(server):
    template("points-2", "points", point_value=Decimal("2.00"))
    funded_player("rich", "500.00")
    funded_player("poor1", "159.99")
    funded_player("poor2", "0")
    before = snapshot()
    r = server.open("g", "points-2", ["rich", "poor1", "poor2", "stranger"])
    assert r.status_code == 409, r.json()
    err = r.json()["error"]
    assert err["code"] == "insufficient_funds"
    assert err["details"]["players"] == ["poor1", "poor2", "stranger"]
    assert Game.objects.count() == 0
    assert snapshot()[:3] == before[:3]
    assert Account.objects.get(code="player:rich:deposit").balance.amount == Decimal("500.00")


def test_open_checks_template_and_seats(server):
    template("points-2", "points", seats=2)
    for p in "abc":
        funded_player(p)
    assert server.open("g", "nope", ["a", "b"]).json()["error"]["code"] == "unknown_template"
    r = server.open("g", "points-2", ["a", "b", "c"])
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_players"


def test_open_seats_follow_the_format(server):
    template("points-2", "points")  # 13-card: at most 6
    template("r500", "rummy500", seats=8)
    players = [f"p{n}" for n in range(9)]
    for p in players:
        funded_player(p)
    before = snapshot()
    r = server.open("g", "points-2", players[:7])
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_players"
    r = server.open("g", "r500", players)
    assert r.status_code == 400 and "players" in r.json()["error"]["details"]
    assert snapshot() == before
    assert server.open("g", "r500", players[:8]).status_code == 201


def test_templates_list(server):
    template("points-2", "points")
    template("pool-101", "pool101", active=False)
    template("deals-3", "deals", deals=3, entry_fee=Decimal("25.50"))
    body = server.get("templates").json()["templates"]
    assert [t["slug"] for t in body] == ["deals-3", "points-2"]
    deals = body[0]
    assert deals["format"] == "deals" and deals["entry_fee"] == "25.50"
    assert deals["point_value"] is None and deals["deals"] == 3
    # best of 3: no drop (S3); game servers read which N refuse them from the rules
    assert deals["rules"]["no_drop_deals"] == [2, 3] and deals["rules"]["deal_counts"] == [2, 3, 6]
    assert body[1]["point_value"] == "2.00" and body[1]["entry_fee"] is None


def test_idempotency_replays_the_first_response(server):
    template("points-2", "points")
    for p in "ab":
        funded_player(p)
    first = server.open("g", "points-2", ["a", "b"], key="open-1")
    again = server.open("g", "points-2", ["a", "b"], key="open-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert Transfer.objects.filter(kind="entry").count() == 2
    # a different body with the same key
    r = server.open("g2", "points-2", ["a", "b"], key="open-1")
    assert r.status_code == 409 and r.json()["error"]["code"] == "idempotency_conflict"
    # the same game under another key: the game already exists
    r = server.open("g", "points-2", ["a", "b"], key="open-2")
    assert r.status_code == 409 and r.json()["error"]["code"] == "game_exists"


def test_refusals_are_replayed_too(server):
    template("points-2", "points")
    funded_player("a", "0")
    funded_player("b")
    first = server.open("g", "points-2", ["a", "b"], key="k")
    funded_player("a", "1000.00")
    again = server.open("g", "points-2", ["a", "b"], key="k")
    assert first.status_code == again.status_code == 409
    assert again.json() == first.json()
    assert IdempotencyRecord.objects.get(key="k").status_code == 409


def test_write_without_key_is_refused(server):
    r = server.api.post("/api/v1/games", {}, format="json")
    assert r.status_code == 400 and r.json()["error"]["code"] == "idempotency_key_required"


def test_same_deal_reposted_with_another_key_is_the_same_deal(server, pool_game):
    results = [
        *GOOD,
    ]
    results = [res("a", "declared", WINNER), res("b", "lost", LOSER_22)]
    first = server.deal(pool_game, 3, results)
    again = server.deal(pool_game, 3, results)
    assert first.status_code == again.status_code == 202
    assert Deal.objects.filter(deal_no=3).count() == 1
    other = server.deal(pool_game, 3, [res("a", "lost", LOSER_22), res("b", "declared", WINNER)])
    assert other.status_code == 409 and other.json()["error"]["code"] == "deal_exists"
