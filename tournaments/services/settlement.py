"""Storing a posted deal and settling it: the body of the Celery task.

`deal_settle` runs in ONE database transaction with the game row locked: it settles, in deal
order, every stored deal of the game (so a deal is never scored before the one before it), updates
the standings, posts the money and marks the deals settled. A deal already settled is skipped
under the lock, so the task may run twice, concurrently or after a crash: it settles once. The
ledger's idempotency keys (`game:<pk>:settlement`, `game:<pk>:refunds`) are the second line of
defence.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from rummy_ledger.errors import Conflict, Retryable
from tournaments import rummy
from tournaments.models import Deal, Format, Game, GamePlayer
from tournaments.payouts import Settlement, points_settlement, prize_settlement
from tournaments.rummy import rummy500
from tournaments.services.deal_validation import deal_check, deal_points
from tournaments.services.escrow import (
    fee_account_id,
    seats_with_accounts,
    settlement_requests,
)
from tournaments.services.terms import POOL, game_ruleset, money
from wallets.ledger import TransferRequest, transfers_post
from wallets.models import ApiClient

logger = logging.getLogger(__name__)

# Test-only: seconds to sleep inside the settlement transaction, after the money is posted and
# before the commit, so a test can SIGKILL a worker in the middle of a settlement.
SLEEP_ENV = "RUMMY_TEST_SETTLE_SLEEP"
# How many games one settlement transaction may take (its own plus others whose lock is free).
SETTLEMENT_BATCH = int(os.environ.get("SETTLEMENT_BATCH", "32"))


class DealExists(Conflict):
    code = "deal_exists"


def _payload_hash(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


@transaction.atomic
def deal_store(
    *, client: ApiClient, game_id: str, payload: dict[str, Any], enqueue: bool = True
) -> tuple[Deal, bool]:
    """Check a posted deal and store it; the settlement is queued after the commit.

    The same deal posted again (same number, same content) returns the stored one.
    """
    from tournaments.services.games import GameNotOpen, game_get, seats_of

    game = game_get(client=client, game_id=game_id, lock=True)
    digest = _payload_hash(payload)
    existing = Deal.objects.filter(game=game, deal_no=payload["deal_no"]).first()
    if existing is not None:
        if existing.payload_hash == digest:
            return existing, False
        raise DealExists(
            f"deal {payload['deal_no']} was already posted with other results",
            details={"deal_no": payload["deal_no"]},
        )
    pending_settle(game=game)
    if game.status != Game.Status.OPEN:
        raise GameNotOpen(f"game {game_id!r} is {game.status}", details={"status": game.status})
    seats = seats_of(game)
    checked = deal_check(
        terms=game.terms,
        players=[s.player.external_id for s in seats],
        eliminated=[s.player.external_id for s in seats if s.eliminated],
        expected_no=game.deals_played + 1,
        payload=payload,
    )
    deal = Deal.objects.create(
        game=game,
        deal_no=checked.deal_no,
        wild_joker=checked.wild_joker,
        results=checked.results,
        payload_hash=digest,
    )
    if enqueue:
        from tournaments.tasks import settle_deal

        transaction.on_commit(lambda: settle_deal.delay(deal.pk))
    return deal, True


class GameBusy(Retryable):
    code = "game_busy"


def deal_settle(*, deal_id: int) -> int:
    """Settle a stored deal (and any stored before it). Safe to run any number of times.

    It never waits for a game: its own game and up to SETTLEMENT_BATCH - 1 others with stored
    deals are locked with `SKIP LOCKED` and settled in ONE transaction with ONE ledger call (the
    commit, the round trips and the ledger's per-call work are shared: this is what makes the
    Celery path fast). If its own game is locked by someone else (another worker settling it in
    a batch, or a request on that game), it raises `GameBusy` after doing the other work, and
    the task is retried a moment later; by then the deal is usually settled and it returns.
    Returns the number of deals settled.
    """
    if not _is_stored(deal_id):
        return 0  # settled already (by an earlier run or another task's batch): never undone
    with transaction.atomic():
        locking = Game.objects.select_for_update(of=("self",), skip_locked=True)
        mine = locking.filter(deals__pk=deal_id).first()
        games = [mine] if mine is not None else []
        settled = 0
        if SETTLEMENT_BATCH > 1:
            try:
                with transaction.atomic():  # a savepoint: its rollback also frees those locks
                    settled = games_settle(games=games + _lock_others(mine, SETTLEMENT_BATCH - 1))
            except Retryable:
                raise
            except Exception:
                # One bad deal must not hold up everyone else's: settle this game on its own.
                logger.exception("batch settlement failed; settling deal %s alone", deal_id)
                if mine is None:
                    raise
                mine.refresh_from_db()  # the failed attempt scored it in memory
                settled = games_settle(games=games)
        elif mine is not None:
            settled = games_settle(games=games)
    if mine is None and _is_stored(deal_id):
        raise GameBusy(f"the game of deal {deal_id} is locked by another transaction")
    return settled


def _is_stored(deal_id: int) -> bool:
    """Whether the deal still waits for settlement. Most tasks end here (another task's batch
    settled their deal), so this is plain SQL: the ORM's query building costs 4x the query."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {Deal._meta.db_table} WHERE id = %s AND status = %s",
            [deal_id, Deal.Status.STORED],
        )
        return cursor.fetchone() is not None


