"""Celery tasks of the ledger: thin wrappers around services, safe to run twice."""

from celery import shared_task

from wallets.models import ReconciliationReport
from wallets.reconciliation import reconcile_run


@shared_task(name="wallets.tasks.reconcile_nightly")
def reconcile_nightly(trigger: str = ReconciliationReport.Trigger.SCHEDULE, user_id=None) -> int:
    """Reconcile and store a report; running it twice stores two reports, moves nothing."""
    report = reconcile_run(trigger=trigger, started_by_id=user_id)
    return report.pk
