"""The one serialisation a link's hash is taken over, and the hash (pure: no framework).

Canonical JSON: keys sorted, no whitespace, UTF-8; a Decimal as a plain string (`12.50`, never
an exponent), a datetime in UTC with microseconds; anything else is refused rather than
serialised in some way a later version might not repeat. A float (a JSON number stored by a
game server in a deal) keeps Python's shortest round-trip text.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from decimal import Decimal

GENESIS = "0" * 64  # the `prev` of the first link


def _plain(value: object) -> object:
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{value} is not an amount")
        return format(value, "f")
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"{value} has no time zone")
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    raise TypeError(f"{type(value).__name__} has no canonical form")


def canonical(content: object) -> bytes:
    """The bytes hashed for `content` (dicts, lists, strings, ints, bools, None, Decimals,
    aware datetimes)."""
    return json.dumps(
        content,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_plain,
    ).encode()


def link_hash(prev: str, content: object) -> str:
    """A link's hash: SHA-256 over the canonical form of the previous link's hash and the
    transfer's content, hex."""
    return hashlib.sha256(canonical({"prev": prev, "transfer": content})).hexdigest()
