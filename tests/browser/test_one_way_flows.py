"""The one-way-flow report in a real browser (docs/finance-admin.md): the withdrawal an operator
reviews says when its player is in a flagged pair, linked to the report, which lists the pairs."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import override_settings
from djmoney.money import Money

from tests.wallets.payments import verified
from wallets.services.flows import flow_report_run
from wallets.services.withdrawals import withdrawal_request

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_withdrawal_review_page_marks_a_player_in_a_flagged_pair(login, game):
    # a won the game; b, c and d lost to a. Flag every pair of this one game.
    with override_settings(FLOW_REPORT_MIN_GAMES=1, FLOW_REPORT_MIN_AMOUNT=Decimal("0.01")):
        report = flow_report_run(trigger="command")
    verified("a")
    withdrawal, _ = withdrawal_request(
        player_external_id="a", amount=Money("50.00", "INR"), reference="wd-flagged"
    )
    tab = login("operator")

    tab.visit(f"/admin/wallets/withdrawal/{withdrawal.pk}/change/", "withdrawal-flagged")

    marks = tab.page.locator("#one-way-flows li")
    assert marks.count() == 3
    assert "d lost ₹100.00 to a in 1 game (₹0.00 back)" in marks.first.inner_text()
    assert "possible chip dumping" in marks.first.inner_text()
    tab.page.locator("#one-way-flows a").first.click()
    tab.page.wait_for_url(f"**/admin/wallets/flowreport/{report.pk}/change/")
    tab.shot("flow-report")
    rows = tab.page.locator("#content table tbody tr")
    assert rows.count() == 3
    assert "a" in rows.first.inner_text() and "100.00" in rows.first.inner_text()


def test_a_withdrawal_of_an_unflagged_player_has_no_mark(login, game):
    flow_report_run(trigger="command")  # the default thresholds: one game flags nobody
    verified("a")
    withdrawal, _ = withdrawal_request(
        player_external_id="a", amount=Money("50.00", "INR"), reference="wd-clean"
    )
    tab = login("operator")

    tab.visit(f"/admin/wallets/withdrawal/{withdrawal.pk}/change/", "withdrawal-unflagged")

    assert tab.page.locator("#one-way-flows").count() == 0
