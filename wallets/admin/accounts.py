"""Finance staff's admin for the ledger: players (balances by bucket, statements), accounts,
transfers, entries.

- Ledger records are read-only for everyone, superusers included: corrections are adjustments
  and reversals, proposed and approved through services.
- Big tables: `list_select_related`, what a column needs loaded once for the page shown
  (`PageExtras`), no full count (`LargeTablePaginator`), searches resolved to ids and exact
  references by index look-ups first (`wallets.admin.search`), date filters rather than
  `date_hierarchy` (which reads the distinct dates of the whole table).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from djmoney.money import Money

from rummy_ledger.csv_cells import csv_response
from rummy_ledger.replica import finance_page
from wallets.admin import search
from wallets.admin.base import (
    DateRangeForm,
    PageExtras,
    ReadOnlyAdmin,
    ReadOnlyInline,
    TermSearch,
    changelist_link,
    link,
    money_display,
    money_html,
    named_link,
)
from wallets.admin.paging import LargeTablePaginator
from wallets.admin.protection import BonusLotInline, ProtectionChangeInline, protection_summary
from wallets.admin.regions import PlayerRegionAdmin
from wallets.errors import MonthArchived
from wallets.models import BUCKET_CURRENCY, Account, Bucket, Entry, Player, Transfer
from wallets.money.amounts import amount_text
from wallets.money.formatting import unit
from wallets.selectors import account_balances
from wallets.services import transfers

STATEMENT_PAGE = 200  # lines per statement page (500 lines made a 158 KB page)
STATEMENT_MAX_PAGE = 10**9  # a page number past it is no page (its offset would pass a bigint)

# --- players and accounts -----------------------------------------------------------------------


def _bucket_balance(bucket: str) -> Subquery:
    return Subquery(
        Account.objects.filter(
            player=OuterRef("pk"), bucket=bucket, kind=Account.Kind.PLAYER
        ).values("balance")[:1]
    )


class StatementForm(DateRangeForm):
    bucket = forms.ChoiceField(choices=Bucket.choices, initial=Bucket.DEPOSIT)
    field_order = ["bucket", "start", "end"]


@admin.register(Player)
class PlayerAdmin(PlayerRegionAdmin, TermSearch, ReadOnlyAdmin):
    list_display = [
        "external_id",
        *(f"balance_{b}_col" for b in Bucket.values),
        "kyc_status",
        "created_at",
        "statement_link",
    ]
    list_filter = ["kyc_status"]
    ordering = ["external_id"]
    search_fields = ["external_id"]
    search_help_text = "the player's external id, or its beginning"
    show_full_result_count = False
    paginator = LargeTablePaginator
    readonly_fields = [
        "external_id",
        "created_at",
        "balances",
        "kyc_status",
        "pan",
        "kyc_updated_at",
        "region",
        "protection",
        "statement_link",
    ]
    fields = readonly_fields
    inlines = [BonusLotInline, ProtectionChangeInline]

    @admin.display(description="player protection")
    def protection(self, obj):
        return protection_summary(obj)

    (
        balance_deposit_col,
        balance_winnings_col,
        balance_bonus_col,
        balance_chips_col,
        balance_pending_col,
    ) = (money_display(f"balance_{b}", currency=BUCKET_CURRENCY[b], description=b) for b in Bucket)

    def get_queryset(self, request):
        balances = {f"balance_{b}": _bucket_balance(b) for b in Bucket.values}
        return super().get_queryset(request).annotate(**balances)

    def search(self, queryset, term):
        return queryset.filter(external_id__startswith=term)

    @admin.display(description="balances")
    def balances(self, obj):
        accounts = {a.bucket: a for a in obj.accounts.filter(kind=Account.Kind.PLAYER)}
        return format_html_join(
            " · ",
            "{}: {}",
            ((b, money_html(accounts[b].balance) if b in accounts else "-") for b in Bucket),
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

    @finance_page
    def statement_view(self, request: HttpRequest, pk: int):
        if not (self.has_view_permission(request) and request.user.has_perm("wallets.view_entry")):
            raise PermissionDenied
        player = get_object_or_404(Player, pk=pk)
        today = timezone.localdate()
        asked = {k: v for k, v in request.GET.items() if k in StatementForm.base_fields}
        form = StatementForm(
            asked or {"bucket": Bucket.DEPOSIT, "start": today - timedelta(days=30), "end": today}
        )
        page = request.GET.get("page", "")
        page = int(page) if page.isdigit() and 0 < int(page) <= STATEMENT_MAX_PAGE else 1
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
            start, end = form.period()
            try:
                if request.GET.get("format") == "csv":
                    return _statement_csv(
                        transfers.statement(account=account, start=start, end=end)
                    )
                stmt = transfers.statement(
                    account=account,
                    start=start,
                    end=end,
                    first=(page - 1) * STATEMENT_PAGE,
                    count=STATEMENT_PAGE,
                )
            except MonthArchived as exc:  # a day inside an archived month: only its bounds
                form.add_error(None, str(exc))
                stmt = None
            if stmt is not None:
                names = search.reference_names({ln.entry.transfer.reference for ln in stmt.lines})
                context.update(
                    statement=stmt,
                    rows=[(ln, names.get(ln.entry.transfer.reference)) for ln in stmt.lines],
                    pages=_pages(stmt, dict(form.data)),
                )
        return TemplateResponse(request, "admin/wallets/player/statement.html", context)


def _pages(stmt: transfers.Statement, params: dict) -> dict:
    """Where this page of a statement sits, and the links to its neighbours."""
    shown_to = stmt.first + len(stmt.lines)
    page = stmt.first // STATEMENT_PAGE + 1

    def url(n: int) -> str:
        return "?" + urlencode({**params, "page": n})

    return {
        "first": stmt.first + 1 if stmt.lines else 0,
        "last": shown_to,
        "count": stmt.line_count,
        "previous": url(page - 1) if page > 1 else "",
        "next": url(page + 1) if shown_to < stmt.line_count else "",
    }


def _statement_csv(stmt: transfers.Statement) -> HttpResponse:
    """Every line of the range (no pages); headers name the unit, values stay plain decimals."""
    currency = stmt.account.currency
    shown = unit(currency)
    header = [
        "time",
        "transfer",
        "kind",
        "reference",
        "memo",
        f"amount ({shown})",
        f"balance ({shown})",
        "currency",
    ]
    rows = [["", "", "opening", "", "", "", amount_text(stmt.opening.amount), currency]]
    if stmt.archived_until is not None:
        rows.append([timezone.localtime(stmt.archived_until).isoformat(), "", "archived", "",
                     "the entries before are archived: the balance from the month closes", "",
                     amount_text(stmt.archived_balance.amount), currency])  # fmt: skip
    for line in stmt.lines:
        e = line.entry
        rows.append(
            [
                timezone.localtime(e.created_at).isoformat(),
                e.transfer_id,
                e.transfer.kind,
                e.transfer.reference,
                e.transfer.memo,
                amount_text(e.amount.amount),
                amount_text(line.running_balance.amount),
                currency,
            ]
        )
    rows.append(["", "", "closing", "", "", "", amount_text(stmt.closing.amount), currency])
    return csv_response(
        f"statement-{stmt.account.code}-{stmt.start:%Y%m%d}-{stmt.end:%Y%m%d}.csv", header, rows
    )


@admin.register(Account)
class AccountAdmin(TermSearch, PageExtras, ReadOnlyAdmin):
    list_display = ["code", "kind", "player", "bucket", "balance_col", "created_at"]
    list_filter = ["kind", "bucket"]
    list_select_related = ["player"]
    search_fields = ["code"]
    search_help_text = "account code, or a player's external id"
    show_full_result_count = False
    paginator = LargeTablePaginator
    readonly_fields = ["code", "kind", "player", "bucket", "balance_shown", "entries_link"]
    fields = readonly_fields

    def page_loaded(self, rows) -> None:
        balances = account_balances(rows)
        for row in rows:
            row.shown_balance = balances[row.pk]

    def search(self, queryset, term):
        return queryset.filter(pk__in=search.search_target(term).account_ids)

    @admin.display(description="balance")
    def balance_col(self, obj):
        """Platform accounts keep no cached balance: theirs is the sum of their entries, loaded
        for the page's platform rows in one grouped query (`page_loaded`)."""
        return money_html(obj.shown_balance)

    @admin.display(description="balance")
    def balance_shown(self, obj):
        if obj.caches_balance:
            return money_html(obj.balance)
        return format_html("{} (sum of entries)", money_html(transfers.balance(account=obj)))

    @admin.display(description="entries")
    def entries_link(self, obj):
        return changelist_link(Entry, "entries of this account", account__id__exact=obj.pk)


