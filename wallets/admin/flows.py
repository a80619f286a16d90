"""The one-way-flow report (chip dumping): each run with its flagged pairs, read-only; a pair
under review can be cleared by finance (`PairClearance`: an operator proposes it from the
report's page, another person approves: `wallets.services.pair_clearances`)."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from wallets.admin.base import NoDeleteAdmin, ReadOnlyAdmin, ReadOnlyInline, link
from wallets.admin.proposals import ProposalAdmin, ProposalForm
from wallets.models import FlaggedPair, FlowReport, PairClearance
from wallets.services.pair_clearances import pair_clearable_checked, pair_clearance_propose

PAIR_FIELDS = ["loser", "winner", "games", "amount", "returned", "first_game_at", "last_game_at"]


class FlaggedPairInline(ReadOnlyInline):
    model = FlaggedPair
    fields = [*PAIR_FIELDS, "review"]
    readonly_fields = [*fields, "clearing"]
    ordering = ["-amount"]
    select_related = ("loser", "winner")
    verbose_name_plural = "flagged pairs (the loser's money went to the winner, and stayed)"

    def get_fields(self, request, obj=None):
        """Who may propose a clearance sees a link to propose one for each pair under review."""
        can_propose = request.user.has_perm("wallets.add_pairclearance")
        return [*self.fields, "clearing"] if can_propose else self.fields

    @admin.display(description="clear")
    def clearing(self, obj):
        if obj.review != FlaggedPair.Review.UNDER_REVIEW:
            return "-"
        url = reverse("admin:wallets_pairclearance_add")
        return format_html(
            '<a class="propose-clearing" href="{}?pair={}">propose clearing</a>', url, obj.pk
        )


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


class PairClearanceForm(ProposalForm):
    pair = forms.ModelChoiceField(
        FlaggedPair.objects.all(),
        widget=forms.TextInput,
        help_text='the flagged pair\'s number, filled in by "propose clearing" on the latest '
        "one-way-flow report's page",
    )

    class Meta:
        model = PairClearance
        fields = ["pair", "reason"]
        widgets = {"reason": forms.Textarea(attrs={"rows": 3, "cols": 60})}

    def check(self, data: dict) -> None:
        pair_clearable_checked(data["pair"])

    def refused(self, exc) -> None:
        self.add_error("pair", exc.message)


@admin.register(PairClearance)
class PairClearanceAdmin(ProposalAdmin, NoDeleteAdmin):
    approve_effect = (
        "clears the pair: its players are no longer skipped by promotions' prizes "
        "(a leaderboard's payout)"
    )
    list_display = ["id", "pair_shown", "status", "proposed_by", "proposed_at", "decided_by"]
    list_filter = ["status"]
    list_select_related = ["pair__loser", "pair__winner", "proposed_by", "decided_by"]
    actions = ["approve", "reject"]
    form = PairClearanceForm
    readonly_fields = ["pair_shown", "report", "review", *ProposalAdmin.decision_fields]

    add_fields = PairClearanceForm.Meta.fields

    def propose(self, request, data):
        return pair_clearance_propose(
            proposed_by=request.user, pair=data["pair"], reason=data["reason"]
        )

    @admin.display(description="pair")
    def pair_shown(self, obj):
        pair = obj.pair
        return (
            f"#{pair.pk}: {pair.loser} lost ₹{pair.amount} to {pair.winner} in {pair.games} "
            f"games (₹{pair.returned} back)"
        )

    @admin.display(description="one-way-flow report")
    def report(self, obj):
        return link(obj.pair.report)

    @admin.display(description="the pair's review now")
    def review(self, obj):
        return obj.pair.get_review_display()
