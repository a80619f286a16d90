"""A deal's body read without DRF's nested serializer where it is plainly valid (the hot
path: DRF's nested validation cost a deal post ~2.5 ms; this costs a fraction).

`deal_in(data)` returns exactly what `serializers.DealIn` would (the same keys, in its field
order, the same values) for a body it accepts, and None for anything else: then `DealIn` itself
judges the body and words the 400, so the errors, and the OpenAPI document built from `DealIn`,
stay what they were. It only ever accepts less than `DealIn` does
(tests/tournaments/test_deal_input.py holds the two side by side on generated bodies).
"""

from __future__ import annotations

from typing import Any

from rummy_ledger import ids
from tournaments import rummy
from tournaments.games.api import serializers
from tournaments.games.api.serializers import (
    HAND_WITH_DRAW,
    LONGEST_MELD,
    MAX_DEALS,
    MAX_POINTS,
    RUMMY500_CARDS,
)
from tournaments.models import SEATS_MAX

CARD_MAX = 8
WILD_MAX = 4
RESULT_FIELDS = ("player", "outcome", "groups", "melded", "laid_off", "in_hand", "claimed_points")


class _Refused(Exception):
    """Not plainly valid: DealIn decides."""


def deal_read(data: Any) -> dict[str, Any]:
    """A deal's body as the intake takes it: read flat where plainly valid, else by `DealIn`
    (the 400 naming the fields). The single post and each deal of a batch read theirs here."""
    return deal_in(data) or serializers.deal_input(data)


def deal_in(data: Any) -> dict[str, Any] | None:
    try:
        return _deal(data)
    except _Refused:
        return None


def _deal(data: Any) -> dict[str, Any]:
    _require(type(data) is dict and set(data) <= {"deal_no", "wild_joker", "results"})
    out: dict[str, Any] = {"deal_no": _int(data.get("deal_no"), 1, MAX_DEALS)}
    if "wild_joker" in data:
        out["wild_joker"] = _text(data["wild_joker"], WILD_MAX, blank=True)
    results = data.get("results")
    _require(type(results) is list and 1 <= len(results) <= SEATS_MAX)
    out["results"] = [_result(r) for r in results]
    return out


def _result(data: Any) -> dict[str, Any]:
    _require(type(data) is dict and set(data) <= set(RESULT_FIELDS))
    player = data.get("player")
    _require(type(player) is str and ids.is_external_id(player) and _plain(player))
    out: dict[str, Any] = {"player": player}
    if "outcome" in data:
        outcome = data["outcome"]
        _require(outcome is None or (type(outcome) is str and outcome in rummy.OUTCOMES))
        out["outcome"] = outcome
    if "groups" in data:
        groups = data["groups"]
        if groups is not None:
            groups = _lists(groups, HAND_WITH_DRAW, HAND_WITH_DRAW)
            _require(sum(len(g) for g in groups) <= HAND_WITH_DRAW)
        out["groups"] = groups
    shown = 0
    if "melded" in data:
        out["melded"] = _lists(data["melded"], RUMMY500_CARDS // 3, LONGEST_MELD)
        shown += sum(len(m) for m in out["melded"])
    if "laid_off" in data:
        laid_off = data["laid_off"]
        _require(type(laid_off) is list and len(laid_off) <= RUMMY500_CARDS)
        out["laid_off"] = [_laid_off(item) for item in laid_off]
        shown += len(out["laid_off"])
    if "in_hand" in data:
        out["in_hand"] = _cards(data["in_hand"], RUMMY500_CARDS)
        shown += len(out["in_hand"])
    if "claimed_points" in data:
        points = data["claimed_points"]
        out["claimed_points"] = None if points is None else _int(points, -MAX_POINTS, MAX_POINTS)
    _require(shown <= RUMMY500_CARDS)
    return out


def _laid_off(item: Any) -> Any:
    if type(item) is str:
        return _text(item, CARD_MAX)
    _require(type(item) is list and len(item) == 2 and type(item[1]) is list)
    meld = _cards(item[1], LONGEST_MELD)
    _require(len(meld) >= 3)
    return [_text(item[0], CARD_MAX), meld]


def _lists(value: Any, most: int, each: int) -> list[list[str]]:
    _require(type(value) is list and len(value) <= most)
    return [_cards(inner, each) for inner in value]


def _cards(value: Any, most: int) -> list[str]:
    _require(type(value) is list and len(value) <= most)
    return [_text(card, CARD_MAX) for card in value]


def _text(value: Any, most: int, *, blank: bool = False) -> str:
    _require(type(value) is str and len(value) <= most and (blank or value) and _plain(value))
    return value


def _plain(value: str) -> bool:
    """No NUL and no surrogate (DRF's CharField refuses both)."""
    return "\x00" not in value and (
        value.isascii() or not any("\ud800" <= c <= "\udfff" for c in value)
    )


def _int(value: Any, low: int, high: int) -> int:
    _require(type(value) is int and low <= value <= high)
    return value


def _require(condition: Any) -> None:
    if not condition:
        raise _Refused
