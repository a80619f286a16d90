"""Checking a declared hand and counting a loser's points from the player's own grouping."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .cards import NAMES, PJ, TOKENS, overflow_errors, parse_cards
from .groups import (
    INVALID,
    K_IMPURE,
    K_INVALID,
    K_PURE,
    KIND_NAMES,
    GroupResult,
    group_kind,
    wild_rank,
)
from .rules import DEFAULT, FLAT, PURE_ONLY, STAGED, RuleSet

HAND_SIZE = 13
Groups = Iterable[Iterable[str | int] | str]
_Source = tuple[list[tuple[int, ...]], list[int], int, RuleSet]


class Evaluation:
    """A checked hand: valid declaration or not, its points, each group, every reason.

    Validity and points are decided up front; ``groups`` and ``errors`` are built on first access
    from the parsed cards and each group's kind, so scoring a hand builds no objects and no
    sentences that nobody reads.
    """

    __slots__ = ("_errors", "_groups", "_source", "points", "valid")

    def __init__(
        self,
        valid: bool,
        points: int,
        groups: list[GroupResult] | None = None,
        errors: list[str] | None = None,
        source: _Source | None = None,
    ) -> None:
        self.valid = valid
        self.points = points
        self._groups = groups
        self._errors = errors
        self._source = source  # (cards per group, kind codes, wild rank, rules) when lazy

    @property
    def groups(self) -> list[GroupResult]:
        if self._groups is None and self._source is not None:
            cards, kinds, w, rules = self._source
            self._groups = [
                GroupResult(g, KIND_NAMES[k], None, w, rules)
                for g, k in zip(cards, kinds, strict=True)
            ]
        return self._groups

    @property
    def errors(self) -> list[str]:
        if self._errors is None and self._source is not None:
            self._errors = _errors(self.groups, self._source[3])
        return self._errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "points": self.points,
            "groups": [g.to_dict() for g in self.groups],
            "errors": list(self.errors),
        }

    # Still compares, prints and unpacks like the (valid, points, groups, errors) tuple it was.
    def _astuple(self) -> tuple[bool, int, list[GroupResult], list[str]]:
        return (self.valid, self.points, self.groups, self.errors)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._astuple())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Evaluation):
            return self._astuple() == other._astuple()
        return self._astuple() == other if isinstance(other, tuple) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # holds lists, like the tuple did

    def __repr__(self) -> str:
        return (
            f"Evaluation(valid={self.valid!r}, points={self.points!r}, "
            f"groups={self.groups!r}, errors={self.errors!r})"
        )


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


def deck_count_errors(
    cards: Iterable[str | int], rules: RuleSet = DEFAULT, players: int | None = None
) -> list[str]:
    """Cards seen more often than the decks hold (all hands of a deal plus the wild card).

    ``players`` picks the deck count where it follows the table (S1: 3 decks from 4 players);
    without it the check holds to ``rules.decks``, the smallest tables' count.
    """
    decks = rules.decks if players is None else rules.decks_for(players)
    return _overflow(parse_cards(cards), rules, decks)


def _overflow(codes: list[int], rules: RuleSet, decks: int) -> list[str]:
    counts = Counter(codes)
    pj_limit = decks * rules.printed_jokers_per_deck
    if max(counts.values(), default=0) <= decks and counts.get(PJ, 0) <= pj_limit:
        return []
    return overflow_errors(counts, decks, rules.printed_jokers_per_deck)


def _full_count(total: int, rules: RuleSet) -> int:
    return rules.cap if rules.full_count_mode == FLAT else min(total, rules.cap)


def _gate_met(pure: int, seqs: int, long_seq: bool, rules: RuleSet) -> bool:
    """May a loser keep every valid group? ``two_sequences`` asks for both lives as a show
    does; ``staged`` (S3) for a pure and a second sequence of any length, and below that keeps
    the pure sequence alone."""
    if pure == 0:
        return False
    if rules.loser_gate == PURE_ONLY:
        return True
    if rules.loser_gate == STAGED:
        return seqs >= 2
    return seqs >= 2 and (long_seq or not rules.four_card_life)


def _sequence_counts(
    groups: Sequence[Sequence[int]], kinds: list[int], rules: RuleSet
) -> tuple[int, int, bool]:
    """Pure sequences, all sequences, and (only asked under the 4-card-life rule) a long one."""
    pure = kinds.count(K_PURE)
    seqs = pure + kinds.count(K_IMPURE)
    long_seq = False
    if rules.four_card_life:
        long_seq = any(k <= K_IMPURE and len(g) >= 4 for g, k in zip(groups, kinds, strict=True))
    return pure, seqs, long_seq


def _evaluate(parsed: list[tuple[int, ...]], w: int, rules: RuleSet) -> Evaluation:
    """Validity and points need only each group's kind; the rest waits in ``Evaluation``."""
    kinds = [group_kind(g, w, rules) for g in parsed]
    source = (parsed, kinds, w, rules)
    pure, seqs, long_seq = _sequence_counts(parsed, kinds, rules)
    if (
        seqs >= 2
        and pure
        and K_INVALID not in kinds
        and (long_seq or not rules.four_card_life)
        and sum(map(len, parsed)) == HAND_SIZE
        and not _repeats_overflow(parsed, rules)
    ):
        return Evaluation(True, 0, None, [], source)
    values = card_values(w, rules.ace_points)
    if pure and _gate_met(pure, seqs, long_seq, rules):
        bad = [g for g, k in zip(parsed, kinds, strict=True) if k == K_INVALID]
        points = min(sum([values[c] for g in bad for c in g]), rules.cap)
    elif pure and rules.loser_gate == STAGED:  # one sequence, the pure one: it alone is kept
        bad = [g for g, k in zip(parsed, kinds, strict=True) if k > K_IMPURE]
        points = min(sum([values[c] for g in bad for c in g]), rules.cap)
    else:
        points = _full_count(sum([values[c] for g in parsed for c in g]), rules)
    return Evaluation(False, points, None, None, source)


