"""One beat schedules at a time, however many nodes run one: the leader holds a PostgreSQL
advisory lock.

Every node's `serve` runs Celery beat. Each beat follows the schedule (its entries come due and
move on to their next run as usual), but only the beat holding the session-level advisory lock
`BEAT_LOCK` sends the tasks; the others log that they stood by. The lock lives on a connection
of its own: when the leader's node dies (even by `kill -9`) or loses its database connection,
PostgreSQL releases the lock and the next beat to find an entry due takes it, so a sweep runs on
one node every `SETTLEMENT_SWEEP_SECONDS` whichever nodes are up. A standby that becomes leader
does not send what the old leader already sent (it advanced its entries while standing by).

Duplicates would be harmless too (settling a settled deal does nothing, a second reconciliation
writes a second report), but they would double the sweep's load: the lock keeps it single.
"""

from __future__ import annotations

import contextlib
import logging

from celery.beat import PersistentScheduler
from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)

# The advisory lock's key (one bigint; advisory locks are per database, so two deployments on
# one server do not share it). The digits spell "beat" in ASCII.
BEAT_LOCK = 0x62656174


class Leadership:
    """The advisory lock on a connection of its own, checked when the schedule needs it."""

    def __init__(self, alias: str = "default"):
        self.alias = alias
        self.connection = None
        self.held = False

    def check(self) -> bool:
        """True when this process holds the lock now (taken or confirmed by one round trip)."""
        try:
            if self.connection is None:
                self.connection = connections.create_connection(self.alias)
            with self.connection.cursor() as cursor:
                if self.held:
                    cursor.execute("SELECT 1")  # the lock lives as long as this session
                else:
                    cursor.execute("SELECT pg_try_advisory_lock(%s)", [BEAT_LOCK])
                    self.held = cursor.fetchone()[0]
                    if self.held:
                        logger.warning("beat: this node now schedules (advisory lock taken)")
        except DatabaseError as exc:
            if self.held:
                logger.warning("beat: lost the database connection holding the lock: %s", exc)
            self.release()
        return self.held

    def release(self) -> None:
        self.held = False
        if self.connection is not None:
            with contextlib.suppress(DatabaseError):
                self.connection.close()  # closing the session frees the lock
            self.connection = None


class LeaderScheduler(PersistentScheduler):
    """Celery's file-backed scheduler that sends an entry only while holding `BEAT_LOCK`."""

    def __init__(self, *args, **kwargs):
        self.leadership = Leadership()
        super().__init__(*args, **kwargs)

    def apply_entry(self, entry, producer=None):
        if self.leadership.check():
            return super().apply_entry(entry, producer=producer)
        logger.info("beat: standing by, %s not sent (another node's beat holds the lock)", entry)
        return None

    def close(self):
        super().close()
        self.leadership.release()
