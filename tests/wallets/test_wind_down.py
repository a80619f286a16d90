"""The wind-down (docs/regions-and-real-money.md): maker-checker while real money is off, the plan,
a run (games cancelled, bonus expired, one refund per player with TDS, no-KYC winnings held), its
report, run again (idempotent; a failed refund issued again under a new reference), deposits refused
meanwhile."""

import csv
import io
import threading
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.utils import timezone

from rummy_ledger.api.keys import api_client_create
from rummy_ledger.api.models import ApiClient
from rummy_ledger.dev.demo.simulator import ApiError, Http
from tests.api.conftest import ledger_state
from tests.builders import HttpApi, funded_player, make_api, staff, template
from tests.tournaments.tournament_builders import Lobby, scheduled
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import deposited, verified
from tests.wallets.wind_down import a_book, wind_down_approved
from tournaments.models import Game
from wallets.errors import ProposalInvalid, RealMoneyUnavailable, SelfApproval
from wallets.models import (
    Account,
    BonusLot,
    Player,
    Transfer,
    WindDown,
    WindDownLine,
    Withdrawal,
)
from wallets.reconciliation import reconcile_run
from wallets.roles import APPROVER, OPERATOR
from wallets.services.proposals import proposal_decide
from wallets.services.wind_down import real_money_start_check, wind_down_propose, wind_down_run

pytestmark = pytest.mark.django_db
D = Decimal


@pytest.fixture
def book(gateway, settings):
    """`a_book()` while real money was on; then it goes off (no grace period)."""
    built = a_book()
    settings.WIND_DOWN_GRACE_MINUTES = 0
    settings.REAL_MONEY = "off"
    return built


def read(path: Path) -> dict[str, dict]:
    with path.open(encoding="utf-8-sig") as f:
        return {row["player"]: row for row in csv.DictReader(f)}


def inr(player: str) -> D:
    accounts = Account.objects.filter(
        player__external_id=player, bucket__in=["deposit", "winnings", "bonus", "pending"]
    )
    return sum((a.balance.amount for a in accounts), D(0))


