"""Thin Celery tasks: they take ids, call one service, and are safe to run twice."""

from datetime import timedelta

from celery import shared_task
from celery.signals import task_prerun
from django.db import close_old_connections

from rummy_ledger.errors import Retryable
from tournaments.services import settlement


@task_prerun.connect
def _fresh_enough_connections(**kwargs) -> None:
    """Like Django between requests: drop connections past CONN_MAX_AGE or broken, keep the rest
    (settings.CELERY_DB_REUSE_MAX stops Celery from closing them around every task)."""
    if not getattr(kwargs.get("task").request, "is_eager", False):
        close_old_connections()


@shared_task(
    acks_late=True,
    autoretry_for=(Retryable,),
    retry_backoff=0.5,
    retry_backoff_max=10,
    max_retries=None,
)
def settle_deal(deal_id: int) -> None:
    settlement.deal_settle(deal_id=deal_id)


@shared_task
def sweep_unsettled(older_than_seconds: int = 30) -> int:
    """Re-enqueue deals stored but not settled (a lost message delays, never loses, a deal)."""
    ids = settlement.unsettled_deal_ids(older_than=timedelta(seconds=older_than_seconds))
    for deal_id in ids:
        settle_deal.delay(deal_id)
    return len(ids)
