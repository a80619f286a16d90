"""Points as games settle: the settlement job's one hook (`games_points_accrue`, called by
`tournaments.games.services.settlement.games_settle` inside its batch's transaction) counts
every game the batch finished for every leaderboard it belongs to (same client and currency,
its template listed, finished within the period, not paid yet) in ONE statement: the games
recorded once per leaderboard (`LeaderboardGame`, unique: a game settled once counts once, a
repeat inserts nothing) and only the newly recorded ones' points added to the players' rows,
all players of the batch together (never a row per deal). A reversed game takes exactly the
points it gave back (`game_points_take_back`), until the leaderboard is paid.

A tournament counts as one game, when its final pays (`tournament_points_accrue`, called by
`tournaments.tournaments.services.rounds` in the payout's transaction, reference
`tournament:<pk>`): for every leaderboard listing its slug (same client and currency, finished
within the period, not paid), each entrant's points from what they paid in (entry and rebuys,
tickets at their value), the prize they won (a seat at its value) and their share of the fee
(charged on entries: shared in proportion to what each paid in), by the same statement.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from django.db import connection
from django.utils import timezone

from tournaments.games.services.escrow import contributions
from tournaments.leaderboards import rules
from tournaments.leaderboards.services.setup import leaderboard_parameters
from tournaments.models import (
    Game,
    GamePlayer,
    GameTemplate,
    Leaderboard,
    LeaderboardGame,
    LeaderboardPoints,
    Registration,
    Tournament,
)
from tournaments.references import game_reference, tournament_reference
from wallets.money.amounts import ZERO, amount_text

GAMES = LeaderboardGame._meta.db_table
POINTS = LeaderboardPoints._meta.db_table
BOARDS = Leaderboard._meta.db_table

# The games recorded (a game already counted for a leaderboard: nothing), then the points of
# those recorded now added, player rows in (leaderboard, player) order (concurrent batches lock
# them in one order: no deadlock).
_ACCRUE = f"""
WITH counted AS (
    INSERT INTO {GAMES} (leaderboard_id, reference, points, counted_at)
    SELECT board, ref, pts::jsonb, %(at)s
      FROM unnest(%(boards)s::bigint[], %(refs)s::text[], %(points)s::text[]) AS t(board, ref, pts)
    ON CONFLICT (leaderboard_id, reference) DO NOTHING
    RETURNING leaderboard_id, points
)
INSERT INTO {POINTS} (leaderboard_id, player_id, points, updated_at)
SELECT c.leaderboard_id, e.key::bigint, sum(e.value::numeric), %(at)s
  FROM counted c, jsonb_each_text(c.points) e
 GROUP BY 1, 2
 ORDER BY 1, 2
ON CONFLICT (leaderboard_id, player_id) DO UPDATE
   SET points = {POINTS}.points + EXCLUDED.points, updated_at = EXCLUDED.updated_at
"""

_TAKE_BACK = f"""
WITH taken AS (
    UPDATE {GAMES} g SET reversed_at = %(at)s
      FROM {BOARDS} b
     WHERE g.reference = %(ref)s AND g.reversed_at IS NULL
       AND b.id = g.leaderboard_id AND b.status <> 'paid'
    RETURNING g.leaderboard_id, g.points
), lost AS (
    SELECT t.leaderboard_id, e.key::bigint AS player_id, sum(e.value::numeric) AS points
      FROM taken t, jsonb_each_text(t.points) e
     GROUP BY 1, 2
)
UPDATE {POINTS} p SET points = p.points - lost.points, updated_at = %(at)s
  FROM lost
 WHERE p.leaderboard_id = lost.leaderboard_id AND p.player_id = lost.player_id
"""


def _seat_result(seat: GamePlayer) -> rules.SeatResult:
    paid_in = sum((amount for _, amount in contributions(seat)), ZERO)
    return rules.SeatResult(paid_in, seat.payout + seat.refund, seat.payout)


def _points_text(points: Mapping[int, object]) -> str:
    return json.dumps({str(pk): amount_text(p) for pk, p in points.items()})


def _accrue(rows: Sequence[tuple[int, str, str]]) -> None:
    """Record (leaderboard pk, reference, points JSON) rows and add the new ones' points."""
    if rows:
        with connection.cursor() as cursor:
            cursor.execute(
                _ACCRUE,
                {
                    "at": timezone.now(),
                    "boards": [r[0] for r in rows],
                    "refs": [r[1] for r in rows],
                    "points": [r[2] for r in rows],
                },
            )


def games_points_accrue(*, games: Sequence[Game], seats: Mapping[int, Sequence[GamePlayer]]) -> int:
    """Count the games of a settlement batch that it finished (the caller's transaction, the
    games' standings and money as written back). Returns how many (leaderboard, game) pairs it
    offered; each is counted once however often it is offered."""
    finished = [g for g in games if g.status == Game.Status.FINISHED and g.finished_at]
    if not finished:
        return 0
    first = min(g.finished_at for g in finished)
    boards = list(
        Leaderboard.objects.filter(
            client_id__in={g.client_id for g in finished},
            starts_at__lte=max(g.finished_at for g in finished),
            ends_at__gt=first,
        ).exclude(status=Leaderboard.Status.PAID)
    )
    if not boards:
        return 0
    slugs = dict(
        GameTemplate.objects.filter(pk__in={g.template_id for g in finished}).values_list(
            "pk", "slug"
        )
    )
    rows: list[tuple[int, str, str]] = []
    for board in boards:
        parameters = leaderboard_parameters(board)
        for game in finished:
            if (
                game.client_id != board.client_id
                or game.currency != board.currency
                or slugs[game.template_id] not in board.templates
                or not board.starts_at <= game.finished_at < board.ends_at
            ):
                continue
            results = {seat.player_id: _seat_result(seat) for seat in seats[game.pk]}
            fees = rules.fee_shares(game.fee, results)
            points = rules.game_points(board.scoring, parameters, fees, results)
            if points:
                rows.append((board.pk, game_reference(game.pk), _points_text(points)))
    _accrue(rows)
    return len(rows)


def tournament_points_accrue(
    *, tournament: Tournament, registrations: Sequence[Registration]
) -> int:
    """Count a tournament whose final is paying (the caller's transaction: `finished_at`, `fee`
    and each registration's `prize` as the payout sets them) for every leaderboard listing it.
    Returns how many leaderboards it was offered to; each counts it once."""
    boards = Leaderboard.objects.filter(
        client_id=tournament.client_id,
        currency=tournament.currency,
        tournaments__contains=[tournament.slug],
        starts_at__lte=tournament.finished_at,
        ends_at__gt=tournament.finished_at,
    ).exclude(status=Leaderboard.Status.PAID)
    results = {
        r.player_id: rules.SeatResult(r.paid_total, r.prize or ZERO, r.prize or ZERO)
        for r in registrations
    }
    fees = rules.entry_fee_shares(tournament.fee, results)
    rows = []
    for board in boards:
        points = rules.game_points(board.scoring, leaderboard_parameters(board), fees, results)
        if points:
            rows.append((board.pk, tournament_reference(tournament.pk), _points_text(points)))
    _accrue(rows)
    return len(rows)


def game_points_take_back(*, reference: str, at: datetime | None = None) -> None:
    """A reversed game's points taken back from every leaderboard that counted it and is not
    paid yet (the prizes of a paid one were paid on its standings at the end)."""
    with connection.cursor() as cursor:
        cursor.execute(_TAKE_BACK, {"at": at or timezone.now(), "ref": reference})
