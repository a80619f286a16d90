"""The API layer's tables: the machine clients that call it (`ApiClient`, their keys stored as
hashes: `rummy_ledger.api.keys`) and the record of each idempotent write (`IdempotencyRecord`).

The apps' tables point at `ApiClient` (who owns a game, a deposit, a withdrawal; whose players a
games client may seat): it is the callers' identity, as the user model is a person's. Its table
kept the name it had in the ledger app (`wallets_apiclient`, migration `api.0003`): moving the
model moved no row and no foreign key.
"""

import ipaddress

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

RATE_LIMIT_MAX = 1_000_000  # requests a second: a bound on the field, far above any real need
NETWORKS_MAX = 32  # networks a client's keys may work from


def networks_valid(value) -> None:
    """A list of at most NETWORKS_MAX CIDR networks (`10.0.0.0/8`, `2001:db8::/32`, or one
    address)."""
    if not isinstance(value, list) or len(value) > NETWORKS_MAX:
        raise ValidationError(f"a list of at most {NETWORKS_MAX} networks")
    for network in value:
        try:
            ipaddress.ip_network(network)
        except (TypeError, ValueError):
            raise ValidationError(f"not a network (CIDR, host bits zero): {network!r}") from None


class ApiClient(models.Model):
    """A machine client (game server, payment gateway). The key is stored only as a hash."""

    class Scope(models.TextChoices):
        GAMES = "games"
        PAYMENTS = "payments"

    name = models.CharField(max_length=100, unique=True)
    key_prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    key_expires_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="the key stops working then (401 invalid_key); empty: never",
    )
    key_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    # While it rotates, a client holds two keys: the one before the last rotation works until
    # its end time, then answers 401 invalid_key like an expired key.
    previous_key_prefix = models.CharField(max_length=16, unique=True, null=True, editable=False)
    previous_key_hash = models.CharField(max_length=64, blank=True, editable=False, db_default="")
    previous_key_ends_at = models.DateTimeField(null=True, blank=True, editable=False)
    previous_key_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Its keys work only from these networks (CIDR; empty: from anywhere); a use from elsewhere
    # answers 403 network_refused, and the last one is kept for the admin.
    allowed_networks = models.JSONField(
        default=list,
        db_default=[],  # a row written without it (an older migration's model) works anywhere
        blank=True,
        validators=[networks_valid],
        help_text='CIDR networks its keys work from, e.g. ["203.0.113.0/24"]; empty: anywhere',
    )
    refused_at = models.DateTimeField(null=True, blank=True, editable=False)
    refused_address = models.GenericIPAddressField(null=True, blank=True, editable=False)
    scopes = models.JSONField(default=list)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Guards of a games client (docs/trust-model.md; enforced by wallets.services.client_guards),
    # off by default: set by a superuser, like the key and its scopes.
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
    # Its own rate limit (rummy_ledger.api.limits): requests a second, in bursts of up to
    # API_RATE_BURST_SECONDS of them; null: API_RATE_LIMIT. Set by a superuser, like the guards.
    rate_limit = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(RATE_LIMIT_MAX)],
        help_text="requests a second this client may make, in bursts of a few seconds' worth "
        "(API_RATE_BURST_SECONDS); empty: the service's default (API_RATE_LIMIT)",
    )

    class Meta:
        db_table = "wallets_apiclient"  # the ledger app's table, taken over as it was
        constraints = [
            models.CheckConstraint(
                condition=Q(hourly_escrow_cap__isnull=True) | Q(hourly_escrow_cap__gt=0),
                name="apiclient_escrow_cap_positive",
            ),
            models.CheckConstraint(
                condition=Q(rate_limit__isnull=True) | Q(rate_limit__range=(1, RATE_LIMIT_MAX)),
                name="apiclient_rate_limit_bounded",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_authenticated(self) -> bool:
        return True

    def has_scope(self, scope: str) -> bool:
        return self.is_active and scope in self.scopes


class IdempotencyRecord(models.Model):
    """The first response to a write, replayed for a repeat with the same key and body: its
    body as the client received it, byte for byte (a JSON column would reorder its keys)."""

    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=128)
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True)
    body = models.TextField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["client", "key"], name="idempotency_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.client_id}:{self.key}"
