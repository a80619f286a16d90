"""GST rates by date: the rate in force at an instant (India's calendar day), and the
maker-checker that adds a future rate (`GstRateProposal`).

A deposit is taxed at the rate in force at the instant it is recorded: the ledger's time of its
transaction (`ledger_now`, the time its transfer is stamped with), read as an IST date. A rate
is added only for a day still to come, when it is proposed and again when it is approved: an
approval on or after its first day would tax deposits already recorded at another rate than
theirs, so it is refused (and the database refuses such a row:
`wallets/migrations/0012_gst_rates.pg.sql`).
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction

from wallets.errors import ProposalInvalid
from wallets.models import GstRate, GstRateProposal
from wallets.services.proposals import permission_required, reason_required
from wallets.services.transfers import ledger_now
from wallets.tax import formulas, gst_history


def gst_rate_at(moment: datetime) -> Decimal:
    """The rate in force on `moment`'s IST date (0 before the first rate: no GST then)."""
    day = moment.astimezone(formulas.INDIA).date()
    rate = GstRate.objects.filter(effective_from__lte=day).order_by("-effective_from").first()
    return rate.rate_percent if rate is not None else formulas.ZERO


def gst_rate_now() -> Decimal:
    """The rate a deposit recorded in this transaction is taxed at."""
    return gst_rate_at(ledger_now())


def _today() -> date:
    return ledger_now().astimezone(formulas.INDIA).date()


def future_rate_checked(*, effective_from: date, rate_percent: Decimal) -> None:
    try:
        formulas.gst_rate_checked(rate_percent)
    except formulas.TaxError as exc:
        raise ProposalInvalid(str(exc), details={"rate_percent": str(rate_percent)}) from exc
    today = _today()
    if effective_from <= today:
        raise ProposalInvalid(
            f"a GST rate from {effective_from} would apply to deposits already recorded (today "
            f"is {today} in India): only a rate from a later day can be added",
            details={"effective_from": effective_from.isoformat(), "today": today.isoformat()},
        )
    if GstRate.objects.filter(effective_from=effective_from).exists():
        raise ProposalInvalid(
            f"a GST rate from {effective_from} already exists",
            details={"effective_from": effective_from.isoformat()},
        )


def gst_rate_propose(
    *,
    proposed_by: AbstractBaseUser,
    effective_from: date,
    rate_percent: Decimal,
    source: str,
    reason: str,
) -> GstRateProposal:
    """Finance proposes a future rate, naming the notification it comes from."""
    permission_required(proposed_by, "wallets.add_gstrateproposal")
    future_rate_checked(effective_from=effective_from, rate_percent=rate_percent)
    if not source.strip():
        raise ProposalInvalid("a GST rate names its source (the notification or decision)")
    return GstRateProposal.objects.create(
        effective_from=effective_from,
        rate_percent=rate_percent,
        source=source.strip()[:255],
        reason=reason_required(reason, "a GST rate"),
        proposed_by=proposed_by,
    )


def gst_rate_add(proposal: GstRateProposal) -> None:
    """Approved: the rate is added, if its first day is still to come."""
    with transaction.atomic():
        future_rate_checked(
            effective_from=proposal.effective_from, rate_percent=proposal.rate_percent
        )
        proposal.rate = GstRate.objects.create(
            effective_from=proposal.effective_from,
            rate_percent=proposal.rate_percent,
            source=proposal.source,
        )
    proposal.save(update_fields=["rate"])


@transaction.atomic
def gst_history_restore() -> None:
    """The past rates back after a flush emptied the table (a test database between
    transactional tests: TRUNCATE passes the history trigger, and so must this, for these rows
    only); on a migrated database nothing is missing and nothing is written."""
    days = set(GstRate.objects.values_list("effective_from", flat=True))
    missing = [rate for rate in gst_history.RATES if rate[0] not in days]
    if not missing:
        return
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
    GstRate.objects.bulk_create(
        GstRate(effective_from=day, rate_percent=rate, source=source)
        for day, rate, source in missing
    )
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = DEFAULT")


def gst_history_after_migrate(sender, **kwargs) -> None:
    """post_migrate handler (connected by the wallets app): after a migrate or a flush."""
    if sender.name == "wallets":
        gst_history_restore()
