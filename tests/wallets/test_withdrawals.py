"""Withdrawals over REST: TDS withheld at request (Rule 133), the approval queue, the gateway's
result, and every refusal (a 4xx in the envelope, nothing moved)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import Sum
from djmoney.money import Money

from tests.builders import make_api, staff, template
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import Gateway, a_pan, approve, backdate, lost, verified, won
from wallets.errors import (
    AlreadyDecided,
    KycRequired,
    PermissionRefused,
    ProposalInvalid,
    SelfApproval,
)
from wallets.models import Entry, Player, Transfer, Withdrawal, WithdrawalReview
from wallets.roles import APPROVER, OPERATOR
from wallets.services.adjustments import adjustment_propose
from wallets.services.proposals import proposal_decide
from wallets.services.transfers import ledger_now
from wallets.services.withdrawals import withdrawal_review_propose
from wallets.tax import formulas

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.fixture
def finance(db):
    return staff("op", OPERATOR), staff("ap", APPROVER)


def balances(gateway, player: str) -> dict:
    wallet = gateway.api.get(f"/api/v1/players/{player}/wallet").json()["balances"]
    return {bucket: value["amount"] for bucket, value in wallet.items()}


def platform(code: str) -> Decimal:
    total = Entry.objects.filter(account__code=f"platform:{code}").aggregate(s=Sum("amount"))["s"]
    return total or D("0.00")


def a_winner(player="w1", winnings="2000.00"):
    verified(player)
    won(player, winnings)


def test_rules_worked_example_over_rest(gateway, finance):
    # given: 3,000 at the start of the financial year, then 7,000 credited by deposits
    fy = formulas.financial_year_of(ledger_now())
    backdate(fy.start - timedelta(days=3), transfers=[won("w1", "3000.00")])
    assert gateway.deposit("w1", "9800.00").json()["credited"] == "7000.00"
    lost("w1", "7000.00")  # the deposits played ...
    won("w1", "9000.00")  # ... and won: 12,000 of winnings
    assert gateway.kyc("w1", "ABCDE1234F").status_code == 201

    # when: withdraw 5,000, then 7,000
    first = gateway.withdraw("w1", "5000.00")
    second = gateway.withdraw("w1", "7000.00")

    # then: no TDS on the first; net winnings 2,000 and TDS 600 on the second, 6,400 paid out
    assert first.status_code == 201, first.json()
    body = first.json()
    assert (body["net_winnings"], body["tds"], body["payout"]) == ("-5000.00", "0.00", "5000.00")
    assert body["status"] == "requested" and body["needs_approval"]  # a first withdrawal waits
    body = second.json()
    assert (body["net_winnings"], body["tds"], body["payout"]) == ("2000.00", "600.00", "6400.00")
    assert body["balances"]["winnings"]["amount"] == "0.00"
    assert body["balances"]["pending"]["amount"] == "12000.00"
    statement = gateway.tax("w1", fy.label).json()
    assert {k: statement[k] for k in ("opening", "deposits", "withdrawals", "tds")} == {
        "opening": "3000.00",
        "deposits": "7000.00",
        "withdrawals": "12000.00",
        "tds": "600.00",
    }
    assert statement["net_winnings"] == "2000.00" and statement["year_end"] is None

    # and the approvals move the payouts to the gateway and the TDS to TDS payable
    for w in (first.json(), second.json()):
        assert approve(w["withdrawal_id"], *finance).status == "approved"
    assert platform("gateway_clearing") == D("-9800.00") + D("5000.00") + D("6400.00")
    assert platform("tds_payable") == D("600.00")
    assert balances(gateway, "w1")["pending"] == "0.00"
    assert ledger_violations() == []


def test_small_withdrawal_after_an_approved_one_is_approved_at_once(gateway, finance, settings):
    settings.WITHDRAWAL_AUTO_APPROVE_MAX = D("1000.00")
    a_winner(winnings="5000.00")
    approve(gateway.withdraw("w1", "100.00").json()["withdrawal_id"], *finance)

    small = gateway.withdraw("w1", "1000.00").json()
    large = gateway.withdraw("w1", "1000.01").json()

    assert (small["status"], small["needs_approval"]) == ("approved", False)
    assert (large["status"], large["needs_approval"]) == ("requested", True)
    assert large["balances"]["pending"]["amount"] == "1000.01"  # the large one waits there
    # nothing deposited: every withdrawal is net winnings (1000.01 x 30 % = 300.003 -> 300.00)
    assert (small["tds"], large["tds"]) == ("300.00", "300.00")
    assert platform("tds_payable") == D("30.00") + D("300.00")  # the large one's is not yet


def test_paid_is_final_and_idempotent(gateway, finance):
    a_winner()
    w = approve(gateway.withdraw("w1", "1000.00").json()["withdrawal_id"], *finance)

    paid = gateway.paid(w.pk, "gw-pay-1")
    again = gateway.paid(w.pk, "gw-pay-1")
    other = gateway.paid(w.pk, "gw-pay-2")
    failed = gateway.failed(w.pk)

    assert paid.status_code == again.status_code == 200
    assert paid.json()["status"] == "paid" and paid.json()["gateway_reference"] == "gw-pay-1"
    assert again.json() == paid.json()
    for refused in (other, failed):
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "withdrawal_state"
    assert Withdrawal.objects.get(pk=w.pk).gateway_reference == "gw-pay-1"


def test_failed_returns_the_whole_amount_and_the_tds_exactly(gateway, finance):
    a_winner()
    fy = formulas.financial_year_of(ledger_now()).label
    w = approve(gateway.withdraw("w1", "1000.00").json()["withdrawal_id"], *finance)
    assert (w.tds.amount, platform("tds_payable")) == (D("300.00"), D("300.00"))
    before_tax = gateway.tax("w1", fy).json()

    failed = gateway.failed(w.pk, "account closed")
    again = gateway.failed(w.pk, "account closed")
    paid = gateway.paid(w.pk, "gw-late")

    assert failed.status_code == again.status_code == 200
    assert failed.json()["status"] == "failed"
    assert balances(gateway, "w1")["winnings"] == "2000.00"
    assert balances(gateway, "w1")["pending"] == "0.00"
    assert platform("tds_payable") == 0 and platform("gateway_clearing") == 0
    reversal = Transfer.objects.get(reverses_id=w.approval_transfer_id)
    assert reversal.kind == "reversal"
    assert paid.status_code == 409 and paid.json()["error"]["code"] == "withdrawal_state"
    after_tax = gateway.tax("w1", fy).json()
    assert (before_tax["withdrawals"], before_tax["tds"]) == ("1000.00", "300.00")
    assert (after_tax["withdrawals"], after_tax["tds"], after_tax["withdrawal_count"]) == (
        "0.00",
        "0.00",
        0,
    )
    # the next withdrawal is taxed as if the failed one had never been
    retry = gateway.withdraw("w1", "1000.00").json()
    assert (retry["net_winnings"], retry["tds"]) == ("1000.00", "300.00")
    assert ledger_violations() == []


def test_rejected_review_returns_the_money_to_winnings(gateway, finance):
    operator, approver = finance
    a_winner()
    w = gateway.withdraw("w1", "1500.00").json()
    review = withdrawal_review_propose(
        proposed_by=operator, withdrawal_id=w["withdrawal_id"], reason="bank name mismatch"
    )

    proposal_decide(
        model=WithdrawalReview, proposal_id=review.pk, decided_by=approver, approve=False
    )

    assert Withdrawal.objects.get(pk=w["withdrawal_id"]).status == "rejected"
    assert balances(gateway, "w1")["winnings"] == "2000.00"
    assert balances(gateway, "w1")["pending"] == "0.00"
    assert platform("tds_payable") == 0
    assert gateway.paid(w["withdrawal_id"], "gw-x").json()["error"]["code"] == "withdrawal_state"


def test_maker_checker_never_the_same_person_and_a_second_decision_is_refused(gateway, finance):
    operator, approver = finance
    both = staff("both", OPERATOR, APPROVER)
    a_winner()
    w = gateway.withdraw("w1", "1000.00").json()["withdrawal_id"]

    with pytest.raises(PermissionRefused):
        withdrawal_review_propose(proposed_by=approver, withdrawal_id=w, reason="looks fine")
    review = withdrawal_review_propose(proposed_by=both, withdrawal_id=w, reason="checked")
    with pytest.raises(SelfApproval):
        proposal_decide(
            model=WithdrawalReview, proposal_id=review.pk, decided_by=both, approve=True
        )
    with pytest.raises(PermissionRefused):
        proposal_decide(
            model=WithdrawalReview, proposal_id=review.pk, decided_by=operator, approve=True
        )
    assert Withdrawal.objects.get(pk=w).status == "requested"

    # approving twice approves (and posts) once: the second is refused, as is a rejection
    proposal_decide(
        model=WithdrawalReview, proposal_id=review.pk, decided_by=approver, approve=True
    )
    with pytest.raises(AlreadyDecided):
        proposal_decide(
            model=WithdrawalReview, proposal_id=review.pk, decided_by=approver, approve=True
        )
    assert Transfer.objects.filter(idempotency_key=f"withdrawal:{w}:approval").count() == 1
    with pytest.raises(AlreadyDecided):
        proposal_decide(
            model=WithdrawalReview, proposal_id=review.pk, decided_by=approver, approve=False
        )
    assert platform("tds_payable") == D("300.00")


def nothing_moved(gateway, player="w1", winnings="2000.00") -> None:
    assert balances(gateway, player)["winnings"] == winnings
    assert balances(gateway, player)["pending"] == "0.00"
    assert not Withdrawal.objects.exists()
    assert not Transfer.objects.filter(kind="withdrawal").exists()


@pytest.mark.parametrize(
    ("amount", "reason"),
    [
        (500.5, "decimal strings"),
        ("0", "greater than zero"),
        ("-5.00", "greater than zero"),
        ("1.001", "two decimal places"),
        ("lots", "not a decimal"),
        (None, "null"),
    ],
)
def test_bad_amounts_are_400_and_move_nothing(gateway, amount, reason):
    a_winner()
    response = gateway.withdraw("w1", amount)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert reason in str(response.json()["error"]["details"]["amount"])
    nothing_moved(gateway)


def test_refusals_name_the_problem_and_move_nothing(gateway):
    a_winner()
    verified("poor")
    deposit_only = gateway.deposit("poor", "1400.00")
    assert deposit_only.status_code == 201
    won("nokyc", "100.00")

    cases = {
        "unknown_player": gateway.withdraw("nobody", "1.00"),
        "kyc_required": gateway.withdraw("nokyc", "1.00"),
        "insufficient_funds": gateway.withdraw("w1", "2000.01"),
        "deposit money": gateway.withdraw("poor", "1.00"),
    }

    assert cases["unknown_player"].status_code == 404
    assert cases["unknown_player"].json()["error"]["code"] == "unknown_player"
    assert cases["kyc_required"].status_code == 409
    assert cases["kyc_required"].json()["error"]["code"] == "kyc_required"
    short = cases["insufficient_funds"].json()["error"]
    assert cases["insufficient_funds"].status_code == 409 and short["code"] == "insufficient_funds"
    assert "only 2000.00 INR of winnings" in short["message"]
    assert short["details"] == {"bucket": "winnings", "balance": "2000.00", "requested": "2000.01"}
    assert cases["deposit money"].json()["error"]["code"] == "insufficient_funds"
    assert balances(gateway, "poor")["deposit"] == "1000.00"  # deposits are not withdrawable
    nothing_moved(gateway)


def test_a_rejected_kyc_refuses_withdrawals(gateway):
    a_winner()
    current = Player.objects.get(external_id="w1").pan
    assert gateway.kyc("w1", current, "rejected").status_code == 201

    response = gateway.withdraw("w1", "10.00")

    assert response.status_code == 409 and response.json()["error"]["code"] == "kyc_required"
    assert response.json()["error"]["details"]["kyc_status"] == "rejected"
    nothing_moved(gateway)


def test_reference_is_the_natural_key(gateway):
    a_winner()
    first = gateway.withdraw("w1", "100.00", reference="wd-1")
    same = gateway.withdraw("w1", "100.00", reference="wd-1")  # another Idempotency-Key
    other = gateway.withdraw("w1", "200.00", reference="wd-1")
    verified("w2")
    won("w2", "500.00")
    elsewhere = gateway.withdraw("w2", "100.00", reference="wd-1")

    assert first.status_code == 201 and same.status_code == 200
    assert same.json()["withdrawal_id"] == first.json()["withdrawal_id"]
    for conflict in (other, elsewhere):
        assert conflict.status_code == 409
        assert conflict.json()["error"]["code"] == "reference_conflict"
    assert Withdrawal.objects.count() == 1
    assert balances(gateway, "w1")["winnings"] == "1900.00"
    assert balances(gateway, "w2")["winnings"] == "500.00"


def test_idempotency_key_is_optional_and_replays(gateway):
    """Like a deposit's, a withdrawal's reference is its natural key: without the header, a
    repeat is the same withdrawal (one rule for the payments writes)."""
    a_winner()
    body = {"amount": "1.00", "reference": "r"}
    without = [
        gateway.api.post("/api/v1/players/w1/withdrawals", body, format="json") for _ in "12"
    ]
    assert [r.status_code for r in without] == [201, 200]
    assert without[0].json()["withdrawal_id"] == without[1].json()["withdrawal_id"]
    first = gateway.withdraw("w1", "100.00", reference="wd-1", key="k1")
    replay = gateway.withdraw("w1", "100.00", reference="wd-1", key="k1")
    reused = gateway.withdraw("w1", "300.00", reference="wd-2", key="k1")
    assert replay.json() == first.json() and replay["Idempotent-Replayed"] == "true"
    assert reused.status_code == 409 and reused.json()["error"]["code"] == "idempotency_conflict"
    assert Withdrawal.objects.count() == 2


def test_results_for_unknown_or_unapproved_withdrawals_are_refused(gateway):
    a_winner()
    w = gateway.withdraw("w1", "100.00").json()["withdrawal_id"]  # the first: it waits

    unknown = gateway.paid(999999, "gw-1")
    waiting_paid = gateway.paid(w, "gw-1")
    waiting_failed = gateway.failed(w)
    no_reference = gateway.post(f"withdrawals/{w}/paid", {})

    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_withdrawal"
    for refused in (waiting_paid, waiting_failed):
        assert refused.status_code == 409
        assert refused.json()["error"]["details"] == {
            "withdrawal_id": w,
            "status": "requested",
            "wanted": refused.json()["error"]["details"]["wanted"],
        }
    assert no_reference.status_code == 400
    assert Withdrawal.objects.get(pk=w).status == "requested"


def test_a_gateway_reference_names_one_withdrawal(gateway, finance):
    a_winner()
    first = approve(gateway.withdraw("w1", "100.00").json()["withdrawal_id"], *finance)
    second = gateway.withdraw("w1", "100.00").json()["withdrawal_id"]  # approved at once
    assert gateway.paid(first.pk, "gw-1").status_code == 200

    response = gateway.paid(second, "gw-1")

    assert response.status_code == 409 and response.json()["error"]["code"] == "reference_conflict"
    assert Withdrawal.objects.get(pk=second).status == "approved"


def test_pending_money_is_not_spendable(gateway, games_api):
    template("pool", "pool101", entry_fee=D("100.00"), entry_buckets=["winnings", "deposit"])
    a_winner(winnings="150.00")
    verified("w2")
    won("w2", "150.00")
    gateway.withdraw("w1", "100.00")  # 50.00 left in winnings, 100.00 pending

    response = games_api.post(
        "/api/v1/games",
        {"game_id": "g1", "template": "pool", "players": ["w1", "w2"]},
        format="json",
        HTTP_IDEMPOTENCY_KEY="open-g1",
    )

    assert response.status_code == 409
    assert response.json()["error"]["details"]["players"] == ["w1"]
    assert balances(gateway, "w1")["pending"] == "100.00"


def test_a_pan_is_checked_before_anything_is_written(gateway):
    response = gateway.kyc("k1", "ABCD1234F")
    assert response.status_code == 400 and response.json()["error"]["code"] == "pan_invalid"
    assert a_pan() != a_pan()


def test_tax_statement_refusals(gateway, games_api):
    a_winner()
    bad_year = gateway.tax("w1", "2026-28")
    unknown = gateway.tax("nobody", "2026-27")
    wrong_scope = games_api.get("/api/v1/players/w1/tax/2026-27")

    assert bad_year.status_code == 400
    assert bad_year.json()["error"]["code"] == "financial_year_invalid"
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_player"
    assert wrong_scope.status_code == 403


@pytest.mark.parametrize(
    "fy",
    ["9999-00", "0000-01", "0001-02", "1900-01", "2099-00", "२०२६-27", "٢٠٢٦-٢٧", "2026-27\n"],
)
def test_a_financial_year_outside_2000_to_2098_or_not_ascii_is_400(gateway, fy):
    from urllib.parse import quote

    a_winner()
    gateway.api.raise_request_exception = False  # a crash is the 500 a real server would send

    response = gateway.api.get(f"/api/v1/players/w1/tax/{quote(fy)}")

    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["code"] == "financial_year_invalid"
    for edge in ("2000-01", "2098-99"):
        assert gateway.tax("w1", edge).json()["fy"] == edge


def test_a_withdrawal_belongs_to_the_client_that_requested_it(gateway, finance):
    """Another payments client marked a withdrawal failed (the money went back to
    winnings), then the requester's real /paid was refused: paid out and credited back."""
    a_winner()
    rival = Gateway(make_api("payments", name="rival-gateway")[0])
    w = approve(gateway.withdraw("w1", "1000.00").json()["withdrawal_id"], *finance)
    before = balances(gateway, "w1")

    answers = [
        rival.failed(w.pk, "not mine"),
        rival.paid(w.pk, "gw-rival"),
        rival.failed(10**9, "no such id"),
    ]

    for answer in answers:
        assert answer.status_code == 404, answer.content
        assert answer.json()["error"] == {
            "code": "unknown_withdrawal",
            "message": answer.json()["error"]["message"],
            "details": {},
        }
    # the unknown id and the other client's id read the same: guessing tells nothing
    assert answers[0].json()["error"]["message"] == f"no withdrawal {w.pk}"
    assert Withdrawal.objects.get(pk=w.pk).status == "approved"
    assert balances(gateway, "w1") == before
    # the requester's own result still lands
    paid = gateway.paid(w.pk, "gw-pay-1")
    assert paid.status_code == 200 and paid.json()["status"] == "paid"
    assert balances(gateway, "w1")["winnings"] == "1000.00"
    assert ledger_violations() == []


