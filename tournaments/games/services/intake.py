"""Deal intake: a posted deal is checked and stored, and its settlement queued after the commit.

Everything is decided before anything is stored: a deal that fails a check is answered with a 4xx
and leaves no trace. The checks are the format's (`tournaments.games.formats`); the settlement task
(`tournaments.tasks.settle_waiting`, woken once the deal is committed) re-scores the stored deal
with the same deterministic engine.

The hot path takes two round trips: one read of everything the checks need
(`queries.deal_intake_view`), then one statement, `deal_intake_store`
(migrations/0012_deal_intake.pg.sql), that locks the game, re-confirms that state, claims the
request's Idempotency-Key with its answer (`rummy_ledger.keyed`) and inserts the deal. A game
with deals still waiting for settlement, or one that moved between the two, takes the full
path: one transaction that locks the game and settles its pending deals before checking. A batch
(`deals_check_store`) reads all its deals in one statement and stores the new ones in one more.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from typing import Any

from django.db import DatabaseError, connection, transaction

from rummy_ledger.api.models import ApiClient
from rummy_ledger.errors import DomainError
from rummy_ledger.keyed import CLAIM_WAIT, Keyed, KeyTaken, key_claim
from tournaments import metrics
from tournaments.errors import DealExists, GameNotFound, GameNotOpen
from tournaments.games.formats import format_of
from tournaments.games.queries import IntakeView, deal_intake_view, deal_intake_views
from tournaments.games.services.games import game_get, seats_of
from tournaments.games.services.settlement import pending_settle
from tournaments.games.terms import GameTerms
from tournaments.models import Deal, Game
from tournaments.tasks import settlement_wake

log = logging.getLogger(__name__)


def _payload_hash(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def deal_store(
    *, client: ApiClient, game_id: str, payload: dict[str, Any], keyed: Keyed | None = None
) -> tuple[Deal, bool]:
    """`deal_check_store`, and a settlement worker woken for a deal stored now (once committed:
    `AfterCommitTask.wake`)."""
    deal, created = deal_check_store(client=client, game_id=game_id, payload=payload, keyed=keyed)
    if created:
        settlement_wake()
    return deal, created


def deal_check_store(
    *, client: ApiClient, game_id: str, payload: dict[str, Any], keyed: Keyed | None = None
) -> tuple[Deal, bool]:
    """Check a posted deal (a parsed body) and store it, without queueing its settlement (the
    single post and the batch each queue theirs): (the deal, True when stored now). The same
    deal posted again (same number, same content) returns the stored one; another content under
    its number is refused (a `DomainError`). With `keyed`, the key is claimed with the answer in
    the deal's own transaction when the deal is stored now; a key already used raises `KeyTaken`
    before anything is checked or written. Inside a caller's transaction (a batch's, a test's)
    it runs under a savepoint, so a failure leaves the caller's transaction usable."""
    guard = transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext()
    with guard:
        return _check_store(client, game_id, payload, keyed)


def _check_store(
    client: ApiClient, game_id: str, payload: dict[str, Any], keyed: Keyed | None
) -> tuple[Deal, bool]:
    digest = _payload_hash(payload)
    seen = deal_intake_view(
        client_id=client.pk, game_id=game_id, deal_no=payload["deal_no"], key=keyed and keyed.key
    )
    if seen.key_record is not None:
        raise KeyTaken("taken", *seen.key_record)
    decided = _decided(seen, game_id, payload, digest)
    if decided is None:  # its game has deals waiting
        return _deal_store_locked(client, game_id, payload, digest, keyed)
    if decided.pk is not None:  # posted before with this content
        return decided, False
    stored = _store(seen, decided, client, keyed)
    if stored is None:  # the game moved since it was read
        return _deal_store_locked(client, game_id, payload, digest, keyed)
    decided.pk = stored
    metrics.deal_stored()
    return decided, True


def _decided(seen: IntakeView, game_id: str, payload: dict[str, Any], digest: str) -> Deal | None:
    """What the read says of a posted deal: the one stored before with this content (with its
    pk), a new one checked and ready to store (no pk), or None when it takes the full path (its
    game has deals waiting for settlement); a refusal is raised."""
    if seen.game_pk is None:
        raise GameNotFound(f"no game {game_id!r}")
    if seen.existing is not None:
        existing_hash, status, pk = seen.existing
        deal = Deal(id=pk, game_id=seen.game_pk, deal_no=payload["deal_no"], status=status)
        return _same_or_refused(deal, existing_hash, digest)
    if seen.pending:
        return None
    if seen.status != Game.Status.OPEN:
        raise GameNotOpen(f"game {game_id!r} is {seen.status}", details={"status": seen.status})
    return _checked(seen, payload, digest)


