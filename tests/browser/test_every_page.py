"""Every admin page each role can reach, crawled with objects of every kind present (issue 18):
no button outside a form, every button sends its request, lists fit 1366 px, amounts carry
their unit (`tests/browser/crawl.py`)."""

from __future__ import annotations

import pytest

from tests.browser.books import rich_books
from tests.browser.conftest import SCREENSHOTS
from tests.browser.crawl import Crawl

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("role", ["viewer", "operator", "approver", "superuser"])
def test_every_page_every_button(role, login, settings):
    rich_books(settings)
    tab = login(role)

    crawl = Crawl(tab).run()
    (SCREENSHOTS / f"crawl--{role}.txt").write_text("\n".join([*crawl.pages, "", *crawl.problems]))

    assert not crawl.problems, f"{role}:\n" + "\n".join(crawl.problems)
    pages = {p.removeprefix(tab.base_url) for p in crawl.pages}
    assert len(pages) > 40, sorted(pages)
