"""Checking a declared hand and counting a loser's points from the player's own grouping."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from .cards import NAMES, PJ, TOKENS, parse_cards
from .groups import (
    K_IMPURE,
    K_INVALID,
    K_PURE,
    KIND_NAMES,
    GroupResult,
    classify_codes,
    wild_rank,
)
from .rules import DEFAULT, FLAT, TWO_SEQUENCES, RuleSet

HAND_SIZE = 13
Groups = Iterable[Iterable[str | int] | str]


class Evaluation(NamedTuple):
    """A checked hand: valid declaration or not, its points, each group, every reason."""

    valid: bool
    points: int
    groups: list[GroupResult]
    errors: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "points": self.points,
            "groups": [g.to_dict() for g in self.groups],
            "errors": list(self.errors),
        }


_VALUES: dict[tuple[int, int], tuple[int, ...]] = {}


def card_values(w: int, ace_points: int) -> tuple[int, ...]:
    """Points of each card code when it counts against a player (jokers 0)."""
    key = (w, ace_points)
    table = _VALUES.get(key)
    if table is None:
        vals = []
        for c in range(52):
            r = c % 13 + 1
            vals.append(0 if r == w else ace_points if r == 1 else min(r, 10))
        table = _VALUES[key] = (*vals, 0)
    return table


def deck_count_errors(cards: Iterable[str | int], rules: RuleSet = DEFAULT) -> list[str]:
    """Cards seen more often than the decks hold (all hands of a deal plus the wild card)."""
    return _overflow(parse_cards(cards), rules)


def _overflow(codes: list[int], rules: RuleSet) -> list[str]:
    counts: dict[int, int] = {}
    for c in codes:
        counts[c] = counts.get(c, 0) + 1
    pj_limit = rules.decks * rules.printed_jokers_per_deck
    if max(counts.values(), default=0) <= rules.decks and counts.get(PJ, 0) <= pj_limit:
        return []
    errors = []
    for code, k in sorted(counts.items()):
        limit = rules.decks * rules.printed_jokers_per_deck if code == PJ else rules.decks
        if k > limit:
            errors.append(
                f"{NAMES[code]} appears {k} times; {rules.decks} deck"
                f"{'s' if rules.decks > 1 else ''} hold {limit}"
            )
    return errors


def _full_count(total: int, rules: RuleSet) -> int:
    return rules.cap if rules.full_count_mode == FLAT else min(total, rules.cap)


def _gate_met(pure: int, seqs: int, long_seq: bool, rules: RuleSet) -> bool:
    if pure == 0:
        return False
    if rules.loser_gate == TWO_SEQUENCES:
        return seqs >= 2 and (long_seq or not rules.four_card_life)
    return True


def _evaluate(parsed: Sequence[Sequence[int]], w: int, rules: RuleSet) -> Evaluation:
    values = card_values(w, rules.ace_points)
    results = []
    errors: list[str] = []
    bad_errors: list[str] = []
    pure = seqs = 0
    long_seq = False
    total = loose = ncards = 0
    for i, g in enumerate(parsed):
        kind, reason = classify_codes(g, w, rules)
        results.append(GroupResult(tuple(g), KIND_NAMES[kind], reason))
        ncards += len(g)
        pts = sum(map(values.__getitem__, g))
        total += pts
        if kind == K_INVALID:
            loose += pts
            bad_errors.append(f"group {i + 1} ({' '.join(map(NAMES.__getitem__, g))}): {reason}")
        elif kind <= K_IMPURE:
            seqs += 1
            if kind == K_PURE:
                pure += 1
            if len(g) >= 4:
                long_seq = True
    if ncards != HAND_SIZE:
        errors.append(f"a declaration needs {HAND_SIZE} cards, got {ncards}")
    flat = [c for g in parsed for c in g]
    if len(set(flat)) != len(flat):
        errors.extend(_overflow(flat, rules))
    errors.extend(bad_errors)
    if pure == 0:
        errors.append("no pure sequence")
    if seqs < 2:
        errors.append(f"{'only one sequence' if seqs else 'no sequence'}: at least two are needed")
    if rules.four_card_life and seqs and not long_seq:
        errors.append("no sequence of 4 or more cards (first/second life rule)")
    if not errors:
        return Evaluation(True, 0, results, errors)
    if _gate_met(pure, seqs, long_seq, rules):
        points = min(loose, rules.cap)
    else:
        points = _full_count(total, rules)
    return Evaluation(False, points, results, errors)


def evaluate_declaration(
    groups: Groups, wild_joker: str | int | None, rules: RuleSet = DEFAULT
) -> Evaluation:
    """Is this grouping a valid declaration? If not, every reason and the loser's points."""
    get = TOKENS.get
    parsed = []
    for g in groups:
        codes = [get(t) for t in g] if not isinstance(g, str) else parse_cards(g)
        if None in codes:
            codes = parse_cards(g)
        parsed.append(codes)
    return _evaluate(parsed, wild_rank(wild_joker, rules), rules)


def loser_points(groups: Groups, wild_joker: str | int | None, rules: RuleSet = DEFAULT) -> int:
    """Points a loser pays for the hand as grouped (0 if it is in fact a valid hand)."""
    return evaluate_declaration(groups, wild_joker, rules).points
