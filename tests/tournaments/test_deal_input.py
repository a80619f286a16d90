"""The one reader of a deal's body (tournaments.games.api.deal_input) against DRF's DealIn, which
declares the body in the OpenAPI document: on any body, both accept it and read the very same
data, or both refuse it with the very same details (field by field, index by index, message by
message). Pure: no database."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import exceptions

from tests.builders import LOSER_22, WINNER
from tournaments.games.api.deal_input import deal_read
from tournaments.games.api.serializers import DealIn

# Mostly valid values, so that many bodies are accepted and compared.
CARDS = st.sampled_from(
    ["AS", "10H", "T♠", "PJ", "KD"] * 8 + ["", "x" * 9, "5H\x00", 5, None, "\ud800"]
)
CARD_LISTS = st.lists(CARDS, max_size=15)
ODD = st.sampled_from([None, [], "x", {}, WINNER, LOSER_22])
GROUPS = st.lists(st.lists(CARDS, max_size=5), max_size=4) | ODD | st.lists(CARD_LISTS, max_size=15)
ANY = st.sampled_from([None, True, 0, 1, -1, 10_001, "", "declared", [], {}, 1.0])
RESULT = st.fixed_dictionaries(
    {"player": st.sampled_from(["a", "b-1"] * 5 + ["a..b", "", "x" * 65, 7, "a\n"])},
    optional={
        "outcome": st.sampled_from(["declared", "lost", "first_drop", "", "won", None, 1]),
        "groups": GROUPS,
        "melded": GROUPS,
        "laid_off": st.lists(CARDS | st.tuples(CARDS, CARD_LISTS).map(list), max_size=4) | ANY,
        "in_hand": CARD_LISTS,
        "claimed_points": st.sampled_from([None, 0, 22, -10_000, 10_001, True, "5", 2.0]),
        "extra": ANY,
    },
)
BODY = st.fixed_dictionaries(
    {
        "deal_no": st.sampled_from([1, 2, 10_000] * 3 + [0, 10_001, True, "1", 1.0, None]),
        "results": st.lists(RESULT, max_size=8) | ANY,
    },
    optional={
        "wild_joker": st.sampled_from(["KD", "", "10H", "ABCDE", None, 3]),
        "unknown": ANY,
    },
)


def _as_dealin_reads(body) -> tuple[str, object]:
    serializer = DealIn(data=body)
    if serializer.is_valid():
        return "read", json.dumps(serializer.validated_data)
    return "refused", json.dumps(serializer.errors, sort_keys=True)


def _as_deal_read_reads(body) -> tuple[str, object]:
    try:
        return "read", json.dumps(deal_read(body))
    except exceptions.ValidationError as refused:
        return "refused", json.dumps(refused.detail, sort_keys=True)


@settings(max_examples=300, deadline=None)
@given(BODY)
def test_the_reader_accepts_reads_and_refuses_as_dealin_would(body):
    assert _as_deal_read_reads(body) == _as_dealin_reads(body)


@pytest.mark.parametrize(
    "body",
    [
        None,
        [],
        "deal",
        {},
        {"deal_no": 1, "results": [None, "x", {"player": "a", "outcome": []}]},
        {"deal_no": 1, "results": [{"player": "a", "groups": [["5H"] * 3] * 5}]},
        {
            "deal_no": 1,
            "results": [{"player": "a", "laid_off": [None, ["", ["5H"]], 7, ["5H", 3]]}],
        },
        {
            "deal_no": 1,
            "results": [{"player": "a", "in_hand": ["5H"] * 60, "melded": [["5H"] * 13] * 4}],
        },
        {"deal_no": 1, "results": [{"player": "a\x00\ud800" + "x" * 70, "pionts": 3}], "x": 1},
    ],
    ids=[
        "null",
        "a-list",
        "a-string",
        "empty",
        "bad-items",
        "16-cards",
        "laid-off",
        "too-many-shown",
        "a-bad-id",
    ],
)
def test_odd_bodies_are_refused_as_dealin_would(body):
    assert _as_deal_read_reads(body)[0] == "refused"
    assert _as_deal_read_reads(body) == _as_dealin_reads(body)


def test_a_plain_deal_is_read_as_dealin_reads_it():
    body = {
        "deal_no": 1,
        "wild_joker": "KD",
        "results": [
            {"player": "a", "outcome": "declared", "groups": WINNER, "claimed_points": 0},
            {"player": "b", "outcome": "lost", "groups": LOSER_22},
            {"player": "c", "outcome": "first_drop"},
        ],
    }
    serializer = DealIn(data=body)
    assert serializer.is_valid()
    assert deal_read(body) == serializer.validated_data
