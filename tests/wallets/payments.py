"""Builders for the money-in-and-out tests: KYC, wins and losses, the REST calls of the
payment gateway, and moving test history into an earlier financial year."""

from __future__ import annotations

import itertools
import uuid
from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import connection
from djmoney.money import Money

from tests.builders import deposit_for_credit, move, staff
from wallets.models import CASH, Player, Transfer, Withdrawal, WithdrawalReview
from wallets.months import Month
from wallets.roles import APPROVER, OPERATOR
from wallets.services.accounts import platform_accounts, player_accounts
from wallets.services.deposits import deposit_register
from wallets.services.kyc import kyc_report
from wallets.services.partitions import entry_partition_ensure
from wallets.services.players import player_get_or_create
from wallets.services.proposals import proposal_decide
from wallets.services.withdrawals import withdrawal_review_propose
from wallets.tax.gst_rates import gst_rate_now

_pans = itertools.count(1)
_keys = itertools.count(1)


def a_pan() -> str:
    """A fresh well-formed PAN."""
    return f"ABCDE{next(_pans):04d}F"


def verified(external_id: str, pan: str | None = None) -> Player:
    """A player (registered if new) with a verified PAN."""
    pan = pan or a_pan()
    kyc_report(
        player_external_id=external_id, pan=pan, status="verified", reference=f"kyc-{uuid.uuid4()}"
    )
    return Player.objects.get(external_id=external_id)


def deposited(external_id: str, credited: str) -> int:
    """A GST-bearing deposit that credits exactly `credited`; returns its transfer id."""
    return deposit_register(
        player_external_id=external_id,
        amount=Money(deposit_for_credit(Decimal(credited), rate_percent=gst_rate_now()), CASH),
        reference=f"dep-{uuid.uuid4()}",
    ).transfer_id


def percent(n: int, of: Decimal) -> Decimal:
    """n % of an amount, to the paisa (a share of a balance to lose or withdraw)."""
    return (of * n / 100).quantize(Decimal("0.01"))


def won(external_id: str, amount: str) -> int:
    """Winnings from a game (here simply from a platform account); returns the transfer id."""
    player = player_get_or_create(external_id=external_id)
    source = platform_accounts()["adjustments"]
    key = f"won-{next(_keys)}-{uuid.uuid4().hex[:8]}"
    return move(
        source, player_accounts(player=player)["winnings"], amount, key, "settlement"
    ).transfer_id


def lost(external_id: str, amount: str, bucket: str = "deposit") -> int:
    """Money lost in a game; returns the transfer id."""
    player = player_get_or_create(external_id=external_id)
    sink = platform_accounts()["fee_revenue"]
    key = f"lost-{next(_keys)}-{uuid.uuid4().hex[:8]}"
    return move(player_accounts(player=player)[bucket], sink, amount, key, "entry").transfer_id


def backdate(when: datetime, *, transfers=(), withdrawals=()) -> None:
    """Move transfers (and their entries) and withdrawals to an earlier moment, as if they had
    happened then. Ledger rows are append-only: the guard triggers are off for these updates
    only (`session_replication_role`, a superuser's setting; the test database's user is one).
    The month moved to gets its entries' partition, as the migration gives a ledger's history."""
    entry_partition_ensure(Month.of(when))
    ids = list(transfers)
    for w in Withdrawal.objects.filter(pk__in=list(withdrawals)):
        ids += [
            t for t in (w.request_transfer_id, w.approval_transfer_id, w.return_transfer_id) if t
        ]
    ids += list(Transfer.objects.filter(reverses_id__in=ids).values_list("pk", flat=True))
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        try:
            cursor.execute(
                "UPDATE wallets_transfer SET created_at = %s WHERE id = ANY(%s)", [when, ids]
            )
            cursor.execute(
                "UPDATE wallets_entry SET created_at = %s WHERE transfer_id = ANY(%s)", [when, ids]
            )
        finally:
            cursor.execute("RESET session_replication_role")
    Withdrawal.objects.filter(pk__in=list(withdrawals)).update(requested_at=when)


class Gateway:
    """The payment gateway over the REST API (scope `payments`)."""

    def __init__(self, api):
        self.api = api

    def post(self, path: str, body: dict, key: str | None = None):
        return self.api.post(
            f"/api/v1/{path}", body, format="json", HTTP_IDEMPOTENCY_KEY=key or uuid.uuid4().hex
        )

    def put(self, path: str, body: dict):
        return self.api.put(f"/api/v1/{path}", body, format="json")

    def deposit(self, player: str, amount: str, reference: str | None = None, **extra):
        body = {"amount": amount, "reference": reference or f"dep-{uuid.uuid4()}", **extra}
        return self.post(f"players/{player}/deposits", body)

    def kyc(self, player: str, pan: str, status: str = "verified", reference: str | None = None):
        body = {"pan": pan, "status": status, "reference": reference or f"kyc-{uuid.uuid4()}"}
        return self.post(f"players/{player}/kyc", body)

    def withdraw(self, player: str, amount, reference: str | None = None, key: str | None = None):
        body = {"amount": amount, "reference": reference or f"wd-{uuid.uuid4()}"}
        return self.post(f"players/{player}/withdrawals", body, key=key)

    def paid(self, withdrawal_id: int, gateway_reference: str):
        return self.post(
            f"withdrawals/{withdrawal_id}/paid", {"gateway_reference": gateway_reference}
        )

    def failed(self, withdrawal_id: int, reason: str = "bank account closed"):
        return self.post(f"withdrawals/{withdrawal_id}/failed", {"reason": reason})

    def tax(self, player: str, fy: str):
        return self.api.get(f"/api/v1/players/{player}/tax/{fy}")


def finance_staff() -> tuple:
    """An operator and an approver (the same two for the whole test)."""
    found = {u.username: u for u in User.objects.filter(username__in=["fin-op", "fin-ap"])}
    operator = found.get("fin-op") or staff("fin-op", OPERATOR)
    approver = found.get("fin-ap") or staff("fin-ap", APPROVER)
    return operator, approver


def approve(withdrawal_id: int, operator=None, approver=None) -> Withdrawal:
    """Finance approves a waiting withdrawal: an operator reviews it, an approver decides."""
    if operator is None or approver is None:
        operator, approver = finance_staff()
    review = withdrawal_review_propose(
        proposed_by=operator, withdrawal_id=withdrawal_id, reason="KYC and bank account checked"
    )
    proposal_decide(
        model=WithdrawalReview, proposal_id=review.pk, decided_by=approver, approve=True
    )
    return Withdrawal.objects.get(pk=withdrawal_id)
