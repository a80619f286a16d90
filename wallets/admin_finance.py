"""Finance staff's own records in admin: adjustments and reversals (maker-checker: proposed by
an operator, approved or rejected by someone else, through `wallets.adjustments`), reconciliation
reports and their discrepancies, payment-gateway statements."""

from __future__ import annotations

import hashlib
from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from djmoney.money import Money

from rummy_ledger.errors import DomainError
from wallets import adjustments
from wallets.admin_base import NoDeleteAdmin, ReadOnlyAdmin, changelist_link, link
from wallets.models import (
    BUCKET_CURRENCY,
    Adjustment,
    Discrepancy,
    GatewayStatement,
    GatewayStatementLine,
    ReconciliationReport,
    Reversal,
    Transfer,
)
from wallets.reconciliation.gateway import StatementInvalid, _parse, gateway_statement_import

# --- maker-checker ------------------------------------------------------------------------------


class AdjustmentForm(forms.ModelForm):
    amount_value = forms.DecimalField(
        label="amount", max_digits=18, decimal_places=2, min_value=Decimal("0.01")
    )

    class Meta:
        model = Adjustment
        fields = ["player", "bucket", "direction", "reason"]


class DecisionButtons:
    """Approve / reject buttons on a proposal's page, for approvers, posting to the services."""

    approve_perm = ""
    approve_service = None
    reject_service = None
    id_arg = ""
    change_form_template = "admin/wallets/proposal_change_form.html"

    def has_approve_permission(self, request) -> bool:
        return request.user.has_perm(self.approve_perm)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        can_decide = self.has_approve_permission(request)
        extra_context = {**(extra_context or {}), "can_decide": can_decide}
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        meta = self.model._meta
        view = self.admin_site.admin_view(self.decide_view)
        name = f"{meta.app_label}_{meta.model_name}_decide"
        return [path("<int:pk>/decide/", view, name=name), *super().get_urls()]

    def decide(self, request, queryset, *, approving: bool) -> None:
        """Approve or reject each proposal through its service; refusals become messages."""
        service = type(self).approve_service if approving else type(self).reject_service
        user_arg, verb = ("approved_by", "approved") if approving else ("rejected_by", "rejected")
        for obj in queryset.order_by("pk"):
            try:
                service(**{self.id_arg: obj.pk, user_arg: request.user})
            except DomainError as exc:
                self.message_user(request, f"#{obj.pk} not {verb}: {exc.message}", messages.ERROR)
            else:
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
        approving = request.POST.get("decision") == "approve"
        self.decide(request, self.model.objects.filter(pk=pk), approving=approving)
        meta = self.model._meta
        return HttpResponseRedirect(
            reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[pk])
        )


@admin.register(Adjustment)
class AdjustmentAdmin(DecisionButtons, NoDeleteAdmin):
    list_display = [
        "id",
        "player",
        "bucket",
        "direction",
        "amount",
        "status",
        "proposed_by",
        "proposed_at",
        "decided_by",
        "transfer_link",
    ]
    list_filter = ["status", "direction", "bucket"]
    list_select_related = ["player", "proposed_by", "decided_by", "transfer"]
    autocomplete_fields = ["player"]
    search_fields = ["player__external_id", "reason"]
    actions = ["approve", "reject"]
    approve_perm = "wallets.approve_adjustment"
    approve_service = staticmethod(adjustments.adjustment_approve)
    reject_service = staticmethod(adjustments.adjustment_reject)
    id_arg = "adjustment_id"
    readonly_fields = [
        "player",
        "bucket",
        "direction",
        "amount",
        "reason",
        "status",
        "proposed_by",
        "proposed_at",
        "decided_by",
        "decided_at",
        "decision_note",
        "transfer_link",
    ]

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # decisions are the approve/reject actions, through the services

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = AdjustmentForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["player", "bucket", "direction", "amount_value", "reason"]
        return self.readonly_fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        created = adjustments.adjustment_propose(
            proposed_by=request.user,
            player=data["player"],
            bucket=data["bucket"],
            direction=data["direction"],
            amount=Money(data["amount_value"], BUCKET_CURRENCY[data["bucket"]]),
            reason=data["reason"],
        )
        obj.pk = created.pk
        obj.amount = created.amount
        obj.proposed_by = created.proposed_by

    @admin.display(description="transfer")
    def transfer_link(self, obj):
        return link(obj.transfer) if obj.transfer_id else "-"


@admin.register(Reversal)
class ReversalAdmin(DecisionButtons, ReadOnlyAdmin):
    """Proposed from the page of what is reversed (a game); approved or rejected here."""

    list_display = ["id", "reference", "status", "proposed_by", "proposed_at", "decided_by"]
    list_filter = ["status"]
    list_select_related = ["proposed_by", "decided_by"]
    search_fields = ["reference"]
    actions = ["approve", "reject"]
    approve_perm = "wallets.approve_reversal"
    approve_service = staticmethod(adjustments.reversal_approve)
    reject_service = staticmethod(adjustments.reversal_reject)
    id_arg = "reversal_id"
    readonly_fields = [
        "reference",
        "reason",
        "status",
        "proposed_by",
        "proposed_at",
        "decided_by",
        "decided_at",
        "decision_note",
        "transfers",
        "posted",
    ]
    fields = readonly_fields

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


