"""The ledger chain's daily digests in a real browser (docs/finance-admin.md): every finance role
finds them from the admin index, reads each day's head, follows the date drill-down and opens a
day; nothing on the pages changes a digest."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.builders import chain_caught_up
from wallets.chain.links import digests_record
from wallets.models import ChainDigest, ChainLink

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("role", ["viewer", "operator", "approver"])
def test_finance_reads_the_days_heads_and_changes_nothing(login, game, role):
    chain_caught_up()
    today = timezone.localdate()
    digests_record(today=today + timedelta(days=1))
    digest = ChainDigest.objects.get()
    assert digest.through_seq == ChainLink.objects.count() > 0
    tab = login(role)

    tab.page.get_by_role("link", name="Chain digests").first.click()
    tab.page.wait_for_url("**/admin/wallets/chaindigest/")
    tab.shot("chain-digests")
    row = tab.page.locator("#result_list tbody tr")
    assert row.count() == 1
    assert digest.head in row.inner_text() and str(digest.through_seq) in row.inner_text()
    assert tab.page.locator("text=Add chain digest").count() == 0
    assert tab.page.locator("#changelist-form select[name=action]").count() == 0  # no delete

    tab.page.locator("nav.toplinks a").last.click()  # the date drill-down, to the day
    tab.page.wait_for_url("**day__year=*")
    tab.shot("chain-digests-year")
    assert tab.page.locator("#result_list tbody tr").count() == 1

    tab.page.locator("#result_list tbody tr th a").first.click()
    tab.page.wait_for_url(f"**/admin/wallets/chaindigest/{digest.pk}/change/**")  # with the filters
    tab.shot("chain-digest")
    assert digest.head in tab.text()
    assert tab.page.locator("input[type=submit]").count() == 0  # read-only: nothing to save
