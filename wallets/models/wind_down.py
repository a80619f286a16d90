"""The wind-down: closing the real-money book (`wallets.services.wind_down`).

Proposed by one member of finance and approved by another (`WindDown`, a proposal), only while
`REAL_MONEY=off`; executed by `manage.py wind_down`. Each player it reaches has one line
(`WindDownLine`, unique per wind-down and player): what was refunded (the withdrawals named
`wind-down-<player>`, a later attempt `wind-down-<player>-<n>`), their TDS, and what is held
and why. The lines are recomputed from the ledger at every run, so the report is always the
state of the book.
"""

from django.db import models
from django.db.models import Q

from rummy_ledger.api.models import ApiClient
from wallets.models.finance import Proposal
from wallets.models.payments import Withdrawal
from wallets.models.people import Player


def _decimal(help_text: str) -> models.DecimalField:
    return models.DecimalField(max_digits=18, decimal_places=2, default=0, help_text=help_text)


class WindDown(Proposal):
    approve_permission = "wallets.approve_winddown"

    client = models.ForeignKey(
        ApiClient,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="the payments client (gateway) that owns the refunds and reports them",
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True, help_text="the last complete run")

    class Meta(Proposal.Meta):
        verbose_name = "wind-down"
        permissions = [("approve_winddown", "Can approve or reject a wind-down")]
        constraints = [
            *Proposal.Meta.constraints,
            models.UniqueConstraint(
                fields=["status"],
                condition=Q(status="proposed"),
                name="winddown_one_proposed_at_a_time",
                violation_error_message="A wind-down is already proposed.",
            ),
        ]

    def __str__(self) -> str:
        return f"wind-down #{self.pk} ({self.status})"


class WindDownLine(models.Model):
    class Held(models.TextChoices):
        NONE = "", "nothing held"
        NO_KYC = "no_kyc", "no verified KYC: winnings held until it arrives"
        IN_FLIGHT = "in_flight", "a refund is still with the gateway"

    wind_down = models.ForeignKey(WindDown, on_delete=models.PROTECT, related_name="lines")
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="+")
    refunded = _decimal("wind-down refunds requested, approved or paid")
    tds = _decimal("their TDS")
    held = _decimal("deposit + winnings left with the player")
    held_reason = models.CharField(max_length=16, choices=Held.choices, blank=True)
    refunds = models.PositiveIntegerField(default=0, help_text="refund withdrawals issued")
    withdrawal = models.ForeignKey(
        Withdrawal, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "wind-down line"
        constraints = [
            models.UniqueConstraint(
                fields=["wind_down", "player"], name="winddownline_one_per_player"
            ),
            models.CheckConstraint(
                condition=Q(refunded__gte=0, tds__gte=0, held__gte=0), name="winddownline_amounts"
            ),
        ]

    def __str__(self) -> str:
        return f"wind-down #{self.wind_down_id}: player {self.player_id}"
