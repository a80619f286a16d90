"""The one-way-flow report (chip dumping): pairs of players where money went from one to the
other over repeated games, stored per run for finance (`wallets.services.flows`), and finance's
clearing of a pair (`PairClearance`, maker-checker: `wallets.services.pair_clearances`)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from wallets.models.finance import Proposal, ProposalStatus
from wallets.models.people import Player
from wallets.money.formatting import ist


def _decimal(help_text: str) -> models.DecimalField:
    return models.DecimalField(max_digits=18, decimal_places=2, help_text=help_text)


class FlowReport(models.Model):
    class Trigger(models.TextChoices):
        SCHEDULE = "schedule"
        COMMAND = "command"

    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    started_at = models.DateTimeField(auto_now_add=True)
    since = models.DateTimeField(help_text="games finished from then on were looked at")
    thresholds = models.JSONField(help_text="the settings a pair had to reach to be flagged")
    pairs_looked_at = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = "one-way-flow report"
        indexes = [models.Index(fields=["-started_at"], name="flowreport_started_idx")]

    def __str__(self) -> str:
        return f"one-way flows #{self.pk} ({ist(self.started_at)})"


class FlaggedPair(models.Model):
    """Money went from `loser` to `winner` in `games` games, and hardly ever came back. Under
    review until finance clears it: a player in a pair under review wins no promotions' prize
    (a leaderboard's payout skips them)."""

    class Review(models.TextChoices):
        UNDER_REVIEW = "under_review"
        CLEARED = "cleared"

    report = models.ForeignKey(FlowReport, on_delete=models.CASCADE, related_name="pairs")
    loser = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="+")
    winner = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="+")
    games = models.PositiveIntegerField(help_text="games in which the loser's money went to them")
    amount = _decimal("what the loser lost to the winner, INR")
    returned = _decimal("what the winner lost to the loser in the same window, INR")
    first_game_at = models.DateTimeField()
    last_game_at = models.DateTimeField()
    review = models.CharField(
        max_length=16,
        choices=Review.choices,
        default=Review.UNDER_REVIEW,
        db_default="under_review",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["report", "loser", "winner"], name="flaggedpair_unique_pair"
            ),
        ]
        indexes = [
            models.Index(fields=["winner", "report"], name="flaggedpair_winner_idx"),
            models.Index(fields=["loser", "report"], name="flaggedpair_loser_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.loser} -> {self.winner}: {self.amount} in {self.games} games"


class PairClearance(Proposal):
    """Finance clears a flagged pair: an operator proposes it with a reason, another person
    approves, and the pair's `review` becomes `cleared` (its players win promotions' prizes
    again). One open proposal per pair; a pair is cleared once."""

    approve_permission = "wallets.approve_pairclearance"

    pair = models.ForeignKey(FlaggedPair, on_delete=models.PROTECT, related_name="clearances")

    class Meta(Proposal.Meta):
        verbose_name = "flagged pair clearance"
        permissions = [("approve_pairclearance", "Can approve or reject clearing flagged pairs")]
        constraints = [
            *Proposal.Meta.constraints,
            models.UniqueConstraint(
                fields=["pair"],
                condition=Q(status=ProposalStatus.PROPOSED),
                name="pairclearance_one_open_per_pair",
            ),
            models.UniqueConstraint(
                fields=["pair"],
                condition=Q(status=ProposalStatus.APPROVED),
                name="pairclearance_once_per_pair",
            ),
        ]

    def __str__(self) -> str:
        return f"clearance #{self.pk} of {self.pair}"
