"""Each format's worked examples (docs/rules.md "Formats and cash") end to end through the REST
API."""

from decimal import Decimal

import pytest
from djmoney.money import Money
from drf_spectacular.generators import SchemaGenerator

from tests.architecture.test_openapi import _as_json_schema, conforms
from tests.builders import (
    LOSER_22,
    LOSER_50,
    LOSER_80,
    WINNER,
    bonus_granted,
    books_balance_for,
    funded_player,
    res,
    template,
)
from tests.wallets.invariants import ledger_violations
from tournaments.models import Game
from wallets.models import CHIPS, Account
from wallets.services.accounts import platform_accounts
from wallets.services.deposits import chips_grant

pytestmark = pytest.mark.django_db


def balances(player: str) -> dict[str, Decimal]:
    accounts = Account.objects.filter(player__external_id=player)
    return {a.bucket: a.balance.amount for a in accounts}


def finish(game_id: str) -> dict:
    game = Game.objects.get(game_id=game_id)
    books_balance_for(game)
    assert ledger_violations() == []
    return game


def test_points_s0_example_fee_and_refunds(server, settle):
    # S0: 4 players at 2 a point: 160 each into escrow; losers 20, 40, 50 -> 220 - fee to winner
    template("points-2", "points", point_value=Decimal("2.00"), fee_percent=Decimal("10"))
    for p in "abcd":
        funded_player(p, "500.00")
    assert server.open("g", "points-2", list("abcd")).json()["collected"] == "640.00"
    assert balances("a")["deposit"] == Decimal("340.00")
    r = settle(
        server.deal,
        "g",
        1,
        [
            res("a", "declared", WINNER),
            res("b", "first_drop"),
            res("c", "middle_drop"),
            res("d", "lost", LOSER_50, claimed_points=45),
        ],
    )
    assert r.status_code == 202
    body = server.get("games/g").json()
    assert body["status"] == "finished" and body["settled"]
    assert body["fee"] == "22.00" and body["paid_out"] == "198.00"
    assert body["deals"][0]["discrepancies"] == {"d": {"claimed": 45, "computed": 50}}
    assert balances("a") == {**balances("a"), "deposit": Decimal("500.00"), "winnings": 198}
    assert balances("b")["deposit"] == Decimal("460.00")
    assert balances("c")["deposit"] == Decimal("420.00")
    assert balances("d")["deposit"] == Decimal("400.00")
    fee_account = platform_accounts()["fee_revenue"]
    assert fee_account.entries.get().amount == Money("22.00", "INR")
    finish("g")


def test_loser_with_22_points_and_a_wrong_show(server, settle):
    template("points-1", "points", point_value=Decimal("1.00"), fee_percent=Decimal("15"))
    for p in "abc":
        funded_player(p, "80.00")
    server.open("g", "points-1", list("abc"))
    settle(
        server.deal,
        "g",
        1,
        [res("a", "lost", LOSER_22), res("b", "declared", WINNER), res("c", "wrong_show")],
    )
    game = server.get("games/g").json()
    assert game["deals"][0]["points"] == {"a": 22, "b": 0, "c": 80}
    # 102 won, fee 15.30, winner 86.70
    assert game["fee"] == "15.30" and game["paid_out"] == "86.70"
    assert balances("b")["winnings"] == Decimal("86.70")
    assert balances("c")["deposit"] == Decimal("0.00")
    finish("g")


def test_entry_takes_bonus_first_up_to_its_cap_and_refund_goes_back(server, settle):
    template("points-5", "points", point_value=Decimal("5.00"), fee_percent=Decimal("0"))
    funded_player("a", "500.00")
    funded_player("b", "360.00")
    bonus_granted("b", "100.00")
    server.open("g", "points-5", ["a", "b"])  # stake 400 each: at most 10 % (40) from bonus
    assert balances("b")["bonus"] == Decimal("60.00") and balances("b")["deposit"] == 0
    # b loses 22 x 5 = 110 of the 400 (40 bonus, 360 deposit): in the same proportion, 11 of
    # bonus and 99 of deposit; the refund of 290 gives back 29 of bonus and 261 of deposit.
    settle(server.deal, "g", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_22)])
    assert balances("b")["deposit"] == Decimal("261.00") and balances("b")["bonus"] == 89
    assert balances("a")["winnings"] == Decimal("110.00")
    finish("g")


