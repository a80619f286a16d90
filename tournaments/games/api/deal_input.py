"""A deal's body, read: the one reader of `POST /games/{id}/deals` and of each deal of a batch.

Plain functions over the parsed JSON (DRF's nested serializer cost a deal post ~1 ms; this costs
a fraction). `serializers.DealIn` declares the same body for the OpenAPI document and is never
run: what this reader accepts, and every 400 it words (the same `details`, field by field, index
by index, message by message), is what `DealIn` would say, and tests/tournaments/
test_deal_input.py holds the two side by side on generated bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rest_framework import exceptions

from rummy_ledger import ids
from rummy_ledger.api.fields import UNKNOWN_FIELD, json_type_name
from tournaments import rummy
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
_ABSENT = object()

Read = Callable[[Any], Any]


class _Invalid(Exception):
    """A value refused: `detail` is what DRF would report for it (a list of messages, or a
    mapping by field name or list index)."""

    def __init__(self, detail: list | dict):
        super().__init__(detail)
        self.detail = detail


_REQUIRED, _NULL = "This field is required.", "This field may not be null."


def deal_read(data: Any) -> dict[str, Any]:
    """The deal's body as the intake takes it, or a 400 (`ValidationError`) naming the fields."""
    if data is None:
        raise exceptions.ValidationError({"non_field_errors": ["No data provided"]})
    try:
        return _object(data, _DEAL_FIELDS)
    except _Invalid as invalid:
        raise exceptions.ValidationError(invalid.detail) from None


def _object(data: Any, fields: dict[str, tuple[Read, bool, bool]]) -> dict[str, Any]:
    """A `StrictSerializer`'s reading: each field (read, required, nullable) in order, as DRF's
    `Field.run_validation` takes it (absent, null, then read), then the unknown ones refused."""
    if not isinstance(data, Mapping):
        message = f"Invalid data. Expected a dictionary, but got {type(data).__name__}."
        raise _Invalid({"non_field_errors": [message]})
    out, errors = {}, {}
    for name, (read, required, null) in fields.items():
        value = data.get(name, _ABSENT)
        if value is _ABSENT:
            if required:
                errors[name] = [_REQUIRED]
        elif value is None:
            if null:
                out[name] = None
            else:
                errors[name] = [_NULL]
        else:
            try:
                out[name] = read(value)
            except _Invalid as invalid:
                errors[name] = invalid.detail
    unknown = {name: [UNKNOWN_FIELD] for name in sorted(set(data) - set(fields))}
    if errors or unknown:
        raise _Invalid({**errors, **unknown})
    return out


def _text(
    most: int, *, blank: bool = False, check: Callable[[str], str | None] | None = None
) -> Read:
    """A `StrictCharField` (`check`: one more validator, its message or None)."""

    def read(value: Any) -> str:
        if isinstance(value, str) and value == "":
            if blank:
                return ""
            raise _Invalid(["This field may not be blank."])
        if not isinstance(value, str):
            raise _Invalid([f"Expected a JSON string, got {json_type_name(value)}."])
        errors = []
        if len(value) > most:
            errors.append(f"Ensure this field has no more than {most} characters.")
        if "\x00" in value:
            errors.append("Null characters are not allowed.")
        surrogate = None if value.isascii() else next((c for c in value if _surrogate(c)), None)
        if surrogate is not None:
            errors.append(f"Surrogate characters are not allowed: U+{ord(surrogate):X}.")
        if check is not None and (message := check(value)) is not None:
            errors.append(message)
        if errors:
            raise _Invalid(errors)
        return value

    return read


def _surrogate(c: str) -> bool:
    return "\ud800" <= c <= "\udfff"


def _integer(low: int, high: int) -> Read:
    """A `StrictIntegerField` between `low` and `high`."""

    def read(value: Any) -> int:
        if type(value) is not int:
            raise _Invalid([f"Expected a JSON integer, got {json_type_name(value)}."])
        if value > high:
            raise _Invalid([f"Ensure this value is less than or equal to {high}."])
        if value < low:
            raise _Invalid([f"Ensure this value is greater than or equal to {low}."])
        return value

    return read


