"""Finance staff's admin for the ledger: players (balances by bucket, statements), accounts,
transfers, entries, API clients. Proposals and reconciliation are in `wallets.admin_finance`.

- Ledger records are read-only for everyone, superusers included: corrections are adjustments
  and reversals, proposed and approved through services.
- Big tables: `list_select_related`, one query per page (balances per bucket are subqueries of
  that query, evaluated only for the rows shown), no full count, exact or prefix searches that
  use indexes rather than `icontains` scans, date filters rather than `date_hierarchy`.
"""

from __future__ import annotations

import csv
from datetime import datetime, time, timedelta

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, Q, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from wallets import ledger
from wallets.admin_base import (
    NoDeleteAdmin,
    ReadOnlyAdmin,
    ReadOnlyInline,
    changelist_link,
    link,
)
from wallets.api_keys import api_client_create
from wallets.models import BUCKET_CURRENCY, Account, ApiClient, Bucket, Entry, Player, Transfer

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
        return changelist_link(Entry, "entries of this account", account__id__exact=obj.pk)


class EntryInline(ReadOnlyInline):
    model = Entry
    fields = ["account", "amount", "created_at"]
    readonly_fields = fields
    show_change_link = False
    select_related = ("account",)


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
        return link(obj.reverses) if obj.reverses_id else "-"

    @admin.display(description="reversed by")
    def reversed_by_link(self, obj):
        return link(Transfer.objects.filter(reverses=obj).first())


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
        return link(obj.transfer)


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


# The finance staff's own records: adjustments, reversals, reconciliation, gateway statements.
from wallets import admin_finance  # noqa: E402, F401
