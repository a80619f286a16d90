"""Games and what they pay: templates (finance-edited), games with their escrow, players, deals.

A game copies the money terms of its template when it opens (`Game.terms`), so finance editing a
template never changes a game in play. Amounts are `Decimal` in the game's currency (INR to the
paisa, or practice chips `CHP`); the ledger holds the money, these rows say why it moved.
"""

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from wallets.models import CASH, CHIPS, Account, ApiClient, Player

ZERO = Decimal("0.00")


class Format(models.TextChoices):
    POINTS = "points"
    POOL101 = "pool101"
    POOL201 = "pool201"
    DEALS = "deals"
    RUMMY500 = "rummy500"


class Currency(models.TextChoices):
    INR = CASH, "Cash (INR)"
    CHP = CHIPS, "Practice chips"


class SplitPolicy(models.TextChoices):
    NONE = "none", "No split"
    EQUAL = "equal", "Equal shares"
    DROPS = "drops", "In proportion to drops left + 1"


def default_entry_buckets() -> list[str]:
    return ["bonus", "deposit", "winnings"]


class GameTemplate(models.Model):
    """A kind of table finance offers: format, currency, stake, fee and house rules."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120, blank=True)
    format = models.CharField(max_length=16, choices=Format.choices)
    currency = models.CharField(max_length=3, choices=Currency.choices, default=CASH)
    seats = models.PositiveSmallIntegerField(
        default=6, validators=[MinValueValidator(2), MaxValueValidator(6)]
    )
    point_value = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, help_text="Points format only."
    )
    entry_fee = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, help_text="Every format but points."
    )
    fee_percent = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=ZERO,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text="Platform fee, a percentage of what the winners receive (0 for chips).",
    )
    deals = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Deals format: N.")
    rules = models.JSONField(
        default=dict, blank=True, help_text='Preset name or {"preset": ..., overrides}.'
    )
    split_policy = models.CharField(
        max_length=8, choices=SplitPolicy.choices, default=SplitPolicy.NONE
    )
    rejoin_allowed = models.BooleanField(default=False)
    entry_buckets = models.JSONField(
        default=default_entry_buckets,
        help_text="Order the entry is taken from the wallet buckets (cash only).",
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(format="points") | Q(point_value__gt=0),
                name="template_points_has_point_value",
            ),
            models.CheckConstraint(
                condition=Q(format="points") | Q(entry_fee__gt=0),
                name="template_entry_fee_positive",
            ),
            models.CheckConstraint(
                condition=~Q(format="deals") | Q(deals__gte=1),
                name="template_deals_has_count",
            ),
        ]

    def __str__(self) -> str:
        return self.slug


class Game(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        FINISHED = "finished"
        CANCELLED = "cancelled"

    client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="games")
    game_id = models.CharField(max_length=64)
    template = models.ForeignKey(GameTemplate, on_delete=models.PROTECT, related_name="games")
    escrow = models.OneToOneField(Account, on_delete=models.PROTECT, related_name="game")
    format = models.CharField(max_length=16, choices=Format.choices)
    currency = models.CharField(max_length=3, choices=Currency.choices)
    terms = models.JSONField(help_text="The template's terms and resolved rules at opening.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    deals_played = models.PositiveIntegerField(default=0)
    collected = models.DecimalField(max_digits=14, decimal_places=2, default=ZERO)
    paid_out = models.DecimalField(max_digits=14, decimal_places=2, default=ZERO)
    refunded = models.DecimalField(max_digits=14, decimal_places=2, default=ZERO)
    fee = models.DecimalField(max_digits=14, decimal_places=2, default=ZERO)
    outcome = models.CharField(max_length=16, blank=True, help_text="won, split or cancelled")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["client", "game_id"], name="game_unique_per_client"),
        ]
        indexes = [models.Index(fields=["status", "created_at"], name="game_status_idx")]

    def __str__(self) -> str:
        return f"{self.game_id} ({self.format})"


class GamePlayer(models.Model):
    """A seat: score (pool points, deals chips, Rummy 500 total) and what the player paid in."""

    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="players")
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="game_seats")
    seat = models.PositiveSmallIntegerField()
    score = models.IntegerField(default=0)
    eliminated = models.BooleanField(default=False)
    rejoins = models.PositiveSmallIntegerField(default=0)
    entries = models.PositiveSmallIntegerField(default=1)
    contributed = models.JSONField(
        default=list,
        help_text="[[bucket, amount], ...] in the order charged, amounts as decimal strings.",
    )
    payout = models.DecimalField(max_digits=14, decimal_places=2, default=ZERO)
    refund = models.DecimalField(max_digits=14, decimal_places=2, default=ZERO)

    class Meta:
        ordering = ["seat"]
        constraints = [
            models.UniqueConstraint(fields=["game", "player"], name="gameplayer_unique_player"),
            models.UniqueConstraint(fields=["game", "seat"], name="gameplayer_unique_seat"),
        ]

    def __str__(self) -> str:
        return f"{self.game_id}:{self.player_id}"

    @property
    def external_id(self) -> str:
        return self.player.external_id


class Deal(models.Model):
    class Status(models.TextChoices):
        STORED = "stored"
        SETTLED = "settled"

    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="deals")
    deal_no = models.PositiveIntegerField()
    wild_joker = models.CharField(max_length=8, blank=True)
    results = models.JSONField(help_text="The posted results, cards in canonical notation.")
    payload_hash = models.CharField(max_length=64, help_text="To tell a repeat from a rival.")
    points = models.JSONField(default=dict, help_text="The engine's points per player.")
    discrepancies = models.JSONField(
        default=dict, help_text="claimed_points that differ from the engine's, for finance."
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.STORED)
    transfers = models.JSONField(default=list, help_text="Ledger transfer ids it posted.")
    created_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["game", "deal_no"]
        constraints = [
            models.UniqueConstraint(fields=["game", "deal_no"], name="deal_unique_number"),
        ]
        indexes = [
            models.Index(
                fields=["created_at"],
                condition=Q(status="stored"),
                name="deal_unsettled_idx",
            )
        ]

    def __str__(self) -> str:
        return f"{self.game_id}#{self.deal_no}"


class IdempotencyRecord(models.Model):
    """The first response to a write, replayed for a repeat with the same key and body."""

    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=128)
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True)
    response = models.JSONField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["client", "key"], name="idempotency_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.client_id}:{self.key}"
