"""Reconciliation reports and their discrepancies, and imported payment-gateway statements."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from wallets.admin.base import (
    NoDeleteAdmin,
    ReadOnlyAdmin,
    adopt,
    changelist_link,
    money_display,
    money_html,
    staff_display,
)
from wallets.errors import StatementInvalid
from wallets.models import (
    Discrepancy,
    GatewayStatement,
    GatewayStatementLine,
    ReconciliationReport,
)
from wallets.reconciliation import kind_description
from wallets.reconciliation.gateway import gateway_statement_import, statement_parse
from wallets.tasks import reconcile_nightly

RUN_ASKED_AT = "reconciliation_asked_at"  # session key: when this user last pressed Run
REFRESH_SECONDS = 5
AWAIT_SECONDS = 600


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
        "starter",
        "discrepancy_count",
        "seconds",
        "read_from",
        "checks",
        "error",
        "discrepancy_table",
    ]
    fields = readonly_fields
    change_list_template = "admin/wallets/reconciliationreport/change_list.html"

    starter = staff_display("started_by", "started by")

    @admin.display(description="run time")
    def seconds(self, obj):
        seconds = obj.stats.get("seconds")
        return "-" if seconds is None else f"{seconds} s"

    @admin.display(description="snapshot read from")
    def read_from(self, obj):
        """The standby (and how far behind it was) or the primary, and why (the runner's
        `stats["read_from"]`); reports from before it was recorded read the primary."""
        read = obj.stats.get("read_from") or {}
        if read.get("notice"):
            return read["notice"]
        return "Read from the primary." if read else "-"

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
            (
                (
                    kind_description(r.kind),
                    r.subject,
                    money_html(r.expected, r.currency),
                    money_html(r.actual, r.currency),
                    r.currency,
                )
                for r in rows
            ),
        )
        more = changelist_link(Discrepancy, "all of them", report__id__exact=obj.pk)
        return format_html(
            '<table class="finance"><tr><th>check</th><th>subject</th><th>expected</th>'
            "<th>actual</th><th>currency</th></tr>{}</table>{}",
            body,
            more,
        )

    def has_run_permission(self, request) -> bool:
        return request.user.has_perm("wallets.run_reconciliation")

    def changelist_view(self, request, extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "can_run": self.has_run_permission(request),
            "refresh_seconds": REFRESH_SECONDS if self.awaiting_report(request) else None,
        }
        return super().changelist_view(request, extra_context)

    def awaiting_report(self, request) -> bool:
        """The list reloads itself while a run is in progress, and after "Run reconciliation
        now" until the run has finished (the worker may not have started it yet), for at most
        AWAIT_SECONDS (a worker that is down). Only a finished report ends the wait: a run that
        starts between this method's two queries is then caught by the second."""
        reports = ReconciliationReport.objects
        running = ReconciliationReport.Status.RUNNING
        asked = request.session.get(RUN_ASKED_AT)
        if asked is not None:
            since = datetime.fromtimestamp(asked, tz=UTC)
            mine = reports.filter(started_by=request.user, started_at__gte=since)
            if mine.exclude(status=running).exists() or timezone.now() - since > timedelta(
                seconds=AWAIT_SECONDS
            ):
                del request.session[RUN_ASKED_AT]
            else:
                return True
        return reports.filter(status=running).exists()

    def get_urls(self):
        view = self.admin_site.admin_view(self.run_view)
        return [path("run/", view, name="wallets_reconciliationreport_run"), *super().get_urls()]

    def run_view(self, request: HttpRequest):
        if request.method != "POST" or not self.has_run_permission(request):
            raise PermissionDenied
        request.session[RUN_ASKED_AT] = timezone.now().timestamp()
        reconcile_nightly.delay(ReconciliationReport.Trigger.ADMIN, request.user.pk)
        self.message_user(
            request, "Reconciliation started: its report appears here when it finishes."
        )
        return HttpResponseRedirect(reverse("admin:wallets_reconciliationreport_changelist"))


@admin.register(Discrepancy)
class DiscrepancyAdmin(ReadOnlyAdmin):
    list_display = ["id", "report", "kind", "subject", "expected_col", "actual_col", "details"]
    list_filter = ["kind"]
    list_select_related = ["report"]
    search_fields = ["subject"]
    show_full_result_count = False

    readonly_fields = ["report", "kind", "subject", "expected_col", "actual_col", "details"]
    fields = readonly_fields

    expected_col = money_display("expected", currency_field="currency")
    actual_col = money_display("actual", currency_field="currency")


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
                statement_parse(content.decode("utf-8-sig"))
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

    importer = staff_display("imported_by", "imported by")

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
            "importer",
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
        adopt(obj, created)


@admin.register(GatewayStatementLine)
class GatewayStatementLineAdmin(ReadOnlyAdmin):
    list_display = ["reference", "kind", "amount_col", "date", "statement"]
    list_filter = ["kind"]
    list_select_related = ["statement"]
    search_fields = ["=reference"]
    show_full_result_count = False

    readonly_fields = ["statement", "reference", "kind", "amount_col", "date"]
    fields = readonly_fields

    amount_col = money_display("amount", currency_field="currency", description="amount")
