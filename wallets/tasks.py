"""Celery tasks of the ledger: thin wrappers around services, safe to run twice."""

from celery import shared_task
from django.utils import timezone

from wallets.chain.links import chain_extend as chain_extend_run
from wallets.models import FlowReport, ReconciliationReport
from wallets.reconciliation import reconcile_run
from wallets.services.bonuses import bonus_expire
from wallets.services.flows import flow_report_run
from wallets.services.partitions import entry_partitions_ensure as partitions_ensure
from wallets.tax import formulas
from wallets.tax.tds import tds_year_end as tds_year_end_run


@shared_task(name="wallets.tasks.reconcile_nightly")
def reconcile_nightly(trigger: str = ReconciliationReport.Trigger.SCHEDULE, user_id=None) -> int:
    """Reconcile and store a report; running it twice stores two reports, moves nothing."""
    report = reconcile_run(trigger=trigger, started_by_id=user_id)
    return report.pk


@shared_task(name="wallets.tasks.tds_year_end")
def tds_year_end(fy: str | None = None) -> dict:
    """Close the financial year that just ended (beat: 00:05 IST on 1 April), or `fy`.
    Running it again closes only the players an earlier run did not."""
    year = (
        formulas.financial_year(fy) if fy else formulas.financial_year_of(timezone.now()).previous()
    )
    run = tds_year_end_run(fy=year)
    return {"fy": run.fy, "closed": run.closed, "busy": len(run.busy)}


@shared_task(name="wallets.tasks.bonus_expiry")
def bonus_expiry() -> int:
    """Return expired bonus to promotions (beat: hourly); a second run finds nothing left."""
    return bonus_expire()


@shared_task(name="wallets.tasks.flow_report")
def flow_report() -> int:
    """The one-way-flow report (beat: nightly, apart from reconciliation); each run stores one."""
    return flow_report_run(trigger=FlowReport.Trigger.SCHEDULE).pk


@shared_task(name="wallets.tasks.chain_extend")
def chain_extend() -> int:
    """Chain the transfers committed since the last run (beat: every CHAIN_EXTEND_SECONDS); a run
    that finds another at work leaves it to that one."""
    return chain_extend_run()


@shared_task(name="wallets.tasks.entry_partitions_ensure")
def entry_partitions_ensure() -> list[str]:
    """Keep the entries' partitions months ahead (beat: daily); a second run creates nothing."""
    return [month.name for month in partitions_ensure()]
