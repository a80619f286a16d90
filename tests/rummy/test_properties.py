"""Property tests against a deliberately simple, independent oracle and brute force."""

import random
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.rummy import (
    PJ,
    PRESETS,
    best_arrangement,
    can_declare,
    evaluate_declaration,
    rules_from_spec,
)
from tournaments.rummy.cards import NAMES
from tournaments.rummy.groups import wild_rank

RULESETS = [
    PRESETS["S0"],
    PRESETS["S1"],
    PRESETS["S3"],
    rules_from_spec({"loser_gate": "two_sequences"}),
    rules_from_spec({"preset": "S1", "decks": 3, "extra_deck_from": None}),
    rules_from_spec({"max_jokers_per_sequence": 2, "four_card_life": True}),
    rules_from_spec({"preset": "S3", "four_card_life": True, "max_sequence_length": 4}),
    rules_from_spec({"preset": "S1", "loser_gate": "staged"}),
]
rulesets = st.sampled_from(RULESETS)
wilds = st.sampled_from([*NAMES])  # any card, or PJ, turned up


# ---------------------------------------------------------------- the oracle


def o_joker(c, w):
    return c == PJ or c % 13 + 1 == w


def o_run(ranks, n, maxlen):
    """Brute force: is there a window of n ranks (ace low or high) holding these ranks?"""
    if n > min(13, maxlen) or len(set(ranks)) != len(ranks):
        return False
    for ace_high in (False, True):
        rs = [14 if (r == 1 and ace_high) else r for r in ranks]
        for a in range(2 if ace_high else 1, (14 if ace_high else 13) - n + 2):
            if all(a <= r < a + n for r in rs):
                return True
    return False


