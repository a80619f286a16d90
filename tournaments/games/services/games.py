"""Rejoining a pool, an agreed split, cancelling: each one database transaction with the game
row locked (`select_for_update`), so they serialize with its deal settlements (opening a game:
`tournaments.games.services.opening`). What a format allows is the format's to say
(`tournaments.games.formats`). Opening a cash game and buying back into one need real money
offered to the players and none of them self-excluded; splits, cancels and settlements of games
already open always go ahead."""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet

from rummy_ledger.api.models import ApiClient
from tournaments.errors import (
    GameErrorCode,
    GameNotFound,
    GameNotOpen,
    NotAllowed,
    OpenRejected,
)
from tournaments.games.formats import Table, format_of
from tournaments.games.services import settlement
from tournaments.games.services.escrow import contributions, entries_collect
from tournaments.leaderboards.services.points import game_points_take_back
from tournaments.models import Game, GamePlayer, GameTemplate
from tournaments.payouts import cancel_settlement
from tournaments.references import game_pk_of
from wallets.errors import LedgerBusy, WalletErrorCode
from wallets.models import CHIPS, Player
from wallets.services.client_guards import escrow_cap_take, players_seatable_check
from wallets.services.protection import self_exclusion_check
from wallets.services.real_money import real_money_check
from wallets.services.wind_down import UNREAD, Unread, wind_down_check


def templates_active() -> QuerySet[GameTemplate]:
    return GameTemplate.objects.filter(active=True).order_by("slug")


def game_get(*, client: ApiClient, game_id: str, lock: bool = False) -> Game:
    """A game of this client; another server's game does not exist for it (404)."""
    games = Game.objects.filter(client=client, game_id=game_id)
    if lock:
        games = games.select_for_update()
    game = games.first()
    if game is None:
        raise GameNotFound(f"no game {game_id!r}")
    return game


def seats_of(game: Game) -> list[GamePlayer]:
    return list(game.players.select_related("player").order_by("seat"))


def table_of(game: Game, seats: list[GamePlayer]) -> Table:
    return Table(game.game_terms, seats, game.collected, game.deals_played)


@transaction.atomic
def game_rejoin(*, client: ApiClient, game_id: str, player: str) -> Game:
    """An eliminated player buys back in, paying the entry again into the pool, when the
    format allows it (pool: while every remaining score is below the bound)."""
    game = _open_locked(client, game_id)
    terms = game.game_terms
    fmt = format_of(terms.format)
    if not fmt.allows_rejoin(terms):
        raise NotAllowed("this game allows no rejoin", code=GameErrorCode.REJOIN_NOT_ALLOWED)
    seats = seats_of(game)
    seat = next((s for s in seats if s.player.external_id == player), None)
    if seat is None:
        raise OpenRejected(
            f"{player!r} is not a player of this game", code=WalletErrorCode.UNKNOWN_PLAYER
        )
    score = fmt.rejoin_score(table_of(game, seats), seat)
    cash_play_check(terms.currency, [seat.player])
    players_seatable_check(client=client, players=[seat.player])  # paid again: paired still
    escrow_cap_take(client=client, amount=terms.stake, currency=game.currency)
    game.collected += entries_collect(
        game=game, seats=[seat], amount=terms.stake, entry_no=seat.entries + 1
    )
    seat.entries += 1
    seat.rejoins += 1
    seat.score = score
    seat.eliminated = False
    seat.save(update_fields=["entries", "rejoins", "score", "eliminated", "contributed"])
    game.save(update_fields=["collected"])
    return game


@transaction.atomic
def game_split(*, client: ApiClient, game_id: str) -> Game:
    """The remaining players agree to share the prize, when the format allows it (pool)."""
    game = _open_locked(client, game_id)
    fmt = format_of(game.game_terms.format)
    if not fmt.allows_split(game.game_terms):
        raise NotAllowed("this game allows no split", code=GameErrorCode.SPLIT_NOT_ALLOWED)
    result = fmt.split(table_of(game, seats_of(game)))
    settlement.game_finish(game=game, result=result, outcome="split")
    return game


@transaction.atomic
def game_cancel(*, client: ApiClient, game_id: str) -> Game:
    """Abort a game that has not finished: everything in escrow goes back where it came from."""
    game = _open_locked(client, game_id)
    seats = seats_of(game)
    paid = {s.player.external_id: sum(a for _, a in contributions(s)) for s in seats}
    settlement.game_finish(
        game=game,
        result=cancel_settlement(contributed=paid),
        outcome="cancelled",
        status=Game.Status.CANCELLED,
    )
    return game


def cash_games_open() -> QuerySet[Game]:
    return Game.objects.filter(status=Game.Status.OPEN).exclude(currency=CHIPS)


def cash_games_cancel() -> int:
    """The wind-down's cancel step (`wallets.services.wind_down`): every cash game still open
    is cancelled with full refunds, each in its own transaction; one that is busy (a deal
    settling) or finished meanwhile is left to the next run. Returns how many were cancelled."""
    cancelled = 0
    for game in cash_games_open().select_related("client").order_by("pk"):
        try:
            game_cancel(client=game.client, game_id=game.game_id)
        except (LedgerBusy, GameNotOpen):
            continue
        cancelled += 1
    return cancelled


def game_mark_reversed(*, reference: str) -> None:
    """A game whose reversal was approved (every transfer it moved undone) says so: `reversed`,
    and the leaderboards that counted it take its points back.
    Any other reference is none of the games' business."""
    game_pk = game_pk_of(reference)
    if game_pk is not None:
        Game.objects.filter(pk=game_pk).exclude(status=Game.Status.OPEN).update(
            status=Game.Status.REVERSED
        )
        game_points_take_back(reference=reference)  # its leaderboard points, too


def cash_play_check(
    currency: str,
    players: list[Player],
    exclusions: dict[int, list[str]] | None = None,
    wind_down: int | Unread | None = UNREAD,
) -> None:
    """A cash game or tournament (or a buy-back into one) needs real money offered to every
    player, none of them self-excluded, and no wind-down closing the real-money book; chips
    games need none of it. `exclusions`: the players' self-exclusion values, and `wind_down`:
    the unfinished wind-down's id (or None), when the caller read them already."""
    if currency == CHIPS:
        return
    real_money_check(players=players)
    wind_down_check("cash games or tournament entries", wind_down)
    self_exclusion_check(players=players, values=exclusions)


def _open_locked(client: ApiClient, game_id: str) -> Game:
    game = game_get(client=client, game_id=game_id, lock=True)
    settlement.games_settle(games=[game])  # its stored deals first: the standings now
    if game.status != Game.Status.OPEN:
        raise GameNotOpen(f"game {game_id!r} is {game.status}", details={"status": game.status})
    return game
