"""A Rummy 500 joker keeps the card it stands for (docs/rules.md "A joker keeps the card it stands
for")."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.rummy.cards import NAMES
from tournaments.rummy.jokers500 import JokerChanged, JokerNotFixed, fix_lay_off, fix_meld
from tournaments.rummy.rummy500 import MeldError, meld_kind, score_hand


@pytest.mark.parametrize(
    ("meld", "fixed"),
    [
        ("6C 7C PJ", "6C 7C PJ=8C"),  # laid this way, the joker is 8C
        ("PJ 6C 7C", "PJ=5C 6C 7C"),
        ("7C 6C PJ", "7C 6C PJ=5C"),  # laid going down
        ("6C PJ 8C", "6C PJ=7C 8C"),  # the only card that fits
        ("8C 6C PJ", "8C 6C PJ=7C"),
        ("QH KH PJ", "QH KH PJ=AH"),
        ("AH PJ 3H", "AH PJ=2H 3H"),
        ("5H 6H 7H PJ", "5H 6H 7H PJ=8H"),
        ("6C 7C PJ=8C", "6C 7C PJ=8C"),  # named: kept
        ("6C PJ:7C 8C", "6C PJ=7C 8C"),
        ("9D 9H PJ", "9D 9H PJ"),  # a set: its joker is a nine, no suit said
        ("9D PJ=9H PJ", "9D PJ=9H PJ"),
        ("9D PJ=10D PJ", "9D PJ=10D PJ=JD"),
    ],
)
def test_a_melded_joker_is_fixed(meld, fixed):
    assert fix_meld(meld.split()) == fixed.split()


@pytest.mark.parametrize(
    ("meld", "could_be"),
    [
        ("6C PJ 7C", ["5C", "8C"]),  # the order runs through neither
        ("9D PJ PJ", ["7D", "8D", "10D", "JD", "any 9 (a set)"]),  # a set, or which sequence?
        ("PJ 9D PJ", ["7D", "8D", "10D", "JD", "any 9 (a set)"]),
    ],
)
def test_a_joker_that_could_be_more_than_one_card_must_be_named(meld, could_be):
    with pytest.raises(JokerNotFixed) as exc:
        fix_meld(meld.split())
    assert exc.value.could_be == could_be and exc.value.meld == meld.split()
    assert "name it" in str(exc.value)


def test_four_kings_and_a_joker_is_no_meld():
    with pytest.raises(MeldError, match="at most 4"):
        fix_meld(["KS", "KH", "KD", "KC", "PJ"])


def test_a_lay_off_cannot_turn_the_joker_into_5c():
    table = [fix_meld(["6C", "7C", "PJ"])]
    with pytest.raises(JokerChanged) as exc:
        fix_lay_off("4C", ["6C", "7C", "PJ"], table)
    assert exc.value.joker == "PJ=8C" and exc.value.meld == ["6C", "7C", "PJ=8C"]
    # written in another order, or named as another card, it is still the melded 8C
    with pytest.raises(JokerChanged):
        fix_lay_off("4C", ["PJ", "6C", "7C"], table)
    with pytest.raises(JokerChanged, match="names it PJ=5C"):
        fix_lay_off("4C", ["6C", "7C", "PJ=5C"], table)
    # 5C and 9C extend 6-7-8
    assert fix_lay_off("5C", ["PJ", "6C", "7C"], table) == ("5C", ["PJ=8C", "6C", "7C"])
    assert fix_lay_off("9C", ["6C", "7C", "PJ"], table) == ("9C", ["6C", "7C", "PJ=8C"])
    # and so does 10C once 9C is on it
    assert fix_lay_off("10C", ["6C", "7C", "PJ", "9C"], table)[1] == ["6C", "7C", "PJ=8C", "9C"]


def test_a_laid_off_joker_is_fixed_like_a_melded_one():
    with pytest.raises(JokerNotFixed):
        fix_lay_off("PJ", ["5H", "6H", "7H"], [])  # 4H or 8H
    assert fix_lay_off("PJ=8H", ["5H", "6H", "7H"], []) == ("PJ=8H", ["5H", "6H", "7H"])
    assert fix_lay_off("PJ", ["QH", "KH", "AH"], []) == ("PJ=JH", ["QH", "KH", "AH"])
    assert fix_lay_off("PJ", ["9D", "9H", "9S"], []) == ("PJ", ["9D", "9H", "9S"])


def test_a_named_lay_off_scores_as_before():
    # 6C 7C PJ=8C (28) + 9C laid off on it (9): named results score as they always did.
    assert score_hand([["6C", "7C", "PJ=8C"]], [("9C", ["6C", "7C", "PJ=8C"])], []) == 37


@st.composite
def runs(draw):
    """A sequence of 3 to 8 cards of one suit laid going up, with 1 or more jokers in it."""
    n = draw(st.integers(3, 8))
    lo = draw(st.integers(1, 15 - n))  # values 1..14: an ace is 1 (low) or 14 (high)
    suit = draw(st.integers(0, 3))
    cards = [NAMES[suit * 13 + (v - 1) % 13] for v in range(lo, lo + n)]
    jokers = draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n - 2))
    laid = ["PJ" if i in jokers else c for i, c in enumerate(cards)]
    return cards, laid, lo


@given(runs(), st.booleans())
def test_a_run_laid_in_order_fixes_each_joker_to_the_card_of_its_place(run, down):
    cards, laid, _ = run
    if down:
        cards, laid = cards[::-1], laid[::-1]
    fixed = fix_meld(laid)
    assert fixed == [f"PJ={c}" if t == "PJ" else c for c, t in zip(cards, laid, strict=True)]
    assert fix_meld(fixed) == fixed  # naming what was fixed changes nothing
    meld_kind(fixed)


@given(runs(), st.sampled_from([*NAMES[:52], "PJ"]), st.randoms(use_true_random=False))
def test_a_lay_off_never_changes_a_melded_joker(run, card, rng):
    _, laid, _ = run
    melded = fix_meld(laid)
    target = laid[:]
    rng.shuffle(target)  # however the lay-off writes the meld it extends
    try:
        laid_card, extended = fix_lay_off(card, target, [melded])
    except MeldError:
        return
    assert sorted(t for t in extended if t.startswith("PJ")) == sorted(
        t for t in melded if t.startswith("PJ")
    )
    meld_kind([laid_card, *extended])  # the card extends the meld as melded


@given(runs(), st.integers(0, 51), st.randoms(use_true_random=False))
def test_a_card_is_laid_off_exactly_at_the_ends_of_the_run_as_melded(run, code, rng):
    cards, laid, lo = run
    target = laid[:]
    rng.shuffle(target)
    rank, same_suit = code % 13, code // 13 == NAMES.index(cards[0]) // 13
    values = {1, 14} if rank == 0 else {rank + 1}
    fits = same_suit and bool(values & {lo - 1, lo + len(cards)})
    try:
        fix_lay_off(NAMES[code], target, [fix_meld(laid)])
    except MeldError:
        assert not fits
    else:
        assert fits
