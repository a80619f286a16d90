"""Bonus lots: every bonus credit with its expiry, and what entries took from it.

The bonus bucket's balance is the sum of its lots' `remaining` (reconciliation proves it). Entries
take from the lot that expires first; a refund puts back into the lots its entry took from, so a
refunded bonus keeps its original expiry; an expired lot's remaining goes back to promotions.
Lots move only through `wallets.services.bonuses`.
"""

from django.db import models
from django.db.models import F, Q
from djmoney.models.fields import MoneyField

from wallets.models.double_entry import CASH, Transfer
from wallets.models.finance import Proposal
from wallets.models.people import Player


def _decimal() -> models.DecimalField:
    return models.DecimalField(max_digits=18, decimal_places=2)


class BonusLot(models.Model):
    class Source(models.TextChoices):
        SIGNUP = "signup", "sign-up bonus"
        CASHBACK = "cashback", "GST cashback"
        GRANT = "grant", "finance grant"
        REVERSAL = "reversal", "returned by a reversal"

    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="bonus_lots")
    source = models.CharField(max_length=16, choices=Source.choices)
    amount = _decimal()
    remaining = _decimal()
    granted_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    transfer = models.ForeignKey(
        Transfer, on_delete=models.PROTECT, related_name="bonus_lots", help_text="the credit"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(remaining__gte=0) & Q(remaining__lte=F("amount")),
                name="bonuslot_remaining_within_amount",
            ),
        ]
        indexes = [
            models.Index(fields=["player", "expires_at"], name="bonuslot_player_expiry_idx"),
            models.Index(
                fields=["expires_at"], condition=Q(remaining__gt=0), name="bonuslot_open_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"bonus lot #{self.pk}: {self.remaining} of {self.amount} until {self.expires_at}"


class BonusSpend(models.Model):
    """What one reference (a game seat) took from one lot, and how much of it came back."""

    lot = models.ForeignKey(BonusLot, on_delete=models.PROTECT, related_name="spends")
    reference = models.CharField(max_length=160)
    amount = _decimal()
    restored = _decimal()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(restored__gte=0) & Q(restored__lte=F("amount")),
                name="bonusspend_restored_within_amount",
            ),
        ]
        indexes = [models.Index(fields=["reference"], name="bonusspend_reference_idx")]

    def __str__(self) -> str:
        return f"{self.reference}: {self.amount} from lot #{self.lot_id}"


class BonusGrant(Proposal):
    """A bonus credit from promotions, proposed by one member of finance and approved by another."""

    approve_permission = "wallets.approve_bonusgrant"

    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="bonus_grants")
    amount = MoneyField(max_digits=18, decimal_places=2, default_currency=CASH)
    transfer = models.OneToOneField(
        Transfer, null=True, blank=True, on_delete=models.PROTECT, related_name="bonus_grant"
    )

    class Meta(Proposal.Meta):
        permissions = [("approve_bonusgrant", "Can approve or reject bonus grants")]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="bonusgrant_amount_positive"),
            *Proposal.Meta.constraints,
        ]

    def __str__(self) -> str:
        return f"bonus grant #{self.pk}: {self.amount} to {self.player.external_id}"
