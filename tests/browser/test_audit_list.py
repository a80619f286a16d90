"""The staff audit list in a real browser: a viewer narrows it by person, kind and date with the
list's own filters, and the "Download CSV" button gives exactly the rows shown (and is itself
recorded as an export)."""

from __future__ import annotations

import csv
import io

import pytest
from djmoney.money import Money

from rummy_ledger.staff.models import AuditEvent, AuditKind
from tests.builders import funded_player
from wallets.models import Adjustment, Player
from wallets.services.adjustments import adjustment_propose
from wallets.services.proposals import proposal_decide

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_audit_list_filters_and_downloads_what_it_shows(login):
    operator, approver = login("operator"), login("approver")
    funded_player("p1", "100.00")
    for n in (1, 2):
        adjustment = adjustment_propose(
            proposed_by=operator.user,
            player=Player.objects.get(external_id="p1"),
            bucket="deposit",
            direction="credit",
            amount=Money("5.00", "INR"),
            reason=f"goodwill {n}",
        )
        proposal_decide(
            model=Adjustment, proposal_id=adjustment.pk, decided_by=approver.user, approve=n == 1
        )
    tab = login("viewer")
    tab.visit("/admin/staff/auditevent/", "audit-list")
    assert tab.page.locator("#result_list tbody tr").count() == AuditEvent.objects.count()

    for label in ("operator", "proposal", "Today"):
        with tab.page.expect_navigation():
            tab.page.locator("#changelist-filter a", has_text=label).first.click()
    tab.shot("audit-list-filtered")
    shown = tab.page.locator("#result_list tbody tr").all_inner_texts()
    assert len(shown) == 2 and all("operator" in row and "proposal" in row for row in shown)

    with tab.page.expect_download() as download:
        tab.page.click("#audit-csv")
    text = download.value.path().read_text(encoding="utf-8-sig")
    rows = list(csv.reader(io.StringIO(text)))
    assert [row[1:3] for row in rows[1:]] == [["proposal", "operator"]] * 2
    assert sorted(row[4] for row in rows[1:]) == ["goodwill 1", "goodwill 2"]
    export = AuditEvent.objects.get(kind=AuditKind.EXPORT)
    assert export.actor == "viewer" and "actor=operator" in export.detail
