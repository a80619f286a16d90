"""A leaderboard, its points, the games it counted (each once) and the players its payout
skipped; the proposal that creates one. App label `tournaments` (`tournaments/models/`)."""

from decimal import Decimal

from django.db import models
from django.db.models import F, Q

from rummy_ledger.api.models import ApiClient
from wallets.models import CASH, CHIPS, Player, Proposal, Transfer

ZERO = Decimal("0.00")


class Leaderboard(models.Model):
    """Points over [starts_at, ends_at) (IST midnights) from the settled games of `templates`
    and the finished `tournaments` of this client and currency, scored by `scoring` with
    `scoring_parameters`; `prizes`: the prize table (docs/tournaments.md#leaderboards), paid
    from promotions at the end."""

    class Status(models.TextChoices):
        SCHEDULED = "scheduled"
        RUNNING = "running"
        PAID = "paid"

    class Scoring(models.TextChoices):
        FEE = "fee"  # points per rupee of platform fee charged on the player's winnings
        RESULTS = "results"  # winnings / win_divisor + losses / loss_divisor

    client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="leaderboards")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=120)
    currency = models.CharField(max_length=3, choices=[(CASH, CASH), (CHIPS, CHIPS)])
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    templates = models.JSONField(help_text="The slugs of the game templates whose games count.")
    tournaments = models.JSONField(
        default=list, help_text="The slugs of the client's tournaments that count."
    )
    scoring = models.CharField(max_length=8, choices=Scoring.choices)
    scoring_parameters = models.JSONField(help_text="The rule's numbers (decimals as strings).")
    prizes = models.JSONField(help_text='[{"ranks": "1", "amount": "1000.00"}, ...]')
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SCHEDULED)
    prizes_paid = models.DecimalField(max_digits=16, decimal_places=2, default=ZERO)
    transfer = models.OneToOneField(
        Transfer, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    paid_at = models.DateTimeField(null=True, blank=True)
    created_by = models.CharField(max_length=150, help_text="Who created it.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-starts_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["client", "slug"], name="leaderboard_slug_per_client"),
            models.CheckConstraint(
                condition=Q(ends_at__gt=F("starts_at")), name="leaderboard_period"
            ),
            models.CheckConstraint(
                condition=Q(scoring__in=["fee", "results"]), name="leaderboard_scoring"
            ),
            models.CheckConstraint(
                condition=~Q(templates=[]) | ~Q(tournaments=[]), name="leaderboard_counts_some"
            ),
            models.CheckConstraint(
                condition=Q(status="paid", paid_at__isnull=False)
                | (~Q(status="paid") & Q(paid_at__isnull=True, transfer__isnull=True)),
                name="leaderboard_paid",
            ),
        ]
        indexes = [models.Index(fields=["status", "ends_at"], name="leaderboard_due")]

    def __str__(self) -> str:
        return f"leaderboard {self.slug}"


class LeaderboardPoints(models.Model):
    """A player's points on a leaderboard: one row per (leaderboard, player), changed by one
    statement per settlement batch (`services/points.py`)."""

    leaderboard = models.ForeignKey(Leaderboard, on_delete=models.PROTECT, related_name="points")
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="+")
    points = models.DecimalField(max_digits=16, decimal_places=2)
    updated_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "leaderboard points"
        constraints = [
            models.UniqueConstraint(
                fields=["leaderboard", "player"], name="leaderboard_points_per_player"
            ),
        ]
        indexes = [
            models.Index(
                F("leaderboard"), F("points").desc(), F("player"), name="leaderboard_standing"
            )
        ]

    def __str__(self) -> str:
        return f"{self.player_id} on {self.leaderboard_id}: {self.points}"


class LeaderboardGame(models.Model):
    """A settled game a leaderboard counted, once (unique per leaderboard and `reference`), with
    the points it gave each player (player pk -> points), so its reversal takes exactly those
    back (`reversed_at`)."""

    leaderboard = models.ForeignKey(Leaderboard, on_delete=models.PROTECT, related_name="games")
    reference = models.CharField(
        max_length=64, help_text="game:<pk>, or tournament:<pk> for a finished tournament."
    )
    points = models.JSONField()
    counted_at = models.DateTimeField()
    reversed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["leaderboard", "reference"], name="leaderboard_game_once"
            ),
        ]
        indexes = [models.Index(fields=["reference"], name="leaderboard_game_reference")]

    def __str__(self) -> str:
        return f"{self.reference} on {self.leaderboard_id}"


class LeaderboardSkip(models.Model):
    """A player the payout passed over (the prize went to the next eligible rank), for
    finance."""

    class Reason(models.TextChoices):
        SELF_EXCLUDED = "self_excluded"
        FLAGGED_PAIR = "flagged_pair"  # in a one-way-flow pair finance has not cleared

    leaderboard = models.ForeignKey(Leaderboard, on_delete=models.PROTECT, related_name="skips")
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="+")
    rank = models.PositiveIntegerField(help_text="Their rank among all players.")
    points = models.DecimalField(max_digits=16, decimal_places=2)
    reason = models.CharField(max_length=16, choices=Reason.choices)

    class Meta:
        ordering = ["rank", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["leaderboard", "player"], name="leaderboard_skip_once"),
        ]

    def __str__(self) -> str:
        return f"{self.player} skipped on {self.leaderboard_id}: {self.reason}"


class NewLeaderboard(Proposal):
    """A leaderboard finance proposes in admin (it spends promotions): `spec` holds its fields
    under the names of `manage.py create_leaderboard`'s file and is checked as that file is;
    the leaderboard is created only when another member of staff approves."""

    approve_permission = "tournaments.approve_newleaderboard"

    slug = models.SlugField(max_length=64)
    spec = models.JSONField(help_text="The leaderboard's fields, as create_leaderboard's file.")
    leaderboard = models.OneToOneField(
        Leaderboard, null=True, blank=True, on_delete=models.PROTECT, related_name="proposal"
    )

    class Meta(Proposal.Meta):
        verbose_name = "new leaderboard"
        permissions = [("approve_newleaderboard", "Can approve or reject new leaderboards")]

    def __str__(self) -> str:
        return f"new leaderboard #{self.pk} {self.slug}"
