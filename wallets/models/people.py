"""Who the ledger serves: players (by the platform's external id) and their KYC. The machine
clients that call it are the API layer's (`rummy_ledger.api.models.ApiClient`)."""

from django.db import models
from django.db.models import Q


class KycStatus(models.TextChoices):
    NONE = "none"
    VERIFIED = "verified"
    REJECTED = "rejected"


class Player(models.Model):
    """A player; `pan` and `kyc_status` are the current KYC (its history: `KycRecord`).

    A verified PAN belongs to one player only (a unique constraint): TDS is filed per PAN.
    """

    external_id = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    kyc_status = models.CharField(
        max_length=16, choices=KycStatus.choices, default=KycStatus.NONE, db_default=KycStatus.NONE
    )
    pan = models.CharField(max_length=10, blank=True, default="", db_default="")
    kyc_updated_at = models.DateTimeField(null=True, blank=True)
    region = models.CharField(
        max_length=2,
        blank=True,
        default="",
        db_default="",
        help_text="Indian state or union territory code (e.g. TN), for the real-money switch: "
        "the most restrictive one reported, or what finance set.",
    )

    class Meta:
        permissions = [("set_player_region", "Can set a player's region (real-money switch)")]
        constraints = [
            models.UniqueConstraint(
                fields=["pan"],
                condition=Q(kyc_status=KycStatus.VERIFIED),
                name="player_verified_pan_unique",
                violation_error_message="This PAN is verified for another player.",
            ),
            models.CheckConstraint(
                condition=~Q(kyc_status=KycStatus.VERIFIED) | ~Q(pan=""),
                name="player_verified_has_pan",
            ),
        ]

    def __str__(self) -> str:
        return self.external_id


class KycRecord(models.Model):
    """One KYC result the payment gateway reported (kept: a rejection never erases history)."""

    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="kyc_records")
    pan = models.CharField(max_length=10)
    status = models.CharField(
        max_length=16, choices=[(s, s) for s in (KycStatus.VERIFIED, KycStatus.REJECTED)]
    )
    reference = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "KYC record"
        indexes = [models.Index(fields=["player", "created_at"], name="kycrecord_player_idx")]

    def __str__(self) -> str:
        return f"{self.player_id} {self.pan} {self.status}"
