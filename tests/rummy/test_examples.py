"""The engine's examples per preset (S0, S1, S3), as tables: docs/rules.md's rules, case by case."""

import pytest

from tournaments.rummy import (
    PRESETS,
    Outcome,
    OutcomeError,
    best_arrangement,
    can_declare,
    classify_group,
    deck_count_errors,
    evaluate_declaration,
    loser_points,
    outcome_points,
    rules_from_spec,
)

S0, S1, S3 = PRESETS["S0"], PRESETS["S1"], PRESETS["S3"]
THREE_DECKS_S1 = rules_from_spec({"preset": "S1", "decks": 3, "extra_deck_from": None})
MAX_FOUR = rules_from_spec({"preset": "S3", "max_sequence_length": 4})


def hand(text: str) -> list[list[str]]:
    return [g.split() for g in text.split("|")]


# (group, wild joker, rules, kind, part of the reason) -- docs/rules.md "Groups" and more.
GROUPS = [
    # docs/rules.md
    ("7H 8H 9H 10H", "8S", S0, "pure_sequence", None),
    ("10H JH PJ KH", "3C", S0, "impure_sequence", None),
    ("3S 4S 8D", "8C", S0, "impure_sequence", None),
    ("AH 2H 3H", "9C", S0, "pure_sequence", None),
    ("QH KH AH", "9C", S0, "pure_sequence", None),
    ("KH AH 2H", "9C", S0, "invalid", "K-A-2 wraps"),
    ("8H 8S 8H", "3C", S0, "invalid", "two 8H in a set"),
    ("7S 8S 9C 10S", "3C", S0, "invalid", "9C is not a joker here"),
    ("AH 2H 3D", "KC", S0, "invalid", "3D is not a joker here"),
    ("3S 3H 6D", "KC", S0, "invalid", "6D is not a joker here"),
    ("PJ PJ", "3C", S0, "jokers", None),
    ("PJ 3C", "3D", S0, "jokers", None),
    # S0: pure sequences
    ("6D 7D 8D", "2C", S0, "pure_sequence", None),
    ("AC 2C 3C 4C", "9S", S0, "pure_sequence", None),
    ("5H 6H 7H 8H 9H", "2C", S0, "pure_sequence", None),
    ("8H 9H 10H", "10S", S0, "pure_sequence", None),  # wild 10H as itself
    ("KS QS JS", "JD", S0, "pure_sequence", None),
    ("4H 5H 6H 7H", "5C", S0, "pure_sequence", None),
    # S0: impure sequences
    ("6C 7C 8D 9C", "8S", S0, "impure_sequence", None),
    ("8H 9H PJ", "2C", S0, "impure_sequence", None),
    ("QD KD PJ", "2C", S0, "impure_sequence", None),
    ("AD 2D PJ", "5C", S0, "impure_sequence", None),
    # S0: sets
    ("7D 7H 7S", "2C", S0, "set", None),
    ("2D 2S 2H 2C", "9C", S0, "set", None),
    ("5S 5C KH", "KS", S0, "set", None),
    ("9D 9S 9H PJ", "2C", S0, "set", None),
    ("QC PJ QD", "2C", S0, "set", None),
    ("2C 2S AH", "AS", S0, "set", None),
    ("2S 2D PJ", "9C", S0, "set", None),
    ("6S 6H 3C", "3D", S0, "set", None),
    ("AC AD KD", "KS", S0, "set", None),
    ("2D 2S 2D 2C", "9C", S0, "invalid", "two 2D in a set"),
    ("AC AC KD", "KS", S0, "invalid", "two AC in a set"),
    ("AS AH AD AC PJ", "9C", S0, "invalid", "at most 4"),
    # S1: one joker per sequence, identical triple, PJ cut means only PJs
    ("4H 5H PJ", "9C", S1, "impure_sequence", None),
    ("2H 3H PJ 5H", "9C", S1, "impure_sequence", None),
    ("QH PJ AH", "9C", S1, "impure_sequence", None),
    ("2H PJ PJ 5H", "9C", S1, "invalid", "at most 1 joker"),
    ("9S 9S 9S", "2C", THREE_DECKS_S1, "pure_sequence", None),
    ("9S 9S 9S", "2C", S0, "invalid", "two 9S"),
    ("4S 4H 4D", "2C", S1, "set", None),
    ("4S PJ 4D", "2C", S1, "set", None),
    ("QS QD PJ", "2C", S1, "set", None),
    ("4S 4S 4D", "2C", S1, "invalid", "two 4S in a set"),
    # S3: "no longer than four" is advice (docs/rules.md "S3"): the preset takes 5 cards; a house
    # that wants the limit sets max_sequence_length. A 5-card "triplet" is not allowed.
    ("10H JH QH KH", "5C", S3, "pure_sequence", None),
    ("9H 10H JH QH KH", "5C", S3, "pure_sequence", None),
    ("9H 10H JH QH KH", "5C", MAX_FOUR, "invalid", "longer than 4"),
    ("9H 10H PJ QH KH", "5C", MAX_FOUR, "invalid", "longer than 4"),
    ("9H 10H JH QH KH", "5C", S0, "pure_sequence", None),
    ("10D PJ PJ 5C", "5S", S3, "impure_sequence", None),  # S3: 10D and two jokers
    ("10D 10S PJ PJ PJ", "5S", S3, "invalid", "at most 4"),
]


