"""Deal intake: a posted deal is checked and stored, and its settlement queued after the commit.

Everything is decided before anything is stored: a deal that fails a check is answered with a 4xx
and leaves no trace. The checks are the format's (`tournaments.formats`); the settlement task
(`tournaments.tasks.settle_deal`, or `settle_deals` for a batch posted at once, sent once the
deal is committed) re-scores the stored deal with the same deterministic engine.

The hot path takes two round trips (issue 23 §1): one read of everything the checks need
(`queries.deal_intake_view`), then one statement, `deal_intake_store`
(migrations/0012_deal_intake.pg.sql), that locks the game, re-confirms that state, claims the
request's Idempotency-Key with its answer (`rummy_ledger.keyed`) and inserts the deal. A game
with deals still waiting for settlement, or one that moved between the two, takes the full
path: one transaction that locks the game and settles its pending deals before checking.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any

from django.db import connection, transaction

from rummy_ledger.api.models import ApiClient
from rummy_ledger.keyed import CLAIM_WAIT, Keyed, KeyTaken, key_claim
from tournaments import metrics
from tournaments.errors import DealExists, GameNotFound, GameNotOpen
from tournaments.formats import format_of
from tournaments.models import Deal, Game
from tournaments.queries import IntakeView, deal_intake_view
from tournaments.services.games import game_get, seats_of
from tournaments.services.settlement import pending_settle
from tournaments.tasks import settle_deal, settle_deals
from tournaments.terms import GameTerms


def _payload_hash(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def deal_store(
    *, client: ApiClient, game_id: str, payload: dict[str, Any], keyed: Keyed | None = None
) -> tuple[Deal, bool]:
    """`deal_check_store`, and the settlement of a deal stored now queued (sent off the
    request's thread once committed: `AfterCommitTask.delay_soon`)."""
    deal, created = deal_check_store(client=client, game_id=game_id, payload=payload, keyed=keyed)
    if created:
        settle_deal.delay_soon(deal.pk)
    return deal, created


def deals_queue(*, deal_ids: list[int]) -> None:
    """Queue the settlement of deals stored together (a batch): one message for all of them,
    sent once the caller commits; they are settled together (`settlement.deals_settle`)."""
    if deal_ids:
        settle_deals.delay(deal_ids)


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
    if seen.game_pk is None:
        raise GameNotFound(f"no game {game_id!r}")
    if seen.existing is not None:
        existing_hash, status, pk = seen.existing
        deal = Deal(id=pk, game_id=seen.game_pk, deal_no=payload["deal_no"], status=status)
        return _same_or_refused(deal, existing_hash, digest), False
    if seen.pending:
        return _deal_store_locked(client, game_id, payload, digest, keyed)
    if seen.status != Game.Status.OPEN:
        raise GameNotOpen(f"game {game_id!r} is {seen.status}", details={"status": seen.status})
    deal = _checked(seen, payload, digest)
    stored = _store(seen, deal, client, keyed)
    if stored is None:  # the game moved since it was read
        return _deal_store_locked(client, game_id, payload, digest, keyed)
    deal.pk = stored
    metrics.deal_stored()
    return deal, True


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
