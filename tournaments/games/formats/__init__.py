"""One home per format: points, pool 101/201, deals, Rummy 500. Pure: no Django, no I/O.

Each format holds its stake and starting standings, how a posted deal is checked and scored, how
a deal changes the standings, when the game ends and what it pays, and whether a rejoin or split
is allowed (`base.GameFormat`). Settlement and the game services ask the format; none of them
branches on it. `python -c "import tournaments.games.formats as f; print(f.FORMATS)"` lists them.
"""

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from tournaments.errors import TermsInvalid
from tournaments.games.formats.base import CheckedDeal, FormatName, GameFormat, Seat, Table
from tournaments.games.formats.deals import DEALS
from tournaments.games.formats.points import POINTS
from tournaments.games.formats.pool import POOL101, POOL201
from tournaments.games.formats.rummy500 import RUMMY500
from tournaments.games.terms import BONUS_CAP_PERCENT, GameTerms

FORMATS: dict[str, GameFormat] = {
    f.name.value: f for f in (POINTS, POOL101, POOL201, DEALS, RUMMY500)
}


def format_of(name: str) -> GameFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise TermsInvalid("format", f"unknown format {name!r}") from None


def game_terms(
    *,
    template: str,
    format: str,
    currency: str,
    chips: bool,
    seats: int,
    point_value: Decimal | None,
    entry_fee: Decimal | None,
    fee_percent: Decimal,
    deals: int | None,
    rules: Any,
    split_policy: str,
    rejoin_allowed: bool,
    entry_buckets: Sequence[str],
    bonus_cap_percent: Decimal = BONUS_CAP_PERCENT,
) -> GameTerms:
    """A template's terms, validated: raises `TermsInvalid` naming the template field at fault.
    Practice chips pay no fee and come from the chips bucket only."""
    fmt = format_of(format)
    ruleset = fmt.ruleset(rules)
    terms = GameTerms(
        template=template,
        format=fmt.name.value,
        currency=currency,
        seats=seats,
        point_value=point_value,
        entry_fee=entry_fee,
        stake=fmt.stake(point_value=point_value, entry_fee=entry_fee, rules=ruleset),
        fee_percent=Decimal("0.00") if chips else fee_percent,
        deals=fmt.deal_count(deals),
        rules=ruleset,
        split_policy=split_policy,
        rejoin_allowed=rejoin_allowed,
        entry_buckets=("chips",) if chips else tuple(entry_buckets),
        bonus_cap_percent=bonus_cap_percent,
    )
    fmt.check_terms(terms)
    return terms


__all__ = [
    "FORMATS",
    "CheckedDeal",
    "FormatName",
    "GameFormat",
    "Seat",
    "Table",
    "format_of",
    "game_terms",
]
