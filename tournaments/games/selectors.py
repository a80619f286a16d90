"""Reads of a client's games that need a little thought: the list a game server recovers from
(`GET /api/v1/games`)."""

from __future__ import annotations

from django.db.models import Exists, OuterRef

from rummy_ledger.api.models import ApiClient
from tournaments.models import Deal, Game


def games_listed(
    *, client: ApiClient, status: str | None, after_id: int | None, count: int
) -> list[Game]:
    """The client's games after `after_id` (all when None), in id order (their creation), `count`
    at most, in `status` when given; each with `waiting`: a deal of it not yet settled. One
    statement: the games and their deals agree."""
    games = Game.objects.filter(client=client).annotate(
        waiting=Exists(Deal.objects.filter(game=OuterRef("pk"), status=Deal.Status.STORED))
    )
    if status is not None:
        games = games.filter(status=status)
    if after_id is not None:
        games = games.filter(pk__gt=after_id)
    return list(games.order_by("pk")[:count])
