"""Money out in admin: the withdrawal queue (KYC and the year's tax position beside each
request), its reviews (maker-checker: `ProposalAdmin`, `proposal_decide`), KYC records and TDS
year ends. The tax reports live under the queue's URLs (`tax_reports.py`)."""

from __future__ import annotations

from collections.abc import Iterable

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html

from rummy_ledger.errors import DomainError
from wallets import selectors
from wallets.admin.base import ReadOnlyAdmin, link, money_display, money_html
from wallets.admin.proposals import ProposalAdmin
from wallets.admin.tax_reports import tax_report_urls
from wallets.models import (
    CASH,
    KycRecord,
    Player,
    ProposalStatus,
    TdsYearEnd,
    Withdrawal,
    WithdrawalReview,
)
from wallets.money.formatting import money
from wallets.services.flows import flagged_pairs_of
from wallets.services.withdrawals import withdrawal_review_propose
from wallets.tax import formulas
from wallets.tax.tds import TaxPosition, tax_positions

TAX_POSITION = "tax position (FY of the request)"


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


def positions_of(withdrawals: Iterable[Withdrawal]) -> dict[int, TaxPosition]:
    """Each withdrawal's (by pk) player's position in the year of its request: a few grouped
    queries per year shown, however many rows."""
    by_year: dict[str, list[Withdrawal]] = {}
    for w in withdrawals:
        by_year.setdefault(formulas.financial_year_of(w.requested_at).label, []).append(w)
    found: dict[int, TaxPosition] = {}
    for label, rows in by_year.items():
        positions = tax_positions(
            player_ids=[w.player_id for w in rows], fy=formulas.financial_year(label)
        )
        found.update({w.pk: positions[w.player_id] for w in rows})
    return found


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


def _brief_text(position: TaxPosition) -> str:
    """The list's narrower column: what the year's withdrawals were taxed (all: the page)."""
    return (
        f"FY {position.fy.label}: net winnings taxed {money(position.taxed_net_winnings)}, "
        f"TDS {money(position.tds)}"
    )


TAX_BRIEF = "tax (FY of the request)"
# The columns that show a withdrawal's tax position: description, text of a position
POSITION_COLUMNS = {
    "tax_position": (TAX_POSITION, _position_text),
    "tax_brief": (TAX_BRIEF, _brief_text),
}


class PositionedChangeList(ChangeList):
    """The page's tax positions are read once (`positions_of`) and shown by their own columns."""

    def get_results(self, request):
        super().get_results(request)
        positions = positions_of(self.result_list)

        def column(name: str):
            description, text = POSITION_COLUMNS[name]

            @admin.display(description=description)
            def shown(obj):
                return text(positions[obj.pk])

            shown.__name__ = name  # the column's CSS class, as the admin method's
            return shown

        self.list_display = [
            column(name) if name in POSITION_COLUMNS else name for name in self.list_display
        ]


class ReviewForm(forms.Form):
    note = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="what you checked (the player, the KYC, the bank account, the tax position)",
    )


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
        "from_deposit_shown",
        "net_winnings_shown",
        "taxed_net_winnings_shown",
        "tds_shown",
        "payout",
        "pan_shown",
        "pan_required_shown",
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

    # true whatever the switch says now: only a withdrawal made with real money off for its
    # player takes from the deposit bucket (`wallets.services.refunds`)
    from_deposit_shown = money_display(
        "from_deposit",
        currency=CASH,
        description="from deposit (only with real money off for the player)",
    )
    net_winnings_shown = money_display("net_winnings", currency=CASH, description="net winnings")
    taxed_net_winnings_shown = money_display(
        "taxed_net_winnings", currency=CASH, description="net winnings taxed now"
    )
    tds_shown = money_display("tds", description="TDS")

    @admin.display(description="PAN when requested")
    def pan_shown(self, obj):
        return obj.pan

    @admin.display(description="PAN required")
    def pan_required_shown(self, obj):
        if obj.pan_required:
            return "yes: the player needs a verified PAN (KYC)"
        return "no: a refund with real money off whose net winnings are <= 0 (no TDS)"

    def get_changelist(self, request, **kwargs):
        return PositionedChangeList

    @admin.display(description="KYC now")
    def kyc(self, obj):
        return _kyc_text(obj.player)

    @admin.display(description=TAX_POSITION)
    def tax_position(self, obj):
        return _position_text(positions_of([obj])[obj.pk])

    @admin.display(description=TAX_BRIEF)
    def tax_brief(self, obj):
        return _brief_text(positions_of([obj])[obj.pk])

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
            *tax_report_urls(self),
            *super().get_urls(),
        ]

    def review_view(self, request: HttpRequest, pk: int):
        if request.method != "POST" or not self.has_review_permission(request):
            raise PermissionDenied
        form = ReviewForm(request.POST)
        note = form.cleaned_data["note"] if form.is_valid() else ""
        try:
            review = withdrawal_review_propose(
                proposed_by=request.user, withdrawal_id=pk, reason=note
            )
        except DomainError as exc:
            self.message_user(request, f"Not reviewed: {exc.message}", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:wallets_withdrawal_change", args=[pk]))
        self.message_user(request, "Reviewed: an approver approves or rejects it now.")
        return HttpResponseRedirect(
            reverse("admin:wallets_withdrawalreview_change", args=[review.pk])
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

    @admin.display(description=TAX_POSITION)
    def tax_position(self, obj):
        return _position_text(positions_of([obj.withdrawal])[obj.withdrawal_id])


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
