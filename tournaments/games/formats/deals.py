"""Deals rummy (best of N): each player starts with cap x N chips; every loser gives their
points in chips to the deal's winner; after N deals the chip leader wins the pool. Equal chips at
the top play one more deal between the tied players (the others sit out)."""

from __future__ import annotations

from typing import Any

from tournaments.errors import TermsInvalid
from tournaments.games.formats.base import FormatName, Table
from tournaments.games.formats.thirteen_card import ThirteenCardFormat, winner
from tournaments.games.terms import GameTerms
from tournaments.payouts import Settlement, prize_settlement


class Deals(ThirteenCardFormat):
    name = FormatName.DEALS
    label = "Deals rummy (best of N)"
    default_preset = "deals"

    def check_terms(self, terms: GameTerms) -> None:
        super().check_terms(terms)
        if not terms.deals or terms.deals < 1:
            raise TermsInvalid("deals", "a deals game plays at least one deal")
        allowed = terms.rules.deal_counts
        if terms.deals not in allowed:
            listed = ", ".join(map(str, allowed))
            raise TermsInvalid(
                "deals",
                f"a deals game is best of {listed}, not {terms.deals}; "
                f"a template plays another N only by naming it in its rules, e.g. "
                f'{{"deal_counts": [{listed}, {terms.deals}]}}',
            )

    def deal_count(self, deals: int | None) -> int | None:
        return deals

    def opening_score(self, terms: GameTerms) -> int:
        return terms.rules.cap * terms.deals

    def apply_deal(
        self, table: Table, results: list[dict[str, Any]], points: dict[str, int]
    ) -> Settlement | None:
        won = table.seat(winner(results))
        for ext, pts in points.items():
            seat = table.seat(ext)
            if seat is not won:
                give = min(pts, seat.score)
                seat.score -= give
                won.score += give
        if table.deals_played < table.terms.deals:
            return None
        playing = table.remaining
        top = max(s.score for s in playing)
        leaders = [s for s in playing if s.score == top]
        if len(leaders) == 1:
            return prize_settlement(
                prize=table.collected,
                winner=leaders[0].external_id,
                fee_percent=table.terms.fee_percent,
            )
        for s in playing:
            if s.score != top:
                s.eliminated = True
        return None


DEALS = Deals()
