"""Who the ledger serves: players (by the platform's external id), their KYC, machine clients."""

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


class ApiClient(models.Model):
    """A machine client (game server, payment gateway). The key is stored only as a hash."""

    class Scope(models.TextChoices):
        GAMES = "games"
        PAYMENTS = "payments"

    name = models.CharField(max_length=100, unique=True)
    key_prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    scopes = models.JSONField(default=list)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Guards of a games client (docs/trust-model.md; wallets.services.client_guards), off by
    # default: set by a superuser, like the key and its scopes.
    paired_players_only = models.BooleanField(
        default=False,
        db_default=False,
        help_text="games: seat only players of the payments clients this client is paired with",
    )
    hourly_escrow_cap = models.DecimalField(
        max_digits=14,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="games: the most INR its games may take into escrow in any rolling hour "
        "(entries and rejoins); empty: no cap",
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(hourly_escrow_cap__isnull=True) | Q(hourly_escrow_cap__gt=0),
                name="apiclient_escrow_cap_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_authenticated(self) -> bool:
        return True

    def has_scope(self, scope: str) -> bool:
        return self.is_active and scope in self.scopes
