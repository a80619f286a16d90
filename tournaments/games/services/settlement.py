"""Settling stored deals: the body of the Celery task (`tournaments.tasks.settle_deal`).

`deal_settle` runs in ONE database transaction with the game row locked: it settles, in deal
order, every stored deal of the game (so a deal is never scored before the one before it), updates
the standings, posts the money and marks the deals settled. A deal already settled is skipped
under the lock, so the task may run twice, concurrently or after a crash: it settles once. The
ledger's idempotency keys (`game:<pk>:settlement`, `game:<pk>:refunds`) are the second line of
defence. How a deal changes the standings and what a finished game pays is the format's to say.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from rummy_ledger.errors import Retryable
from tournaments import metrics
from tournaments.errors import GameBusy
from tournaments.games.formats import Table, format_of
from tournaments.games.queries import (
    deal_is_stored,
    games_with_stored_deals_locked,
    seating,
)
from tournaments.games.services.escrow import (
    Release,
    fee_account_id,
    release_post,
    settlement_release,
)
from tournaments.games.services.write_back import settlement_write_back
from tournaments.models import Deal, Game, GamePlayer
from tournaments.payouts import Settlement

logger = logging.getLogger(__name__)


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
    if not deal_is_stored(deal_id):
        return 0  # settled already (by an earlier run or another task's batch): never undone
    batch = settings.SETTLEMENT_BATCH
    with transaction.atomic():
        locking = Game.objects.select_for_update(of=("self",), skip_locked=True)
        mine = locking.filter(deals__pk=deal_id).first()
        games = [mine] if mine is not None else []
        settled = 0
        if batch > 1:
            try:
                with transaction.atomic():  # a savepoint: its rollback also frees those locks
                    others = games_with_stored_deals_locked(exclude=mine, limit=batch - 1)
                    settled = games_settle(games=games + others)
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
    if mine is None and deal_is_stored(deal_id):
        raise GameBusy(f"the game of deal {deal_id} is locked by another transaction")
    return settled


def deals_settle(*, deal_ids: list[int]) -> int:
    """Settle the games of deals stored together (a batch post): SETTLEMENT_BATCH games per
    transaction and ledger call, their locks taken with `SKIP LOCKED`. Safe to run any number of
    times. One game whose settlement fails is left stored (logged; the sweep tries it again)
    without holding up the others; if a game was locked by someone else and its deal is still
    stored afterwards, `GameBusy`: the task is retried and settles what is left.
    """
    pending = _games_with_stored(deal_ids)
    settled, skipped = 0, set()
    for start in range(0, len(pending), settings.SETTLEMENT_BATCH):
        chunk = pending[start : start + settings.SETTLEMENT_BATCH]
        with transaction.atomic():
            locking = Game.objects.select_for_update(of=("self",), skip_locked=True)
            games = list(locking.filter(pk__in=chunk).order_by("pk"))
            skipped |= set(chunk) - {g.pk for g in games}
            settled += _settle_apart_on_failure(games)
    if skipped & set(_games_with_stored(deal_ids)):
        raise GameBusy(f"{len(skipped)} games of the batch were locked by another transaction")
    return settled


def _games_with_stored(deal_ids: list[int]) -> list[int]:
    stored = Deal.objects.filter(pk__in=deal_ids, status=Deal.Status.STORED)
    return sorted(set(stored.values_list("game_id", flat=True)))


def _settle_apart_on_failure(games: list[Game]) -> int:
    """Settle these locked games together; if that fails, each on its own, so that one bad deal
    holds up no one else's (a game that fails alone too is logged and stays stored)."""
    try:
        with transaction.atomic():  # a savepoint: the failed attempt leaves nothing behind
            return games_settle(games=games)
    except Retryable:
        raise
    except Exception:
        logger.exception("batch settlement of %s games failed; settling each alone", len(games))
    settled = 0
    for game in games:
        game.refresh_from_db()  # the failed attempt scored it in memory
        try:
            with transaction.atomic():
                settled += games_settle(games=[game])
        except Retryable:
            raise
        except Exception:
            logger.exception("settlement of game %s failed; its deals stay stored", game.pk)
    return settled


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
    seated = seating(sorted({d.game_id for d in deals}))
    seats = seated.seats
    fee_id = fee_account_id()
    release = Release()
    spans: list[tuple[Deal, int, int]] = []
    for deal in deals:
        game = by_pk[deal.game_id]
        first = len(release.requests)
        if game.status == Game.Status.OPEN:
            release.add(_score(game, seats[game.pk], seated.accounts, deal, fee_id))
        spans.append((deal, first, len(release.requests)))
    posted = release_post(release)
    links = [(deal.pk, p.transfer_id) for deal, first, last in spans for p in posted[first:last]]
    settlement_write_back(
        [by_pk[pk] for pk in seats],
        [s for game_seats in seats.values() for s in game_seats],
        deals,
        links,
    )
    metrics.deals_settled(deals)
    return len(deals)


def unsettled_deal_ids(*, older_than: timedelta) -> list[int]:
    """Deals stored but not settled for a while: their message was lost (or is very late)."""
    cutoff = timezone.now() - older_than
    deals = Deal.objects.filter(status=Deal.Status.STORED, created_at__lt=cutoff)
    return list(deals.order_by("created_at").values_list("pk", flat=True)[:1000])


def _score(
    game: Game,
    seats: list[GamePlayer],
    accounts: dict[int, dict[str, int]],
    deal: Deal,
    fee_id: int,
) -> Release:
    """Score one deal, update the standings by its format; what must be posted if it ends the
    game."""
    terms = game.game_terms
    fmt = format_of(terms.format)
    score = fmt.score_deal(terms, deal.wild_joker, deal.results)
    game.deals_played += 1
    deal.points = score.points
    deal.discrepancies = score.discrepancies(deal.results)
    table = Table(terms, seats, game.collected, game.deals_played)
    result = fmt.apply_deal(table, deal.results, score.points)
    if result is None:
        return Release()
    _check_adds_up(game, result)
    release = settlement_release(
        game=game, seats=seats, accounts=accounts, settlement=result, fee_id=fee_id
    )
    game.status = Game.Status.FINISHED
    game.outcome = "won"
    game.finished_at = timezone.now()
    return release


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
    seated = seating([game.pk])
    seats = seated.seats[game.pk]
    release = settlement_release(
        game=game, seats=seats, accounts=seated.accounts, settlement=result, fee_id=None
    )
    posted = release_post(release)
    game.status = status
    game.outcome = outcome
    game.finished_at = timezone.now()
    settlement_write_back([game], seats, [], [])
    return [p.transfer_id for p in posted]
