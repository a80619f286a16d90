"""GST rates by date in a real browser: finance adds a future GST rate by maker-checker (a date
that is not in the future is refused on the form), the rates themselves are read-only, and the
GST report shows a line per month and rate."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from tests.browser.test_finance_paths import QUICK_MS
from wallets.models import GstRate, GstRateProposal

pytestmark = pytest.mark.django_db(transaction=True)


def fill_rate(tab, day, rate: str, reason: str) -> None:
    tab.page.fill("#id_effective_from", day.isoformat())
    tab.page.fill("#id_rate_percent", rate)
    tab.page.fill("#id_source", "GST Council, 60th meeting")
    tab.page.fill("#id_reason", reason)
    tab.page.click("input[name=_save]")


def test_a_future_rate_is_proposed_and_approved_and_a_past_one_refused(login):
    today = timezone.localdate()
    operator = login("operator")
    operator.visit("/admin/wallets/gstrate/", "gst-rates")
    assert "40.00" in operator.text("#result_list") and "28.00" in operator.text("#result_list")
    assert operator.page.locator(".object-tools a.addlink").count() == 0  # history: read-only

    operator.visit("/admin/wallets/gstrateproposal/", "gst-rate-proposals")
    operator.page.click(".object-tools a.addlink")
    fill_rate(operator, today, "45.00", "backdating")
    operator.shot("gst-rate-proposal-refused")
    assert "would apply to deposits already recorded" in operator.text("ul.errorlist")
    assert not GstRateProposal.objects.exists()

    fill_rate(operator, today + timedelta(days=30), "45.00", "rate change notified")
    operator.shot("gst-rate-proposed")
    assert "added successfully" in operator.messages()
    proposal = GstRateProposal.objects.get()
    later = today + timedelta(days=60)
    operator.visit("/admin/wallets/gstrateproposal/add/", "gst-rate-proposal-add")
    fill_rate(operator, later, "18.00", "a mistake")
    mistake = GstRateProposal.objects.exclude(pk=proposal.pk).get()

    approver = login("approver")
    approver.visit(f"/admin/wallets/gstrateproposal/{proposal.pk}/change/", "gst-rate-proposal")
    assert "never retroactive" in approver.text()
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("gst-rate-approved")
    assert f"#{proposal.pk} approved" in approver.messages()
    approver.visit(f"/admin/wallets/gstrateproposal/{mistake.pk}/change/", "gst-rate-mistake")
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=reject]")
    assert f"#{mistake.pk} rejected" in approver.messages()

    rates = [(r.effective_from, r.rate_percent) for r in GstRate.objects.order_by("-pk")[:1]]
    assert rates == [(today + timedelta(days=30), Decimal("45.00"))]
    assert not GstRate.objects.filter(effective_from=later).exists()
    approver.visit("/admin/wallets/gstrate/", "gst-rates-after")
    assert "45.00" in approver.text("#result_list")


def test_the_gst_report_has_a_line_per_month_and_rate(login):
    from tests.builders import make_api
    from tests.wallets.payments import Gateway

    gateway = Gateway(make_api("payments", name="gateway")[0])
    gateway.deposit("g1", "1000.00")
    viewer = login("viewer")
    viewer.visit("/admin/wallets/withdrawal/gst-report/", "gst-report")
    assert "rate %" in viewer.text("#gst-months")
    assert "40.00" in viewer.text("#gst-months") and "285.71" in viewer.text("#gst-months")
