"""Every input is bounded by what the game allows: cards, groups,
results, string lengths, numbers, ids; and the body itself, before it is parsed. Each refusal is
a 4xx in the envelope and writes nothing."""

import json
from decimal import Decimal

import pytest

from tests.api.conftest import assert_envelope, ledger_state
from tests.builders import LOSER_22, WINNER, Server, funded_player, res, template
from tournaments import rummy

pytestmark = pytest.mark.django_db

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
DECK = [f"{r}{s}" for s in "SHDC" for r in RANKS]


def evaluate(api, body):
    return api.post("/api/v1/hands/evaluate", body, format="json")


# --- the hand evaluator: a hand is 13 cards, or 14 with the drawn card --------------------------


@pytest.mark.parametrize("count", [15, 20])
def test_best_arrangement_takes_at_most_14_cards_and_never_searches_more(api, monkeypatch, count):
    searched = []
    monkeypatch.setattr(rummy, "best_arrangement", lambda *args: searched.append(args))
    response = evaluate(api, {"wild_joker": "5D", "best": True, "cards": DECK[:count]})
    assert_envelope(response, 400, "invalid")
    assert "cards" in response.json()["error"]["details"]
    assert searched == []  # refused before the search, which grows exponentially with the cards


def test_best_arrangement_of_14_cards_is_answered(api):
    response = evaluate(api, {"wild_joker": "5D", "best": True, "cards": DECK[:14]})
    assert response.status_code == 200, response.json()


@pytest.mark.parametrize(
    "groups",
    [
        [DECK[:8], DECK[13:20]],  # 15 cards in all
        [[card] for card in DECK[:15]],  # 15 groups
        [DECK[:15]],  # one group of 15
    ],
    ids=["15 cards", "15 groups", "group of 15"],
)
def test_a_declaration_holds_at_most_14_cards(api, groups):
    response = evaluate(api, {"wild_joker": "5D", "groups": groups})
    assert "groups" in assert_envelope(response, 400, "invalid")["details"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("wild_joker", "5DDDD"), ("cards", ["10H" * 3])],
)
def test_card_tokens_are_short(api, field, value):
    body = {"wild_joker": "5D", "best": True, "cards": DECK[:13], field: value}
    assert field in assert_envelope(evaluate(api, body), 400, "invalid")["details"]


# --- deals --------------------------------------------------------------------------------------


@pytest.fixture
def points_table(db, eager):
    server = Server()
    server.api.raise_request_exception = False
    template("points-2", "points")
    for p in "ab":
        funded_player(p)
    assert server.open("g", "points-2", ["a", "b"]).status_code == 201
    return server


@pytest.mark.parametrize(
    ("results", "field"),
    [
        ([res("a", "declared", WINNER), res("b", "lost", [*LOSER_22, ["3C", "4C"]])], "results"),
        ([res(p, "first_drop") for p in "abcdefghi"], "results"),  # more than any table seats
        (
            [res("a", "declared", WINNER), res("b", "lost", LOSER_22, claimed_points=10**30)],
            "results",
        ),
        ([res("a", "declared", WINNER), res("b", "lost", [["5H" * 5], *LOSER_22[1:]])], "results"),
    ],
    ids=["15 cards in a hand", "9 results", "huge claimed points", "long card"],
)
def test_a_deal_is_bounded_by_the_table(points_table, results, field):
    before = ledger_state()
    response = points_table.deal("g", 1, results)
    assert field in assert_envelope(response, 400, "invalid")["details"]
    assert ledger_state() == before


@pytest.mark.parametrize("deal_no", [10**30, 10**5])
def test_a_deal_number_is_bounded(points_table, deal_no):
    response = points_table.deal("g", deal_no, [res("a", "declared", WINNER), res("b", "lost")])
    assert "deal_no" in assert_envelope(response, 400, "invalid")["details"]


# --- ids: a safe alphabet wherever an id enters -------------------------------------------------

