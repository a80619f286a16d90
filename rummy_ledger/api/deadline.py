"""A deadline on a request's database calls, kept by the web process itself.

The lock wait and statement timeouts (rummy_ledger.api.database) are enforced by the server: a
server that does not run at all (frozen, SIGSTOPped, a host that hangs) answers nothing, and over
a Unix socket or a live TCP link nothing on the client's side ever gives up, so every web worker
would wait as long as the freeze lasts. Here one watchdog thread per process keeps the deadlines
of the requests in flight; when one passes, it shuts down that request's database socket (psycopg's
`cancel()` would ask the frozen server, which does not answer either). The blocked call then fails
at once as a lost connection (503 + Retry-After), the request's transaction is lost with it, and
the connection is closed when the request ends. It repeats for a connection opened after the
deadline, so a request past its deadline reaches the database no more.

The bound is `REQUEST_DEADLINE_SECONDS` after the request began (plus up to one `TICK`); a request
that was opening a new connection at that moment waits for at most `DB_CONNECT_TIMEOUT` from when
it began connecting (psycopg's own timeout). It is longer than the server's statement timeout, so
a server that runs answers first.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.db import DEFAULT_DB_ALIAS, connections

TICK = 0.1  # how often a request past its deadline is checked for a newly opened connection


@dataclass(eq=False)
class Watch:
    """One request's deadline over its thread's database connection (a Django DatabaseWrapper)."""

    wrapper: object
    deadline: float
    abandoned: bool = False
    _cut: list = field(default_factory=list)  # the raw connections cut (kept: ids get reused)

    def abandon(self) -> None:
        """Shut down the socket of the connection the request holds now (once per connection)."""
        raw = getattr(self.wrapper, "connection", None)
        if raw is None or any(raw is cut for cut in self._cut):
            return
        # Marked first: the request's thread fails the moment the socket goes down, and must
        # then already see that its deadline, not the database, ended the call.
        self._cut.append(raw)
        self.abandoned = True
        with contextlib.suppress(Exception):  # closed meanwhile: nothing left to cut
            fd = raw.pgconn.socket
            sock = socket.socket(fileno=fd)
            try:
                sock.shutdown(socket.SHUT_RDWR)
            finally:
                sock.detach()  # the fd stays the driver's: only the link is cut


class Watchdog:
    """The deadlines of one process's requests and the thread that keeps them."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._watches: set[Watch] = set()
        self._wake_at: float | None = None
        self._pid: int | None = None

    @contextlib.contextmanager
    def watch(self, wrapper, seconds: float) -> Iterator[Watch]:
        watch = Watch(wrapper, time.monotonic() + seconds)
        with self._cond:
            self._ensure_thread()
            self._watches.add(watch)
            if self._wake_at is None or watch.deadline < self._wake_at:
                self._cond.notify()
        try:
            yield watch
        finally:
            with self._cond:
                self._watches.discard(watch)

    def _ensure_thread(self) -> None:
        """Started on first use in each process (a forked gunicorn worker has no thread yet)."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._watches.clear()
            self._wake_at = None
            threading.Thread(target=self._run, name="request-deadlines", daemon=True).start()

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                pending = []
                for watch in self._watches:
                    if watch.deadline <= now:
                        watch.abandon()
                        pending.append(now + TICK)
                    else:
                        pending.append(watch.deadline)
                self._wake_at = min(pending, default=None)
                self._cond.wait(None if self._wake_at is None else self._wake_at - now)


WATCHDOG = Watchdog()


def request_deadline(seconds: float):
    """`with request_deadline(6) as watch:` bounds this thread's calls on the default database.
    The watchdog thread is handed this thread's own connection object, not Django's proxy (which
    would name the watchdog's)."""
    return WATCHDOG.watch(connections[DEFAULT_DB_ALIAS], seconds)
