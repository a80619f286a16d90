"""Maker-checker in admin: adjustments and reversals (and, through `ProposalAdmin`, other apps'
proposals), proposed by an operator, approved or rejected by someone else, always through
`wallets.services.proposals`.

- A proposal's add form runs the service's own checks, so a refusal (a debit of more than the
  bucket holds) is the form's error, shown before anything is written.
- Approve and Reject, with a decision note, are shown only to who may decide: an approver who
  is not the proposer. Every decision is also in the proposal's admin history.
- A reversal's pages show, before anyone approves, what it moves: each account's and each
  player's change, and the totals per currency.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe
from djmoney.money import Money

from rummy_ledger.errors import DomainError
from wallets.admin import search
from wallets.admin.base import (
    PLAIN_DECIMALS,
    NoDeleteAdmin,
    PlainDecimalField,
    ReadOnlyAdmin,
    TermSearch,
    adopt,
    link,
    money_display,
    named_link,
    staff_display,
)
from wallets.models import BUCKET_CURRENCY, Adjustment, Reversal, Transfer
from wallets.selectors import reversal_effect
from wallets.services import proposals
from wallets.services.adjustments import adjustment_checked, adjustment_propose


class ProposalForm(forms.ModelForm):
    """A proposal's add form: `check()` runs the service's own checks on the cleaned data, so a
    refusal is this form's error rather than a failed save."""

    def check(self, data: dict) -> None:
        raise NotImplementedError

    def refused(self, exc: DomainError) -> None:
        """Show the service's refusal on the form (a form may put it on the field at fault)."""
        self.add_error(None, exc.message)

    def clean(self):
        data = super().clean()
        if not self.errors:
            try:
                self.check(data)
            except DomainError as exc:
                self.refused(exc)
        return data


DECISIONS = ("approve", "reject")  # what the decide form may send


class ProposalAdmin:
    """A ModelAdmin mixin for a `Proposal` model: proposed through `propose()` (a service call),
    decided with Approve / Reject on its page or as list actions, by an approver who is not the
    proposer; refusals become messages, decisions admin history."""

    change_form_template = "admin/wallets/proposal_change_form.html"
    approve_effect = "posts the money now"  # what the page says approving does
    formfield_overrides = PLAIN_DECIMALS
    reject_effect = "changes nothing"  # and rejecting
    # the proposal's own story, shown on every proposal's page
    decision_fields = [
        "reason",
        "status",
        "proposer",
        "proposed_at",
        "decider",
        "decided_at",
        "decision_note",
    ]
    proposer = staff_display("proposed_by", "proposed by")
    decider = staff_display("decided_by", "decided by")
    add_fields: list[str] = []  # what proposing asks for; a proposal's page shows readonly_fields

    def get_fields(self, request, obj=None):
        return self.add_fields if obj is None else self.readonly_fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def propose(self, request: HttpRequest, data: dict):
        raise NotImplementedError

    def save_model(self, request, obj, form, change):
        try:
            created = self.propose(request, form.cleaned_data)
        except DomainError as exc:  # only what changed since the form's own check
            raise PermissionDenied(exc.message) from exc
        adopt(obj, created)

    def has_approve_permission(self, request) -> bool:
        return request.user.has_perm(self.model.approve_permission)

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a proposal is decided, never edited

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, object_id)
        own = obj is not None and obj.proposed_by_id == request.user.pk
        extra_context = {
            **(extra_context or {}),
            "can_decide": self.has_approve_permission(request) and not own,
            "own_proposal": own,
            "approve_effect": self.approve_effect,
            "reject_effect": self.reject_effect,
        }
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        meta = self.model._meta
        view = self.admin_site.admin_view(self.decide_view)
        name = f"{meta.app_label}_{meta.model_name}_decide"
        return [path("<int:pk>/decide/", view, name=name), *super().get_urls()]

    def decided(self, request, proposal, approving: bool) -> None:
        """After a decision that went through: the proposal's history says who and why."""
        verb = "Approved" if approving else "Rejected"
        note = f": {proposal.decision_note}" if proposal.decision_note else ""
        self.log_change(request, proposal, f"{verb}{note}")

    def decide(self, request, queryset, *, approving: bool, note: str = "") -> None:
        verb = "approved" if approving else "rejected"
        for obj in queryset.order_by("pk"):
            try:
                decided = proposals.proposal_decide(
                    model=self.model,
                    proposal_id=obj.pk,
                    decided_by=request.user,
                    approve=approving,
                    note=note,
                )
            except DomainError as exc:
                self.message_user(request, f"#{obj.pk} not {verb}: {exc.message}", messages.ERROR)
            else:
                self.decided(request, decided, approving)
                self.message_user(request, f"#{obj.pk} {verb}.", messages.SUCCESS)

    @admin.action(
        description="Approve selected %(verbose_name_plural)s (posts them)", permissions=["approve"]
    )
    def approve(self, request, queryset):
        self.decide(request, queryset, approving=True)

    @admin.action(description="Reject selected %(verbose_name_plural)s", permissions=["approve"])
    def reject(self, request, queryset):
        self.decide(request, queryset, approving=False)

    def decide_view(self, request: HttpRequest, pk: int):
        if request.method != "POST" or not self.has_approve_permission(request):
            raise PermissionDenied
        decision = request.POST.get("decision")
        if decision in DECISIONS:
            self.decide(
                request,
                self.model.objects.filter(pk=pk),
                approving=decision == "approve",
                note=request.POST.get("note", ""),
            )
        else:
            said = f"#{pk} not decided: a decision is approve or reject, not {decision!r}."
            self.message_user(request, said, messages.ERROR)
        meta = self.model._meta
        return HttpResponseRedirect(
            reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[pk])
        )


