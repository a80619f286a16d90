"""The one-way-flow report: chip dumping made visible to finance.

Two colluding players can move one's bonus and deposit into the other's withdrawable winnings by
losing to them on purpose, game after game. The books balance all along, so reconciliation sees
nothing; this report looks for the pattern instead: pairs of players where money went from one
to the other in at least `FLOW_REPORT_MIN_GAMES` games and `FLOW_REPORT_MIN_AMOUNT` INR within
`FLOW_REPORT_WINDOW_DAYS`, while what went back stayed under `FLOW_REPORT_MAX_RETURN_PERCENT` %
of it. It runs apart from the nightly reconciliation (beat, `manage.py flow_report`): a finding
is a suspicion for a person to judge, not a broken book. The withdrawal review page marks a
player in a flagged pair of the latest report.

The ledger does not know games: the app that does registers a finder (`flow_finder_register`)
that returns, per (loser, winner) pair, what went from one to the other since a moment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
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
    """What went from `loser_id` to `winner_id` (player pks), and back, in a window."""

    loser_id: int
    winner_id: int
    games: int
    amount: Decimal
    returned: Decimal
    first_game_at: datetime
    last_game_at: datetime


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


Finder = Callable[[datetime], list[PairFlow]]
_FINDERS: list[Finder] = []


def flow_finder_register(finder: Finder) -> None:
    if finder not in _FINDERS:
        _FINDERS.append(finder)


def flows_flagged(flows: Iterable[PairFlow], thresholds: Thresholds) -> list[PairFlow]:
    """The pairs that reach every threshold, the largest amount first."""
    return sorted((f for f in flows if thresholds.flags(f)), key=lambda f: (-f.amount, f.loser_id))


@transaction.atomic
def flow_report_run(*, trigger: str, now: datetime | None = None) -> FlowReport:
    """Look at the window that ends now and store a report with every flagged pair."""
    now = now or timezone.now()
    since = now - timedelta(days=settings.FLOW_REPORT_WINDOW_DAYS)
    thresholds = Thresholds.from_settings()
    flows = [flow for finder in _FINDERS for flow in finder(since)]
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
