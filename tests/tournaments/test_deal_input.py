"""The flat reading of a deal's body (tournaments.games.api.deal_input) against DRF's DealIn: on any
body it accepts, DealIn accepts it too and reads the very same data; what it does not accept,
DealIn judges (and words the 400). Pure: no database."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import LOSER_22, WINNER
from tournaments.games.api.deal_input import deal_in
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


@settings(max_examples=100, deadline=None)
@given(BODY)
def test_what_the_flat_reading_accepts_dealin_reads_the_same(body):
    fast = deal_in(body)
    if fast is not None:
        serializer = DealIn(data=body)
        assert serializer.is_valid(), serializer.errors
        assert json.dumps(fast) == json.dumps(serializer.validated_data)


def test_a_plain_deal_is_read_without_dealin():
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
    assert deal_in(body) == serializer.validated_data
