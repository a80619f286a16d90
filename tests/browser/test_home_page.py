"""The admin's home page says, for the signed-in role, what waits and what is
wrong, each line a link to the filtered list that shows it."""

from __future__ import annotations

import pytest
from django.db.models import Sum

from tests.browser.books import rich_books
from wallets.models import Discrepancy, Entry, ProposalStatus, Withdrawal
from wallets.money.formatting import ist, money

pytestmark = pytest.mark.django_db(transaction=True)


def lines(tab) -> dict[str, str]:
    """The home page's lines: label -> value (and `yours` when it is the user's to do)."""
    rows = tab.page.locator("#dashboard tr")
    return {
        rows.nth(i).locator("th").inner_text(): " ".join(
            rows.nth(i).locator("td").all_inner_texts()
        ).strip()
        for i in range(rows.count())
    }


def rows_after_clicking(tab, label: str) -> list[str]:
    with tab.page.expect_navigation():
        tab.page.click(f"#dashboard a:text-is('{label}')")
    return tab.page.locator("#result_list tbody tr").all_inner_texts()


def today_total(account_code: str):
    entries = Entry.objects.filter(account__code=account_code)
    return entries.aggregate(s=Sum("amount"))["s"]  # everything was posted today


def test_what_waits_for_an_operator_and_an_approver(login, settings):
    books = rich_books(settings)
    report = books["report"]

    operator = login("operator")
    operator.shot("dashboard")
    seen = lines(operator)
    assert seen["Withdrawals to review"] == "1 yours"
    for kind in ("Adjustments", "Reversals", "Bonus grants", "Template changes"):
        assert seen[f"{kind} to approve"] == "1", kind  # waiting, but not the operator's to do
    assert seen["Withdrawal reviews to approve"] == "1"
    assert seen["Last reconciliation"] == (
        f"{ist(report.started_at)}: {report.discrepancy_count} discrepancies"
    )
    stuck = Discrepancy.objects.filter(report=report)
    assert seen["Withdrawals reported stuck"] == str(stuck.filter(kind="withdrawal_stuck").count())
    assert seen["Games reported stuck"] == "1"  # sim-open-1
    assert seen["Fee today"] == money(today_total("platform:fee_revenue"))
    assert seen["GST today"] == money(today_total("platform:gst_payable"))
    assert seen["TDS today"] == money(today_total("platform:tds_payable"))
    assert seen["Real-money mode"] == "on"

    rows = rows_after_clicking(operator, "Withdrawals to review")
    assert len(rows) == 1 and "w-requested" in rows[0]
    operator.shot("dashboard-withdrawals-to-review")
    operator.page.go_back()
    rows = rows_after_clicking(operator, "Games reported stuck")
    assert len(rows) == 1 and "sim-open-1" in rows[0]
    operator.page.go_back()
    rows = rows_after_clicking(operator, "GST today")
    assert len(rows) == Entry.objects.filter(account__code="platform:gst_payable").count() > 0
    operator.page.go_back()
    with operator.page.expect_navigation():
        operator.page.click("#dashboard a:text-is('Last reconciliation')")
    assert f"reconciliation #{report.pk}" in operator.text()

    approver = login("approver")
    approver.shot("dashboard")
    seen = lines(approver)
    assert seen["Withdrawals to review"] == "1"
    for kind in ("Adjustments", "Reversals", "Bonus grants", "Template changes"):
        assert seen[f"{kind} to approve"] == "1 yours", kind
    assert seen["Withdrawal reviews to approve"] == "1 yours"
    rows = rows_after_clicking(approver, "Withdrawal reviews to approve")
    waiting = Withdrawal.objects.get(review__status=ProposalStatus.PROPOSED)
    assert len(rows) == 1 and waiting.player.external_id in rows[0]


def test_a_viewer_sees_what_waits_and_nothing_is_theirs(login, settings):
    rich_books(settings)
    settings.REAL_MONEY = "restricted"
    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset({"TN", "AP"})

    viewer = login("viewer")
    viewer.shot("dashboard")

    seen = lines(viewer)
    assert "yours" not in " ".join(seen.values())
    assert seen["Withdrawals to review"] == "1"
    mode = "restricted (regions blocked: AP, TN; unknown regions refused)"
    assert seen["Real-money mode"] == mode


def test_a_fresh_install_says_reconciliation_never_ran(login):
    tab = login("viewer")

    seen = lines(tab)

    assert seen["Last reconciliation"] == "never run"
    assert seen["Withdrawals to review"] == "0"
    assert seen["Fee today"] == "₹0.00"
