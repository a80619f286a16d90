"""The references and idempotency keys of games' transfers, built with `wallets.references`.

Every transfer of a game carries the reference `game:<pk>`, so finance finds them all by it (and
by its prefix, for the keys under it).
"""

from wallets import references


def game_reference(game_pk: object) -> str:
    return references.join("game", game_pk)


def game_key(game_pk: object, *parts: object) -> str:
    """An idempotency key of one of the game's transfers: `game:<pk>:settlement`, ..."""
    return references.join("game", game_pk, *parts)


def game_pk_of(reference: str) -> int | None:
    """The game a reference names (`game:12` -> 12), or None for any other reference."""
    head = game_reference("")
    rest = reference[len(head) :] if reference.startswith(head) else ""
    return int(rest) if rest.isdigit() else None


# the third part of a rebuy's idempotency key (`tournament:<pk>:rebuy:<registration>:<n>`)
TOURNAMENT_REBUY = "rebuy"


def tournament_reference(tournament_pk: object) -> str:
    return references.join("tournament", tournament_pk)


def tournament_key(tournament_pk: object, *parts: object) -> str:
    """An idempotency key of a tournament's transfer: `tournament:<pk>:entry:<registration>`..."""
    return references.join("tournament", tournament_pk, *parts)


def leaderboard_reference(leaderboard_pk: object) -> str:
    """`leaderboard:<pk>`: a leaderboard's prize transfer (from promotions: the promotions-spend
    report finds leaderboard prizes by this prefix)."""
    return references.join("leaderboard", leaderboard_pk)


def leaderboard_key(leaderboard_pk: object, *parts: object) -> str:
    return references.join("leaderboard", leaderboard_pk, *parts)