def test_a_gateway_reference_of_another_clients_withdrawal_is_409_naming_none(gateway, finance):
    a_winner()
    verified("w2")
    won("w2", "2000.00")
    rival = Gateway(make_api("payments", name="rival-gateway")[0])
    theirs = approve(rival.withdraw("w2", "1000.00").json()["withdrawal_id"], *finance)
    assert rival.paid(theirs.pk, "gw-pay-9").status_code == 200
    ours = approve(gateway.withdraw("w1", "1000.00").json()["withdrawal_id"], *finance)

    answer = gateway.paid(ours.pk, "gw-pay-9")

    assert answer.status_code == 409
    assert answer.json()["error"]["details"] == {
        "gateway_reference": "gw-pay-9",
        "withdrawal_id": None,
    }


def test_a_reference_another_client_used_is_409_naming_nothing_of_it(gateway, finance):
    a_winner()
    verified("w2")
    won("w2", "2000.00")
    rival = Gateway(make_api("payments", name="rival-gateway")[0])
    first = gateway.withdraw("w1", "100.00", reference="wd-shared")
    deposit = gateway.deposit("d1", "100.00", reference="dep-shared")
    assert (first.status_code, deposit.status_code) == (201, 201)
    count = (Withdrawal.objects.count(), Transfer.objects.count())

    # the very same request from another client: not a replay of the first
    withdrawal_again = rival.withdraw("w1", "100.00", reference="wd-shared")
    deposit_again = rival.deposit("d1", "100.00", reference="dep-shared")
    deposit_other = rival.deposit("d2", "50.00", reference="dep-shared")

    for answer, reference in (
        (withdrawal_again, "wd-shared"),
        (deposit_again, "dep-shared"),
        (deposit_other, "dep-shared"),
    ):
        assert answer.status_code == 409, answer.content
        error = answer.json()["error"]
        assert (error["code"], error["details"]) == ("reference_conflict", {"reference": reference})
        assert "withdrawal_id" not in answer.content.decode()
        assert "transfer_id" not in answer.content.decode()
    assert (Withdrawal.objects.count(), Transfer.objects.count()) == count
    # the client that made them still gets its replays
    assert gateway.deposit("d1", "100.00", reference="dep-shared").status_code == 200
    assert gateway.withdraw("w1", "100.00", reference="wd-shared").status_code == 200


def test_an_approval_is_refused_when_the_kyc_was_revoked_since_the_request(gateway, finance):
    a_winner()
    w = gateway.withdraw("w1", "100.00").json()["withdrawal_id"]
    gateway.kyc("w1", Player.objects.get(external_id="w1").pan, "rejected")

    with pytest.raises(KycRequired):
        approve(w, *finance)

    assert Withdrawal.objects.get(pk=w).status == "requested"
    assert platform("tds_payable") == 0


def test_the_pending_bucket_is_not_adjusted_by_hand(finance):
    operator, _ = finance
    a_winner()
    with pytest.raises(ProposalInvalid, match="pending withdrawals move only"):
        adjustment_propose(
            proposed_by=operator,
            player=Player.objects.get(external_id="w1"),
            bucket="pending",
            direction="credit",
            amount=Money("1.00", "INR"),
            reason="no",
        )
