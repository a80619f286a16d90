"""Refunds while real money is off for the player (docs/regions-and-real-money.md): a withdrawal
takes the winnings, then the deposit bucket; TDS by Rule 133 over the year's aggregate; no PAN
needed when the net winnings are <= 0; a failed or rejected refund goes back where it came from;
with real money on nothing changes. Bonus lots expire at once when real money goes off."""

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from rummy_ledger.api.keys import api_client_create
from rummy_ledger.dev.demo.simulator import ApiError, Http
from tests.builders import bonus_granted
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import approve, deposited, finance_staff, lost, verified, won
from wallets.models import BonusLot, Transfer, Withdrawal
from wallets.reconciliation import reconcile_run
from wallets.services.bonuses import bonus_expire

D = Decimal


def buckets(gateway, player: str) -> dict[str, str]:
    body = gateway.api.get(f"/api/v1/players/{player}/wallet").json()["balances"]
    return {b: body[b]["amount"] for b in ("deposit", "winnings", "pending", "bonus")}


def parts(body: dict) -> tuple:
    return (body["from_winnings"], body["from_deposit"], body["net_winnings"], body["tds"])


@pytest.mark.django_db(transaction=True)
def test_over_http_a_refund_owes_tds_on_the_years_aggregate(
    live_server, settings
):
    # given: 1,000 deposited (credited) and 1,000 won, while real money was on
    verified("a")
    deposited("a", "1000.00")
    won("a", "1000.00")
    _, key = api_client_create(name="gateway", scopes=["payments"])
    http = Http(live_server.url, key)

    # when: real money goes off; the player takes out 1,000, then the other 1,000
    settings.REAL_MONEY = "off"
    first = http.post("players/a/withdrawals", {"amount": "1000.00", "reference": "wd-a-1"})
    approve(first["withdrawal_id"])  # a first withdrawal waits for finance
    refund = http.post("players/a/withdrawals", {"amount": "1000.00", "reference": "wd-a-2"})

    # then: the first took winnings at TDS 0; the refund took the deposit, and net winnings
    # over the year are 2,000 - 1,000 = 1,000: TDS 300
    assert parts(first) == ("1000.00", "0.00", "0.00", "0.00")
    assert parts(refund) == ("0.00", "1000.00", "1000.00", "300.00")
    assert refund["status"] == "approved" and refund["payout"] == "700.00"
    assert refund["balances"]["deposit"]["amount"] == "0.00"
    with pytest.raises(ApiError) as more:
        http.post("players/a/withdrawals", {"amount": "0.01", "reference": "wd-a-3"})
    assert more.value.status == 409
    assert more.value.body["error"]["details"]["bucket"] == "winnings+deposit"
    assert reconcile_run(trigger="command").status == "clean"
    assert ledger_violations() == []
    # docs/law-india.md walks through these two answers: its figures are these
    for shown, answered in zip(walk_through(), (first, refund), strict=True):
        assert {k: answered[k] for k in shown} == shown


def walk_through() -> list[dict]:
    text = (Path(__file__).resolve().parents[2] / "docs" / "law-india.md").read_text()
    blocks = re.findall(r"```json\n(.*?)\n```", text, re.S)
    return [{k: v for k, v in json.loads(b).items() if k != "..."} for b in blocks]


def test_with_real_money_on_a_withdrawal_takes_winnings_only(gateway):
    verified("a")
    deposited("a", "1000.00")
    won("a", "100.00")

    refused = gateway.withdraw("a", "100.01")
    taken = gateway.withdraw("a", "100.00").json()

    assert refused.status_code == 409
    assert refused.json()["error"]["details"] == {
        "bucket": "winnings",
        "balance": "100.00",
        "requested": "100.01",
    }
    assert (taken["from_winnings"], taken["from_deposit"]) == ("100.00", "0.00")
    assert buckets(gateway, "a")["deposit"] == "1000.00"