def o_kind(cards, w, rules):
    n = len(cards)
    maxlen = rules.max_sequence_length or 13
    suits = {c // 13 for c in cards if c != PJ}
    if PJ not in cards and len(suits) == 1 and n >= 3:
        if o_run([c % 13 + 1 for c in cards], n, maxlen):
            return "pure"
        if n == 3 and rules.identical_triple_is_pure and len(set(cards)) == 1:
            return "pure"
    naturals = [c for c in cards if not o_joker(c, w)]
    if not naturals:
        return "jokers"
    if n < 3:
        return "invalid"
    wild_cards = [c for c in cards if c != PJ and c % 13 + 1 == w]
    best = None
    for k in range(len(wild_cards) + 1):
        for as_self in combinations(wild_cards, k):
            nat = naturals + list(as_self)
            subs = n - len(nat)
            one_suit = len({c // 13 for c in nat}) == 1
            fits = one_suit and o_run([c % 13 + 1 for c in nat], n, maxlen)
            limit = rules.max_jokers_per_sequence
            if fits and (limit is None or subs <= limit):
                best = subs if best is None else min(best, subs)
    if best is not None:
        return "pure" if best == 0 else "impure"
    one_rank = len({c % 13 for c in naturals}) == 1
    if n <= 4 and one_rank and len({c // 13 for c in naturals}) == len(naturals):
        return "set"
    return "invalid"


def o_valid(groups, w, rules):
    flat = [c for g in groups for c in g]
    if len(flat) != 13:
        return False
    for c in set(flat):
        limit = rules.most_decks * (rules.printed_jokers_per_deck if c == PJ else 1)
        if flat.count(c) > limit:
            return False
    kinds = [o_kind(g, w, rules) for g in groups]
    if "invalid" in kinds:
        return False
    seqs = [g for g, k in zip(groups, kinds, strict=True) if k in ("pure", "impure")]
    if "pure" not in kinds or len(seqs) < 2:
        return False
    return not rules.four_card_life or any(len(g) >= 4 for g in seqs)


# ---------------------------------------------------------------- generators


@st.composite
def groupings(draw, rules=None):
    """13 cards from the decks, split into 2-6 groups; about half are built to be valid."""
    rules = rules or draw(rulesets)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = random.Random(seed)
    decks = rules.most_decks  # one hand alone may hold what the largest table is dealt
    pool = list(range(52)) * decks + [PJ] * (decks * rules.printed_jokers_per_deck)
    if draw(st.booleans()):
        cards = rng.sample(pool, 13)
    else:  # runs and sets near each other so that many groups are (almost) valid
        suit = rng.randrange(4)
        lo = rng.randrange(9)
        cards = [suit * 13 + lo + i for i in range(rng.choice((3, 4, 5)))]
        lo2 = rng.randrange(10)
        s2 = rng.randrange(4)
        cards += [s2 * 13 + lo2, s2 * 13 + lo2 + 1, rng.choice([PJ, s2 * 13 + lo2 + 2])]
        while len(cards) < 13:
            r = rng.randrange(13)
            cards += [s * 13 + r for s in rng.sample(range(4), rng.choice((3, 4)))]
        cards = [*cards[:12], rng.choice([PJ, *cards[:3]])]
    if draw(st.booleans()):
        return rules, draw(wilds), built_show(rng, draw(st.booleans()))
    cut = sorted(rng.sample(range(1, 13), rng.randrange(1, 6)))
    groups = [cards[a:b] for a, b in zip([0, *cut], [*cut, 13], strict=True)]
    if draw(st.booleans()):  # re-split at natural boundaries: first 3-5, then threes
        groups = [cards[:3], cards[3:6], cards[6:9], cards[9:]]
    return rules, draw(wilds), groups


def built_show(rng, mutate):
    """Groups laid out like a show (runs, a joker run, sets), sometimes with one card swapped."""
    shapes = rng.choice([(4, 3, 3, 3), (3, 3, 3, 4), (5, 4, 4), (3, 4, 3, 3), (3, 3, 3, 3, 1)])
    groups = []
    for i, size in enumerate(shapes):
        kind = rng.choice(["run", "run", "set"]) if i > 1 else "run"
        if size < 3:
            groups.append([PJ])
        elif kind == "run" or size > 4:
            suit, lo = rng.randrange(4), rng.randrange(14 - size)
            run = [suit * 13 + (lo + j) % 13 for j in range(size)]
            if lo + size == 14:  # ... Q K A
                run[-1] = suit * 13
            if i == 1 or rng.random() < 0.3:
                run[rng.randrange(size)] = PJ
            groups.append(run)
        else:
            r = rng.randrange(13)
            group = [s * 13 + r for s in rng.sample(range(4), size)]
            if rng.random() < 0.3:
                group[0] = PJ
            groups.append(group)
    if mutate:
        g = rng.choice(groups)
        g[rng.randrange(len(g))] = rng.randrange(53)
    rng.shuffle(groups)
    return groups


# ---------------------------------------------------------------- properties


@settings(max_examples=400, deadline=None)
@given(groupings())
def test_engine_agrees_with_oracle_and_respects_the_cap(case):
    rules, wild, groups = case
    w = wild_rank(wild, rules)
    ev = evaluate_declaration(groups, wild, rules)
    assert ev.valid == o_valid(groups, w, rules), ev.to_dict()
    for g, res in zip(groups, ev.groups, strict=True):
        expected = o_kind(g, w, rules)
        got = {"pure_sequence": "pure", "impure_sequence": "impure"}.get(res.kind, res.kind)
        assert got == expected, (res, expected)
    assert 0 <= ev.points <= rules.cap
    assert (ev.points == 0) if ev.valid else ev.errors


@settings(max_examples=200, deadline=None)
@given(groupings(), st.integers(0, 2**32 - 1))
def test_order_of_cards_and_groups_never_matters(case, seed):
    rules, wild, groups = case
    rng = random.Random(seed)
    shuffled = [rng.sample(g, len(g)) for g in groups]
    rng.shuffle(shuffled)
    a = evaluate_declaration(groups, wild, rules)
    b = evaluate_declaration(shuffled, wild, rules)
    assert (a.valid, a.points) == (b.valid, b.points)
    assert sorted(g.kind for g in a.groups) == sorted(g.kind for g in b.groups)
    flat = [c for g in groups for c in g]
    x = best_arrangement(flat, wild, rules)
    y = best_arrangement(rng.sample(flat, len(flat)), wild, rules)
    assert (x.valid, x.points) == (y.valid, y.points)


@settings(max_examples=200, deadline=None)
@given(groupings())
def test_best_arrangement_never_worse_than_any_grouping(case):
    rules, wild, groups = case
    flat = [c for g in groups for c in g]
    given_ev = evaluate_declaration(groups, wild, rules)
    best = best_arrangement(flat, wild, rules)
    assert best.points <= given_ev.points
    if given_ev.valid:
        assert best.valid and best.points == 0
    again = evaluate_declaration([g.cards for g in best.groups], wild, rules)
    assert (again.valid, again.points) == (best.valid, best.points)
    assert sorted(c for g in best.groups for c in g.cards) == sorted(flat)


# ---------------------------------------------------------------- brute force on small hands


def partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in partitions(rest):
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1 :]]
        yield [[first], *part]


def brute(cards, wild, rules):
    """Fewest points over every grouping, and whether any grouping is a show."""
    w = wild_rank(wild, rules)
    best_points, show = None, False
    for part in partitions(list(cards)):
        ev = evaluate_declaration(part, wild, rules)
        best_points = ev.points if best_points is None else min(best_points, ev.points)
        kinds = [o_kind(g, w, rules) for g in part]
        seqs = [g for g, k in zip(part, kinds, strict=True) if k in ("pure", "impure")]
        if (
            "invalid" not in kinds
            and "pure" in kinds
            and len(seqs) >= 2
            and (not rules.four_card_life or any(len(g) >= 4 for g in seqs))
        ):
            show = True
    return best_points, show


# Few suits and ranks so that small hands are dense with melds; wild 5 and the PJ are jokers.
SMALL_POOL = [s * 13 + r for s in (0, 1, 2) for r in (0, 1, 2, 3, 4, 11, 12)] + [PJ]


@st.composite
def small_hands(draw):
    rules = draw(rulesets)
    cards = draw(st.lists(st.sampled_from(SMALL_POOL), min_size=3, max_size=8))
    limit = {c: rules.most_decks * (rules.printed_jokers_per_deck if c == PJ else 1) for c in cards}
    cards = [c for i, c in enumerate(cards) if cards[: i + 1].count(c) <= limit[c]]
    wild = draw(st.sampled_from(["5D", "AS", "PJ", "9C", None]))
    return rules, wild, cards


@settings(max_examples=150, deadline=None)
@given(small_hands())
def test_best_arrangement_equals_brute_force(case):
    rules, wild, cards = case
    points, show = brute(cards, wild, rules)
    assert best_arrangement(cards, wild, rules).points == points
    assert can_declare(cards, wild, rules) == show
