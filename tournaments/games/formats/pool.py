"""Pool rummy (101 or 201): scores add up deal by deal, a total reaching the limit eliminates,
the last player under it wins the pool. Eliminated players may rejoin while every remaining score
is below the bound; the remaining players may agree to split the pool."""

from __future__ import annotations

from typing import Any

from tournaments import rummy
from tournaments.errors import GameErrorCode, NotAllowed
from tournaments.games.formats.base import FormatName, Seat, Table
from tournaments.games.formats.thirteen_card import ThirteenCardFormat
from tournaments.games.terms import GameTerms
from tournaments.payouts import (
    Settlement,
    drops_left,
    prize_settlement,
    split_by_drop_value,
    split_settlement,
)


class Pool(ThirteenCardFormat):
    def __init__(self, name: FormatName, limit: int):
        self.name = name
        self.default_preset = str(name)
        self.label = f"Pool rummy {limit}"

    def apply_deal(
        self, table: Table, results: list[dict[str, Any]], points: dict[str, int]
    ) -> Settlement | None:
        rules = table.terms.rules
        for ext, pts in points.items():
            seat = table.seat(ext)
            seat.score += pts
            seat.eliminated = rummy.is_eliminated(seat.score, rules)
        remaining = table.remaining
        if len(remaining) != 1:
            return None
        return prize_settlement(
            prize=table.collected,
            winner=remaining[0].external_id,
            fee_percent=table.terms.fee_percent,
        )

    def allows_rejoin(self, terms: GameTerms) -> bool:
        return terms.rejoin_allowed

    def rejoin_score(self, table: Table, seat: Seat) -> int:
        if not self.allows_rejoin(table.terms):
            return super().rejoin_score(table, seat)
        if not seat.eliminated:
            raise NotAllowed(
                f"{seat.external_id} is still in the game", code=GameErrorCode.NOT_ELIMINATED
            )
        remaining = [s.score for s in table.remaining]
        rules = table.terms.rules
        if not rummy.can_rejoin(remaining, rules):
            raise NotAllowed(
                f"rejoin is closed: a remaining score has reached {rules.rejoin_below}",
                code=GameErrorCode.REJOIN_CLOSED,
                details={"scores": remaining},
            )
        return rummy.rejoin_score(remaining)

    def allows_split(self, terms: GameTerms) -> bool:
        return terms.split_policy != "none"

    def split(self, table: Table) -> Settlement:
        """The remaining players share the pool by the template's `split_policy` (docs/rules.md
        "Split"): `equal`; `drops`, in proportion to drops left + 1; `drop_value`, the entry fee
        for each drop held above the fewest, then equal shares of the rest."""
        terms = table.terms
        if not self.allows_split(terms):
            return super().split(table)
        remaining = table.remaining
        if len(remaining) < 2:
            raise NotAllowed(
                "a split needs at least two remaining players",
                code=GameErrorCode.SPLIT_NOT_ALLOWED,
            )
        rules = terms.rules
        drops = {
            s.external_id: drops_left(s.score, rules.pool_limit, rules.first_drop_points)
            for s in remaining
        }
        if terms.split_policy == "drop_value":
            return split_by_drop_value(
                prize=table.collected,
                drops=drops,
                entry_fee=terms.entry_fee,
                fee_percent=terms.fee_percent,
            )
        weights = {p: 1 if terms.split_policy == "equal" else d + 1 for p, d in drops.items()}
        return split_settlement(
            prize=table.collected, weights=weights, fee_percent=terms.fee_percent
        )


POOL101 = Pool(FormatName.POOL101, 101)
POOL201 = Pool(FormatName.POOL201, 201)
