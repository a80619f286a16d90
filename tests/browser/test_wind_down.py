"""The wind-down in a real browser: a wind-down proposed by an operator and approved by an
approver while real money is off; after `manage.py wind_down` its page shows the players whose
money is held and why, and the report downloads as CSV."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.browser.test_finance_paths import QUICK_MS, download
from tests.builders import make_api
from tests.wallets.payments import deposited, verified, won
from wallets.models import WindDown

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_wind_down_is_proposed_approved_run_and_reported(login, settings, tmp_path):
    make_api("payments", name="gateway")
    verified("kyc")
    deposited("kyc", "1000.00")
    deposited("nokyc", "400.00")
    won("nokyc", "100.00")
    settings.REAL_MONEY = "off"
    settings.WIND_DOWN_GRACE_MINUTES = 0

    operator = login("operator")
    operator.visit("/admin/wallets/winddown/add/", "wind-down-add")
    operator.page.fill("#id_reason", "the 2025 Act: closing the real-money book")
    operator.page.click("input[name=_save]")
    operator.shot("wind-down-proposed")
    wind_down = WindDown.objects.get()
    assert wind_down.status == "proposed"

    approver = login("approver")
    approver.visit(f"/admin/wallets/winddown/{wind_down.pk}/change/", "wind-down")
    assert "only while REAL_MONEY=off" in approver.text("#decision")
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    assert f"#{wind_down.pk} approved" in approver.messages()

    call_command("wind_down", "--client", "gateway", "--csv", str(tmp_path / "report.csv"))
    approver.visit(f"/admin/wallets/winddown/{wind_down.pk}/change/", "wind-down-report")
    assert "2 players: refunded ₹1400.00, TDS ₹0.00, held ₹100.00" in approver.text()
    assert approver.text(".field-finished_at .readonly") == "-"  # refunds with the gateway
    held = approver.text(".inline-group")
    assert "nokyc" in held and "no verified KYC" in held and "kyc\n" not in held
    name, text = download(approver, "#wind-down-csv")
    assert name == f"wind-down-{wind_down.pk}.csv"
    assert text.splitlines()[0].startswith("player,kyc_status,refunded,tds,held,held_reason")
    assert "nokyc,none,400.00,0.00,100.00,no_kyc,1,wind-down-nokyc,approved" in text
