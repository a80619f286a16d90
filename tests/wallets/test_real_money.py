"""The real-money switch through the API: off for everyone, restricted by region; what stops
(cash games, deposits) and what keeps working (withdrawals, wallet reads, chips games, games
already open)."""

from decimal import Decimal

import pytest
from djmoney.money import Money

from tests.builders import LOSER_80, WINNER, Server, funded_player, make_api, res, template
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import Gateway, a_pan, verified, won
from wallets.models import Account, Player, ProtectionChange, Transfer
from wallets.services.deposits import chips_grant

pytestmark = pytest.mark.django_db


@pytest.fixture
def tables(db):
    template("cash", "pool101", entry_fee=Decimal("100.00"))
    template("chips", "pool101", currency="CHP", entry_fee=Decimal("10.00"))
    for p in ("a", "b"):
        funded_player(p, "500.00")
        chips_grant(player_external_id=p, amount=Money("100", "CHP"), reference=f"chips-{p}")


def listed(server: Server) -> dict[str, dict]:
    return {t["slug"]: t for t in server.get("templates").json()["templates"]}


def test_with_real_money_on_every_template_is_available(tables):
    templates = listed(Server())

    assert {slug: t["available"] for slug, t in templates.items()} == {"cash": True, "chips": True}
    assert templates["cash"]["unavailable_reason"] is None


def test_real_money_off_hides_cash_templates_and_refuses_cash_games(tables, settings):
    settings.REAL_MONEY = "off"
    server = Server()

    templates = listed(server)
    response = server.open("g", "cash", ["a", "b"])

    assert templates["cash"]["available"] is False
    assert "switched off" in templates["cash"]["unavailable_reason"]
    assert templates["chips"]["available"] is True
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "real_money_unavailable"
    assert [p["player"] for p in error["details"]["players"]] == ["a", "b"]
    assert all("switched off" in p["reason"] for p in error["details"]["players"])
    assert Account.objects.get(code="player:a:deposit").balance.amount == Decimal("500.00")
    assert server.open("h", "chips", ["a", "b"]).status_code == 201


def test_real_money_off_refuses_deposits_but_not_withdrawals_or_wallet_reads(gateway, settings):
    verified("a")
    won("a", "300.00")
    settings.REAL_MONEY = "off"

    deposit = gateway.deposit("a", "100.00")
    withdrawal = gateway.withdraw("a", "100.00")
    wallet = gateway.api.get("/api/v1/players/a/wallet")

    assert deposit.status_code == 409
    assert deposit.json()["error"]["code"] == "real_money_unavailable"
    assert withdrawal.status_code == 201, withdrawal.json()
    assert wallet.status_code == 200
    assert wallet.json()["balances"]["winnings"]["amount"] == "200.00"


def test_a_game_open_when_real_money_was_switched_off_settles_normally(tables, settings, eager):
    server = Server()
    assert server.open("g", "cash", ["a", "b"]).status_code == 201
    settings.REAL_MONEY = "off"

    response = server.post("games/g/cancel")

    assert response.status_code == 200, response.json()
    assert Account.objects.get(code="player:a:deposit").balance.amount == Decimal("500.00")
    assert ledger_violations() == []


def test_restricted_blocks_the_players_of_blocked_regions(tables, gateway, settings):
    settings.REAL_MONEY = "restricted"
    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset({"TN", "AP"})
    kyc = {"pan": a_pan(), "status": "verified", "reference": "k-a", "region": "TN"}
    assert gateway.post("players/a/kyc", kyc).status_code == 201
    gateway.deposit("b", "100.00", region="KA")
    server = Server()

    response = server.open("g", "cash", ["a", "b"])

    assert templates_available(server) == {"cash": True, "chips": True}
    assert response.status_code == 409
    assert response.json()["error"]["details"]["players"] == [
        {"player": "a", "reason": "real money is not offered in region TN"}
    ]
    assert gateway.deposit("a", "100.00").json()["error"]["code"] == "real_money_unavailable"
    assert Player.objects.get(external_id="b").region == "KA"


def templates_available(server: Server) -> dict[str, bool]:
    return {slug: t["available"] for slug, t in listed(server).items()}


def test_restricted_fails_closed_for_a_player_of_unknown_region(tables, settings):
    settings.REAL_MONEY = "restricted"

    response = Server().open("g", "cash", ["a", "b"])

    assert response.status_code == 409
    reasons = {p["reason"] for p in response.json()["error"]["details"]["players"]}
    assert reasons == {"the player's region is unknown (real money is restricted)"}


def test_restricted_lets_players_of_other_regions_play(tables, gateway, settings):
    settings.REAL_MONEY = "restricted"
    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset({"TN"})
    for p in ("a", "b"):
        assert gateway.deposit(p, "100.00", region="KA").status_code == 201

    assert Server().open("g", "cash", ["a", "b"]).status_code == 201


def test_a_region_change_is_kept_in_the_history(gateway):
    gateway.deposit("a", "100.00", region="KA")
    gateway.deposit("a", "100.00", region="KA")
    gateway.deposit("a", "100.00", region="TN")

    history = ProtectionChange.objects.filter(kind="region").order_by("pk")
    assert [(c.old_value, c.new_value, c.changed_by) for c in history] == [
        ("", "KA", "gateway"),
        ("KA", "TN", "gateway"),
    ]