def test_pool101_eliminations_rejoin_and_winner(server, settle):
    # S0: 4 players x 100 = 400 - fee; here 3 players and one rejoin: 4 entries.
    template("pool-101", "pool101", entry_fee=Decimal("100.00"), rejoin_allowed=True)
    for p in "abc":
        funded_player(p, "300.00")
    server.open("g", "pool-101", list("abc"))
    W = res("a", "declared", WINNER)
    settle(server.deal, "g", 1, [W, res("b", "lost", LOSER_80), res("c", "first_drop")])
    settle() if False else None
    r = settle(server.deal, "g", 2, [W, res("b", "wrong_show"), res("c", "lost", LOSER_22)])
    assert r.status_code == 202, r.json()
    game = server.get("games/g").json()
    scores = {p["player"]: (p["score"], p["eliminated"]) for p in game["players"]}
    assert scores == {"a": (0, False), "b": (160, True), "c": (42, False)}
    # b is out; eliminated players cannot be posted
    r = settle(server.deal, "g", 3, [W, res("b", "first_drop"), res("c", "first_drop")])
    assert r.status_code == 422 and r.json()["error"]["code"] == "player_eliminated"
    # rejoin: every remaining score below 79 -> b pays again and starts at 42 + 1
    r = server.post("games/g/rejoin", {"player": "b"})
    assert r.status_code == 200, r.json()
    assert r.json()["collected"] == "400.00"
    assert {p["player"]: p["score"] for p in r.json()["players"]}["b"] == 43
    settle(server.deal, "g", 3, [W, res("b", "wrong_show"), res("c", "wrong_show")])
    # b 123 out, c 122 out: a wins 400 - 10%
    game = server.get("games/g").json()
    assert game["status"] == "finished" and game["outcome"] == "won"
    assert game["fee"] == "40.00" and game["paid_out"] == "360.00"
    assert balances("a")["winnings"] == Decimal("360.00")
    assert balances("b")["deposit"] == Decimal("100.00")
    finish("g")


def test_pool101_rejoin_closed_when_a_score_reaches_79(server, settle):
    template("pool-101", "pool101", rejoin_allowed=True)
    for p in "abc":
        funded_player(p, "300.00")
    server.open("g", "pool-101", list("abc"))
    W = res("a", "declared", WINNER)
    settle(server.deal, "g", 1, [W, res("b", "wrong_show"), res("c", "wrong_show")])
    settle(server.deal, "g", 2, [W, res("b", "wrong_show"), res("c", "first_drop")])
    # b 160 out, c 100 (>= 79): no rejoin
    r = server.post("games/g/rejoin", {"player": "b"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "rejoin_closed"
    assert balances("b")["deposit"] == Decimal("200.00")


def test_pool201_drops_are_25_and_50(server, settle):
    template("pool-201", "pool201", entry_fee=Decimal("50.00"), fee_percent=Decimal("12.5"))
    for p in "abc":
        funded_player(p, "100.00")
    server.open("g", "pool-201", list("abc"))
    settle(
        server.deal,
        "g",
        1,
        [res("a", "declared", WINNER), res("b", "first_drop"), res("c", "middle_drop")],
    )
    assert server.get("games/g").json()["deals"][0]["points"] == {"a": 0, "b": 25, "c": 50}
    for n in (2, 3):
        settle(
            server.deal,
            "g",
            n,
            [res("a", "declared", WINNER), res("b", "wrong_show"), res("c", "wrong_show")],
        )
    game = server.get("games/g").json()  # b 185, c 210 out
    assert not game["players"][1]["eliminated"]
    settle(server.deal, "g", 4, [res("a", "declared", WINNER), res("b", "wrong_show")])
    game = server.get("games/g").json()
    # 150 prize, fee 12.5% = 18.75, winner 131.25
    assert game["status"] == "finished" and game["fee"] == "18.75"
    assert game["paid_out"] == "131.25"
    finish("g")


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("equal", ["120.00", "120.00", "120.00"]),
        ("drops", ["166.15", "83.08", "110.77"]),
        # the extra drops (3 + 1 at 100) exceed the 360 left: it falls back to drops left + 1
        ("drop_value", ["166.15", "83.08", "110.77"]),
    ],
)
def test_pool_split(server, settle, policy, expected):
    template("pool-split", "pool101", split_policy=policy, fee_percent=Decimal("10"))
    for p in "abcd":
        funded_player(p, "100.00")
    server.open("g", "pool-split", list("abcd"))
    W = res("a", "declared", WINNER)
    settle(
        server.deal,
        "g",
        1,
        [W, res("b", "middle_drop"), res("c", "first_drop"), res("d", "lost", LOSER_80)],
    )
    settle(
        server.deal,
        "g",
        2,
        [W, res("b", "first_drop"), res("c", "first_drop"), res("d", "wrong_show")],
    )
    # a 0 (5 drops left), b 60 (2), c 40 (3), d 160 out; 400 - 40 fee = 360 to share;
    # by drops: weights 6:3:4 -> 166.1538 / 83.0769 / 110.7692, largest remainder -> b and c +1p
    r = server.post("games/g/split")
    assert r.status_code == 200, r.json()
    body = r.json()
    assert body["outcome"] == "split" and body["fee"] == "40.00"
    assert [p["payout"] for p in body["players"][:3]] == expected
    finish("g")