def _repeats_overflow(groups: Sequence[Sequence[int]], rules: RuleSet) -> bool:
    """Does some card appear more often than the decks hold? (Only possible with a repeat.)"""
    if len(set().union(*groups)) == sum(map(len, groups)):
        return False
    return bool(_overflow([c for g in groups for c in g], rules, rules.most_decks))


def _errors(groups: list[GroupResult], rules: RuleSet) -> list[str]:
    """Every reason a grouping is not a valid declaration, in a fixed order."""
    errors: list[str] = []
    cards = [g.cards for g in groups]
    ncards = sum(map(len, cards))
    if ncards != HAND_SIZE:
        errors.append(f"a declaration needs {HAND_SIZE} cards, got {ncards}")
    flat = [c for g in cards for c in g]
    if len(set(flat)) != len(flat):
        errors.extend(_overflow(flat, rules, rules.most_decks))
    for i, g in enumerate(groups):
        if g.kind == INVALID:
            names = " ".join(map(NAMES.__getitem__, g.cards))
            errors.append(f"group {i + 1} ({names}): {g.reason}")
    kinds = [KIND_NAMES.index(g.kind) for g in groups]
    pure, seqs, long_seq = _sequence_counts(cards, kinds, rules)
    if pure == 0:
        errors.append("no pure sequence")
    if seqs < 2:
        errors.append(f"{'only one sequence' if seqs else 'no sequence'}: at least two are needed")
    if rules.four_card_life and seqs and not long_seq:
        errors.append("no sequence of 4 or more cards (first/second life rule)")
    return errors


def evaluate_declaration(
    groups: Groups, wild_joker: str | int | None, rules: RuleSet = DEFAULT
) -> Evaluation:
    """Is this grouping a valid declaration? If not, every reason and the loser's points."""
    get = TOKENS.get
    parsed = []
    for g in groups:
        if isinstance(g, str):
            codes = tuple(parse_cards(g))
        else:
            if not isinstance(g, (list, tuple)):
                g = tuple(g)  # a one-shot iterator could not be read again to name a bad token
            codes = tuple(map(get, g))
            if None in codes:
                codes = tuple(parse_cards(g))  # raises, naming the bad token
        parsed.append(codes)
    return _evaluate(parsed, wild_rank(wild_joker, rules), rules)


def loser_points(groups: Groups, wild_joker: str | int | None, rules: RuleSet = DEFAULT) -> int:
    """Points a loser pays for the hand as grouped; a valid hand is a second valid declaration
    and pays ``valid_second_points`` (2), never 0 (S0)."""
    ev = evaluate_declaration(groups, wild_joker, rules)
    return rules.valid_second_points if ev.valid else ev.points
