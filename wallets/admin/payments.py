"""Money out and tax in admin: the withdrawal queue (KYC and the year's tax position beside
each request), its reviews (maker-checker: `ProposalAdmin`, `proposal_decide`), KYC records,
TDS year ends, and the reports finance files: a player's tax statement, TDS per quarter, GST
per month (each also as CSV)."""

from __future__ import annotations

import csv
from collections.abc import Iterable

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from rummy_ledger.errors import DomainError
from wallets import selectors, tax
from wallets.admin.base import ReadOnlyAdmin, link, money_display, money_html
from wallets.admin.proposals import ProposalAdmin
from wallets.formatting import money
from wallets.models import (
    CASH,
    KycRecord,
    Player,
    ProposalStatus,
    TdsYearEnd,
    Withdrawal,
    WithdrawalReview,
)
from wallets.services import proposals
from wallets.services.flows import flagged_pairs_of
from wallets.services.tax import TaxPosition, tax_positions


def _position_text(position: TaxPosition | None) -> str:
    if position is None:
        return "-"
    return (
        f"FY {position.fy.label}: opening {money(position.opening)}, "
        f"deposits {money(position.deposits)}, withdrawn {money(position.withdrawals)}, "
        f"net winnings taxed {money(position.taxed_net_winnings)}, TDS {money(position.tds)}"
    )


def _kyc_text(player: Player) -> str:
    return f"{player.kyc_status} {player.pan}".strip()


def attach_positions(withdrawals: Iterable[Withdrawal]) -> None:
    """Each withdrawal's player's position in the year of its request, as `obj.position`: a
    few grouped queries per year shown, however many rows."""
    by_year: dict[str, list[Withdrawal]] = {}
    for w in withdrawals:
        by_year.setdefault(tax.financial_year_of(w.requested_at).label, []).append(w)
    for label, rows in by_year.items():
        positions = tax_positions(
            player_ids=[w.player_id for w in rows], fy=tax.financial_year(label)
        )
        for w in rows:
            w.position = positions[w.player_id]


class WaitingFilter(admin.SimpleListFilter):
    """The queue: what waits for an operator's review, or for an approver's decision."""

    title = "waiting for"
    parameter_name = "waiting"

    def lookups(self, request, model_admin):
        return [("review", "an operator's review"), ("approval", "an approver's decision")]

    def queryset(self, request, queryset):
        if self.value() == "review":
            return selectors.withdrawals_to_review(queryset)
        if self.value() == "approval":
            return queryset.filter(review__status=ProposalStatus.PROPOSED)
        return queryset


class PositionedChangeList(ChangeList):
    def get_results(self, request):
        super().get_results(request)
        attach_positions(self.result_list)


class ReviewForm(forms.Form):
    note = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="what you checked (the player, the KYC, the bank account, the tax position)",
    )


class FinancialYearField(forms.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=7, strip=False, help_text="like 2026-27", **kwargs)

    def clean(self, value):
        try:  # exactly the label, as the API takes it: nothing around it
            return tax.financial_year(super().clean(value))
        except tax.TaxError as exc:
            raise forms.ValidationError(str(exc)) from exc


class TaxStatementForm(forms.Form):
    player = forms.CharField(max_length=64, help_text="the player's id")
    fy = FinancialYearField()

    def clean_player(self):
        player = Player.objects.filter(external_id=self.cleaned_data["player"].strip()).first()
        if player is None:
            raise forms.ValidationError("No such player.")
        return player


class QuarterForm(forms.Form):
    fy = FinancialYearField()
    quarter = forms.TypedChoiceField(
        choices=[(1, "Q1 April-June"), (2, "Q2 July-September"), (3, "Q3 October-December"),
                 (4, "Q4 January-March")],
        coerce=int,
    )  # fmt: skip


class MonthsForm(forms.Form):
    start = forms.DateField(
        widget=forms.DateInput(attrs={"type": "month"}, format="%Y-%m"),
        input_formats=["%Y-%m", "%Y-%m-%d"],
        help_text="first month",
    )
    end = forms.DateField(
        widget=forms.DateInput(attrs={"type": "month"}, format="%Y-%m"),
        input_formats=["%Y-%m", "%Y-%m-%d"],
        help_text="last month (inclusive)",
    )

    def clean(self):
        data = super().clean()
        if data.get("start") and data.get("end"):
            if data["end"] < data["start"]:
                raise forms.ValidationError("The last month comes before the first.")
            try:
                tax.months_checked(data["start"], data["end"])
            except tax.TaxError as exc:
                raise forms.ValidationError(str(exc)) from exc
        return data


