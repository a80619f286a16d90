"""The feed: a client's events in the order of the transactions that wrote them, read from a
cursor, every event exactly once: each event carries its transaction's id (`txid`) and is read
with the commit-order reader (rummy_ledger/commit_order.py), so an event whose transaction took
an earlier id but committed later is never skipped, and a long transaction delays the feed (for
everyone) until it ends.

The cursor a client sees is `<txid>-<event id>` (opaque to it); `next` is the last event read, or
the cursor given when nothing is new. Events are kept EVENTS_RETENTION_DAYS: `events_purge`
deletes older ones and remembers the last it deleted (`PurgedThrough`); a cursor before that is
410 `cursor_expired`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from rummy_ledger import commit_order
from rummy_ledger.commit_order import Position
from rummy_ledger.events.errors import CursorExpired
from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.models import Delivery, Event, PurgedThrough

CURSOR = r"[0-9]{1,19}-[0-9]{1,19}"
_CURSOR = re.compile(CURSOR)
_BIGINT_MAX = 2**63 - 1


def cursor_parsed(text: str) -> Position | None:
    """The cursor a client passed back, or None when it is not one."""
    if not _CURSOR.fullmatch(text):
        return None
    txid, event_id = (int(part) for part in text.split("-"))
    return Position(txid, event_id) if max(txid, event_id) <= _BIGINT_MAX else None


FEED_SQL = f"""
SELECT id, txid::text::bigint, type, created_at, data::text
  FROM {Event._meta.db_table}
 WHERE client_id = %(client)s
   AND {commit_order.after()}
   AND type = ANY(%(types)s)
 ORDER BY txid, id
 LIMIT %(limit)s
"""


@dataclass(frozen=True)
class FeedEvent:
    id: int
    txid: int
    type: str
    created_at: object
    data: dict

    @property
    def cursor(self) -> Position:
        return Position(self.txid, self.id)


def events_after(
    *,
    client_id: int,
    after: Position,
    limit: int,
    types: list[str] | None = None,
    expired_ok: bool = False,
) -> list[FeedEvent]:
    """The client's events after `after` (of `types`, all when None), `limit` at most, in feed
    order; CursorExpired when events after `after` were purged (unless `expired_ok`: a webhook
    endpoint left disabled for the retention goes on with what is kept)."""
    with transaction.atomic():  # the purge mark and the events of one snapshot
        purged = PurgedThrough.objects.filter(pk=1).first()
        if not expired_ok and purged is not None and after < Position(purged.txid, purged.event_id):
            raise CursorExpired(
                f"events after cursor {after} were purged (kept "
                f"{settings.EVENTS_RETENTION_DAYS} days): read the feed from its start",
                details={"retention_days": settings.EVENTS_RETENTION_DAYS},
            )
        with connection.cursor() as cursor:
            cursor.execute(
                FEED_SQL,
                {
                    "client": client_id,
                    **commit_order.after_parameters(after),
                    "types": types or [t.value for t in EventType],
                    "limit": limit,
                },
            )
            rows = cursor.fetchall()
    # the data as stored (`json` text), parsed here once
    return [FeedEvent(i, txid, t, at, json.loads(data)) for i, txid, t, at, data in rows]


def feed_start() -> Position:
    """Where a reader starting now begins: after every transaction already finished (what a new
    webhook endpoint is sent: the events committed from now on)."""
    return commit_order.reader_start()


PURGE_SQL = f"""
WITH old AS (
    SELECT id FROM {Event._meta.db_table}
     WHERE created_at < %(before)s ORDER BY created_at LIMIT %(limit)s),
deliveries AS (
    DELETE FROM {Delivery._meta.db_table} WHERE event_id IN (SELECT id FROM old)),
gone AS (
    DELETE FROM {Event._meta.db_table} WHERE id IN (SELECT id FROM old)
 RETURNING txid::text::bigint AS txid, id)
SELECT count(*), (array_agg(txid ORDER BY txid DESC, id DESC))[1],
       (array_agg(id ORDER BY txid DESC, id DESC))[1]
  FROM gone
"""


def events_purge(*, limit: int = 10_000) -> int:
    """Delete up to `limit` events older than EVENTS_RETENTION_DAYS (and their deliveries),
    remembering the last deleted in feed order; returns how many were deleted."""
    before = timezone.now() - timedelta(days=settings.EVENTS_RETENTION_DAYS)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(PURGE_SQL, {"before": before, "limit": limit})
            deleted, txid, event_id = cursor.fetchone()
        if not deleted:
            return 0
        last = Position(txid, event_id)
        mark = PurgedThrough.objects.select_for_update().filter(pk=1).first()
        if mark is None or Position(mark.txid, mark.event_id) < last:
            PurgedThrough.objects.update_or_create(
                pk=1, defaults={"txid": last.txid, "event_id": last.row_id}
            )
        return deleted
