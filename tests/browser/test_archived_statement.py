"""A statement over an archived month, in a real browser as a finance viewer: a day inside the
archived month is refused with a message naming it; from the month's first day the statement
opens and closes from the month closes and lists the movements after the archive, and its CSV
says the same."""

from __future__ import annotations

import csv
import io

import pytest
from django.utils import timezone

from tests.browser.test_finance_paths import download
from tests.builders import chain_caught_up, staff
from tests.wallets.months_ledger import FIRST, middle, months_ledger, months_reopened
from wallets.roles import OPERATOR
from wallets.services.archives import month_archive

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def archived(eager, settings, tmp_path):
    settings.LEDGER_ARCHIVE_DIR, settings.LEDGER_ARCHIVE_AFTER_MONTHS = tmp_path, 0
    months_reopened()
    books = months_ledger()
    chain_caught_up()
    month_archive(month=FIRST.name, archived_by=staff("archivist", OPERATOR))
    yield books
    months_reopened()


def test_a_statement_over_an_archived_month(login, archived):
    viewer = login("viewer")
    player = archived.bob["deposit"].player
    inside = timezone.localtime(middle(FIRST)).date().isoformat()
    viewer.visit(
        f"/admin/wallets/player/{player.pk}/statement/?bucket=deposit&start={inside}&end={inside}",
        "statement-inside-archive",
    )
    assert f"the entries of {FIRST.name} are archived" in viewer.text("ul.errorlist")
    assert viewer.page.locator("#statement").count() == 0

    viewer.page.fill("#id_start", timezone.localtime(FIRST.start).date().isoformat())
    viewer.page.fill("#id_end", timezone.localdate().isoformat())
    viewer.page.click("input[value=Show]")
    viewer.shot("statement-over-archive")
    summary = viewer.text("#content p >> nth=0")
    assert "opening ₹0.00, closing ₹45.25" in summary and "2 movements" in summary
    assert "archived months until" in viewer.text("#statement") and "₹40.25" in viewer.text()

    name, content = download(viewer, "text=Export CSV")
    assert name.startswith("statement-player_bob_deposit-")
    rows = list(csv.reader(io.StringIO(content)))
    assert rows[2][2] == "archived" and rows[2][6] == "40.25"  # from the first month's close
    assert [row[5] for row in rows[3:-1]] == ["10.00", "-5.00"]  # after the archived month
    assert rows[-1][2:] == ["closing", "", "", "", "45.25", "INR"]
