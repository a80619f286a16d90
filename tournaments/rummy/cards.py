"""Card notation and the small-int card encoding used everywhere in the engine.

A card is an int: ``suit * 13 + (rank - 1)`` for suits S H D C (0..3) and ranks A=1..K=13,
and ``PJ`` (printed joker) is 52. Small ints keep the hot paths free of object allocation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

SUITS = "SHDC"
RANK_NAMES = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
PJ = 52
NO_WILD = 0  # wild rank 0: no rank is wild (only printed jokers are jokers)

_SUIT_INPUT = {"S": 0, "H": 1, "D": 2, "C": 3, "♠": 0, "♥": 1, "❤": 1, "♦": 2, "♣": 3}
_RANK_INPUT = {name: r for r, name in enumerate(RANK_NAMES) if name}
_RANK_INPUT["T"] = 10


class CardError(ValueError):
    """A card token that is not in the notation; ``token`` is the offending input."""

    def __init__(self, token: object, message: str | None = None) -> None:
        self.token = token
        super().__init__(message or f"unknown card {str(token)!r}")


def _build_table() -> dict[str, int]:
    table: dict[str, int] = {"PJ": PJ, "pj": PJ, "Pj": PJ, "pJ": PJ}
    for rank_name, rank in _RANK_INPUT.items():
        for suit_name, suit in _SUIT_INPUT.items():
            code = suit * 13 + rank - 1
            for r in {rank_name, rank_name.lower()}:
                for s in {suit_name, suit_name.lower()}:
                    table[r + s] = code
    return table


TOKENS = _TOKENS = _build_table()
NAMES = (*tuple(RANK_NAMES[c % 13 + 1] + SUITS[c // 13] for c in range(52)), "PJ")


def parse_card(token: str | int) -> int:
    """Parse one card token (or pass through a valid int code)."""
    if type(token) is int:
        if 0 <= token <= PJ:
            return token
        raise CardError(token)
    code = _TOKENS.get(token) if isinstance(token, str) else None
    if code is None:
        if isinstance(token, str):
            code = _TOKENS.get(token.strip().upper().replace("-", ""))
        if code is None:
            raise CardError(token)
    return code


def parse_cards(tokens: Iterable[str | int] | str) -> list[int]:
    """Parse a list of tokens, or one string of whitespace/comma separated tokens."""
    if isinstance(tokens, str):
        tokens = tokens.replace(",", " ").split()
    get = _TOKENS.get
    out = []
    for t in tokens:
        code = get(t) if type(t) is str else None
        out.append(parse_card(t) if code is None else code)
    return out


def card_name(code: int) -> str:
    """Canonical notation: ``10H``, ``AS``, ``PJ``."""
    return NAMES[code]


def card_names(codes: Iterable[int]) -> list[str]:
    return [NAMES[c] for c in codes]


def overflow_errors(counts: Mapping[int, int], decks: int, jokers_per_deck: int) -> list[str]:
    """One sentence per card seen more often than ``decks`` decks hold (13-card and Rummy 500)."""
    errors = []
    for code, k in sorted(counts.items()):
        limit = decks * (jokers_per_deck if code == PJ else 1)
        if k > limit:
            holds = "decks hold" if decks > 1 else "deck holds"
            errors.append(f"{NAMES[code]} appears {k} times; {decks} {holds} {limit}")
    return errors
