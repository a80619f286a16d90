"""Settling stored deals. The stored deal is the settlement queue: `waiting_settle`, the body of
the Celery task `tournaments.tasks.settle_waiting`, claims games with stored deals and settles
them; a message only wakes a worker (a lost one is made up by beat's wake, a duplicate finds
nothing left to do).

`games_settle` is the one settlement function: in ONE database transaction with the games' rows
locked, it settles, in deal order, every stored deal of each game (so a deal is never scored
before the one before it), updates the standings, posts the money, counts the games it finished
for the leaderboards (`tournaments.leaderboards.services.points`, one statement a batch) and
marks the deals settled.
It is called by `waiting_settle` and, for one game, by the requests that change a game under its
lock (rejoin, split, cancel, a deal posted on a game with deals waiting). A deal already settled
is not stored any more under the lock, so it is settled once however often and wherever the
settlement runs. The ledger's idempotency keys (`game:<pk>:settlement`, `game:<pk>:refunds`) are
the second line of defence. How a deal changes the standings and what a finished game pays is the
format's to say.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from rummy_ledger.errors import Retryable
from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.record import Happened, event_record, events_record
from tournaments import metrics
from tournaments.games.formats import Table, format_of
from tournaments.games.queries import games_with_stored_deals_locked, seating
from tournaments.games.services.escrow import (
    Release,
    fee_account_id,
    release_post,
    settlement_release,
)
from tournaments.games.services.write_back import settlement_write_back
from tournaments.leaderboards.services.points import games_points_accrue
from tournaments.models import Deal, DealTransfer, Game, GamePlayer
from tournaments.payouts import Settlement

logger = logging.getLogger(__name__)


def waiting_settle() -> bool:
    """Settle games with stored deals, oldest stored deal first: SETTLEMENT_BATCH games a
    transaction (claimed with `SKIP LOCKED`: a game another transaction holds is not waited for,
    that transaction settles it or a later run does), for at most SETTLEMENT_RUN_TRANSACTIONS
    transactions. Safe to run any number of times, on any number of workers at once. True when
    the run stopped at its bound with games perhaps left: the task then wakes the next run."""
    for _ in range(settings.SETTLEMENT_RUN_TRANSACTIONS):
        with transaction.atomic():
            games = games_with_stored_deals_locked(
                skip=_failing.skipped(), limit=settings.SETTLEMENT_BATCH
            )
            _settle_apart_on_failure(games)
        if len(games) < settings.SETTLEMENT_BATCH:
            return False
    return True


class Failing:
    """Rows whose settlement failed on their own (a bug, not contention) in this process: not
    claimed again for SETTLEMENT_FAILED_RETRY_SECONDS, so every wake does not retry them at once
    (they stay stored; reconciliation and `rummy_deals_unsettled_oldest_seconds` report them)."""

    def __init__(self) -> None:
        self._until: dict[int, float] = {}

    def add(self, pk: int) -> None:
        self._until[pk] = time.monotonic() + settings.SETTLEMENT_FAILED_RETRY_SECONDS

    def skipped(self) -> list[int]:
        now = time.monotonic()
        self._until = {pk: until for pk, until in self._until.items() if until > now}
        return sorted(self._until)


_failing = Failing()


def _settle_apart_on_failure(games: list[Game]) -> int:
    """Settle these locked games together; if that fails, each on its own, so that one bad deal
    holds up no one else's."""
    if len(games) <= 1:
        return sum(_settle_alone(game) for game in games)
    try:
        with transaction.atomic():  # a savepoint: the failed attempt leaves nothing behind
            return games_settle(games=games)
    except Retryable:
        raise
    except Exception:
        logger.exception("batch settlement of %s games failed; settling each alone", len(games))
    for game in games:
        game.refresh_from_db()  # the failed attempt scored it in memory
    return sum(_settle_alone(game) for game in games)


def _settle_alone(game: Game) -> int:
    """Settle one locked game; when that fails, it is logged, stays stored and is left alone for
    a while (`Failing`)."""
    try:
        with transaction.atomic():
            return games_settle(games=[game])
    except Retryable:
        raise
    except Exception:
        logger.exception("settlement of game %s failed; its deals stay stored", game.pk)
        _failing.add(game.pk)
        return 0


