"""The one-way-flow report (chip dumping): each run with its flagged pairs, read-only."""

from __future__ import annotations

from django.contrib import admin

from wallets.admin.base import ReadOnlyAdmin, ReadOnlyInline
from wallets.models import FlaggedPair, FlowReport


class FlaggedPairInline(ReadOnlyInline):
    model = FlaggedPair
    fields = ["loser", "winner", "games", "amount", "returned", "first_game_at", "last_game_at"]
    readonly_fields = fields
    ordering = ["-amount"]
    select_related = ("loser", "winner")
    verbose_name_plural = "flagged pairs (the loser's money went to the winner, and stayed)"


@admin.register(FlowReport)
class FlowReportAdmin(ReadOnlyAdmin):
    list_display = ["id", "started_at", "trigger", "flagged", "pairs_looked_at", "since"]
    list_filter = ["trigger"]
    readonly_fields = ["started_at", "trigger", "since", "thresholds", "pairs_looked_at"]
    fields = readonly_fields
    inlines = [FlaggedPairInline]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("pairs")

    @admin.display(description="flagged pairs")
    def flagged(self, obj):
        return len(obj.pairs.all())
