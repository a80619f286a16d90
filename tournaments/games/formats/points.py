"""Points rummy: one deal. Each player stakes the maximum loss (cap x point value); each loser
pays points x point value, the winner gets the sum minus the fee, the rest goes back."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tournaments import rummy
from tournaments.errors import TermsInvalid
from tournaments.games.formats.base import FormatName, Table
from tournaments.games.formats.thirteen_card import ThirteenCardFormat, winner
from tournaments.payouts import Settlement, points_settlement


class Points(ThirteenCardFormat):
    name = FormatName.POINTS
    label = "Points rummy (one deal)"

    def stake(
        self, *, point_value: Decimal | None, entry_fee: Decimal | None, rules: rummy.RuleSet
    ) -> Decimal:
        if point_value is None or point_value <= 0:
            raise TermsInvalid("point_value", "a points game needs a point value above zero")
        return point_value * rules.cap

    def apply_deal(
        self, table: Table, results: list[dict[str, Any]], points: dict[str, int]
    ) -> Settlement:
        terms = table.terms
        return points_settlement(
            stakes={s.external_id: terms.stake for s in table.seats},
            points=points,
            winner=winner(results),
            point_value=terms.point_value,
            fee_percent=terms.fee_percent,
        )


POINTS = Points()
