"""Thin Celery tasks: the webhook deliveries (a table that is its queue, drained on its own
queue, `<default queue>.webhooks`, so a slow receiver never holds up settlement) and the feed's
retention purge."""

from __future__ import annotations

from celery import current_app, shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from rummy_ledger.events import feed
from rummy_ledger.events.webhooks import delivery

DELIVER = "rummy_ledger.events.tasks.deliver_waiting"


def webhook_queue() -> str:
    return f"{current_app.conf.task_default_queue}.webhooks"


def route(name, args, kwargs, options, task=None, **kw):
    """Celery's router (CELERY_TASK_ROUTES): deliveries on the webhook queue, named after the
    default queue, whatever that is (tests and benches give their workers private ones)."""
    return {"queue": webhook_queue()} if name == DELIVER else None


def deliveries_wake() -> None:
    """Wake a delivery run once the caller commits (gathered: one run for what every process
    commits within WEBHOOK_GATHER_SECONDS)."""
    deliver_waiting.wake(gather=settings.WEBHOOK_GATHER_SECONDS)


@shared_task(acks_late=True, autoretry_for=(OperationalError, InterfaceError), max_retries=3)
def deliver_waiting() -> None:
    """A bounded delivery run (`delivery.deliveries_run`); woken after an event's commit, by
    beat every WEBHOOK_WAKE_SECONDS, by itself when it stopped at its bound, and at the soonest
    retry it scheduled."""
    run = delivery.deliveries_run()
    if run.claimed >= settings.WEBHOOK_RUN_DELIVERIES:
        deliver_waiting.wake()
    elif run.retry_in is not None:
        deliver_waiting.apply_async(countdown=run.retry_in, retry=False)


@shared_task(acks_late=True)
def events_purge() -> None:
    """Delete the events older than EVENTS_RETENTION_DAYS (beat, hourly), a bounded chunk a
    transaction until none is left."""
    while feed.events_purge():
        pass