def _csv(name: str, header: list[str], rows: Iterable[list]) -> HttpResponse:
    response = HttpResponse(content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    writer = csv.writer(response)
    writer.writerow(header)
    writer.writerows(rows)
    return response


@admin.register(Withdrawal)
class WithdrawalAdmin(ReadOnlyAdmin):
    """The queue: withdrawals that wait (`needs approval`, `requested`) are reviewed here by an
    operator, then approved or rejected on their review by an approver."""

    list_display = [
        "id",
        "player",
        "amount",
        "tds",
        "payout",
        "status",
        "kyc",
        "tax_brief",
        "review_link",
        "requested_at",
    ]  # narrow enough for a laptop (1366 px): whether it needed approval is a filter
    list_filter = [WaitingFilter, "status", "needs_approval"]
    list_select_related = ["player", "review"]
    search_fields = ["=reference", "=gateway_reference", "=player__external_id"]
    show_full_result_count = False
    readonly_fields = [
        "player",
        "client",
        "reference",
        "status",
        "amount",
        "net_winnings_shown",
        "taxed_net_winnings_shown",
        "tds_shown",
        "payout",
        "pan_shown",
        "kyc",
        "tax_position",
        "needs_approval",
        "requested_at",
        "decided_at",
        "settled_at",
        "gateway_reference",
        "failure_reason",
        "review_link",
        "transfers",
    ]
    fields = readonly_fields
    change_form_template = "admin/wallets/withdrawal/change_form.html"
    change_list_template = "admin/wallets/withdrawal/change_list.html"

    net_winnings_shown = money_display("net_winnings", currency=CASH, description="net winnings")
    taxed_net_winnings_shown = money_display(
        "taxed_net_winnings", currency=CASH, description="net winnings taxed now"
    )
    tds_shown = money_display("tds", description="TDS")

    @admin.display(description="PAN when requested")
    def pan_shown(self, obj):
        return obj.pan

    def get_changelist(self, request, **kwargs):
        return PositionedChangeList

    @admin.display(description="KYC now")
    def kyc(self, obj):
        return _kyc_text(obj.player)

    @admin.display(description="tax position (FY of the request)")
    def tax_position(self, obj):
        if not hasattr(obj, "position"):
            attach_positions([obj])
        return _position_text(obj.position)

    @admin.display(description="tax (FY of the request)")
    def tax_brief(self, obj):
        """The list's narrower column: what the year's withdrawals were taxed (all: the page)."""
        position = obj.position
        return (
            f"FY {position.fy.label}: net winnings taxed {money(position.taxed_net_winnings)}, "
            f"TDS {money(position.tds)}"
        )

    @admin.display(description="review")
    def review_link(self, obj):
        review = getattr(obj, "review", None)
        return link(review, f"{review.status} by {review.proposed_by}") if review else "-"

    @admin.display(description="transfers")
    def transfers(self, obj):
        steps = {
            "request": obj.request_transfer,
            "approval": obj.approval_transfer,
            "return": obj.return_transfer,
        }
        shown = [format_html("{}: {}", step, link(t)) for step, t in steps.items() if t]
        return format_html(", ".join(["{}"] * len(shown)), *shown) if shown else "-"

    def has_review_permission(self, request) -> bool:
        return request.user.has_perm("wallets.add_withdrawalreview")

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, object_id)
        waiting = (
            obj is not None
            and obj.status == Withdrawal.Status.REQUESTED
            and not WithdrawalReview.objects.filter(withdrawal=obj).exists()
        )
        extra_context = {
            **(extra_context or {}),
            "can_review": waiting and self.has_review_permission(request),
            "flagged_pairs": flagged_pairs_of(obj.player) if obj is not None else [],
        }
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        def view(fn):
            return self.admin_site.admin_view(fn)

        return [
            path("<int:pk>/review/", view(self.review_view), name="wallets_withdrawal_review"),
            path("tax-statement/", view(self.statement_view), name="wallets_tax_statement"),
            path("tds-report/", view(self.tds_view), name="wallets_tds_report"),
            path("gst-report/", view(self.gst_view), name="wallets_gst_report"),
            *super().get_urls(),
        ]

    def review_view(self, request: HttpRequest, pk: int):
        if request.method != "POST" or not self.has_review_permission(request):
            raise PermissionDenied
        form = ReviewForm(request.POST)
        note = form.cleaned_data["note"] if form.is_valid() else ""
        try:
            review = proposals.withdrawal_review_propose(
                proposed_by=request.user, withdrawal_id=pk, reason=note
            )
        except DomainError as exc:
            self.message_user(request, f"Not reviewed: {exc.message}", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:wallets_withdrawal_change", args=[pk]))
        self.message_user(request, "Reviewed: an approver approves or rejects it now.")
        return HttpResponseRedirect(
            reverse("admin:wallets_withdrawalreview_change", args=[review.pk])
        )

    # --- reports ------------------------------------------------------------------------------

    def _report(self, request, template: str, title: str, **context) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": title,
            **context,
        }
        if "form" in context and context["form"].is_bound and context["form"].is_valid():
            csv_query = request.GET.copy()
            csv_query["format"] = "csv"
            context["csv_query"] = csv_query
        return TemplateResponse(request, f"admin/wallets/withdrawal/{template}", context)

    def _check_view(self, request) -> None:
        if not self.has_view_permission(request):
            raise PermissionDenied

    def statement_view(self, request: HttpRequest):
        """A player's tax statement for one financial year."""
        self._check_view(request)
        form = TaxStatementForm(request.GET or None)
        position = rows = None
        if form.is_bound and form.is_valid():
            player, fy = form.cleaned_data["player"], form.cleaned_data["fy"]
            position = tax_positions(player_ids=[player.pk], fy=fy)[player.pk]
            rows = player.withdrawals.filter(
                requested_at__gte=fy.start, requested_at__lt=fy.end
            ).order_by("requested_at", "pk")
            if request.GET.get("format") == "csv":
                return _statement_csv(player, position, rows)
        return self._report(
            request, "tax_statement.html", "Tax statement", form=form, position=position, rows=rows
        )

    def tds_view(self, request: HttpRequest):
        """TDS withheld in a quarter, line by line, for the quarterly return."""
        self._check_view(request)
        form = QuarterForm(request.GET or None)
        lines = None
        if form.is_bound and form.is_valid():
            fy, quarter = form.cleaned_data["fy"], form.cleaned_data["quarter"]
            start, end = fy.quarter(quarter)
            lines = selectors.tds_filing_lines(start=start, end=end)
            if request.GET.get("format") == "csv":
                return _csv(
                    f"tds-{fy.label}-q{quarter}.csv",
                    ["date", "pan", "player", "kind", "reference", "amount paid",
                     "net winnings", "tds"],
                    ([timezone.localtime(x.date).date().isoformat(), x.pan, x.player, x.kind,
                      x.reference, f"{x.amount_paid:.2f}", f"{x.net_winnings:.2f}",
                      f"{x.tds:.2f}"] for x in lines),
                )  # fmt: skip
        total = sum((x.tds for x in lines or []), tax.ZERO)
        return self._report(
            request, "tds_report.html", "TDS per quarter", form=form, lines=lines, total=total
        )

    def gst_view(self, request: HttpRequest):
        """GST on deposits per month and rate (each deposit at its own recorded rate)."""
        self._check_view(request)
        today = timezone.localdate()
        form = MonthsForm(request.GET or {"start": today.replace(day=1), "end": today})
        months = None
        if form.is_valid():
            first, last = form.cleaned_data["start"], form.cleaned_data["end"]
            start = tax.month_span(first.year, first.month)[0]
            end = tax.month_span(last.year, last.month)[1]
            months = selectors.gst_months(start=start, end=end)
            if request.GET.get("format") == "csv":
                return _csv(
                    f"gst-{first:%Y-%m}-{last:%Y-%m}.csv",
                    ["month", "rate", "deposits", "amount", "gst", "net"],
                    ([f"{m.month:%Y-%m}", f"{m.rate:.2f}", m.deposits, f"{m.amount:.2f}",
                      f"{m.gst:.2f}", f"{m.net:.2f}"] for m in months),
                )  # fmt: skip
        return self._report(
            request, "gst_report.html", "GST per month and rate", form=form, months=months
        )


