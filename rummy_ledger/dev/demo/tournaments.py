"""The demo's tournaments (`make run`), for the demo lobby client: a chips freeroll with a
guarantee (the platform funds every prize: the overlay) and a cash tournament with rebuys and a
guarantee. Scheduled as `manage.py create_tournament` schedules a file (the same checks), a new
one of a kind whenever none of that kind is registering: `demo-freeroll-1`, `demo-cash-1`, ...
The simulator (`simulator_tournaments.py`) plays them over HTTP with the demo key, from the same
rounds and rebuy terms, as a lobby plays the tournaments it set up."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from tournaments.models import Tournament
from tournaments.tournaments.services.setup import tournament_create, tournament_fields_checked
from wallets.models import CHIPS

# Each kind's fields in the file format of `create_tournament`, less slug, client and closing time.
DEMO_TOURNAMENTS: dict[str, dict[str, Any]] = {
    "demo-freeroll": {
        "name": "Demo chips freeroll", "currency": CHIPS, "entry_fee": "0.00",
        "fee_percent": "0.00", "guarantee": "5000.00", "min_players": 3, "max_players": 12,
        "table_size": 6, "rounds": [{"qualify_top": 3}, {"final": True}], "rebuy": None,
        "prizes": [{"ranks": "1", "percent": "50.00"}, {"ranks": "2", "percent": "30.00"},
                   {"ranks": "3", "percent": "20.00"}],
    },
    "demo-cash": {
        "name": "Demo ₹100 with rebuys", "currency": "INR", "entry_fee": "100.00",
        "fee_percent": "15.00", "guarantee": "1000.00", "min_players": 5, "max_players": 12,
        "table_size": 6, "rounds": [{"qualify_top": 2}, {"final": True}],
        "rebuy": {"price": "100.00", "max_per_player": 1, "until_round": 1},
        # every paid rank pays differently: players tied on chips share unequal prizes
        "prizes": [{"ranks": "1", "percent": "40.00"}, {"ranks": "2", "percent": "25.00"},
                   {"ranks": "3", "percent": "15.00"}, {"ranks": "4", "percent": "12.00"},
                   {"ranks": "5", "percent": "8.00"}],
    },
}  # fmt: skip


def demo_kind(slug: str) -> dict[str, Any] | None:
    """The demo terms a slug was scheduled from (`demo-cash-3`: demo-cash's), or None."""
    return DEMO_TOURNAMENTS.get(slug.rsplit("-", 1)[0])


def demo_tournaments_schedule(*, client: str, kinds: list[str], by: str) -> list[Tournament]:
    """A new tournament of each of these kinds for `client`, unless one is registering."""
    made = []
    for kind in kinds:
        ours = Tournament.objects.filter(client__name=client, slug__startswith=f"{kind}-")
        if ours.filter(status=Tournament.Status.REGISTERING).exists():
            continue
        data = {
            **DEMO_TOURNAMENTS[kind],
            "slug": f"{kind}-{ours.count() + 1}",
            "client": client,
            "registration_closes_at": (timezone.now() + timedelta(days=1)).isoformat(),
        }
        made.append(tournament_create(spec=tournament_fields_checked(data), created_by=by))
    return made
