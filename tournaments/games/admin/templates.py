"""Game templates, edited by finance, and the maker-checker on their terms.

- A game copies its template's terms when it opens, so an edit never changes a game in play;
  terms no game can be played by are refused at save (`GameTemplate.clean`).
- Every term (`MONEY_TERMS`: slug, format, currency, seats, stakes, fee %, deals, rules, split
  and rejoin policy, entry bucket order, bonus cap) is read-only on a template's page for
  everyone: a change is proposed (`TemplateChange`) and applied when another member of staff
  approves it; the proposals are the template's history of terms, and each decision is in the
  template's admin history too. Only the name and the active flag are edited directly.
- A new template is added by a superuser (its terms would otherwise need no approval).
"""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin
from django.utils.html import format_html_join

from tournaments.games.services.templates import (
    money_terms,
    template_change_checked,
    template_change_propose,
)
from tournaments.models import MONEY_TERMS, TEMPLATE_FIELDS, GameTemplate, TemplateChange
from wallets.admin.base import (
    PLAIN_DECIMALS,
    NoDeleteAdmin,
    link,
    money_display,
    percent_display,
    plain_formfield,
)
from wallets.admin.proposals import ProposalAdmin, ProposalForm
from wallets.money.formatting import money

TERM_LABELS = {
    "fee_percent": "fee %",
    "bonus_cap_percent": "bonus cap %",
    "entry_buckets": "entry bucket order",
}


def term_label(name: str) -> str:
    return TERM_LABELS.get(name) or str(GameTemplate._meta.get_field(name).verbose_name)


def term_shown(name: str, value, currency: str) -> str:
    if value is None:
        return "-"
    if name in ("point_value", "entry_fee"):
        return money(value, currency)
    if name in ("fee_percent", "bonus_cap_percent"):
        return f"{value}%"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@admin.register(GameTemplate)
class GameTemplateAdmin(admin.ModelAdmin):
    formfield_overrides = PLAIN_DECIMALS
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

    fee_col = percent_display("fee_percent", "fee %")
    bonus_cap_col = percent_display("bonus_cap_percent", "bonus cap %")

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # games point at their template; retire it with `active` instead

    def get_exclude(self, request, obj=None):
        # every term changes through a proposal: on a template's page they are shown read-only
        return list(MONEY_TERMS) if obj is not None else super().get_exclude(request, obj)

    def get_fields(self, request, obj=None):
        if obj is None:
            return super().get_fields(request, obj)
        return [*TEMPLATE_FIELDS.cosmetic, *self.get_readonly_fields(request, obj)]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        shown = {"point_value": "point_value_col", "entry_fee": "entry_fee_col"}
        shown["fee_percent"] = "fee_col"
        shown["bonus_cap_percent"] = "bonus_cap_col"  # a percentage, not `10.00`
        return [*(shown.get(name, name) for name in MONEY_TERMS), "money_terms_history"]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "can_propose_terms": request.user.has_perm("tournaments.add_templatechange"),
        }
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description="history of terms")
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
    """`fee %: 10.00% → 12.50%; point value: ₹2.00 → ₹3.00`: only what the change changes
    (an older change holds the four money terms only)."""
    before, after = change.previous, money_terms(change)
    parts = [
        (
            term_label(name),
            term_shown(name, before.get(name), before["currency"]),
            term_shown(name, after.get(name), after["currency"]),
        )
        for name in MONEY_TERMS
        if before.get(name) != after.get(name)
    ]
    return format_html_join("; ", "{}: {} → {}", parts)


class TemplateChangeForm(ProposalForm):
    class Meta:
        model = TemplateChange
        fields = ["template", "reason"]
        widgets = {"reason": forms.Textarea(attrs={"rows": 3, "cols": 60})}

    # every term, asked for as the template's own form asks for it (choices, bounds)
    locals().update(
        forms.fields_for_model(
            GameTemplate,
            fields=MONEY_TERMS,
            labels={"fee_percent": "Fee %", "bonus_cap_percent": "Bonus cap %"},
            formfield_callback=plain_formfield,
        )
    )

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

    add_fields = ["template", *MONEY_TERMS, "reason"]

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
        """The template's own history says when its terms changed, and by which change."""
        super().decided(request, proposal, approving)
        if approving:
            message = f"Terms changed by {proposal}: {changes_shown(proposal)}"
            self.log_change(request, proposal.template, message)

    @admin.display(description="change")
    def change(self, obj):
        return changes_shown(obj)
