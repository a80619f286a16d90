"""Game templates, edited by finance, and the maker-checker on their money terms.

- A game copies its template's terms when it opens, so an edit never changes a game in play;
  terms no game can be played by are refused at save (`GameTemplate.clean`).
- Money terms (currency, point value, entry fee, fee %) are read-only on a template's page for
  everyone: a change is proposed (`TemplateChange`) and applied when another member of staff
  approves it; the proposals are the template's money-terms history, and each decision is in
  the template's admin history too. Other fields (name, seats, rules, active...) stay editable.
- A new template is added by a superuser (its money terms would otherwise need no approval).
"""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.utils.html import format_html_join

from tournaments.models import MONEY_TERMS, GameTemplate, TemplateChange
from tournaments.services.templates import (
    money_terms,
    template_change_checked,
    template_change_propose,
)
from wallets.admin.base import NoDeleteAdmin, link, money_display
from wallets.admin.proposals import ProposalAdmin, ProposalForm
from wallets.formatting import money

TERM_LABELS = {
    "currency": "currency",
    "point_value": "point value",
    "entry_fee": "entry fee",
    "fee_percent": "fee %",
}


def term_shown(name: str, value, currency: str) -> str:
    if value is None:
        return "-"
    if name in ("point_value", "entry_fee"):
        return money(value, currency)
    if name == "fee_percent":
        return f"{value}%"
    return str(value)


@admin.register(GameTemplate)
class GameTemplateAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "name",
        "format",
        "currency",
        "seats",
        "point_value_col",
        "entry_fee_col",
        "fee_col",
        "deals",
        "split_policy",
        "active",
    ]
    list_filter = ["format", "currency", "split_policy", "active"]
    list_editable = ["active"]
    search_fields = ["slug", "name"]
    change_form_template = "admin/tournaments/gametemplate/change_form.html"

    point_value_col = money_display(
        "point_value", currency_field="currency", description="point value"
    )
    entry_fee_col = money_display("entry_fee", currency_field="currency", description="entry fee")

    @admin.display(description="fee %", ordering="fee_percent")
    def fee_col(self, obj):
        return f"{obj.fee_percent}%"

    @admin.display(description="bonus cap %")
    def bonus_cap_col(self, obj):
        return f"{obj.bonus_cap_percent}%"

    def get_fields(self, request, obj=None):
        """Who may only view a template reads its bonus cap as a percentage, not `10.00`."""
        fields = super().get_fields(request, obj)
        if obj is not None and not self.has_change_permission(request, obj):
            return ["bonus_cap_col" if f == "bonus_cap_percent" else f for f in fields]
        return fields

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # games point at their template; retire it with `active` instead

    def get_exclude(self, request, obj=None):
        # money terms change through a proposal: on a template's page they are shown read-only
        return list(MONEY_TERMS) if obj is not None else super().get_exclude(request, obj)

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["currency", "point_value_col", "entry_fee_col", "fee_col", "money_terms_history"]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "can_propose_terms": request.user.has_perm("tournaments.add_templatechange"),
        }
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description="money terms history")
    def money_terms_history(self, obj):
        changes = obj.changes.select_related("proposed_by", "decided_by").order_by("-pk")
        if not changes:
            return "no change since it was created"
        return format_html_join(
            "",
            "<div>{} — {}, proposed by {}, {}</div>",
            ((link(c), c.status, c.proposed_by, changes_shown(c)) for c in changes),
        )


def changes_shown(change: TemplateChange) -> str:
    """`fee %: 10.00% → 12.50%; point value: ₹2.00 → ₹3.00`: only what the change changes."""
    before, after = change.previous, money_terms(change)
    parts = [
        (
            TERM_LABELS[name],
            term_shown(name, before[name], before["currency"]),
            term_shown(name, after[name], after["currency"]),
        )
        for name in MONEY_TERMS
        if before[name] != after[name]
    ]
    return format_html_join("; ", "{}: {} → {}", parts)


class TemplateChangeForm(ProposalForm):
    class Meta:
        model = TemplateChange
        fields = ["template", "currency", "point_value", "entry_fee", "fee_percent", "reason"]
        labels = {"fee_percent": "Fee %", "point_value": "Point value", "entry_fee": "Entry fee"}
        widgets = {"reason": forms.Textarea(attrs={"rows": 3, "cols": 60})}

    def check(self, data: dict) -> None:
        terms = {name: data.get(name) for name in MONEY_TERMS}
        template_change_checked(template=data["template"], terms=terms)


@admin.register(TemplateChange)
class TemplateChangeAdmin(ProposalAdmin, NoDeleteAdmin):
    approve_effect = (
        "applies these terms to every game opened from now on (games in play keep theirs)"
    )
    list_display = ["id", "template", "change", "status", "proposed_by", "proposed_at"]
    list_filter = ["status"]
    list_select_related = ["template", "proposed_by"]
    search_fields = ["template__slug"]
    actions = ["approve", "reject"]
    form = TemplateChangeForm
    readonly_fields = ["template", "change", *ProposalAdmin.decision_fields]

    def get_fields(self, request, obj=None):
        if obj is None:
            return list(TemplateChangeForm.Meta.fields)
        return self.readonly_fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def get_changeform_initial_data(self, request):
        """Proposing from a template's page starts from the terms in force."""
        initial = super().get_changeform_initial_data(request)
        template = GameTemplate.objects.filter(pk=initial.get("template") or None).first()
        if template is not None:
            initial.update({name: getattr(template, name) for name in MONEY_TERMS})
        return initial

    def propose(self, request, data):
        return template_change_propose(
            proposed_by=request.user,
            template=data["template"],
            reason=data["reason"],
            **{name: data.get(name) for name in MONEY_TERMS},
        )

    def decided(self, request, proposal, approving: bool) -> None:
        """The template's own history says when its money terms changed, and by which change."""
        super().decided(request, proposal, approving)
        if approving:
            message = f"Money terms changed by {proposal}: {changes_shown(proposal)}"
            self.log_change(request, proposal.template, message)

    @admin.display(description="change")
    def change(self, obj):
        return changes_shown(obj)
