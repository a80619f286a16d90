"""Card notation and rule sets."""

import pytest

from tournaments.rummy import (
    PJ,
    PRESETS,
    CardError,
    RuleSet,
    RuleSetError,
    can_rejoin,
    card_name,
    is_eliminated,
    parse_card,
    parse_cards,
    rejoin_score,
    rules_from_spec,
)


@pytest.mark.parametrize(
    ("token", "canonical"),
    [
        ("10H", "10H"),
        ("TH", "10H"),
        ("th", "10H"),
        ("AS", "AS"),
        ("as", "AS"),
        ("A♠", "AS"),
        ("Q♥", "QH"),
        ("Q❤", "QH"),
        ("7♦", "7D"),
        ("2♣", "2C"),
        ("PJ", "PJ"),
        ("pj", "PJ"),
        (" kc ", "KC"),
    ],
)
def test_parse_and_print_canonical(token, canonical):
    assert card_name(parse_card(token)) == canonical


@pytest.mark.parametrize("token", ["1X", "1S", "11H", "ZZ", "", "10", "H10", 53, -1, None])
def test_bad_token_names_it(token):
    with pytest.raises(CardError) as err:
        parse_card(token)
    assert err.value.token == token
    assert isinstance(err.value, ValueError)
    assert repr(str(token)) in str(err.value)


def test_unknown_card_message():
    with pytest.raises(CardError, match=r"unknown card '1X'"):
        parse_cards(["AS", "1X"])


def test_parse_cards_from_string_and_codes():
    assert parse_cards("AS, 10H PJ") == [0, 22, PJ]
    assert parse_cards([0, "10h", 52]) == [0, 22, PJ]


def test_presets_exist_and_differ_where_the_seeds_do():
    assert set(PRESETS) >= {"S0", "S1", "S3", "pool101", "pool201", "deals"}
    assert PRESETS["S0"] == RuleSet()
    s1 = PRESETS["S1"]
    assert (s1.ace_points, s1.max_jokers_per_sequence, s1.four_card_life) == (1, 1, True)
    assert s1.printed_joker_cut == "printed_only" and s1.identical_triple_is_pure
    assert s1.loser_gate == "two_sequences" and s1.full_count_mode == "flat"
    assert (s1.decks, s1.extra_deck_from, s1.printed_jokers_per_deck) == (2, 4, 2)
    s3 = PRESETS["S3"]
    assert s3.max_sequence_length is None and s3.loser_gate == "staged"
    assert s3.printed_jokers_per_deck == 1 and s3.decks == 2
    p201 = PRESETS["pool201"]
    assert (p201.first_drop_points, p201.middle_drop_points, p201.pool_limit) == (25, 50, 201)
    assert PRESETS["pool101"].rejoin_below == 79 and p201.rejoin_below == 174
    # docs/rules.md "Deals rummy": best of 2 and 3 allow no drop, best of 6 does; N is 2, 3 or 6.
    deals = PRESETS["deals"]
    assert (deals.deal_counts, deals.no_drop_deals) == ((2, 3, 6), (2, 3))
    assert [deals.allows_drops(n) for n in (2, 3, 6)] == [False, False, True]


def test_rules_from_spec():
    assert rules_from_spec(None) == RuleSet()
    assert rules_from_spec("S1") is PRESETS["S1"]
    r = rules_from_spec({"preset": "pool201", "decks": 3, "rejoin_inclusive": True})
    assert (r.decks, r.pool_limit, r.rejoin_inclusive) == (3, 201, True)
    assert rules_from_spec({"ace_points": 1}).ace_points == 1
    assert rules_from_spec(r.to_dict()) == r


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("nope", "preset"),
        ({"preset": "nope"}, "preset"),
        ({"decks": 4}, "decks"),
        ({"decks": "2"}, "decks"),
        ({"ace_points": 5}, "ace_points"),
        ({"loser_gate": "sometimes"}, "loser_gate"),
        ({"printed_joker_cut": "x"}, "printed_joker_cut"),
        ({"full_count_mode": "x"}, "full_count_mode"),
        ({"max_jokers_per_sequence": 0}, "max_jokers_per_sequence"),
        ({"max_sequence_length": 2}, "max_sequence_length"),
        ({"four_card_life": 1}, "four_card_life"),
        ({"cap": -1}, "cap"),
        ({"colour": "red"}, "colour"),
        (42, "spec"),
    ],
)
def test_bad_spec_names_the_field(spec, field):
    with pytest.raises(RuleSetError) as err:
        rules_from_spec(spec)
    assert err.value.field == field
    assert field in str(err.value) or field == "spec"


def test_pool_helpers():
    r101, r201 = PRESETS["pool101"], PRESETS["pool201"]
    assert is_eliminated(101, r101) and not is_eliminated(100, r101)
    assert is_eliminated(201, r201) and not is_eliminated(200, r201)
    assert can_rejoin([78, 40], r101) and not can_rejoin([79, 40], r101)
    assert can_rejoin([173], r201) and not can_rejoin([174], r201)
    inclusive = rules_from_spec({"preset": "pool101", "rejoin_inclusive": True})
    assert can_rejoin([79], inclusive) and not can_rejoin([80], inclusive)
    assert not can_rejoin([10], PRESETS["S0"])
    assert rejoin_score([50, 78, 12]) == 79


def test_a_bad_token_in_a_one_shot_iterator_is_still_named():
    from tournaments.rummy import CardError, evaluate_declaration

    with pytest.raises(CardError, match="1X"):
        evaluate_declaration([iter(["AS", "1X", "3S"])], "5D")
