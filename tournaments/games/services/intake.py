"""Deal intake: a posted deal is checked and stored, and its settlement queued after the commit.

One path, whatever the game's state: the game row is locked and everything the checks need read
in one round trip (`queries.deal_intake_view`), the deal is checked by its format
(`tournaments.games.formats`), then inserted; the lock holds until the caller commits, so no one
moves the game in between. Deals stored before and not settled yet are scored in memory by the
same pure formats as settlement scores them (`score_deal`, `apply_deal` on a `Table`): the next
deal is checked against the standings they lead to (who is out, how many deals were played,
whether the game is over), and nothing is settled here. Everything is decided before anything
is stored: a deal that fails a check is answered with a 4xx and leaves no trace. A batch
(`deals_store`) is this path applied to each of its deals in order.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connection, transaction

from rummy_ledger.api.models import ApiClient
from rummy_ledger.errors import DomainError
from tournaments import metrics
from tournaments.errors import DealExists, GameNotFound, GameNotOpen
from tournaments.games.formats import Table, format_of
from tournaments.games.queries import IntakeView, deal_intake_view
from tournaments.games.terms import GameTerms
from tournaments.models import Deal, Game
from tournaments.tasks import settle_deal, settle_deals

# A deal of a batch: (the deal, True when stored now), its refusal or the database error it met
# (contention), or None when it was not tried (the batch ran out of time).
Outcome = tuple[Deal, bool] | DomainError | DatabaseError | None


def deal_store(*, client: ApiClient, game_id: str, payload: dict[str, Any]) -> tuple[Deal, bool]:
    """Check a posted deal (a parsed body) and store it in the caller's transaction (its own
    when there is none); its settlement is queued once that commits: (the deal, True when
    stored now). The same deal posted again (same number, same content) returns the stored
    one; another content under its number is refused (a `DomainError`), as is any deal the
    checks refuse, with nothing written."""
    # No savepoint in the caller's transaction: a refusal has written nothing to undo.
    with contextlib.nullcontext() if connection.in_atomic_block else transaction.atomic():
        deal, created = _check_store(client, game_id, payload)
    if created:
        _settlement_queued([deal.pk])
    return deal, created


def deals_store(
    *, client: ApiClient, deals: list[tuple[str, dict[str, Any]]], seconds: float
) -> list[Outcome]:
    """A batch's deals (game id, parsed body), each by `deal_store`'s path in the order posted,
    in the caller's transaction, each under a savepoint of its own: a refusal or contention is
    that deal's outcome and holds up no other. Once the batch has run `seconds` after some work
    (a deal that was not a repeat), the rest are not tried (None), so that every retry makes
    progress. The deals stored are queued for settlement together once the caller commits."""
    ends = time.monotonic() + seconds
    outcomes: list[Outcome] = []
    worked = False
    for game_id, payload in deals:
        if worked and time.monotonic() > ends:
            outcomes.append(None)
            continue
        try:
            with transaction.atomic():
                outcome: Outcome = _check_store(client, game_id, payload)
        except (DomainError, DatabaseError) as exc:
            outcome = exc
        worked = worked or not (isinstance(outcome, tuple) and not outcome[1])
        outcomes.append(outcome)
    _settlement_queued([o[0].pk for o in outcomes if isinstance(o, tuple) and o[1]])
    return outcomes


def _settlement_queued(deal_ids: list[int]) -> None:
    """The one place a stored deal's settlement is asked for: sent once the caller commits."""
    if len(deal_ids) == 1:
        settle_deal.delay_soon(deal_ids[0])
    elif deal_ids:
        settle_deals.delay(deal_ids)


def _payload_hash(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _check_store(client: ApiClient, game_id: str, payload: dict[str, Any]) -> tuple[Deal, bool]:
    digest = _payload_hash(payload)
    seen = deal_intake_view(client_id=client.pk, game_id=game_id, deal_no=payload["deal_no"])
    if seen.game_pk is None:
        raise GameNotFound(f"no game {game_id!r}")
    if seen.existing is not None:
        return _same_or_refused(seen, payload["deal_no"], digest), False
    deal = _checked(seen, game_id, payload, digest)
    deal.pk = _inserted(deal)
    metrics.deal_stored()
    return deal, True


def _inserted(deal: Deal) -> int:
    """The deal's row (its id): one plain INSERT, cheaper than the ORM's on the hot path."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {Deal._meta.db_table} (game_id, deal_no, wild_joker, results,"
            " payload_hash, points, discrepancies, status, created_at)"
            " VALUES (%s, %s, %s, %s::jsonb, %s, '{}'::jsonb, '{}'::jsonb, %s, now()) RETURNING id",
            [deal.game_id, deal.deal_no, deal.wild_joker, json.dumps(deal.results),
             deal.payload_hash, deal.status],
        )  # fmt: skip
        return cursor.fetchone()[0]


def _same_or_refused(seen: IntakeView, deal_no: int, digest: str) -> Deal:
    existing_hash, status, pk = seen.existing
    if existing_hash == digest:
        return Deal(id=pk, game_id=seen.game_pk, deal_no=deal_no, status=status)
    raise DealExists(
        f"deal {deal_no} was already posted with other results", details={"deal_no": deal_no}
    )


@dataclass
class _Seat:
    """A seat as the formats see it, its standings changed in memory only."""

    external_id: str
    score: int
    eliminated: bool


def _checked(seen: IntakeView, game_id: str, payload: dict[str, Any], digest: str) -> Deal:
    """The posted deal, checked against the standings once the deals stored before it are
    scored (a new deal, not saved yet); a refusal is raised."""
    terms = GameTerms.from_json(seen.terms)
    fmt = format_of(terms.format)
    seats = [_Seat(*seat) for seat in seen.seats]
    played, over = seen.deals_played, False
    for wild, results in seen.pending:  # scored as settlement will score them
        if seen.status != Game.Status.OPEN or over:
            break
        played += 1
        points = fmt.score_deal(terms, wild, results).points
        over = (
            fmt.apply_deal(Table(terms, seats, seen.collected, played), results, points) is not None
        )
    status = Game.Status.FINISHED if over else seen.status
    if status != Game.Status.OPEN:
        raise GameNotOpen(f"game {game_id!r} is {status}", details={"status": status})
    checked = fmt.check_deal(
        terms=terms,
        players=[seat.external_id for seat in seats],
        eliminated=[seat.external_id for seat in seats if seat.eliminated],
        expected_no=played + 1,
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
