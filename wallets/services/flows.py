"""The one-way-flow report: chip dumping made visible to finance.

Two colluding players can move one's bonus and deposit into the other's withdrawable winnings by
losing to them on purpose, game after game. The books balance all along, so reconciliation sees
nothing; this report looks for the pattern instead: pairs of players where money went from one
to the other in at least `FLOW_REPORT_MIN_GAMES` games and `FLOW_REPORT_MIN_AMOUNT` INR within
`FLOW_REPORT_WINDOW_DAYS`, while what went back stayed under `FLOW_REPORT_MAX_RETURN_PERCENT` %
of it. It runs apart from the nightly reconciliation (beat, `manage.py flow_report`): a finding
is a suspicion for a person to judge, not a broken book. The withdrawal review page marks a
player in a flagged pair of the latest report.

The ledger does not know games: the app that does registers finders (`flow_finder_register`),
one per way money passes between players (cash games, cash tournaments), each returning, per
(loser, winner) pair, what went from one to the other since a moment. Their flows are summed per
pair before the thresholds (`pairs_merged`): a pair that dumps half through games and half
through tournaments is one pair, and what went back counts whichever way it went.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from wallets.models import FlaggedPair, FlowReport, Player
from wallets.money.amounts import amount_text

HUNDRED = Decimal(100)


@dataclass(frozen=True)
class PairFlow:
    """What went from `loser_id` to `winner_id` (player pks) in a window, over `games` games or
    tournaments; and what went back (`returned`, set once every finder's flows are summed)."""

    loser_id: int
    winner_id: int
    games: int
    amount: Decimal
    first_game_at: datetime
    last_game_at: datetime
    returned: Decimal = Decimal(0)


@dataclass(frozen=True)
class Thresholds:
    min_games: int
    min_amount: Decimal
    max_return_percent: Decimal

    @classmethod
    def from_settings(cls) -> Thresholds:
        return cls(
            min_games=settings.FLOW_REPORT_MIN_GAMES,
            min_amount=settings.FLOW_REPORT_MIN_AMOUNT,
            max_return_percent=settings.FLOW_REPORT_MAX_RETURN_PERCENT,
        )

    def flags(self, flow: PairFlow) -> bool:
        return (
            flow.games >= self.min_games
            and flow.amount >= self.min_amount
            and flow.returned * HUNDRED <= flow.amount * self.max_return_percent
        )


def pair_flows_sql(seats: str) -> str:
    """A finder's statement, from its `seats` query: one row per (game, player) with the columns
    `game_id, player_id, payout, finished_at, lost` (what the player paid in and did not get
    back, negative for a winner). Each loser's loss is attributed to the game's prize winners in
    proportion to their payouts and summed per (loser, winner) pair, in `PairFlow`'s order.
    Parameters are the caller's."""
    return f"""
WITH seat AS ({seats}
), prizes AS (
    SELECT game_id, sum(payout) AS total FROM seat WHERE payout > 0 GROUP BY game_id
), flow AS (
    SELECT l.player_id AS loser, w.player_id AS winner, l.finished_at,
           l.lost * w.payout / p.total AS amount
    FROM seat l
    JOIN prizes p ON p.game_id = l.game_id
    JOIN seat w ON w.game_id = l.game_id AND w.player_id <> l.player_id AND w.payout > 0
    WHERE l.lost > 0
)
SELECT loser, winner, count(*), round(sum(amount), 2), min(finished_at), max(finished_at)
FROM flow GROUP BY loser, winner ORDER BY loser, winner
"""


Finder = Callable[[datetime], list[PairFlow]]
_FINDERS: list[Finder] = []


def flow_finder_register(finder: Finder) -> None:
    if finder not in _FINDERS:
        _FINDERS.append(finder)


def pairs_merged(flows: Iterable[PairFlow]) -> list[PairFlow]:
    """One flow per (loser, winner) pair, whichever finders saw it: games and amounts summed,
    the first and last moments widened; then each pair's `returned` is what went the other way."""
    merged: dict[tuple[int, int], PairFlow] = {}
    for flow in flows:
        key = (flow.loser_id, flow.winner_id)
        seen = merged.get(key)
        merged[key] = flow if seen is None else replace(
            seen,
            games=seen.games + flow.games,
            amount=seen.amount + flow.amount,
            first_game_at=min(seen.first_game_at, flow.first_game_at),
            last_game_at=max(seen.last_game_at, flow.last_game_at),
        )  # fmt: skip
    back = {key: flow.amount for key, flow in merged.items()}
    return [
        replace(flow, returned=back.get((winner, loser), Decimal(0)))
        for (loser, winner), flow in sorted(merged.items())
    ]


def flows_flagged(flows: Iterable[PairFlow], thresholds: Thresholds) -> list[PairFlow]:
    """The pairs that reach every threshold, the largest amount first."""
    return sorted((f for f in flows if thresholds.flags(f)), key=lambda f: (-f.amount, f.loser_id))


@transaction.atomic
def flow_report_run(*, trigger: str, now: datetime | None = None) -> FlowReport:
    """Look at the window that ends now and store a report with every flagged pair."""
    now = now or timezone.now()
    since = now - timedelta(days=settings.FLOW_REPORT_WINDOW_DAYS)
    thresholds = Thresholds.from_settings()
    flows = pairs_merged(flow for finder in _FINDERS for flow in finder(since))
    report = FlowReport.objects.create(
        trigger=trigger,
        since=since,
        pairs_looked_at=len(flows),
        thresholds={
            "window_days": settings.FLOW_REPORT_WINDOW_DAYS,
            "min_games": thresholds.min_games,
            "min_amount": amount_text(thresholds.min_amount),
            "max_return_percent": f"{thresholds.max_return_percent}",
        },
    )
    FlaggedPair.objects.bulk_create(
        FlaggedPair(
            report=report,
            loser_id=flow.loser_id,
            winner_id=flow.winner_id,
            games=flow.games,
            amount=flow.amount,
            returned=flow.returned,
            first_game_at=flow.first_game_at,
            last_game_at=flow.last_game_at,
        )
        for flow in flows_flagged(flows, thresholds)
    )
    return report


def flagged_pairs_of(player: Player) -> QuerySet[FlaggedPair]:
    """The player's flagged pairs in the latest report, either side."""
    latest = FlowReport.objects.order_by("-started_at", "-pk").first()
    if latest is None:
        return FlaggedPair.objects.none()
    return (
        FlaggedPair.objects.filter(Q(loser=player) | Q(winner=player), report=latest)
        .select_related("report", "loser", "winner")
        .order_by("-amount")
    )


def players_under_review(*, player_ids: list[int]) -> set[int]:
    """Which of these players (pks) are in a pair of the latest report that finance has not
    cleared (either side): a promotions' prize skips them."""
    latest = FlowReport.objects.order_by("-started_at", "-pk").first()
    if latest is None:
        return set()
    pairs = FlaggedPair.objects.filter(
        Q(loser_id__in=player_ids) | Q(winner_id__in=player_ids),
        report=latest,
        review=FlaggedPair.Review.UNDER_REVIEW,
    ).values_list("loser_id", "winner_id")
    return {pk for pair in pairs for pk in pair} & set(player_ids)
