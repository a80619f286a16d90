"""A valid hand scores 2 as a loser, never 0, whatever outcome is posted; and
``score_result`` tells the settlement when the cards overrule the posted outcome."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rummy.test_properties import groupings
from tournaments.rummy import (
    OUTCOMES,
    PRESETS,
    Outcome,
    OutcomeError,
    evaluate_declaration,
    loser_points,
    outcome_points,
    score_result,
)

S0 = PRESETS["S0"]
# S0's winners (docs/rules.md "Worked examples: hands"): valid with wild K, and with wild 10.
VALID = [["AS", "2S", "3S"], ["6C", "8C", "KH"], ["4D", "4S", "4C", "4H"], ["JD", "JH", "PJ"]]
VALID_WILD = "KD"
# S0's loser: a pure run and two sets kept, 2D 3D QC QH count: 25.
LOSER = [["10H", "JH", "QH"], ["5C", "5D", "5S"], ["AD", "AH", "AS"], ["2D", "3D", "QC", "QH"]]


def test_a_valid_hand_posted_as_lost_scores_two_not_zero():
    assert evaluate_declaration(VALID, VALID_WILD, S0).valid
    assert outcome_points("lost", S0, groups=VALID, wild_joker=VALID_WILD) == 2
    assert loser_points(VALID, VALID_WILD, S0) == 2
    house = PRESETS["S1"]  # the points follow the rule set's valid_second_points
    s1_valid = [
        ["10S", "JS", "QS"],
        ["4H", "5H", "6H", "7H"],
        ["2D", "2C", "2H"],
        ["9S", "9D", "9C"],
    ]
    assert outcome_points("lost", house, groups=s1_valid, wild_joker="4C") == 2


@pytest.mark.parametrize(
    ("posted", "groups", "effective", "points"),
    [
        # The cards bear the posted outcome out: nothing reclassified.
        ("declared", VALID, "declared", 0),
        ("valid_second", VALID, "valid_second", 2),
        ("lost", LOSER, "lost", 25),
        ("wrong_show", LOSER, "wrong_show", 80),
        ("middle_drop", LOSER, "middle_drop", 40),
        ("auto_play", LOSER, "auto_play", 80),
        # A valid hand is a second valid declaration, whatever was posted (S0: 2 points).
        # (Settlement never shows the engine the cards of a drop, timeout, leaving or auto-play:
        # those pay their fixed price, tournaments/games/formats/thirteen_card.py says why.)
        ("lost", VALID, "valid_second", 2),
        ("wrong_show", VALID, "valid_second", 2),
        ("first_drop", VALID, "valid_second", 2),
        ("middle_drop", VALID, "valid_second", 2),
        ("timeout", VALID, "valid_second", 2),
        ("left", VALID, "valid_second", 2),
        ("auto_play", VALID, "valid_second", 2),
        # A declaration the cards do not bear out is a wrong show.
        ("valid_second", LOSER, "wrong_show", 80),
        ("declared", LOSER, "wrong_show", 80),
    ],
)
def test_score_result_follows_the_cards(posted, groups, effective, points):
    wild = VALID_WILD if groups is VALID else "7S"
    scored = score_result(posted, S0, groups=groups, wild_joker=wild)
    assert (scored.posted, scored.outcome, scored.points) == (posted, effective, points)
    assert scored.reclassified is (posted != effective)
    assert outcome_points(posted, S0, groups=groups, wild_joker=wild) == points


def test_without_groups_the_posted_outcome_stands():
    for o in OUTCOMES:
        if o == "lost":
            continue
        scored = score_result(o, S0)
        assert scored.outcome == o and not scored.reclassified
    with pytest.raises(OutcomeError, match="needs the player's groups"):
        score_result("lost", S0)
    # A drop where the rules allow none is refused, valid cards or not.
    with pytest.raises(OutcomeError, match="allow no drop in a best-of-2"):
        score_result("first_drop", PRESETS["deals"], groups=VALID, wild_joker=VALID_WILD, deals=2)


def test_a_short_hand_is_never_a_valid_declaration():
    # Twelve cards of a show are not a valid hand: the posted 'lost' stands (the deal check
    # refuses a hand that is not 13 cards before it is ever scored).
    short = [g[:] for g in VALID]
    short[2] = short[2][:3]
    scored = score_result("lost", S0, groups=short, wild_joker=VALID_WILD)
    assert scored.outcome == Outcome.LOST and not scored.reclassified


@settings(max_examples=300, deadline=None)
@given(groupings(), st.sampled_from(OUTCOMES))
def test_a_valid_hand_never_scores_more_than_two(case, posted):
    rules, wild, groups = case
    if not rules.drops_allowed and posted in ("first_drop", "middle_drop"):
        return
    scored = score_result(posted, rules, groups=groups, wild_joker=wild)
    ev = evaluate_declaration(groups, wild, rules)
    assert 0 <= scored.points <= rules.cap
    if ev.valid:
        assert scored.points <= rules.valid_second_points
        assert scored.points == (0 if posted == "declared" else rules.valid_second_points)
    else:
        assert scored.outcome not in (Outcome.DECLARED, Outcome.VALID_SECOND)
