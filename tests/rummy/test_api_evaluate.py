"""POST /api/v1/hands/evaluate over a real HTTP request cycle (DRF test client)."""

import pytest

pytestmark = pytest.mark.django_db

URL = "/api/v1/hands/evaluate"
S0_WINNER = [["AS", "2S", "3S"], ["6C", "8C", "KH"], ["4D", "4S", "4C", "4H"], ["JD", "JH", "PJ"]]


def test_valid_declaration_from_s0(games_api):
    response = games_api.post(URL, {"wild_joker": "KD", "groups": S0_WINNER}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is True and body["points"] == 0 and body["errors"] == []
    assert [g["kind"] for g in body["groups"]] == [
        "pure_sequence",
        "impure_sequence",
        "set",
        "set",
    ]


def test_invalid_group_explains_why(games_api):
    groups = [["7S", "8S", "9C", "10S"], ["AH", "2H", "3H"], ["5C", "5D", "5S"], ["JD", "QD", "KD"]]
    body = games_api.post(URL, {"wild_joker": "4H", "groups": groups}, format="json").json()
    assert body["valid"] is False
    assert body["groups"][0]["kind"] == "invalid"
    assert "9C" in body["groups"][0]["reason"]
    assert body["errors"]


def test_best_arrangement_returns_the_same_shape(games_api):
    cards = ["AS", "2S", "3S", "7H", "8H", "9H", "KC", "KD", "KS", "4C", "5C", "PJ", "QD"]
    response = games_api.post(
        URL, {"wild_joker": "5D", "cards": cards, "best": True}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert sorted(c for g in body["groups"] for c in g["cards"]) == sorted(cards)
    # wild 5D makes 5C a joker too: QD-PJ-5C is a set, 4C is the only card left over
    assert body["points"] == 4
    assert body["valid"] is False


def test_rules_preset_changes_the_points(games_api):
    # no sequence at all: S0 counts the cards (an ace is 10) = 66, S1 makes it a flat 80
    loser = [["2C", "3H", "4D"], ["5S", "6C", "7H"], ["2D", "3S", "4H"], ["5C", "6H", "AD", "9S"]]
    body = {"wild_joker": "KS", "groups": loser}
    default = games_api.post(URL, body, format="json").json()
    s1 = games_api.post(URL, {**body, "rules": "S1"}, format="json").json()
    assert (default["points"], s1["points"]) == (66, 80)


def test_s3_scores_a_loser_staged_and_a_house_may_cap_sequences(games_api):
    # S0's loser: 25 by S0, 70 by S3 (only the pure run kept: the sets count too).
    loser = [["10H", "JH", "QH"], ["5C", "5D", "5S"], ["AD", "AH", "AS"], ["2D", "3D", "QC", "QH"]]
    body = {"wild_joker": "7S", "groups": loser}
    points = [
        games_api.post(URL, {**body, "rules": rules}, format="json").json()["points"]
        for rules in ("S0", "S3", {"loser_gate": "staged"})
    ]
    assert points == [25, 70, 70]
    five = [["9H", "10H", "JH", "QH", "KH"], ["AS", "2S", "3S"], ["4D", "4S", "4C"], ["7C", "7D"]]
    show = {"wild_joker": "7H", "groups": five}
    s3 = games_api.post(URL, {**show, "rules": "S3"}, format="json").json()
    house = {"preset": "S3", "max_sequence_length": 4}
    capped = games_api.post(URL, {**show, "rules": house}, format="json").json()
    assert (s3["valid"], capped["valid"]) == (True, False)
    assert "longer than 4" in capped["groups"][0]["reason"]


@pytest.mark.parametrize(
    ("body", "field", "needle"),
    [
        ({"wild_joker": "5D", "groups": [["1X", "2S", "3S"]]}, "groups", "1X"),
        ({"wild_joker": "ZZ", "groups": S0_WINNER}, "wild_joker", "ZZ"),
        ({"wild_joker": "5D"}, "groups", "groups"),
        ({"wild_joker": "5D", "best": True}, "cards", "cards"),
        ({"wild_joker": "5D", "groups": S0_WINNER, "rules": "nope"}, "rules", "nope"),
        ({"wild_joker": "5D", "groups": S0_WINNER, "rules": {"bogus": 1}}, "rules", "bogus"),
        ({"wild_joker": "5D", "cards": ["AS", "QQ"], "best": True}, "cards", "QQ"),
    ],
)
def test_malformed_input_is_400_naming_the_field(games_api, body, field, needle):
    response = games_api.post(URL, body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert needle in str(error["details"][field])


def test_needs_the_games_scope(payments_api):
    response = payments_api.post(URL, {"wild_joker": "KD", "groups": S0_WINNER}, format="json")
    assert response.status_code == 403