def _lock_others(mine: Game | None, limit: int) -> list[Game]:
    """Up to `limit` other games with stored deals, oldest first, whose lock is free right now.

    LIMIT and SKIP LOCKED sit on the same query, so two workers take two disjoint batches.
    """
    stored = Deal.objects.filter(status=Deal.Status.STORED).order_by("created_at")
    if mine is not None:
        stored = stored.exclude(game_id=mine.pk)
    candidates = stored.values("game_id")[: limit * 8]  # by the partial index of stored deals
    others = Game.objects.select_for_update(of=("self",), skip_locked=True)
    return list(others.filter(pk__in=candidates, status=Game.Status.OPEN).order_by("pk")[:limit])


def pending_settle(*, game: Game) -> int:
    """Settle the game's stored deals in order; the caller holds the game row lock."""
    return games_settle(games=[game])


def games_settle(*, games: list[Game]) -> int:
    """Settle, in deal order, every stored deal of these games (the caller holds their locks):
    score, standings, the money in one `transfers_post`, everything written back at once."""
    by_pk = {g.pk: g for g in games}
    deals = list(Deal.objects.filter(game_id__in=by_pk, status=Deal.Status.STORED).order_by("pk"))
    if not deals:
        return 0
    deals.sort(key=lambda d: (d.game_id, d.deal_no))
    seats = seats_with_accounts(sorted({d.game_id for d in deals}))
    fee_id = fee_account_id()
    requests: list[TransferRequest] = []
    spans: list[tuple[Deal, int, int]] = []
    for deal in deals:
        game = by_pk[deal.game_id]
        first = len(requests)
        if game.status == Game.Status.OPEN:
            requests += _score(game, seats[game.pk], deal, fee_id)
        spans.append((deal, first, len(requests)))
    posted = transfers_post(requests=requests)
    if os.environ.get(SLEEP_ENV):
        time.sleep(float(os.environ[SLEEP_ENV]))
    for deal, first, last in spans:
        deal.transfers = [p.transfer_id for p in posted[first:last]]
    _write_back(
        [by_pk[pk] for pk in seats], [s for game_seats in seats.values() for s in game_seats], deals
    )
    return len(deals)


def unsettled_deal_ids(*, older_than: timedelta) -> list[int]:
    """Deals stored but not settled for a while: their message was lost (or is very late)."""
    cutoff = timezone.now() - older_than
    deals = Deal.objects.filter(status=Deal.Status.STORED, created_at__lt=cutoff)
    return list(deals.order_by("created_at").values_list("pk", flat=True)[:1000])


def _score(game: Game, seats: list[GamePlayer], deal: Deal, fee_id: int) -> list[TransferRequest]:
    """Score one deal, update the standings; the transfers if it ends the game."""
    terms = game.terms
    points = deal_points(terms=terms, wild_joker=deal.wild_joker, results=deal.results)
    by_ext = {s.player.external_id: s for s in seats}
    game.deals_played += 1
    deal.points = points
    deal.discrepancies = {
        r["player"]: {"claimed": r["claimed_points"], "computed": points[r["player"]]}
        for r in deal.results
        if r.get("claimed_points") is not None and r["claimed_points"] != points[r["player"]]
    }
    result = _apply(game, seats, by_ext, deal, points)
    if result is None:
        return []
    _check_adds_up(game, result)
    requests = settlement_requests(game=game, seats=seats, settlement=result, fee_id=fee_id)
    game.status = Game.Status.FINISHED
    game.outcome = "won"
    game.finished_at = timezone.now()
    return requests


