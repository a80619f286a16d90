"""A game's opening: one read, the checks in Python, one write, in one transaction.

One read of everything the checks need (`queries.game_open_view`: the template, a game already
holding the id, the players with their accounts, self-exclusions and whether a payments client
paired with the opening's client reported them, the new ids, a wind-down not finished). A player
not registered yet is registered (`players_get_or_create`) and read again. Then the checks and
the entry plan in Python; the client's hourly escrow cap is taken (`escrow_cap_take`: it locks
the client's row until the transaction ends, so concurrent openings of one client count each
other), the bonus lots an entry takes are locked and spent (`escrow.entry_plans`, `entry_legs`),
and ONE multi-statement write sends the escrow account, the game, the entries
(`ledger_post_batch`, which locks the accounts and refuses overdrafts itself) and the seats. A
refusal rolls all of it back. The API layer claims the Idempotency-Key and records the answer
around it.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import DEFAULT_DB_ALIAS, DatabaseError, IntegrityError, connection, transaction
from django.db.models import Model
from django.db.models.sql import InsertQuery
from djmoney.money import Money

from rummy_ledger.api.models import ApiClient
from tournaments.errors import GameErrorCode, GameExists, OpenRejected
from tournaments.games.formats import format_of
from tournaments.games.queries import Candidate, OpenView, game_open_view
from tournaments.games.services.escrow import entries_short, entry_plans, entry_requests
from tournaments.games.services.games import cash_play_check
from tournaments.games.terms import GameTerms
from tournaments.models import Game, GamePlayer, GameTemplate
from tournaments.payouts import ZERO
from wallets import references
from wallets.errors import InsufficientFunds
from wallets.models import BUCKET_CURRENCY, Account
from wallets.services.client_guards import escrow_cap_take, players_seatable_check
from wallets.services.players import players_get_or_create
from wallets.services.transfers import TransferRequest, ledger_error, transfers_statement

UNIQUE_VIOLATION = "23505"


def game_open(
    *, client: ApiClient, game_id: str, template_slug: str, players: list[str]
) -> tuple[Game, list[GamePlayer]]:
    """Open a game and collect every player's stake (points: maximum loss) into its escrow, all
    of them or none (the refusal names everyone short). Returns the game and its seats."""
    # No savepoint in a caller's transaction (the API layer's): a refusal rolls it back whole,
    # and nothing is read after a failed statement.
    try:
        with transaction.atomic(savepoint=False):
            return _opened(client, game_id, template_slug, players)
    except IntegrityError as exc:
        if getattr(exc.__cause__, "sqlstate", None) != UNIQUE_VIOLATION:
            raise
        # The id (its escrow's code) was taken between the read and the write, by an opening
        # that committed meanwhile: the game that holds it is open.
        raise _exists(game_id, Game.Status.OPEN) from exc


def _opened(
    client: ApiClient, game_id: str, template_slug: str, players: list[str]
) -> tuple[Game, list[GamePlayer]]:
    seen = game_open_view(
        client_id=client.pk, game_id=game_id, template_slug=template_slug, players=players
    )
    terms = open_terms(seen.template, template_slug, players)
    if seen.existing_status is not None:
        raise game_exists(client, game_id)
    unknown = [p for p in players if not _registered(seen.players.get(p))]
    if unknown:
        players_get_or_create(external_ids=unknown)
        seen = game_open_view(
            client_id=client.pk, game_id=game_id, template_slug=template_slug, players=players
        )
    game, candidates, seats = _game_new(seen, client, game_id, terms, players)
    _seatable_check(client, terms, candidates, seen.wind_down)
    escrow_cap_take(client=client, amount=terms.stake * len(seats), currency=terms.currency)
    requests = _entries(game, seats, candidates, terms)
    game.collected = terms.stake * len(seats)
    _write(_statements(seen, client, game, seats, requests), game, terms)
    return game, seats


def open_terms(template: GameTemplate | None, template_slug: str, players: list[str]) -> GameTerms:
    """The terms a game opens with, once the template and the table are checked."""
    if template is None:
        raise OpenRejected(
            f"no active template {template_slug!r}", code=GameErrorCode.UNKNOWN_TEMPLATE
        )
    if len(set(players)) != len(players):
        raise OpenRejected("a player is listed twice", details={"players": players})
    if not 2 <= len(players) <= template.seats:
        raise OpenRejected(
            f"this table seats 2 to {template.seats} players, got {len(players)}",
            details={"seats": template.seats},
        )
    return template.game_terms()


def game_exists(client: ApiClient, game_id: str) -> GameExists:
    """A game id is used once: the refusal says what became of the game that holds it."""
    status = Game.objects.filter(client=client, game_id=game_id).values_list("status", flat=True)
    return _exists(game_id, status.first() or Game.Status.OPEN)  # not committed yet: open


def _exists(game_id: str, state: str) -> GameExists:
    return GameExists(
        f"game {game_id!r} exists already and is {state}; a game id is used once",
        details={"game_id": game_id, "status": state},
    )


def _registered(candidate: Candidate | None) -> bool:
    """Whether the read found the player with every wallet account."""
    return candidate is not None and len(candidate.accounts) == len(BUCKET_CURRENCY)


def _game_new(
    seen: OpenView, client: ApiClient, game_id: str, terms: GameTerms, players: list[str]
) -> tuple[Game, list[Candidate], list[GamePlayer]]:
    """The game (not saved, its id drawn by the read), its candidates and seats in order."""
    game = Game(
        id=seen.game_pk,
        client=client,
        game_id=game_id,
        template=seen.template,
        escrow_id=seen.escrow_pk,
        format=terms.format,
        currency=terms.currency,
        terms=terms.to_json(),
    )
    start = format_of(terms.format).opening_score(terms)
    candidates = [seen.players[external_id] for external_id in players]
    seats = [
        GamePlayer(game=game, player=c.player, seat=n, score=start)
        for n, c in enumerate(candidates, start=1)
    ]
    return game, candidates, seats


def _seatable_check(
    client: ApiClient, terms: GameTerms, candidates: list[Candidate], wind_down: int | None
) -> None:
    """The players may play for money (cash), and the client may seat them (its pairings)."""
    players = [c.player for c in candidates]
    exclusions = {c.player.pk: c.exclusions for c in candidates}
    cash_play_check(terms.currency, players, exclusions=exclusions, wind_down=wind_down)
    paired = [c.player.pk for c in candidates if c.paired]
    players_seatable_check(client=client, players=players, paired=paired)


def _entries(
    game: Game, seats: list[GamePlayer], candidates: list[Candidate], terms: GameTerms
) -> list[TransferRequest]:
    """The entry transfers, once every player has the stake in the buckets the terms take it
    from (the bonus lots they take are locked and spent here)."""
    plans = entry_plans(
        player_ids=[c.player.pk for c in candidates],
        order=terms.entry_buckets,
        amount=terms.stake,
        cap_percent=terms.bonus_cap_percent,
        accounts={(c.player.pk, b): a for c in candidates for b, a in c.accounts.items()},
    )
    return entry_requests(game=game, seats=seats, plans=plans, amount=terms.stake, entry_no=1)


def _statements(
    seen: OpenView,
    client: ApiClient,
    game: Game,
    seats: list[GamePlayer],
    requests: list[TransferRequest],
) -> list[tuple[str, list]]:
    """The opening's write, in order: the escrow account, the game, the entries, the seats."""
    escrow = Account(
        id=seen.escrow_pk,
        kind=Account.Kind.ESCROW,
        code=references.escrow_account_code(client.pk, game.game_id),
        balance=Money(ZERO, game.currency),
    )
    return [_insert(Account, [escrow]), _insert(Game, [game]),
            transfers_statement(requests), _insert(GamePlayer, seats)]  # fmt: skip


