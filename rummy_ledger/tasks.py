"""The base class of every Celery task: it sends itself only after the transaction commits.

Called inside a transaction, `delay()`/`apply_async()` defer the send to `on_commit` (pretix's
TransactionAwareTask): a worker never sees work that is not committed, or that was rolled back,
and no caller has to remember `on_commit`. The database is the source of truth: when the broker
cannot take the message, the send is logged and the periodic sweeps pick the work up, so the
caller's request still succeeds (its work is committed).
"""

from __future__ import annotations

import logging

from celery import Task
from django.conf import settings
from django.db import connection, transaction
from kombu.exceptions import OperationalError

from rummy_ledger import publisher

log = logging.getLogger(__name__)


class AfterCommitTask(Task):
    # The name of a task that takes a list of this one's single argument: sent by `delay_soon`
    # close together, several of this task go as one of that (rummy_ledger.publisher).
    together: str | None = None

    def apply_async(self, args=None, kwargs=None, **options):
        if connection.in_atomic_block:
            transaction.on_commit(lambda: self._send(args, kwargs, options))
            return None
        return self._send(args, kwargs, options)

    def delay_soon(self, *args) -> None:
        """`delay`, with the send made by this process's publisher thread (rummy_ledger.publisher)
        unless CELERY_PUBLISH_IN_BACKGROUND is off or Celery runs tasks eagerly: the caller does
        not wait for the broker, and a send lost with the process is redone by a sweep. Sends
        close together go as one `together` task where the task names one."""
        if self.app.conf.task_always_eager or not settings.CELERY_PUBLISH_IN_BACKGROUND:
            self.delay(*args)
            return

        def submit() -> None:
            publisher.submit(
                publisher.Send(
                    alone=lambda: self._send(args, None, {}),
                    key=self.together if len(args) == 1 else None,
                    item=args[0] if len(args) == 1 else None,
                    together=self._send_together,
                )
            )

        if connection.in_atomic_block:
            transaction.on_commit(submit)
        else:
            submit()

    def apply_soon(self, kwargs: dict, **options) -> None:
        """`apply_async(kwargs=kwargs, **options)` made by this process's publisher thread: the
        caller never waits for the broker, not even for one that hangs."""
        publisher.submit(publisher.Send(alone=lambda: self._send(None, kwargs, options)))

    def _send_together(self, items: list) -> None:
        self.app.tasks[self.together]._send((items,), None, {})

    def _send(self, args, kwargs, options):
        try:
            return super().apply_async(args, kwargs, **options)
        except (OperationalError, OSError) as exc:
            log.warning(
                "broker unavailable, %s not sent (a sweep will redo it): %s", self.name, exc
            )
            return None