def _write_back(games: list[Game], seats: list[GamePlayer], deals: list[Deal]) -> None:
    """Deals, seats and games in ONE statement: settlement throughput is bounded by the round
    trips made while the locks are held."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH d AS (UPDATE {Deal._meta.db_table} AS x SET points = u.points::jsonb, "
            "discrepancies = u.disc::jsonb, transfers = u.transfers::jsonb, status = 'settled', "
            "settled_at = now() FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[]) "
            "AS u(id, points, disc, transfers) WHERE x.id = u.id RETURNING 1), "
            f"s AS (UPDATE {GamePlayer._meta.db_table} AS gp SET score = u.score, "
            "eliminated = u.eliminated, payout = u.payout, refund = u.refund "
            "FROM unnest(%s::bigint[], %s::int[], %s::bool[], %s::numeric[], %s::numeric[]) "
            "AS u(id, score, eliminated, payout, refund) WHERE gp.id = u.id RETURNING 1) "
            f"UPDATE {Game._meta.db_table} AS g SET status = u.status, outcome = u.outcome, "
            "finished_at = u.finished_at, deals_played = u.deals_played, paid_out = u.paid_out, "
            "refunded = u.refunded, fee = u.fee FROM unnest(%s::bigint[], %s::text[], "
            "%s::text[], %s::timestamptz[], %s::int[], %s::numeric[], %s::numeric[], "
            "%s::numeric[]) AS u(id, status, outcome, finished_at, deals_played, paid_out, "
            "refunded, fee) WHERE g.id = u.id",
            [
                [d.pk for d in deals],
                [json.dumps(d.points) for d in deals],
                [json.dumps(d.discrepancies) for d in deals],
                [json.dumps(d.transfers) for d in deals],
                [s.pk for s in seats],
                [s.score for s in seats],
                [s.eliminated for s in seats],
                [s.payout for s in seats],
                [s.refund for s in seats],
                [g.pk for g in games],
                [g.status for g in games],
                [g.outcome for g in games],
                [g.finished_at for g in games],
                [g.deals_played for g in games],
                [g.paid_out for g in games],
                [g.refunded for g in games],
                [g.fee for g in games],
            ],
        )


def _winner(deal: Deal) -> str:
    return next(r["player"] for r in deal.results if r["outcome"] == "declared")


def _apply(
    game: Game,
    seats: list[GamePlayer],
    by_ext: dict[str, GamePlayer],
    deal: Deal,
    points: dict[str, int],
) -> Settlement | None:
    """Update the standings by the deal; the settlement if the game is over, else None."""
    terms = game.terms
    fee_percent = money(terms, "fee_percent")
    if game.format == Format.POINTS:
        stake = money(terms, "stake")
        return points_settlement(
            stakes={s.player.external_id: stake for s in seats},
            points=points,
            winner=_winner(deal),
            point_value=money(terms, "point_value"),
            fee_percent=fee_percent,
        )
    if game.format in POOL:
        rules = game_ruleset(terms)
        for ext, pts in points.items():
            seat = by_ext[ext]
            seat.score += pts
            seat.eliminated = rummy.is_eliminated(seat.score, rules)
        remaining = [s for s in seats if not s.eliminated]
        if len(remaining) == 1:
            return prize_settlement(
                prize=game.collected,
                winner=remaining[0].player.external_id,
                fee_percent=fee_percent,
            )
        return None
    if game.format == Format.DEALS:
        winner = by_ext[_winner(deal)]
        for ext, pts in points.items():
            seat = by_ext[ext]
            if seat is not winner:
                give = min(pts, seat.score)
                seat.score -= give
                winner.score += give
        if game.deals_played < terms["deals"]:
            return None
        return _leader_wins(game, seats, fee_percent)
    # Rummy 500: totals race past 500; the highest total wins, a tie plays another hand.
    for ext, pts in points.items():
        by_ext[ext].score += pts
    totals = {s.player.external_id: s.score for s in seats if not s.eliminated}
    winner_ext = rummy500.game_result(totals)
    if winner_ext is None:
        return None
    return prize_settlement(prize=game.collected, winner=winner_ext, fee_percent=fee_percent)


def _leader_wins(game: Game, seats: list[GamePlayer], fee_percent: Decimal) -> Settlement | None:
    """Deals: the chip leader wins; equal chips at the top play one more deal, the others out."""
    playing = [s for s in seats if not s.eliminated]
    top = max(s.score for s in playing)
    leaders = [s for s in playing if s.score == top]
    if len(leaders) == 1:
        return prize_settlement(
            prize=game.collected, winner=leaders[0].player.external_id, fee_percent=fee_percent
        )
    for s in playing:
        if s.score != top:
            s.eliminated = True
    return None


def _check_adds_up(game: Game, result: Settlement) -> None:
    if result.total != game.collected - game.paid_out - game.refunded - game.fee:
        raise AssertionError(f"settlement of game {game.pk} does not add up to its escrow")


def game_finish(
    *,
    game: Game,
    result: Settlement,
    outcome: str,
    status: str = Game.Status.FINISHED,
) -> list[int]:
    """Empty the escrow by `result` and close the game (split, cancel); caller holds the lock."""
    _check_adds_up(game, result)
    seats = seats_with_accounts([game.pk])[game.pk]
    requests = settlement_requests(game=game, seats=seats, settlement=result, fee_id=None)
    posted = transfers_post(requests=requests)
    game.status = status
    game.outcome = outcome
    game.finished_at = timezone.now()
    _write_back([game], seats, [])
    return [p.transfer_id for p in posted]