def games_settle(*, games: list[Game]) -> int:
    """Settle, in deal order, every stored deal of these games (the caller holds their locks):
    score, standings, the money in one `transfers_post`, everything written back at once."""
    by_pk = {g.pk: g for g in games}
    # open games with no deal settled before: all their deals are the ones settled here
    fresh = {g.pk for g in games if g.status == Game.Status.OPEN and g.deals_played == 0}
    was_open = {g.pk for g in games if g.status == Game.Status.OPEN}
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
    now = timezone.now()
    settlement_write_back(
        [by_pk[pk] for pk in seats],
        [s for game_seats in seats.values() for s in game_seats],
        deals,
        links,
        settled_at=now,
    )
    closed = [by_pk[pk] for pk in sorted(was_open) if by_pk[pk].status != Game.Status.OPEN]
    games_points_accrue(games=closed, seats=seats)  # the leaderboards: one statement a batch
    for deal in deals:  # as written back
        deal.status, deal.settled_at = Deal.Status.SETTLED, now
    transfers: dict[int, list[int]] = {deal.pk: [] for deal in deals}
    for deal_pk, transfer_id in links:
        transfers[deal_pk].append(transfer_id)
    events_record(_settled_events(by_pk, was_open, fresh, seats, deals, transfers))
    metrics.deals_settled(deals)
    return len(deals)


@dataclass(frozen=True)
class DealSettled:
    """A deal as settlement wrote it: what its `deal.settled` event reports."""

    deal: Deal
    game_id: str  # the game server's id of its game
    transfers: list[int]

    @property
    def pk(self) -> int:
        return self.deal.pk


@dataclass(frozen=True)
class GameClosed:
    """A game as its closing wrote it, its seats and every deal (with the transfers each
    posted): what its `game.closed` or `game.cancelled` event reports."""

    game: Game
    seats: list[GamePlayer]
    deals: list[Deal]
    transfers: dict[int, list[int]]

    @property
    def pk(self) -> int:
        return self.game.pk


def game_closed_read(game: Game, seats: list[GamePlayer]) -> GameClosed:
    """The closing of a game whose earlier deals are not at hand: they are read (two queries)."""
    deals = list(Deal.objects.filter(game=game).order_by("deal_no"))
    transfers: dict[int, list[int]] = {deal.pk: [] for deal in deals}
    links = DealTransfer.objects.filter(deal__game=game).order_by("pk")
    for deal_pk, transfer_id in links.values_list("deal_id", "transfer_id"):
        transfers[deal_pk].append(transfer_id)
    return GameClosed(game, seats, deals, transfers)


def _settled_events(
    by_pk: dict[int, Game],
    was_open: set[int],
    fresh: set[int],
    seats: dict[int, list[GamePlayer]],
    deals: list[Deal],
    transfers: dict[int, list[int]],
) -> list[Happened]:
    """What a settlement tells the game servers: each deal settled, each game it closed, from
    what it holds (a game that had deals settled before reads them)."""
    events = [
        Happened(
            EventType.DEAL_SETTLED,
            by_pk[d.game_id].client_id,
            DealSettled(d, by_pk[d.game_id].game_id, transfers[d.pk]),
        )
        for d in deals
    ]
    by_game: dict[int, list[Deal]] = {}
    for deal in sorted(deals, key=lambda d: d.deal_no):
        by_game.setdefault(deal.game_id, []).append(deal)
    for pk, game in by_pk.items():
        if pk not in was_open or game.status == Game.Status.OPEN:
            continue
        if pk in fresh:
            closed = GameClosed(game, seats[pk], by_game[pk], transfers)
        else:
            closed = game_closed_read(game, seats[pk])
        events.append(Happened(EventType.GAME_CLOSED, game.client_id, closed))
    return events


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
    """Empty the escrow by `result` and close the game (split, cancel); caller holds the lock.
    A game finished so (a split) counts for the leaderboards as a settled one does."""
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
    games_points_accrue(games=[game], seats={game.pk: seats})  # a split counts; a cancel not
    closed = EventType.GAME_CANCELLED if status == Game.Status.CANCELLED else EventType.GAME_CLOSED
    event_record(closed, client_id=game.client_id, subject=game_closed_read(game, seats))
    return [p.transfer_id for p in posted]
