"""Deal intake: a posted deal is checked and stored, and its settlement queued after the commit.

Everything is decided before anything is stored: a deal that fails a check is answered with a 4xx
and leaves no trace. The checks are the format's (`tournaments.formats`); the settlement task
(`tournaments.tasks.settle_deal`, or `settle_deals` for a batch posted at once, sent by their
base class once the deal is committed) re-scores the stored deal with the same deterministic
engine.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import transaction

from rummy_ledger.api.models import ApiClient
from tournaments import metrics
from tournaments.errors import DealExists, GameNotOpen
from tournaments.formats import format_of
from tournaments.models import Deal, Game
from tournaments.services.games import game_get, seats_of
from tournaments.services.settlement import pending_settle
from tournaments.tasks import settle_deal, settle_deals


def _payload_hash(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


@transaction.atomic
def deal_store(*, client: ApiClient, game_id: str, payload: dict[str, Any]) -> tuple[Deal, bool]:
    """Check a posted deal, store it and queue its settlement (sent once the caller commits)."""
    deal, created = deal_check_store(client=client, game_id=game_id, payload=payload)
    if created:
        settle_deal.delay(deal.pk)
    return deal, created


def deals_queue(*, deal_ids: list[int]) -> None:
    """Queue the settlement of deals stored together (a batch): one message for all of them,
    sent once the caller commits; they are settled together (`settlement.deals_settle`)."""
    if deal_ids:
        settle_deals.delay(deal_ids)


@transaction.atomic
def deal_check_store(
    *, client: ApiClient, game_id: str, payload: dict[str, Any]
) -> tuple[Deal, bool]:
    """Check a posted deal and store it, without queueing its settlement (the single post and
    the batch each queue theirs). The same deal posted again (same number, same content)
    returns the stored one; another content under its number is refused."""
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
    metrics.deal_stored()
    return deal, True
