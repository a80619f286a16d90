"""Finance staff's admin for the ledger.

- Ledger records (players' accounts, transfers, entries) are read-only for everyone, superusers
  included: corrections are adjustments and reversals, proposed and approved through services.
- Big tables: `list_select_related`, one query per page (balances per bucket are subqueries of
  that query, evaluated only for the rows shown), no full count, exact or prefix searches that
  use indexes rather than `icontains` scans.
"""

from __future__ import annotations

import csv
import hashlib
from datetime import datetime, time, timedelta

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import OuterRef, Q, Subquery
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from djmoney.money import Money

from rummy_ledger.errors import DomainError
from wallets import adjustments, ledger
from wallets.api_keys import api_client_create
from wallets.models import (
    BUCKET_CURRENCY,
    Account,
    Adjustment,
    ApiClient,
    Bucket,
    Discrepancy,
    Entry,
    GatewayStatement,
    GatewayStatementLine,
    Player,
    ReconciliationReport,
    Reversal,
    Transfer,
)
from wallets.reconciliation.gateway import StatementInvalid, _parse, gateway_statement_import


class ReadOnlyAdmin(admin.ModelAdmin):
    """Ledger records: viewable by whoever may view them, never added, changed or deleted here."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class NoDeleteAdmin(admin.ModelAdmin):
    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def _link(obj, label=None):
    if obj is None:
        return "-"
    meta = obj._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, label or obj)


def _changelist(model, label: str, **params) -> str:
    meta = model._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return format_html('<a href="{}?{}">{}</a>', url, query, label)


# --- players and accounts -----------------------------------------------------------------------


def _bucket_balance(bucket: str) -> Subquery:
    return Subquery(
        Account.objects.filter(
            player=OuterRef("pk"), bucket=bucket, kind=Account.Kind.PLAYER
        ).values("balance")[:1]
    )


def _balance_column(bucket: str):
    def column(self, obj):
        value = getattr(obj, f"balance_{bucket}")
        return "-" if value is None else f"{value:.2f} {BUCKET_CURRENCY[bucket]}"

    column.short_description = bucket
    column.admin_order_field = f"balance_{bucket}"
    return column


class StatementForm(forms.Form):
    bucket = forms.ChoiceField(choices=Bucket.choices, initial=Bucket.DEPOSIT)
    start = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(
        widget=forms.DateInput(attrs={"type": "date"}), help_text="inclusive (whole day)"
    )

    def clean(self):
        data = super().clean()
        if data.get("start") and data.get("end") and data["end"] < data["start"]:
            raise forms.ValidationError("The end comes before the start.")
        return data


@admin.register(Player)
class PlayerAdmin(ReadOnlyAdmin):
    list_display = [
        "external_id",
        *(f"balance_{b}_col" for b in Bucket.values),
        "created_at",
        "statement_link",
    ]
    search_fields = ["external_id"]
    show_full_result_count = False
    readonly_fields = ["external_id", "created_at", "balances", "statement_link"]
    fields = readonly_fields

    balance_deposit_col = _balance_column(Bucket.DEPOSIT)
    balance_winnings_col = _balance_column(Bucket.WINNINGS)
    balance_bonus_col = _balance_column(Bucket.BONUS)
    balance_chips_col = _balance_column(Bucket.CHIPS)

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(**{f"balance_{b}": _bucket_balance(b) for b in Bucket.values})
        )

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        return queryset.filter(Q(external_id=term) | Q(external_id__startswith=term)), False

    @admin.display(description="balances")
    def balances(self, obj):
        return format_html_join(
            ", ",
            "{}: {} {}",
            ((b, getattr(obj, f"balance_{b}"), c) for b, c in BUCKET_CURRENCY.items()),
        )

    @admin.display(description="statement")
    def statement_link(self, obj):
        url = reverse("admin:wallets_player_statement", args=[obj.pk])
        return format_html('<a href="{}">statement</a>', url)

    def get_urls(self):
        view = self.admin_site.admin_view(self.statement_view)
        return [
            path("<int:pk>/statement/", view, name="wallets_player_statement"),
            *super().get_urls(),
        ]

    def statement_view(self, request: HttpRequest, pk: int):
        if not (self.has_view_permission(request) and request.user.has_perm("wallets.view_entry")):
            raise PermissionDenied
        player = get_object_or_404(Player, pk=pk)
        today = timezone.localdate()
        form = StatementForm(
            request.GET
            or {"bucket": Bucket.DEPOSIT, "start": today - timedelta(days=30), "end": today}
        )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Statement of {player}",
            "player": player,
            "form": form,
            "statement": None,
        }
        if form.is_valid():
            account = Account.objects.get(
                player=player, bucket=form.cleaned_data["bucket"], kind=Account.Kind.PLAYER
            )
            tz = timezone.get_current_timezone()
            start = datetime.combine(form.cleaned_data["start"], time.min, tzinfo=tz)
            end = datetime.combine(
                form.cleaned_data["end"] + timedelta(days=1), time.min, tzinfo=tz
            )
            stmt = ledger.statement(account=account, start=start, end=end)
            if request.GET.get("format") == "csv":
                return _statement_csv(stmt)
            context["statement"] = stmt
            context["csv_query"] = request.GET.copy()
            context["csv_query"]["format"] = "csv"
        return TemplateResponse(request, "admin/wallets/player/statement.html", context)


def _statement_csv(stmt: ledger.Statement) -> HttpResponse:
    response = HttpResponse(content_type="text/csv")
    name = f"statement-{stmt.account.code}-{stmt.start:%Y%m%d}-{stmt.end:%Y%m%d}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name.replace(":", "_")}"'
    writer = csv.writer(response)
    currency = stmt.account.currency
    writer.writerow(
        ["time", "transfer", "kind", "reference", "memo", "amount", "balance", "currency"]
    )
    writer.writerow(["", "", "opening", "", "", "", f"{stmt.opening.amount:.2f}", currency])
    for line in stmt.lines:
        e = line.entry
        writer.writerow(
            [
                timezone.localtime(e.created_at).isoformat(),
                e.transfer_id,
                e.transfer.kind,
                e.transfer.reference,
                e.transfer.memo,
                f"{e.amount.amount:.2f}",
                f"{line.running_balance.amount:.2f}",
                currency,
            ]
        )
    writer.writerow(["", "", "closing", "", "", "", f"{stmt.closing.amount:.2f}", currency])
    return response


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ["code", "kind", "player", "bucket", "balance", "created_at"]
    list_filter = ["kind", "bucket"]
    list_select_related = ["player"]
    search_fields = ["code"]
    show_full_result_count = False
    readonly_fields = ["code", "kind", "player", "bucket", "balance_shown", "entries_link"]
    fields = readonly_fields

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        return queryset.filter(Q(code=term) | Q(player__external_id=term)), False

    @admin.display(description="balance")
    def balance_shown(self, obj):
        if obj.caches_balance:
            return obj.balance
        return f"{ledger.balance(account=obj)} (sum of entries)"

    @admin.display(description="entries")
    def entries_link(self, obj):
        return _changelist(Entry, "entries of this account", account__id__exact=obj.pk)


class EntryInline(admin.TabularInline):
    model = Entry
    fields = ["account", "amount", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("account")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


def _ledger_search(term: str) -> tuple[str, object]:
    """What a search term names, resolved with index look-ups first, so that the filter on the
    big table is one indexable condition (an OR across joined tables would scan it whole)."""
    player = Player.objects.filter(external_id=term).first()
    if player is not None:
        return "accounts", list(player.accounts.values_list("pk", flat=True))
    account = Account.objects.filter(code=term).values_list("pk", flat=True).first()
    if account is not None:
        return "accounts", [account]
    return "reference", term


def _reference_q(term: str, prefix: str = "") -> Q:
    """A reference, or its prefix up to a colon (`game:12` finds `game:12` and `game:12:...`)."""
    q = Q(**{f"{prefix}reference": term}) | Q(**{f"{prefix}reference__startswith": f"{term}:"})
    return q


@admin.register(Transfer)
class TransferAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "reference", "memo", "created_at", "reverses_link"]
    # a date filter, not date_hierarchy: that one reads the distinct dates of the whole table
    list_filter = ["kind", ("created_at", admin.DateFieldListFilter)]
    list_select_related = ["reverses"]
    search_fields = ["reference"]
    search_help_text = "reference or its prefix (game:12), idempotency key, player id, transfer id"
    show_full_result_count = False
    inlines = [EntryInline]
    readonly_fields = [
        "kind",
        "reference",
        "idempotency_key",
        "memo",
        "created_at",
        "reverses_link",
        "reversed_by_link",
    ]
    fields = readonly_fields

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        what, value = _ledger_search(term)
        if what == "accounts":
            entries = Entry.objects.filter(account_id__in=value).values("transfer_id")
            return queryset.filter(pk__in=entries), False
        q = _reference_q(term) | Q(idempotency_key=term)
        if term.isdigit():
            q |= Q(pk=int(term))
        return queryset.filter(q), False

    @admin.display(description="reverses")
    def reverses_link(self, obj):
        return _link(obj.reverses) if obj.reverses_id else "-"

    @admin.display(description="reversed by")
    def reversed_by_link(self, obj):
        return _link(Transfer.objects.filter(reverses=obj).first())


@admin.register(Entry)
class EntryAdmin(ReadOnlyAdmin):
    list_display = ["id", "created_at", "account", "player", "amount", "kind", "reference"]
    list_filter = [
        ("created_at", admin.DateFieldListFilter),
        "transfer__kind",
        "amount_currency",
        "account__kind",
    ]
    list_select_related = ["account__player", "transfer"]
    search_fields = ["account__code"]
    search_help_text = "player id, account code, or transfer reference (or its prefix: game:12)"
    show_full_result_count = False
    readonly_fields = ["transfer_link", "account", "amount", "created_at"]
    fields = readonly_fields

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        what, value = _ledger_search(term)
        if what == "accounts":
            return queryset.filter(account_id__in=value), False
        transfers = Transfer.objects.filter(_reference_q(term)).values("pk")
        return queryset.filter(transfer_id__in=transfers), False

    @admin.display(description="player")
    def player(self, obj):
        return obj.account.player or "-"

    @admin.display(description="kind", ordering="transfer__kind")
    def kind(self, obj):
        return obj.transfer.kind

    @admin.display(description="reference")
    def reference(self, obj):
        return obj.transfer.reference

    @admin.display(description="transfer")
    def transfer_link(self, obj):
        return _link(obj.transfer)


# --- API clients ------------------------------------------------------------------------------


class ApiClientCreateForm(forms.ModelForm):
    scopes = forms.MultipleChoiceField(
        choices=ApiClient.Scope.choices, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = ApiClient
        fields = ["name"]


@admin.register(ApiClient)
class ApiClientAdmin(NoDeleteAdmin):
    """Game servers and the payment gateway. The key is shown once, right after creation."""

    list_display = ["name", "key_prefix", "scopes", "is_active", "created_at"]
    list_filter = ["is_active"]
    search_fields = ["name", "key_prefix"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = ApiClientCreateForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["name", "scopes"]
        return ["name", "key_prefix", "scopes", "is_active", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else ["name", "key_prefix", "scopes", "created_at"]

    def save_model(self, request, obj, form, change):
        if change:
            obj.save(update_fields=["is_active"])
            return
        client, key = api_client_create(
            name=form.cleaned_data["name"], scopes=form.cleaned_data["scopes"]
        )
        obj.pk = client.pk
        obj.__dict__.update({k: v for k, v in client.__dict__.items() if not k.startswith("_")})
        self.message_user(
            request,
            f"The key of {client.name} is {key} — copy it now: it is stored only as a hash "
            "and will never be shown again.",
            messages.WARNING,
        )


# --- maker-checker ------------------------------------------------------------------------------


class AdjustmentForm(forms.ModelForm):
    amount_value = forms.DecimalField(
        label="amount", max_digits=18, decimal_places=2, min_value=0.01, help_text="INR or chips"
    )

    class Meta:
        model = Adjustment
        fields = ["player", "bucket", "direction", "reason"]


def _decide(modeladmin, request, queryset, service, id_arg: str, user_arg: str, verb: str):
    for obj in queryset.order_by("pk"):
        try:
            service(**{id_arg: obj.pk, user_arg: request.user})
        except DomainError as exc:
            modeladmin.message_user(request, f"#{obj.pk} not {verb}: {exc.message}", messages.ERROR)
        else:
            modeladmin.message_user(request, f"#{obj.pk} {verb}.", messages.SUCCESS)


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

    def decide_view(self, request: HttpRequest, pk: int):
        if request.method != "POST" or not self.has_approve_permission(request):
            raise PermissionDenied
        approving = request.POST.get("decision") == "approve"
        service = type(self).approve_service if approving else type(self).reject_service
        user_arg = "approved_by" if approving else "rejected_by"
        verb = "approved" if approving else "rejected"
        queryset = self.model.objects.filter(pk=pk)
        _decide(self, request, queryset, service, self.id_arg, user_arg, verb)
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
        return _link(obj.transfer) if obj.transfer_id else "-"

    @admin.action(description="Approve selected adjustments (posts them)", permissions=["approve"])
    def approve(self, request, queryset):
        _decide(
            self,
            request,
            queryset,
            adjustments.adjustment_approve,
            "adjustment_id",
            "approved_by",
            "approved",
        )

    @admin.action(description="Reject selected adjustments", permissions=["approve"])
    def reject(self, request, queryset):
        _decide(
            self,
            request,
            queryset,
            adjustments.adjustment_reject,
            "adjustment_id",
            "rejected_by",
            "rejected",
        )


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
            ((_link(t, f"#{t.pk} {t.kind} {t.reference}"),) for t in transfers),
        )

    @admin.display(description="transfers to reverse")
    def transfers(self, obj):
        return self._transfers(obj.transfer_ids)

    @admin.display(description="reversing transfers posted")
    def posted(self, obj):
        return self._transfers(obj.posted_transfer_ids)

    @admin.action(description="Approve selected reversals (posts them)", permissions=["approve"])
    def approve(self, request, queryset):
        _decide(
            self,
            request,
            queryset,
            adjustments.reversal_approve,
            "reversal_id",
            "approved_by",
            "approved",
        )

    @admin.action(description="Reject selected reversals", permissions=["approve"])
    def reject(self, request, queryset):
        _decide(
            self,
            request,
            queryset,
            adjustments.reversal_reject,
            "reversal_id",
            "rejected_by",
            "rejected",
        )


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
        more = _changelist(Discrepancy, "all of them", report__id__exact=obj.pk)
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
        return _changelist(
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
