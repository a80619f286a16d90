"""The base class of every Celery task: it sends itself only after the transaction commits.

Called inside a transaction, `delay()`/`apply_async()` defer the send to `on_commit` (pretix's
TransactionAwareTask): a worker never sees work that is not committed, or that was rolled back,
and no caller has to remember `on_commit`. The database is the source of truth: when the broker
cannot take the message, the send is logged and beat's periodic wakes pick the work up, so the
caller's request still succeeds (its work is committed).
"""

from __future__ import annotations

import logging
import math
import time

from celery import Task
from django.conf import settings
from django.db import connection, transaction
from kombu.exceptions import OperationalError

log = logging.getLogger(__name__)

# A gathered wake is due at least this long after the commits it is counted on for (the
# worker's clock may run a little ahead of the web's).
WAKE_DUE_MARGIN = 0.05


class AfterCommitTask(Task):
    def apply_async(self, args=None, kwargs=None, **options):
        if connection.in_atomic_block:
            transaction.on_commit(lambda: self._send(args, kwargs, options))
            return None
        return self._send(args, kwargs, options)

    # When this process's last gathered wake runs (time.time()): see `wake`.
    _wake_due: float = 0.0

    def wake(self, *, gather: float = 0.0) -> None:
        """Send this task, which takes no arguments and drains a table that is its queue, once
        the caller commits: one try, no retry (a broker that is down or frozen fails it within
        its socket timeouts; the send is logged and beat's periodic wake makes up for it).

        `gather` seconds: the run is due at the next multiple of `gather` seconds of the clock
        (at least WAKE_DUE_MARGIN away), the same moment for every process, so that what they
        commit meanwhile is drained by one run (under load, a few runs of many rows instead of a
        run a row); and while a wake this process sent is still to run, it sends none, since
        that run will find what was committed now. At most `gather` + WAKE_DUE_MARGIN is added
        to the wait. A wake that could not be sent holds back this process's next ones for
        SETTLEMENT_WAKE_SECONDS, as long as beat takes to wake the task anyway, so that a broker
        that hangs costs one request in that time its socket timeout, not every request."""
        if connection.in_atomic_block:
            transaction.on_commit(lambda: self._wake(gather))
        else:
            self._wake(gather)

    def _wake(self, gather: float) -> None:
        now = time.time()
        if now < self._wake_due - WAKE_DUE_MARGIN and not self.app.conf.task_always_eager:
            return
        # the next moment of the clock that is a multiple of `gather`, at least the margin away
        self._wake_due = (
            (math.floor((now + WAKE_DUE_MARGIN) / gather) + 1) * gather if gather else now
        )
        if self._send(None, None, {"countdown": self._wake_due - now, "retry": False}) is None:
            # not sent (logged): no request waits on that broker again before beat's next wake
            self._wake_due = now + settings.SETTLEMENT_WAKE_SECONDS

    def _send(self, args, kwargs, options):
        try:
            return super().apply_async(args, kwargs, **options)
        except (OperationalError, OSError) as exc:
            log.warning(
                "broker unavailable, %s not sent (beat's wake makes up for it): %s", self.name, exc
            )
            return None