def test_split_not_allowed_by_policy(server, settle):
    template("pool-nosplit", "pool101")
    for p in "ab":
        funded_player(p, "100.00")
    server.open("g", "pool-nosplit", ["a", "b"])
    r = server.post("games/g/split")
    assert r.status_code == 409 and r.json()["error"]["code"] == "split_not_allowed"


def test_deals_best_of_2_tie_plays_another_deal(server, settle):
    # S0: 2 players x 5 = 10 - fee to the chip leader.
    template("deals-2", "deals", entry_fee=Decimal("5.00"), deals=2, fee_percent=Decimal("10"))
    for p in "ab":
        funded_player(p, "10.00")
    server.open("g", "deals-2", ["a", "b"])
    settle(server.deal, "g", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_22)])
    settle(server.deal, "g", 2, [res("b", "declared", WINNER), res("a", "lost", LOSER_22)])
    game = server.get("games/g").json()
    assert game["status"] == "open" and [p["score"] for p in game["players"]] == [160, 160]
    # no drop in deals rummy
    r = settle(server.deal, "g", 3, [res("a", "declared", WINNER), res("b", "first_drop")])
    assert r.status_code == 422 and r.json()["error"]["code"] == "drop_not_allowed"
    settle(server.deal, "g", 3, [res("a", "declared", WINNER), res("b", "wrong_show")])
    game = server.get("games/g").json()
    assert [p["score"] for p in game["players"]] == [240, 80]
    assert game["status"] == "finished" and game["fee"] == "1.00" and game["paid_out"] == "9.00"
    assert balances("a")["winnings"] == Decimal("9.00")
    finish("g")


def test_rummy500_race_past_500(server, settle):
    template("r500", "rummy500", entry_fee=Decimal("20.00"), fee_percent=Decimal("5"))
    for p in "ab":
        funded_player(p, "20.00")
    server.open("g", "r500", ["a", "b"])
    hand_a = {
        "melded": [["AS", "KS", "QS", "JS", "10S"], ["AH", "AD", "AC"], ["KH", "KD", "KC"]],
        "laid_off": [],
        "in_hand": [],
    }
    hand_b = {"melded": [["2D", "3D", "4D"]], "laid_off": [], "in_hand": ["9C", "PJ"]}
    for n in range(1, 5):
        r = settle(
            server.deal,
            "g",
            n,
            [{"player": "a", **hand_a}, {"player": "b", **hand_b}],
            wild="",
        )
        assert r.status_code == 202, r.json()
    game = server.get("games/g").json()
    assert game["deals"][0]["points"] == {"a": 130, "b": 9 - 24}
    assert game["status"] == "finished"
    assert [p["score"] for p in game["players"]] == [520, -60]
    assert game["fee"] == "2.00" and balances("a")["winnings"] == Decimal("38.00")
    finish("g")


