"""How many decks a table deals (docs/rules.md "Cards and decks"): S1 follows the players, printed
jokers per deck, Rummy 500 seats 2 to 8. Honest deals come from a real shuffled shoe."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.rummy import (
    PJ,
    PRESETS,
    RuleSetError,
    card_names,
    deck_count_errors,
    rules_from_spec,
    rummy500,
)

S0, S1, S3 = PRESETS["S0"], PRESETS["S1"], PRESETS["S3"]


def shoe(decks: int, jokers_per_deck: int) -> list[int]:
    return list(range(52)) * decks + [PJ] * (decks * jokers_per_deck)


def deal(rng: random.Random, cards: list[int], players: int, size: int = 13) -> list[int]:
    """Every card a deal shows: each player's hand and the wild card turned up."""
    rng.shuffle(cards)
    return cards[: players * size + 1]


def test_s1_deck_count_follows_the_players():
    assert [S1.decks_for(n) for n in range(2, 7)] == [2, 2, 3, 3, 3]
    assert [S0.decks_for(n) for n in range(2, 7)] == [2] * 5
    assert S1.most_decks == 3 and S0.most_decks == 2
    for bad in (1, 7, "4", None):
        with pytest.raises(ValueError, match="seats 2 to 6"):
            S1.decks_for(bad)


def test_printed_jokers_per_deck():
    # Default (S0, S3): 1 per deck, so 2 decks deal 2 PJ; S1: 2 per deck (2 decks + 4 PJ).
    assert (S0.printed_jokers_per_deck, S3.printed_jokers_per_deck) == (1, 1)
    assert S1.printed_jokers_per_deck == 2
    three_pj = ["PJ", "PJ", "PJ"]
    assert deck_count_errors(three_pj, S0, players=6) == ["PJ appears 3 times; 2 decks hold 2"]
    assert deck_count_errors(three_pj, S3) == ["PJ appears 3 times; 2 decks hold 2"]
    assert deck_count_errors(three_pj, S1, players=2) == []


@settings(max_examples=200, deadline=None)
@given(st.integers(4, 6), st.integers(0, 2**32 - 1))
def test_honest_s1_deals_at_four_to_six_players_pass(players, seed):
    # Dealt from a real 3-deck shoe with 6 printed jokers, as S1 plays 4 to 6 players.
    cards = deal(random.Random(seed), shoe(3, 2), players)
    assert deck_count_errors(cards, S1, players=players) == []


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 3), st.integers(0, 2**32 - 1))
def test_honest_s1_deals_at_two_or_three_players_pass(players, seed):
    cards = deal(random.Random(seed), shoe(2, 2), players)
    assert deck_count_errors(cards, S1, players=players) == []
    assert deck_count_errors(cards, S1) == []  # without the table size: the 2-deck count


def test_most_four_player_s1_deals_repeat_a_card_three_times():
    # Why the count must follow the players: held to 2 decks, honest 4-player deals fail.
    rng = random.Random(10)
    refused = sum(bool(deck_count_errors(deal(rng, shoe(3, 2), 4), S1)) for _ in range(200))
    assert refused > 150


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**32 - 1))
def test_a_card_beyond_what_the_decks_hold_fails(players, seed):
    rng = random.Random(seed)
    decks = S1.decks_for(players)
    cards = deal(rng, shoe(decks, 2), players)
    card = rng.choice(cards)
    limit = decks * (2 if card == PJ else 1)
    cards += [card] * (limit + 1 - cards.count(card))
    errors = deck_count_errors(card_names(cards), S1, players=players)
    name = card_names([card])[0]
    assert f"{name} appears {limit + 1} times; {decks} decks hold {limit}" in errors


def test_extra_deck_rules_are_checked():
    fixed_three = rules_from_spec({"preset": "S1", "decks": 3, "extra_deck_from": None})
    assert [fixed_three.decks_for(n) for n in (2, 6)] == [3, 3]
    one_then_two = rules_from_spec({"decks": 1, "extra_deck_from": 3})
    assert [one_then_two.decks_for(n) for n in (2, 3, 6)] == [1, 2, 2]
    for spec in ({"preset": "S1", "decks": 3}, {"extra_deck_from": 2}, {"extra_deck_from": 7}):
        with pytest.raises(RuleSetError) as err:
            rules_from_spec(spec)
        assert err.value.field == "extra_deck_from"


# ---------------------------------------------------------------- Rummy 500


def test_rummy500_seats_two_to_eight_with_two_decks_from_five():
    assert [rummy500.decks_for(n) for n in range(2, 9)] == [1, 1, 1, 2, 2, 2, 2]
    for bad in (1, 9, "5"):
        with pytest.raises(ValueError, match="seats 2 to 8"):
            rummy500.decks_for(bad)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 8), st.integers(0, 2**32 - 1))
def test_honest_rummy500_deals_pass_and_one_card_too_many_fails(players, seed):
    rng = random.Random(seed)
    decks = rummy500.decks_for(players)
    size = 13 if players == 2 else 7  # 13 cards each with 2 players, 7 with more
    cards = card_names(deal(rng, shoe(decks, 2), players, size))
    assert rummy500.deck_count_errors(cards, players) == []
    card = rng.choice(cards)
    limit = decks * (2 if card == "PJ" else 1)
    cards += [card] * (limit + 1 - cards.count(card))
    assert rummy500.deck_count_errors(cards, players) != []


def test_rummy500_named_jokers_count_as_jokers():
    # A joker may stand for a card the decks already hold: PJ=8C is a joker, not an 8C.
    assert rummy500.deck_count_errors(["8C", "PJ=8C", "PJ:8C"], 4) == []
    assert rummy500.deck_count_errors(["PJ=8C", "PJ", "PJ=9C"], 4) == [
        "PJ appears 3 times; 1 deck holds 2"
    ]
    assert rummy500.deck_count_errors(["8C", "8C", "PJ", "PJ", "PJ"], 5) == []
