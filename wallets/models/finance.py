"""What finance staff create: adjustments and reversals (maker-checker proposals),
reconciliation reports and imported payment-gateway statements.

None of these rows moves money by itself: only an approval posts ledger transfers, through
`wallets.services.proposals`.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from djmoney.models.fields import MoneyField

from wallets.models.double_entry import CASH, Bucket, Transfer
from wallets.models.people import Player
from wallets.money.formatting import money


class ProposalStatus(models.TextChoices):
    PROPOSED = "proposed"
    APPROVED = "approved"
    REJECTED = "rejected"


class Proposal(models.Model):
    """Maker-checker: proposed by one member of staff, approved or rejected by another.

    `approve_permission` names the permission a decision needs; the decision itself is
    `wallets.services.proposals.proposal_decide`.
    """

    approve_permission = ""

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

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(
                condition=Q(decided_by__isnull=True) | ~Q(decided_by=F("proposed_by")),
                name="%(class)s_not_decided_by_proposer",
                violation_error_message="A proposal is decided by someone other than its proposer.",
            )
        ]


class Adjustment(Proposal):
    """A manual credit or debit of one player bucket, against the `adjustments` platform account."""

    approve_permission = "wallets.approve_adjustment"

    class Direction(models.TextChoices):
        CREDIT = "credit"
        DEBIT = "debit"

    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="adjustments")
    bucket = models.CharField(max_length=16, choices=Bucket.choices)
    direction = models.CharField(max_length=8, choices=Direction.choices)
    amount = MoneyField(max_digits=18, decimal_places=2, default_currency=CASH)
    transfer = models.OneToOneField(
        Transfer, null=True, blank=True, on_delete=models.PROTECT, related_name="adjustment"
    )

    class Meta(Proposal.Meta):
        permissions = [("approve_adjustment", "Can approve or reject adjustments")]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="adjustment_amount_positive"),
            *Proposal.Meta.constraints,
        ]
        indexes = [models.Index(fields=["status", "proposed_at"], name="adjustment_status_idx")]

    def __str__(self) -> str:
        """`adjustment #7: credit ₹25.00 to b (deposit)`: the player by the id staff know."""
        to = "to" if self.direction == self.Direction.CREDIT else "from"
        return (
            f"adjustment #{self.pk}: {self.direction} {money(self.amount)} "
            f"{to} {self.player.external_id} ({self.bucket})"
        )


class Reversal(Proposal):
    """Undoing every transfer of something (a settled game): the exact opposite of each one.

    `reference` names what is reversed (e.g. `game:12`). The transfers to reverse are the
    snapshot taken when it was proposed, so an approver approves exactly what they saw; the
    reversing transfers are added when it is approved (`ReversalTransfer` rows, both).
    """

    approve_permission = "wallets.approve_reversal"

    reference = models.CharField(max_length=128)

    class Meta(Proposal.Meta):
        permissions = [("approve_reversal", "Can approve or reject reversals")]
        constraints = [
            *Proposal.Meta.constraints,
            models.UniqueConstraint(
                fields=["reference"],
                condition=Q(status__in=["proposed", "approved"]),
                name="reversal_one_open_per_reference",
                violation_error_message="This is already reversed or proposed for reversal.",
            ),
        ]

    def __str__(self) -> str:
        return f"reversal #{self.pk} of {self.reference}"

    def _transfer_ids(self, role: str) -> list[int]:
        links = self.links.filter(role=role).order_by("transfer_id")
        return list(links.values_list("transfer_id", flat=True))

    @property
    def transfer_ids(self) -> list[int]:
        """The transfers this reversal undoes."""
        return self._transfer_ids(ReversalTransfer.Role.TARGET)

    @property
    def posted_transfer_ids(self) -> list[int]:
        """The reversing transfers its approval posted."""
        return self._transfer_ids(ReversalTransfer.Role.POSTED)


class ReversalTransfer(models.Model):
    """A transfer a reversal undoes (`target`), or one its approval posted (`posted`)."""

    class Role(models.TextChoices):
        TARGET = "target"
        POSTED = "posted"

    reversal = models.ForeignKey(Reversal, on_delete=models.PROTECT, related_name="links")
    transfer = models.ForeignKey(Transfer, on_delete=models.PROTECT, related_name="+")
    role = models.CharField(max_length=8, choices=Role.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["reversal", "transfer"], name="reversaltransfer_unique_transfer"
            )
        ]

    def __str__(self) -> str:
        return f"{self.reversal_id} {self.role} {self.transfer_id}"


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
    """One thing a reconciliation check found. The kinds are the checks' own (each registers
    the kinds it reports with a description: `wallets.reconciliation.runner`)."""

    report = models.ForeignKey(
        ReconciliationReport, on_delete=models.CASCADE, related_name="discrepancies"
    )
    kind = models.CharField(max_length=32, help_text="The check's name for what it found.")
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
