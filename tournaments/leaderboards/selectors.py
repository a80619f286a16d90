"""A leaderboard as `GET /api/v1/leaderboards/{slug}` shows it: the client's own (another
client's does not exist for it), its standings a page at a time. The standings are ranked in
the database (most points first, the tied by player id, equal points sharing a rank: 1, 2, 2,
4, as `rules.standings` ranks them for the payout); the cursor is a position in that order."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db import connection

from rummy_ledger.api.models import ApiClient
from tournaments.errors import LeaderboardNotFound
from tournaments.models import Leaderboard, LeaderboardPoints
from wallets.models import Player

_STANDINGS = f"""
SELECT position, rank, external_id, points FROM (
    SELECT row_number() OVER (ORDER BY lp.points DESC, p.external_id) AS position,
           rank() OVER (ORDER BY lp.points DESC) AS rank, p.external_id, lp.points
      FROM {LeaderboardPoints._meta.db_table} lp
      JOIN {Player._meta.db_table} p ON p.id = lp.player_id
     WHERE lp.leaderboard_id = %s AND lp.points > 0
) ranked
WHERE position > %s ORDER BY position LIMIT %s
"""


@dataclass(frozen=True)
class StandingRow:
    pk: int  # the position: the page's cursor
    rank: int
    player: str
    points: Decimal


def leaderboard_get(*, client: ApiClient, slug: str) -> Leaderboard:
    board = Leaderboard.objects.filter(client=client, slug=slug).first()
    if board is None:
        raise LeaderboardNotFound(f"no leaderboard {slug!r}")
    return board


def standings_page(*, leaderboard: Leaderboard, after: int | None, count: int) -> list[StandingRow]:
    with connection.cursor() as cursor:
        cursor.execute(_STANDINGS, [leaderboard.pk, after or 0, count])
        return [StandingRow(*row) for row in cursor.fetchall()]
