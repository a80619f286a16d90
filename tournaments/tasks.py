"""Thin Celery tasks: they take ids, call one service, and are safe to run twice. Their base
class (`rummy_ledger.tasks.AfterCommitTask`) sends them only after the caller's commit."""

from datetime import timedelta

from celery import shared_task
from celery.signals import task_prerun
from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections

from rummy_ledger.errors import Retryable
from tournaments.games.services import fee_report, settlement
from tournaments.games.services.escrow import fee_account_id
from tournaments.tournaments.services import rounds as tournament_rounds
from wallets.models import Account


@task_prerun.connect
def _fresh_enough_connections(**kwargs) -> None:
    """Like Django between requests: drop connections past CONN_MAX_AGE or broken, keep the rest
    (settings.CELERY_DB_REUSE_MAX stops Celery from closing them around every task)."""
    if not getattr(kwargs.get("task").request, "is_eager", False):
        close_old_connections()


SETTLE_RETRIES = {
    "acks_late": True,
    "autoretry_for": (Retryable, OperationalError, InterfaceError),
    "retry_backoff": 1,
    "retry_backoff_max": 10,
    "max_retries": None,
}


# Retried with backoff (1, 2, 4 ... 10 s, jittered), without limit: a game that is busy, a lock
# or statement timeout, and the database going away (a restart, a cut connection: Django
# replaces the broken connection before the next try) all pass by themselves. Anything else is
# a bug: it fails, is logged, and the deal stays stored for finance (reconciliation reports it).
@shared_task(**SETTLE_RETRIES, together="tournaments.tasks.settle_deals")
def settle_deal(deal_id: int) -> None:
    settlement.deal_settle(deal_id=deal_id)


@shared_task(**SETTLE_RETRIES)
def settle_deals(deal_ids: list[int]) -> None:
    """Deals settled together: those of one batch post (`POST /api/v1/deals`), and single posts'
    sent close together by a web process (rummy_ledger.publisher)."""
    settlement.deals_settle(deal_ids=deal_ids)


@shared_task(**SETTLE_RETRIES)
def settle_tournament_round(round_id: int) -> None:
    """A tournament round's results: settled once; after the final, the prizes paid once."""
    tournament_rounds.round_settle(round_id=round_id)


@shared_task
def sweep_unsettled(older_than_seconds: float | None = None) -> int:
    """Re-enqueue deals stored but not settled for a while (a lost message delays, never loses,
    a deal): beat runs it every SETTLEMENT_SWEEP_SECONDS for deals older than
    SETTLEMENT_SWEEP_AGE_SECONDS, so a lost message is settled within the sum of the two."""
    if older_than_seconds is None:
        older_than_seconds = settings.SETTLEMENT_SWEEP_AGE_SECONDS
    age = timedelta(seconds=older_than_seconds)
    ids = settlement.unsettled_deal_ids(older_than=age)
    for deal_id in ids:
        settle_deal.delay(deal_id)
    rounds = tournament_rounds.unsettled_round_ids(older_than=age)
    for round_id in rounds:
        settle_tournament_round.delay(round_id)
    return len(ids) + len(rounds)


def sweep_after_lost_sends() -> None:
    """A web process that starts may replace one killed while its publisher held sends (up to
    CELERY_PUBLISH_LINGER_SECONDS of deals' settlements, rummy_ledger.publisher): a sweep of
    deals older than twice that (plus 1 s), run that long from now, settles them seconds after
    the kill instead of at beat's next sweep. Deals in a live process's linger are younger, and
    one settled meanwhile is not settled again."""
    age = 2 * settings.CELERY_PUBLISH_LINGER_SECONDS + 1
    sweep_unsettled.apply_soon({"older_than_seconds": age}, countdown=age)


@shared_task
def fee_days_close() -> int:
    """Nightly: store the fee report's rows of the day that just ended (and any day missed)."""
    return fee_report.fee_days_close(fee_account=Account.objects.get(pk=fee_account_id()))
