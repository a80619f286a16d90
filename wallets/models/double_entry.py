"""The double-entry ledger: accounts, transfers and their entries.

Invariants the database itself enforces (see `wallets/models/sql.py`):
- a player or escrow account's cached balance is never below zero (CHECK);
- every transfer's entries sum to zero per currency, in the account's currency (deferred trigger);
- entries and transfers are append-only (trigger refuses UPDATE and DELETE);
- idempotency keys are unique, and a transfer is reversed at most once (UNIQUE).
"""

from django.contrib.postgres.indexes import BrinIndex
from django.db import models
from django.db.models import Q
from djmoney.models.fields import MoneyField

from rummy_ledger.commit_order import Xid8Field
from wallets.models.people import Player

CASH = "INR"
CHIPS = "CHP"


class Bucket(models.TextChoices):
    DEPOSIT = "deposit"
    WINNINGS = "winnings"
    BONUS = "bonus"
    CHIPS = "chips"
    # Withdrawals on their way out (requested or approved, not yet paid): the player's money,
    # but in no entry order, so never spendable (wallets.services.withdrawals).
    PENDING = "pending", "pending withdrawal"


BUCKET_CURRENCY = {
    Bucket.DEPOSIT: CASH,
    Bucket.WINNINGS: CASH,
    Bucket.BONUS: CASH,
    Bucket.CHIPS: CHIPS,
    Bucket.PENDING: CASH,
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
        BONUS = "bonus"  # promotional credit: sign-up, GST cashback, finance grant
        BONUS_EXPIRY = "bonus_expiry"  # an expired bonus lot back to promotions
        TAX = "tax"  # TDS withheld at the financial year's end

    kind = models.CharField(max_length=16, choices=Kind.choices)
    reference = models.CharField(max_length=128)
    idempotency_key = models.CharField(max_length=160, unique=True)
    content_hash = models.CharField(max_length=64)
    reverses = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reversed_by"
    )
    memo = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(db_default=models.functions.Now(), db_index=True)
    # the writing transaction's id: the hash chain reads transfers in commit order by it
    # (rummy_ledger/commit_order.py, wallets/chain/)
    txid = Xid8Field(db_default=models.Func(function="pg_current_xact_id"), editable=False)

    class Meta:
        indexes = [
            models.Index(fields=["txid", "id"], name="transfer_commit_order_idx"),
            models.Index(fields=["reference"], name="transfer_reference_idx"),
            # prefix search of references (`game:12` finds `game:12:...`)
            models.Index(
                fields=["reference"],
                name="transfer_reference_prefix_idx",
                opclasses=["varchar_pattern_ops"],
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.reference}"


class Entry(models.Model):
    transfer = models.ForeignKey(Transfer, on_delete=models.PROTECT, related_name="entries")
    # no index of its own: entry_account_time_idx (account, created_at) serves every look-up
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="entries", db_index=False
    )
    amount = MoneyField(max_digits=18, decimal_places=2, default_currency=CASH)
    created_at = models.DateTimeField(db_default=models.functions.Now())

    class Meta:
        verbose_name_plural = "entries"
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="entry_amount_not_zero"),
        ]
        indexes = [
            models.Index(fields=["account", "created_at"], name="entry_account_time_idx"),
            # date ranges over an append-only table: tiny, and as good as a btree here
            BrinIndex(fields=["created_at"], name="entry_created_brin"),
        ]

    def __str__(self) -> str:
        return f"{self.account_id} {self.amount}"
