"""The demo's payment gateway (rummy_ledger/dev/demo/simulator_money.py) over real HTTP: deposits
with GST, KYC, withdrawals paid and failed; and `manage.py simulate` ending with balanced books."""

import re
from decimal import Decimal

import pytest
from django.core.management import call_command

from rummy_ledger.api.keys import api_client_create
from rummy_ledger.dev.demo.simulator import Http
from rummy_ledger.dev.demo.simulator_money import PaymentGateway, pan_for
from rummy_ledger.dev.management.commands.simulate import finance_approves
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import won
from tournaments.models import Game
from wallets.models import Transfer, Withdrawal
from wallets.reconciliation import reconcile_run
from wallets.services.kyc import PAN

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_gateway_deposits_verifies_and_cashes_out(live_server):
    _, key = api_client_create(name="sim", scopes=["payments"])
    gateway = PaymentGateway(Http(live_server.url, key), seed=1)
    players = [f"m{n}" for n in range(6)]

    gateway.fund(players, "1400.00")
    gateway.verify(players)
    for p in players[:5]:
        won(p, "1000.00")
    gateway.cash_out(players, approve=finance_approves())

    t = gateway.tally
    assert (t.deposits, t.deposited, t.gst, t.credited) == (
        6,
        Decimal("8400.00"),
        Decimal("2400.00"),
        Decimal("6000.00"),
    )
    assert t.verified == 6 and t.approved_by_finance == 5  # every first withdrawal waits
    assert (t.paid, t.failed) == (4, 1)
    statuses = sorted(Withdrawal.objects.values_list("status", flat=True))
    assert statuses == ["failed", "paid", "paid", "paid", "paid"]
    assert reconcile_run(trigger="command").status == "clean"
    assert ledger_violations() == []


def test_pans_are_well_formed_and_per_player():
    assert PAN.match(pan_for("sim-player-1")) and pan_for("a") != pan_for("b")


@pytest.mark.soak
def test_simulate_plays_pays_taxes_and_balances(live_server, eager, capsys):
    call_command("seed_demo", verbosity=0)  # the demo lobby, whose tournaments it plays

    call_command("simulate", base_url=live_server.url, rounds=1, players=6, seed=5, wait=5)

    out = capsys.readouterr().out
    assert re.search(r"Deposits: 6, 30000.00 INR paid = 21428.58 credited \+ 8571.42 GST", out)
    assert re.search(r"withdrawals: \d+ paid .* \d+ failed", out)
    # the demo tournaments: a chips freeroll (all overlay) and a cash one with an
    # unregistration, rebuys and two players tied on chips sharing ranks 3-4
    assert re.search(
        r"Tournament demo-freeroll-1 \(CHP\) finished: 6 players, 0 rebuys, collected 0.00 \+ "
        r"overlay 5000.00 = prizes 5000.00 \+ fee 0.00",
        out,
    ), out[-3000:]
    assert re.search(
        r"Tournament demo-cash-1 \(INR\) finished: 5 players, 1 unregistered \(refunded\), "
        r"2 rebuys, collected 700.00 \+ overlay 405.00 = prizes 1000.00 \+ fee 105.00; "
        r"2 tied at rank 3 ",
        out,
    ), out[-3000:]
    assert "every tournament (2) prizes + fee == collected + overlay" in out
    assert "Books balance" in out, out[-2000:]


@pytest.mark.soak
def test_simulate_plays_chips_only_when_real_money_is_off_and_says_so(
    live_server, eager, capsys, settings
):
    settings.REAL_MONEY = "off"

    call_command("simulate", base_url=live_server.url, rounds=1, players=4, seed=5, wait=5)

    out = capsys.readouterr().out
    assert "Real money is off (real money is switched off on this platform)" in out
    assert "playing chips games only" in out
    assert not Game.objects.filter(currency="INR").exists()
    assert Game.objects.filter(currency="CHP").exists()
    assert not Transfer.objects.filter(kind="deposit").exists()
    assert "Books balance" in out, out[-2000:]


@pytest.mark.soak
def test_simulate_plays_cash_from_an_open_region_when_restricted(
    live_server, eager, capsys, settings
):
    settings.REAL_MONEY = "restricted"
    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset({"KA", "TN"})

    call_command("simulate", base_url=live_server.url, rounds=1, players=4, seed=5, wait=5)

    out = capsys.readouterr().out
    assert "deposit from MH" in out
    assert Game.objects.filter(currency="INR").exists()
    assert "Books balance" in out, out[-2000:]


def test_seed_demo_gives_chips_only_when_real_money_is_off(settings, capsys):
    settings.REAL_MONEY = "off"

    call_command("seed_demo")

    assert "chips only" in capsys.readouterr().out
    assert not Transfer.objects.filter(kind="deposit").exists()
