"""Rummy 500 (docs/rules.md "Rummy 500"): values, melds, hand scores, the race past 500."""

import pytest

from tournaments.rummy.rummy500 import (
    MeldError,
    card_value,
    game_result,
    meld_kind,
    meld_points,
    score_hand,
)


@pytest.mark.parametrize(
    ("card", "value"),
    [("2C", 2), ("9H", 9), ("10S", 10), ("JD", 10), ("QC", 10), ("KH", 10), ("AS", 15), ("PJ", 15)],
)
def test_card_values(card, value):
    assert card_value(card) == value


@pytest.mark.parametrize(
    ("meld", "kind"),
    [
        ("5C 6C 7C", "sequence"),
        ("AH 2H 3H", "sequence"),
        ("QH KH AH", "sequence"),
        ("9D 10D JD QD KD AD", "sequence"),
        ("4S 4H 4D", "set"),
        ("JS JH JD JC", "set"),
        ("6C 7C PJ=8C", "sequence"),
        ("6C PJ:7C 8C", "sequence"),
        ("9D PJ PJ", "set"),  # unnamed jokers: read as a set of nines
        ("9D PJ=10D PJ=JD", "sequence"),
        ("KS KH PJ", "set"),
    ],
)
def test_valid_melds(meld, kind):
    assert meld_kind(meld.split()) == kind


@pytest.mark.parametrize(
    ("meld", "why"),
    [
        ("QC KC AC 2C 3C", "not consecutive"),  # sequences cannot wrap
        ("KH AH 2H", "not consecutive"),
        ("KS KH KD KC PJ", "at most 4"),  # no fifth king for the joker to be
        ("8H 8S 8H", "two 8H"),
        ("5C 6C", "at least 3"),
        ("5C 6D 7C", "neither"),
        ("6C 7C PJ=7C", "twice"),
        ("6C 7C PJ=4C", "not consecutive"),  # a named joker keeps its identity
    ],
)
def test_invalid_melds(meld, why):
    with pytest.raises(MeldError, match=why):
        meld_kind(meld.split())


def test_meld_points_low_ace_is_one():
    assert meld_points(["AH", "2H", "3H"]) == 1 + 2 + 3
    assert meld_points(["QH", "KH", "AH"]) == 10 + 10 + 15
    assert meld_points(["AS", "AH", "AD"]) == 45
    assert meld_points(["6C", "7C", "PJ=8C"]) == 6 + 7 + 15


def test_score_hand_may_be_negative():
    assert score_hand([["5H", "6H", "7H"]], ["8H"], ["KS", "PJ"]) == 18 + 8 - 25
    assert score_hand([], [], ["AS", "KD"]) == -25
    # An ace laid off low on 2-3-4 scores 1, given the meld it extends.
    assert score_hand([], [("AH", ["2H", "3H", "4H"])], []) == 1
    assert score_hand([], [("AH", ["QH", "KH", "JH"])], []) == 15


def test_the_winner_is_past_500_alone():
    # the running totals a game keeps: tests/tournaments/test_deal_rules.py
    assert game_result({"a": 420, "b": 185}) is None  # nobody past 500
    assert game_result({"a": 500, "b": 499}) is None  # must pass 500
    assert game_result({"a": 505, "b": 530}) == "b"  # highest total wins
    assert game_result({"a": 530, "b": 530, "c": 12}) is None  # tie: another hand
    assert game_result({"a": 501, "b": 530, "c": 530}) is None
