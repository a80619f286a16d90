"""Player protection through the API: deposit limits (lower at once, higher after the delay),
self-exclusion (no cash games, no deposits; withdrawals and chips games stay open; never
lifted early), and the history of every change."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from djmoney.money import Money

from tests.builders import Server, funded_player, make_api, template
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import verified, won
from wallets.models import Account, ProtectionChange, Transfer
from wallets.services.deposits import chips_grant

pytestmark = pytest.mark.django_db


def limits(gateway, player: str, daily, monthly):
    return gateway.put(f"players/{player}/limits", {"daily": daily, "monthly": monthly})


def exclude(gateway, player: str, **body):
    return gateway.post(f"players/{player}/self-exclusion", body)


def later(hours: float) -> None:
    """As if `hours` had passed for every protection change."""
    for change in ProtectionChange.objects.all():
        change.created_at -= timedelta(hours=hours)
        change.effective_at -= timedelta(hours=hours)
        change.save()


def deposits(player: str):
    return Transfer.objects.filter(kind="deposit", entries__account__player__external_id=player)


def test_a_first_limit_applies_at_once_and_a_deposit_over_it_is_refused(gateway):
    response = limits(gateway, "p1", "1000.00", None)
    assert response.status_code == 200, response.json()
    assert response.json()["daily_limit"] == "1000.00" and response.json()["pending"] == []
    assert gateway.deposit("p1", "600.00").status_code == 201

    refused = gateway.deposit("p1", "500.00")

    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "deposit_limit"
    assert error["details"] == {
        "limit": "daily",
        "amount": "1000.00",
        "deposited": "600.00",
        "left": "400.00",
    }
    assert deposits("p1").count() == 1  # nothing written
    assert gateway.deposit("p1", "400.00").status_code == 201


def test_the_monthly_limit_counts_the_whole_month(gateway):
    limits(gateway, "p1", None, "700.00")
    gateway.deposit("p1", "500.00")

    refused = gateway.deposit("p1", "300.00")

    assert refused.json()["error"]["details"]["limit"] == "monthly"
    assert refused.json()["error"]["details"]["left"] == "200.00"


def test_a_lower_limit_applies_at_once_a_higher_one_after_the_delay(gateway):
    limits(gateway, "p1", "1000.00", None)
    lower = limits(gateway, "p1", "300.00", None)
    assert lower.json()["daily_limit"] == "300.00"
    higher = limits(gateway, "p1", "2000.00", None)

    assert higher.json()["daily_limit"] == "300.00"
    assert [(p["limit"], p["amount"]) for p in higher.json()["pending"]] == [("daily", "2000.00")]
    assert gateway.deposit("p1", "500.00").json()["error"]["code"] == "deposit_limit"
    later(hours=23)
    assert gateway.deposit("p1", "500.00").status_code == 409
    later(hours=2)
    assert gateway.deposit("p1", "500.00").status_code == 201
    read = gateway.api.get("/api/v1/players/p1/limits").json()
    assert read["daily_limit"] == "2000.00" and read["pending"] == []


def test_removing_a_limit_is_a_raise_and_waits_too(gateway):
    limits(gateway, "p1", "100.00", None)

    response = limits(gateway, "p1", None, None)

    assert response.json()["daily_limit"] == "100.00"
    assert response.json()["pending"][0]["amount"] is None


def test_a_later_change_overtakes_a_raise_still_waiting(gateway, settings):
    limits(gateway, "p1", "100.00", None)
    limits(gateway, "p1", "5000.00", None)  # waits 24 h
    limits(gateway, "p1", "300.00", None)  # a raise too, asked later: it alone stands
    later(hours=25)

    assert gateway.api.get("/api/v1/players/p1/limits").json()["daily_limit"] == "300.00"


def test_the_raise_delay_is_a_setting(gateway, settings):
    settings.DEPOSIT_LIMIT_RAISE_DELAY_HOURS = 0
    limits(gateway, "p1", "100.00", None)

    assert limits(gateway, "p1", "900.00", None).json()["daily_limit"] == "900.00"


def test_every_change_is_kept_with_who_when_old_and_new(gateway):
    limits(gateway, "p1", "100.00", None)
    limits(gateway, "p1", "50.00", "900.00")
    exclude(gateway, "p1", days=7)

    history = [
        (c.kind, c.old_value, c.new_value, c.changed_by)
        for c in ProtectionChange.objects.order_by("pk")
    ]
    assert history[:3] == [
        ("daily_limit", "", "100.00", "gateway"),
        ("daily_limit", "100.00", "50.00", "gateway"),
        ("monthly_limit", "", "900.00", "gateway"),
    ]
    assert history[3][:2] == ("self_exclusion", "") and history[3][3] == "gateway"
    assert all(c.created_at for c in ProtectionChange.objects.all())


@pytest.mark.parametrize(
    "body",
    [
        {"daily": "0.00", "monthly": None},
        {"daily": "-5", "monthly": None},
        {"daily": 100, "monthly": None},
        {"daily": "100.00"},
        {},
    ],
)
def test_malformed_limits_are_400_and_change_nothing(gateway, body):
    response = gateway.put("players/p1/limits", body)

    assert response.status_code == 400
    assert not ProtectionChange.objects.exists()


def test_limits_need_the_payments_scope():
    games = make_api("games", name="game-server")[0]

    response = games.put(
        "/api/v1/players/p1/limits", {"daily": None, "monthly": None}, format="json"
    )

    assert response.status_code == 403


def test_self_exclusion_refuses_deposits_and_cash_games(gateway):
    template("cash", "pool101", entry_fee=Decimal("100.00"))
    for p in ("a", "b"):
        funded_player(p, "500.00")
    response = exclude(gateway, "a", days=30)
    assert response.status_code == 201, response.json()
    assert response.json()["self_excluded"] is True
    assert response.json()["self_excluded_until"] is not None

    deposit = gateway.deposit("a", "100.00")
    game = Server().open("g", "cash", ["a", "b"])

    assert deposit.status_code == 409 and deposit.json()["error"]["code"] == "self_excluded"
    assert game.status_code == 409 and game.json()["error"]["code"] == "self_excluded"
    assert game.json()["error"]["details"]["players"][0]["player"] == "a"
    assert Account.objects.get(code="player:b:deposit").balance.amount == Decimal("500.00")
    assert ledger_violations() == []


def test_a_self_excluded_player_may_withdraw_and_play_chips(gateway):
    verified("a")
    won("a", "200.00")
    template("chips", "pool101", currency="CHP", entry_fee=Decimal("10.00"))
    for p in ("a", "b"):
        chips_grant(player_external_id=p, amount=Money("100", "CHP"), reference=f"chips-{p}")
    exclude(gateway, "a", permanent=True)

    assert gateway.withdraw("a", "50.00").status_code == 201
    assert Server().open("g", "chips", ["a", "b"]).status_code == 201


def test_a_self_exclusion_is_never_shortened(gateway):
    exclude(gateway, "a", days=30)

    response = exclude(gateway, "a", days=1)

    until = timezone.datetime.fromisoformat(response.json()["self_excluded_until"])
    assert until > timezone.now() + timedelta(days=29)
    later(hours=48)
    assert gateway.deposit("a", "100.00").json()["error"]["code"] == "self_excluded"


def test_a_self_exclusion_ends_by_itself(gateway):
    exclude(gateway, "a", days=1)
    ProtectionChange.objects.filter(kind="self_exclusion").update(
        new_value=(timezone.now() - timedelta(minutes=1)).isoformat()
    )

    assert gateway.deposit("a", "100.00").status_code == 201
    assert gateway.api.get("/api/v1/players/a/limits").json()["self_excluded"] is False


def test_a_permanent_self_exclusion_has_no_end(gateway):
    response = exclude(gateway, "a", permanent=True)

    body = response.json()
    assert body["self_excluded_permanently"] is True and body["self_excluded_until"] is None
    later(hours=24 * 3650)
    assert gateway.deposit("a", "100.00").status_code == 409


@pytest.mark.parametrize(
    "body", [{}, {"days": 0}, {"days": 3, "permanent": True}, {"permanent": False}, {"days": "x"}]
)
def test_a_malformed_self_exclusion_is_400(gateway, body):
    assert exclude(gateway, "a", **body).status_code == 400
    assert not ProtectionChange.objects.exists()