def test_practice_chips_same_formula_no_fee(server, settle):
    template(
        "points-chips",
        "points",
        currency=CHIPS,
        point_value=Decimal("10.00"),
        fee_percent=Decimal("10"),
    )
    for p in "ab":
        chips_grant(player_external_id=p, amount=Money("1000.00", CHIPS), reference=f"c-{p}")
    server.open("g", "points-chips", ["a", "b"])
    settle(server.deal, "g", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_22)])
    game = server.get("games/g").json()
    assert game["currency"] == "CHP" and game["fee"] == "0.00" and game["paid_out"] == "220.00"
    assert balances("a")["chips"] == Decimal("1220.00")
    assert balances("b")["chips"] == Decimal("780.00")
    finish("g")


def test_cancel_refunds_everything_to_its_bucket(server, settle):
    template("pool-c", "pool101", rejoin_allowed=True)
    for p in "abc":
        funded_player(p, "250.00")
    server.open("g", "pool-c", list("abc"))
    settle(
        server.deal,
        "g",
        1,
        [res("a", "declared", WINNER), res("b", "lost", LOSER_22), res("c", "first_drop")],
    )
    r = server.post("games/g/cancel")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    assert all(balances(p)["deposit"] == Decimal("250.00") for p in "abc")
    finish("g")
    r = server.post("games/g/cancel")
    assert r.status_code == 409 and r.json()["error"]["code"] == "game_not_open"


# ---------------------------------------------------------------- decks and caps through the API


def test_points_two_players_a_wrong_show_pays_80_points_to_the_opponent(server, settle):
    # S0: at 2 players a wrong show ends the deal; the opponent wins without showing a hand.
    template("points-2", "points", point_value=Decimal("2.00"), fee_percent=Decimal("10"))
    for p in "ab":
        funded_player(p, "200.00")
    server.open("g", "points-2", ["a", "b"])
    r = settle(server.deal, "g", 1, [res("a", "wrong_show"), res("b", "declared")])
    assert r.status_code == 202, r.json()
    game = server.get("games/g").json()
    assert game["status"] == "finished" and game["deals"][0]["points"] == {"a": 80, "b": 0}
    # 80 x 2.00 = 160, fee 16: 144 to b
    assert game["paid_out"] == "144.00" and game["fee"] == "16.00"
    assert balances("b")["winnings"] == Decimal("144.00")
    assert balances("a")["deposit"] == Decimal("40.00")
    finish("g")


def test_pool_last_player_standing_wins_the_deal_and_the_game_goes_on(server, settle):
    template("pool-101", "pool101", entry_fee=Decimal("10.00"))
    for p in "abc":
        funded_player(p, "10.00")
    server.open("g", "pool-101", list("abc"))
    out = [res("a", "wrong_show"), res("b", "middle_drop"), res("c", "declared")]
    assert settle(server.deal, "g", 1, out).status_code == 202
    game = server.get("games/g").json()
    assert [p["score"] for p in game["players"]] == [80, 40, 0] and game["status"] == "open"


def test_a_valid_losing_hand_pays_2_and_finance_sees_the_reclassification(server, settle):
    template("points-2", "points", point_value=Decimal("2.00"), fee_percent=Decimal("10"))
    for p in "abc":
        funded_player(p, "200.00")
    server.open("g", "points-2", list("abc"))
    results = [
        res("a", "declared", WINNER),
        res("b", "lost", WINNER, claimed_points=0),  # a second valid hand posted as lost
        res("c", "lost", LOSER_80, claimed_points=20),
    ]
    assert settle(server.deal, "g", 1, results).status_code == 202
    deal = server.get("games/g").json()["deals"][0]
    assert deal["points"] == {"a": 0, "b": 2, "c": 80}
    assert deal["discrepancies"] == {
        "b": {
            "claimed": 0,
            "computed": 2,
            "posted_outcome": "lost",
            "scored_outcome": "valid_second",
        },
        "c": {"claimed": 20, "computed": 80},
    }
    schema = _as_json_schema(SchemaGenerator().get_schema(request=None, public=True))
    conforms(schema, "/api/v1/games/{game_id}", "get", server.get("games/g"))  # documented
    assert balances("b")["deposit"] == Decimal("196.00")
    assert balances("a")["winnings"] == Decimal("147.60")  # (4 + 160) - 10 %
    finish("g")


