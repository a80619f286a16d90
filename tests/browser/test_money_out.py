"""Money out, done as it is done, in a real browser and over real HTTP: a
player's first withdrawal requested by the payment gateway, reviewed by an operator on the
withdrawal's page, approved by an approver on the review's page, then reported paid."""

from __future__ import annotations

import json
import urllib.request
import uuid
from decimal import Decimal

import pytest

from rummy_ledger.api.keys import api_client_create
from tests.browser.test_finance_paths import QUICK_MS
from tests.wallets.payments import won
from wallets.models import Withdrawal, WithdrawalReview

pytestmark = pytest.mark.django_db(transaction=True)


def call(base_url: str, key: str, path: str, body: dict) -> tuple[int, dict]:
    """The payment gateway: one POST over HTTP to the live server."""
    request = urllib.request.Request(
        f"{base_url}/api/v1/{path}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Authorization": f"Api-Key {key}",
            "Content-Type": "application/json",
            "Idempotency-Key": uuid.uuid4().hex,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def test_first_withdrawal_reviewed_approved_and_paid(login, live_server):
    _, key = api_client_create(name="payment-gateway", scopes=["payments"])
    won("p1", "2000.00")  # winnings from a game
    status, _ = call(live_server.url, key, "players/p1/kyc", {
        "pan": "ABCDE1234F", "status": "verified", "reference": "kyc-p1"
    })  # fmt: skip
    assert status == 201

    # the gateway asks: a first withdrawal waits for finance
    status, body = call(live_server.url, key, "players/p1/withdrawals", {
        "amount": "1500.00", "reference": "wd-p1-1"
    })  # fmt: skip
    assert status == 201, body
    assert (body["status"], body["needs_approval"]) == ("requested", True)
    withdrawal = Withdrawal.objects.get(pk=body["withdrawal_id"])

    # an operator finds it from the home page and reviews it on its page
    operator = login("operator")
    operator.page.click("#dashboard a:text-is('Withdrawals to review')")
    operator.shot("withdrawals-to-review")
    operator.page.click(f"#result_list a:text-is('{withdrawal.pk}')")
    operator.shot("withdrawal-review")
    operator.page.fill("#review textarea", "PAN verified, bank account matches")
    with operator.page.expect_navigation(timeout=QUICK_MS):
        operator.page.click("#review button:text-is('Review')")
    operator.shot("withdrawal-reviewed")
    assert "Reviewed" in operator.messages()
    review = WithdrawalReview.objects.get(withdrawal=withdrawal)
    assert (review.status, review.proposed_by, review.reason) == (
        "proposed", operator.user, "PAN verified, bank account matches"
    )  # fmt: skip

    # an approver finds the review from the home page and approves it on its page
    approver = login("approver")
    approver.page.click("#dashboard a:text-is('Withdrawal reviews to approve')")
    approver.page.click(f"#result_list a:text-is('{review.pk}')")
    approver.shot("withdrawal-review-approve")
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("withdrawal-approved")
    assert f"#{review.pk} approved" in approver.messages()
    withdrawal.refresh_from_db()
    assert withdrawal.status == "approved" and withdrawal.approval_transfer_id is not None

    # the gateway pays it and says so
    status, body = call(live_server.url, key, f"withdrawals/{withdrawal.pk}/paid", {
        "gateway_reference": "gw-pay-p1"
    })  # fmt: skip

    assert status == 200, body
    assert body["status"] == "paid"
    withdrawal.refresh_from_db()
    assert (withdrawal.status, withdrawal.gateway_reference) == ("paid", "gw-pay-p1")
    assert withdrawal.payout.amount == Decimal("1500.00") - withdrawal.tds.amount