def _statement_csv(player: Player, position: TaxPosition, rows) -> HttpResponse:
    fy = position.fy
    lines: list[list] = [
        ["opening", "", f"{position.opening:.2f}", "", ""],
        ["deposits", "", f"{position.deposits:.2f}", "", ""],
    ]
    for w in rows:
        lines.append(
            [f"withdrawal {w.reference}", w.status, f"{w.amount.amount:.2f}",
             f"{w.net_winnings:.2f}", f"{w.tds.amount:.2f}"]
        )  # fmt: skip
    end = position.year_end
    if end is not None:
        lines.append(["year end closing", "", f"{end.closing:.2f}", f"{end.net_winnings:.2f}",
                      f"{end.withheld:.2f}"])  # fmt: skip
    lines.append(
        ["total (failed and rejected withdrawals excluded)", "", f"{position.withdrawals:.2f}",
         f"{position.taxed_net_winnings:.2f}", f"{position.tds:.2f}"]
    )  # fmt: skip
    return _csv(
        f"tax-{player.external_id}-{fy.label}.csv".replace(":", "_"),
        ["line", "status", "amount", "net winnings", "tds"],
        lines,
    )


def _of_withdrawal(name: str, description: str = ""):
    """A review's column showing a field of its withdrawal."""

    @admin.display(description=description or name)
    def column(self, obj):
        return getattr(obj.withdrawal, name)

    return column