def deals_check_store(
    *, client: ApiClient, deals: list[tuple[str, dict[str, Any]]]
) -> list[tuple[Deal, bool] | DomainError | None]:
    """A batch's deals (game id, parsed body) in its order, in two round trips for all of them:
    one read (`queries.deal_intake_views`), the checks, and one statement that
    stores every new one (`deal_intake_store` for each, their games locked in id order). For
    each: (the deal, True when stored now), its refusal, or None for one the caller takes on
    its own with `deal_check_store` after these (its game's second deal in the batch, a game
    with deals waiting for settlement or that moved since the read; all of them when the store
    meets contention). Inside the caller's transaction; the store runs under a savepoint."""
    if not deals:
        return []
    views = deal_intake_views(client_id=client.pk, deals=[(g, p["deal_no"]) for g, p in deals])
    outcomes: list[tuple[Deal, bool] | DomainError | None] = [None] * len(deals)
    games, new = set(), {}
    for n, ((game_id, payload), seen) in enumerate(zip(deals, views, strict=True)):
        if game_id in games:
            continue  # after the earlier deal of its game, on its own
        games.add(game_id)
        try:
            decided = _decided(seen, game_id, payload, _payload_hash(payload))
        except DomainError as refused:
            outcomes[n] = refused
            continue
        if decided is None:
            continue  # its game has deals waiting: on its own
        if decided.pk is not None:
            outcomes[n] = decided, False
        else:
            new[n] = seen, decided
    for n, deal in _stored_together(new).items():
        outcomes[n] = deal, True
    return outcomes


def _stored_together(new: dict[int, tuple[IntakeView, Deal]]) -> dict[int, Deal]:
    """`deal_intake_store` for each new deal in one statement: those stored (by their place);
    none when the statement fails as a whole (the caller takes them one by one)."""
    if not new:
        return {}
    order = sorted(new, key=lambda n: new[n][0].game_pk)  # locks in one order: no deadlock
    rows = [new[n] for n in order]
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT s.outcome, s.deal_id FROM jsonb_to_recordset(%s::jsonb)"
                " u(n integer, game bigint, played integer, deal_no integer, wild_joker text,"
                " results jsonb, payload_hash text)"
                " CROSS JOIN LATERAL deal_intake_store(u.game, u.played, u.deal_no,"
                " u.wild_joker, u.results, u.payload_hash,"
                " NULL, NULL, NULL, NULL, NULL, NULL) s ORDER BY u.n",
                [json.dumps([
                    {"n": n, "game": seen.game_pk, "played": seen.deals_played,
                     "deal_no": deal.deal_no, "wild_joker": deal.wild_joker,
                     "results": deal.results, "payload_hash": deal.payload_hash}
                    for n, (seen, deal) in enumerate(rows)
                ])],
            )  # fmt: skip
            stored = cursor.fetchall()
    except DatabaseError as exc:  # contention (a lock held, a deadlock): one by one, each its own
        log.info("a batch's deals are stored one by one: %s", exc)
        return {}
    done = {}
    for n, (outcome, deal_id) in zip(order, stored, strict=True):
        if outcome == "stored":
            done[n] = new[n][1]
            done[n].pk = deal_id
    metrics.deal_stored(len(done))
    return done


def _checked(seen: IntakeView, payload: dict[str, Any], digest: str) -> Deal:
    terms = GameTerms.from_json(seen.terms)
    checked = format_of(terms.format).check_deal(
        terms=terms,
        players=[player for player, _ in seen.seats],
        eliminated=[player for player, eliminated in seen.seats if eliminated],
        expected_no=seen.deals_played + 1,
        payload=payload,
    )
    return Deal(
        game_id=seen.game_pk,
        deal_no=checked.deal_no,
        wild_joker=checked.wild_joker,
        results=checked.results,
        payload_hash=digest,
        status=Deal.Status.STORED,
    )


def _store(seen: IntakeView, deal: Deal, client: ApiClient, keyed: Keyed | None) -> int | None:
    """`deal_intake_store`: the deal's id, or None when the game moved since `seen`."""
    status_code, body = keyed.record(deal) if keyed else (None, None)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT * FROM deal_intake_store(%s, %s, %s, %s, %s::jsonb, %s,"
            " %s, %s, %s, %s, %s, %s)",
            [seen.game_pk, seen.deals_played, deal.deal_no, deal.wild_joker,
             json.dumps(deal.results), deal.payload_hash, client.pk, keyed and keyed.key,
             keyed and keyed.request_hash, status_code, body, CLAIM_WAIT],
        )  # fmt: skip
        outcome, deal_id, *record = cursor.fetchone()
    if outcome in ("taken", "in_flight"):
        raise KeyTaken(outcome, *record)
    return deal_id if outcome == "stored" else None


def _same_or_refused(existing: Deal, existing_hash: str, digest: str) -> Deal:
    if existing_hash == digest:
        return existing
    raise DealExists(
        f"deal {existing.deal_no} was already posted with other results",
        details={"deal_no": existing.deal_no},
    )


@transaction.atomic
def _deal_store_locked(
    client: ApiClient, game_id: str, payload: dict[str, Any], digest: str, keyed: Keyed | None
) -> tuple[Deal, bool]:
    """The full path: the game locked, its pending deals settled, then checked and stored."""
    game = game_get(client=client, game_id=game_id, lock=True)
    existing = Deal.objects.filter(game=game, deal_no=payload["deal_no"]).first()
    if existing is not None:
        return _same_or_refused(existing, existing.payload_hash, digest), False
    pending_settle(game=game)
    if game.status != Game.Status.OPEN:
        raise GameNotOpen(f"game {game_id!r} is {game.status}", details={"status": game.status})
    seats = seats_of(game)
    terms = game.game_terms
    checked = format_of(terms.format).check_deal(
        terms=terms,
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
    if keyed is not None:
        status_code, body = keyed.record(deal)
        key_claim(client_id=client.pk, key=keyed.key, request_hash=keyed.request_hash,
                  status_code=status_code, body=body)  # fmt: skip
    metrics.deal_stored()
    return deal, True