@pytest.mark.parametrize(("group", "wild", "rules", "kind", "reason"), GROUPS)
def test_group_examples(group, wild, rules, kind, reason):
    result = classify_group(group, wild, rules)
    assert result.kind == kind, result
    if reason is None:
        assert result.reason is None
    else:
        assert reason in result.reason


def test_printed_joker_cut_variants():
    # A printed joker turned up: aces are wild (S3, default) or only printed jokers (S1).
    assert classify_group("4H 5H AC", "PJ", S0).kind == "impure_sequence"
    assert classify_group("4H 5H AC", "PJ", S1).kind == "invalid"
    assert classify_group("4H 5H PJ", "PJ", S1).kind == "impure_sequence"


# (declaration, wild, rules, valid, points, a phrase expected in the errors)
DECLARATIONS = [
    # docs/rules.md worked examples (S0)
    ("AS 2S 3S | 6C 8C KH | 4D 4S 4C 4H | JD JH PJ", "KD", S0, True, 0, None),
    ("KH QH JH | 4C 5C 10S | 7H 7S 7D 7C | 2D 2C PJ", "10D", S0, True, 0, None),
    ("10H JH QH | 5C 5D 5S | AD AH AS | 2D 3D QC QH", "7S", S0, False, 25, "only one sequence"),
    # S0 valid declarations
    ("4S 5S 6S 7S | QD KD PJ | 2S 2H 2C | 9S 9H PJ", "5D", S0, True, 0, None),
    ("7H 8H 9H 10H | JC QC KC | 5D 5H 5S | AS AC PJ", "8D", S0, True, 0, None),
    # S0 invalid declarations (2 sequences + 2 sets, but one group broken)
    ("7S 8S 9C 10S | AD 2D PJ | 5S 5H 5C | 3S 3H 6D", "KH", S0, False, 73, "no pure sequence"),
    ("AH 2H 3D | 10S JS QS KS | 6S 6H 6C | 2S 2C PJ", "9D", S0, False, 15, "3D is not a joker"),
    ("9D 10D JD | AD AC AH | JS JH PJ | 2C 5H 8S 9C", "KD", S0, False, 24, "group 4"),
    ("4D 5D 6D 7D | AC 2C 3C | 4D 4C PJ | 8H 8S 8H", "KS", S0, False, 24, "two 8H"),
    ("4D 5D 6D 7D | AC 2C 3C | 4S 4C PJ | 8H 8S 8H", "KS", S0, False, 24, "two 8H in a set"),
    # Wrong card count and impossible cards
    ("4D 5D 6D 7D | AC 2C 3C | 4S 4C PJ", "KS", S0, False, 0, "13 cards"),
    ("AS 2S 3S | AS 2S 3S | AS 2S 3S | 4C 4D 4H 4S", "KD", S0, False, 0, "AS appears 3 times"),
]


@pytest.mark.parametrize(("text", "wild", "rules", "valid", "points", "error"), DECLARATIONS)
def test_declaration_examples(text, wild, rules, valid, points, error):
    ev = evaluate_declaration(hand(text), wild, rules)
    assert ev.valid is valid, ev.errors
    assert ev.points == points
    if error is None:
        assert ev.errors == []
    else:
        assert any(error in e for e in ev.errors), ev.errors


