"""A game's opening on the API's hot path: two round trips.

One read of everything the checks need (`queries.game_open_view`: the template, a game already
holding the id, the players with their accounts and self-exclusions, the Idempotency-Key's
record, the new ids), the checks and the entry plan in Python, then ONE multi-statement write
that PostgreSQL runs as one transaction: the key claimed with the answer (`idempotency_claim`,
strict: a taken key rolls everything back), the escrow account, the game, the entries
(`ledger_post_batch`, which locks the accounts and refuses overdrafts itself) and the seats.
Whatever this path does not cover takes `games.game_open`, one locked transaction as before: a
player not registered yet (or an id that is none), bonus in a wallet that an entry may take
(its lots are locked and spent there), a client with pairings or an hourly escrow cap.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, transaction
from django.db.models import Model
from django.db.models.sql import InsertQuery
from djmoney.money import Money

from rummy_ledger.api.models import ApiClient
from rummy_ledger.keyed import CLAIM_WAIT, Keyed, KeyTaken
from tournaments.games.formats import format_of
from tournaments.games.queries import Candidate, OpenView, game_open_view
from tournaments.games.services import games
from tournaments.games.services.escrow import entries_short, entry_plans, entry_requests
from tournaments.games.terms import GameTerms
from tournaments.models import Game, GamePlayer
from tournaments.payouts import ZERO
from wallets import references
from wallets.errors import InsufficientFunds
from wallets.models import BUCKET_CURRENCY, CASH, Account, Bucket
from wallets.services.transfers import TransferRequest, ledger_error, transfers_statement

KEY_TAKEN = "RL101"  # idempotency_claim, strict
UNIQUE_VIOLATION = "23505"


def game_open(
    *,
    client: ApiClient,
    game_id: str,
    template_slug: str,
    players: list[str],
    keyed: Keyed | None = None,
) -> Game:
    """`games.game_open`, in two round trips where it can. With `keyed`, the key is claimed
    with the answer in the opening's transaction; a key already used raises `KeyTaken`."""
    seen = game_open_view(
        client_id=client.pk,
        game_id=game_id,
        template_slug=template_slug,
        players=players,
        key=keyed and keyed.key,
    )
    if seen.key_record is not None:
        raise KeyTaken("taken", *seen.key_record)
    terms = games.open_terms(seen.template, template_slug, players)
    if seen.existing_status is not None:
        raise games.game_exists(client, game_id)
    if not _covered(seen, client, terms, players):
        return games.game_open(client=client, game_id=game_id, template_slug=template_slug,
                               players=players, keyed=keyed)  # fmt: skip
    game, candidates, seats = _game_new(seen, client, game_id, terms, players)
    requests = _entries(game, seats, candidates, terms)
    game.collected = terms.stake * len(seats)
    statements = _statements(seen, client, game, seats, requests, keyed)
    _write(statements, client, game, terms, keyed)
    return game


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


def _entries(
    game: Game, seats: list[GamePlayer], candidates: list[Candidate], terms: GameTerms
) -> list[TransferRequest]:
    """The entry transfers, once the players may play for money (cash) and every one of them
    has the stake in the buckets the terms take it from."""
    games.cash_play_check(
        terms.currency,
        [c.player for c in candidates],
        exclusions={c.player.pk: c.exclusions for c in candidates},
    )
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
    keyed: Keyed | None,
) -> list[tuple[str, list]]:
    """The opening's write, in order: the key claimed with the answer (with `keyed`), the escrow
    account, the game, the entries, the seats."""
    escrow = Account(
        id=seen.escrow_pk,
        kind=Account.Kind.ESCROW,
        code=references.escrow_account_code(client.pk, game.game_id),
        balance=Money(ZERO, game.currency),
    )
    statements = [_insert(Account, [escrow]), _insert(Game, [game]),
                  transfers_statement(requests), _insert(GamePlayer, seats)]  # fmt: skip
    if keyed is not None:
        status_code, body = keyed.record((game, seats))
        claim = "SELECT 1 FROM idempotency_claim(%s, %s, %s, %s, %s, %s, true)"
        params = [client.pk, keyed.key, keyed.request_hash, status_code, body, CLAIM_WAIT]
        statements.insert(0, (claim, params))
    return statements


def _covered(seen: OpenView, client: ApiClient, terms: GameTerms, players: list[str]) -> bool:
    """Whether this opening is one the fast path takes (see the module's docstring)."""
    if client.paired_players_only or (client.hourly_escrow_cap is not None and
                                      terms.currency == CASH):  # fmt: skip
        return False
    for external_id in players:
        candidate = seen.players.get(external_id)
        if candidate is None or len(candidate.accounts) != len(BUCKET_CURRENCY):
            return False
        bonus = candidate.accounts[Bucket.BONUS].balance.amount
        if Bucket.BONUS in terms.entry_buckets and bonus > 0:
            return False
    return True


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


def _write(
    statements: list[tuple[str, list]],
    client: ApiClient,
    game: Game,
    terms: GameTerms,
    keyed: Keyed | None,
) -> None:
    """Send the statements in one round trip: PostgreSQL runs them as one transaction (in a
    caller's transaction, a test's, under a savepoint)."""
    sql = ";\n".join(s for s, _ in statements)
    params = [p for _, ps in statements for p in ps]
    guard = transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext()
    try:
        with guard, connection.cursor() as cursor:
            cursor.execute(sql, params)
    except DatabaseError as exc:
        raise _refusal(exc, client, game, terms, keyed) from exc


def _refusal(
    exc: DatabaseError, client: ApiClient, game: Game, terms: GameTerms, keyed: Keyed | None
) -> Exception:
    sqlstate = getattr(exc.__cause__, "sqlstate", None)
    if sqlstate == KEY_TAKEN and keyed is not None:
        outcome = exc.__cause__.diag.message_primary
        record = _record(client, keyed.key) if outcome == "taken" else (None, None, None)
        return KeyTaken(outcome, *record)
    if sqlstate == UNIQUE_VIOLATION:  # the game id (its escrow's code), taken meanwhile
        return games.game_exists(client, game.game_id)
    error = ledger_error(exc)
    if isinstance(error, InsufficientFunds):
        return entries_short(error, terms.stake, game)
    return error


def _record(client: ApiClient, key: str) -> tuple[str, int, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT request_hash, status_code, body FROM api_idempotencyrecord"
            " WHERE client_id = %s AND key = %s",
            [client.pk, key],
        )
        return cursor.fetchone()
