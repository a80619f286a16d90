"""Opening a game, rejoining a pool, an agreed split, cancelling: each one database transaction
with the game row locked (`select_for_update`), so they serialize with its deal settlements."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from rummy_ledger.errors import Conflict, DomainError, NotFound
from tournaments import rummy
from tournaments.models import Format, Game, GamePlayer, GameTemplate, SplitPolicy
from tournaments.payouts import cancel_settlement, drops_left, split_settlement
from tournaments.services import settlement
from tournaments.services.escrow import contributions, entries_collect, escrow_create
from tournaments.services.terms import POOL, game_ruleset, money, template_terms
from wallets.models import ApiClient
from wallets.services import player_get_or_create


class GameNotFound(NotFound):
    code = "game_not_found"


class GameExists(Conflict):
    code = "game_exists"


class GameNotOpen(Conflict):
    code = "game_not_open"


class NotAllowed(Conflict):
    code = "not_allowed"


class OpenRejected(DomainError):
    code = "invalid_players"
    status = 422


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


@transaction.atomic
def game_open(*, client: ApiClient, game_id: str, template_slug: str, players: list[str]) -> Game:
    """Open a game and collect every player's entry (points: maximum loss) into its escrow."""
    template = GameTemplate.objects.filter(slug=template_slug, active=True).first()
    if template is None:
        raise OpenRejected(
            f"no active template {template_slug!r}", code="unknown_template", details={}
        )
    if len(set(players)) != len(players):
        raise OpenRejected("a player is listed twice", details={"players": players})
    if not 2 <= len(players) <= template.seats:
        raise OpenRejected(
            f"this table seats 2 to {template.seats} players, got {len(players)}",
            details={"seats": template.seats},
        )
    terms = template_terms(template)
    try:
        with transaction.atomic():
            escrow = escrow_create(code=f"escrow:{client.pk}:{game_id}", currency=template.currency)
    except IntegrityError as exc:
        raise GameExists(f"game {game_id!r} is already open") from exc
    game = Game.objects.create(
        client=client,
        game_id=game_id,
        template=template,
        escrow=escrow,
        format=template.format,
        currency=template.currency,
        terms=terms,
    )
    start = 0
    if template.format == Format.DEALS:
        start = game_ruleset(terms).cap * terms["deals"]
    seats = []
    for n, external_id in enumerate(players, start=1):
        seat = GamePlayer(
            game=game, player=player_get_or_create(external_id=external_id), seat=n, score=start
        )
        seats.append(seat)
    game.collected = entries_collect(
        game=game, seats=seats, amount=money(terms, "stake"), entry_no=1
    )
    GamePlayer.objects.bulk_create(seats)
    game.save(update_fields=["collected"])
    return game


@transaction.atomic
def game_rejoin(*, client: ApiClient, game_id: str, player: str) -> Game:
    """Pool: an eliminated player buys back in while every remaining score is below the bound,
    paying the entry again into the pool, and starts at the highest remaining score + 1."""
    game = _open_locked(client, game_id)
    if game.format not in POOL or not game.terms["rejoin_allowed"]:
        raise NotAllowed("this game allows no rejoin", code="rejoin_not_allowed")
    seats = seats_of(game)
    seat = next((s for s in seats if s.player.external_id == player), None)
    if seat is None:
        raise OpenRejected(f"{player!r} is not a player of this game", code="unknown_player")
    if not seat.eliminated:
        raise NotAllowed(f"{player} is still in the game", code="not_eliminated")
    remaining = [s.score for s in seats if not s.eliminated]
    rules = game_ruleset(game.terms)
    if not rummy.can_rejoin(remaining, rules):
        raise NotAllowed(
            f"rejoin is closed: a remaining score has reached {rules.rejoin_below}",
            code="rejoin_closed",
            details={"scores": remaining},
        )
    stake = money(game.terms, "stake")
    game.collected += entries_collect(
        game=game, seats=[seat], amount=stake, entry_no=seat.entries + 1
    )
    seat.entries += 1
    seat.rejoins += 1
    seat.score = rummy.rejoin_score(remaining)
    seat.eliminated = False
    seat.save(update_fields=["entries", "rejoins", "score", "eliminated", "contributed"])
    game.save(update_fields=["collected"])
    return game


@transaction.atomic
def game_split(*, client: ApiClient, game_id: str) -> Game:
    """Pool: the remaining players agree to share the prize (equal, or by drops left + 1)."""
    game = _open_locked(client, game_id)
    policy = game.terms["split_policy"]
    if game.format not in POOL or policy == SplitPolicy.NONE:
        raise NotAllowed("this game allows no split", code="split_not_allowed")
    seats = seats_of(game)
    remaining = [s for s in seats if not s.eliminated]
    if len(remaining) < 2:
        raise NotAllowed("a split needs at least two remaining players", code="split_not_allowed")
    rules = game_ruleset(game.terms)
    weights = {
        s.player.external_id: (
            1
            if policy == SplitPolicy.EQUAL
            else drops_left(s.score, rules.pool_limit, rules.first_drop_points) + 1
        )
        for s in remaining
    }
    result = split_settlement(
        prize=game.collected, weights=weights, fee_percent=money(game.terms, "fee_percent")
    )
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


def _open_locked(client: ApiClient, game_id: str) -> Game:
    game = game_get(client=client, game_id=game_id, lock=True)
    settlement.pending_settle(game=game)
    if game.status != Game.Status.OPEN:
        raise GameNotOpen(f"game {game_id!r} is {game.status}", details={"status": game.status})
    return game