class EntryInline(ReadOnlyInline):
    model = Entry
    fields = ["account", "player", "amount_shown", "created_at"]
    readonly_fields = fields
    select_related = ("account__player",)

    amount_shown = money_display("amount", description="amount")

    @admin.display(description="player")
    def player(self, obj):
        return obj.account.player or "-"


def _named(obj, names: dict) -> str:
    named = names.get(obj.reference)
    return "-" if named is None else named_link(named)


@admin.register(Transfer)
class TransferAdmin(TermSearch, PageExtras, ReadOnlyAdmin):
    list_display = [
        "id",
        "created_at",
        "kind",
        "amount",
        "players",
        "game",
        "reference",
        "reverses_link",
    ]
    # a date filter, not date_hierarchy: that one reads the distinct dates of the whole table
    list_filter = ["kind", ("created_at", admin.DateFieldListFilter)]
    list_select_related = ["reverses"]
    search_fields = ["reference"]
    search_help_text = (
        "game id (sim-597bcd-5), player id, account code, reference or its prefix (game:12), "
        "idempotency key, transfer id"
    )
    show_full_result_count = False
    paginator = LargeTablePaginator
    inlines = [EntryInline]
    readonly_fields = [
        "kind",
        "amount",
        "game",
        "reference",
        "idempotency_key",
        "memo",
        "created_at",
        "reverses_link",
        "reversed_by_link",
    ]
    fields = readonly_fields

    def page_loaded(self, rows) -> None:
        moved: dict = defaultdict(lambda: defaultdict(int))
        players: dict = defaultdict(set)
        legs = Entry.objects.filter(transfer_id__in=[t.pk for t in rows]).values_list(
            "transfer_id", "amount", "amount_currency", "account__player__external_id"
        )
        for transfer_id, amount, currency, player in legs:
            if amount > 0:
                moved[transfer_id][currency] += amount
            if player:
                players[transfer_id].add(player)
        names = search.reference_names({t.reference for t in rows})
        for t in rows:
            t.moved = [Money(v, c) for c, v in sorted(moved[t.pk].items())]
            t.player_ids = sorted(players[t.pk])
            t.names = names

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is not None:
            self.page_loaded([obj])
        return obj

    def search(self, queryset, term):
        return queryset.filter(pk__in=search.transfer_ids(search.search_target(term)))

    @admin.display(description="amount")
    def amount(self, obj):
        """What moved: the sum of the transfer's credits, per currency."""
        return format_html_join(" ", "{}", ((money_html(m),) for m in obj.moved)) or "-"

    @admin.display(description="players")
    def players(self, obj):
        return ", ".join(obj.player_ids) or "-"

    @admin.display(description="game")
    def game(self, obj):
        return _named(obj, obj.names)

    @admin.display(description="reverses")
    def reverses_link(self, obj):
        return link(obj.reverses, f"#{obj.reverses_id}") if obj.reverses_id else "-"

    @admin.display(description="reversed by")
    def reversed_by_link(self, obj):
        return link(Transfer.objects.filter(reverses=obj).first())