def test_invalid_8h_set_declaration_is_invalid_under_one_deck_too():
    # S0: 8H 8S 8H is never a set (here the 8s are not wild, so the show is invalid).
    ev = evaluate_declaration(hand("4D 5D 6D 7D | AC 2C 3C | 4S 4C PJ | 8H 8S 8H"), "KS", S0)
    assert not ev.valid and ev.groups[3].kind == "invalid"


def test_every_error_is_listed():
    ev = evaluate_declaration(hand("7S 8S 9C 10S | 3S 3H 6D | KD KC | 2H"), "5C", S0)
    joined = " / ".join(ev.errors)
    for phrase in (
        "13 cards",
        "9C is not a joker",
        "6D is not a joker",
        "no pure sequence",
        "no sequence",
        "group 3",
        "group 4",
    ):
        assert phrase in joined
    assert ev.points == 68  # no pure sequence: the full count (below the cap)


def test_s0_losers():
    # Player 3 of S0's 4-player example: 2C 2H 8C QD ungrouped -> 22.
    ev = evaluate_declaration(hand("KH QH JH | 4C 5C 6C | 7H 7S 7D | 2C 2H 8C QD"), "9S", S0)
    assert ev.points == 22
    # No pure sequence: the full count, capped at 80.
    assert loser_points(hand("5D 6D PJ | 9D 9C 9H | KS KH KD | QS QH QC 2C"), "3S", S0) == 80
    assert loser_points(hand("2D 3D PJ | 2C 2H 3S | 4C 4H | 5S 6S 7C 3C"), "9S", S0) == 41
    # With a pure sequence, every valid group is kept (S0's 25).
    assert (
        outcome_points(
            "lost",
            S0,
            groups=hand("10H JH QH | 5C 5D 5S | AD AH AS | 2D 3D QC QH"),
            wild_joker="7S",
        )
        == 25
    )


def test_loser_gate_two_sequences_and_flat_full_count():
    groups = hand("10H JH QH | 5C 5D 5S | AD AH AS | 2D 3D QC QH")
    assert loser_points(groups, "7S", S0) == 25
    two = rules_from_spec({"loser_gate": "two_sequences"})
    assert loser_points(groups, "7S", two) == 80  # one sequence only: everything counts (100)
    assert loser_points(hand("10H JH QH | 5C 6C PJ | AD AH AS | 2D 3D QC QH"), "7S", two) == 25
    low = hand("AH 2H 3D | 4C 4D 4S | 2S 2C 3C | 5D 6C 7S 8D")
    assert loser_points(low, "KS", S0) == 10 + 2 + 3 + 12 + 7 + 26  # 60, below the cap
    assert loser_points(low, "KS", rules_from_spec({"full_count_mode": "flat"})) == 80
    # S1: ace counts 1 and the full count is a flat 80.
    assert loser_points(hand("AH 2C 3D | 4H"), "KS", S1) == 80


def test_s3_scores_losers_staged():
    # S3's notes (lines 7-8): a pure sequence always counts as melded; a second sequence only
    # with a pure one; sets only with two sequences. S0's loser: 25 by S0, 70 by S3.
    s0_loser = hand("10H JH QH | 5C 5D 5S | AD AH AS | 2D 3D QC QH")
    assert loser_points(s0_loser, "7S", S0) == 25
    assert loser_points(s0_loser, "7S", S3) == 25 + 15 + 30  # both sets count
    assert outcome_points("lost", S3, groups=s0_loser, wild_joker="7S") == 70
    # With a second (impure) sequence the sets are kept as well.
    two_runs = hand("10H JH QH | 5C 6C PJ | AD AH AS | 2D 3D QC QH")
    assert loser_points(two_runs, "7S", S3) == 25
    # Two sequences but no pure one: nothing is kept, the full count (86 -> 80).
    no_pure = hand("10H JH PJ | 5C 6C PJ | AD AH AS | 2D 3D QC QH")
    assert loser_points(no_pure, "7S", S3) == 80
    # A lone pure sequence: kept; the rest counts, sets or not, capped at 80.
    lone = hand("2H 3H 4H | 5C 5D 5S | 2D 3D QC QH | 6S 8S 9S")
    assert loser_points(lone, "7S", S3) == 15 + 25 + 23
    assert loser_points(lone, "7S", S0) == 25 + 23
    assert loser_points(hand("2H 3H 4H | KC KD KS | QD JD QC QH KH 9C 8C"), "7S", S3) == 80


