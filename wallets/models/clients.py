"""Which payments clients a games client may stake the players of, and whose players they are
(docs/trust-model.md)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from rummy_ledger.api.models import ApiClient
from wallets.models.people import Player


class ClientPairing(models.Model):
    """`games_client` may seat the players of `payments_client` (when its guard is on)."""

    games_client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="+")
    payments_client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", null=True
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["games_client", "payments_client"], name="clientpairing_unique"
            ),
            models.CheckConstraint(
                condition=~Q(games_client=F("payments_client")), name="clientpairing_two_clients"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.games_client} seats players of {self.payments_client}"


class PlayerClient(models.Model):
    """A payments client reported a deposit or a KYC result of the player: one of its players."""

    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="+")
    client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="+")
    first_seen_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["client", "player"], name="playerclient_unique"),
        ]
        indexes = [models.Index(fields=["player"], name="playerclient_player_idx")]

    def __str__(self) -> str:
        return f"{self.player} of {self.client}"


class ClientEscrowTake(models.Model):
    """INR a capped games client's game or tournament took into escrow (`escrow_cap_take`): the
    rolling hour of its cap is summed here, whatever the escrow account is called."""

    client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="+")
    amount = models.DecimalField(max_digits=14, decimal_places=2)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["client", "created_at"], name="escrowtake_client_time")]

    def __str__(self) -> str:
        return f"{self.client}: {self.amount} at {self.created_at:%Y-%m-%d %H:%M}"
