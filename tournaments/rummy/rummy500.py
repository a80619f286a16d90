"""Rummy 500 (docs/rules.md): card values, meld validation, hand scores and the race past 500.

A joker in a meld stands for one named card and keeps it: write it ``PJ=8C`` (``PJ:8C`` also
works). ``meld_kind`` says whether some card can stand where an unnamed ``PJ`` is; which card it
is, fixed once melded, is ``jokers500``'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence

from .cards import NAMES, PJ, CardError, overflow_errors, parse_card
from .groups import ACE_HIGH, ACE_LOW

TARGET = 500
JOKER_VALUE = 15
ACE_VALUE = 15
LOW_ACE_VALUE = 1
MIN_PLAYERS, MAX_PLAYERS = 2, 8
TWO_DECKS_FROM = 5  # when 5 or more play, two decks shuffled together (108 cards)
JOKERS_PER_DECK = 2  # a 54-card deck

Token = str | int


class MeldError(ValueError):
    """A meld that is not a valid Rummy 500 sequence or set; the message says why."""


def parse_joker(token: Token) -> tuple[int, int | None]:
    """``(code, named card or None)``; ``PJ=8C`` is a joker standing for 8C."""
    if isinstance(token, str):
        for sep in ("=", ":"):
            if sep in token:
                left, right = token.split(sep, 1)
                if parse_card(left) != PJ:
                    raise CardError(token, f"only a joker can be named: {token!r}")
                named = parse_card(right)
                if named == PJ:
                    raise CardError(token, f"a joker must stand for a card: {token!r}")
                return PJ, named
    return parse_card(token), None


def decks_for(players: int) -> int:
    """Decks at a Rummy 500 table: one 54-card deck up to 4 players, two from 5 to 8."""
    if type(players) is not int or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"Rummy 500 seats {MIN_PLAYERS} to {MAX_PLAYERS}, not {players!r}")
    return 2 if players >= TWO_DECKS_FROM else 1


def deck_count_errors(cards: Iterable[Token], players: int) -> list[str]:
    """Cards of a hand's results seen more often than the table's decks hold. A named joker
    (``PJ=8C``) is a joker: it may stand for a card the decks already hold."""
    counts = Counter(parse_joker(t)[0] for t in cards)
    return overflow_errors(counts, decks_for(players), JOKERS_PER_DECK)


def card_value(token: Token) -> int:
    """2-10 face, J Q K 10, ace 15, joker 15 (an ace low in a sequence is worth 1: see melds)."""
    code, _ = parse_joker(token)
    if code == PJ:
        return JOKER_VALUE
    r = code % 13 + 1
    return ACE_VALUE if r == 1 else min(r, 10)


def _identities(meld: Sequence[Token]) -> tuple[list[int], list[int | None]]:
    codes, named = [], []
    for t in meld:
        c, n = parse_joker(t)
        codes.append(c)
        named.append(n)
    return codes, named


def meld_kind(meld: Sequence[Token]) -> str:
    """``sequence`` or ``set``; raises MeldError with the reason otherwise.

    Unnamed jokers in a meld that could be either are read as a set (name them to say otherwise).
    """
    return kind_of(*_identities(meld))


def kind_of(codes: Sequence[int], named: Sequence[int | None]) -> str:
    """``meld_kind`` of a parsed meld: each card's code, and the card a joker is named as."""
    if len(codes) < 3:
        raise MeldError(f"a meld needs at least 3 cards, got {len(codes)}")
    pairs = zip(codes, named, strict=True)
    known = [n if c == PJ else c for c, n in pairs if c != PJ or n is not None]
    if not known:
        raise MeldError("a meld needs at least one card that is not an unnamed joker")
    if len({c % 13 for c in known}) == 1:
        suits = [c // 13 for c in known]
        if len(set(suits)) != len(suits):
            dup = next(c for c in known if suits.count(c // 13) > 1)
            raise MeldError(f"two {NAMES[dup]} in a set")
        if len(codes) > 4:
            raise MeldError(f"a set has at most 4 cards (one per suit), got {len(codes)}")
        return "set"
    if len({c // 13 for c in known}) != 1:
        raise MeldError("neither one suit in a row nor one rank")
    mask = 0
    for c in known:
        mask |= 1 << (c % 13 + 1)
    if mask.bit_count() != len(known):
        raise MeldError("a sequence cannot hold one card twice")
    if _run_window(mask, len(codes)) is None:
        raise MeldError("the cards are not consecutive (an ace is low or high, never both)")
    return "sequence"


def _run_window(mask: int, n: int) -> bool | None:
    """Whether the ranks fit n consecutive ranks: False ace low, True ace high, None no fit."""
    if n > 13:
        return None
    if mask.bit_length() - (mask & -mask).bit_length() + 1 <= n:
        return False
    if mask & ACE_LOW:
        m = (mask ^ ACE_LOW) | ACE_HIGH
        if m.bit_length() - (m & -m).bit_length() + 1 <= n:
            return True
    return None


def meld_points(meld: Sequence[Token]) -> int:
    """Value of a meld for the player who laid it; an ace low in a sequence counts 1."""
    kind = meld_kind(meld)
    codes, named = _identities(meld)
    low_ace = False
    if kind == "sequence":
        mask = 0
        for c, n in zip(codes, named, strict=True):
            card = n if c == PJ else c
            if card is not None:
                mask |= 1 << (card % 13 + 1)
        low_ace = bool(mask & ACE_LOW) and _run_window(mask, len(codes)) is False
    total = 0
    for c in codes:
        if c == PJ:
            total += JOKER_VALUE
        elif c % 13 == 0:
            total += LOW_ACE_VALUE if low_ace else ACE_VALUE
        else:
            total += min(c % 13 + 1, 10)
    return total


def score_hand(
    melded: Iterable[Sequence[Token]],
    laid_off: Iterable[Token | tuple[Token, Sequence[Token]]],
    in_hand: Iterable[Token],
) -> int:
    """Melded value (laid-off cards included) minus the value left in hand; may be negative.

    A laid-off card may be given with the meld it extends, ``(card, meld)``, so an ace laid off
    low on ``2H 3H 4H`` scores 1; a bare laid-off card scores its plain value.
    """
    total = sum(meld_points(m) for m in melded)
    for item in laid_off:
        if isinstance(item, tuple):
            card, target = item
            extended = [card, *target]
            total += meld_points(extended) - meld_points(list(target))
        else:
            total += card_value(item)
    total -= sum(card_value(t) for t in in_hand)
    return total


def game_result(totals: Mapping[Hashable, int], target: int = TARGET) -> Hashable | None:
    """The winner once someone has passed the target (highest total); None to play on.

    A tie at the top also returns None: the tied game goes on for another hand.
    """
    if not totals or max(totals.values()) <= target:
        return None
    best = max(totals.values())
    leaders = [p for p, t in totals.items() if t == best]
    return leaders[0] if len(leaders) == 1 else None
