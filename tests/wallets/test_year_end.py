"""The TDS year end (Rule 133): what it taxes, where it takes the TDS from, the carry-forward
into the next year's opening, and that it runs once per player and year."""

from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.utils import timezone

from tests.builders import move
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import approve, backdate, deposited, lost, verified, won
from wallets.models import TdsYearEnd, Transfer, Withdrawal
from wallets.services.accounts import platform_accounts, player_accounts
from wallets.services.players import player_get_or_create
from wallets.tasks import tds_year_end as tds_year_end_task
from wallets.tax import formulas

pytestmark = pytest.mark.django_db

D = Decimal
THIS_YEAR = formulas.financial_year_of(timezone.now())
LAST_YEAR = THIS_YEAR.previous()


def balances(gateway, player):
    wallet = gateway.api.get(f"/api/v1/players/{player}/wallet").json()["balances"]
    return {bucket: value["amount"] for bucket, value in wallet.items()}


def last_year_history(gateway) -> Withdrawal:
    """In the last financial year: 1,000 credited by a deposit and lost, 3,000 won, 2,000
    withdrawn (net winnings 1,000, TDS 300) and approved; 1,000 of winnings left."""
    transfers = [deposited("y1", "1000.00"), lost("y1", "1000.00"), won("y1", "3000.00")]
    verified("y1")
    response = gateway.withdraw("y1", "2000.00").json()
    assert (response["net_winnings"], response["tds"]) == ("1000.00", "300.00")
    approve(response["withdrawal_id"])
    backdate(
        LAST_YEAR.start + timedelta(days=190),
        transfers=transfers,
        withdrawals=[response["withdrawal_id"]],
    )
    return Withdrawal.objects.get(pk=response["withdrawal_id"])


def test_year_end_taxes_what_is_left_and_carries_the_rest_forward(gateway, capsys):
    last_year_history(gateway)

    call_command("tds_year_end", LAST_YEAR.label)

    # (2,000 withdrawn + 1,000 closing) - (1,000 deposited + 0 opening) - 1,000 taxed = 1,000
    record = TdsYearEnd.objects.get(player__external_id="y1", fy=LAST_YEAR.label)
    figures = ("opening", "deposits", "withdrawals", "closing", "taxed_before", "net_winnings")
    assert [getattr(record, f) for f in figures] == [0, 1000, 2000, 1000, 1000, 1000]
    assert (record.tds, record.withheld, record.carry_forward) == (D(300), D(300), D(700))
    assert record.as_of == LAST_YEAR.end
    assert balances(gateway, "y1")["winnings"] == "700.00"
    assert Transfer.objects.get(pk=record.transfer_id).kind == "tax"
    assert "1 player(s) now" in capsys.readouterr().out

    # the last year's statement shows it; this year opens with the carry-forward
    last = gateway.tax("y1", LAST_YEAR.label).json()
    assert (last["net_winnings"], last["tds"]) == ("2000.00", "600.00")
    assert last["year_end"]["carry_forward"] == "700.00"
    this = gateway.tax("y1", THIS_YEAR.label).json()
    assert (this["opening"], this["deposits"], this["withdrawals"]) == ("700.00", "0.00", "0.00")

    # and a withdrawal now is taxed against that opening: 1,000 - 700 = 300 -> TDS 90
    won("y1", "300.00")
    now = gateway.withdraw("y1", "1000.00").json()
    assert (now["net_winnings"], now["tds"], now["payout"]) == ("300.00", "90.00", "910.00")
    assert ledger_violations() == []


def test_year_end_runs_once_per_player_and_year(gateway, capsys):
    last_year_history(gateway)
    call_command("tds_year_end", LAST_YEAR.label)
    capsys.readouterr()

    call_command("tds_year_end", LAST_YEAR.label)
    result = tds_year_end_task.apply(kwargs={"fy": LAST_YEAR.label}).get()

    assert "0 player(s) now, 1 before" in capsys.readouterr().out
    assert result == {"fy": LAST_YEAR.label, "closed": 0, "busy": 0}
    assert TdsYearEnd.objects.count() == 1
    assert Transfer.objects.filter(kind="tax").count() == 1
    assert balances(gateway, "y1")["winnings"] == "700.00"


