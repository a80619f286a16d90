"""The base class of every Celery task: it sends itself only after the transaction commits.

Called inside a transaction, `delay()`/`apply_async()` defer the send to `on_commit` (pretix's
TransactionAwareTask): a worker never sees work that is not committed, or that was rolled back,
and no caller has to remember `on_commit`. The database is the source of truth: when the broker
cannot take the message, the send is logged and beat's periodic wakes pick the work up, so the
caller's request still succeeds (its work is committed).
"""

from __future__ import annotations

import logging

from celery import Task
from django.db import connection, transaction
from kombu.exceptions import OperationalError

log = logging.getLogger(__name__)


class AfterCommitTask(Task):
    def apply_async(self, args=None, kwargs=None, **options):
        if connection.in_atomic_block:
            transaction.on_commit(lambda: self._send(args, kwargs, options))
            return None
        return self._send(args, kwargs, options)

    def wake(self) -> None:
        """Send this task, which takes no arguments and drains a table that is its queue, once
        the caller commits: one try, no retry (a broker that is down or frozen fails it within
        its socket timeouts; the send is logged and beat's periodic wake makes up for it)."""
        self.apply_async(retry=False)

    def _send(self, args, kwargs, options):
        try:
            return super().apply_async(args, kwargs, **options)
        except (OperationalError, OSError) as exc:
            log.warning(
                "broker unavailable, %s not sent (beat's wake makes up for it): %s", self.name, exc
            )
            return None