BAD_IDS = [
    "a..b",
    "..",
    "x" * 65,
    "50%",
    "tab\there",
    "nul\x00",
    "emoji😀",
    "ünï",
    "a:b",
    "a b",
    "",
]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_player_ids_in_a_body_keep_to_the_alphabet(api, bad):
    template("points-2", "points")
    funded_player("a")
    before = ledger_state()
    body = {"game_id": "g1", "template": "points-2", "players": ["a", bad]}
    response = api.post("/api/v1/games", body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert "players" in assert_envelope(response, 400, "invalid")["details"]
    assert ledger_state() == before


@pytest.mark.parametrize("bad", ["a..b", "x" * 65, "50%", "emoji😀"])
def test_game_ids_in_a_body_keep_to_the_alphabet(api, bad):
    template("points-2", "points")
    body = {"game_id": bad, "template": "points-2", "players": ["a", "b"]}
    response = api.post("/api/v1/games", body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert "game_id" in assert_envelope(response, 400, "invalid")["details"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/players/" + "x" * 65 + "/wallet",
        "/api/v1/players/a%00b/wallet",
        "/api/v1/players/%00/wallet",
        "/api/v1/players/a..b/wallet",
        "/api/v1/players/%F0%9F%98%80/wallet",
        "/api/v1/games/a%00b",
        "/api/v1/games/" + "g" * 65,
    ],
)
def test_path_ids_outside_the_alphabet_are_a_404_envelope(api, path):
    assert_envelope(api.get(path), 404, "not_found")


@pytest.mark.parametrize(
    "player", ["a..b", "50%25", "nul%00", "%F0%9F%98%80", "tab%09", "x" * 65, "a%3Ab"]
)
def test_a_deposit_never_registers_a_player_outside_the_alphabet(api, player):
    body = {"amount": "10.00", "reference": "gw-1"}
    response = api.post(f"/api/v1/players/{player}/deposits", body, format="json")
    assert_envelope(response, 404, "not_found")
    assert ledger_state()[3] == 0  # no player


def test_the_service_refuses_to_register_an_id_outside_the_alphabet(db):
    from rummy_ledger.errors import DomainError
    from wallets.services.players import player_get_or_create

    with pytest.raises(DomainError, match="A-Za-z0-9"):
        player_get_or_create(external_id="a..b")


# --- the body itself: size, depth, duplicate keys, before or while parsing ----------------------


def raw_post(api, path: str, body: bytes | str, **extra):
    return api.generic("POST", path, body, content_type="application/json", **extra)


def test_deeply_nested_json_is_a_400_not_a_recursion_error(api):
    response = raw_post(api, "/api/v1/hands/evaluate", "[" * 60_000)  # under the size limit
    assert_envelope(response, 400, "parse_error")
    response = raw_post(api, "/api/v1/hands/evaluate", "[" * 100_000)
    assert_envelope(response, 413, "payload_too_large")


def test_nesting_is_bounded_below_what_python_survives(api):
    body = json.dumps({"wild_joker": "5D", "rules": json.loads("[" * 11 + "]" * 11)})
    response = raw_post(api, "/api/v1/hands/evaluate", body)
    assert "deeper" in assert_envelope(response, 400, "parse_error")["message"]


def test_brackets_inside_strings_do_not_count_as_nesting(api):
    body = json.dumps({"wild_joker": "[[[[[[[[[[[[[[[[[[[[", "groups": [["AS"]]})
    response = raw_post(api, "/api/v1/hands/evaluate", body)
    assert "wild_joker" in assert_envelope(response, 400, "invalid")["details"]


def test_a_body_over_the_limit_is_413_before_it_is_read(api, settings):
    settings.API_MAX_BODY_BYTES = 1000
    body = json.dumps({"amount": "1.00", "reference": "r" * 2000})
    response = raw_post(api, "/api/v1/players/p1/deposits", body)
    assert_envelope(response, 413, "payload_too_large")
    assert ledger_state()[0] == 0


def test_a_body_over_the_default_limit_is_413(api):
    response = raw_post(api, "/api/v1/players/p1/deposits", b" " * 3_000_000)
    assert_envelope(response, 413, "payload_too_large")


@pytest.mark.parametrize(
    "body",
    [
        '{"amount": "5.00", "amount": "6.00", "reference": "d"}',
        '{"amount": "5.00", "reference": "d", "x": {"k": 1, "k": 2}}',
    ],
)
def test_a_key_given_twice_is_refused_not_last_wins(api, body):
    response = raw_post(api, "/api/v1/players/p1/deposits", body)
    assert "twice" in assert_envelope(response, 400, "parse_error")["message"]
    assert ledger_state()[0] == 0


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_constants_are_refused(api, constant):
    body = f'{{"wild_joker": "5D", "groups": [["AS"]], "rules": {{"decks": {constant}}}}}'
    assert_envelope(raw_post(api, "/api/v1/hands/evaluate", body), 400, "parse_error")


def test_a_body_that_is_not_utf8_is_refused(api):
    assert_envelope(raw_post(api, "/api/v1/hands/evaluate", b'{"a": "\xff"}'), 400, "parse_error")


# --- formats refuse what is not theirs; Rummy 500 lay-offs name a real meld ---------------------


@pytest.fixture
def rummy500_table(db, eager):
    server = Server()
    server.api.raise_request_exception = False
    template("r500", "rummy500", entry_fee=Decimal("20.00"))
    for p in "ab":
        funded_player(p)
    assert server.open("g5", "r500", ["a", "b"]).status_code == 201
    return server


def r500(laid_off=(), **extra):
    hand = {"melded": [["2D", "3D", "4D"]], "laid_off": list(laid_off), "in_hand": ["9C"]}
    return [
        {"player": "a", **hand, **extra},
        {"player": "b", "melded": [], "laid_off": [], "in_hand": ["KC"]},
    ]


@pytest.mark.parametrize(
    ("laid_off", "status", "code"),
    [
        ([["5H", ["2H"]]], 400, "invalid"),  # too short to be a meld
        ([["5H", "2H"]], 400, "invalid"),  # the meld is not a list
        ([["5H", ["2H", "3H", "4H"], "x"]], 400, "invalid"),  # three parts
        ([["5H", [["2H"], "3H", "4H"]]], 400, "invalid"),  # a card that is a list
        ([{"card": "5H"}], 400, "invalid"),
        ([["5H", ["2C", "9D", "KS"]]], 422, "invalid_meld"),  # not a meld
        ([["9S", ["2H", "3H", "4H"]]], 422, "invalid_meld"),  # does not extend it
    ],
)
def test_a_lay_off_names_a_real_meld_it_extends(rummy500_table, laid_off, status, code):
    before = ledger_state()
    response = rummy500_table.deal("g5", 1, r500(laid_off), wild="")
    assert_envelope(response, status, code)
    assert ledger_state() == before


def test_a_good_lay_off_is_accepted(rummy500_table):
    response = rummy500_table.deal("g5", 1, r500([["5H", ["2H", "3H", "4H"]], "KH"]), wild="")
    assert response.status_code == 202, response.json()


def test_rummy500_refuses_13_card_groups(rummy500_table):
    before = ledger_state()
    results = r500(groups=[["AS", "2S", "3S"]])
    error = assert_envelope(rummy500_table.deal("g5", 1, results, wild=""), 400, "invalid_deal")
    assert error["details"]["fields"] == ["groups"]
    assert ledger_state() == before


def test_rummy500_results_with_only_groups_do_not_score_zero(rummy500_table):
    results = [res("a", "declared", WINNER), res("b", "lost", LOSER_22)]
    assert_envelope(rummy500_table.deal("g5", 1, results, wild=""), 400, "invalid_deal")


@pytest.mark.parametrize("field", ["melded", "laid_off", "in_hand"])
def test_13_card_formats_refuse_rummy500_fields(points_table, field):
    extra = {"melded": [["2D", "3D", "4D"]], "laid_off": ["5D"], "in_hand": ["9C"]}[field]
    results = [res("a", "declared", WINNER), res("b", "lost", LOSER_22, **{field: extra})]
    error = assert_envelope(points_table.deal("g", 1, results), 400, "invalid_deal")
    assert error["details"]["fields"] == [field]