@admin.register(Entry)
class EntryAdmin(TermSearch, PageExtras, ReadOnlyAdmin):
    list_display = [
        "id",
        "created_at",
        "account",
        "player",
        "amount_shown",
        "kind",
        "game",
        "reference",
    ]
    list_filter = [
        ("created_at", admin.DateFieldListFilter),
        "transfer__kind",
        "amount_currency",
        "account__kind",
    ]
    list_select_related = ["account__player", "transfer"]
    search_fields = ["account__code"]
    search_help_text = (
        "game id (sim-597bcd-5), player id, account code, or transfer reference (or its prefix)"
    )
    show_full_result_count = False
    paginator = LargeTablePaginator
    readonly_fields = ["transfer_link", "account", "amount_shown", "created_at"]
    fields = readonly_fields

    amount_shown = money_display("amount", description="amount")

    def page_loaded(self, rows) -> None:
        names = search.reference_names({e.transfer.reference for e in rows})
        for e in rows:
            e.names = names

    def search(self, queryset, term):
        return queryset.filter(pk__in=search.entry_ids(search.search_target(term)))

    @admin.display(description="player")
    def player(self, obj):
        return obj.account.player or "-"

    @admin.display(description="kind", ordering="transfer__kind")
    def kind(self, obj):
        return obj.transfer.kind

    @admin.display(description="game")
    def game(self, obj):
        return _named(obj.transfer, obj.names)

    @admin.display(description="reference")
    def reference(self, obj):
        return obj.transfer.reference

    @admin.display(description="transfer")
    def transfer_link(self, obj):
        return link(obj.transfer)
