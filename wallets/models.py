"""The double-entry ledger: players, accounts, transfers and their entries, API clients.

Invariants the database itself enforces (see migrations/0002_ledger_sql.py):
- a player or escrow account's cached balance is never below zero (CHECK);
- every transfer's entries sum to zero per currency, in the account's currency (deferred trigger);
- entries and transfers are append-only (trigger refuses UPDATE and DELETE);
- idempotency keys are unique, and a transfer is reversed at most once (UNIQUE).
"""

from django.db import models
from django.db.models import Q
from djmoney.models.fields import MoneyField

CASH = "INR"
CHIPS = "CHP"


class Player(models.Model):
    external_id = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.external_id


class Bucket(models.TextChoices):
    DEPOSIT = "deposit"
    WINNINGS = "winnings"
    BONUS = "bonus"
    CHIPS = "chips"


BUCKET_CURRENCY = {
    Bucket.DEPOSIT: CASH,
    Bucket.WINNINGS: CASH,
    Bucket.BONUS: CASH,
    Bucket.CHIPS: CHIPS,
}


class PlatformAccount(models.TextChoices):
    FEE_REVENUE = "fee_revenue"
    GST_PAYABLE = "gst_payable"
    TDS_PAYABLE = "tds_payable"
    GATEWAY_CLEARING = "gateway_clearing"
    PROMOTIONS = "promotions"
    CHIPS_ISSUANCE = "chips_issuance"
    ADJUSTMENTS = "adjustments"


PLATFORM_CURRENCY = {code: CASH for code in PlatformAccount} | {
    PlatformAccount.CHIPS_ISSUANCE: CHIPS
}


class Account(models.Model):
    """One balance in one currency.

    Player and escrow accounts cache their balance (row-locked when posting, CHECK >= 0).
    Platform accounts are append-only sinks: their balance is the sum of their entries, so the
    accounts every settlement credits are never a single hot row lock.
    """

    class Kind(models.TextChoices):
        PLAYER = "player"
        ESCROW = "escrow"
        PLATFORM = "platform"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    code = models.CharField(max_length=96, unique=True)
    player = models.ForeignKey(
        Player, null=True, blank=True, on_delete=models.PROTECT, related_name="accounts"
    )
    bucket = models.CharField(max_length=16, choices=Bucket.choices, blank=True)
    balance = MoneyField(max_digits=18, decimal_places=2, default=0, default_currency=CASH)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="platform") | Q(balance__gte=0),
                name="account_balance_not_negative",
                violation_error_message="Insufficient funds.",
            ),
            models.CheckConstraint(
                condition=Q(kind="player", player__isnull=False) & ~Q(bucket="")
                | ~Q(kind="player") & Q(player__isnull=True, bucket=""),
                name="account_player_bucket_consistent",
            ),
            models.UniqueConstraint(
                fields=["player", "bucket"],
                condition=Q(kind="player"),
                name="account_one_per_player_bucket",
            ),
        ]

    def __str__(self) -> str:
        return self.code

    @property
    def caches_balance(self) -> bool:
        return self.kind != self.Kind.PLATFORM

    @property
    def currency(self) -> str:
        return str(self.balance.currency)


class Transfer(models.Model):
    class Kind(models.TextChoices):
        DEPOSIT = "deposit"
        WITHDRAWAL = "withdrawal"
        ENTRY = "entry"
        REFUND = "refund"
        SETTLEMENT = "settlement"
        CHIPS_GRANT = "chips_grant"
        ADJUSTMENT = "adjustment"
        REVERSAL = "reversal"
        TRANSFER = "transfer"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    reference = models.CharField(max_length=128)
    idempotency_key = models.CharField(max_length=160, unique=True)
    content_hash = models.CharField(max_length=64)
    reverses = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reversed_by"
    )
    memo = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(db_default=models.functions.Now(), db_index=True)

    class Meta:
        indexes = [models.Index(fields=["reference"], name="transfer_reference_idx")]

    def __str__(self) -> str:
        return f"{self.kind} {self.reference}"


class Entry(models.Model):
    transfer = models.ForeignKey(Transfer, on_delete=models.PROTECT, related_name="entries")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="entries")
    amount = MoneyField(max_digits=18, decimal_places=2, default_currency=CASH)
    created_at = models.DateTimeField(db_default=models.functions.Now())

    class Meta:
        verbose_name_plural = "entries"
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="entry_amount_not_zero"),
        ]
        indexes = [
            models.Index(fields=["account", "created_at"], name="entry_account_time_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.account_id} {self.amount}"


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

    def __str__(self) -> str:
        return self.name

    @property
    def is_authenticated(self) -> bool:
        return True

    def has_scope(self, scope: str) -> bool:
        return self.is_active and scope in self.scopes


# Finance staff's records (issue 5) live in their own module; re-exported here.
from wallets.models_finance import (  # noqa: E402, F401
    Adjustment,
    Discrepancy,
    GatewayStatement,
    GatewayStatementLine,
    ProposalStatus,
    ReconciliationReport,
    Reversal,
)