def test_pool_split_by_drop_value(server, settle):
    template("pool-dv", "pool101", entry_fee=Decimal("20.00"), split_policy="drop_value")
    for p in "abcd":
        funded_player(p, "20.00")
    server.open("g", "pool-dv", list("abcd"))
    results = [
        res("a", "declared", WINNER),
        res("b", "first_drop"),
        res("c", "middle_drop"),
        res("d", "lost", LOSER_22),
    ]
    settle(server.deal, "g", 1, results)
    # a 0, b 20, c 40, d 22: 5, 4, 3 and 3 drops left; 80 - 8 fee = 72 to share.
    # a is paid 2 x 20 and b 1 x 20 for the drops they hold above the fewest; 12 left, 3 each.
    body = server.post("games/g/split").json()
    assert body["outcome"] == "split" and body["fee"] == "8.00"
    assert [p["payout"] for p in body["players"]] == ["43.00", "23.00", "3.00", "3.00"]
    assert balances("a")["winnings"] == Decimal("43.00")
    finish("g")


def test_s1_four_players_deal_from_three_decks(server, settle):
    template("points-s1", "points", rules="S1")
    for p in "abcd":
        funded_player(p, "200.00")
    server.open("g", "points-s1", list("abcd"))
    s1_winner = [
        ["10S", "JS", "QS"],
        ["4H", "5H", "6H", "7H"],
        ["2D", "2C", "2H"],
        ["9D", "9C", "9H"],
    ]
    three_nines = [
        ["9S", "9S", "9S"],
        ["2H", "3H", "4H", "5H"],
        ["6D", "7D", "8D"],
        ["JC", "QC", "KC"],
    ]
    results = [
        res("a", "declared", s1_winner),
        res("b", "lost", three_nines),
        res("c", "first_drop"),
        res("d", "middle_drop"),
    ]
    r = settle(server.deal, "g", 1, results)
    assert r.status_code == 202, r.json()
    assert server.get("games/g").json()["deals"][0]["points"] == {"a": 0, "b": 2, "c": 20, "d": 40}
    finish("g")


def test_rummy500_seats_eight_with_two_decks_from_five(server, settle):
    template("r500-8", "rummy500", seats=8, entry_fee=Decimal("20.00"))
    players = [f"p{n}" for n in range(8)]
    for p in players:
        funded_player(p, "20.00")
    assert server.open("g", "r500-8", players).status_code == 201
    results = [
        {"player": "p0", "melded": [["8C", "8D", "8H"]], "laid_off": [], "in_hand": []},
        {"player": "p1", "melded": [["6C", "7C", "8C"]], "laid_off": [], "in_hand": []},
    ]
    results += [
        {"player": p, "melded": [], "laid_off": [], "in_hand": ["8C"] if p == "p2" else ["2S"]}
        for p in players[2:]
    ]
    r = settle(server.deal, "g", 1, results, wild="")
    assert r.status_code == 422 and r.json()["error"]["code"] == "too_many_copies"
    assert "8C appears 3 times; 2 decks hold 2" in r.json()["error"]["details"]["errors"]
    results[2]["in_hand"] = ["3S"]
    for x in results[3:]:
        x["in_hand"] = [f"{players.index(x['player'])}H"]
    r = settle(server.deal, "g", 1, results, wild="")
    assert r.status_code == 202, r.json()
    assert server.get("games/g").json()["deals"][0]["points"]["p0"] == 24
