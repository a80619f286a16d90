"""Classifying one group of cards: pure/impure sequence, set, joker group, or invalid (and why).

The fast path works on rank bitmasks per suit; the human reason is only built for invalid groups.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from .cards import NAMES, NO_WILD, PJ, RANK_NAMES, SUITS, CardError, parse_card, parse_cards
from .rules import ACES_WILD, DEFAULT, RuleSet

PURE_SEQUENCE = "pure_sequence"
IMPURE_SEQUENCE = "impure_sequence"
SET = "set"
JOKERS = "jokers"
INVALID = "invalid"

# Internal kind codes (ints keep the hot path cheap).
K_PURE, K_IMPURE, K_SET, K_JOKERS, K_INVALID = range(5)
KIND_NAMES = (PURE_SEQUENCE, IMPURE_SEQUENCE, SET, JOKERS, INVALID)

# Rank bitmask (bit r for rank r, ace high = bit 14) of every run of 3..13 consecutive ranks.
RUNS: dict[int, int] = {}
for _lo in range(1, 13):
    for _hi in range(_lo + 2, min(_lo + 12, 14) + 1):
        RUNS[((1 << (_hi + 1)) - 1) ^ ((1 << _lo) - 1)] = _hi - _lo + 1
ACE_LOW, ACE_HIGH = 1 << 1, 1 << 14


class GroupResult(NamedTuple):
    """One classified group; ``reason`` says why when ``kind`` is invalid."""

    cards: tuple[int, ...]
    kind: str
    reason: str | None = None

    @property
    def is_sequence(self) -> bool:
        return self.kind in (PURE_SEQUENCE, IMPURE_SEQUENCE)

    def to_dict(self) -> dict[str, Any]:
        return {"cards": [NAMES[c] for c in self.cards], "kind": self.kind, "reason": self.reason}


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


def classify_codes(cs: Sequence[int], w: int, rules: RuleSet) -> tuple[int, str | None]:
    """Kind code and reason for a group of card codes, wild rank ``w``."""
    n = len(cs)
    if n == 0:
        return K_INVALID, "empty group"
    pj = 0
    nat_suit = -1
    nat_mask = 0
    nnat = 0
    same_suit = True
    wild_suits = 0
    for c in cs:
        if c == PJ:
            pj += 1
        elif c % 13 + 1 == w:
            wild_suits |= 1 << (c // 13)
        else:
            nnat += 1
            s = c // 13
            if nat_suit != s:
                if nat_suit == -1:
                    nat_suit = s
                else:
                    same_suit = False
            nat_mask |= 1 << (c % 13 + 1)
    maxlen = rules.max_sequence_length
    # Pure: every card as itself, one suit, consecutive ranks (wild cards allowed as themselves).
    if pj == 0 and n >= 3 and same_suit:
        mask = nat_mask
        if wild_suits:
            mask |= 1 << w
            if nnat == 0 or wild_suits != 1 << nat_suit:
                mask = -1
        if mask > 0 and (
            RUNS.get(mask) == n or (mask & ACE_LOW and RUNS.get(mask ^ ACE_LOW | ACE_HIGH) == n)
        ):
            if maxlen is None or n <= maxlen:
                return K_PURE, None
            return K_INVALID, f"a sequence of {n} cards is longer than {maxlen}"
        if n == 3 and rules.identical_triple_is_pure and cs[0] == cs[1] == cs[2]:
            return K_PURE, None
    if nnat == 0:
        return K_JOKERS, None
    if n < 3:
        return K_INVALID, _few_cards_reason(cs)
    # Impure sequence: naturals of one suit with distinct ranks, jokers fill the gaps.
    if same_suit and nat_mask.bit_count() == nnat and n <= 13 and _span_fits(nat_mask, n):
        subs = n - nnat
        if wild_suits & (1 << nat_suit) and _span_fits(nat_mask | 1 << w, n):
            subs -= 1  # a wild card of this suit sits in its own place
        limit = rules.max_jokers_per_sequence
        if (limit is None or subs <= limit) and (maxlen is None or n <= maxlen):
            return (K_IMPURE if subs else K_PURE), None
    # Set: naturals of one rank, distinct suits, 3 or 4 cards with the jokers.
    if n <= 4:
        r = -1
        suits = 0
        ok = True
        for c in cs:
            if c == PJ or c % 13 + 1 == w:
                continue
            if r == -1:
                r = c % 13
            bit = 1 << (c // 13)
            if c % 13 != r or suits & bit:
                ok = False
                break
            suits |= bit
        if ok:
            return K_SET, None
    return K_INVALID, invalid_reason(cs, w, rules)


def _few_cards_reason(cs: Sequence[int]) -> str:
    names = " ".join(NAMES[c] for c in cs)
    return f"{names}: {len(cs)} card{'s' if len(cs) > 1 else ''} cannot form a sequence or set"


def _rank_label(r: int) -> str:
    return RANK_NAMES[1 if r == 14 else r]


def invalid_reason(cs: Sequence[int], w: int, rules: RuleSet) -> str:
    """Why a group is not a sequence, set or joker group, in words a player understands."""
    n = len(cs)
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
    kind, reason = classify_codes(cs, wild_rank(wild_joker, rules), rules)
    return GroupResult(cs, KIND_NAMES[kind], reason)


SUIT_NAMES = SUITS
