"""Closing a month in a real browser, as two people: an operator proposes closing last month
(a month not yet ended is refused on the form), an approver approves it, and the close's page
shows what it proved; the proposer sees no Approve button on their own proposal."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tests.browser.test_finance_paths import QUICK_MS
from tests.builders import funded_player, move
from tests.wallets.payments import backdate
from wallets.models import MonthClose, MonthCloseBalance, ProposalStatus, Transfer
from wallets.months import Month

pytestmark = pytest.mark.django_db(transaction=True)


def propose(tab, month: Month, reason: str) -> None:
    tab.page.fill("#id_month", month.name)
    tab.page.fill("#id_reason", reason)
    tab.page.click("input[name=_save]")


def test_an_operator_proposes_a_close_and_an_approver_takes_it(login):
    # given: a ledger whose entries are all dated last month
    last = Month.of(timezone.now()).previous()
    alice = funded_player("alice", "100.00")
    move(alice["deposit"], funded_player("bob", "0")["deposit"], "40.00", "pay-1")
    backdate(last.start, transfers=Transfer.objects.values_list("pk", flat=True))

    operator = login("operator")
    operator.visit("/admin/wallets/monthclose/", "month-closes")
    operator.page.click(".object-tools a.addlink")
    propose(operator, Month.of(timezone.now()), "too early")
    operator.shot("month-close-refused")
    assert "has not ended yet" in operator.text("ul.errorlist")
    assert not MonthClose.objects.exists()
    propose(operator, last, "month end")
    operator.shot("month-close-proposed")
    assert "added successfully" in operator.messages()
    proposal = MonthClose.objects.get()
    operator.visit(f"/admin/wallets/monthclose/{proposal.pk}/change/", "month-close-own")
    assert operator.page.locator("#decision button[value=approve]").count() == 0

    approver = login("approver")
    approver.visit(f"/admin/wallets/monthclose/{proposal.pk}/change/", "month-close")
    assert "refuses any entry dated in that month" in approver.text()
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("month-close-approved")
    assert f"#{proposal.pk} approved" in approver.messages()
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.APPROVED and len(proposal.digest) == 64
    assert proposal.digest in approver.text()
    assert MonthCloseBalance.objects.filter(close=proposal).count() == proposal.accounts > 0
