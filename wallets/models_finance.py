"""What finance staff create: adjustments and reversals (maker-checker), reconciliation reports
and imported payment-gateway statements.

Imported at the end of `wallets.models`, so `from wallets.models import Adjustment` works.
None of these rows moves money by itself: only an approval posts ledger transfers, through
`wallets.adjustments`.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from djmoney.models.fields import MoneyField

from wallets.models import CASH, Bucket, Player, Transfer


class ProposalStatus(models.TextChoices):
    PROPOSED = "proposed"
    APPROVED = "approved"
    REJECTED = "rejected"


def _not_self_approved(prefix: str) -> models.CheckConstraint:
    return models.CheckConstraint(
        condition=Q(decided_by__isnull=True) | ~Q(decided_by=F("proposed_by")),
        name=f"{prefix}_not_decided_by_proposer",
        violation_error_message="A proposal is decided by someone other than its proposer.",
    )


class Adjustment(models.Model):
    """A manual credit or debit of one player bucket, against the `adjustments` platform account."""

    class Direction(models.TextChoices):
        CREDIT = "credit"
        DEBIT = "debit"

    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="adjustments")
    bucket = models.CharField(max_length=16, choices=Bucket.choices)
    direction = models.CharField(max_length=8, choices=Direction.choices)
    amount = MoneyField(max_digits=18, decimal_places=2, default_currency=CASH)
    reason = models.TextField()
    status = models.CharField(
        max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PROPOSED
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    proposed_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.CharField(max_length=255, blank=True)
    transfer = models.OneToOneField(
        Transfer, null=True, blank=True, on_delete=models.PROTECT, related_name="adjustment"
    )

    class Meta:
        permissions = [("approve_adjustment", "Can approve or reject adjustments")]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="adjustment_amount_positive"),
            _not_self_approved("adjustment"),
        ]
        indexes = [models.Index(fields=["status", "proposed_at"], name="adjustment_status_idx")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.direction} {self.amount} {self.player_id}/{self.bucket}"


class Reversal(models.Model):
    """Undoing every transfer of something (a settled game): the exact opposite of each one.

    `reference` names what is reversed (e.g. `game:G1`); `transfer_ids` is the snapshot taken
    when it was proposed, so an approver approves exactly what they saw.
    """

    reference = models.CharField(max_length=128)
    transfer_ids = models.JSONField(default=list)
    reason = models.TextField()
    status = models.CharField(
        max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PROPOSED
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    proposed_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.CharField(max_length=255, blank=True)
    posted_transfer_ids = models.JSONField(default=list, blank=True)

    class Meta:
        permissions = [("approve_reversal", "Can approve or reject reversals")]
        constraints = [
            _not_self_approved("reversal"),
            models.UniqueConstraint(
                fields=["reference"],
                condition=Q(status__in=["proposed", "approved"]),
                name="reversal_one_open_per_reference",
                violation_error_message="This is already reversed or proposed for reversal.",
            ),
        ]

    def __str__(self) -> str:
        return f"reversal #{self.pk} of {self.reference}"


class ReconciliationReport(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running"
        CLEAN = "clean"
        DISCREPANCIES = "discrepancies"
        FAILED = "failed"

    class Trigger(models.TextChoices):
        SCHEDULE = "schedule"
        COMMAND = "command"
        ADMIN = "admin"

    started_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    discrepancy_count = models.PositiveIntegerField(default=0)
    stats = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        permissions = [("run_reconciliation", "Can start a reconciliation")]

    def __str__(self) -> str:
        return f"reconciliation #{self.pk} ({self.status})"


class Discrepancy(models.Model):
    class Kind(models.TextChoices):
        CACHED_BALANCE = "cached_balance", "cached balance differs from its entries"
        FOREIGN_CURRENCY = "foreign_currency", "entry in a currency other than its account's"
        UNBALANCED_TRANSFER = "unbalanced_transfer", "transfer does not sum to zero"
        CURRENCY_TOTAL = "currency_total", "balances of a currency do not sum to zero"
        NEGATIVE_BALANCE = "negative_balance", "player or escrow balance below zero"
        ESCROW_NOT_EMPTY = "escrow_not_empty", "finished game's escrow not empty"
        GAME_UNBALANCED = "game_unbalanced", "payouts + fee + refunds differ from collected"
        GAME_STUCK = "game_stuck", "game open too long"
        DEAL_UNSETTLED = "deal_unsettled", "deal stored but not settled"
        GATEWAY_MISSING_IN_LEDGER = (
            "gateway_missing_in_ledger",
            "gateway line with no ledger record",
        )
        GATEWAY_MISSING_IN_STATEMENT = (
            "gateway_missing_in_statement",
            "ledger record missing from the gateway statement",
        )
        GATEWAY_AMOUNT_MISMATCH = "gateway_amount_mismatch", "gateway and ledger amounts differ"

    report = models.ForeignKey(
        ReconciliationReport, on_delete=models.CASCADE, related_name="discrepancies"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    subject = models.CharField(max_length=200)
    expected = models.DecimalField(max_digits=20, decimal_places=2, null=True, blank=True)
    actual = models.DecimalField(max_digits=20, decimal_places=2, null=True, blank=True)
    currency = models.CharField(max_length=3, blank=True)
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name_plural = "discrepancies"
        indexes = [models.Index(fields=["report", "kind"], name="discrepancy_report_kind_idx")]

    def __str__(self) -> str:
        return f"{self.kind}: {self.subject}"


class GatewayStatement(models.Model):
    """One imported payment-gateway statement (CSV: reference, amount, date, type)."""

    name = models.CharField(max_length=200)
    sha256 = models.CharField(max_length=64, unique=True)
    imported_at = models.DateTimeField(auto_now_add=True)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    period_start = models.DateField()
    period_end = models.DateField()
    line_count = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.name} ({self.period_start}..{self.period_end})"


class GatewayStatementLine(models.Model):
    class Kind(models.TextChoices):
        DEPOSIT = "deposit"
        WITHDRAWAL = "withdrawal"

    statement = models.ForeignKey(GatewayStatement, on_delete=models.CASCADE, related_name="lines")
    reference = models.CharField(max_length=128)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    amount = models.DecimalField(max_digits=18, decimal_places=2)
    currency = models.CharField(max_length=3, default=CASH)
    date = models.DateField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["statement", "kind", "reference"], name="gateway_line_unique_reference"
            )
        ]
        indexes = [models.Index(fields=["reference"], name="gateway_line_reference_idx")]

    def __str__(self) -> str:
        return f"{self.kind} {self.reference} {self.amount}"