def test_a_refund_with_no_net_winnings_needs_no_pan_and_is_approved_without_one(gateway, settings):
    # given: a player who never completed KYC, 1,000 deposited, 200 lost, 50 won
    deposited("n", "1000.00")
    lost("n", "200.00")
    won("n", "50.00")
    settings.REAL_MONEY = "off"

    # when: they take everything out (net winnings 850 - 1,000 < 0)
    body = gateway.withdraw("n", "850.00").json()
    approve(body["withdrawal_id"])
    paid = gateway.paid(body["withdrawal_id"], "gw-n-1")

    # then
    assert parts(body) == ("50.00", "800.00", "-150.00", "0.00")
    assert paid.status_code == 200 and paid.json()["status"] == "paid"
    assert Withdrawal.objects.get().pan == "" and not Withdrawal.objects.get().pan_required
    assert buckets(gateway, "n") == {
        "deposit": "0.00",
        "winnings": "0.00",
        "pending": "0.00",
        "bonus": "0.00",
    }


def test_a_refund_with_net_winnings_needs_kyc(gateway, settings):
    deposited("k", "100.00")
    won("k", "500.00")
    settings.REAL_MONEY = "off"

    refused = gateway.withdraw("k", "600.00")  # net winnings 500
    allowed = gateway.withdraw("k", "100.00")  # winnings first: net 100 - 100 = 0

    assert refused.status_code == 409 and refused.json()["error"]["code"] == "kyc_required"
    assert allowed.status_code == 201 and parts(allowed.json())[3] == "0.00"


@pytest.mark.parametrize("outcome", ["failed", "rejected"])
def test_a_refund_that_fails_or_is_rejected_goes_back_where_it_came_from(
    gateway, settings, outcome
):
    verified("f")
    deposited("f", "1000.00")
    won("f", "300.00")
    settings.REAL_MONEY = "off"
    body = gateway.withdraw("f", "1300.00").json()
    assert (body["from_winnings"], body["from_deposit"]) == ("300.00", "1000.00")

    if outcome == "failed":
        approve(body["withdrawal_id"])
        assert gateway.failed(body["withdrawal_id"]).status_code == 200
    else:
        from wallets.models import WithdrawalReview
        from wallets.services.proposals import proposal_decide
        from wallets.services.withdrawals import withdrawal_review_propose

        operator, approver = finance_staff()
        review = withdrawal_review_propose(
            proposed_by=operator, withdrawal_id=body["withdrawal_id"], reason="bank mismatch"
        )
        proposal_decide(
            model=WithdrawalReview, proposal_id=review.pk, decided_by=approver, approve=False
        )

    assert Withdrawal.objects.get().status == outcome
    assert buckets(gateway, "f") == {
        "deposit": "1000.00",
        "winnings": "300.00",
        "pending": "0.00",
        "bonus": "0.00",
    }
    assert reconcile_run(trigger="command").status == "clean"


def test_restricted_refunds_players_of_a_blocked_region_only(gateway, settings):
    settings.REAL_MONEY = "restricted"
    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset()
    for player, region in (("t", "TN"), ("k", "KA")):
        verified(player)
        assert gateway.deposit(player, "1400.00", region=region).status_code == 201

    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset({"TN"})  # Tamil Nadu blocks it now
    blocked = gateway.withdraw("t", "1000.00")
    open_ = gateway.withdraw("k", "1000.00")

    assert blocked.status_code == 201 and blocked.json()["from_deposit"] == "1000.00"
    assert open_.status_code == 409 and open_.json()["error"]["code"] == "insufficient_funds"


def test_bonus_expires_at_once_when_real_money_goes_off_once_and_visibly(db, settings):
    bonus_granted("b", "75.00")
    bonus_granted("c", "25.00")
    assert bonus_expire() == 0  # real money on: not expired yet

    settings.REAL_MONEY = "off"
    emptied, again = bonus_expire(), bonus_expire()

    assert (emptied, again) == (2, 0)
    assert set(BonusLot.objects.values_list("remaining", flat=True)) == {D("0.00")}
    memos = Transfer.objects.filter(kind="bonus_expiry").values_list("memo", flat=True)
    assert len(memos) == 2 and all("real money is off" in m for m in memos)
    assert ledger_violations() == []
