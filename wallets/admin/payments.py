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
from wallets import tax
from wallets.admin.base import ReadOnlyAdmin, link
from wallets.admin.proposals import ProposalAdmin
from wallets.admin.tax_reports import tax_report_urls
from wallets.models import KycRecord, Player, TdsYearEnd, Withdrawal, WithdrawalReview
from wallets.services.tax import TaxPosition, tax_positions
from wallets.services.withdrawals import withdrawal_review_propose

TAX_POSITION = "tax position (FY of the request)"


def _position_text(position: TaxPosition | None) -> str:
    if position is None:
        return "-"
    return (
        f"FY {position.fy.label}: opening {position.opening}, deposits {position.deposits}, "
        f"withdrawn {position.withdrawals}, net winnings taxed {position.taxed_net_winnings}, "
        f"TDS {position.tds}"
    )


def _kyc_text(player: Player) -> str:
    return f"{player.kyc_status} {player.pan}".strip()


def positions_of(withdrawals: Iterable[Withdrawal]) -> dict[int, TaxPosition]:
    """Each withdrawal's (by pk) player's position in the year of its request: a few grouped
    queries per year shown, however many rows."""
    by_year: dict[str, list[Withdrawal]] = {}
    for w in withdrawals:
        by_year.setdefault(tax.financial_year_of(w.requested_at).label, []).append(w)
    found: dict[int, TaxPosition] = {}
    for label, rows in by_year.items():
        positions = tax_positions(
            player_ids=[w.player_id for w in rows], fy=tax.financial_year(label)
        )
        found.update({w.pk: positions[w.player_id] for w in rows})
    return found


class PositionedChangeList(ChangeList):
    """The page's tax positions are read once (`positions_of`) and shown by its own column."""

    def get_results(self, request):
        super().get_results(request)
        positions = positions_of(self.result_list)

        @admin.display(description=TAX_POSITION)
        def tax_position(obj):
            return _position_text(positions[obj.pk])

        self.list_display = [
            tax_position if name == "tax_position" else name for name in self.list_display
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
        "needs_approval",
        "kyc",
        "tax_position",
        "review_link",
        "requested_at",
    ]
    list_filter = ["status", "needs_approval"]
    list_select_related = ["player", "review"]
    search_fields = ["=reference", "=gateway_reference", "=player__external_id"]
    show_full_result_count = False
    readonly_fields = [
        "player",
        "reference",
        "status",
        "amount",
        "net_winnings",
        "taxed_net_winnings",
        "tds",
        "payout",
        "pan",
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

    def get_changelist(self, request, **kwargs):
        return PositionedChangeList

    @admin.display(description="KYC now")
    def kyc(self, obj):
        return _kyc_text(obj.player)

    @admin.display(description=TAX_POSITION)
    def tax_position(self, obj):
        return _position_text(positions_of([obj])[obj.pk])

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

    approve_effect = "sends the payout to the gateway now; rejecting returns it to winnings"

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


@admin.register(TdsYearEnd)
class TdsYearEndAdmin(ReadOnlyAdmin):
    list_display = [
        "fy",
        "player",
        "opening",
        "deposits",
        "withdrawals",
        "closing",
        "net_winnings",
        "tds",
        "withheld",
        "shortfall",
        "carry_forward",
        "created_at",
    ]
    list_filter = ["fy"]
    list_select_related = ["player"]
    search_fields = ["=player__external_id"]
    show_full_result_count = False

    @admin.display(description="shortfall")
    def shortfall(self, obj):
        return obj.shortfall
