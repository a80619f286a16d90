"""Games and what they pay: templates (finance-edited), games with their escrow, players, deals.

A game copies the terms of its template when it opens (`Game.terms`), so finance editing a
template never changes a game in play. Every field of a template but its name and active flag
(`TEMPLATE_FIELDS`) changes only through an approved `TemplateChange` (maker-checker). Amounts are
`Decimal` in the game's currency (INR to the paisa, or practice chips `CHP`); the ledger holds
the money, these rows say why it moved.
"""

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.functional import cached_property

from rummy_ledger.api.models import ApiClient
from tournaments.errors import TermsInvalid
from tournaments.games.field_classes import FieldClasses
from tournaments.games.formats import FORMATS, FormatName, game_terms
from tournaments.games.terms import BONUS_CAP_PERCENT, GameTerms
from wallets.models import CASH, CHIPS, Account, Player, Proposal, Transfer
from wallets.money.amounts import ZERO

Format = models.TextChoices("Format", [(f.name, f.value) for f in FormatName])


class Currency(models.TextChoices):
    INR = CASH, "Cash (INR)"
    CHP = CHIPS, "Practice chips"


class SplitPolicy(models.TextChoices):
    NONE = "none", "No split"
    EQUAL = "equal", "Equal shares"
    DROPS = "drops", "In proportion to drops left + 1"
    DROP_VALUE = "drop_value", "Entry fee per drop above the fewest, the rest equally"


# The widest bounds of any format; each format checks its own (13-card 2-6, Rummy 500 2-8).
SEATS_MIN = min(f.min_seats for f in FORMATS.values())
SEATS_MAX = max(f.max_seats for f in FORMATS.values())


def default_entry_buckets() -> list[str]:
    return ["bonus", "deposit", "winnings"]


class GameTemplate(models.Model):
    """A kind of table finance offers: format, currency, stake, fee and house rules."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120, blank=True)
    format = models.CharField(max_length=16, choices=Format.choices)
    currency = models.CharField(max_length=3, choices=Currency.choices, default=CASH)
    seats = models.PositiveSmallIntegerField(
        default=6,
        validators=[MinValueValidator(SEATS_MIN), MaxValueValidator(SEATS_MAX)],
        help_text="Most players at a table: 2 to 6 (13-card formats), 2 to 8 (Rummy 500).",
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
        max_length=16, choices=SplitPolicy.choices, default=SplitPolicy.NONE
    )
    rejoin_allowed = models.BooleanField(default=False)
    entry_buckets = models.JSONField(
        default=default_entry_buckets,
        help_text="Order the entry is taken from the wallet buckets (cash only).",
    )
    bonus_cap_percent = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=BONUS_CAP_PERCENT,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text="Most of an entry (points: of the maximum loss) taken from bonus, in %.",
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

    def game_terms(self) -> GameTerms:
        """The terms a game opened now would copy; `TermsInvalid` names the field at fault."""
        return game_terms(
            template=self.slug,
            format=self.format,
            currency=self.currency,
            chips=self.currency == CHIPS,
            seats=self.seats,
            point_value=self.point_value,
            entry_fee=self.entry_fee,
            fee_percent=self.fee_percent,
            deals=self.deals,
            rules=self.rules,
            split_policy=self.split_policy,
            rejoin_allowed=self.rejoin_allowed,
            entry_buckets=self.entry_buckets,
            bonus_cap_percent=self.bonus_cap_percent,
        )

    def clean(self) -> None:
        """Refuse terms no game can be played by (at save in admin, not in live traffic)."""
        super().clean()
        try:
            self.game_terms()
        except TermsInvalid as exc:
            fields = {f.name for f in self._meta.fields}
            raise ValidationError(
                {exc.field if exc.field in fields else NON_FIELD_ERRORS: exc.reason}
            ) from exc
        except (TypeError, ArithmeticError):
            pass  # a field that is not even a number: its own field error says so


# What a game costs and pays, and which table a game server opens by its slug, hang on every
# field but the name and the active flag: those change only through an approved
# `TemplateChange` (a test fails on a new field left unclassified).
TEMPLATE_FIELDS = FieldClasses(
    proposal=(
        "slug",
        "format",
        "currency",
        "seats",
        "point_value",
        "entry_fee",
        "fee_percent",
        "deals",
        "rules",
        "split_policy",
        "rejoin_allowed",
        "entry_buckets",
        "bonus_cap_percent",
    ),
    cosmetic=("name", "active"),
    system=("id", "created_at"),
)
MONEY_TERMS = TEMPLATE_FIELDS.proposal


class TemplateChange(Proposal):
    """New terms for a template (any of `MONEY_TERMS`), proposed by one member of finance staff
    and applied when another approves it: games opened after the approval copy them, games
    opened before keep theirs. `previous` holds the terms the proposer saw, so an approval that
    would overwrite a change made in between is refused. The rows are the template's history."""

    approve_permission = "tournaments.approve_templatechange"

    template = models.ForeignKey(GameTemplate, on_delete=models.PROTECT, related_name="changes")
    terms = models.JSONField(help_text="The proposed terms, every one of MONEY_TERMS (JSON).")
    previous = models.JSONField(help_text="The terms when proposed (JSON; decimals as strings).")

    class Meta(Proposal.Meta):
        permissions = [
            ("approve_templatechange", "Can approve or reject changes of templates' money terms")
        ]

    def __str__(self) -> str:
        return f"change #{self.pk} of {self.template}"


class Game(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        FINISHED = "finished"
        CANCELLED = "cancelled"
        # every transfer undone by an approved reversal (wallets.Reversal of `game:<pk>`)
        REVERSED = "reversed"

    # No index of its own: game_unique_per_client (client, game_id) leads with it. A second one
    # let the planner, on stale statistics, find a game by all of its client's games.
    client = models.ForeignKey(
        ApiClient, on_delete=models.PROTECT, related_name="games", db_index=False
    )
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
        indexes = [
            models.Index(fields=["status", "created_at"], name="game_status_idx"),
            # finance searches by the id game servers use, whoever the client
            models.Index(fields=["game_id"], name="game_game_id_idx"),
            # reconciliation checks the games finished since the last month close
            models.Index(
                fields=["finished_at"],
                name="game_finished_idx",
                condition=models.Q(finished_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.game_id} ({self.format})"

    @cached_property
    def game_terms(self) -> GameTerms:
        return GameTerms.from_json(self.terms)


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
        default=dict,
        help_text="For finance, per player: claimed points that differ from the engine's "
        "(claimed, computed) and outcomes the cards overruled (posted_outcome, scored_outcome).",
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.STORED)
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


class DealTransfer(models.Model):
    """A ledger transfer a deal's settlement posted, in the order it posted them."""

    deal = models.ForeignKey(Deal, on_delete=models.PROTECT, related_name="transfer_links")
    transfer = models.OneToOneField(Transfer, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.deal_id} -> {self.transfer_id}"


class FeeDay(models.Model):
    """The fee report's rows of one closed day (platform time zone), read from the ledger once.

    A day's fee entries never change once it is over (the ledger is append-only and a reversal is
    its own day's), so the report reads a closed day from here: the nightly `fee_days_close`
    stores the day that just ended, and the report stores a closed day it had to read itself.
    """

    fee_account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+")
    day = models.DateField()
    # [{"format": "points", "currency": "INR", "fee": "12.50", "games": 3}, ...]; [] for no fee
    rows = models.JSONField()
    stored_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["fee_account", "day"], name="fee_day_once_per_account")
        ]

    def __str__(self) -> str:
        return f"fee of {self.day}"
