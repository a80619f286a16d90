"""Player protection: deposit limits and self-exclusion, kept as an append-only history.

Each row is one change (who, when, the old and the new value, from when it counts). The state
is read from the rows (`wallets.services.protection`): a limit is the newest change already in
effect, so a raise waiting for its delay is overtaken by any later change; a self-exclusion
lasts until the latest end of any exclusion ever set, so nothing can end one early.
"""

from django.db import models


class ProtectionChange(models.Model):
    class Kind(models.TextChoices):
        DAILY_LIMIT = "daily_limit", "daily deposit limit"
        MONTHLY_LIMIT = "monthly_limit", "monthly deposit limit"
        SELF_EXCLUSION = "self_exclusion", "self-exclusion"
        REGION = "region"

    player = models.ForeignKey(
        "wallets.Player", on_delete=models.PROTECT, related_name="protection_changes"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    old_value = models.CharField(max_length=40, blank=True, help_text="empty: none")
    new_value = models.CharField(
        max_length=40,
        blank=True,
        help_text="a limit in INR, an exclusion's end (ISO time) or 'permanent', a region code; "
        "empty: none",
    )
    effective_at = models.DateTimeField()
    changed_by = models.CharField(max_length=150, help_text="the API client or staff user")
    created_at = models.DateTimeField(help_text="when the change was asked for")

    class Meta:
        indexes = [models.Index(fields=["player", "kind", "id"], name="protection_player_idx")]

    def __str__(self) -> str:
        return (
            f"{self.kind} of {self.player_id}: {self.old_value or '-'} -> {self.new_value or '-'}"
        )