def test_best_arrangement_scores_staged():
    # No second sequence to be had: keep the pure run worth most, every other card counts.
    cards = "10H JH QH 5C 5D 5S AH AS KD 2D 4C QC QH"
    assert best_arrangement(cards, "7S", S0).points == 56  # sets kept
    staged = best_arrangement(cards, "7S", S3)
    assert staged.points == 101 - 30
    assert staged.groups[0].kind == "pure_sequence"
    # A second sequence is worth breaking a set for when the sets then count.
    cards = "10H JH QH 5C 5D 5S AD AH AS 2D 3D QC QH"
    assert best_arrangement(cards, "7S", S3).points == 40  # AD 2D 3D, so 5C 5D 5S is kept


def test_s3_takes_a_five_card_sequence():
    # S3's "no longer than four" (line 47) is advice, not a rule of its preset.
    show = hand("9H 10H JH QH KH | AS 2S 3S | 4D 4S 4C | 7C 7D")
    assert evaluate_declaration(show, "7H", S3).valid
    assert not evaluate_declaration(show, "7H", MAX_FOUR).valid
    assert best_arrangement([c for g in show for c in g], "7H", S3).valid


def test_s1_first_and_second_life():
    # a. both pure: one needs 4 cards. b. pure + impure: one of them needs 4 cards.
    ok = [
        "10S JS QS | 4H 5H 6H 7H | 2D 2C 2H | 9S 9D 9C",
        "8S 9S 10S | JH QH KH PJ | 2D 2C 2H | 9H 9D 9C",
        "8S 9S 10S JS | QH PJ AH | 2D 2C 2H | 9H 9D 9C",
    ]
    for text in ok:
        ev = evaluate_declaration(hand(text), "4C", S1)
        assert ev.valid, (text, ev.errors)
    short = hand("10S JS QS | 4H 5H 6H | 2D 2C 2H | 9S 9D 9C 9H")
    ev = evaluate_declaration(short, "4C", S1)
    assert not ev.valid and any("4 or more" in e for e in ev.errors)
    assert evaluate_declaration(short, "4C", S0).valid
    # Loser without first and second life: all 13 cards count, a flat 80.
    assert ev.points == 80


def test_s1_identical_triple_is_a_pure_sequence_with_three_decks():
    text = "9S 9S 9S | 4H 5H PJ 7H | 2D 2C 2H | JS JD JC"
    assert evaluate_declaration(hand(text), "3C", THREE_DECKS_S1).valid
    # S1 deals 3 decks from 4 players, so one hand alone may hold three 9S; the deal's deck
    # check, which knows the table, refuses them at 2 or 3 players.
    assert evaluate_declaration(hand(text), "3C", S1).valid
    assert deck_count_errors(hand(text)[0], S1, players=3) == ["9S appears 3 times; 2 decks hold 2"]
    assert deck_count_errors(hand(text)[0], S1, players=4) == []
    assert not evaluate_declaration(hand(text), "3C", rules_from_spec({"preset": "S1"} | TWO)).valid


TWO = {"decks": 2, "extra_deck_from": None}


def test_three_of_one_wild_card_are_an_identical_triple():
    # S1 deals 3 decks from 4 players: one hand may hold all three 5S while 5s are wild. As
    # themselves they are a pure sequence, though each is a joker: the search must see it too.
    show = "5S 5S 5S | AH 2H 3H 4H | 9D 9C 9H | JS JD PJ"
    assert evaluate_declaration(hand(show), "5D", S1).valid
    assert best_arrangement(show.replace("|", ""), "5D", S1).valid
    assert can_declare("5S 5S 5S AH 2H 3H 4H", "5D", S1)
    staged = rules_from_spec({"preset": "S1", "loser_gate": "staged"})
    best = best_arrangement("AS 5S 5S 5S", "5D", staged)  # the triple kept, AS counts 1
    assert best.points == 1 and best.groups[0].cards == (4, 4, 4)


