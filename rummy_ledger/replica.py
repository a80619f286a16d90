"""Finance reads from a standby: the `replica` database alias, when one is configured.

Which pages read the standby is said where they are written: a finance page's view is wrapped in
`finance_page` (statements, tax reports, the fee and tournament P&L reports). Inside it,
`ReplicaRouter` sends the ORM's reads to the replica, and `rummy_ledger.db.read_connection()`
gives raw SQL the same connection; outside it every read goes to the primary, as does every
write, inside or out (the router names the primary for writes, so a row read from the standby is
saved on the primary). An explicit `.using()` in each selector would have to reach every helper
a page calls (balances, tax positions, account look-ups, search names) and would be missed by the
next one added; the scope keeps the choice to one line per page and the rest of the code unaware
of it.

Before a page reads the standby it asks how far behind it is. The primary's WAL position is read
first, then the standby's replay position: at or past it, the standby holds every commit made
before the question, and it is 0 s behind (an idle primary does not make it look late, as
`now() - pg_last_xact_replay_timestamp()` alone would). Behind it, the standby is given a short
while to catch up (a busy primary is always a little ahead); still behind, its lag is the age of
the last transaction it replayed. Past `REPLICA_MAX_LAG_SECONDS`, or when the standby does not
answer or is not a standby (promoted, or the primary itself), the page reads the primary and says
so (`ReadSource.notice`).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.template.response import SimpleTemplateResponse

from rummy_ledger.api.deadline import WATCHDOG
from rummy_ledger.db import reading_alias

log = logging.getLogger(__name__)

REPLICA = "replica"
CATCH_UP_SECONDS = 0.5  # how long a standby just behind a busy primary is given to reach it
CATCH_UP_POLL_SECONDS = 0.05
PROBE_SECONDS = 2.0  # a standby that has not answered the lag probe by then does not answer

# Who may see a page is the primary's answer, even inside a finance page: a permission taken
# away, a session ended or a login locked out counts at once, not once the standby replays it.
PRIMARY_ONLY = frozenset({"auth", "sessions", "admin", "contenttypes", "axes"})


@dataclass(frozen=True)
class ReadSource:
    """Where a finance page read its figures, and why."""

    alias: str
    lag: float | None = None  # seconds the standby was behind, when it answered as a standby
    problem: str = ""  # why the primary was read although a standby is configured

    @property
    def notice(self) -> str:
        """What the page says about it ("" without a standby configured)."""
        if self.alias == REPLICA:
            return f"Read from the standby, {self.lag:.1f} s behind the primary."
        if self.problem:
            return f"Read from the primary: {self.problem}."
        return ""


def replica_configured() -> bool:
    return REPLICA in connections.settings


def replica_lag() -> float | None:
    """Seconds the standby is behind the primary; None when it answers but is not a standby.
    Raises DatabaseError when the standby (or the primary) does not answer."""
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()")
        (primary_lsn,) = cursor.fetchone()
    deadline = time.monotonic() + CATCH_UP_SECONDS
    started = time.monotonic()
    # A frozen standby answers nothing and its socket never gives up: the request deadline's
    # watchdog cuts it, and the page reads the primary.
    standby = connections[REPLICA]
    with WATCHDOG.watch(standby, PROBE_SECONDS), standby.cursor() as cursor:
        while True:
            cursor.execute(
                "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn() >= %s::pg_lsn,"
                " EXTRACT(epoch FROM now() - pg_last_xact_replay_timestamp())",
                [primary_lsn],
            )
            in_recovery, caught_up, replayed_age = cursor.fetchone()
            if not in_recovery:
                return None
            if caught_up:
                return time.monotonic() - started
            if time.monotonic() >= deadline:
                return float("inf") if replayed_age is None else max(float(replayed_age), 0.0)
            time.sleep(CATCH_UP_POLL_SECONDS)


def read_source() -> ReadSource:
    """Where a finance page reads now: the standby if configured, answering and close enough."""
    if not replica_configured():
        return ReadSource(DEFAULT_DB_ALIAS)
    try:
        lag = replica_lag()
    except DatabaseError as exc:
        log.warning("the standby does not answer, finance reads the primary: %s", exc)
        connections[REPLICA].close()  # the next page connects afresh
        return ReadSource(DEFAULT_DB_ALIAS, problem="the standby does not answer")
    if lag is None:
        return ReadSource(DEFAULT_DB_ALIAS, problem="the replica database is not a standby")
    limit = settings.REPLICA_MAX_LAG_SECONDS
    if lag > limit:
        behind = "an unknown time" if lag == float("inf") else f"{lag:.1f} s"
        log.warning("the standby is %s behind, finance reads the primary", behind)
        return ReadSource(
            DEFAULT_DB_ALIAS,
            lag=lag,
            problem=f"the standby is {behind} behind (more than {limit:g} s)",
        )
    return ReadSource(REPLICA, lag=lag)


@contextmanager
def finance_reads(*, standby: bool = True) -> Iterator[ReadSource]:
    """Reads inside go where `read_source()` says (the primary's when `standby` is false: for a
    read that needs it); writes still go to the primary."""
    source = read_source() if standby else ReadSource(DEFAULT_DB_ALIAS)
    token = reading_alias.set(source.alias)
    try:
        yield source
    finally:
        reading_alias.reset(token)


def finance_page(view: Callable) -> Callable:
    """A finance page: its reads (and its template's, rendered here) from `finance_reads()`;
    the template gets `read_source`, which the admin's base template shows."""

    @functools.wraps(view)
    def page(*args, **kwargs):
        with finance_reads() as source:
            response = view(*args, **kwargs)
            if isinstance(response, SimpleTemplateResponse) and not response.is_rendered:
                response.context_data = {**(response.context_data or {}), "read_source": source}
                response.render()
            return response

    return page


class ReplicaRouter:
    """Reads inside a finance page go to its alias (but for PRIMARY_ONLY's), every other read and
    every write to the primary; nothing is migrated on the standby (it replays the primary's)."""

    def db_for_read(self, model, **hints) -> str:
        if model._meta.app_label in PRIMARY_ONLY:
            return DEFAULT_DB_ALIAS
        return reading_alias.get() or DEFAULT_DB_ALIAS

    def db_for_write(self, model, **hints) -> str:
        instance = hints.get("instance")
        if instance is not None and instance._state.db not in (None, REPLICA):
            # a row of another database stays there: a migration run on a scratch database
            # writes its many-to-many rows to it too
            return instance._state.db
        return DEFAULT_DB_ALIAS  # a new row, or one read from the standby: the primary

    def allow_relation(self, obj1, obj2, **hints) -> bool | None:
        both = {obj1._state.db, obj2._state.db}
        return True if both <= {DEFAULT_DB_ALIAS, REPLICA, None} else None

    def allow_migrate(self, db, app_label, **hints) -> bool | None:
        return False if db == REPLICA else None
