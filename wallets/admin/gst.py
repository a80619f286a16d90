"""GST rates by date: the rates (read-only: history is never edited) and the maker-checker
proposals that add a future one (`wallets.tax.gst_rates`)."""

from __future__ import annotations

from django.contrib import admin

from rummy_ledger.errors import DomainError
from wallets.admin.base import NoDeleteAdmin, ReadOnlyAdmin, percent_display
from wallets.admin.proposals import ProposalAdmin, ProposalForm
from wallets.models import GstRate, GstRateProposal
from wallets.tax import gst_rates


@admin.register(GstRate)
class GstRateAdmin(ReadOnlyAdmin):
    list_display = ["effective_from", "rate_shown", "source", "created_at"]
    ordering = ["-effective_from"]
    readonly_fields = ["effective_from", "rate_shown", "source", "created_at"]
    fields = readonly_fields

    rate_shown = percent_display("rate_percent", "rate")


class GstRateProposalForm(ProposalForm):
    class Meta:
        model = GstRateProposal
        fields = ["effective_from", "rate_percent", "source", "reason"]

    def check(self, data: dict) -> None:
        gst_rates.future_rate_checked(
            effective_from=data["effective_from"], rate_percent=data["rate_percent"]
        )

    def refused(self, exc: DomainError) -> None:
        """On the field at fault: a rate out of range is then not checked again against the
        table's constraint, whose message names the constraint, not the rule."""
        at_fault = next((f for f in ("rate_percent", "effective_from") if f in exc.details), None)
        self.add_error(at_fault, exc.message)


@admin.register(GstRateProposal)
class GstRateProposalAdmin(ProposalAdmin, NoDeleteAdmin):
    approve_effect = (
        "adds the rate from its first day on (refused once that day has come: never retroactive)"
    )
    list_display = ["id", "effective_from", "rate_shown", "status", "proposed_by", "decided_by"]
    list_filter = ["status"]
    list_select_related = ["proposed_by", "decided_by"]
    actions = ["approve", "reject"]
    form = GstRateProposalForm
    readonly_fields = [
        "effective_from",
        "rate_shown",
        "source",
        *ProposalAdmin.decision_fields,
        "rate",
    ]

    rate_shown = percent_display("rate_percent", "rate")

    add_fields = GstRateProposalForm.Meta.fields

    def propose(self, request, data):
        return gst_rates.gst_rate_propose(
            proposed_by=request.user,
            effective_from=data["effective_from"],
            rate_percent=data["rate_percent"],
            source=data["source"],
            reason=data["reason"],
        )