@pytest.mark.parametrize("region", ["tn", "TNX", "T1", ""])
def test_a_malformed_region_is_400(gateway, region):
    response = gateway.deposit("a", "100.00", region=region)

    assert response.status_code == 400
    assert not Player.objects.filter(external_id="a").exists()


def test_the_deal_of_a_game_open_before_the_switch_settles(
    tables, settings, eager, django_capture_on_commit_callbacks
):
    server = Server()
    server.open("g", "cash", ["a", "b"])
    settings.REAL_MONEY = "off"

    with django_capture_on_commit_callbacks(execute=True):
        response = server.deal("g", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_80)])

    assert response.status_code == 202, response.json()
    assert server.get("games/g").json()["deals"][0]["status"] == "settled"


# --- restricted mode fails closed ---------------------------------------------------------------


@pytest.fixture
def restricted(settings):
    settings.REAL_MONEY = "restricted"
    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset({"TN", "AP", "TG"})  # TG: Telangana's old code


@pytest.mark.parametrize("region", ["ZZ", "US", "IN", "XX"])
def test_a_region_that_is_no_indian_state_is_400_and_turns_nothing_on(
    tables, gateway, restricted, region
):
    transfers = Transfer.objects.count()

    response = gateway.deposit("new", "100.00", region=region)
    kyc = gateway.post(
        "players/a/kyc", {"pan": a_pan(), "status": "verified", "reference": "k", "region": region}
    )

    for refused in (response, kyc):
        assert refused.status_code == 400, refused.content
        assert refused.json()["error"]["code"] == "region_invalid"
    assert not Player.objects.filter(external_id="new").exists()
    assert Player.objects.get(external_id="a").region == ""
    assert Transfer.objects.count() == transfers
    assert Server().open("g", "cash", ["a", "b"]).status_code == 409  # still unknown: closed


def test_a_blocked_report_is_kept_although_its_deposit_is_refused(tables, gateway, restricted):
    assert gateway.deposit("a", "100.00", region="KA").status_code == 201
    assert gateway.deposit("b", "100.00", region="KA").status_code == 201

    refused = gateway.deposit("a", "100.00", region="TN")
    replayed = gateway.deposit("a", "10.00", region="KA")  # the last report no longer wins

    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "real_money_unavailable"
    assert replayed.status_code == 409
    assert Player.objects.get(external_id="a").region == "TN"
    opened = Server().open("g", "cash", ["a", "b"])
    assert opened.status_code == 409
    assert opened.json()["error"]["details"]["players"] == [
        {"player": "a", "reason": "real money is not offered in region TN"}
    ]
    history = ProtectionChange.objects.filter(player__external_id="a", kind="region")
    assert [(c.old_value, c.new_value) for c in history.order_by("pk")] == [
        ("", "KA"),
        ("KA", "TN"),
    ]


def test_the_most_restrictive_report_wins_whatever_comes_after(tables, gateway, restricted):
    kyc = {"pan": a_pan(), "status": "verified", "reference": "k-a", "region": "TN"}
    assert gateway.post("players/a/kyc", kyc).status_code == 201

    deposit = gateway.deposit("a", "10.00", region="KA")

    assert deposit.status_code == 409
    assert Player.objects.get(external_id="a").region == "TN"
    assert Server().open("g", "cash", ["a", "b"]).status_code == 409


def test_retired_codes_are_aliases_of_their_successors(tables, gateway, restricted):
    # blocked as TG (its pre-2023 code), Telangana is blocked when reported as TS, and TG is
    # recorded as TS
    for player, region in (("a", "TS"), ("b", "TG")):
        response = gateway.deposit(player, "100.00", region=region)
        assert response.json()["error"]["code"] == "real_money_unavailable"
        assert Player.objects.get(external_id=player).region == "TS"
    # Odisha's pre-2023 code OR is open, recorded as OD
    assert gateway.deposit("c", "100.00", region="OR").status_code == 201
    assert Player.objects.get(external_id="c").region == "OD"


def test_blocked_regions_are_checked_against_the_list_at_start_up(settings):
    from django.core import checks

    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset({"TN", "ZZ", "TG"})

    found = {m.id: m for m in checks.run_checks() if m.id.startswith("wallets.")}

    assert set(found) == {"wallets.E001", "wallets.W001"}
    assert "'ZZ'" in found["wallets.E001"].msg and found["wallets.E001"].is_serious()
    assert "TG is the retired code of Telangana" in found["wallets.W001"].msg


@pytest.mark.django_db(transaction=True)
def test_the_kept_blocked_report_is_committed_on_its_own(settings):
    """With real commits (no test transaction around the request): the refused deposit wrote
    nothing of its own, its blocked region report is committed."""
    settings.REAL_MONEY = "restricted"
    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset({"TN"})
    gateway = Gateway(make_api("payments", name="gateway")[0])
    assert gateway.deposit("a", "100.00", region="KA").status_code == 201
    transfers = Transfer.objects.count()

    refused = gateway.deposit("a", "100.00", region="TN")

    assert refused.status_code == 409
    assert Transfer.objects.count() == transfers
    assert Player.objects.get(external_id="a").region == "TN"
    assert ProtectionChange.objects.filter(new_value="TN", old_value="KA").count() == 1