def test_the_beat_job_closes_the_year_that_just_ended(gateway):
    last_year_history(gateway)
    schedule = settings.CELERY_BEAT_SCHEDULE["wallets-tds-year-end"]
    assert schedule["task"] == "wallets.tasks.tds_year_end"
    assert str(schedule["schedule"]) == "<crontab: 5 0 1 4 * (m/h/dM/MY/d)>"

    assert tds_year_end_task.apply().get()["fy"] == LAST_YEAR.label  # run now: the last year

    assert TdsYearEnd.objects.filter(fy=LAST_YEAR.label).count() == 1


def test_a_year_is_closed_only_once_it_has_ended():
    with pytest.raises(CommandError, match=f"{THIS_YEAR.label} ends at"):
        call_command("tds_year_end", THIS_YEAR.label)
    with pytest.raises(CommandError, match="written like 2026-27"):
        call_command("tds_year_end", "2026")
    with pytest.raises(CommandError, match="not within the financial year"):
        call_command("tds_year_end", THIS_YEAR.label, as_of=LAST_YEAR.start.isoformat())
    assert not TdsYearEnd.objects.exists()


def test_as_of_closes_a_year_early_for_tests(gateway):
    won("z1", "1000.00")  # no deposit: all of it is net winnings

    call_command("tds_year_end", THIS_YEAR.label, as_of=timezone.now().isoformat())

    record = TdsYearEnd.objects.get(player__external_id="z1")
    assert (record.net_winnings, record.tds, record.withheld) == (D(1000), D(300), D(300))
    assert balances(gateway, "z1")["winnings"] == "700.00"
    assert gateway.tax("z1", THIS_YEAR.label).json()["tds"] == "300.00"


def test_tds_comes_from_winnings_then_deposit_and_a_shortfall_is_recorded(gateway):
    # given: 1,000 credited to the deposit bucket without being a deposit (an adjustment),
    # 100 of winnings: net winnings 1,100 at the end, TDS 330
    player = player_get_or_create(external_id="a1")
    accounts = player_accounts(player=player)
    adjusted = move(
        platform_accounts()["adjustments"], accounts["deposit"], "1000.00", "adj-1", "adjustment"
    )
    earlier = [adjusted.transfer_id, won("a1", "100.00"), won("a2", "1000.00")]
    backdate(timezone.now() - timedelta(hours=1), transfers=earlier)
    as_of = timezone.now() - timedelta(minutes=30)
    lost("a2", "800.00", bucket="winnings")  # after the closing moment: 200 left for 300 of TDS

    call_command("tds_year_end", THIS_YEAR.label, as_of=as_of.isoformat())

    a1 = TdsYearEnd.objects.get(player__external_id="a1")
    assert (a1.tds, a1.withheld, a1.shortfall) == (D(330), D(330), D(0))
    assert (balances(gateway, "a1")["winnings"], balances(gateway, "a1")["deposit"]) == (
        "0.00",
        "770.00",
    )
    a2 = TdsYearEnd.objects.get(player__external_id="a2")
    assert (a2.closing, a2.tds, a2.withheld, a2.shortfall) == (D(1000), D(300), D(200), D(100))
    assert a2.carry_forward == D(800)
    assert balances(gateway, "a2")["winnings"] == "0.00"
    assert ledger_violations() == []


def test_players_without_money_in_the_year_get_no_record(gateway):
    player_get_or_create(external_id="idle")
    deposited("saver", "500.00")  # a deposit kept, never played: net winnings -0, no TDS

    call_command("tds_year_end", THIS_YEAR.label, as_of=timezone.now().isoformat())

    assert not TdsYearEnd.objects.filter(player__external_id="idle").exists()
    saver = TdsYearEnd.objects.get(player__external_id="saver")
    assert (saver.net_winnings, saver.tds, saver.transfer_id) == (D(0), D(0), None)


def test_year_end_closing_moment_is_midnight_in_india():
    assert LAST_YEAR.end == datetime(LAST_YEAR.end.year, 4, 1, tzinfo=formulas.INDIA)
    assert LAST_YEAR.end.utcoffset() == timedelta(hours=5, minutes=30)
