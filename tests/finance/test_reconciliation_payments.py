"""Reconciliation of money in and out: GST payable, TDS payable, pending withdrawals, stuck
withdrawals and the gateway's statement of paid withdrawals; each planted by raw SQL."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import make_api, staff, tamper
from tests.finance.test_reconciliation import kinds, sql, statement
from tests.wallets.payments import Gateway, approve, deposited, verified, won
from wallets.models import Entry, ReconciliationReport, Withdrawal, WithdrawalReview
from wallets.reconciliation import reconcile_run
from wallets.roles import APPROVER, OPERATOR
from wallets.services.proposals import proposal_decide
from wallets.services.withdrawals import withdrawal_review_propose
from wallets.tax import formulas

pytestmark = pytest.mark.django_db


@pytest.fixture
def gateway(db):
    return Gateway(make_api("payments", name="gateway")[0])


def approved(gateway, player: str, amount: str) -> int:
    """A withdrawal approved by finance (the player's first waits for review)."""
    w = gateway.withdraw(player, amount).json()
    if w["status"] == "requested":
        approve(w["withdrawal_id"])
    return w["withdrawal_id"]


@pytest.fixture
def busy_books(gateway, settings):
    """Deposits with GST and cashback, withdrawals paid, failed, rejected and waiting, and a
    closed year: everything the checks look at."""
    settings.GST_CASHBACK = "bonus"
    for p in ("r1", "r2"):
        deposited(p, "1000.00")
        verified(p)
        won(p, "5000.00")
    paid = approved(gateway, "r1", "2000.00")  # 1,000 of it net winnings: TDS 300
    gateway.paid(paid, "gw-pay-1")
    gateway.failed(approved(gateway, "r1", "500.00"))
    waiting = gateway.withdraw("r2", "700.00").json()["withdrawal_id"]
    rejected = gateway.withdraw("r2", "300.00").json()["withdrawal_id"]
    review = withdrawal_review_propose(
        proposed_by=staff("op", OPERATOR), withdrawal_id=rejected, reason="suspicious"
    )
    proposal_decide(
        model=WithdrawalReview,
        proposal_id=review.pk,
        decided_by=staff("ap", APPROVER),
        approve=False,
    )
    settings.DEPOSIT_MINIMUM = Decimal("0.01")  # a deposit taken before the minimum existed
    gateway.deposit("r1", "0.01")  # too small to carry GST
    call_command(
        "tds_year_end",
        formulas.financial_year_of(timezone.now()).label,
        as_of=timezone.now().isoformat(),
    )
    return {"paid": paid, "waiting": waiting}


def test_busy_books_are_clean(busy_books):
    report = reconcile_run(trigger="command")
    assert report.status == ReconciliationReport.Status.CLEAN, list(report.discrepancies.values())
    assert set(report.stats["checks"]) >= {
        "GST on deposits",
        "TDS withheld",
        "withdrawals pending and stuck",
    }


@given(st.integers(min_value=1, max_value=10**10), st.integers(min_value=0, max_value=9999))
@settings(max_examples=200, deadline=None)
def test_the_checks_sql_rounds_gst_like_the_one_rule(paise, rate_hundredths):
    amount, rate = Decimal(paise) / 100, Decimal(rate_hundredths) / 100
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT round(%s::numeric * %s::numeric / (100 + %s::numeric), 2)", [amount, rate, rate]
        )
        assert cursor.fetchone()[0] == formulas.gst_split(amount, rate_percent=rate).gst


def test_gst_moved_to_the_deposit_bucket(busy_books):
    gst = Entry.objects.filter(account__code="platform:gst_payable").order_by("pk").first()
    deposit = Entry.objects.get(transfer_id=gst.transfer_id, account__code__endswith=":deposit")
    tamper("UPDATE wallets_entry SET amount = amount - 0.01 WHERE id = %s", [gst.pk])
    tamper("UPDATE wallets_entry SET amount = amount + 0.01 WHERE id = %s", [deposit.pk])
    sql("UPDATE wallets_account SET balance = balance + 0.01 WHERE id = %s", [deposit.account_id])

    report = reconcile_run(trigger="command")

    assert kinds(report) == ["gst_deposit_mismatch", "gst_payable_mismatch"]
    found = report.discrepancies.get(kind="gst_deposit_mismatch")
    assert (found.expected, found.actual) == (Decimal("400.00"), Decimal("399.99"))


def test_tds_recorded_but_not_withheld(busy_books):
    sql(
        "UPDATE wallets_withdrawal SET tds = tds + 1, payout = payout - 1 WHERE id = %s",
        [busy_books["paid"]],
    )

    report = reconcile_run(trigger="command")

    assert kinds(report) == ["tds_payable_mismatch", "tds_withdrawal_mismatch"]


def test_a_withdrawal_marked_rejected_without_returning_the_money(busy_books):
    sql("UPDATE wallets_withdrawal SET status = 'rejected' WHERE id = %s", [busy_books["waiting"]])

    report = reconcile_run(trigger="command")

    assert kinds(report) == ["pending_mismatch"]
    found = report.discrepancies.get()
    assert (found.subject, found.expected, found.actual) == ("player:r2:pending", 0, 700)


def test_a_withdrawal_waiting_too_long(busy_books, settings):
    settings.RECONCILE_STUCK_WITHDRAWAL_HOURS = 48
    long_ago = timezone.now() - timedelta(hours=49)
    sql(
        "UPDATE wallets_withdrawal SET requested_at = %s WHERE id = %s",
        [long_ago, busy_books["waiting"]],
    )

    report = reconcile_run(trigger="command")

    assert kinds(report) == ["withdrawal_stuck"]
    assert report.discrepancies.get().details["status"] == "requested"


def test_gateway_statement_matches_paid_withdrawals_by_gateway_reference(busy_books):
    today = timezone.localdate().isoformat()
    paid = Withdrawal.objects.get(pk=busy_books["paid"])
    assert paid.payout.amount == Decimal("1700.00")  # 2,000 less 300 TDS
    deposits = [
        f"{t.reference},{-e.amount.amount:.2f},{today},deposit"
        for e in Entry.objects.filter(
            account__code="platform:gateway_clearing", transfer__kind="deposit"
        ).select_related("transfer")
        for t in [e.transfer]
    ]
    statement(*deposits, f"gw-pay-1,1700.00,{today},withdrawal")

    assert reconcile_run(trigger="command").status == "clean"

    statement(
        *deposits, f"gw-pay-1,2000.00,{today},withdrawal", f"gw-x,5.00,{today},withdrawal", name="b"
    )
    report = reconcile_run(trigger="command")
    found = {(d.kind, d.subject) for d in report.discrepancies.all()}
    assert found == {
        ("gateway_amount_mismatch", "withdrawal gw-pay-1"),
        ("gateway_missing_in_ledger", "withdrawal gw-x"),
    }


def test_a_paid_withdrawal_missing_from_the_statement(busy_books):
    today = timezone.localdate().isoformat()
    statement(f"gw-nothing,1.00,{today},deposit")

    report = reconcile_run(trigger="command")

    found = {
        (d.kind, d.subject) for d in report.discrepancies.filter(subject__startswith="withdrawal")
    }
    assert found == {("gateway_missing_in_statement", "withdrawal gw-pay-1")}
