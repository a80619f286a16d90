"""Every admin page each role can reach, crawled with objects of every kind present:
no form dropped, no button outside a form, every form's button sends its request, lists fit
1366 px, amounts carry their unit (`tests/browser/crawl.py`). The books are built once and each
role logs in once, in one browser. `make test` crawls as the superuser, who reaches every kind of
page once; the crawl of every role, which also clicks each button only that role is shown, is a
`soak` scenario (`make soak`)."""

from __future__ import annotations

import pytest

from tests.browser.books import rich_books
from tests.browser.conftest import SCREENSHOTS
from tests.browser.crawl import Crawl

pytestmark = pytest.mark.django_db(transaction=True)

ROLES = ["viewer", "operator", "approver", "superuser"]
# the buttons only who may act is shown, on the objects that wait: the crawl must reach them
MUST_CLICK = {
    "operator": {"Review", "Save"},  # a withdrawal to review; a proposal's add form
    "approver": {"Approve", "Reject"},  # on each kind of proposal waiting
}


@pytest.mark.parametrize(
    "roles",
    [
        pytest.param(["superuser"], id="every-page-kind"),
        # every role's walk: 231 s in a busy soak before the leaderboards' and the pair
        # clearances' pages, past the suite's 300 s with them
        pytest.param(ROLES, id="every-role", marks=[pytest.mark.soak, pytest.mark.timeout(600)]),
    ],
)
def test_every_page_every_button(login, settings, roles):
    rich_books(settings)
    problems, reached, forms_clicked, decided = [], {}, set(), []
    for role in roles:
        tab = login(role)

        # a form another role's crawl clicked already is not clicked again (its page is checked)
        crawl = Crawl(tab, forms_clicked=forms_clicked).run()

        listing = [*crawl.pages, "", *crawl.problems, "", "not shown:", *crawl.hidden]
        (SCREENSHOTS / f"crawl--{role}.txt").write_text("\n".join(listing))
        problems += [f"{role}: {p}" for p in crawl.problems]
        reached[role] = (len(crawl.pages), {label for _, label in crawl.clicked})
        decided += [page.split("/")[3] for page, label in crawl.clicked if label == "Approve"]

    assert not problems, "\n".join(problems)
    for role, (pages, clicked) in reached.items():
        assert pages > 45, (role, pages)
        assert MUST_CLICK.get(role, set()) <= clicked, (role, sorted(clicked))
    if "approver" not in roles:
        return
    kinds = {
        "adjustment",
        "reversal",
        "bonusgrant",
        "withdrawalreview",
        "templatechange",
        "tournamentchange",
        "newtournament",
        "newleaderboard",
        "gstrateproposal",
        "winddown",
    }
    assert kinds <= set(decided), decided  # Approve clicked on a waiting proposal of each kind
