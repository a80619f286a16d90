"""What an external id may look like: a player's id from the platform, a game server's game id.

The alphabet is deliberately small: 1 to 64 of `A-Z a-z 0-9 . _ -`, and never `..`. Such an id
is safe everywhere it travels: in a URL path segment without escaping, in account codes and
references (no `:`, the separator of `wallets.references`), in log lines and CSV exports (no
control characters, no spaces, no lookalike Unicode), in file names. Pure: no Django.
"""

from __future__ import annotations

import re

MAX_LENGTH = 64
ALPHABET = "A-Za-z0-9._-"
PATTERN = rf"[{ALPHABET}]{{1,{MAX_LENGTH}}}"
RULE = f"1 to {MAX_LENGTH} characters of {ALPHABET}, without '..'"
# How OpenAPI shows an id (path parameters and body fields).
JSON_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_LENGTH,
    # never `..`, and no newline (a validator in Python lets `$` match before a final one)
    "pattern": rf"^(?!.*\.\.)(?!.*\n){PATTERN}$",
    "description": f"An external id: {RULE}.",
}
_ID = re.compile(PATTERN, re.ASCII)


def is_external_id(value: object) -> bool:
    return isinstance(value, str) and _ID.fullmatch(value) is not None and ".." not in value
