"""Builders for leaderboard tests: a leaderboard file over IST days, a created leaderboard."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from tournaments.leaderboards.services.setup import leaderboard_create, leaderboard_fields_checked
from tournaments.models import Leaderboard
from wallets.months import INDIA


def ist_midnight(days: int = 0) -> datetime:
    """Today's IST midnight, `days` days on."""
    today = timezone.now().astimezone(INDIA).replace(hour=0, minute=0, second=0, microsecond=0)
    return today + timedelta(days=days)


def board_file(**overrides) -> dict:
    data = {
        "slug": "week-1",
        "name": "Week 1",
        "client": "game-server-1",
        "currency": "INR",
        "starts_at": ist_midnight(-6).isoformat(),
        "ends_at": ist_midnight(1).isoformat(),
        "templates": ["points-2"],
        "scoring": "fee",
        "prizes": [
            {"ranks": "1", "amount": "1000.00"},
            {"ranks": "2", "amount": "500.00"},
            {"ranks": "3", "amount": "100.00"},
        ],
    }
    data.update(overrides)
    return data


def board(**overrides) -> Leaderboard:
    spec = leaderboard_fields_checked(board_file(**overrides))
    return leaderboard_create(spec=spec, created_by="test")


def week_passes(leaderboard: Leaderboard) -> None:
    """As if a week went by: the period moved back so that it has ended."""
    Leaderboard.objects.filter(pk=leaderboard.pk).update(
        starts_at=leaderboard.starts_at - timedelta(days=7),
        ends_at=leaderboard.ends_at - timedelta(days=7),
    )