def test_s3_show_with_spare_joker_kept_apart():
    # S3: a 5-card "triplet" is invalid, keep the extra joker apart as its own group.
    text = "10H JH QH KH | AS 2S 3S 4S | 10D PJ 6C | 6S 6H"
    assert evaluate_declaration(hand(text), "6D", S3).valid
    bad = "10H JH QH KH | AS 2S 3S 4S | 10D 10S PJ 6C 6S"
    assert not evaluate_declaration(hand(bad), "6D", S3).valid


def test_outcomes():
    assert outcome_points(Outcome.DECLARED) == 0
    assert outcome_points("valid_second") == 2
    assert outcome_points("wrong_show") == 80
    assert outcome_points("first_drop") == 20
    assert outcome_points("middle_drop") == 40
    assert outcome_points("timeout") == 40  # missing 3 turns in a row
    assert outcome_points("left") == 40  # leaving after picking a card
    assert outcome_points("auto_play") == 80
    pool201 = PRESETS["pool201"]
    assert [outcome_points(o, pool201) for o in ("first_drop", "middle_drop", "timeout")] == [
        25,
        50,
        50,
    ]
    with pytest.raises(OutcomeError):
        outcome_points("first_drop", PRESETS["deals"], deals=3)
    assert outcome_points("first_drop", PRESETS["deals"], deals=6) == 20
    with pytest.raises(OutcomeError):
        outcome_points("lost")
    with pytest.raises(OutcomeError):
        outcome_points("won_big")


def test_s0_cash_example_points_add_up():
    # 4 players, 2 a point, losers 20 (first drop), 40 (middle drop), 50 -> 2 x 110 = 220.
    points = [outcome_points("first_drop"), outcome_points("middle_drop"), 50]
    assert 2 * sum(points) == 220


def test_deck_counts():
    # S0 (default): 1 printed joker per deck, so two decks hold 2 PJ.
    assert deck_count_errors(["AS", "AS", "PJ", "PJ"], S0) == []
    assert deck_count_errors(["PJ", "PJ", "PJ"], S0) == ["PJ appears 3 times; 2 decks hold 2"]
    errors = deck_count_errors(["AS", "AS", "AS", "PJ"] * 1 + ["PJ"] * 4, S0)
    assert any("AS appears 3 times" in e for e in errors)
    assert any("PJ appears 5 times" in e for e in errors)
    # S1: 2 printed jokers per deck; 2 decks + 4 PJ up to 3 players, 3 decks + 6 PJ from 4.
    assert deck_count_errors(["PJ"] * 4, S1) == []
    assert deck_count_errors(["PJ"] * 5, S1, players=3) == ["PJ appears 5 times; 2 decks hold 4"]
    assert deck_count_errors(["PJ"] * 6 + ["KH"] * 3, S1, players=4) == []
    assert deck_count_errors(["PJ"] * 7, S1, players=6) == ["PJ appears 7 times; 3 decks hold 6"]
    one_deck = rules_from_spec({"decks": 1, "printed_jokers_per_deck": 1})
    assert deck_count_errors(["KH", "KH"], one_deck) == ["KH appears 2 times; 1 deck holds 1"]


@pytest.mark.parametrize(
    ("text", "wild", "rules", "valid", "points"),
    [
        ("AS 2S 3S 6C 8C KH 4D 4S 4C 4H JD JH PJ", "KD", S0, True, 0),
        ("KH QH JH 4C 5C 10S 7H 7S 7D 7C 2D 2C PJ", "10D", S0, True, 0),
        ("10H JH QH 5C 5D 5S AD AH AS 2D 3D QC QH", "7S", S0, False, 25),
        ("10H JH QH 5C 5D 5S AD AH AS 2D 3D QC QH", "7S", S3, False, 40),  # AD 2D 3D
        ("2C 2H 8C QD KH QH JH 4C 5C 6C 7H 7S 7D", "9S", S0, False, 22),
    ],
)
def test_best_arrangement_on_worked_examples(text, wild, rules, valid, points):
    ev = best_arrangement(text.split(), wild, rules)
    assert (ev.valid, ev.points) == (valid, points), ev.to_dict()
    again = evaluate_declaration([g.cards for g in ev.groups], wild, rules)
    assert (again.valid, again.points) == (ev.valid, ev.points)
