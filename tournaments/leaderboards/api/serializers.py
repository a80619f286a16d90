"""The leaderboard endpoint's answer (docs/api.md)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from rummy_ledger.api.paging import NEXT, PageQuery
from tournaments.leaderboards.selectors import StandingRow
from tournaments.models import Leaderboard
from wallets.money.amounts import amount_text


class LeaderboardQuery(PageQuery):
    pass


class StandingOut(serializers.Serializer):
    rank = serializers.IntegerField(help_text="Equal points share a rank (1, 2, 2, 4).")
    player = serializers.CharField(help_text="The player's external id.")
    points = serializers.CharField(help_text='A decimal string such as "12.50".')


class LeaderboardOut(serializers.Serializer):
    slug = serializers.CharField(help_text="The leaderboard's slug.")
    starts_at = serializers.DateTimeField(help_text="Its first moment: an IST midnight.")
    ends_at = serializers.DateTimeField(help_text="Its end (excluded): an IST midnight.")
    status = serializers.ChoiceField(
        choices=Leaderboard.Status.choices,
        help_text="scheduled, running (points accrue as games settle), paid (prizes paid).",
    )
    standings = StandingOut(many=True, help_text="Most points first; players with points only.")
    next = serializers.CharField(allow_null=True, help_text=NEXT)


def standing_out(row: StandingRow) -> dict[str, Any]:
    return {"rank": row.rank, "player": row.player, "points": amount_text(row.points)}


def leaderboard_out(board: Leaderboard, page: dict[str, Any]) -> dict[str, Any]:
    return {
        "slug": board.slug,
        "starts_at": board.starts_at,
        "ends_at": board.ends_at,
        "status": board.status,
        **page,
    }