# --- reconciliation -----------------------------------------------------------------------------


@admin.register(ReconciliationReport)
class ReconciliationReportAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "started_at",
        "status",
        "discrepancy_count",
        "trigger",
        "started_by",
        "seconds",
    ]
    list_filter = ["status", "trigger"]
    list_select_related = ["started_by"]
    readonly_fields = [
        "started_at",
        "finished_at",
        "status",
        "trigger",
        "started_by",
        "discrepancy_count",
        "seconds",
        "checks",
        "error",
        "discrepancy_table",
    ]
    fields = readonly_fields
    change_list_template = "admin/wallets/reconciliationreport/change_list.html"

    @admin.display(description="seconds")
    def seconds(self, obj):
        return obj.stats.get("seconds", "-")

    @admin.display(description="checks")
    def checks(self, obj):
        rows = obj.stats.get("checks", {})
        return format_html_join(
            mark_safe("<br>"),
            "{}: {} found in {} s",
            ((name, v["found"], v["seconds"]) for name, v in rows.items()),
        )

    @admin.display(description="discrepancies (first 200)")
    def discrepancy_table(self, obj):
        rows = obj.discrepancies.order_by("kind", "id")[:200]
        if not rows:
            return "none"
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((r.get_kind_display(), r.subject, r.expected, r.actual, r.currency) for r in rows),
        )
        more = changelist_link(Discrepancy, "all of them", report__id__exact=obj.pk)
        return format_html(
            "<table><tr><th>check</th><th>subject</th><th>expected</th><th>actual</th>"
            "<th>currency</th></tr>{}</table>{}",
            body,
            more,
        )

    def has_run_permission(self, request) -> bool:
        return request.user.has_perm("wallets.run_reconciliation")

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "can_run": self.has_run_permission(request)}
        return super().changelist_view(request, extra_context)

    def get_urls(self):
        view = self.admin_site.admin_view(self.run_view)
        return [path("run/", view, name="wallets_reconciliationreport_run"), *super().get_urls()]

    def run_view(self, request: HttpRequest):
        if request.method != "POST" or not self.has_run_permission(request):
            raise PermissionDenied
        from wallets.tasks import reconcile_nightly

        user_id = request.user.pk
        transaction.on_commit(
            lambda: reconcile_nightly.delay(ReconciliationReport.Trigger.ADMIN, user_id)
        )
        self.message_user(
            request, "Reconciliation started: its report appears here when it finishes."
        )
        return HttpResponseRedirect(reverse("admin:wallets_reconciliationreport_changelist"))


@admin.register(Discrepancy)
class DiscrepancyAdmin(ReadOnlyAdmin):
    list_display = ["id", "report", "kind", "subject", "expected", "actual", "currency", "details"]
    list_filter = ["kind"]
    list_select_related = ["report"]
    search_fields = ["subject"]
    show_full_result_count = False


class GatewayStatementForm(forms.ModelForm):
    file = forms.FileField(help_text="CSV with the columns reference, amount, date, type")

    class Meta:
        model = GatewayStatement
        fields = ["name"]

    def clean(self):
        data = super().clean()
        upload = data.get("file")
        if upload:
            content = upload.read()
            if GatewayStatement.objects.filter(sha256=hashlib.sha256(content).hexdigest()).exists():
                raise forms.ValidationError("This statement was already imported.")
            try:
                _parse(content.decode("utf-8-sig"))
            except (StatementInvalid, UnicodeDecodeError) as exc:
                errors = getattr(exc, "details", {}).get("errors", [])
                raise forms.ValidationError([str(getattr(exc, "message", exc)), *errors]) from exc
            data["content"] = content
        return data


@admin.register(GatewayStatement)
class GatewayStatementAdmin(NoDeleteAdmin):
    list_display = [
        "name",
        "period_start",
        "period_end",
        "line_count",
        "imported_at",
        "imported_by",
    ]
    list_select_related = ["imported_by"]
    form = GatewayStatementForm

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["name", "file"]
        return [
            "name",
            "period_start",
            "period_end",
            "line_count",
            "imported_at",
            "imported_by",
            "lines",
        ]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.get_fields(request, obj)

    @admin.display(description="lines")
    def lines(self, obj):
        return changelist_link(
            GatewayStatementLine, "lines of this statement", statement__id__exact=obj.pk
        )

    def save_model(self, request, obj, form, change):
        try:
            created = gateway_statement_import(
                name=form.cleaned_data["name"],
                content=form.cleaned_data["content"],
                imported_by=request.user,
            )
        except StatementInvalid as exc:
            raise PermissionDenied(exc.message) from exc
        obj.pk = created.pk
        obj.__dict__.update({k: v for k, v in created.__dict__.items() if not k.startswith("_")})


@admin.register(GatewayStatementLine)
class GatewayStatementLineAdmin(ReadOnlyAdmin):
    list_display = ["reference", "kind", "amount", "currency", "date", "statement"]
    list_filter = ["kind"]
    list_select_related = ["statement"]
    search_fields = ["=reference"]
    show_full_result_count = False
