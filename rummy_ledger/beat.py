"""One beat schedules at a time, however many nodes run one: the leader holds a PostgreSQL
advisory lock.

Every node's `serve` runs Celery beat. Each beat follows the schedule (its entries come due and
move on to their next run as usual), but only the beat holding the session-level advisory lock
`BEAT_LOCK` sends the tasks; the others log that they stood by. The lock lives on a connection
of its own, checked at every pass of beat's loop, which wakes at least every
`BEAT_LEADER_CHECK_SECONDS` whatever the schedule: a standby tries to take the lock then (not
only when one of its entries comes due), the leader confirms its session with a round trip (and
again right before each send).

How the lock moves when the leader goes:
- its process dies on a live host (`kill -9`, a crash): the kernel closes its socket, PostgreSQL
  ends the session at once and frees the lock; a standby takes it at its next check, within
  `BEAT_LEADER_CHECK_SECONDS`;
- its host is lost, frozen, or cut off: no socket is closed, and PostgreSQL would keep the
  session (and the lock) until TCP keepalives give up, two hours and more by default. So the lock's
  session sets `idle_session_timeout` to `BEAT_LEADER_TIMEOUT_SECONDS`: a session whose beat has
  not checked for that long is ended by PostgreSQL itself, and a standby takes the lock within
  `BEAT_LEADER_TIMEOUT_SECONDS + BEAT_LEADER_CHECK_SECONDS` of the leader's last check. The
  connection's own TCP settings (`tcp_user_timeout`, keepalives) make a leader cut off from the
  database fail its next check within the timeout too, instead of waiting on TCP for minutes.
A leader sends only right after a round trip on the session that holds the lock, so once
PostgreSQL has ended that session it sends nothing more; a leader that was frozen and wakes finds
its session gone and stands by. A standby that becomes leader does not send what the old leader
already sent (it advanced its entries while standing by).

Duplicates would be harmless too (settling a settled deal does nothing, a second reconciliation
writes a second report), but they would double the wakes' load: the lock keeps it single.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time

from celery.beat import PersistentScheduler
from django.conf import settings
from django.db import Error, connections
from django.db.utils import load_backend

logger = logging.getLogger(__name__)

# The advisory lock's key (one bigint; advisory locks are per database, so two deployments on
# one server do not share it). The digits spell "beat" in ASCII.
BEAT_LOCK = 0x62656174


def lock_connection_options(timeout_s: float, check_s: float) -> dict:
    """libpq's TCP settings for the lock's connection (a unix socket ignores them): a round trip
    to a server that no longer answers fails after `timeout_s` (`tcp_user_timeout`), and an idle
    connection is probed every check (whole seconds) and given up within `timeout_s` too."""
    probe = max(1, math.ceil(check_s))
    return {
        "keepalives": 1,
        "keepalives_idle": probe,
        "keepalives_interval": probe,
        "keepalives_count": max(1, math.floor(timeout_s / probe) - 1),
        "tcp_user_timeout": int(timeout_s * 1000),
    }


class Leadership:
    """The advisory lock on a connection of its own, checked when the schedule needs it."""

    def __init__(self, alias: str | None = None):
        # a session of its own, outside any pool in transaction mode (DIRECT_DATABASE_URL)
        self.alias = alias or settings.SESSION_DATABASE_ALIAS
        self.connection = None
        self.held = False
        self.checked_at = float("-inf")
        self.timeout_s = settings.BEAT_LEADER_TIMEOUT_SECONDS
        self.check_s = settings.BEAT_LEADER_CHECK_SECONDS

    def check(self) -> bool:
        """True when this process holds the lock now (taken or confirmed by one round trip)."""
        self.checked_at = time.monotonic()
        try:
            if self.connection is None:
                self.connection = self._connect()
            with self.connection.cursor() as cursor:
                if self.held:
                    cursor.execute("SELECT 1")  # the lock lives as long as this session
                else:
                    cursor.execute("SELECT pg_try_advisory_lock(%s)", [BEAT_LOCK])
                    self.held = cursor.fetchone()[0]
                    if self.held:
                        logger.warning("beat: this node now schedules (advisory lock taken)")
        except Error as exc:
            if self.held:
                logger.warning("beat: lost the database connection holding the lock: %s", exc)
            self.release()
        return self.held

    def keep(self) -> None:
        """Check unless a check was made within half the check interval (several entries due at
        once make one round trip, not one each)."""
        if time.monotonic() - self.checked_at >= self.check_s / 2:
            self.check()

    def _connect(self):
        params = connections.settings[self.alias]
        options = params.get("OPTIONS", {}) | lock_connection_options(self.timeout_s, self.check_s)
        connection = load_backend(params["ENGINE"]).DatabaseWrapper(
            {**params, "OPTIONS": options}, self.alias
        )
        try:
            with connection.cursor() as cursor:
                # PostgreSQL ends this session once its beat stops checking, freeing the lock
                cursor.execute(
                    "SELECT set_config('idle_session_timeout', %s, false)",
                    [f"{int(self.timeout_s * 1000)}ms"],
                )
        except Error:
            connection.close()
            raise
        return connection

    def release(self) -> None:
        self.held = False
        if self.connection is not None:
            with contextlib.suppress(Error):
                self.connection.close()  # closing the session frees the lock
            self.connection = None


class LeaderScheduler(PersistentScheduler):
    """Celery's file-backed scheduler that sends an entry only while holding `BEAT_LOCK`, and
    checks the lock at every pass of beat's loop."""

    def __init__(self, *args, **kwargs):
        self.leadership = Leadership()
        super().__init__(*args, **kwargs)
        # beat sleeps until the next entry is due, but never longer than one check interval
        self.max_interval = min(self.max_interval, self.leadership.check_s)

    def tick(self, *args, **kwargs):
        self.leadership.keep()
        return super().tick(*args, **kwargs)

    def apply_entry(self, entry, producer=None):
        if self.leadership.check():
            return super().apply_entry(entry, producer=producer)
        logger.info("beat: standing by, %s not sent (another node's beat holds the lock)", entry)
        return None

    def close(self):
        super().close()
        self.leadership.release()
