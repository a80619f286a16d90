"""Thin Celery tasks: they call one service and are safe to run twice; the settlement tasks take
nothing (they drain the stored deals and rounds, the tables that are their queues). Their base
class (`rummy_ledger.tasks.AfterCommitTask`) sends them only after the caller's commit."""

from celery import shared_task
from celery.signals import task_prerun
from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections

from rummy_ledger.errors import Retryable
from tournaments.games.services import fee_report, settlement
from tournaments.games.services.escrow import fee_account_id
from tournaments.leaderboards.services import payout as leaderboard_payout
from tournaments.tournaments.services import rounds as tournament_rounds
from tournaments.tournaments.services import tickets
from wallets.models import Account


@task_prerun.connect
def _fresh_enough_connections(**kwargs) -> None:
    """Like Django between requests: drop connections past CONN_MAX_AGE or broken, keep the rest
    (settings.CELERY_DB_REUSE_MAX stops Celery from closing them around every task)."""
    if not getattr(kwargs.get("task").request, "is_eager", False):
        close_old_connections()


# A wake that meets contention (a busy ledger, a lock or statement timeout) or a database that
# went away is tried again a few times with backoff (1, 2, 4 s, jittered); after that, or on
# anything else (a bug, logged), beat's next wake runs the queue. Nothing is lost either way: the
# stored deals and rounds are the queue, a message only wakes a worker.
WAKE_RETRIES = {
    "acks_late": True,
    "autoretry_for": (Retryable, OperationalError, InterfaceError),
    "retry_backoff": 1,
    "retry_backoff_max": 4,
    "max_retries": 3,
}


def settlement_wake(*, deals: int = 1) -> None:
    """Wake a settlement worker for `deals` deals committed now (by the caller's transaction,
    once it commits). One deal's wake is gathered with others' for SETTLEMENT_GATHER_SECONDS
    (`AfterCommitTask.wake`); a batch's many deals are a gathering of their own: due at once."""
    gather = settings.SETTLEMENT_GATHER_SECONDS if deals == 1 else 0.0
    settle_waiting.wake(gather=gather)


@shared_task(**WAKE_RETRIES)
def settle_waiting() -> None:
    """Settle games with stored deals, a bounded run (`settlement.waiting_settle`); when games
    may be left, the next run is woken and this one returns, so the other queues get their turn.
    Woken after a deal's commit, by its own re-wake, and by beat every SETTLEMENT_WAKE_SECONDS."""
    if settlement.waiting_settle():
        settle_waiting.wake()


@shared_task(**WAKE_RETRIES)
def settle_waiting_rounds() -> None:
    """Settle stored tournament rounds, a bounded run (`rounds.waiting_rounds_settle`), woken
    as `settle_waiting` is: after a round's commit, by its own re-wake, and by beat."""
    if tournament_rounds.waiting_rounds_settle():
        settle_waiting_rounds.wake()


@shared_task
def fee_days_close() -> int:
    """Nightly: store the fee report's rows of the day that just ended (and any day missed)."""
    return fee_report.fee_days_close(fee_account=Account.objects.get(pk=fee_account_id()))


@shared_task
def tickets_expire() -> int:
    """Beat's: finance tickets past their own expiry, their value back to promotions."""
    return tickets.tickets_expire()


@shared_task(**WAKE_RETRIES)
def leaderboards_pay() -> int:
    """Every LEADERBOARDS_PAY_SECONDS: leaderboards begun marked running, those ended paid, each
    once (`payout.leaderboards_due_pay`); returns how many it paid."""
    return leaderboard_payout.leaderboards_due_pay()
