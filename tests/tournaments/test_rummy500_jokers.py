"""A Rummy 500 joker through the format (pure, no database): a melded joker keeps its
card across the deal's lay-offs, and the refusal names the meld and the joker."""

import pytest

from tests.tournaments.test_deal_rules import check
from tournaments.errors import DealRejected


def r500(player: str, melded=(), laid_off=(), in_hand=()) -> dict:
    return {
        "player": player,
        "melded": [list(m) for m in melded],
        "laid_off": list(laid_off),
        "in_hand": list(in_hand),
    }


def refusal(results: list[dict]) -> DealRejected:
    with pytest.raises(DealRejected) as exc:
        check(results, "rummy500", wild="", seats=4)
    return exc.value


def test_a_joker_turned_into_5c_is_refused_naming_the_meld_and_the_joker():
    # a melds 6C 7C PJ (the joker is 8C); b may not lay 4C off on it as if it were 5C
    results = [r500("a", [["6C", "7C", "PJ"]]), r500("b", laid_off=[["4C", ["6C", "7C", "PJ"]]])]
    error = refusal(results)
    assert error.code == "joker_fixed" and error.status == 422
    assert error.details["joker"] == "PJ=8C" and error.details["meld"] == ["6C", "7C", "PJ"]
    assert "4C cannot be laid off on 6C 7C PJ" in error.message and "PJ=8C" in error.message


def test_a_joker_that_could_be_more_than_one_card_is_refused_until_named():
    error = refusal([r500("a", [["6C", "PJ", "7C"]]), r500("b", in_hand=["2S"])])
    assert error.code == "joker_not_named" and error.details["could_be"] == ["5C", "8C"]
    assert error.details["meld"] == ["6C", "PJ", "7C"] and error.details["place"] == 2
    error = refusal([r500("a", [["9D", "PJ", "PJ"]]), r500("b", in_hand=["2S"])])
    assert error.code == "joker_not_named"


def test_results_that_name_their_jokers_keep_working_and_fixed_jokers_are_stored_named():
    named = [
        r500("a", [["6C", "7C", "PJ=8C"]], in_hand=["2S"]),
        r500("b", laid_off=[["9C", ["6C", "7C", "PJ=8C"]]], in_hand=["KD"]),
    ]
    _, deal = check(named, "rummy500", wild="", seats=4)
    assert deal.score.points == {"a": 6 + 7 + 15 - 2, "b": 9 - 10}
    unnamed = [
        r500("a", [["6C", "7C", "PJ"]], in_hand=["2S"]),
        r500("b", laid_off=[["9C", ["6C", "7C", "PJ"]]], in_hand=["KD"]),
    ]
    _, same = check(unnamed, "rummy500", wild="", seats=4)
    assert same.score == deal.score and same.results == deal.results
    assert same.results[0]["melded"] == [["6C", "7C", "PJ=8C"]]
    assert same.results[1]["laid_off"] == [["9C", ["6C", "7C", "PJ=8C"]]]
