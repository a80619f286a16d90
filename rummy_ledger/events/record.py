"""The one way an event is written: by the service that makes the change, in its transaction
(a rollback writes none), with one INSERT however many events it records."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection

from rummy_ledger.events import tasks
from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.models import Event
from rummy_ledger.events.renderers import renderer_of

INSERT_SQL = f"""
INSERT INTO {Event._meta.db_table} (client_id, type, data)
SELECT u.client, u.type, u.data::jsonb
  FROM unnest(%(clients)s::bigint[], %(types)s::text[], %(data)s::text[]) WITH ORDINALITY
       AS u(client, type, data, n)
 ORDER BY u.n
"""


class Happened(NamedTuple):
    """An event to record: its type, the client whose object it is about, the object's pk."""

    type: EventType
    client_id: int
    pk: int


def events_record(events: Sequence[Happened]) -> None:
    """Record these events, in the caller's transaction, each with its object's data as the API
    answers it now (the renderer its app registered for the type, called once per type); the
    webhook deliveries are woken after the commit."""
    if not events:
        return
    if not connection.in_atomic_block:
        raise RuntimeError("an event is recorded in the transaction of the change it reports")
    rendered: dict[EventType, dict[int, dict]] = {}
    for event_type in dict.fromkeys(e.type for e in events):
        pks = [e.pk for e in events if e.type == event_type]
        rendered[event_type] = renderer_of(event_type)(pks)
    with connection.cursor() as cursor:
        cursor.execute(
            INSERT_SQL,
            {
                "clients": [e.client_id for e in events],
                "types": [str(e.type) for e in events],
                "data": [json.dumps(rendered[e.type][e.pk], cls=DjangoJSONEncoder) for e in events],
            },
        )
    tasks.deliveries_wake()


def event_record(event_type: EventType, *, client_id: int | None, pk: int) -> None:
    """One event about one object of `client_id`'s (none for an object no client owns: the
    service's own deposits and withdrawals)."""
    if client_id is not None:
        events_record([Happened(event_type, client_id, pk)])