class AdjustmentForm(ProposalForm):
    amount_value = PlainDecimalField(
        label="Amount (₹; in chips for the chips bucket)",
        max_digits=18,
        decimal_places=2,
        min_value=Decimal("0.01"),
    )

    class Meta:
        model = Adjustment
        fields = ["player", "bucket", "direction", "reason"]

    def check(self, data: dict) -> None:
        adjustment_checked(
            player=data["player"],
            bucket=data["bucket"],
            direction=data["direction"],
            amount=Money(data["amount_value"], BUCKET_CURRENCY[data["bucket"]]),
        )


@admin.register(Adjustment)
class AdjustmentAdmin(TermSearch, ProposalAdmin, NoDeleteAdmin):
    list_display = [
        "id",
        "player",
        "bucket",
        "direction",
        "amount_shown",
        "status",
        "proposed_by",
        "proposed_at",
        "decided_by",
        "transfer_link",
    ]
    list_filter = ["status", "direction", "bucket"]
    list_select_related = ["player", "proposed_by", "decided_by", "transfer"]
    autocomplete_fields = ["player"]
    search_fields = ["player__external_id"]
    search_help_text = "the player's external id (or its beginning), or the adjustment's number"
    actions = ["approve", "reject"]
    form = AdjustmentForm
    readonly_fields = [
        "player",
        "bucket",
        "direction",
        "amount_shown",
        *ProposalAdmin.decision_fields,
        "transfer_link",
    ]

    amount_shown = money_display("amount", description="amount")

    def search(self, queryset, term):
        by_player = queryset.filter(player__external_id__startswith=term)
        return by_player | queryset.filter(pk=int(term)) if term.isdigit() else by_player

    add_fields = ["player", "bucket", "direction", "amount_value", "reason"]

    def propose(self, request, data):
        return adjustment_propose(
            proposed_by=request.user,
            player=data["player"],
            bucket=data["bucket"],
            direction=data["direction"],
            amount=Money(data["amount_value"], BUCKET_CURRENCY[data["bucket"]]),
            reason=data["reason"],
        )

    @admin.display(description="transfer")
    def transfer_link(self, obj):
        return link(obj.transfer) if obj.transfer_id else "-"


def effect_table(transfer_ids) -> str:
    """What reversing these transfers moves: each account's change, each player's (all their
    buckets), and the totals per currency and kind of account, which net to zero."""
    rows = reversal_effect(transfer_ids)
    players: dict = defaultdict(lambda: defaultdict(Decimal))
    totals: dict = defaultdict(lambda: defaultdict(Decimal))
    for account, change in rows:
        currency = str(change.currency)
        if account.player_id:
            players[account.player.external_id][currency] += change.amount
        totals[currency][account.kind] += change.amount
    context = {
        "rows": rows,
        "players": {p: [Money(v, c) for c, v in sorted(by.items())] for p, by in players.items()},
        "totals": [
            (
                currency,
                [(kind, Money(v, currency)) for kind, v in sorted(by_kind.items())],
                Money(sum(by_kind.values()), currency),
            )
            for currency, by_kind in sorted(totals.items())
        ],
    }
    return render_to_string("admin/wallets/includes/reversal_effect.html", context)


@admin.register(Reversal)
class ReversalAdmin(TermSearch, ProposalAdmin, ReadOnlyAdmin):
    """Proposed from the page of what is reversed (a game); approved or rejected here."""

    approve_effect = "posts the exact opposite of every transfer listed here, all at once"
    list_display = ["id", "reference", "game", "status", "proposed_by", "proposed_at", "decided_by"]
    list_filter = ["status"]
    list_select_related = ["proposed_by", "decided_by"]
    search_fields = ["reference"]
    search_help_text = "game id (sim-597bcd-5) or reference (game:12)"
    actions = ["approve", "reject"]
    readonly_fields = [
        "reference",
        "game",
        *ProposalAdmin.decision_fields,
        "effect",
        "transfers",
        "posted",
    ]
    fields = readonly_fields

    def search(self, queryset, term):
        return queryset.filter(reference__in=search.search_target(term).references)

    @admin.display(description="game")
    def game(self, obj):
        named = search.reference_names([obj.reference]).get(obj.reference)
        return named_link(named) if named else "-"

    @admin.display(description="what approving moves")
    def effect(self, obj):
        return effect_table(obj.transfer_ids)

    def _transfers(self, ids):
        if not ids:
            return "-"
        transfers = Transfer.objects.filter(pk__in=ids).order_by("pk")
        return format_html_join(
            mark_safe("<br>"),
            "{}",
            ((link(t, f"#{t.pk} {t.kind} {t.reference}"),) for t in transfers),
        )

    @admin.display(description="transfers to reverse")
    def transfers(self, obj):
        return self._transfers(obj.transfer_ids)

    @admin.display(description="reversing transfers posted")
    def posted(self, obj):
        return self._transfers(obj.posted_transfer_ids)