@admin.register(WithdrawalReview)
class WithdrawalReviewAdmin(ProposalAdmin, ReadOnlyAdmin):
    """An operator's review of a withdrawal, approved or rejected here by an approver."""

    approve_effect = "sends the payout to the gateway now"
    reject_effect = "returns the whole amount to the player's winnings"

    list_display = [
        "id",
        "withdrawal_link",
        "player",
        "amount",
        "tds",
        "kyc",
        "status",
        "proposed_by",
        "decided_by",
    ]
    list_filter = ["status"]
    list_select_related = ["withdrawal__player", "proposed_by", "decided_by"]
    search_fields = ["=withdrawal__reference", "=withdrawal__player__external_id"]
    actions = ["approve", "reject"]
    readonly_fields = [
        "withdrawal_link",
        "player",
        "amount",
        "tds",
        "payout",
        "kyc",
        "tax_position",
        *ProposalAdmin.decision_fields,
    ]
    fields = readonly_fields

    @admin.display(description="withdrawal")
    def withdrawal_link(self, obj):
        return link(obj.withdrawal)

    player = _of_withdrawal("player")
    amount = _of_withdrawal("amount")
    tds = _of_withdrawal("tds", "TDS")
    payout = _of_withdrawal("payout")

    @admin.display(description="KYC now")
    def kyc(self, obj):
        return _kyc_text(obj.withdrawal.player)

    @admin.display(description="tax position (FY of the request)")
    def tax_position(self, obj):
        attach_positions([obj.withdrawal])
        return _position_text(obj.withdrawal.position)


@admin.register(KycRecord)
class KycRecordAdmin(ReadOnlyAdmin):
    list_display = ["id", "player", "pan", "status", "reference", "created_at"]
    list_filter = ["status"]
    list_select_related = ["player"]
    search_fields = ["=pan", "=reference", "=player__external_id"]
    show_full_result_count = False


YEAR_END_AMOUNTS = (
    "opening",
    "deposits",
    "withdrawals",
    "closing",
    "taxed_before",
    "net_winnings",
    "tds",
    "withheld",
    "carry_forward",
)


@admin.register(TdsYearEnd)
class TdsYearEndAdmin(ReadOnlyAdmin):
    list_display = [  # what was due and withheld (the whole computation: its page)
        "fy",
        "player",
        "closing_shown",
        "net_winnings_shown",
        "tds_shown",
        "withheld_shown",
        "shortfall",
        "created_at",
    ]
    list_filter = ["fy"]
    list_select_related = ["player"]
    search_fields = ["=player__external_id"]
    show_full_result_count = False

    readonly_fields = [
        "fy",
        "player",
        "as_of",
        *(f"{name}_shown" for name in YEAR_END_AMOUNTS),
        "shortfall",
        "created_at",
    ]
    fields = readonly_fields
    opening_shown = money_display("opening", currency=CASH)
    deposits_shown = money_display("deposits", currency=CASH)
    withdrawals_shown = money_display("withdrawals", currency=CASH)
    closing_shown = money_display("closing", currency=CASH)
    taxed_before_shown = money_display("taxed_before", currency=CASH)
    net_winnings_shown = money_display("net_winnings", currency=CASH)
    tds_shown = money_display("tds", currency=CASH, description="TDS")
    withheld_shown = money_display("withheld", currency=CASH)
    carry_forward_shown = money_display("carry_forward", currency=CASH)

    @admin.display(description="shortfall")
    def shortfall(self, obj):
        return money_html(obj.shortfall, CASH)