def run(tmp_path, *args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("wind_down", "--client", "gateway", "--csv", str(tmp_path / "out.csv"), *args,
                 stdout=out)  # fmt: skip
    return out.getvalue()


def test_proposed_and_approved_by_two_people_only_while_real_money_is_off(settings):
    operator, approver = staff("o", OPERATOR), staff("a", APPROVER)
    both = staff("both", OPERATOR, APPROVER)
    with pytest.raises(ProposalInvalid, match="only while REAL_MONEY=off"):
        wind_down_propose(proposed_by=operator, reason="closing")

    settings.REAL_MONEY = "off"
    own = wind_down_propose(proposed_by=both, reason="closing")
    with pytest.raises(SelfApproval):
        proposal_decide(model=WindDown, proposal_id=own.pk, decided_by=both, approve=True)
    with pytest.raises(ProposalInvalid, match="already proposed"):
        wind_down_propose(proposed_by=operator, reason="again")
    settings.REAL_MONEY = "on"
    with pytest.raises(ProposalInvalid, match="only while REAL_MONEY=off"):
        proposal_decide(model=WindDown, proposal_id=own.pk, decided_by=approver, approve=True)
    assert WindDown.objects.get().status == "proposed"


def test_the_plan_prints_and_writes_what_it_would_do_and_changes_nothing(tmp_path, gateway, book):
    wind_down_approved()

    out = run(tmp_path, "--plan")

    assert (
        "plan: cancel 1 open cash games, 0 open cash tournaments; expire 1 bonus lot(s); refund"
        in out
    )
    rows = read(tmp_path / "out.csv")
    assert (rows["kyc"]["refund"], rows["kyc"]["held"]) == ("1500.00", "0.00")
    assert (rows["nokyc"]["refund"], rows["nokyc"]["held"]) == ("400.00", "100.00")
    assert not Withdrawal.objects.filter(reference__startswith="wind-down").exists()
    assert Game.objects.get().status == "open" and BonusLot.objects.get().remaining == D("75.00")


def test_without_csv_the_plan_goes_to_the_data_directory_not_the_working_one(
    tmp_path, gateway, book, settings, monkeypatch
):
    wind_down_approved()
    settings.DATA_DIR = tmp_path / "data"
    monkeypatch.chdir(tmp_path)

    call_command("wind_down", "--client", "gateway", "--plan", stdout=io.StringIO())

    assert list(tmp_path.glob("*.csv")) == []
    rows = read(settings.DATA_DIR / "wind-down-plan.csv")
    assert rows["kyc"]["refund"] == "1500.00"


def test_a_run_closes_the_book_and_its_report_says_who_holds_what(tmp_path, gateway, book):
    wind_down_approved()

    out = run(tmp_path)

    assert "cancelled 1 cash games" in out and "1 bonus lot(s) expired" in out
    assert Game.objects.get().status == "cancelled"
    assert BonusLot.objects.get().remaining == 0
    refunds = {w.reference: w for w in Withdrawal.objects.filter(reference__startswith="wind")}
    kyc = refunds["wind-down-kyc"]
    # Rule 133: net winnings 1,500 - 1,000 = 500, TDS 150
    assert (kyc.amount.amount, kyc.from_deposit, kyc.tds.amount) == (D(1500), D(1000), D(150))
    assert kyc.status == "approved"
    nokyc = refunds["wind-down-nokyc"]
    assert (nokyc.amount.amount, nokyc.tds.amount, nokyc.pan_required) == (D(400), 0, False)
    for p in book["seated"]:  # their entries came back, then went out
        assert refunds[f"wind-down-{p}"].amount.amount == D("500.00")
    winner = refunds["wind-down-winner"]  # never deposited: all of it is net winnings
    assert (winner.amount.amount, winner.tds.amount) == (D(300), D(90))
    assert "wind-down-bonus" not in refunds  # bonus is never paid out
    rows = read(tmp_path / "out.csv")
    assert (rows["kyc"]["refunded"], rows["kyc"]["tds"], rows["kyc"]["held"]) == (
        "1500.00",
        "150.00",
        "0.00",
    )
    assert (rows["nokyc"]["held"], rows["nokyc"]["held_reason"]) == ("100.00", "no_kyc")
    held = {line.player.external_id: line.held for line in WindDownLine.objects.all()}
    for player in ["kyc", "nokyc", *book["seated"]]:
        assert (
            inr(player) - D(Account.objects.get(code=f"player:{player}:pending").balance.amount)
            == held[player]
        )
    assert reconcile_run(trigger="command").status == "clean"
    assert ledger_violations() == []


def test_run_again_repeats_nothing_and_reissues_a_failed_refund(tmp_path, gateway, settings, book):
    wind_down_approved()
    run(tmp_path)
    first = Withdrawal.objects.filter(reference__startswith="wind-down").count()

    again = run(tmp_path)
    assert Withdrawal.objects.filter(reference__startswith="wind-down").count() == first
    assert "0 refund(s) issued now" in again

    # the gateway pays one and fails another; KYC arrives for the player whose winnings are held
    kyc = Withdrawal.objects.get(reference="wind-down-kyc")
    assert gateway.paid(kyc.pk, "gw-pay-kyc").status_code == 200
    nokyc = Withdrawal.objects.get(reference="wind-down-nokyc")
    assert gateway.failed(nokyc.pk).status_code == 200
    verified("nokyc")
    run(tmp_path)

    reissued = Withdrawal.objects.get(reference="wind-down-nokyc-2")
    assert reissued.amount.amount == D("500.00") and reissued.status == "approved"
    assert not Withdrawal.objects.filter(reference="wind-down-kyc-2").exists()
    line = WindDownLine.objects.get(player__external_id="nokyc")
    assert (line.refunds, line.refunded, line.held) == (2, D("500.00"), 0)
    assert reconcile_run(trigger="command").status == "clean"
    assert WindDown.objects.get().finished_at is None  # refunds are still with the gateway

    # the gateway pays the rest: the next run finishes the wind-down, and once real money is
    # switched back on, deposits are taken again (GST at the rate then in force)
    for n, w in enumerate(Withdrawal.objects.filter(status="approved")):
        assert gateway.paid(w.pk, f"gw-pay-{n}").status_code == 200
    assert "0 with the gateway" in run(tmp_path)
    assert WindDown.objects.get().finished_at is not None
    settings.REAL_MONEY = "on"
    back = gateway.deposit("kyc", "1400.00")
    assert back.status_code == 201 and back.json()["gst_rate"] == "40.00"


@pytest.mark.django_db(transaction=True)
def test_a_player_depositing_during_a_wind_down_is_refused_over_http(live_server, settings):
    # given: a player with a deposit; real money off and a wind-down approved
    verified("kyc")
    deposited("kyc", "1000.00")
    _, key = api_client_create(name="gateway", scopes=["payments"])
    http = Http(live_server.url, key)
    settings.REAL_MONEY = "off"
    wind_down_approved()
    settings.REAL_MONEY = "on"  # even if someone switches real money back on meanwhile

    # when
    with pytest.raises(ApiError) as refused:
        http.post("players/kyc/deposits", {"amount": "100.00", "reference": "upi-late"})

    # then: refused, and nothing written
    assert refused.value.status == 409
    assert refused.value.body["error"]["code"] == "real_money_unavailable"
    assert "wind-down" in refused.value.body["error"]["message"]
    assert Account.objects.get(code="player:kyc:deposit").balance.amount == D("1000.00")
    assert Transfer.objects.filter(kind="deposit").count() == 1


@pytest.mark.django_db(transaction=True)
def test_real_money_back_on_during_a_wind_down_takes_no_cash_entry(live_server, settings, eager):
    # given: a running cash tournament with rebuys, another open for registration, players
    # with money; then real money off, a wind-down approved, and real money switched back on
    for p in ("a", "b", "c", "d", "e"):
        funded_player(p, "1000.00")
    lobby = Lobby(live_server.url)
    scheduled()
    scheduled(slug="monday-100", name="Monday 100")
    for p in ("a", "b", "c", "d"):
        assert lobby.register("sunday-100", p)[0] == 201
    assert lobby.start("sunday-100")[1]["status"] == "running"
    template("points-2", "points")
    games = HttpApi(live_server.url, "games", name="game-server-1")
    settings.REAL_MONEY = "off"
    wind_down = wind_down_approved()
    settings.REAL_MONEY = "on"
    before = ledger_state()

    # when: a cash game, a registration and a rebuy are asked for
    opened = games.post("games", {"game_id": "g1", "template": "points-2", "players": ["a", "e"]})
    registered = lobby.register("monday-100", "e")
    rebought = lobby.rebuy("sunday-100", "a")

    # then: each is refused for the wind-down, and nothing moved
    refusal = {"code": "real_money_unavailable", "details": {"wind_down": wind_down.pk}}
    assert opened.status_code == 409, opened.text
    assert {k: opened.json()["error"][k] for k in refusal} == refusal
    for status, body in (registered, rebought):
        assert status == 409, body
        assert {k: body["error"][k] for k in refusal} == refusal
    assert ledger_state() == before


def test_the_service_refuses_to_start_with_real_money_on_during_a_wind_down(settings):
    settings.REAL_MONEY = "off"
    real_money_start_check()  # no wind-down: starts
    wind_down = wind_down_approved()
    real_money_start_check()  # real money off: starts

    for real_money in ("on", "restricted"):
        settings.REAL_MONEY = real_money
        with pytest.raises(RealMoneyUnavailable) as refused:
            real_money_start_check()
        assert f"wind-down #{wind_down.pk}" in str(refused.value)
        assert "REAL_MONEY=off" in str(refused.value)

    WindDown.objects.filter(pk=wind_down.pk).update(finished_at=timezone.now())
    real_money_start_check()  # finished: starts


def test_a_run_waits_for_the_grace_period_and_needs_real_money_off(
    tmp_path, gateway, settings, book
):
    wind_down_approved()
    settings.WIND_DOWN_GRACE_MINUTES = 30
    with pytest.raises(CommandError, match="grace period for open games runs until"):
        run(tmp_path)
    settings.REAL_MONEY = "on"
    with pytest.raises(CommandError, match="only while REAL_MONEY=off"):
        run(tmp_path)
    assert not Withdrawal.objects.filter(reference__startswith="wind-down").exists()
    assert timezone.now() - WindDown.objects.get().decided_at < timedelta(minutes=30)


@pytest.mark.django_db(transaction=True)
def test_a_chunk_that_fails_is_done_player_by_player_and_a_busy_one_left_to_the_next_run(settings):
    # given: three players with deposits; another transaction holds b's deposit account
    make_api("payments", name="gateway")
    for player in ("a", "b", "c"):
        verified(player)
        deposited(player, "100.00")
    settings.REAL_MONEY, settings.WIND_DOWN_GRACE_MINUTES = "off", 0
    settings.LEDGER_LOCK_TIMEOUT_MS = 100
    wind_down, client = wind_down_approved(), ApiClient.objects.get(name="gateway")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                Account.objects.select_for_update().get(code="player:b:deposit")
                held.set()
                release.wait(60)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(60)

    # when: a run meets the lock (its one chunk fails in the ledger), then a run after it
    try:
        first = wind_down_run(wind_down=wind_down, client=client)
    finally:
        release.set()
        holder.join()
    second = wind_down_run(wind_down=wind_down, client=client)

    # then: a and c refunded by the first run, b by the second; once each
    b = Player.objects.get(external_id="b").pk
    assert (first.refunds, first.busy, second.refunds, second.busy) == (2, [b], 1, [])
    references = Withdrawal.objects.values_list("reference", flat=True)
    assert sorted(references) == ["wind-down-a", "wind-down-b", "wind-down-c"]
    assert reconcile_run(trigger="command").status == "clean"
    assert ledger_violations() == []