def _list(child: Read, *, most: int, least: int = 0, then: Read | None = None) -> Read:
    """A `ListField` of `child` (each item refused under its index), `then` on the list read,
    then its length checked."""

    def read(value: Any) -> list:
        if not isinstance(value, list):
            raise _Invalid([f'Expected a list of items but got type "{type(value).__name__}".'])
        out, errors = [], {}
        for n, item in enumerate(value):
            try:
                out.append(_not_null(child, item))
            except _Invalid as invalid:
                errors[n] = invalid.detail
        if errors:
            raise _Invalid(errors)
        if then is not None:
            then(out)
        if len(out) > most:
            raise _Invalid([f"Ensure this field has no more than {most} elements."])
        if len(out) < least:
            raise _Invalid([f"Ensure this field has at least {least} elements."])
        return out

    return read


def _not_null(read: Read, value: Any) -> Any:
    """A value DRF reads as a required field's (a list's item): null refused, else `read`."""
    if value is None:
        raise _Invalid([_NULL])
    return read(value)


_CARD = _text(CARD_MAX)


def _cards(most: int, least: int = 0) -> Read:
    return _list(_CARD, most=most, least=least)


def _hand_size(groups: list[list[str]]) -> None:
    cards = sum(len(g) for g in groups)
    if cards > HAND_WITH_DRAW:
        raise _Invalid([f"a hand holds at most {HAND_WITH_DRAW} cards, got {cards}"])


_MELD = _cards(LONGEST_MELD, 3)
_LAID_OFF_SHAPE = (
    f"a laid-off card is a card, or [card, [the meld it extends: 3 to {LONGEST_MELD} cards]]"
)


def _laid_off(value: Any) -> Any:
    """`LaidOffField`: a card, or [card, [the meld it extends]]."""
    if isinstance(value, str):
        return _CARD(value)
    if not isinstance(value, list) or len(value) != 2 or not isinstance(value[1], list):
        raise _Invalid([_LAID_OFF_SHAPE])
    return [_not_null(_CARD, value[0]), _MELD(value[1])]


def _outcome(value: Any) -> str:
    if str(value) not in rummy.OUTCOMES:
        raise _Invalid([f'"{value}" is not a valid choice.'])
    return str(value)


def _external_id(value: str) -> str | None:
    return None if ids.is_external_id(value) else f"An id is {ids.RULE}."


_RESULT_FIELDS = {  # name: (read, required, nullable)
    "player": (_text(ids.MAX_LENGTH, check=_external_id), True, False),
    "outcome": (_outcome, False, True),
    "groups": (_list(_cards(HAND_WITH_DRAW), most=HAND_WITH_DRAW, then=_hand_size), False, True),
    "melded": (_list(_cards(LONGEST_MELD), most=RUMMY500_CARDS // 3), False, False),
    "laid_off": (_list(_laid_off, most=RUMMY500_CARDS), False, False),
    "in_hand": (_cards(RUMMY500_CARDS), False, False),
    "claimed_points": (_integer(-MAX_POINTS, MAX_POINTS), False, True),
}


def _result(value: Any) -> dict[str, Any]:
    """`ResultIn`: its fields, then the cards a player shows counted."""
    out = _object(value, _RESULT_FIELDS)
    shown = sum(len(m) for m in out.get("melded", [])) + len(out.get("in_hand", []))
    shown += len(out.get("laid_off", []))
    if shown > RUMMY500_CARDS:
        raise _Invalid({"melded": [f"a player shows at most {RUMMY500_CARDS} cards, got {shown}"]})
    return out


_DEAL_FIELDS = {
    "deal_no": (_integer(1, MAX_DEALS), True, False),
    "wild_joker": (_text(WILD_MAX, blank=True), False, False),
    "results": (_list(_result, most=SEATS_MAX, least=1), True, False),
}
