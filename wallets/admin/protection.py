"""Bonus and player protection in admin: bonus grants (maker-checker), bonus lots, and the
history of deposit limits, self-exclusions and regions. Everything but a grant's proposal is
read-only: limits and exclusions are the player's (through the payment gateway), and no one
here can lift a self-exclusion early. The player's page shows them (`PlayerAdmin`)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.contrib import admin
from django.utils import timezone
from django.utils.html import format_html
from djmoney.money import Money

from wallets.admin.base import (
    NoDeleteAdmin,
    PlainDecimalField,
    ReadOnlyAdmin,
    ReadOnlyInline,
    link,
    money_display,
)
from wallets.admin.proposals import ProposalAdmin, ProposalForm
from wallets.models import CASH, BonusGrant, BonusLot, ProtectionChange
from wallets.money.formatting import ist, money
from wallets.services.bonuses import bonus_grant_propose
from wallets.services.protection import PERMANENT, protection_of


class BonusLotInline(ReadOnlyInline):
    model = BonusLot
    fields = ["source", "amount_shown", "remaining_shown", "granted_at", "expires_at"]
    readonly_fields = fields
    ordering = ["-expires_at"]
    verbose_name_plural = "bonus lots (the bonus bucket is their remaining; used earliest first)"

    amount_shown = money_display("amount", currency=CASH, description="amount")
    remaining_shown = money_display("remaining", currency=CASH, description="remaining")


def value_shown(value: str) -> str:
    """A change's value as staff read it: a limit in rupees, an exclusion's end in IST."""
    if not value:
        return "-"
    if value == PERMANENT or value.isalpha():  # permanent, a region code
        return value
    if "T" in value:
        return ist(datetime.fromisoformat(value))
    return money(Decimal(value), CASH)


def _limit(limit: Decimal | None) -> str:
    return "none" if limit is None else money(limit, CASH)


class ProtectionChangeShown:
    """Columns of a protection change with readable values (for the inline and the list)."""

    @admin.display(description="old value")
    def old_shown(self, obj):
        return value_shown(obj.old_value)

    @admin.display(description="new value")
    def new_shown(self, obj):
        return value_shown(obj.new_value)


class ProtectionChangeInline(ProtectionChangeShown, ReadOnlyInline):
    model = ProtectionChange
    fields = ["created_at", "kind", "old_shown", "new_shown", "effective_at", "changed_by"]
    readonly_fields = fields
    ordering = ["-pk"]
    verbose_name_plural = "protection history (deposit limits, self-exclusion, region)"


def protection_summary(player) -> str:
    """The player's limits and self-exclusion now, for their page."""
    now = timezone.now()
    state = protection_of(player=player, now=now)
    limits = f"daily {_limit(state.daily_limit)}, monthly {_limit(state.monthly_limit)}"
    pending = "".join(
        f"; {p.kind.replace('_', ' ')} {_limit(p.limit)} from {ist(p.effective_at)}"
        for p in state.pending
    )
    if state.excluded_permanently:
        excluded = "self-excluded permanently"
    elif state.excluded_at(now):
        excluded = f"self-excluded until {ist(state.excluded_until)}"
    else:
        excluded = "not self-excluded"
    return format_html("deposit limits: {}{} · {}", limits, pending, excluded)


class BonusGrantForm(ProposalForm):
    amount_value = PlainDecimalField(
        label="Amount (₹)", max_digits=18, decimal_places=2, min_value=Decimal("0.01")
    )

    class Meta:
        model = BonusGrant
        fields = ["player", "reason"]

    def check(self, data: dict) -> None:
        """Nothing to check before approval: any positive amount may be granted."""


@admin.register(BonusGrant)
class BonusGrantAdmin(ProposalAdmin, NoDeleteAdmin):
    approve_effect = "credits the bonus from promotions now, expiring after the usual period"
    list_display = ["id", "player", "amount_shown", "status", "proposed_by", "decided_by"]
    list_filter = ["status"]
    list_select_related = ["player", "proposed_by", "decided_by"]
    autocomplete_fields = ["player"]
    search_fields = ["player__external_id"]
    actions = ["approve", "reject"]
    form = BonusGrantForm
    readonly_fields = ["player", "amount_shown", *ProposalAdmin.decision_fields, "transfer_link"]

    amount_shown = money_display("amount", description="amount")

    add_fields = ["player", "amount_value", "reason"]

    def propose(self, request, data):
        return bonus_grant_propose(
            proposed_by=request.user,
            player=data["player"],
            amount=Money(data["amount_value"], CASH),
            reason=data["reason"],
        )

    @admin.display(description="transfer")
    def transfer_link(self, obj):
        return link(obj.transfer) if obj.transfer_id else "-"


@admin.register(ProtectionChange)
class ProtectionChangeAdmin(ProtectionChangeShown, ReadOnlyAdmin):
    list_display = [
        "created_at",
        "player",
        "kind",
        "old_shown",
        "new_shown",
        "effective_at",
        "changed_by",
    ]
    list_filter = ["kind"]
    list_select_related = ["player"]
    search_fields = ["player__external_id"]
    ordering = ["-pk"]
