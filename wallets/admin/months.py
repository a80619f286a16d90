"""Month closes in admin: an operator proposes closing an IST month, an approver approves it
(`wallets.services.months`); a close's page shows what it proved."""

from __future__ import annotations

from django import forms
from django.contrib import admin

from wallets.admin.base import NoDeleteAdmin
from wallets.admin.proposals import ProposalAdmin, ProposalForm
from wallets.models import MonthClose
from wallets.services import months


class MonthCloseForm(ProposalForm):
    month = forms.CharField(max_length=7, help_text="the IST month, YYYY-MM (e.g. 2026-10)")

    class Meta:
        model = MonthClose
        fields = ["month", "reason"]

    def check(self, data: dict) -> None:
        months.month_checked(data["month"])


@admin.register(MonthClose)
class MonthCloseAdmin(ProposalAdmin, NoDeleteAdmin):
    approve_effect = (
        "proves and stores every account's balance at the month's end, then the database "
        "refuses any entry dated in that month (corrections go into an open month)"
    )
    list_display = ["id", "month", "status", "entries", "accounts", "proposed_by", "decided_by"]
    list_filter = ["status"]
    list_select_related = ["proposed_by", "decided_by"]
    ordering = ["-month", "-id"]
    actions = ["approve", "reject"]
    form = MonthCloseForm
    readonly_fields = [
        "month",
        *ProposalAdmin.decision_fields,
        "closed_at",
        "entries",
        "accounts",
        "digest",
        "previous",
    ]

    add_fields = MonthCloseForm.Meta.fields

    def propose(self, request, data):
        return months.month_close_propose(
            proposed_by=request.user, month=data["month"], reason=data["reason"]
        )
