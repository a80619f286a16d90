"""Amounts too small to be taxed when they are rounded, over real HTTP: a
₹0.01 withdrawal whose TDS rounds to 0.00 is not counted as taxed, so its net winnings are taxed
later; the year end taxes what the rounding let through."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from tests.builders import HttpApi
from tests.wallets.payments import verified, won
from wallets.models import TdsYearEnd, Withdrawal
from wallets.tax import formulas

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def gateway(live_server):
    api = HttpApi(live_server.url, "payments", name="gateway")

    def call(method: str, path: str, body: dict | None = None) -> dict:
        response = api.send(method, path, body)
        assert response.status_code < 300, response.text
        return response.json()

    return call


def test_a_withdrawal_whose_tds_rounds_to_nothing_is_not_counted_as_taxed(gateway):
    verified("w1")
    won("w1", "0.03")
    fy = formulas.financial_year_of(timezone.now()).label

    first = gateway("POST", "players/w1/withdrawals", {"amount": "0.01", "reference": "wd-1"})
    position = gateway("GET", f"players/w1/tax/{fy}")

    assert (first["net_winnings"], first["tds"]) == ("0.01", "0.00")
    assert position["net_winnings"] == "0.00"  # taxed so far: nothing
    assert Withdrawal.objects.get(reference="wd-1").taxed_net_winnings == 0

    # the next one carries the first one's net winnings: 0.02 at 30 % is 0.006 -> 0.01
    second = gateway("POST", "players/w1/withdrawals", {"amount": "0.01", "reference": "wd-2"})
    third = gateway("POST", "players/w1/withdrawals", {"amount": "0.01", "reference": "wd-3"})

    assert (second["net_winnings"], second["tds"]) == ("0.02", "0.01")
    assert (third["net_winnings"], third["tds"]) == ("0.01", "0.00")
    call_command("tds_year_end", fy, as_of=timezone.now().isoformat())
    end = TdsYearEnd.objects.get(player__external_id="w1")
    # the year end sees the 0.01 left untaxed (its TDS rounds to nothing again): in all, 0.01
    # of TDS on 0.03 of net winnings, where 0.03 withdrawn at 0.00 each used to be the end
    assert end.net_winnings == Decimal("0.01")
    total = sum(w.tds.amount for w in Withdrawal.objects.all()) + end.tds
    assert total == Decimal("0.01")