def _insert(model: type[Model], objs: Sequence[Model]) -> tuple[str, list]:
    """The INSERT of `objs` as Django's bulk_create writes it, not sent (with their ids when
    they have them)."""
    fields = model._meta.concrete_fields
    if objs[0].pk is None:
        fields = [f for f in fields if not f.primary_key]
    query = InsertQuery(model)
    query.insert_values(fields, objs)
    # by alias: the compiler then holds the connection itself, not `connection`, a proxy whose
    # every attribute is looked up again per thread (130 times an opening)
    [(sql, params)] = query.get_compiler(using=DEFAULT_DB_ALIAS).as_sql()
    return sql, list(params)


def _write(statements: list[tuple[str, list]], game: Game, terms: GameTerms) -> None:
    """Send the statements in one round trip, in the opening's transaction."""
    sql = ";\n".join(s for s, _ in statements)
    params = [p for _, ps in statements for p in ps]
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
    except DatabaseError as exc:
        if getattr(exc.__cause__, "sqlstate", None) == UNIQUE_VIOLATION:
            raise  # the game id, taken meanwhile: `game_open` says so once rolled back
        raise _refusal(exc, game, terms) from exc


def _refusal(exc: DatabaseError, game: Game, terms: GameTerms) -> Exception:
    error = ledger_error(exc)
    if isinstance(error, InsufficientFunds):
        return entries_short(error, terms.stake, game)
    return error
