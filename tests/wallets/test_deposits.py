"""Deposits with GST (Rule 31B): one transfer of three legs, the GST cashback, and deposits
stored before GST answered as they were."""

from decimal import Decimal

import pytest
from django.db.models import Sum
from djmoney.money import Money

from rummy_ledger.api.models import ApiClient
from tests.wallets.invariants import ledger_violations
from wallets.models import CASH, Entry, GatewayDeposit, Player, Transfer
from wallets.services.accounts import platform_accounts, player_accounts
from wallets.services.players import player_get_or_create
from wallets.services.transfers import Leg, transfer_post

pytestmark = pytest.mark.django_db


def legs(transfer_id: int) -> dict[str, str]:
    entries = Entry.objects.filter(transfer_id=transfer_id).select_related("account")
    return {e.account.code: f"{e.amount.amount:.2f}" for e in entries}


@pytest.mark.parametrize(
    ("amount", "credited", "gst"), [("1000.00", "714.29", "285.71"), ("100.00", "71.43", "28.57")]
)
def test_a_deposit_is_one_transfer_split_into_credit_and_gst(gateway, amount, credited, gst):
    response = gateway.deposit("p1", amount, reference="gw-1")

    body = response.json()
    assert response.status_code == 201
    assert (body["amount"], body["credited"], body["gst"]) == (amount, credited, gst)
    assert body["gst_rate"] == "40.00"  # in force since 22 September 2025
    assert legs(body["transfer_id"]) == {
        "platform:gateway_clearing": f"-{amount}",
        "player:p1:deposit": credited,
        "platform:gst_payable": gst,
    }
    assert body["balances"]["bonus"]["amount"] == "0.00"  # cashback is off by default
    assert Transfer.objects.count() == 1


@pytest.mark.parametrize("amount", ["0.01", "0.02", "0.99"])
def test_a_deposit_under_the_minimum_is_refused_and_writes_nothing(gateway, amount):
    response = gateway.deposit("p1", amount)

    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "deposit_below_minimum"
    assert error["details"] == {"amount": amount, "minimum": "1.00"}
    assert not Transfer.objects.exists() and not Player.objects.exists()


def test_the_minimum_deposit_carries_gst(gateway):
    body = gateway.deposit("p1", "1.00").json()
    assert (body["gst"], body["credited"]) == ("0.29", "0.71")  # 40 % GST


def test_a_deposit_too_small_to_carry_gst_has_no_gst_leg(gateway, settings):
    settings.DEPOSIT_MINIMUM = Decimal("0.01")  # below the default: taken, without GST
    body = gateway.deposit("p1", "0.01").json()
    assert (body["gst"], body["credited"]) == ("0.00", "0.01")
    assert "platform:gst_payable" not in legs(body["transfer_id"])


def test_gst_cashback_credits_the_gst_as_bonus_once(gateway, settings):
    settings.GST_CASHBACK = "bonus"

    first = gateway.deposit("p1", "1000.00", reference="gw-1")
    again = gateway.deposit("p1", "1000.00", reference="gw-1")

    assert first.json()["balances"]["bonus"]["amount"] == "285.71"
    assert again.status_code == 200 and again.json()["balances"]["bonus"]["amount"] == "285.71"
    bonus = Transfer.objects.get(kind="bonus")
    assert legs(bonus.pk) == {"platform:promotions": "-285.71", "player:p1:bonus": "285.71"}
    assert ledger_violations() == []


def test_a_deposit_stored_before_gst_keeps_its_shape(gateway):
    # given: a deposit as the ledger stored it before GST (the whole amount credited)
    player = player_get_or_create(external_id="p1")
    clearing = platform_accounts()["gateway_clearing"]
    old = transfer_post(
        kind="deposit",
        reference="gw-old",
        idempotency_key="deposit:gw-old",
        legs=[
            Leg(clearing.pk, -Money("500.00", CASH)),
            Leg(player_accounts(player=player)["deposit"].pk, Money("500.00", CASH)),
        ],
    )

    # (its owner as migration 0010 traced it: the only payments client)
    GatewayDeposit.objects.create(
        reference="gw-old",
        client=ApiClient.objects.get(name="gateway"),
        transfer_id=old.transfer_id,
    )

    # when: the gateway sends it again, after the upgrade
    again = gateway.deposit("p1", "500.00", reference="gw-old")
    other = gateway.deposit("p1", "600.00", reference="gw-old")
    elsewhere = gateway.deposit("p2", "500.00", reference="gw-old")

    # then: it is the same deposit, answered as it was stored; nothing else is posted
    assert again.status_code == 200
    body = again.json()
    assert (body["transfer_id"], body["gst"], body["credited"]) == (
        old.transfer_id,
        "0.00",
        "500.00",
    )
    for conflict in (other, elsewhere):
        assert conflict.status_code == 409
        assert conflict.json()["error"]["code"] == "reference_conflict"
    assert Transfer.objects.count() == 1
    gst = Entry.objects.filter(account__code="platform:gst_payable").aggregate(s=Sum("amount"))
    assert gst["s"] is None


def test_a_deposit_refused_for_its_amount_writes_nothing(gateway):
    response = gateway.deposit("p1", "0.001")
    assert response.status_code == 400
    assert not Transfer.objects.exists() and Decimal(0) == Entry.objects.count()
