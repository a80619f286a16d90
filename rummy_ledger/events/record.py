"""The one way an event is written: by the service that makes the change, in its transaction
(a rollback writes none), with one COPY however many events it records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection

from rummy_ledger.events import tasks
from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.models import Event
from rummy_ledger.events.renderers import renderer_of

# COPY, a row per event in order (ids follow it; txid and created_at are the columns' defaults):
# each event's data is sent as its JSON text and stored as `json`, checked once and never parsed
# into jsonb. An INSERT of the events as one JSON array had the server parse every document
# three times (the array, its elements, the column) and cost a settlement twice the server time.
COPY_SQL = f"COPY {Event._meta.db_table} (client_id, type, data) FROM STDIN"


class Happened(NamedTuple):
    """An event to record: its type, the client whose object it is about, and the object as the
    service holds it at the change (what the type's renderer takes; it has a `pk`)."""

    type: EventType
    client_id: int
    subject: Any


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
        subjects = [e.subject for e in events if e.type == event_type]
        rendered[event_type] = renderer_of(event_type)(subjects)
    encode = DjangoJSONEncoder().encode
    with connection.cursor() as cursor, cursor.cursor.copy(COPY_SQL) as copy:
        for e in events:
            copy.write_row((e.client_id, str(e.type), encode(rendered[e.type][e.subject.pk])))
    tasks.deliveries_wake()


def event_record(event_type: EventType, *, client_id: int | None, subject: Any) -> None:
    """One event about one object of `client_id`'s (none for an object no client owns: the
    service's own deposits and withdrawals)."""
    if client_id is not None:
        events_record([Happened(event_type, client_id, subject)])
