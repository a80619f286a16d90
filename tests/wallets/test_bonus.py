"""Bonus through the API: where it comes from (sign-up, GST cashback, finance grant), its expiry,
the cap on each entry, the lot that expires first used first, refunds that keep the expiry, the
beat job that returns expired bonus, and bonus that is never withdrawable nor a TDS deposit."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from djmoney.money import Money

from tests.builders import (
    LOSER_80,
    WINNER,
    Server,
    bonus_granted,
    funded_player,
    move,
    res,
    staff,
    template,
)
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import verified
from tournaments.games.queries import game_transfer_ids
from tournaments.models import Game
from wallets.errors import AlreadyDecided, ProposalInvalid
from wallets.models import (
    CASH,
    Account,
    BonusGrant,
    BonusLot,
    ReconciliationReport,
    Reversal,
    Transfer,
)
from wallets.reconciliation import reconcile_run
from wallets.roles import APPROVER, OPERATOR
from wallets.services.accounts import platform_accounts
from wallets.services.adjustments import adjustment_propose
from wallets.services.bonuses import bonus_grant_propose
from wallets.services.proposals import proposal_decide
from wallets.services.reversals import reversal_propose
from wallets.services.transfers import balance
from wallets.tasks import bonus_expiry
from wallets.tax import formulas

pytestmark = pytest.mark.django_db


def bucket(player: str, name: str) -> Decimal:
    return Account.objects.get(code=f"player:{player}:{name}").balance.amount


def promotions() -> Decimal:
    return balance(account=platform_accounts()["promotions"]).amount


def lots(player: str) -> list[tuple[Decimal, Decimal]]:
    rows = BonusLot.objects.filter(player__external_id=player).order_by("pk")
    return [(lot.amount, lot.remaining) for lot in rows]


def expire(player: str, ago: timedelta = timedelta(seconds=1)) -> None:
    BonusLot.objects.filter(player__external_id=player).update(expires_at=timezone.now() - ago)


def reconciled_clean() -> bool:
    report = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND)
    return report.status == ReconciliationReport.Status.CLEAN


def test_gst_cashback_is_a_lot_that_expires_after_the_setting(gateway, settings):
    settings.GST_CASHBACK = "bonus"
    settings.BONUS_EXPIRY_DAYS = 7

    gateway.deposit("p1", "1000.00", reference="gw-1")

    lot = BonusLot.objects.get(player__external_id="p1")
    assert (lot.source, lot.amount, lot.remaining) == ("cashback", Decimal("285.71"), lot.amount)
    assert abs(lot.expires_at - (timezone.now() + timedelta(days=7))) < timedelta(minutes=1)


def test_sign_up_bonus_is_granted_once_on_the_first_deposit(gateway, settings):
    settings.SIGNUP_BONUS = Decimal("50.00")

    gateway.deposit("new", "100.00")
    response = gateway.deposit("new", "100.00")

    assert response.json()["balances"]["bonus"]["amount"] == "50.00"
    assert lots("new") == [(Decimal("50.00"), Decimal("50.00"))]
    assert BonusLot.objects.get(player__external_id="new").source == "signup"


def test_no_sign_up_bonus_without_a_deposit_nor_when_real_money_is_not_for_the_player(
    gateway, settings
):
    """PUT limits, a rejected KYC and a self-excluded player get no sign-up bonus."""
    settings.SIGNUP_BONUS = Decimal("50.00")
    settings.REAL_MONEY = "restricted"
    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset({"TN"})

    limits = gateway.put("players/by-limits/limits", {"daily": "500.00", "monthly": "5000.00"})
    kyc = gateway.kyc("by-kyc", "ABCDE9999F", status="rejected")
    excluded = gateway.post("players/excluded/self-exclusion", {"days": 30})
    refused = [
        gateway.deposit("excluded", "100.00", region="KA"),  # self-excluded
        gateway.deposit("nowhere", "100.00"),  # region unknown
        gateway.deposit("blocked", "100.00", region="TN"),  # region blocked
    ]

    assert (limits.status_code, kyc.status_code, excluded.status_code) == (200, 201, 201)
    assert [r.json()["error"]["code"] for r in refused] == [
        "self_excluded",
        "real_money_unavailable",
        "real_money_unavailable",
    ]
    assert not BonusLot.objects.exists()
    assert not Transfer.objects.filter(kind="bonus").exists()
    # a deposit that real money allows brings it, once
    assert gateway.deposit("by-kyc", "100.00", region="KA").status_code == 201
    assert lots("by-kyc") == [(Decimal("50.00"), Decimal("50.00"))]


def test_a_player_who_deposited_before_the_bonus_existed_does_not_get_it_later(gateway, settings):
    gateway.deposit("old", "100.00")
    settings.SIGNUP_BONUS = Decimal("50.00")

    gateway.deposit("old", "100.00")

    assert not BonusLot.objects.exists()


def test_no_sign_up_bonus_by_default(gateway):
    response = gateway.deposit("new", "100.00")

    assert response.json()["balances"]["bonus"]["amount"] == "0.00"
    assert not BonusLot.objects.exists()


def test_a_finance_grant_credits_bonus_only_when_a_second_person_approves_it():
    funded_player("p1", "0")
    operator, approver = staff("op", OPERATOR), staff("ap", APPROVER)
    player = Account.objects.get(code="player:p1:bonus").player
    grant = bonus_grant_propose(
        proposed_by=operator, player=player, amount=Money("25.00", CASH), reason="apology"
    )
    assert bucket("p1", "bonus") == 0

    proposal_decide(model=BonusGrant, proposal_id=grant.pk, decided_by=approver, approve=True)
    with pytest.raises(AlreadyDecided):  # a second decision is refused: credited once
        proposal_decide(model=BonusGrant, proposal_id=grant.pk, decided_by=approver, approve=True)

    assert bucket("p1", "bonus") == Decimal("25.00")
    assert lots("p1") == [(Decimal("25.00"), Decimal("25.00"))]
    assert BonusLot.objects.get().source == "grant"
    assert reconciled_clean()


@pytest.mark.parametrize(
    ("fmt", "fields", "from_bonus"),
    [
        ("pool101", {"entry_fee": Decimal("100.00")}, Decimal("10.00")),  # 10 % of the entry
        ("pool101", {"entry_fee": Decimal("100.00"), "bonus_cap_percent": 0}, Decimal("0")),
        ("pool101", {"entry_fee": Decimal("100.00"), "bonus_cap_percent": 25}, Decimal("25.00")),
        ("points", {"point_value": Decimal("2.00")}, Decimal("16.00")),  # 10 % of 80 x 2
        ("pool101", {"entry_fee": Decimal("0.05")}, Decimal("0")),  # 0.005 rounds down
    ],
)
def test_an_entry_takes_at_most_the_templates_cap_from_bonus(fmt, fields, from_bonus):
    template("t", fmt, **fields)
    for p in ("a", "b"):
        funded_player(p, "500.00")
        bonus_granted(p, "100.00")

    response = Server().open("g", "t", ["a", "b"])

    assert response.status_code == 201, response.json()
    seat = response.json()["players"][0]
    assert Decimal(seat["paid_in"].get("bonus", "0")) == from_bonus
    assert bucket("a", "bonus") == Decimal("100.00") - from_bonus
    assert lots("a") == [(Decimal("100.00"), Decimal("100.00") - from_bonus)]
    assert reconciled_clean()


def test_the_template_lists_its_bonus_cap():
    template("t", "pool101", bonus_cap_percent=Decimal("15.00"))

    listed = Server().get("templates").json()["templates"][0]

    assert listed["bonus_cap_percent"] == "15.00"


def test_the_lot_that_expires_first_is_used_first():
    template("t", "pool101", entry_fee=Decimal("100.00"), bonus_cap_percent=50)
    funded_player("a", "500.00")
    funded_player("b", "500.00")
    late = bonus_granted("a", "40.00")
    soon = bonus_granted("a", "30.00")
    BonusLot.objects.filter(transfer_id=soon.transfer_id).update(
        expires_at=timezone.now() + timedelta(days=2)
    )

    Server().open("g", "t", ["a", "b"])  # 50 from bonus: all 30 of `soon`, 20 of `late`

    remaining = dict(BonusLot.objects.values_list("transfer_id", "remaining"))
    assert remaining == {soon.transfer_id: 0, late.transfer_id: Decimal("20.00")}


def test_a_refund_returns_bonus_to_the_lots_it_came_from_with_their_expiry():
    template("t", "pool101", entry_fee=Decimal("100.00"))
    funded_player("a", "500.00")
    funded_player("b", "500.00")
    bonus_granted("a", "6.00")
    bonus_granted("a", "50.00")
    first = BonusLot.objects.order_by("pk").first()
    first.expires_at = timezone.now() + timedelta(days=1)
    first.save()
    expiries = dict(BonusLot.objects.values_list("pk", "expires_at"))
    server = Server()
    server.open("g", "t", ["a", "b"])
    assert lots("a") == [(Decimal("6.00"), 0), (Decimal("50.00"), Decimal("46.00"))]

    response = server.post("games/g/cancel")

    assert response.status_code == 200, response.json()
    assert lots("a") == [(Decimal("6.00"), Decimal("6.00")), (Decimal("50.00"), Decimal("50.00"))]
    assert dict(BonusLot.objects.values_list("pk", "expires_at")) == expiries
    assert (bucket("a", "bonus"), bucket("a", "deposit")) == (Decimal("56.00"), Decimal("500.00"))
    assert ledger_violations() == [] and reconciled_clean()


def test_a_refund_into_a_lot_that_expired_meanwhile_goes_to_promotions_at_the_next_sweep():
    template("t", "pool101", entry_fee=Decimal("100.00"))
    funded_player("a", "500.00")
    funded_player("b", "500.00")
    bonus_granted("a", "10.00")
    server = Server()
    server.open("g", "t", ["a", "b"])
    expire("a")
    server.post("games/g/cancel")
    assert bucket("a", "bonus") == Decimal("10.00")
    before = promotions()

    bonus_expiry()

    assert bucket("a", "bonus") == 0 and promotions() == before + Decimal("10.00")


def test_the_beat_job_returns_expired_bonus_to_promotions_once(settings):
    funded_player("a", "0")
    bonus_granted("a", "30.00")
    bonus_granted("a", "20.00")
    BonusLot.objects.filter(amount=Decimal("30.00")).update(
        expires_at=timezone.now() - timedelta(hours=1)
    )
    before = promotions()

    assert bonus_expiry() == 1
    assert bonus_expiry() == 0

    assert bucket("a", "bonus") == Decimal("20.00")
    assert promotions() == before + Decimal("30.00")
    assert Transfer.objects.filter(kind="bonus_expiry").count() == 1
    assert ledger_violations() == [] and reconciled_clean()
    assert "wallets-bonus-expiry" in settings.CELERY_BEAT_SCHEDULE


def test_expired_bonus_is_not_spent_on_an_entry():
    template("t", "pool101", entry_fee=Decimal("100.00"))
    funded_player("a", "90.00")
    funded_player("b", "500.00")
    bonus_granted("a", "10.00")
    expire("a")

    response = Server().open("g", "t", ["a", "b"])

    assert response.status_code == 409 and response.json()["error"]["code"] == "insufficient_funds"
    assert bucket("a", "bonus") == Decimal("10.00") and bucket("a", "deposit") == Decimal("90.00")


def test_bonus_is_never_withdrawable(gateway):
    verified("a")
    bonus_granted("a", "500.00")

    response = gateway.withdraw("a", "100.00")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "insufficient_funds"
    assert bucket("a", "bonus") == Decimal("500.00")


def test_bonus_never_counts_as_a_deposit_for_tds(gateway, settings):
    settings.GST_CASHBACK = "bonus"
    verified("a")
    gateway.deposit("a", "1000.00")
    bonus_granted("a", "100.00")

    label = formulas.financial_year_of(timezone.now()).label
    fy = gateway.api.get(f"/api/v1/players/a/tax/{label}")

    assert fy.status_code == 200, fy.json()
    assert fy.json()["deposits"] == "714.29"  # the credit only: not the 285.71 nor the 100 bonus


def test_a_bonus_adjustment_is_refused_bonus_comes_by_grant():
    funded_player("a", "0")
    player = Account.objects.get(code="player:a:bonus").player
    with pytest.raises(ProposalInvalid):
        adjustment_propose(
            proposed_by=staff("op", OPERATOR),
            player=player,
            bucket="bonus",
            direction="credit",
            amount=Money("5.00", CASH),
            reason="no",
        )


def test_reconciliation_finds_bonus_that_no_lot_holds():
    funded_player("a", "0")
    move(platform_accounts()["promotions"], Account.objects.get(code="player:a:bonus"), "5", "k")

    report = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND)

    kinds = set(report.discrepancies.values_list("kind", flat=True))
    assert "bonus_lots_mismatch" in kinds


def test_an_approved_reversal_of_a_game_keeps_the_lots_equal_to_the_bucket(
    eager, django_capture_on_commit_callbacks
):
    template("points-2", "points")  # stake 160: at most 16 from bonus
    for p in ("a", "b"):
        funded_player(p, "500.00")
        bonus_granted(p, "100.00")
    server = Server()
    server.open("g", "points-2", ["a", "b"])
    with django_capture_on_commit_callbacks(execute=True):  # a loses all 160, 16 of it bonus
        server.deal("g", 1, [res("b", "declared", WINNER), res("a", "lost", LOSER_80)])
    game = Game.objects.get(game_id="g")
    assert (bucket("a", "bonus"), game.status) == (Decimal("84.00"), "finished")
    operator, approver = staff("op", OPERATOR), staff("ap", APPROVER)
    reversal = reversal_propose(
        proposed_by=operator,
        reference=f"game:{game.pk}",
        transfer_ids=game_transfer_ids(game),
        reason="test",
    )

    proposal_decide(model=Reversal, proposal_id=reversal.pk, decided_by=approver, approve=True)

    for p in ("a", "b"):
        assert sum(r for _, r in lots(p)) == bucket(p, "bonus") == Decimal("100.00")
    assert BonusLot.objects.get(player__external_id="a", source="reversal").amount == 16
    assert ledger_violations() == [] and reconciled_clean()
