"""Account codes, transfer references and idempotency keys: built and parsed here only.

All of them are colon-separated words: `player:<external id>:<bucket>`, `platform:<code>`,
`escrow:<owner>:<name>`; references such as `game:12` or `adjustment:7`, and idempotency keys that
extend a reference (`game:12:settlement`). A reference's prefix up to a colon finds everything
under it, which is how finance searches `game:12`.
"""

from __future__ import annotations

from dataclasses import dataclass

SEP = ":"
PLAYER = "player"
PLATFORM = "platform"
ESCROW = "escrow"


def join(*parts: object) -> str:
    """A reference or key from its parts: `join("game", 12, "refunds")` == `game:12:refunds`."""
    return SEP.join(str(part) for part in parts)


def player_account_code(external_id: str, bucket: str) -> str:
    return join(PLAYER, external_id, bucket)


def platform_account_code(code: str) -> str:
    return join(PLATFORM, code)


def escrow_account_code(owner: object, name: str) -> str:
    return join(ESCROW, owner, name)


@dataclass(frozen=True)
class AccountCode:
    kind: str
    player: str = ""
    bucket: str = ""
    name: str = ""


def parse_account_code(code: str) -> AccountCode:
    """What an account code names. A player's external id may itself hold a colon."""
    kind, _, rest = code.partition(SEP)
    if kind == PLAYER:
        player, _, bucket = rest.rpartition(SEP)
        return AccountCode(kind, player=player, bucket=bucket)
    return AccountCode(kind, name=rest)


def prefix_of(reference: str) -> str:
    """The prefix that finds every reference under this one (`game:12` -> `game:12:`)."""
    return reference + SEP
