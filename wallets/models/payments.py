"""Money in and out and its tax: which payments client made each deposit, withdrawals (with the
finance review of the ones that wait for approval) and the TDS year-end records.

A withdrawal's money moves only through `wallets.services.withdrawals`; these rows say where it
is: requested (winnings, then the deposit bucket when real money is off for the player -> the
player's pending bucket, TDS computed), approved (pending -> gateway clearing + TDS payable),
paid, failed (approval reversed, pending -> the buckets it came from) or rejected (pending ->
the buckets it came from).
"""

from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Now
from djmoney.models.fields import MoneyField

from rummy_ledger.api.models import ApiClient
from wallets.models.double_entry import CASH, Transfer
from wallets.models.finance import Proposal
from wallets.models.people import Player


def _amount(**kwargs) -> MoneyField:
    return MoneyField(max_digits=18, decimal_places=2, default_currency=CASH, **kwargs)


def _decimal(help_text: str) -> models.DecimalField:
    return models.DecimalField(max_digits=18, decimal_places=2, help_text=help_text)


def _transfer(related_name: str) -> models.OneToOneField:
    return models.OneToOneField(
        Transfer, null=True, blank=True, on_delete=models.PROTECT, related_name=related_name
    )


def _owner(related_name: str) -> models.ForeignKey:
    """The payments client a deposit or withdrawal belongs to: only it sees or settles it.
    Empty: made by the service itself (demo data, a shell), or from before clients were
    recorded and not traceable to one (migration 0010): no client's."""
    return models.ForeignKey(
        ApiClient, null=True, blank=True, on_delete=models.PROTECT, related_name=related_name
    )


class GatewayDeposit(models.Model):
    """A deposit's reference and the payments client that made it (the money is its
    `transfer`): the same reference from another client is a conflict, never its replay."""

    reference = models.CharField(max_length=128, unique=True)
    client = _owner("deposits")
    transfer = models.OneToOneField(Transfer, on_delete=models.PROTECT, related_name="deposit")

    def __str__(self) -> str:
        return f"deposit {self.reference}"


class Withdrawal(models.Model):
    class Status(models.TextChoices):
        REQUESTED = "requested"
        APPROVED = "approved"
        PAID = "paid"
        FAILED = "failed"
        REJECTED = "rejected"

    # The withdrawals a financial year's tax position counts (failed and rejected ones returned
    # their money and their TDS).
    COUNTED = (Status.REQUESTED, Status.APPROVED, Status.PAID)

    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="withdrawals")
    client = _owner("withdrawals")
    reference = models.CharField(max_length=100, unique=True, help_text="the gateway's request")
    amount = _amount()
    net_winnings = _decimal("net winnings of the FY at this withdrawal (Rule 133; may be < 0)")
    taxed_net_winnings = _decimal("the part of them taxed now (0 when no TDS was withheld)")
    tds = _amount()
    payout = _amount(help_text="amount - TDS: what the gateway pays out")
    pan = models.CharField(max_length=10, help_text="the player's PAN when requested")
    # Real money off for the player: the deposit bucket is refunded after the winnings
    # (docs/regions-and-real-money.md).
    from_deposit = models.DecimalField(
        max_digits=18,
        decimal_places=2,
        default=0,
        db_default=0,
        help_text="the part taken from the deposit bucket (the rest from winnings)",
    )
    pan_required = models.BooleanField(
        default=True,
        db_default=True,
        help_text="no: a refund with real money off whose net winnings are <= 0 (no TDS)",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.REQUESTED)
    needs_approval = models.BooleanField(help_text="large or first: waits for finance")
    requested_at = models.DateTimeField(db_default=Now(), help_text="its ledger time")
    decided_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True, help_text="paid or failed")
    gateway_reference = models.CharField(max_length=100, null=True, blank=True, unique=True)
    failure_reason = models.CharField(max_length=255, blank=True)
    request_transfer = _transfer("withdrawal_requested")
    approval_transfer = _transfer("withdrawal_approved")
    return_transfer = _transfer("withdrawal_returned")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(amount__gt=0, tds__gte=0, payout__gte=0),
                name="withdrawal_amounts_valid",
            ),
            models.CheckConstraint(
                condition=Q(amount=F("tds") + F("payout")), name="withdrawal_payout_is_net_of_tds"
            ),
            models.CheckConstraint(
                condition=Q(from_deposit__gte=0, from_deposit__lte=F("amount")),
                name="withdrawal_from_deposit_within_amount",
            ),
            models.CheckConstraint(
                condition=Q(pan_required=True) | Q(net_winnings__lte=0, tds=0),
                name="withdrawal_without_pan_has_no_net_winnings",
            ),
            models.CheckConstraint(
                condition=Q(status="paid", gateway_reference__isnull=False)
                | ~Q(status="paid") & Q(gateway_reference__isnull=True),
                name="withdrawal_paid_has_gateway_reference",
            ),
        ]
        indexes = [
            models.Index(fields=["player", "requested_at"], name="withdrawal_player_time_idx"),
            models.Index(fields=["status", "requested_at"], name="withdrawal_status_idx"),
            models.Index(fields=["settled_at"], name="withdrawal_settled_idx"),
        ]

    def __str__(self) -> str:
        return f"withdrawal #{self.pk} {self.amount} {self.status}"


class WithdrawalReview(Proposal):
    """Maker-checker for a withdrawal that waits for approval: an operator reviews it (this
    row, with their note as its reason), an approver approves or rejects it, never the same
    person (the proposal's constraint and `proposal_decide`)."""

    approve_permission = "wallets.approve_withdrawal"

    withdrawal = models.OneToOneField(Withdrawal, on_delete=models.PROTECT, related_name="review")

    class Meta(Proposal.Meta):
        permissions = [("approve_withdrawal", "Can approve or reject reviewed withdrawals")]

    def __str__(self) -> str:
        return f"review of withdrawal #{self.withdrawal_id}"


class TdsYearEnd(models.Model):
    """A player's financial year closed: Rule 133's year-end figures and the TDS withheld.

    One per player and year (unique), posted with one ledger key: running the year end again
    changes nothing. `carry_forward` (closing - withheld) is the next year's opening balance.
    """

    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="tds_year_ends")
    fy = models.CharField(max_length=7, help_text="2026-27")
    as_of = models.DateTimeField(help_text="the closing balance's moment (the FY's end)")
    opening = _decimal("deposit + winnings at the FY's start")
    deposits = _decimal("credited to the deposit bucket in the FY (net of GST)")
    withdrawals = _decimal("withdrawn in the FY (failed and rejected ones excluded)")
    closing = _decimal("deposit + winnings at the FY's end")
    taxed_before = _decimal("net winnings already taxed at withdrawals")
    net_winnings = _decimal("the year end's net winnings (may be < 0)")
    tds = _decimal("TDS due on them")
    withheld = _decimal("TDS withheld: from winnings, then deposit")
    carry_forward = _decimal("closing - withheld: the next FY's opening")
    transfer = _transfer("tds_year_end")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "TDS year end"
        constraints = [
            models.UniqueConstraint(fields=["player", "fy"], name="tdsyearend_one_per_player_fy"),
            models.CheckConstraint(
                condition=Q(withheld__gte=0, withheld__lte=F("tds")), name="tdsyearend_withheld"
            ),
        ]
        indexes = [models.Index(fields=["fy"], name="tdsyearend_fy_idx")]

    def __str__(self) -> str:
        return f"TDS year end {self.fy} of {self.player_id}"

    @property
    def shortfall(self):
        """TDS due but not withheld: the player's deposit and winnings held less when it ran."""
        return self.tds - self.withheld
