"""Clearing a flagged pair in a real browser (docs/finance-admin.md): an operator proposes it
from the one-way-flow report's page (a proposal without a reason refused on the form first), an
approver approves it on the clearance's page, and the report then shows the pair cleared; a
viewer sees no link to propose."""

import pytest

from tests.browser.test_finance_paths import QUICK_MS
from tests.builders import flagged_pair, funded_player
from wallets.models import FlaggedPair, PairClearance

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_operator_proposes_clearing_a_pair_and_an_approver_clears_it(login):
    for player in ("ana", "bo"):
        funded_player(player, "0")
    pair = flagged_pair("ana", "bo")
    report_page = f"/admin/wallets/flowreport/{pair.report_id}/change/"

    viewer = login("viewer")
    viewer.visit(report_page, "flow-report-viewer")
    assert "Under Review" in viewer.text("#content table")
    assert viewer.page.locator("a.propose-clearing").count() == 0

    maker = login("operator")
    maker.visit(report_page, "flow-report-under-review")
    maker.page.click("a.propose-clearing")
    maker.page.wait_for_url("**/admin/wallets/pairclearance/add/?pair=*")
    assert maker.page.input_value("#id_pair") == str(pair.pk)
    maker.page.click("input[name=_save]")
    maker.shot("pair-clearance-refused")
    assert "This field is required" in maker.text(".errorlist")
    assert not PairClearance.objects.exists()
    maker.page.fill("#id_reason", "cousins at one table; their games reviewed, nothing dumped")
    maker.page.click("input[name=_save]")
    maker.shot("pair-clearance-proposed")
    clearance = PairClearance.objects.get()
    maker.visit(f"/admin/wallets/pairclearance/{clearance.pk}/change/", "pair-clearance-own")
    assert maker.page.locator("#decision").count() == 0 and "You proposed this" in maker.text()

    approver = login("approver")
    approver.visit(f"/admin/wallets/pairclearance/{clearance.pk}/change/", "pair-clearance")
    text = approver.text()
    assert f"#{pair.pk}: ana lost ₹500.00 to bo in 5 games" in text and "cousins" in text
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("pair-clearance-approved")
    assert f"#{clearance.pk} approved" in approver.messages()
    pair.refresh_from_db()
    assert pair.review == FlaggedPair.Review.CLEARED

    maker.visit(report_page, "flow-report-cleared")
    assert "Cleared" in maker.text("#content table")
    assert maker.page.locator("a.propose-clearing").count() == 0
