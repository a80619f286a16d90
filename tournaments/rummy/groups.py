"""Classifying one group of cards: pure/impure sequence, set, joker group, or invalid (and why).

The fast path works on card and rank bitmasks; the human reason is only worded when asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .cards import NAMES, NO_WILD, PJ, RANK_NAMES, CardError, parse_card, parse_cards
from .rules import ACES_WILD, DEFAULT, RuleSet

PURE_SEQUENCE = "pure_sequence"
IMPURE_SEQUENCE = "impure_sequence"
SET = "set"
JOKERS = "jokers"
INVALID = "invalid"

# Internal kind codes (ints keep the hot path cheap).
K_PURE, K_IMPURE, K_SET, K_JOKERS, K_INVALID = range(5)
KIND_NAMES = (PURE_SEQUENCE, IMPURE_SEQUENCE, SET, JOKERS, INVALID)

# Rank bitmasks use bit r for rank r; an ace counts low (bit 1) or high (bit 14).
ACE_LOW, ACE_HIGH = 1 << 1, 1 << 14


class GroupResult:
    """One classified group; ``reason`` says why when ``kind`` is invalid.

    The reason is worded on first access: checking a hand only needs the kind, and most callers
    (points, validity) never read the words.
    """

    __slots__ = ("_reason", "_rules", "_wild", "cards", "kind")

    def __init__(
        self,
        cards: tuple[int, ...],
        kind: str,
        reason: str | None = None,
        wild: int = NO_WILD,
        rules: RuleSet | None = None,
    ) -> None:
        self.cards = cards
        self.kind = kind
        self._reason = reason
        self._wild = wild
        self._rules = rules  # set: word the reason from (cards, wild, rules) when asked

    @property
    def reason(self) -> str | None:
        if self._rules is not None:
            if self.kind == INVALID:
                self._reason = invalid_reason(self.cards, self._wild, self._rules)
            self._rules = None
        return self._reason

    def to_dict(self) -> dict[str, Any]:
        return {"cards": [NAMES[c] for c in self.cards], "kind": self.kind, "reason": self.reason}

    # Still compares, hashes, prints and unpacks like the (cards, kind, reason) tuple it was.
    def _astuple(self) -> tuple[tuple[int, ...], str, str | None]:
        return (self.cards, self.kind, self.reason)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._astuple())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, GroupResult):
            return self._astuple() == other._astuple()
        return self._astuple() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._astuple())

    def __repr__(self) -> str:
        return f"GroupResult(cards={self.cards!r}, kind={self.kind!r}, reason={self.reason!r})"


_WILD_CACHE: dict[tuple[object, str], int] = {}


def wild_rank(wild_joker: str | int | None, rules: RuleSet = DEFAULT) -> int:
    """The rank that is wild (1..13) for a turned-up card, or 0 when only printed jokers are."""
    key = (wild_joker, rules.printed_joker_cut)
    got = _WILD_CACHE.get(key)
    if got is None:
        got = _wild_rank(wild_joker, rules)
        if len(_WILD_CACHE) < 4096:
            _WILD_CACHE[key] = got
    return got


def _wild_rank(wild_joker: str | int | None, rules: RuleSet) -> int:
    if wild_joker is None or wild_joker == "":
        return NO_WILD
    try:
        code = parse_card(wild_joker)
    except CardError:
        if isinstance(wild_joker, str) and wild_joker.strip().upper() in (*RANK_NAMES, "T"):
            name = wild_joker.strip().upper()
            return 10 if name == "T" else RANK_NAMES.index(name)
        raise
    if code == PJ:
        return 1 if rules.printed_joker_cut == ACES_WILD else NO_WILD
    return code % 13 + 1


def _span_fits(mask: int, n: int) -> bool:
    """Do these ranks fit one window of n consecutive ranks (ace low or high, no wrap)?"""
    lo = (mask & -mask).bit_length()
    if mask.bit_length() - lo + 1 <= n:
        return True
    if mask & ACE_LOW:
        mask = (mask ^ ACE_LOW) | ACE_HIGH
        lo = (mask & -mask).bit_length()
        return mask.bit_length() - lo + 1 <= n
    return False


# Card bits: summing them gives the set of cards in a group while no card repeats (a repeat
# carries, which the popcount shows; so do two printed jokers, which share bit 52).
_BIT = (*(1 << c for c in range(52)), 1 << 52)
_bit = _BIT.__getitem__
# Per rank: its bit in all four suits; per wild rank: the bits of every joker (printed or wild).
_RANK_BITS = tuple(sum(1 << (s * 13 + r) for s in range(4)) for r in range(13))
_JOKER_BITS = tuple(-1 << 52 | b for b in (0, *_RANK_BITS))


def group_kind(cs: Sequence[int], w: int, rules: RuleSet) -> int:
    """Kind code of a group of card codes, wild rank ``w``; ``invalid_reason`` says why not."""
    n = len(cs)
    m = sum(map(_bit, cs))
    if m.bit_count() != n:  # some card repeats
        if n == 3 and rules.identical_triple_is_pure and cs[0] == cs[1] == cs[2] != PJ:
            return K_PURE
        nat = [c for c in cs if c != PJ and c % 13 + 1 != w]
        if len(set(nat)) != len(nat):
            return K_INVALID  # a natural card twice is in no sequence or set
        m = 0
        for c in cs:
            m |= _bit(c)
    wb = m & _JOKER_BITS[w]
    nat = m ^ wb
    if not nat:
        return K_JOKERS if n else K_INVALID
    if n < 3:
        return K_INVALID
    low = (nat & -nat).bit_length() - 1
    s = low // 13
    ranks = (nat >> 13 * s) << 1  # bit r for rank r: a one-suit group stays below bit 14
    if ranks < ACE_HIGH:
        maxlen = rules.max_sequence_length
        own = wb & 1 << (13 * s + w - 1) if w else 0  # the wild card of this suit
        # Pure: every card as itself (no printed joker, no other wild), one suit, consecutive.
        if wb == own:
            full = ranks | 1 << w if own else ranks
            if full.bit_count() == n and _span_fits(full, n):
                return K_PURE if maxlen is None or n <= maxlen else K_INVALID
        # Impure: jokers fill the gaps (a wild card of this suit may sit in its own place).
        if n <= 13 and _span_fits(ranks, n):
            subs = n - ranks.bit_count()
            if own and _span_fits(ranks | 1 << w, n):
                subs -= 1
            limit = rules.max_jokers_per_sequence
            if (limit is None or subs <= limit) and (maxlen is None or n <= maxlen):
                return K_IMPURE if subs else K_PURE
    # Set: naturals of one rank (distinct suits, as no natural repeats), 3 or 4 cards.
    if n <= 4 and nat & _RANK_BITS[low % 13] == nat:
        return K_SET
    return K_INVALID


def _few_cards_reason(cs: Sequence[int]) -> str:
    names = " ".join(NAMES[c] for c in cs)
    return f"{names}: {len(cs)} card{'s' if len(cs) > 1 else ''} cannot form a sequence or set"


def _rank_label(r: int) -> str:
    return RANK_NAMES[1 if r == 14 else r]


def invalid_reason(cs: Sequence[int], w: int, rules: RuleSet) -> str:
    """Why a group is not a sequence, set or joker group, in words a player understands."""
    n = len(cs)
    if n == 0:
        return "empty group"
    if n < 3:
        return _few_cards_reason(cs)
    nat = [c for c in cs if c != PJ and c % 13 + 1 != w]
    jokers = n - len(nat)
    suits = [0, 0, 0, 0]
    ranks = [0] * 13
    for c in nat:
        suits[c // 13] += 1
        ranks[c % 13] += 1
    dup = -1
    if len(set(nat)) != len(nat):
        dup = next(c for i, c in enumerate(nat) if c in nat[:i])
    nsuits = 4 - suits.count(0)
    nranks = 13 - ranks.count(0)
    if nsuits == 1 and (nranks > 1 or n > 4):
        if dup >= 0:
            return f"two {NAMES[dup]} in a sequence"
        return _sequence_reason(nat, n, jokers, rules)
    if nranks == 1:
        if dup >= 0:
            return f"two {NAMES[dup]} in a set"
        if n > 4:
            return f"a set has at most 4 cards, not {n}"
        return f"a sequence may use at most {rules.max_jokers_per_sequence} jokers"
    in_suit = max(suits)
    in_rank = max(ranks)
    if in_rank > in_suit:
        main = ranks.index(in_rank)
        odd = [c for c in nat if c % 13 != main]
    else:
        main = suits.index(in_suit)
        odd = [c for c in nat if c // 13 != main]
    if len(odd) == 1:
        return f"{NAMES[odd[0]]} is not a joker here"
    return f"{', '.join(map(NAMES.__getitem__, odd))} are not jokers here"


def _sequence_reason(nat: list[int], n: int, jokers: int, rules: RuleSet) -> str:
    if n > 13:
        return f"a sequence has at most 13 cards, not {n}"
    maxlen = rules.max_sequence_length
    if maxlen is not None and n > maxlen:
        return f"a sequence of {n} cards is longer than {maxlen}"
    mask = 0
    for c in nat:
        mask |= 1 << (c % 13 + 1)
    if _span_fits(mask, n):
        limit = rules.max_jokers_per_sequence
        return f"a sequence may use at most {limit} joker{'s' if limit != 1 else ''}"
    rs = sorted(c % 13 + 1 for c in nat)
    # A run that only fits when it goes round the corner K-A-2 wraps.
    gaps = [(rs[(i + 1) % len(rs)] - rs[i]) % 13 for i in range(len(rs))]
    worst = max(range(len(rs)), key=lambda i: gaps[i])
    order = rs[worst + 1 :] + rs[: worst + 1]
    if 1 in rs and order[0] != 1 and 13 - gaps[worst] + 1 <= n:
        return "-".join(_rank_label(r) for r in order) + " wraps"
    need = min(mask.bit_length() - (mask & -mask).bit_length() + 1, _ace_high_span(mask))
    have = " ".join(NAMES[c] for c in sorted(nat, key=lambda c: c % 13))
    if jokers == 0:
        return f"{have} are not consecutive"
    return f"{have} need {need - len(nat)} jokers to be consecutive, only {jokers} here"


def _ace_high_span(mask: int) -> int:
    if not mask & ACE_LOW:
        return 99
    mask = (mask ^ ACE_LOW) | ACE_HIGH
    return mask.bit_length() - (mask & -mask).bit_length() + 1


def classify_group(
    cards: Iterable[str | int] | str, wild_joker: str | int | None, rules: RuleSet = DEFAULT
) -> GroupResult:
    """Classify one group as a player laid it down."""
    cs = tuple(parse_cards(cards))
    w = wild_rank(wild_joker, rules)
    return GroupResult(cs, KIND_NAMES[group_kind(cs, w, rules)], None, w, rules)
