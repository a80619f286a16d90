"""What a repeat gets, over real HTTP (docs/api.md, `Idempotency-Key`): a replay is the first answer
byte for byte, and a gateway result repeated with other content is a conflict whichever result it
is."""

from __future__ import annotations

import json

import pytest

from tests.builders import HttpApi
from tests.wallets.payments import approve, verified, won
from wallets.models import Transfer, Withdrawal

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def gateway(live_server):
    return HttpApi(live_server.url, "payments", name="gateway").post


def test_a_replay_is_the_first_answer_byte_for_byte(gateway):
    body = {"amount": "128.00", "reference": "gw-1"}

    first = gateway("players/p1/deposits", body, key="k-1")
    replay = gateway("players/p1/deposits", body, key="k-1")

    assert first.status_code == replay.status_code == 201
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.content == first.content
    keys = list(json.loads(first.content))  # the view's order, which jsonb used to sort
    # the view writes player_id first and balances last; jsonb put the shortest key ("gst") first
    assert (keys[0], keys[-1]) == ("player_id", "balances"), keys
    assert Transfer.objects.filter(kind="deposit").count() == 1


def test_a_replayed_refusal_is_the_same_bytes_too(gateway):
    body = {"amount": "0.00", "reference": "gw-zero"}

    first = gateway("players/p1/deposits", body, key="k-2")
    replay = gateway("players/p1/deposits", body, key="k-2")

    assert first.status_code == replay.status_code == 400
    assert replay.content == first.content


def _approved_withdrawal(gateway) -> Withdrawal:
    verified("w1")
    won("w1", "2000.00")
    requested = gateway("players/w1/withdrawals", {"amount": "1000.00", "reference": "wd-1"})
    assert requested.status_code == 201, requested.text
    return approve(requested.json()["withdrawal_id"])


def test_a_repeated_failed_with_another_reason_is_409_like_paid(gateway):
    withdrawal = _approved_withdrawal(gateway)
    failed = f"withdrawals/{withdrawal.pk}/failed"
    assert gateway(failed, {"reason": "account closed"}).status_code == 200
    transfers = Transfer.objects.count()

    again = gateway(failed, {"reason": "account closed"})
    other = gateway(failed, {"reason": "name mismatch"})

    assert again.status_code == 200 and again.json()["failure_reason"] == "account closed"
    assert other.status_code == 409, other.text
    error = other.json()["error"]
    assert error["code"] == "withdrawal_state"
    assert error["details"] == {
        "withdrawal_id": withdrawal.pk,
        "status": "failed",
        "failure_reason": "name mismatch",
    }
    assert Withdrawal.objects.get(pk=withdrawal.pk).failure_reason == "account closed"
    assert Transfer.objects.count() == transfers


def test_a_repeated_paid_with_another_reference_is_409(gateway):
    withdrawal = _approved_withdrawal(gateway)
    paid = f"withdrawals/{withdrawal.pk}/paid"
    assert gateway(paid, {"gateway_reference": "gw-pay-1"}).status_code == 200

    other = gateway(paid, {"gateway_reference": "gw-pay-2"})

    assert other.status_code == 409 and other.json()["error"]["code"] == "withdrawal_state"
    assert Withdrawal.objects.get(pk=withdrawal.pk).gateway_reference == "gw-pay-1"
