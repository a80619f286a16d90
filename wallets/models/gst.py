"""GST rates by date, the proposal that adds a future one, and the rate each deposit was taxed at.

The rates are data, never constants: the law changed the rate (28 % from 1 October 2023, 40 %
from 22 September 2025) and may change it again. A rate in force or past is never edited or
removed (a trigger refuses it: `wallets/migrations/0012_gst_rates.pg.sql`); finance adds a
future one through maker-checker (`GstRateProposal`). A deposit keeps the rate it was taxed at
in its own row (`DepositGst`, append-only), beside its immutable transfer.
"""

from django.db import models
from django.db.models import Q

from wallets.models.double_entry import Transfer
from wallets.models.finance import Proposal


def _rate() -> models.DecimalField:
    return models.DecimalField(max_digits=5, decimal_places=2, help_text="percent, e.g. 40.00")


_RATE_RANGE = Q(rate_percent__gte=0, rate_percent__lt=100)


class GstRate(models.Model):
    """GST on online money gaming deposits from an IST date on (until the next rate)."""

    effective_from = models.DateField(unique=True, help_text="the first IST day it applies to")
    rate_percent = _rate()
    source = models.CharField(max_length=255, help_text="the notification or decision")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "GST rate"
        ordering = ["effective_from"]
        constraints = [models.CheckConstraint(condition=_RATE_RANGE, name="gstrate_rate_range")]

    def __str__(self) -> str:
        return f"GST {self.rate_percent} % from {self.effective_from}"


class GstRateProposal(Proposal):
    """A future GST rate, proposed by one member of finance and added when another approves it,
    before its first day (`wallets.tax.gst_rates`)."""

    approve_permission = "wallets.approve_gstrateproposal"

    effective_from = models.DateField(help_text="the first IST day it applies to")
    rate_percent = _rate()
    source = models.CharField(max_length=255, help_text="the notification or decision")
    rate = models.OneToOneField(
        GstRate, null=True, blank=True, on_delete=models.PROTECT, related_name="proposal"
    )

    class Meta(Proposal.Meta):
        verbose_name = "GST rate proposal"
        permissions = [("approve_gstrateproposal", "Can approve or reject GST rate proposals")]
        constraints = [
            *Proposal.Meta.constraints,
            models.CheckConstraint(condition=_RATE_RANGE, name="gstrateproposal_rate_range"),
        ]

    def __str__(self) -> str:
        return f"GST rate proposal #{self.pk}: {self.rate_percent} % from {self.effective_from}"


class DepositGst(models.Model):
    """The GST of one deposit, at the rate in force when it was recorded (append-only).
    Deposits recorded before the rates were dated got theirs at 28 % (the data migration)."""

    transfer = models.OneToOneField(
        Transfer, primary_key=True, on_delete=models.PROTECT, related_name="gst"
    )
    rate_percent = _rate()
    amount = models.DecimalField(max_digits=18, decimal_places=2, help_text="what was paid")
    gst = models.DecimalField(max_digits=18, decimal_places=2, help_text="to GST payable")

    class Meta:
        verbose_name = "deposit GST"
        constraints = [
            models.CheckConstraint(
                condition=_RATE_RANGE & Q(amount__gt=0, gst__gte=0, gst__lte=models.F("amount")),
                name="depositgst_valid",
            )
        ]
        indexes = [models.Index(fields=["rate_percent"], name="depositgst_rate_idx")]

    def __str__(self) -> str:
        return f"GST {self.gst} at {self.rate_percent} % on transfer #{self.transfer_id}"
